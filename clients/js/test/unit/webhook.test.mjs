// verifyWebhook against signatures made independently here (and the Standard Webhooks
// specification's own test vector).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';

import { verifyWebhook, WebhookVerificationError } from '@markethq/market';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const OTHER = `whsec_${randomBytes(32).toString('base64')}`;
const BODY = '{"id":"evt_1","type":"payout.sent","created_at":"2026-11-21T10:04:05Z","livemode":false,"data":{"payout":"po_1","amount":12.34,"currency":"USD"}}';
const now = () => Math.floor(Date.now() / 1000);

function sign(secret, id, ts, body) {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64')}`;
}

function delivery({ secret = SECRET, id = 'evt_1', ts = now(), body = BODY } = {}) {
  return { body, headers: { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': sign(secret, id, ts, body) } };
}

const refused = (code) => (e) => {
  assert.ok(e instanceof WebhookVerificationError, `a WebhookVerificationError, not ${e}`);
  assert.equal(e.code, code);
  return true;
};

test('the Standard Webhooks test vector verifies', () => {
  const ev = verifyWebhook('{"test": 2432232314}', {
    'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    'webhook-timestamp': '1614265330',
    'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  }, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', { now: 1614265330 * 1000 });
  assert.deepEqual(ev, { test: 2432232314 });
});

test('a valid delivery returns the event, money exact and keys camelCased', () => {
  const d = delivery();
  const ev = verifyWebhook(d.body, d.headers, SECRET);
  assert.deepEqual(ev, {
    id: 'evt_1', type: 'payout.sent', createdAt: '2026-11-21T10:04:05Z', livemode: false,
    data: { payout: 'po_1', amount: '12.34', currency: 'USD' },
  });
});

test('the payload may be a Buffer, a Uint8Array or an ArrayBuffer; headers a Headers object or a Map, any case', () => {
  const d = delivery();
  const buf = Buffer.from(d.body);
  const u8 = new Uint8Array(buf);
  assert.equal(verifyWebhook(buf, d.headers, SECRET).id, 'evt_1');
  assert.equal(verifyWebhook(u8, new Headers(d.headers), SECRET).id, 'evt_1');
  assert.equal(verifyWebhook(u8.buffer.slice(u8.byteOffset, u8.byteOffset + u8.byteLength), new Map(Object.entries(d.headers)), SECRET).id, 'evt_1');
  const upper = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k.toUpperCase(), v]));
  assert.equal(verifyWebhook(d.body, upper, SECRET).id, 'evt_1');
});

test('the signature covers the raw bytes: non-ASCII bodies verify as bytes', () => {
  const body = '{"id":"evt_2","type":"review.created","created_at":"c","livemode":false,"data":{"review":"rev_1","product":"p","rating":5,"body":"Très bien 😀"}}';
  const d = delivery({ body, id: 'evt_2' });
  assert.equal(verifyWebhook(Buffer.from(body, 'utf8'), d.headers, SECRET).data.body, 'Très bien 😀');
});

test('a tampered body is refused', () => {
  const d = delivery();
  assert.throws(() => verifyWebhook(d.body.replace('12.34', '99.99'), d.headers, SECRET), refused('no_matching_signature'));
  assert.throws(() => verifyWebhook(`${d.body} `, d.headers, SECRET), refused('no_matching_signature'));
});

test('a tampered id, timestamp or signature, or another secret, is refused', () => {
  const d = delivery();
  assert.throws(() => verifyWebhook(d.body, { ...d.headers, 'webhook-id': 'evt_2' }, SECRET), refused('no_matching_signature'));
  assert.throws(() => verifyWebhook(d.body, { ...d.headers, 'webhook-timestamp': String(now() - 1) }, SECRET), refused('no_matching_signature'));
  const sig = d.headers['webhook-signature'];
  const flipped = sig.slice(0, 5) + (sig[5] === 'A' ? 'B' : 'A') + sig.slice(6);
  assert.throws(() => verifyWebhook(d.body, { ...d.headers, 'webhook-signature': flipped }, SECRET), refused('no_matching_signature'));
  assert.throws(() => verifyWebhook(d.body, { ...d.headers, 'webhook-signature': sig.replace('v1,', 'v2,') }, SECRET), refused('no_matching_signature'));
  assert.throws(() => verifyWebhook(d.body, { ...d.headers, 'webhook-signature': 'v1,' }, SECRET), refused('no_matching_signature'));
  assert.throws(() => verifyWebhook(d.body, d.headers, OTHER), refused('no_matching_signature'));
});

test('timestamps outside five minutes are refused, inside accepted', () => {
  const old = delivery({ ts: now() - 301 });
  assert.throws(() => verifyWebhook(old.body, old.headers, SECRET), refused('timestamp_too_old'));
  const future = delivery({ ts: now() + 301 });
  assert.throws(() => verifyWebhook(future.body, future.headers, SECRET), refused('timestamp_too_new'));
  const edge = delivery({ ts: now() - 290 });
  assert.equal(verifyWebhook(edge.body, edge.headers, SECRET).id, 'evt_1');
  // The clock can be given, and the tolerance changed.
  const at = 1700000000;
  const fixed = delivery({ ts: at });
  assert.equal(verifyWebhook(fixed.body, fixed.headers, SECRET, { now: new Date((at + 299) * 1000) }).id, 'evt_1');
  assert.throws(() => verifyWebhook(fixed.body, fixed.headers, SECRET, { now: (at + 301) * 1000 }), refused('timestamp_too_old'));
  assert.throws(() => verifyWebhook(fixed.body, fixed.headers, SECRET, { now: (at + 11) * 1000, tolerance: 10 }), refused('timestamp_too_old'));
  // A well-signed but unreadable timestamp.
  for (const ts of ['', 'abc', '1.5', '-1', `${now()}x`]) {
    const bad = delivery({ ts });
    assert.throws(() => verifyWebhook(bad.body, bad.headers, SECRET), refused('invalid_timestamp'), ts);
  }
});

test('several signatures in one header: one match is enough, wherever it is', () => {
  const d = delivery();
  const good = d.headers['webhook-signature'];
  const wrong = sign(OTHER, 'evt_1', d.headers['webhook-timestamp'], d.body);
  for (const list of [`${wrong} ${good}`, `${good} ${wrong}`, `v1a,abc ${wrong} ${good}`, `${wrong}  ${good}`]) {
    assert.equal(verifyWebhook(d.body, { ...d.headers, 'webhook-signature': list }, SECRET).id, 'evt_1', list);
  }
  assert.throws(() => verifyWebhook(d.body, { ...d.headers, 'webhook-signature': `${wrong} ${wrong}` }, SECRET), refused('no_matching_signature'));
  // Two secrets during a rotation: the receiver knows either.
  const both = `${good} ${wrong}`;
  assert.equal(verifyWebhook(d.body, { ...d.headers, 'webhook-signature': both }, OTHER).id, 'evt_1');
});

test('X-Signature alone stands for webhook-signature', () => {
  const d = delivery();
  const { 'webhook-signature': sig, ...rest } = d.headers;
  assert.equal(verifyWebhook(d.body, { ...rest, 'X-Signature': sig }, SECRET).id, 'evt_1');
  assert.equal(verifyWebhook(d.body, new Headers({ ...rest, 'x-signature': sig }), SECRET).id, 'evt_1');
  assert.throws(() => verifyWebhook(d.body.replace('po_1', 'po_2'), { ...rest, 'X-Signature': sig }, SECRET), refused('no_matching_signature'));
});

test('missing headers are refused', () => {
  const d = delivery();
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const h = { ...d.headers };
    delete h[name];
    assert.throws(() => verifyWebhook(d.body, h, SECRET), refused('missing_header'), name);
  }
});

test('a signed body that is not JSON is refused after verification', () => {
  const d = delivery({ body: 'not json' });
  assert.throws(() => verifyWebhook(d.body, d.headers, SECRET), refused('invalid_payload'));
});

test('programming errors are TypeErrors: a parsed payload, a bad secret', () => {
  const d = delivery();
  assert.throws(() => verifyWebhook(JSON.parse(d.body), d.headers, SECRET), TypeError);
  assert.throws(() => verifyWebhook(d.body, d.headers, ''), TypeError);
  assert.throws(() => verifyWebhook(d.body, d.headers, 'whsec_***'), TypeError);
  assert.throws(() => verifyWebhook(d.body, null, SECRET), TypeError);
});

test('the comparison is constant-time: crypto.timingSafeEqual decides, for every candidate', async (t) => {
  const { createRequire, syncBuiltinESMExports } = await import('node:module');
  const crypto = createRequire(import.meta.url)('node:crypto');
  const spy = t.mock.method(crypto, 'timingSafeEqual');
  syncBuiltinESMExports(); // the live ESM binding the client imported now points at the spy
  t.after(() => {
    spy.mock.restore();
    syncBuiltinESMExports();
  });
  const d = delivery();
  const wrong = sign(OTHER, 'evt_1', d.headers['webhook-timestamp'], d.body);
  const good = d.headers['webhook-signature'];
  assert.equal(verifyWebhook(d.body, { ...d.headers, 'webhook-signature': `${good} ${wrong}` }, SECRET).id, 'evt_1');
  assert.equal(spy.mock.callCount(), 2, 'both candidates compared, no early exit');
  // When timingSafeEqual says no, nothing else says yes.
  spy.mock.mockImplementation(() => false);
  assert.throws(() => verifyWebhook(d.body, d.headers, SECRET), refused('no_matching_signature'));
});
