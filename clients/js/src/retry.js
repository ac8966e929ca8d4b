// Pure retry decisions of the client (unit tested on their own).

/** Statuses that are retried: 429 and 503 always (the request was not carried out), 502
 * and 504 (answered by the gateway) only when repeating the request is safe. */
const ALWAYS = new Set([429, 503]);
const WHEN_SAFE = new Set([502, 504]);

/** The longest Retry-After the client waits for; a longer one is thrown to the caller. */
export const MAX_RETRY_AFTER_S = 60;

/**
 * Whether a request is safe to send again without a second effect: a GET, or a POST or
 * DELETE that carries an Idempotency-Key (the API replays the first answer).
 */
export function isRepeatable(method, idempotencyKey) {
  const m = String(method).toUpperCase();
  return m === 'GET' || m === 'HEAD' || (typeof idempotencyKey === 'string' && idempotencyKey !== '');
}

/**
 * Whether attempt number `attempt` (0 for the first) that ended with `status` (or with a
 * network failure: status null) is tried again.
 */
export function shouldRetry({ attempt, maxRetries, method, status = null, idempotencyKey = null, retryAfter = null }) {
  if (attempt >= maxRetries) return false;
  if (retryAfter !== null && retryAfter > MAX_RETRY_AFTER_S) return false;
  if (status === null) return isRepeatable(method, idempotencyKey);
  if (ALWAYS.has(status)) return true;
  if (WHEN_SAFE.has(status)) return isRepeatable(method, idempotencyKey);
  return false;
}

/**
 * Seconds of a Retry-After header: delta-seconds ("5") or an HTTP date; null when absent
 * or unreadable. `now` is in milliseconds.
 */
export function parseRetryAfter(value, now = Date.now()) {
  if (value === null || value === undefined) return null;
  const v = String(value).trim();
  if (/^[0-9]+$/.test(v)) return Number(v);
  if (!/[a-zA-Z]/.test(v)) return null;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * Milliseconds to wait before retry number attempt+1: Retry-After when the answer had one,
 * else exponential backoff from 0.5 s (0.5, 1, 2, 4, 8 s at most) with jitter (a factor
 * from 0.5 to 1), so that clients that failed together do not come back together.
 */
export function retryDelay({ attempt, retryAfter = null, random = Math.random }) {
  if (retryAfter !== null) return retryAfter * 1000;
  const base = Math.min(8000, 500 * 2 ** attempt);
  return Math.round(base * (0.5 + random() / 2));
}
