// The worker pool under trouble: PostgreSQL stopped (503 service_unavailable with
// Retry-After, /healthz 503 and /metrics saying so, then normal answers again within
// about 2 s of its return, with the same workers, and the reconnects counted), database connections cut, a worker killed with SIGKILL (multiwatch replaces
// it; at most the one request it was serving fails, with nginx's JSON 502), and hostile
// input that must never kill a worker.
//
// It stops and starts the stack's own PostgreSQL (tests/e2e/run runs one file at a time),
// and always leaves it running.
import { test, before, beforeEach, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { api, importDoc, newKey, psql, uniqueId, waitFor, API_PIDFILE, BASE_URL } from './lib/stack.mjs';
import { assertError, assertRateHeaders, pool, rawRequest, sleep } from './fixtures/expect.mjs';
import { parsePrometheus, value } from './fixtures/prometheus.mjs';
import { pgRunning, pgStart, pgStop } from './fixtures/postgres.mjs';

const run = uniqueId('');
const account = `acct_res_${run}`;
const seller = `res-${run}`;
const product = `prod_res_${run}`;
let key; // a fresh read-only key for each test: 600 requests a minute each
let rwKey;

before(() => {
  importDoc({
    mode: 'test',
    accounts: [{ id: account, email: `${account}@example.com` }],
    sellers: [{ id: seller, account, name: 'Sturdy Shop' }],
    products: [{
      id: product, seller, title: 'Sturdy Product', description: 'survives', category: `res-${run}`,
      currency: 'USD', status: 'published',
      tiers: [{ id: `tier_res_${run}`, name: 'Personal', price: 2, licence: {} }],
    }],
  });
  rwKey = newKey({ account, mode: 'test', access: 'read-write' });
});

beforeEach(() => {
  key = newKey({ account, mode: 'test', access: 'read-only' });
});

// Whatever happens in a test, the next file gets a running database.
after(() => {
  if (!pgRunning()) pgStart();
});

function workers() {
  const multiwatch = readFileSync(API_PIDFILE, 'utf8').trim();
  return execFileSync('ps', ['--ppid', multiwatch, '-o', 'pid='], { encoding: 'utf8' })
    .split('\n').map((s) => s.trim()).filter(Boolean).sort();
}

/** Nothing of the implementation leaks into an error message. */
function assertNoLeak(res) {
  const message = res.json?.error?.message ?? '';
  assert.doesNotMatch(message, /postgres|libpq|\bPQ[a-z]|SQL|socket|\/tmp|\/var|\.c:|connection to server|FATAL|ERROR:/i,
    `no internals in ${res.text.slice(0, 300)}`);
}

test('database connections cut by the server: the next requests reconnect and succeed', async () => {
  const pids = workers();
  // Warm every worker so each holds a connection, then cut them all.
  await pool(Array.from({ length: 20 }, () => () => api('/v1/products?limit=1', { key })), 4);
  const cut = psql(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'market-api'`);
  assert.ok(Number(cut) >= 1, 'some worker connections were cut');
  for (let i = 0; i < 3 * pids.length; i++) {
    const res = await api('/v1/products?limit=1', { key });
    assert.equal(res.status, 200, `request ${i} after the cut: ${res.text.slice(0, 200)}`);
  }
  assert.deepEqual(workers(), pids, 'no worker restarted');
});

async function scrape() {
  const res = await api('/metrics');
  assert.equal(res.status, 200, res.text.slice(0, 300));
  return parsePrometheus(res.text);
}

test('PostgreSQL down: 503 service_unavailable with Retry-After; back up: 200 within ~2 s, same workers', async (t) => {
  const pids = workers();
  assert.equal((await api('/v1/products?limit=1', { key })).status, 200);
  assert.equal((await api('/healthz')).status, 200);
  const before = await scrape();
  const reconnectsBefore = value(before, 'market_db_reconnects_total');
  const unreachableBefore = value(before, 'market_db_unavailable_total', { cause: 'unreachable' });
  const timeoutBefore = value(before, 'market_db_unavailable_total', { cause: 'timeout' });
  pgStop();
  try {
    // The health check says so, in the API's error envelope; the metrics still answer.
    for (let i = 0; i < 2 * pids.length; i++) {
      const health = await api('/healthz');
      assertError(health, 503, 'api_error', 'service_unavailable', null);
      assert.match(health.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      assertNoLeak(health);
    }
    const down = await scrape();
    assert.equal(value(down, 'market_database_up'), 0);
    assert.equal(down.get('market_webhook_deliveries'), undefined, 'no outbox figures without the database');
    const paths = ['/v1/products?limit=1', `/v1/products/${product}`, `/v1/sellers/${seller}`, '/v1/nope', '/v1/orders'];
    // Enough requests that every worker meets the outage, some twice in a row.
    for (let round = 0; round < 3; round++) {
      for (const path of paths) {
        const res = await api(path, { key, headers: { 'X-Request-Id': `down-${round}` } });
        assertError(res, 503, 'api_error', 'service_unavailable', null);
        // The cause, not a statement that took too long (docs/contract.md section 4).
        assert.equal(res.json.error.message, 'the database is unreachable; retry shortly');
        assert.equal(res.headers.get('x-request-id'), `down-${round}`);
        const retry = res.headers.get('retry-after');
        assert.match(retry ?? '', /^[1-9]\d*$/, 'Retry-After in whole seconds');
        assertNoLeak(res);
      }
    }
    // Concurrently, too: every answer is the same JSON 503, none hangs.
    const burst = await pool(Array.from({ length: 30 }, () => () => api('/v1/products?limit=1', { key })), 10);
    for (const res of burst) assertError(res, 503, 'api_error', 'service_unavailable', null);
    // Checks that need no database still answer: 401 for a missing or malformed key.
    assertError(await api('/v1/products'), 401, 'authentication_error', 'missing_api_key', null);
    assertError(await api('/v1/products', { headers: { Authorization: 'Bearer nope' } }), 401, 'authentication_error', 'invalid_api_key', null);
    assert.deepEqual(workers(), pids, 'the workers stay up while the database is down');
    // Counted as unreachable, never as a timeout: 3 rounds of 4 API routes (/v1/nope
    // answers 503 too, as no route: the key is checked first) and the burst of 30.
    const counted = await scrape();
    assert.ok(value(counted, 'market_db_unavailable_total', { cause: 'unreachable' }) - unreachableBefore >= 3 * paths.length + 30,
      'market_db_unavailable_total{cause="unreachable"} counts the 503s');
    assert.equal(value(counted, 'market_db_unavailable_total', { cause: 'timeout' }), timeoutBefore, 'no timeout counted');
  } finally {
    pgStart();
  }
  const upAt = Date.now();
  const res = await waitFor(async () => {
    const r = await api('/v1/products?limit=1', { key });
    return r.status === 200 ? r : null;
  }, { timeout: 5000, interval: 50, message: 'a 200 after PostgreSQL came back' });
  const took = Date.now() - upAt;
  t.diagnostic(`first 200 ${took} ms after pg_ctl start returned`);
  assert.ok(took <= 2000, `back within 2 s (took ${took} ms)`);
  assertRateHeaders(res);
  // Every request is answered again, concurrent ones too, within the same bound: a worker
  // that tried the database in the last DB_RETRY_MS (200 ms) before it came back answers
  // 503 at once until that pause is over (lib/db.c, db_ready), so the first round may
  // meet one.
  let last = [];
  await waitFor(async () => {
    last = await pool(Array.from({ length: 20 }, () => () => api(`/v1/products/${product}`, { key })), 4);
    return last.every((r) => r.status === 200);
  }, { timeout: 2000, interval: 50, message: 'every worker serves again' });
  for (const r of last) assert.equal(r.status, 200, r.text.slice(0, 200));
  assert.deepEqual(workers(), pids, 'no worker was restarted: they reconnected');
  assert.deepEqual((await api('/healthz')).json, { status: 'ok' });
  // The workers that served since reconnected, and counted it. nginx keeps its FastCGI
  // connections for GET and reuses the one it used last, so which workers the requests
  // above reached is nginx's choice: a worker it sent none to reconnects at its first
  // request, by the same path (db_ready).
  const up = await scrape();
  assert.equal(value(up, 'market_database_up'), 1);
  assert.ok(value(up, 'market_db_reconnects_total') >= reconnectsBefore + 1,
    `the reconnects counted: ${reconnectsBefore} -> ${value(up, 'market_db_reconnects_total')}`);
});

test('hostile input in every parameter, path and header never kills a worker and never gets a 5xx', async () => {
  const pids = workers();
  const ff16k = '%FF'.repeat(5300); // a request line just under nginx's 16 KiB
  const garbage = ['%FF', '%00', '%', '%%', '%zz', '%C0%80', '%ED%A0%80', '%F4%90%80%80', '%C3%28', '\u0000',
    '\uFFFF', '\uD7FF', '😀'.repeat(300), 'a'.repeat(8000), '%25'.repeat(2000), '-1', '1e309', '99999999999999999999999',
    "' OR 1=1 --", '"; DROP TABLE products; --', '$1', '\\x00', '../../etc/passwd', '<script>', '%0d%0aX-Injected: 1'];
  const paths = [];
  for (const name of ['category', 'q', 'seller', 'min_price', 'max_price', 'sort', 'limit', 'cursor']) {
    for (const g of garbage) paths.push(`/v1/products?${name}=${g.startsWith('%') ? g : encodeURIComponent(g)}`);
  }
  paths.push(`/v1/products?q=${ff16k}`, `/v1/products?cursor=${ff16k}`, `/v1/products?${ff16k}=1`);
  for (const g of garbage) {
    const enc = g.startsWith('%') ? g : encodeURIComponent(g);
    paths.push(`/v1/products/${enc}`, `/v1/sellers/${enc}`, `/v1/sellers/${seller}?cursor=${enc}`, `/v1/sellers/${seller}?limit=${enc}`);
  }
  paths.push('/v1/products?' + Array.from({ length: 40 }, (_, i) => `p${i}=%FF`).join('&'));
  paths.push('/v1/products?' + 'category=a&'.repeat(30));

  const answers = await pool(paths.map((p) => () => api(p, { key })), 8);
  for (const [i, res] of answers.entries()) {
    assert.ok(res.status >= 400 && res.status < 500 || res.status === 200, `${paths[i].slice(0, 80)}: ${res.status}`);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.ok(res.json, 'a JSON body');
    assertNoLeak(res);
  }
  // The 16 KiB of %FF reached the worker and got its own 400.
  const ff = answers[paths.indexOf(`/v1/products?q=${ff16k}`)];
  assertError(ff, 400, 'invalid_request_error', 'parameter_invalid', 'q');

  // Bodies: 16 KiB of 0xFF, of %FF, and truncated or deep JSON, to the POST routes.
  const bodies = [
    [Buffer.alloc(16 * 1024, 0xff), 'application/json'], [Buffer.from('%FF'.repeat(5000)), 'application/json'],
    [Buffer.alloc(16 * 1024, 0xff), 'application/octet-stream'], [Buffer.from('{"expires_in": '), 'application/json'],
    [Buffer.from('['.repeat(5000) + ']'.repeat(5000)), 'application/json'], [Buffer.from('{"a":'.repeat(3000)), 'application/json'],
    [Buffer.from('{"expires_in": 1e999999}'), 'application/json'], [Buffer.from('{"\u0000": 1}'), 'application/json'],
  ];
  for (const [body, type] of bodies) {
    for (const path of ['/v1/downloads/dl_nothing/link', '/v1/webhooks']) {
      const res = await api(path, { key: rwKey, method: 'POST', body, headers: { 'Content-Type': type } });
      assert.ok(res.status >= 400 && res.status < 500, `${path} ${type} ${body.length} bytes: ${res.status} ${res.text.slice(0, 200)}`);
      assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    }
  }

  // Headers and request lines fetch would not send.
  const raw = [
    [`GET /v1/products HTTP/1.1\r\nAuthorization: Bearer ${'\xff'.repeat(4000)}`, ''],
    [`GET /v1/products HTTP/1.1\r\nAuthorization: Bearer ${key}\r\nX-Request-Id: ${'\xff'.repeat(100)}`, ''],
    [`GET /v1/products HTTP/1.1\r\nAuthorization: Bearer ${key}\r\nX-Request-Id: ${'a'.repeat(8000)}`, ''],
    [`GET /v1/products?q=\xff\xfe\x01 HTTP/1.1\r\nAuthorization: Bearer ${key}`, ''],
    [`GET /v1/products/\xc3\x28 HTTP/1.1\r\nAuthorization: Bearer ${key}`, ''],
    [`GET /v1/products HTTP/1.1\r\nAuthorization: Bearer ${key}\r\nContent-Length: 5`, 'hello'],
    [`POST /v1/downloads/dl_x/link HTTP/1.1\r\nAuthorization: Bearer ${rwKey}\r\nContent-Type: application/json\r\nContent-Length: 3`, '{"x'],
    [`POST /v1/downloads/dl_x/link HTTP/1.1\r\nAuthorization: Bearer ${rwKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked`, '4\r\n{"x"\r\n0\r\n\r\n'],
    [`GET /v1/products HTTP/1.1\r\nAuthorization: Bearer ${key}\r\nAuthorization: Bearer ${rwKey}`, ''],
  ];
  for (const [head, body] of raw) {
    const res = await rawRequest(BASE_URL, head, Buffer.from(body, 'latin1'));
    assert.ok(res.status < 500, `${JSON.stringify(head.slice(0, 60))}: ${res.status} ${res.text.slice(0, 200)}`);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  }

  await sleep(200);
  assert.deepEqual(workers(), pids, 'no worker died or was replaced');
  for (let i = 0; i < 2 * pids.length; i++) {
    assert.equal((await api('/v1/products?limit=1', { key })).status, 200);
  }
});

test('a worker killed with SIGKILL under load is replaced; only the request it held may fail, as JSON', async (t) => {
  const pids = workers();
  assert.ok(pids.length >= 1);
  let stop = false;
  const answers = [];
  // One key per loader: a fast machine sends hundreds of requests during the kill, and a
  // 429 from the shared limit is a correct answer, not a failure of the pool.
  const loaderKeys = Array.from({ length: 4 }, () => newKey({ account, mode: 'test', access: 'read-only' }));
  const load = async (loaderKey) => {
    while (!stop) answers.push(await api(`/v1/products/${product}`, { key: loaderKey }));
  };
  const loaders = loaderKeys.map(load);
  await sleep(300);
  process.kill(Number(pids[0]), 'SIGKILL');
  await waitFor(() => {
    const now = workers();
    return now.length === pids.length && !now.includes(pids[0]);
  }, { timeout: 10000, interval: 50, message: 'multiwatch to replace the killed worker' });
  await sleep(500);
  stop = true;
  await Promise.all(loaders);

  // A key past its 600 a minute is answered 429, correctly (a fast machine gets there
  // within the test).
  const limited = answers.filter((r) => r.status === 429);
  for (const r of limited) assertError(r, 429, 'rate_limit_error', 'rate_limited', null);
  const failed = answers.filter((r) => r.status !== 200 && r.status !== 429);
  t.diagnostic(`${answers.length} requests during the kill, ${limited.length} rate limited, ${failed.length} failed`);
  assert.ok(answers.length > 20, 'the load ran throughout');
  assert.ok(failed.length <= 1, `at most the in-flight request fails (got ${failed.map((r) => r.status)})`);
  for (const r of failed) assertError(r, 502, 'api_error', 'service_unavailable', null);

  // The new worker serves: enough requests that both workers take some.
  const after = await pool(Array.from({ length: 20 }, () => () => api('/v1/products?limit=1', { key })), 4);
  for (const r of after) assert.equal(r.status, 200);
  const replaced = workers();
  assert.equal(replaced.length, pids.length);
  const fresh = replaced.filter((p) => !pids.includes(p));
  assert.equal(fresh.length, 1, 'exactly one new worker');
  // The new worker is a working one: it connected to the database and serves requests.
  await waitFor(async () => {
    await pool(Array.from({ length: 8 }, () => () => api('/v1/products?limit=1', { key })), 4);
    return Number(psql(`SELECT count(*) FROM pg_stat_activity WHERE application_name = 'market-api'`)) === pids.length;
  }, { timeout: 5000, interval: 100, message: 'every worker, the new one included, to hold a database connection' });
});
