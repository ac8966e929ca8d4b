// Smoke tests of the stack itself: what nginx answers on the API's server, that it hands
// every request to the FastCGI workers without redirecting, and that a worker that dies
// is replaced (docs/contract.md sections 1 and 10).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { api, importDoc, newKey, uniqueId, waitFor, API_PIDFILE } from './lib/stack.mjs';

const JSON_TYPE = 'application/json; charset=utf-8';
let key;

before(() => {
  const account = uniqueId('acct_e2e_smoke_');
  importDoc({ mode: 'test', accounts: [{ id: account, email: `${account}@example.com` }] });
  key = newKey({ account, mode: 'test', access: 'read-write' });
});

// Every answer of the API's server, nginx's own included, is the JSON error envelope.
function assertJsonError(res, status, code) {
  assert.equal(res.status, status, `status (body: ${res.text.slice(0, 300)})`);
  assert.equal(res.headers.get('content-type'), JSON_TYPE);
  assert.ok(!/<html/i.test(res.text), 'no HTML page');
  assert.ok(res.json && typeof res.json.error === 'object', `JSON error envelope: ${res.text.slice(0, 300)}`);
  assert.equal(typeof res.json.error.type, 'string');
  assert.equal(typeof res.json.error.message, 'string');
  if (code) assert.equal(res.json.error.code, code);
  const id = res.headers.get('x-request-id');
  assert.match(id ?? '', /^[A-Za-z0-9._-]{1,64}$/, 'X-Request-Id');
  assert.equal(res.json.error.request_id, id, 'request_id is the X-Request-Id');
}

test('a request line over 20 KiB gets a JSON 414 from nginx, not an HTML page', async () => {
  const res = await api(`/v1/products?q=${'a'.repeat(21 * 1024)}`, { key });
  assertJsonError(res, 414, 'parameter_invalid');
  assert.equal(res.json.error.type, 'invalid_request_error');
  assert.equal(res.headers.get('cache-control'), 'no-store');
});

test('a request line of exactly 16 KiB reaches the worker, which answers its own 400', async () => {
  // "GET " + path + " HTTP/1.1" is 16384 bytes: the contract's limit must still pass.
  const prefix = '/v1/products?q=';
  const path = prefix + 'a'.repeat(16 * 1024 - 'GET  HTTP/1.1'.length - prefix.length);
  assert.equal(`GET ${path} HTTP/1.1`.length, 16 * 1024);
  const res = await api(path, { key });
  assertJsonError(res, 400, 'parameter_invalid');
  assert.equal(res.json.error.param, 'q');
});

test('nginx echoes a valid client X-Request-Id in its own errors', async () => {
  // (Not for a 414: nginx refuses such a request before it reads any header.)
  const res = await api('/v1/downloads/dl_smoke/link', {
    key, method: 'POST', body: JSON.stringify({ padding: 'x'.repeat(70 * 1024) }),
    headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'smoke-test.1' },
  });
  assertJsonError(res, 413, 'body_too_large');
  assert.equal(res.headers.get('x-request-id'), 'smoke-test.1');

  const bad = await api('/v1/downloads/dl_smoke/link', {
    key, method: 'POST', body: JSON.stringify({ padding: 'x'.repeat(70 * 1024) }),
    headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'not valid!' },
  });
  assertJsonError(bad, 413, 'body_too_large');
  assert.notEqual(bad.headers.get('x-request-id'), 'not valid!');
});

test('a body over 64 KiB gets a JSON 413 from nginx', async () => {
  const res = await api('/v1/downloads/dl_smoke/link', {
    key, method: 'POST', body: JSON.stringify({ padding: 'x'.repeat(70 * 1024) }),
    headers: { 'Content-Type': 'application/json' },
  });
  assertJsonError(res, 413, 'body_too_large');
});

test('a body between 16 and 64 KiB gets the worker\'s JSON 413', async () => {
  const res = await api('/v1/downloads/dl_smoke/link', {
    key, method: 'POST', body: JSON.stringify({ padding: 'x'.repeat(20 * 1024) }),
    headers: { 'Content-Type': 'application/json' },
  });
  assertJsonError(res, 413, 'body_too_large');
});

test('a missing route is a JSON 404 route_not_found', async () => {
  for (const path of ['/nope', '/', '/v2/products', '/v1/nope']) {
    const res = await api(path, { key });
    assertJsonError(res, 404, 'route_not_found');
  }
});

test('/v1 is answered, not redirected to /v1/', async () => {
  for (const path of ['/v1', '/v1/']) {
    const res = await api(path, { key });
    assert.ok(res.status < 300 || res.status >= 400, `${path}: no redirect (got ${res.status})`);
    assert.equal(res.headers.get('location'), null, `${path}: no Location header`);
    assertJsonError(res, 404, 'route_not_found');
  }
});

test('the internal files location cannot be requested directly', async () => {
  const res = await api('/_market_files/anything.zip', { key });
  assertJsonError(res, 404, 'route_not_found');
});

test('a FastCGI worker that dies is replaced and the API keeps answering', async () => {
  const multiwatch = readFileSync(API_PIDFILE, 'utf8').trim();
  const workers = () => {
    try {
      return execFileSync('ps', ['--ppid', multiwatch, '-o', 'pid='], { encoding: 'utf8' })
        .split('\n').map((s) => s.trim()).filter(Boolean);
    } catch {
      return []; // ps exits 1 when there is none (for a moment, with a single worker)
    }
  };
  const before = workers();
  assert.ok(before.length >= 1, 'the pool has workers');
  process.kill(Number(before[0]), 'SIGKILL');
  await waitFor(() => {
    const now = workers();
    return now.length === before.length && !now.includes(before[0]);
  }, { timeout: 10000, message: 'multiwatch to replace the killed worker' });
  for (let i = 0; i < 2 * before.length; i++) {
    const res = await api('/v1/products?limit=1', { key });
    assert.equal(res.status, 200, `request ${i} after the restart: ${res.text.slice(0, 200)}`);
  }
});
