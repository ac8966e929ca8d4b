// Verification of webhook deliveries (Standard Webhooks, https://www.standardwebhooks.com).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Buffer } from 'node:buffer';

import { WebhookVerificationError } from './errors.js';
import { decode, EVENT } from './json.js';

/** Default tolerance between a delivery's webhook-timestamp and now, in seconds. */
export const DEFAULT_TOLERANCE_S = 300;

/** One header of a Headers object, a Map or a plain object (any case); arrays joined. */
function header(headers, name) {
  let v;
  if (typeof headers.get === 'function') {
    v = headers.get(name);
    if ((v === undefined || v === null) && !(headers instanceof Map)) return null;
    if (v === undefined || v === null) {
      for (const [k, val] of headers) if (String(k).toLowerCase() === name) v = val;
    }
  } else {
    for (const k of Object.keys(headers)) if (k.toLowerCase() === name) v = headers[k];
  }
  if (v === undefined || v === null) return null;
  return Array.isArray(v) ? v.join(' ') : String(v);
}

function payloadBytes(payload) {
  if (typeof payload === 'string') return Buffer.from(payload, 'utf8');
  if (Buffer.isBuffer(payload)) return payload;
  if (payload instanceof Uint8Array) return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  if (payload instanceof ArrayBuffer) return Buffer.from(payload);
  throw new TypeError('payload must be the raw body (a string, Buffer, Uint8Array or ArrayBuffer), not a parsed object');
}

function secretKey(secret) {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('secret must be the subscription secret ("whsec_...")');
  const b64 = secret.startsWith('whsec_') ? secret.slice(6) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new TypeError('secret is not "whsec_" followed by base64');
  const key = Buffer.from(b64, 'base64');
  if (key.length === 0) throw new TypeError('secret is empty');
  return key;
}

/**
 * Verifies a webhook delivery and returns its event, parsed like the client's other values
 * (camelCase keys, money as exact decimal strings). Throws WebhookVerificationError when
 * the delivery must not be trusted.
 *
 * payload: the raw body exactly as received; headers: the request's headers (webhook-id,
 * webhook-timestamp and webhook-signature, or X-Signature in place of webhook-signature);
 * secret: the subscription's "whsec_..." secret. options.tolerance: seconds (default 300);
 * options.now: the current time (a Date or milliseconds) for tests.
 */
export function verifyWebhook(payload, headers, secret, options = {}) {
  const body = payloadBytes(payload);
  const key = secretKey(secret);
  if (headers === null || typeof headers !== 'object') throw new TypeError('headers must be an object');
  const tolerance = options.tolerance ?? DEFAULT_TOLERANCE_S;
  const nowMs = options.now === undefined ? Date.now() : Number(options.now);

  const id = header(headers, 'webhook-id');
  const ts = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature') ?? header(headers, 'x-signature');
  if (id === null || id === '') throw new WebhookVerificationError('missing webhook-id header', 'missing_header');
  if (ts === null) throw new WebhookVerificationError('missing webhook-timestamp header', 'missing_header');
  if (signatures === null) throw new WebhookVerificationError('missing webhook-signature (or X-Signature) header', 'missing_header');
  if (!/^[0-9]{1,15}$/.test(ts.trim())) throw new WebhookVerificationError('webhook-timestamp is not Unix seconds', 'invalid_timestamp');
  const age = nowMs / 1000 - Number(ts.trim());
  if (age > tolerance) throw new WebhookVerificationError('webhook-timestamp is too old', 'timestamp_too_old');
  if (age < -tolerance) throw new WebhookVerificationError('webhook-timestamp is too far in the future', 'timestamp_too_new');

  const expected = createHmac('sha256', key)
    .update(`${id}.${ts.trim()}.`, 'utf8')
    .update(body)
    .digest();
  let ok = false;
  for (const entry of signatures.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const given = Buffer.from(entry.slice(comma + 1), 'base64');
    // Compare every candidate in full (no early exit on a match) and in constant time.
    if (given.length === expected.length && timingSafeEqual(given, expected)) ok = true;
  }
  if (!ok) throw new WebhookVerificationError('no signature matches', 'no_matching_signature');

  try {
    return decode(body.toString('utf8'), EVENT);
  } catch {
    throw new WebhookVerificationError('the payload is not JSON', 'invalid_payload');
  }
}
