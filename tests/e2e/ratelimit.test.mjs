// The shared rate limit of docs/contract.md section 3: 600 requests per key per window aligned to
// the Unix minute, counted in PostgreSQL across every worker; a burst of 650 gets exactly
// 600 answers and 50 x 429 with Retry-After; rejected requests do not count; the next
// window starts afresh; every authenticated answer carries the X-RateLimit headers; 401
// comes before 429, and 429 before 404/405/403/400.
//
// The burst must fall inside one window: it starts at once when enough of the current
// minute is left, else just after the next minute boundary. The file then waits for the
// following window (at most about 70 s in all).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { api, newAccount, newKey, psql, API_PIDFILE } from './lib/stack.mjs';
import { assertError, assertRateHeaders, pool, sleep } from './fixtures/expect.mjs';

const LIMIT = 600;
const BURST = 650;
const CONCURRENCY = 50;
const MARGIN_S = 12; // the burst and the checks after it take a few seconds

let account;
let burstKey;

before(() => {
  account = newAccount('acct_rl_');
  burstKey = newKey({ account, mode: 'test', access: 'read-only' });
});

const secondsLeftInMinute = () => 60 - ((Date.now() / 1000) % 60);
const keyRow = (key) => `key_hash = sha256(convert_to('${key}', 'UTF8'))`;
const countInWindow = (key) => psql(`
  SELECT coalesce((SELECT count FROM rate_counters
                    WHERE key_id = (SELECT id FROM api_keys WHERE ${keyRow(key)})
                      AND window_start = floor(extract(epoch FROM now()) / 60)), 0)`);

function poolWorkers() {
  const multiwatch = readFileSync(API_PIDFILE, 'utf8').trim();
  return execFileSync('ps', ['--ppid', multiwatch, '-o', 'pid='], { encoding: 'utf8' })
    .split('\n').map((s) => s.trim()).filter(Boolean);
}

test('a burst of 650 in one window: exactly 600 served, 50 x 429; rejected requests do not count; the next window starts afresh', async (t) => {
  // Start inside one window with room to spare.
  let left = secondsLeftInMinute();
  if (left < MARGIN_S) {
    t.diagnostic(`waiting ${left.toFixed(1)} s for the next minute`);
    await sleep(left * 1000 + 300);
    left = secondsLeftInMinute();
  }
  const windowStart = Math.floor(Date.now() / 60000);
  const startedAt = psql('SELECT now()');
  const t0 = Date.now();
  const results = await pool(Array.from({ length: BURST }, () => () => api('/v1/products?limit=1', { key: burstKey })), CONCURRENCY);
  const elapsed = Date.now() - t0;
  t.diagnostic(`${BURST} requests, ${CONCURRENCY} at a time, in ${elapsed} ms`);
  assert.equal(Math.floor(Date.now() / 60000), windowStart, 'the burst stayed inside one window');

  const ok = results.filter((r) => r.status === 200);
  const limited = results.filter((r) => r.status === 429);
  assert.equal(ok.length + limited.length, BURST, `only 200 and 429: ${[...new Set(results.map((r) => r.status))]}`);
  assert.equal(ok.length, LIMIT, 'exactly 600 served');
  assert.equal(limited.length, BURST - LIMIT, 'exactly 50 rejected');

  // Each served request took its own place in the window: Remaining 599, 598, ..., 0.
  const remaining = ok.map((r) => assertRateHeaders(r, LIMIT).remaining).sort((a, b) => a - b);
  assert.deepEqual(remaining, Array.from({ length: LIMIT }, (_, i) => i));
  for (const r of limited) {
    assertError(r, 429, 'rate_limit_error', 'rate_limited', null);
    const rate = assertRateHeaders(r, LIMIT);
    assert.equal(rate.remaining, 0);
    const retry = r.headers.get('retry-after');
    assert.match(retry ?? '', /^\d+$/, 'Retry-After is whole seconds');
    assert.ok(Number(retry) >= 1 && Number(retry) <= 60, `Retry-After ${retry} is 1..60`);
    assert.ok(Math.abs(Number(retry) - rate.reset) <= 1, 'Retry-After is the time to the window end');
    assert.ok(Number(retry) <= Math.ceil(secondsLeftInMinute()) + 1, `Retry-After ${retry} points at the end of this minute`);
  }

  // Several workers served the burst: each worker holds one database connection, and the
  // connections of at least two ran statements during it.
  const workers = poolWorkers();
  const busy = Number(psql(`SELECT count(*) FROM pg_stat_activity
                             WHERE application_name = 'market-api' AND query_start >= '${startedAt}'`));
  t.diagnostic(`${workers.length} workers in the pool, ${busy} of their connections served the burst`);
  assert.ok(workers.length >= 2, `the stack runs several workers (got ${workers.length})`);
  assert.ok(busy >= 2, `at least two workers served the burst (got ${busy})`);

  // Over the limit, the 429 comes before route, method, scope and input checks; the 401
  // still comes first. None of these count.
  const after = [
    ['GET', '/v1/products?limit=1', 429], ['GET', '/v1/nope', 429], ['DELETE', '/v1/products', 429],
    ['POST', '/v1/webhooks', 429], ['GET', '/v1/products?limit=0', 429], ['GET', '/v1/sellers/x?bogus=1', 429],
  ];
  for (const [method, path, status] of after) {
    const res = await api(path, { key: burstKey, method });
    assertError(res, status, 'rate_limit_error', 'rate_limited', null);
    assert.equal(assertRateHeaders(res, LIMIT).remaining, 0);
    assert.ok(res.headers.get('retry-after'));
  }
  const noKey = await api('/v1/products');
  assertError(noKey, 401, 'authentication_error', 'missing_api_key', null);
  assert.equal(countInWindow(burstKey), String(LIMIT), 'the counter stopped at 600: rejected requests were not counted');
  assert.equal(Math.floor(Date.now() / 60000), windowStart, 'the checks stayed inside the window');

  // Another key of the same account has its own window.
  const other = newKey({ account, mode: 'test', access: 'read-only' });
  const otherRes = await api('/v1/products?limit=1', { key: other });
  assert.equal(otherRes.status, 200);
  assert.equal(assertRateHeaders(otherRes, LIMIT).remaining, LIMIT - 1);

  // The next window: the full allowance again.
  const wait = (60 - ((Date.now() / 1000) % 60)) * 1000 + 300;
  t.diagnostic(`waiting ${(wait / 1000).toFixed(1)} s for the next window`);
  await sleep(wait);
  const fresh = await api('/v1/products?limit=1', { key: burstKey });
  assert.equal(fresh.status, 200, fresh.text.slice(0, 200));
  const rate = assertRateHeaders(fresh, LIMIT);
  assert.equal(rate.remaining, LIMIT - 1, 'a new window starts at 599 left');
  assert.ok(rate.reset >= 55, `X-RateLimit-Reset ${rate.reset} at the start of a window`);
});

test('every authenticated request counts, 404s and 400s included; Remaining goes down by one', async () => {
  for (let attempt = 0; attempt < 2; attempt++) {
    const key = newKey({ account, mode: 'test', access: 'read-only' });
    const seq = [['/v1/nope', 404], ['/v1/nope', 404], ['/v1/products?limit=0', 400], ['/v1/products/prod_nothing', 404], ['/v1/products?limit=1', 200]];
    const seen = [];
    for (const [path, status] of seq) {
      const res = await api(path, { key });
      assert.equal(res.status, status, `${path}: ${res.text.slice(0, 200)}`);
      seen.push(assertRateHeaders(res, LIMIT));
    }
    // A window boundary in the middle resets the count: try once more with a new key.
    if (seen.some((s, i) => i > 0 && s.reset > seen[i - 1].reset)) continue;
    assert.deepEqual(seen.map((s) => s.remaining), [599, 598, 597, 596, 595]);
    return;
  }
  assert.fail('two window boundaries in two short sequences');
});

test('X-RateLimit-Reset counts down to the end of the Unix minute', async () => {
  const key = newKey({ account, mode: 'test', access: 'read-only' });
  const res = await api('/v1/products?limit=1', { key });
  const expected = 60 - Math.floor((Date.now() / 1000) % 60);
  const { reset } = assertRateHeaders(res, LIMIT);
  assert.ok(Math.abs(reset - expected) <= 1 || Math.abs(reset - expected) >= 59, `reset ${reset}, expected about ${expected}`);
});
