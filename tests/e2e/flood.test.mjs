// One address cannot starve the rest (issue 21, item 4), through the stack's nginx
// (nginx/*.template as tools/stack renders them):
//
//   - 8,000 idle connections from 127.0.0.1 that sent half a request header, and never
//     the rest: a client from 127.0.0.2 is served as before (every request 200, none slow),
//     nginx never runs out of connections, and it drops the idle ones by itself
//     (client_header_timeout, 10 s, reset_timedout_connection);
//   - requests in progress per address (limit_conn): with as many requests from 127.0.0.1
//     held in progress as the limit allows (bodies that never come), the next one from
//     127.0.0.1 is answered at once with the API's JSON 429 and Retry-After: 1, while
//     127.0.0.2 is served; once they are gone, 127.0.0.1 is served again;
//   - the request rate per address (limit_req), on a stack of its own with a rate of 1 a
//     second, a burst of 2 and MARKET_RATE_LIMIT=777: the fourth request at once is that
//     429 too, on /v1, on the files location and on /docs/ alike;
//   - nginx's 429 carries every header docs/openapi.json marks required on a 429 (issue 34,
//     item 7), with nginx's values: Retry-After: 1, X-RateLimit-Limit: the keys' limit
//     (MARKET_RATE_LIMIT), X-RateLimit-Remaining: 0, X-RateLimit-Reset: 1,
//     Cache-Control: no-store, X-Request-Id and the JSON content type.
//
// Linux routes all of 127.0.0.0/8 to the loopback interface, so a socket bound to
// 127.0.0.2 is another client address for nginx. Every socket a test opens is closed by
// it (reset) before it ends, whatever happens.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { holdRequests, newAccount, newKey, rawRequest, startStack, BASE_URL, STACK_DIR } from './lib/stack.mjs';
import { assertError, sleep } from './fixtures/expect.mjs';

const IDLE = Number(process.env.E2E_FLOOD_CONNECTIONS ?? 8000);
const url = new URL(BASE_URL);
let account;
let key;

before(() => {
  account = newAccount('acct_flood_');
  key = newKey({ account, mode: 'test', access: 'read-only' });
});

/** One request on a fresh connection from `localAddress`: {status, headers, text, json, ms}. */
const requestFrom = (localAddress, path, { headers = {}, method = 'GET' } = {}) =>
  rawRequest(path, { key, method, headers, localAddress });

const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

async function victim(n) {
  const ms = [];
  for (let i = 0; i < n; i++) {
    const res = await requestFrom('127.0.0.2', '/v1/products?limit=1');
    assert.equal(res.status, 200, `victim request ${i}: ${res.text.slice(0, 200)}`);
    ms.push(res.ms);
  }
  return { p50: quantile(ms, 0.5), max: Math.max(...ms) };
}

/** A number from the rendered nginx configuration of the stack. */
function nginxSetting(file, re) {
  const m = re.exec(readFileSync(`${STACK_DIR}/nginx/${file}`, 'utf8'));
  assert.ok(m, `${re} in ${file}`);
  return Number(m[1]);
}

// What docs/openapi.json promises for a 429: the headers of components/responses/RateLimited.
const DOC = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'));
function resolveRef(node) {
  let n = node;
  while (n && typeof n.$ref === 'string') {
    n = n.$ref.slice(2).split('/').reduce((o, part) => o?.[part.replaceAll('~1', '/').replaceAll('~0', '~')], DOC);
    assert.ok(n, `${node.$ref} resolves in docs/openapi.json`);
  }
  return n;
}
const DOCUMENTED_429 = Object.entries(resolveRef(DOC.components.responses.RateLimited).headers)
  .map(([name, h]) => [name, resolveRef(h)]);

/**
 * nginx's own 429 (over a per-address limit): the API's envelope rate_limit_error /
 * rate_limited, every header the document marks required on a 429, each within its
 * documented schema, and nginx's values: Retry-After 1, X-RateLimit-Limit `limit` (the keys'
 * MARKET_RATE_LIMIT), Remaining 0, Reset 1. `requestId`: the X-Request-Id the client sent.
 */
function assertNginx429(res, { limit, requestId }) {
  assertError(res, 429, 'rate_limit_error', 'rate_limited', null);
  assert.match(res.json.error.message, /this address/, 'the message says it is the address, not a key');
  const required = DOCUMENTED_429.filter(([, h]) => h.required).map(([name]) => name);
  for (const name of ['X-Request-Id', 'Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) {
    assert.ok(required.includes(name), `docs/openapi.json marks ${name} required on a 429`);
  }
  for (const [name, h] of DOCUMENTED_429) {
    const value = res.headers.get(name);
    if (!h.required && value === null) continue;
    assert.notEqual(value, null, `nginx's 429 has ${name}, which docs/openapi.json marks required`);
    const schema = h.schema ?? {};
    if (schema.type === 'integer') {
      assert.match(value, /^\d+$/, `${name}: ${value} is an integer`);
      if (schema.minimum !== undefined) assert.ok(Number(value) >= schema.minimum, `${name}: ${value} >= ${schema.minimum}`);
      if (schema.maximum !== undefined) assert.ok(Number(value) <= schema.maximum, `${name}: ${value} <= ${schema.maximum}`);
    }
    if (schema.const !== undefined) assert.equal(value, schema.const, name);
    if (schema.pattern !== undefined) assert.match(value, new RegExp(schema.pattern), name);
  }
  assert.equal(res.headers.get('retry-after'), '1', 'Retry-After');
  assert.equal(res.headers.get('x-ratelimit-limit'), String(limit), 'X-RateLimit-Limit: the keys\' limit');
  assert.equal(res.headers.get('x-ratelimit-remaining'), '0', 'X-RateLimit-Remaining');
  assert.equal(res.headers.get('x-ratelimit-reset'), '1', 'X-RateLimit-Reset');
  assert.equal(res.headers.get('cache-control'), 'no-store', 'Cache-Control');
  if (requestId !== undefined) assert.equal(res.headers.get('x-request-id'), requestId, 'the client\'s X-Request-Id');
  const codes = resolveRef(DOC.components.schemas.Error429).properties.error.properties.code.enum;
  assert.ok(codes.includes('rate_limited'), 'rate_limited is a documented 429 code');
}

// The keys' limit of this run's stack, which its nginx names on its own 429.
const KEY_LIMIT = Number(process.env.MARKET_RATE_LIMIT || 600);

function openFilesLimit() {
  const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  return m ? Number(m[1]) : Infinity;
}

test(`${IDLE} idle half-sent connections from 127.0.0.1 leave 127.0.0.2 unharmed, and are dropped by nginx`, async (t) => {
  const perWorker = nginxSetting('nginx.conf', /^\s*worker_connections (\d+);/m);
  const errorLogBefore = readFileSync(`${STACK_DIR}/log/nginx-error.log`, 'utf8').length;
  // This process's own limit of open files bounds what it can hold.
  const n = Math.min(IDLE, openFilesLimit() - 256);
  if (n < IDLE) t.diagnostic(`only ${n} connections: this process may open ${openFilesLimit()} files`);
  assert.ok(perWorker >= n + 256, `worker_connections ${perWorker} leaves room beside ${n} idle connections in one worker`);

  const quiet = await victim(20);
  const started = Date.now();
  // A request line and one header, never the blank line that ends the headers.
  const idle = await holdRequests(n, `GET /v1/products HTTP/1.1\r\nHost: ${url.host}\r\n`, { batch: 500 });
  const socks = [...idle.sockets];
  try {
    const opened = Date.now() - started;
    assert.equal(socks.filter((s) => s.closedAt !== null).length, 0, 'nginx took every connection');
    const flooded = await victim(40);
    const msg = `${n} idle connections from 127.0.0.1 (opened in ${opened} ms): 127.0.0.2 p50 ${quiet.p50.toFixed(1)} ms / max ${quiet.max.toFixed(1)} ms quiet, `
      + `p50 ${flooded.p50.toFixed(1)} ms / max ${flooded.max.toFixed(1)} ms flooded`;
    t.diagnostic(msg);
    console.log(`flood: ${msg}`);
    assert.ok(flooded.max < 1000, `no victim request over 1 s (max ${flooded.max.toFixed(1)} ms)`);
    assert.ok(flooded.p50 < Math.max(10 * quiet.p50, 50), `victim p50 ${flooded.p50.toFixed(1)} ms against ${quiet.p50.toFixed(1)} ms quiet`);

    // nginx drops them 10 s after they connected (client_header_timeout), every one.
    const deadline = started + 20000;
    while (socks.some((s) => s.closedAt === null) && Date.now() < deadline) await sleep(200);
    const open = socks.filter((s) => s.closedAt === null).length;
    const last = Math.max(...socks.map((s) => s.closedAt ?? Date.now())) - started;
    t.diagnostic(`nginx dropped the idle connections ${last} ms after the first was opened (${open} still open)`);
    assert.equal(open, 0, 'nginx dropped every idle connection within 20 s');
    assert.ok(Math.min(...socks.map((s) => s.closedAt)) - started >= 9000, 'not before client_header_timeout (10 s)');
  } finally {
    idle.release();
  }
  const errors = readFileSync(`${STACK_DIR}/log/nginx-error.log`, 'utf8').slice(errorLogBefore);
  assert.doesNotMatch(errors, /worker_connections are not enough|Too many open files/, 'nginx never ran out of connections');
  assert.equal((await requestFrom('127.0.0.1', '/v1/products?limit=1')).status, 200, '127.0.0.1 is served again');
});

test('requests in progress per address: over limit_conn the next one is a JSON 429; another address is served', async (t) => {
  const limit = nginxSetting('market-server.conf', /^\s*limit_conn market_conn_per_addr (\d+);/m);
  // Complete headers of a POST whose body never comes: nginx counts the request from its
  // headers on, and holds it until client_body_timeout, without bothering a worker.
  const head = `POST /v1/webhooks HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`;
  const held = await holdRequests(limit, head, { localAddress: '127.0.0.1' });
  try {
    let res;
    for (let i = 0; i < 20; i++) {
      await held.topUp();
      res = await requestFrom('127.0.0.1', '/v1/products?limit=1');
      if (res.status === 429) break;
      await sleep(100); // nginx may not have read every held request's headers yet
    }
    assertNginx429(res, { limit: KEY_LIMIT });
    const tagged = await requestFrom('127.0.0.1', '/v1/products?limit=1', { headers: { 'X-Request-Id': 'flood-conn-1' } });
    assertNginx429(tagged, { limit: KEY_LIMIT, requestId: 'flood-conn-1' });
    assert.ok(res.ms < 500, `answered at once (${res.ms.toFixed(1)} ms)`);
    const other = await requestFrom('127.0.0.2', '/v1/products?limit=1');
    assert.equal(other.status, 200, `127.0.0.2 is served: ${other.text.slice(0, 200)}`);
    t.diagnostic(`${limit} requests held from 127.0.0.1: the next one 429 in ${res.ms.toFixed(1)} ms, 127.0.0.2 200 in ${other.ms.toFixed(1)} ms`);
  } finally {
    held.release();
  }
  let again;
  for (let i = 0; i < 20; i++) {
    again = await requestFrom('127.0.0.1', '/v1/products?limit=1');
    if (again.status === 200) break;
    await sleep(100);
  }
  assert.equal(again.status, 200, 'once they are gone, 127.0.0.1 is served again');
});

test('request rate per address: over limit_req nginx answers the same 429, on /v1, the files location and /docs/', async (t) => {
  // A stack of its own: 1 request a second per address, a burst of 2, and a key limit
  // other than the default, which its nginx's 429 names.
  const other = await startStack({
    settings: { STACK_NGINX_REQ_PER_ADDR: '1', STACK_NGINX_REQ_BURST: '2', MARKET_RATE_LIMIT: '777' },
  });
  try {
    const at = (path) => new URL(path, other.base).href;
    const from = (address, path, id) => rawRequest(at(path), { localAddress: address, headers: id ? { 'X-Request-Id': id } : {} });
    // Requests one after the other from 127.0.0.3: 3 pass (the burst of 2 and the one the
    // rate allows), the API answering them itself (401, no key); the next ones are nginx's.
    const codes = [];
    let limited;
    for (let i = 0; i < 8 && !limited; i++) {
      const res = await from('127.0.0.3', '/v1/products?limit=1', `flood-req-${i}`);
      codes.push(res.status);
      if (res.status === 429) limited = { res, id: `flood-req-${i}` };
      else assert.equal(res.status, 401, `request ${i} passes nginx and meets the API: ${res.text.slice(0, 200)}`);
    }
    t.diagnostic(`from 127.0.0.3, one after the other: ${codes.join(' ')}`);
    assert.ok(limited, `a 429 within 8 requests (${codes.join(' ')})`);
    assert.ok(codes.length >= 4, `the burst passed first (${codes.join(' ')})`);
    assertNginx429(limited.res, { limit: 777, requestId: limited.id });
    // Still over: the files location and the API reference answer the same JSON 429.
    assertNginx429(await from('127.0.0.3', '/files/dl_none', 'flood-req-files'), { limit: 777, requestId: 'flood-req-files' });
    const docs = await from('127.0.0.3', '/docs/');
    assertNginx429(docs, { limit: 777 });
    // Another address is served.
    assert.equal((await from('127.0.0.4', '/v1/products?limit=1')).status, 401, '127.0.0.4 meets the API');
    // A second later the bucket has leaked one request: 127.0.0.3 meets the API again.
    await sleep(1100);
    assert.equal((await from('127.0.0.3', '/v1/products?limit=1')).status, 401, '127.0.0.3 meets the API again');
  } finally {
    other.down();
  }
});
