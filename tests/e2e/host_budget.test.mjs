// The host's kept keys and the rate limit's blocks (docs/contract.md section 3,
// app/api/keys/key_budget.h, sql/migrations/016_host_budgets.sql): a host takes a key's requests
// from PostgreSQL in blocks and counts them out in its shared memory, keeping the key's row
// until api_keys changes. What must not change: Remaining counts each request; a revoked
// key is refused at once; and when another host takes from the same window, the host gives
// back what it holds, so that the window still serves exactly its limit.
//
// "Another host" is played here by the test: it takes from the window in SQL as a host of
// its own would (the row shared, its count up by one), which fires the notification.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { admin, api, newAccount, newKey, psql, STACK_DIR, waitFor } from './lib/stack.mjs';
import { assertError, assertRateHeaders, pool, sleep } from './fixtures/expect.mjs';

const LIMIT = 600;
const BLOCK = LIMIT / 16 | 0; // key_budget_block(600)
let account;

before(() => {
  account = newAccount('acct_hb_');
});

const keyRow = (key) => `key_hash = sha256(convert_to('${key}', 'UTF8'))`;
const windowRow = (key) => psql(`
  SELECT count || ' ' || lent || ' ' || shared || ' ' || (holder <> 0) FROM rate_counters
   WHERE key_id = (SELECT id FROM api_keys WHERE ${keyRow(key)})
     AND window_start = floor(extract(epoch FROM now()) / 60)`);

/** Waits, when needed, until at least `seconds` of the current minute are left. */
async function roomInWindow(seconds) {
  const left = 60 - ((Date.now() / 1000) % 60);
  if (left < seconds) await sleep(left * 1000 + 300);
  return Math.floor(Date.now() / 60000);
}

test('a few requests take one block; Remaining still counts each request', async () => {
  await roomInWindow(5);
  const key = newKey({ account, mode: 'test', access: 'read-only' });
  const seen = [];
  for (let i = 0; i < 5; i++) {
    const res = await api('/v1/products?limit=1', { key });
    assert.equal(res.status, 200, res.text);
    seen.push(assertRateHeaders(res, LIMIT).remaining);
  }
  assert.deepEqual(seen, [599, 598, 597, 596, 595]);
  // One take for five requests: the window's count is the block, lent once, not shared.
  assert.equal(windowRow(key), `${BLOCK} 1 false true`);
});

test('a key the host keeps is refused at once when revoked, on every worker', async () => {
  const key = newKey({ account, mode: 'test', access: 'read-only' });
  // Enough requests at once that every worker serves the key, from the host's memory.
  const warm = await pool(Array.from({ length: 24 }, () => () => api('/v1/products?limit=1', { key })), 8);
  assert.ok(warm.every((r) => r.status === 200));
  admin(['key', 'revoke', key]);
  const after = await pool(Array.from({ length: 16 }, () => () => api('/v1/products?limit=1', { key })), 8);
  for (const res of after) assertError(res, 401, 'authentication_error', 'invalid_api_key', null);
});

test('an expiry moved into the past is heard at once', async () => {
  const key = newKey({ account, mode: 'test', access: 'read-only' });
  assert.equal((await api('/v1/products?limit=1', { key })).status, 200);
  psql(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE ${keyRow(key)}`);
  assertError(await api('/v1/products?limit=1', { key }), 401, 'authentication_error', 'api_key_expired', null);
});

test('another host takes from the window: this host gives its blocks back, and the window serves exactly its limit', async () => {
  const window = await roomInWindow(20);
  const key = newKey({ account, mode: 'test', access: 'read-only' });
  for (let i = 0; i < 10; i++) assert.equal((await api('/v1/products?limit=1', { key })).status, 200);
  assert.equal(windowRow(key), `${BLOCK} 1 false true`, 'one block taken, 10 of it used');

  // Another host takes one request: the window is shared, and this host is notified.
  psql(`UPDATE rate_counters SET count = count + 1, shared = true
         WHERE key_id = (SELECT id FROM api_keys WHERE ${keyRow(key)})
           AND window_start = floor(extract(epoch FROM now()) / 60)`);
  await waitFor(() => windowRow(key) === '11 0 true true', { message: 'the unused part of the block given back' });

  // The rest of the window: exactly 600 - 11, one request at a time, and 429 after.
  const results = await pool(Array.from({ length: 650 }, () => () => api('/v1/products?limit=1', { key })), 16);
  assert.equal(Math.floor(Date.now() / 60000), window, 'the burst stayed inside one window');
  const ok = results.filter((r) => r.status === 200).length;
  const limited = results.filter((r) => r.status === 429);
  assert.equal(ok, LIMIT - 11);
  assert.equal(limited.length, 650 - ok);
  for (const res of limited) assertError(res, 429, 'rate_limit_error', 'rate_limited', null);
  assert.equal(windowRow(key), `${LIMIT} 0 true true`);
});

test('a holder that never gives back is written off after a short wait, then refusals are immediate', async () => {
  await roomInWindow(10);
  const key = newKey({ account, mode: 'test', access: 'read-only' });
  // Another host (holder 999, gone) took the whole window in blocks and gave nothing back.
  psql(`INSERT INTO rate_counters (key_id, window_start, count, holder, shared, lent)
        SELECT id, floor(extract(epoch FROM now()) / 60), ${LIMIT}, 999, true, 3 FROM api_keys WHERE ${keyRow(key)}`);
  const t0 = Date.now();
  const first = await api('/v1/products?limit=1', { key });
  const waited = Date.now() - t0;
  assertError(first, 429, 'rate_limit_error', 'rate_limited', null);
  assert.equal(assertRateHeaders(first, LIMIT).remaining, 0);
  assert.ok(waited >= 250, `the refusal waited ${waited} ms for the holder`);
  assert.equal(windowRow(key), `${LIMIT} 0 true true`, 'the blocks written off');
  await waitFor(() => /blocks of another host were not given back in time; written off/
    .test(readFileSync(`${STACK_DIR}/log/api.log`, 'utf8')), { message: 'the log line of the write-off' });
  const t1 = Date.now();
  assertError(await api('/v1/products?limit=1', { key }), 429, 'rate_limit_error', 'rate_limited', null);
  assert.ok(Date.now() - t1 < 250, 'the next refusal does not wait');
});
