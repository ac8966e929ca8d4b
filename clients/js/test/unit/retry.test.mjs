// Retry decisions (pure functions) and the client's retry loop over a scripted fetch.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { shouldRetry, parseRetryAfter, retryDelay, isRepeatable, MAX_RETRY_AFTER_S } from '../../src/retry.js';
import {
  Market, RateLimitError, ServerError, ConnectionError, InvalidRequestError,
} from '@markethq/market';
import { KEY, fakeFetch, fakeSleep, errorBody, networkError } from './helpers.mjs';

const base = { attempt: 0, maxRetries: 2 };

test('isRepeatable: GET always, POST only with an Idempotency-Key', () => {
  assert.equal(isRepeatable('GET', null), true);
  assert.equal(isRepeatable('get', null), true);
  assert.equal(isRepeatable('POST', null), false);
  assert.equal(isRepeatable('POST', ''), false);
  assert.equal(isRepeatable('POST', 'k1'), true);
});

test('shouldRetry: which statuses and failures are retried', () => {
  const cases = [
    // [method, status, idempotencyKey, expected]
    ['GET', 429, null, true],
    ['POST', 429, null, true],
    ['GET', 503, null, true],
    ['POST', 503, null, true],
    ['GET', 502, null, true],
    ['GET', 504, null, true],
    ['POST', 502, null, false],
    ['POST', 504, null, false],
    ['POST', 502, 'k', true],
    ['POST', 504, 'k', true],
    ['GET', null, null, true], // network failure
    ['POST', null, null, false],
    ['POST', null, 'k', true],
    ['GET', 500, null, false],
    ['POST', 500, 'k', false],
    ['GET', 400, null, false],
    ['GET', 401, null, false],
    ['GET', 403, null, false],
    ['GET', 404, null, false],
    ['POST', 409, 'k', false],
    ['POST', 413, 'k', false],
  ];
  for (const [method, status, idempotencyKey, expected] of cases) {
    assert.equal(shouldRetry({ ...base, method, status, idempotencyKey }), expected, `${method} ${status} key=${idempotencyKey}`);
  }
});

test('shouldRetry: up to maxRetries, never with maxRetries 0', () => {
  assert.equal(shouldRetry({ attempt: 0, maxRetries: 2, method: 'GET', status: 429 }), true);
  assert.equal(shouldRetry({ attempt: 1, maxRetries: 2, method: 'GET', status: 429 }), true);
  assert.equal(shouldRetry({ attempt: 2, maxRetries: 2, method: 'GET', status: 429 }), false);
  assert.equal(shouldRetry({ attempt: 0, maxRetries: 0, method: 'GET', status: 429 }), false);
  assert.equal(shouldRetry({ attempt: 0, maxRetries: 0, method: 'GET', status: null }), false);
});

test('shouldRetry: a Retry-After over 60 s is handed to the caller', () => {
  assert.equal(shouldRetry({ ...base, method: 'GET', status: 429, retryAfter: MAX_RETRY_AFTER_S }), true);
  assert.equal(shouldRetry({ ...base, method: 'GET', status: 429, retryAfter: MAX_RETRY_AFTER_S + 1 }), false);
});

test('parseRetryAfter: seconds, HTTP dates, junk', () => {
  assert.equal(parseRetryAfter('7'), 7);
  assert.equal(parseRetryAfter(' 0 '), 0);
  assert.equal(parseRetryAfter(null), null);
  assert.equal(parseRetryAfter(undefined), null);
  assert.equal(parseRetryAfter(''), null);
  assert.equal(parseRetryAfter('-1'), null);
  assert.equal(parseRetryAfter('1.5'), null);
  assert.equal(parseRetryAfter('soon'), null);
  const now = Date.parse('2026-11-21T10:04:05Z');
  assert.equal(parseRetryAfter('Sat, 21 Nov 2026 10:04:15 GMT', now), 10);
  assert.equal(parseRetryAfter('Sat, 21 Nov 2026 10:04:00 GMT', now), 0);
});

test('retryDelay: Retry-After exactly, else exponential backoff with jitter', () => {
  assert.equal(retryDelay({ attempt: 0, retryAfter: 7 }), 7000);
  assert.equal(retryDelay({ attempt: 3, retryAfter: 0 }), 0);
  assert.equal(retryDelay({ attempt: 0, random: () => 1 }), 500);
  assert.equal(retryDelay({ attempt: 0, random: () => 0 }), 250);
  assert.equal(retryDelay({ attempt: 1, random: () => 1 }), 1000);
  assert.equal(retryDelay({ attempt: 2, random: () => 1 }), 2000);
  assert.equal(retryDelay({ attempt: 10, random: () => 1 }), 8000);
});

const ok = { status: 200, body: { data: [], next_cursor: null }, headers: { 'x-ratelimit-limit': '600', 'x-ratelimit-remaining': '5', 'x-ratelimit-reset': '9' } };
const limited = (after = '3') => ({ status: 429, body: errorBody('rate_limit_error', 'rate_limited'), headers: { 'retry-after': after, 'x-ratelimit-limit': '600', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': after } });
const unavailable = { status: 503, body: errorBody('api_error', 'service_unavailable'), headers: { 'retry-after': '1' } };

function client(script, opts = {}) {
  const fetch = fakeFetch(script);
  const sleep = fakeSleep();
  const market = new Market({ apiKey: KEY, baseUrl: 'http://api.test', fetch, sleep, ...opts });
  return { market, fetch, sleep };
}

test('a 429 waits Retry-After and tries again', async () => {
  const { market, fetch, sleep } = client([limited('3'), ok]);
  const page = await market.products.list();
  assert.equal(fetch.calls.length, 2);
  assert.deepEqual(sleep.waits, [3000]);
  assert.equal(page.lastResponse.retries, 1);
  assert.deepEqual(page.rateLimit, { limit: 600, remaining: 5, reset: 9 });
});

test('a 503 waits Retry-After and tries again, a POST too (same Idempotency-Key)', async () => {
  const link = { status: 201, body: { object: 'download_link', download: 'dl_1', url: 'u', expires_at: 'e' } };
  const { market, fetch, sleep } = client([unavailable, unavailable, link]);
  const l = await market.downloads.createLink('dl_1');
  assert.equal(l.url, 'u');
  assert.deepEqual(sleep.waits, [1000, 1000]);
  const keys = fetch.calls.map((c) => c.headers['Idempotency-Key']);
  assert.equal(new Set(keys).size, 1);
  assert.match(keys[0], /^market-js-[0-9a-f-]{36}$/);
  assert.equal(l.lastResponse.idempotencyKey, keys[0]);
});

test('retries stop after maxRetries: the last error is thrown', async () => {
  const { market, fetch, sleep } = client([limited('2'), limited('2'), limited('1')]);
  await assert.rejects(market.products.list(), (e) => {
    assert.ok(e instanceof RateLimitError);
    assert.equal(e.retryAfter, 1);
    assert.deepEqual(e.rateLimit, { limit: 600, remaining: 0, reset: 1 });
    return true;
  });
  assert.equal(fetch.calls.length, 3);
  assert.deepEqual(sleep.waits, [2000, 2000]);
});

test('maxRetries 0: a 429 is thrown at once', async () => {
  const { market, fetch, sleep } = client([limited('2')], { maxRetries: 0 });
  await assert.rejects(market.orders.list(), RateLimitError);
  assert.equal(fetch.calls.length, 1);
  assert.deepEqual(sleep.waits, []);
});

test('maxRetries 5 allows five retries', async () => {
  const { market, fetch } = client([unavailable, unavailable, unavailable, unavailable, unavailable, ok], { maxRetries: 5 });
  await market.products.list();
  assert.equal(fetch.calls.length, 6);
});

test('a network failure of a GET is retried with backoff', async () => {
  const { market, fetch, sleep } = client([networkError(), networkError(), ok]);
  const page = await market.products.list({ limit: 1 });
  assert.equal(fetch.calls.length, 3);
  assert.equal(sleep.waits.length, 2);
  assert.ok(sleep.waits[0] >= 250 && sleep.waits[0] <= 500, `first backoff ${sleep.waits[0]}`);
  assert.ok(sleep.waits[1] >= 500 && sleep.waits[1] <= 1000, `second backoff ${sleep.waits[1]}`);
  assert.equal(page.lastResponse.retries, 2);
});

test('a network failure that persists is a ConnectionError with the cause', async () => {
  const { market, fetch } = client([networkError(), networkError(), networkError()]);
  await assert.rejects(market.products.get('prod_1'), (e) => {
    assert.ok(e instanceof ConnectionError);
    assert.equal(e.status, null);
    assert.match(e.message, /UND_ERR_SOCKET/);
    assert.ok(e.cause instanceof TypeError);
    return true;
  });
  assert.equal(fetch.calls.length, 3);
});

test('a POST whose connection dropped is sent again with the same Idempotency-Key and body', async () => {
  const sub = { status: 201, body: { id: 'we_1', object: 'webhook_subscription', url: 'https://x.test/', events: ['payout.sent'], description: '', status: 'enabled', livemode: false, secret: 'whsec_x', created_at: 'c' } };
  const { market, fetch } = client([networkError(), sub]);
  await market.webhooks.create({ url: 'https://x.test/', events: ['payout.sent'], idempotencyKey: 'mine-1' });
  assert.equal(fetch.calls.length, 2);
  assert.deepEqual(fetch.calls.map((c) => c.headers['Idempotency-Key']), ['mine-1', 'mine-1']);
  assert.equal(fetch.calls[0].body, fetch.calls[1].body);
});

test('two calls get two different generated Idempotency-Keys', async () => {
  const link = { status: 201, body: { object: 'download_link', download: 'dl_1', url: 'u', expires_at: 'e' } };
  const { market, fetch } = client([link, link]);
  await market.downloads.createLink('dl_1');
  await market.downloads.createLink('dl_1');
  assert.notEqual(fetch.calls[0].headers['Idempotency-Key'], fetch.calls[1].headers['Idempotency-Key']);
});

test('errors that retrying cannot fix are thrown at once: 400, 500', async () => {
  const { market, fetch } = client([{ status: 400, body: errorBody('invalid_request_error', 'parameter_invalid', 'bad', 'limit') }]);
  await assert.rejects(market.products.list({ limit: 0 }), InvalidRequestError);
  assert.equal(fetch.calls.length, 1);
  const c2 = client([{ status: 500, body: errorBody('api_error', 'internal_error') }]);
  await assert.rejects(c2.market.products.list(), ServerError);
  assert.equal(c2.fetch.calls.length, 1);
});

test('a 429 whose Retry-After is over a minute is thrown, not waited for', async () => {
  const { market, fetch, sleep } = client([limited('3600')]);
  await assert.rejects(market.products.list(), (e) => e instanceof RateLimitError && e.retryAfter === 3600);
  assert.equal(fetch.calls.length, 1);
  assert.deepEqual(sleep.waits, []);
});

test('a 429 without Retry-After falls back to backoff', async () => {
  const { market, sleep } = client([{ status: 429, body: errorBody('rate_limit_error', 'rate_limited') }, ok]);
  await market.products.list();
  assert.equal(sleep.waits.length, 1);
  assert.ok(sleep.waits[0] >= 250 && sleep.waits[0] <= 500);
});

test('a timeout is a network failure: retried for a GET, then a ConnectionError', async (t) => {
  const hang = (url, init) => new Promise((resolve, reject) => {
    init.signal.addEventListener('abort', () => reject(init.signal.reason));
  });
  const fetch = async (url, init) => hang(url, init);
  let calls = 0;
  const counting = (url, init) => {
    calls++;
    return fetch(url, init);
  };
  const market = new Market({ apiKey: KEY, baseUrl: 'http://api.test', fetch: counting, sleep: fakeSleep(), timeout: 20, maxRetries: 1 });
  // AbortSignal.timeout's timer does not keep the process alive; this one does.
  const keepAlive = setInterval(() => {}, 1000);
  t.after(() => clearInterval(keepAlive));
  await assert.rejects(market.products.list(), (e) => e instanceof ConnectionError && /within 20 ms/.test(e.message));
  assert.equal(calls, 2);
});
