// The in-flight cap (docs/contract.md section 3, docs/api.md "Rate limit"): one key may
// have at most MARKET_KEY_INFLIGHT requests served at once on one host (default: half the
// host's workers, at least one). A request beyond that is answered at once with 429
// rate_limit_error / too_many_in_flight and Retry-After: 1, and is not counted against the
// minute. tests/e2e/run lifts the cap for the main stack (its race tests need one key's
// requests on every worker at once), so this file starts a stack of its own with the
// default: two workers, so one request per key at a time.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { api, startStack, uniqueId, waitFor } from './lib/stack.mjs';
import { assertError } from './fixtures/expect.mjs';

let s;
const account = uniqueId('acct_if_');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

before(async () => {
  // The default cap; a statement timeout long enough for the test's steps under any load
  // (the slow request waits on a lock the test holds until it is done).
  s = await startStack({ settings: { MARKET_KEY_INFLIGHT: null, MARKET_STATEMENT_TIMEOUT: '30000' }, workers: 2 });
  s.admin(['import', '-'], JSON.stringify({ mode: 'test', accounts: [{ id: account }] }));
});
after(() => s?.down());

const newKey = () => s.admin(['key', 'create', '--account', account, '--mode', 'test', '--access', 'read-only']);
const get = (path, key) => api(`${s.base}${path}`, { key });
const psql = (sql) =>
  new Promise((resolve, reject) => {
    const child = spawn('psql', ['-X', '-q', '-A', '-t', '-d', s.db, '-c', sql], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.on('exit', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`psql exited ${code}`))));
  });

/**
 * Takes an exclusive lock on products in a session of its own (a catalogue read waits on
 * it); resolves once it is held, with a function that releases it (and resolves when the
 * session has ended).
 */
async function lockProducts() {
  const session = spawn('psql', ['-X', '-q', '-d', s.db], { stdio: ['pipe', 'ignore', 'inherit'] });
  const ended = new Promise((resolve) => session.on('exit', resolve));
  session.stdin.write('BEGIN;\nLOCK TABLE products IN ACCESS EXCLUSIVE MODE;\n');
  await waitFor(async () => (await psql(
    "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation " +
    "WHERE c.relname = 'products' AND l.mode = 'AccessExclusiveLock' AND l.granted")) === '1',
  { message: 'the lock on products is held' });
  return () => {
    session.stdin.end('COMMIT;\n');
    return ended;
  };
}

test('a key with a request in progress is refused at once, uncounted; other keys are served', async () => {
  const key = newKey();
  const other = newKey();
  const release = await lockProducts();
  let slowAnswered = false;
  const slow = get(`/v1/products?category=${uniqueId('if-')}`, key).then((r) => {
    slowAnswered = true;
    return r;
  }); // waits on the lock
  await waitFor(async () => (await psql(
    "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'market-api' AND wait_event_type = 'Lock'")) === '1',
  { message: 'the slow request waits on the lock' });

  const refused = await get('/v1/products?limit=1', key);
  assert.ok(!slowAnswered, 'answered while the slow request still waits, not after it');
  assertError(refused, 429, 'rate_limit_error', 'too_many_in_flight');
  assert.equal(refused.headers.get('retry-after'), '1');
  assert.equal(refused.headers.get('x-ratelimit-limit'), '600');
  // The slow request is counted once its key check runs (before or after this refusal:
  // its worker may still be preparing the page's statement, which waits on the lock too).
  const remaining = refused.headers.get('x-ratelimit-remaining');
  assert.ok(['599', '600'].includes(remaining), `remaining ${remaining}`);
  const again = await get('/v1/products?limit=1', key);
  assertError(again, 429, 'rate_limit_error', 'too_many_in_flight');
  assert.equal(again.headers.get('x-ratelimit-remaining'), remaining, 'a refusal is not counted');

  // Keys are still checked first: a wrong key is 401 (on a route that does not read
  // products, which the test keeps locked).
  assertError(await get('/v1/orders', `${key.slice(0, -4)}zzzz`), 401, 'authentication_error', 'invalid_api_key');
  // Another key has the other worker (a route that does not read products).
  assertError(await get('/v1/nowhere', other), 404, 'invalid_request_error', 'route_not_found');

  await release();
  assert.equal((await slow).status, 200);
  const after = await get('/v1/products?limit=1', key);
  assert.equal(after.status, 200);
  assert.equal(after.headers.get('x-ratelimit-remaining'), '598', 'the slow request and this one; no refusal');
});

test('a burst from 8 connections of one key that retries its refusals gets exactly 600', async () => {
  // The whole burst inside one window of the limit (aligned to the minute).
  const left = 60 - (Math.floor(Date.now() / 1000) % 60);
  if (left < 25) await sleep(left * 1000 + 200);
  const key = newKey();
  const counts = { ok: 0, rate_limited: 0, too_many_in_flight: 0, other: 0 };
  let sent = 0;
  const connection = async () => {
    while (sent < 650) {
      sent++;
      for (;;) {
        const r = await get(`/v1/products?limit=${1 + (sent % 5)}`, key);
        if (r.status === 429 && r.json?.error?.code === 'too_many_in_flight') {
          counts.too_many_in_flight++;
          await sleep(Number(r.headers.get('retry-after')) * 1000);
          continue; // not counted: send it again
        }
        if (r.status === 200) counts.ok++;
        else if (r.status === 429 && r.json?.error?.code === 'rate_limited') counts.rate_limited++;
        else counts.other++;
        break;
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, connection));
  assert.equal(counts.other, 0, JSON.stringify(counts));
  assert.equal(counts.ok, 600, JSON.stringify(counts));
  assert.equal(counts.rate_limited, 50, JSON.stringify(counts));
  assert.ok(counts.too_many_in_flight > 0, `refusals happened: ${JSON.stringify(counts)}`);
});
