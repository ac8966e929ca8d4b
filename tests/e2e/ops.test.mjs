// Operations outside the API (docs/operations.md): /healthz and /metrics, answered by the
// workers only for the addresses nginx lets read them (tools/stack: 127.0.0.1), and the
// request log. The database-down half of /healthz (503) is in resilience.test.mjs, which
// stops PostgreSQL.
//
//   - /healthz: 200 {"status":"ok"}, no key, no rate count, GET and HEAD only;
//   - /metrics: the Prometheus text format, read strictly (fixtures/prometheus.mjs); the
//     request counters are the sum over every worker of the pool (exact deltas), they
//     survive a worker's death, rate-limit rejections are counted, and the outbox
//     figures are those of webhook_deliveries;
//   - from another address (127.0.0.2) both paths are unknown routes: 401, then 404;
//   - one log line per request with its id, route, status, duration and key prefix,
//     never the key.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { api, importDoc, newKey, psql, rawRequest, uniqueId, waitFor, API_PIDFILE, STACK_DIR } from './lib/stack.mjs';
import { assertError, JSON_TYPE, pool } from './fixtures/expect.mjs';
import { parsePrometheus, value } from './fixtures/prometheus.mjs';

const run = uniqueId('');
const account = `acct_ops_${run}`;
const seller = `ops-${run}`;
let key;

before(() => {
  importDoc({
    mode: 'test',
    accounts: [{ id: account, email: `${account}@example.com` }],
    sellers: [{ id: seller, account, name: 'Ops Shop' }],
  });
  key = newKey({ account, mode: 'test', access: 'read-only' });
});

async function scrape() {
  const res = await api('/metrics');
  assert.equal(res.status, 200, res.text.slice(0, 300));
  assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  return parsePrometheus(res.text);
}

const requests = (m, route, status) => value(m, 'market_http_requests_total', { route, status: String(status) }) ?? 0;

function workers() {
  const multiwatch = readFileSync(API_PIDFILE, 'utf8').trim();
  return execFileSync('ps', ['--ppid', multiwatch, '-o', 'pid='], { encoding: 'utf8' })
    .split('\n').map((s) => s.trim()).filter(Boolean);
}

/** A GET from 127.0.0.2: an address outside the stack's ops allow-list. */
const fromOutside = (path, headers = {}) => rawRequest(path, { headers, localAddress: '127.0.0.2' });

test('/healthz: 200 {"status":"ok"} as JSON, without a key, not rate counted', async () => {
  const res = await api('/healthz', { headers: { 'X-Request-Id': `hz-${run}` } });
  assert.equal(res.status, 200);
  assert.deepEqual(res.json, { status: 'ok' });
  assert.equal(res.headers.get('content-type'), JSON_TYPE);
  assert.equal(res.headers.get('x-request-id'), `hz-${run}`);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assert.equal(res.headers.get('x-ratelimit-limit'), null, 'no rate headers');

  // With a key it is the same answer, and the key's window does not move.
  const counted = () => Number(psql(`SELECT COALESCE(sum(count), 0) FROM rate_counters c
      JOIN api_keys k ON k.id = c.key_id WHERE k.account_id = '${account}'`));
  assert.equal((await api('/v1/products?limit=1', { key })).status, 200);
  const before = counted();
  for (let i = 0; i < 5; i++) {
    const r = await api('/healthz', { key });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('x-ratelimit-remaining'), null);
  }
  assert.equal(counted(), before, '/healthz does not count against the key');

  const head = await api('/healthz', { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.text, '');
});

test('/healthz and /metrics take GET and HEAD only: 405 with Allow', async () => {
  for (const path of ['/healthz', '/metrics']) {
    const res = await api(path, { method: 'POST', body: {} });
    assertError(res, 405, 'invalid_request_error', 'method_not_allowed', null);
    assert.equal(res.headers.get('allow'), 'GET, HEAD');
  }
});

test('the 405 of /healthz and /metrics is the route table\'s, as for every route: no key, not counted', async () => {
  const before = await scrape();
  for (const path of ['/healthz', '/metrics']) {
    for (const method of ['POST', 'DELETE', 'PUT']) {
      const res = await api(path, { method, key });
      const e = assertError(res, 405, 'invalid_request_error', 'method_not_allowed', null);
      assert.equal(res.headers.get('allow'), 'GET, HEAD', `${method} ${path}: Allow`);
      // The same words as the 405 of an API route (errors.test.mjs).
      assert.equal(e.message, `${method} is not allowed here; allowed: GET, HEAD`);
      assert.equal(res.headers.get('x-ratelimit-limit'), null, 'no key was checked');
    }
  }
  const after = await scrape();
  for (const status of [401, 404, 405]) {
    assert.equal(requests(after, 'none', status), requests(before, 'none', status), `no request counted as ${status}`);
  }
  assert.equal(value(after, 'market_http_requests_total', { route: 'healthz', status: '405' }), undefined);
  assert.equal(value(after, 'market_http_requests_total', { route: 'metrics', status: '405' }), undefined);
});

test('from an address outside the allow-list both paths are unknown routes: 401, then 404', async () => {
  for (const path of ['/healthz', '/metrics']) {
    const anon = await fromOutside(path);
    assertError(anon, 401, 'authentication_error', 'missing_api_key', null);
    const keyed = await fromOutside(path, { Authorization: `Bearer ${key}` });
    assertError(keyed, 404, 'invalid_request_error', 'route_not_found', null);
    assert.doesNotMatch(keyed.text, /market_|status":"ok/);
  }
  // A client cannot mark its own request: a MARKET_OPS header arrives as HTTP_MARKET_OPS.
  const forged = await fromOutside('/metrics', { Authorization: `Bearer ${key}`, 'Market-Ops': 'metrics' });
  assertError(forged, 404, 'invalid_request_error', 'route_not_found', null);
});

test('/metrics parses as the Prometheus text format and names what it must', async () => {
  const m = await scrape();
  for (const [name, type] of [
    ['market_build_info', 'gauge'], ['market_api_workers', 'gauge'],
    ['market_http_requests_total', 'counter'], ['market_http_request_duration_seconds', 'histogram'],
    ['market_db_reconnects_total', 'counter'], ['market_rate_limited_total', 'counter'],
    ['market_webhook_deliveries', 'gauge'], ['market_webhook_retry_backlog', 'gauge'],
    ['market_webhook_oldest_pending_age_seconds', 'gauge'], ['market_database_up', 'gauge'],
    ['market_retention_pruned_rows_total', 'counter'], ['market_retention_last_pass_timestamp_seconds', 'gauge'],
  ]) {
    assert.ok(m.has(name), `${name} is there`);
    assert.equal(m.get(name).type, type, `${name} is a ${type}`);
    assert.ok(m.get(name).help, `${name} has a HELP`);
  }
  assert.equal(value(m, 'market_database_up'), 1);
  assert.equal(value(m, 'market_api_workers'), workers().length, 'every live worker of the pool');
  const version = readFileSync(new URL('../../debian/changelog', import.meta.url), 'utf8').match(/\(([^)]+)\)/)[1];
  const info = m.get('market_build_info').samples[0];
  assert.equal(info.labels.version, version);
  // The reader is strict: a broken exposition is refused (a test that cannot fail proves nothing).
  assert.throws(() => parsePrometheus('a{b="c} 1\n'));
  assert.throws(() => parsePrometheus('# TYPE a counter\n# TYPE a counter\na 1\n'));
  assert.throws(() => parsePrometheus('a 1\nb 1\na 2\n'));
  assert.throws(() => parsePrometheus('# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 0\nh_count 1\n'));
  assert.throws(() => parsePrometheus('a one\n'));
  assert.throws(() => parsePrometheus('a 1'));
});

test('request counters are summed over every worker, exactly, with their latency', async () => {
  assert.ok(workers().length >= 2, 'a pool of two workers or more');
  const before = await scrape();
  const N = 60;
  // Concurrent, so that every worker of the pool serves some of them.
  const results = await pool(Array.from({ length: N }, () => () => api('/v1/products?limit=1', { key })), 6);
  for (const r of results) assert.equal(r.status, 200);
  await api(`/v1/sellers/${seller}`, { key });
  await api('/v1/nope', { key });
  const after = await scrape();
  assert.equal(requests(after, 'products_list', 200) - requests(before, 'products_list', 200), N);
  assert.equal(requests(after, 'seller_get', 200) - requests(before, 'seller_get', 200), 1);
  assert.equal(requests(after, 'none', 404) - requests(before, 'none', 404), 1);
  const count = (m) => value(m, 'market_http_request_duration_seconds_count', { route: 'products_list' }) ?? 0;
  assert.equal(count(after) - count(before), N, 'one latency observation per request');
  const sum = value(after, 'market_http_request_duration_seconds_sum', { route: 'products_list' });
  assert.ok(sum > 0 && sum < count(after) * 5, `a plausible latency sum: ${sum}`);
  // The scrapes themselves are not API requests.
  assert.equal(requests(after, 'none', 200), requests(before, 'none', 200));
});

test('a worker killed: its replacement goes on counting, the sums never go down', async () => {
  const N = 20;
  await pool(Array.from({ length: N }, () => () => api('/v1/products?limit=2', { key })), 4);
  const before = await scrape();
  const pids = workers();
  process.kill(Number(pids[0]), 'SIGKILL');
  await waitFor(() => {
    const now = workers();
    return now.length === pids.length && !now.includes(pids[0]);
  }, { timeout: 10000, message: 'multiwatch to replace the worker' });
  await pool(Array.from({ length: N }, () => () => api('/v1/products?limit=2', { key })), 4);
  const after = await waitFor(async () => {
    const m = await scrape();
    return value(m, 'market_api_workers') === pids.length ? m : null;
  }, { timeout: 5000, message: 'the replacement to be counted as live' });
  const total = (m) => [...m.get('market_http_requests_total').samples].reduce((a, s) => a + s.value, 0);
  assert.ok(total(after) >= total(before) + N, `${total(after)} >= ${total(before)} + ${N}`);
  assert.ok(requests(after, 'products_list', 200) >= requests(before, 'products_list', 200) + N);
});

test('rate-limit rejections are counted', async () => {
  const burstKey = newKey({ account, mode: 'test', access: 'read-only' });
  const before = await scrape();
  const results = await pool(Array.from({ length: 610 }, () => () => api('/v1/products?limit=1', { key: burstKey })), 8);
  const limited = results.filter((r) => r.status === 429).length;
  assert.ok(limited >= 10, `some 429s: ${limited}`);
  const after = await scrape();
  assert.equal(value(after, 'market_rate_limited_total') - value(before, 'market_rate_limited_total'), limited);
  assert.equal(requests(after, 'products_list', 429) - requests(before, 'products_list', 429), limited);
});

test('the outbox figures are those of webhook_deliveries', async () => {
  // The drainer may change them at any moment: compare with counts read just before and
  // just after a scrape that agree with each other.
  const counts = () => psql(`SELECT count(*) FILTER (WHERE status = 'pending'),
      count(*) FILTER (WHERE status = 'delivered'), count(*) FILTER (WHERE status = 'failed'),
      count(*) FILTER (WHERE status = 'pending' AND attempts > 0),
      count(*) FILTER (WHERE status = 'endpoint_deleted') FROM webhook_deliveries`);
  await waitFor(async () => {
    const first = counts();
    const m = await scrape();
    if (counts() !== first) return false;
    const [pending, delivered, failed, retrying, ended] = first.split('|').map(Number);
    assert.equal(value(m, 'market_webhook_deliveries', { status: 'pending' }), pending);
    assert.equal(value(m, 'market_webhook_deliveries', { status: 'delivered' }), delivered);
    assert.equal(value(m, 'market_webhook_deliveries', { status: 'failed' }), failed);
    assert.equal(value(m, 'market_webhook_deliveries', { status: 'endpoint_deleted' }), ended);
    assert.equal(value(m, 'market_webhook_retry_backlog'), retrying);
    const age = value(m, 'market_webhook_oldest_pending_age_seconds');
    assert.ok(pending > 0 ? age >= 0 : age === 0, `oldest pending age ${age} with ${pending} pending`);
    return true;
  }, { timeout: 10000, message: 'a quiet moment of the outbox' });
});

test('one log line per request: id, method, route, status, duration, key prefix; never the key', async () => {
  const rid = `log-${run}`;
  await api('/v1/products?limit=1', { key, headers: { 'X-Request-Id': rid } });
  await api('/v1/nope', { headers: { 'X-Request-Id': `${rid}-anon`, Authorization: 'Bearer not-a-key' } });
  await api('/healthz', { headers: { 'X-Request-Id': `${rid}-health` } });
  const logFile = `${STACK_DIR}/log/api.log`;
  const line = await waitFor(() => readFileSync(logFile, 'utf8').split('\n').find((l) => l.includes(`id=${rid} `)),
    { timeout: 5000, message: 'the request line in the log' });
  assert.match(line, new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ market-api\\[\\d+\\] info: request id=${rid} `
    + `method=GET route=products_list status=200 duration_ms=\\d+\\.\\d{3} key=${key.slice(0, 12)}$`));
  const log = readFileSync(logFile, 'utf8');
  assert.ok(!log.includes(key), 'the key itself is never logged');
  assert.ok(!log.includes(key.slice(0, 16)), 'nor more of it than its prefix');
  const anon = log.split('\n').find((l) => l.includes(`id=${rid}-anon `));
  assert.match(anon ?? '', / route=none status=401 duration_ms=[\d.]+ key=-$/);
  assert.ok(!log.includes(`id=${rid}-health `), '/healthz is not an API request: not logged');
  // Every line is one event: none holds a control character.
  for (const l of log.split('\n')) assert.doesNotMatch(l, /[\u0000-\u0008\u000b-\u001f\u007f]/);
});
