// A bound on every request (docs/api.md, "Limits"): the API's database sessions run with
// statement_timeout = MARKET_STATEMENT_TIMEOUT (2000 ms unless set), so a statement that
// cannot finish (here: one that waits on a lock held by another session) is cancelled and
// answered 503 service_unavailable with Retry-After, with one log line; the worker then
// serves the next request as usual. A client that goes away has its statement cancelled
// at once; and a FastCGI peer that connects and stalls holds a worker a few seconds only.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { api, MARKET_DB, newAccount, newKey, psql, STACK_DIR, uniqueId, waitFor } from './lib/stack.mjs';
import { assertError } from './fixtures/expect.mjs';
import { parsePrometheus, value } from './fixtures/prometheus.mjs';

const TIMEOUT_MS = Number(process.env.MARKET_STATEMENT_TIMEOUT ?? 2000);
let account;
let key;

before(() => {
  account = newAccount('acct_to_');
  key = newKey({ account, mode: 'test', access: 'read-only' });
});

/** Holds an exclusive lock on products for `ms` in a session of its own; resolves once
 * the lock is held (a request sent before would not wait on it), with `released`, a
 * promise of the session's end. */
async function lockProducts(ms) {
  const child = spawn('psql', ['-X', '-q', '-d', MARKET_DB, '-c',
    `BEGIN; LOCK TABLE products IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(${ms / 1000}); COMMIT;`], {
    stdio: 'ignore',
  });
  const released = new Promise((resolve) => child.on('exit', resolve));
  await waitFor(() => psql(
    "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation " +
    "WHERE c.relname = 'products' AND l.mode = 'AccessExclusiveLock' AND l.granted") === '1',
  { message: 'the lock on products is held' });
  return { released };
}

/** The counters of 503s by cause (market_db_unavailable_total). */
async function unavailable() {
  const res = await api('/metrics');
  assert.equal(res.status, 200, res.text.slice(0, 300));
  const families = parsePrometheus(res.text);
  return {
    unreachable: value(families, 'market_db_unavailable_total', { cause: 'unreachable' }),
    timeout: value(families, 'market_db_unavailable_total', { cause: 'timeout' }),
  };
}

test('a statement past MARKET_STATEMENT_TIMEOUT is cancelled: 503 with Retry-After and a log line', async () => {
  const before = await unavailable();
  let lockReleased = false;
  const released = (await lockProducts(TIMEOUT_MS * 2 + 2000)).released.then(() => {
    lockReleased = true;
  });
  const started = Date.now();
  // A category of its own, so that no worker answers it from its page cache.
  const res = await api(`/v1/products?category=${uniqueId('to-')}`, { key });
  const took = Date.now() - started;
  assertError(res, 503, 'api_error', 'service_unavailable');
  assert.equal(res.headers.get('retry-after'), '1');
  // Says the database did not answer in time, not that it is unreachable; counted apart.
  assert.equal(res.json.error.message,
    `the database did not answer within MARKET_STATEMENT_TIMEOUT (${TIMEOUT_MS} ms); retry shortly`);
  const after = await unavailable();
  assert.equal(after.timeout - before.timeout, 1, 'market_db_unavailable_total{cause="timeout"}');
  assert.equal(after.unreachable, before.unreachable, 'not counted as unreachable');
  assert.ok(took >= TIMEOUT_MS - 50, `answered after ${took} ms, not before the bound`);
  assert.ok(!lockReleased, `answered after ${took} ms, while the lock was still held`);
  // Workers write their log lines in batches: the line comes within a second or so.
  await waitFor(() => /statement products_list_\S+ cancelled after MARKET_STATEMENT_TIMEOUT \(\d+ ms\)/
    .test(readFileSync(`${STACK_DIR}/log/api.log`, 'utf8')), { message: 'the log line of the timeout' });
  await released;
  // The same worker (every worker) serves again once the lock is gone.
  for (let i = 0; i < 4; i++)
    assert.equal((await api(`/v1/products?category=${uniqueId('to-')}`, { key })).status, 200);
});

const waitingOnLock = () => psql(
  "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'market-api' AND wait_event_type = 'Lock'");

/** waitFor, and when it times out, what every session of the stack was doing, how the
 * request went (`outcome`: a function that tells, when given), and the API's last log lines. */
async function waitForSessions(fn, opts, outcome = () => 'not watched') {
  try {
    await waitFor(fn, opts);
  } catch (err) {
    const sessions = psql(`SELECT application_name || ' ' || state || ' ' || coalesce(wait_event_type, '-') || '/' ||
      coalesce(wait_event, '-') || ' ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 100)
      FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`);
    const log = readFileSync(`${STACK_DIR}/log/api.log`, 'utf8').trimEnd().split('\n').slice(-12).join('\n');
    err.message += `; sessions:\n${sessions}\nthe request: ${outcome()}\nlast lines of api.log:\n${log}`;
    throw err;
  }
}

test('a client that goes away has its statement cancelled at once, not at the timeout', async () => {
  let lockReleased = false;
  const released = (await lockProducts(TIMEOUT_MS * 2 + 2000)).released.then(() => {
    lockReleased = true;
  });
  const gone = new AbortController();
  let settled = 'pending';
  const request = api(`/v1/products?category=${uniqueId('gone-')}`, { key, signal: gone.signal }).catch((e) => e);
  request.then((res) => {
    settled = res instanceof Error ? `failed: ${res.message}` : `answered ${res.status} ${String(res.text).slice(0, 200)}`;
  });
  await waitForSessions(() => waitingOnLock() === '1', { message: 'the statement waits on the lock' }, () => settled);
  gone.abort();
  assert.equal((await request).name, 'AbortError');
  // nginx closes the worker's connection; the worker cancels its statement at once.
  await waitForSessions(() => waitingOnLock() === '0', { message: 'the statement is cancelled', timeout: TIMEOUT_MS + 5000 });
  assert.ok(!lockReleased, 'cancelled while the lock was still held, not by the timeout');
  // Workers write their log lines in batches: the line comes within a second or so.
  await waitFor(() => /statement products_list_\S+ cancelled: the client went away/.test(readFileSync(`${STACK_DIR}/log/api.log`, 'utf8')),
    { message: 'the log line of the cancelled statement' });
  await released;
  assert.equal((await api(`/v1/products?category=${uniqueId('gone-')}`, { key })).status, 200);
});

test('FastCGI peers that connect and stall hold no worker for long', async () => {
  // A local process on the pool's socket (nginx's group may connect) sends 4 bytes of a
  // record header and nothing more, once per worker and then some: every worker takes
  // one. Each gives up on it after a few seconds, and a request through nginx is served.
  const stalled = [];
  for (let i = 0; i < 6; i++) {
    const sock = connect(`${STACK_DIR}/run/api.sock`);
    sock.on('error', () => {});
    sock.write(Buffer.from([1, 1, 0, 1]));
    stalled.push(sock);
  }
  try {
    const res = await api(`/v1/products?category=${uniqueId('stall-')}`, { key });
    assert.equal(res.status, 200, 'served, not a 504 after nginx gave up on the pool');
  } finally {
    for (const sock of stalled) sock.destroy();
  }
});
