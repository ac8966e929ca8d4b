// Authentication, scopes and the order of checks (docs/contract.md section 2), and key rotation
// and revocation through market-admin: 401 missing_api_key / invalid_api_key /
// api_key_expired with WWW-Authenticate, 403 insufficient_scope naming the scope, and
// 401 -> 404/405 -> 403 -> 400 in that order (the 429 step is in ratelimit.test.mjs).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { api, admin, adminResult, importDoc, newKey, psql, uniqueId, BASE_URL } from './lib/stack.mjs';
import { assertError, assertInvalid, assertList, assertRateHeaders, rawRequest } from './fixtures/expect.mjs';

const run = uniqueId('');
const account = `acct_auth_${run}`;
const seller = `auth-${run}`;
const product = `prod_auth_${run}`;
let readOnly;
let readWrite;

before(() => {
  importDoc({
    mode: 'test',
    accounts: [{ id: account, email: `${account}@example.com` }],
    sellers: [{ id: seller, account, name: 'Auth Shop' }],
    products: [{
      id: product, seller, title: 'Key Ring', description: 'keys', category: `auth-${run}`,
      currency: 'USD', status: 'published',
      tiers: [{ id: `tier_auth_${run}`, name: 'Personal', price: 1, licence: {} }],
    }],
  });
  readOnly = newKey({ account, mode: 'test', access: 'read-only' });
  readWrite = newKey({ account, mode: 'test', access: 'read-write' });
});

const REALM = 'Bearer realm="market"';
const REALM_INVALID = 'Bearer realm="market", error="invalid_token"';

function assert401(res, code, presented) {
  assertError(res, 401, 'authentication_error', code, null);
  assert.equal(res.headers.get?.('www-authenticate') ?? res.headers['www-authenticate'],
    presented ? REALM_INVALID : REALM, 'WWW-Authenticate');
  const remaining = res.headers.get?.('x-ratelimit-remaining') ?? res.headers['x-ratelimit-remaining'];
  assert.equal(remaining ?? null, null, 'no rate-limit headers before the key is known');
}

/** The hash under which the database keeps a key. */
const keyRow = (key) => `key_hash = sha256(convert_to('${key}', 'UTF8'))`;

test('keys look as the contract says: sk_test_ + at least 32 of [A-Za-z0-9]; only a hash is stored', () => {
  assert.match(readOnly, /^sk_test_[A-Za-z0-9]{32,}$/);
  const live = newKey({ account, mode: 'live', access: 'read-only' });
  assert.match(live, /^sk_live_[A-Za-z0-9]{32,}$/);
  assert.equal(psql(`SELECT count(*) FROM api_keys WHERE ${keyRow(readOnly)}`), '1');
  assert.equal(psql(`SELECT mode || ' ' || access FROM api_keys WHERE ${keyRow(live)}`), 'live read-only');
  // No column of any row holds the key in clear.
  assert.equal(psql(`SELECT count(*) FROM api_keys k WHERE strpos(k::text, '${readOnly.slice(12)}') > 0`), '0');
});

test('no Authorization header: 401 missing_api_key, WWW-Authenticate without error', async () => {
  for (const path of ['/v1/products', `/v1/products/${product}`, `/v1/sellers/${seller}`, '/v1/nope', '/']) {
    assert401(await api(path), 'missing_api_key', false);
  }
  // 401 comes before 405 and before 400.
  assert401(await api('/v1/products', { method: 'DELETE' }), 'missing_api_key', false);
  assert401(await api('/v1/products?limit=0&bogus=1'), 'missing_api_key', false);
  assert401(await api('/v1/webhooks', { method: 'POST', body: 'not json' }), 'missing_api_key', false);
});

test('another scheme, an empty or malformed key: 401 invalid_api_key with error="invalid_token"', async () => {
  const headers = [
    `Basic ${Buffer.from(`${readOnly}:`).toString('base64')}`,
    `Token ${readOnly}`,
    readOnly, // no scheme at all
    'Bearer',
    'Bearer sk_test_short',
    `Bearer sk_prod_${'a'.repeat(40)}`,
    `Bearer sk_test_${'a'.repeat(31)}`,
    `Bearer ${readOnly.replace('sk_test_', 'sk_live_')}`, // the right secret, the wrong mode
    `Bearer ${readOnly}!`,
    `Bearer ${readOnly.slice(0, -1)}`,
    `Bearer ${readOnly}x`,
    `Bearer ${readOnly.toUpperCase()}`,
    `Bearer sk_test_${'a'.repeat(40)}`, // well formed, unknown
    `Bearer sk_test_${'b'.repeat(5000)}`,
    `Bearer ${readOnly} ${readOnly}`,
  ];
  for (const authorization of headers) {
    const res = await api('/v1/products', { headers: { Authorization: authorization } });
    assert401(res, 'invalid_api_key', true);
    assert.ok(!res.text.includes(readOnly.slice(8)), 'the key is never echoed');
  }
  // An empty header value and non-ASCII bytes, sent as they are.
  for (const value of [Buffer.alloc(0), Buffer.from('Bearer sk_test_\xff\xfe', 'latin1'), Buffer.from(`Bearer ${readOnly.slice(0, 20)}é${'a'.repeat(30)}`)]) {
    const res = await rawRequest(BASE_URL, Buffer.concat([Buffer.from('GET /v1/products HTTP/1.1\r\nAuthorization: '), value]));
    assert.equal(res.status, 401, res.text.slice(0, 200));
    assert.ok(['missing_api_key', 'invalid_api_key'].includes(res.json.error.code));
    if (value.length > 0) assert.equal(res.json.error.code, 'invalid_api_key');
  }
});

test('the scheme name is case-insensitive (RFC 7235)', async () => {
  for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
    const res = await api('/v1/products?limit=1', { headers: { Authorization: `${scheme} ${readOnly}` } });
    assertList(res);
  }
});

test('scope matrix: read-only reads products and orders, cannot POST; read-write passes the scope check', async () => {
  for (const key of [readOnly, readWrite]) {
    assertList(await api('/v1/products?limit=1', { key }));
    assert.equal((await api(`/v1/products/${product}`, { key })).status, 200);
    assert.equal((await api(`/v1/sellers/${seller}`, { key })).status, 200);
    // orders:read is in both access levels: never a 403 (the orders route answers 200).
    const orders = await api('/v1/orders', { key });
    assert.equal(orders.status, 200, `GET /v1/orders: ${orders.text.slice(0, 200)}`);
    assertRateHeaders(orders);
  }
  for (const [path, scope] of [['/v1/webhooks', 'webhooks:write'], ['/v1/downloads/dl_nothing/link', 'downloads:write']]) {
    const denied = await api(path, { key: readOnly, method: 'POST', body: {} });
    const e = assertError(denied, 403, 'permission_error', 'insufficient_scope', null);
    assert.ok(e.message.includes(scope), `the 403 names ${scope}: ${e.message}`);
    assertRateHeaders(denied);
    // The read-write key gets past the scope check to the handler: an unknown download is
    // 404 resource_missing; a subscription without a url is 400 parameter_missing.
    const allowed = await api(path, { key: readWrite, method: 'POST', body: {} });
    if (path.startsWith('/v1/downloads')) {
      assertError(allowed, 404, 'invalid_request_error', 'resource_missing', 'id');
    } else {
      assertError(allowed, 400, 'invalid_request_error', 'parameter_missing', 'url');
    }
  }
  // webhooks:read (contract section 13): read-write keys only.
  for (const path of ['/v1/webhooks', '/v1/webhooks/we_nothing']) {
    const denied = await api(path, { key: readOnly });
    const e = assertError(denied, 403, 'permission_error', 'insufficient_scope', null);
    assert.ok(e.message.includes('webhooks:read'), `the 403 names webhooks:read: ${e.message}`);
  }
  assert.equal((await api('/v1/webhooks', { key: readWrite })).status, 200);
  assertError(await api('/v1/webhooks/we_nothing', { key: readWrite }), 404, 'invalid_request_error', 'resource_missing', 'id');
});

test('order of checks: 404/405 before 403 before 400', async () => {
  // 403 before 400: a read-only key with an invalid body, content type, query and id.
  const badInput = [
    ['/v1/webhooks?bogus=1', { body: '{not json', headers: { 'Content-Type': 'text/plain' } }, 'webhooks:write'],
    ['/v1/webhooks', { body: 'x'.repeat(20 * 1024), headers: { 'Content-Type': 'application/json' } }, 'webhooks:write'],
    ['/v1/webhooks', { body: { url: 'http://insecure.example', events: ['nope'] } }, 'webhooks:write'],
    ['/v1/downloads/%C3%28/link?x=1', { body: { expires_in: -5 } }, 'downloads:write'],
    ['/v1/downloads/dl_x/link', { body: '[]', headers: { 'Content-Type': 'application/json' } }, 'downloads:write'],
  ];
  for (const [path, opts, scope] of badInput) {
    const res = await api(path, { key: readOnly, method: 'POST', ...opts });
    const e = assertError(res, 403, 'permission_error', 'insufficient_scope', null);
    assert.ok(e.message.includes(scope));
  }
  // 404 before 403: an unknown path with a method the key may not use.
  assertError(await api('/v1/webhooks/we_1/nope', { key: readOnly, method: 'POST', body: {} }),
    404, 'invalid_request_error', 'route_not_found', null);
  assertError(await api('/v1/downloads/dl_x', { key: readOnly, method: 'POST', body: {} }),
    404, 'invalid_request_error', 'route_not_found', null);
  // 405 before 403 and 400.
  const res = await api('/v1/webhooks?bogus=1', { key: readOnly, method: 'DELETE' });
  assertError(res, 405, 'invalid_request_error', 'method_not_allowed', null);
  assert.equal(res.headers.get('allow'), 'GET, POST');
  // And with a key that has the scope, the same bad input reaches the handler's 4xx.
  const rw = await api('/v1/downloads/dl_x/link?bogus=1', { key: readWrite, method: 'POST' });
  assertInvalid(rw, 'parameter_unknown', 'bogus');
  const rwBody = await api('/v1/downloads/dl_x/link', { key: readWrite, method: 'POST', body: '{not json', headers: { 'Content-Type': 'application/json' } });
  assertInvalid(rwBody, 'body_invalid_json');
  // 401 before everything: a wrong key on an unknown path with a bad method.
  assert401(await api('/v1/nope?x=%zz', { method: 'PATCH', headers: { Authorization: 'Bearer sk_test_nope' } }), 'invalid_api_key', true);
});

test('rotation: both keys work, the old one expires 24 h later (then 401 api_key_expired)', async () => {
  const old = newKey({ account, mode: 'test', access: 'read-only' });
  assertList(await api('/v1/products?limit=1', { key: old }));
  const fresh = admin(['key', 'rotate', old]).trim();
  assert.match(fresh, /^sk_test_[A-Za-z0-9]{32,}$/);
  assert.notEqual(fresh, old);

  // The old key expires about 24 h from now; the new one does not expire.
  const [seconds, freshExpiry] = psql(`
    SELECT round(extract(epoch FROM expires_at - now())) FROM api_keys WHERE ${keyRow(old)};
    SELECT coalesce(expires_at::text, 'null') FROM api_keys WHERE ${keyRow(fresh)};`).split('\n');
  assert.ok(Math.abs(Number(seconds) - 86400) <= 60, `the old key expires in ${seconds} s, not ~86400`);
  assert.equal(freshExpiry, 'null');
  // Same account, mode and access.
  assert.equal(psql(`SELECT account_id || ' ' || mode || ' ' || access FROM api_keys WHERE ${keyRow(fresh)}`),
    `${account} test read-only`);

  // Within the grace period both keys work, on every route.
  for (const key of [old, fresh]) {
    assertList(await api('/v1/products?limit=1', { key }));
    assert.equal((await api(`/v1/products/${product}`, { key })).status, 200);
    assert.equal((await api(`/v1/sellers/${seller}`, { key })).status, 200);
  }
  // The new key keeps the old key's access: read-only stays read-only.
  assertError(await api('/v1/webhooks', { key: fresh, method: 'POST', body: {} }), 403, 'permission_error', 'insufficient_scope', null);

  // 24 hours pass.
  psql(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE ${keyRow(old)}`);
  for (const path of ['/v1/products', `/v1/products/${product}`, `/v1/sellers/${seller}`, '/v1/nope']) {
    const res = await api(path, { key: old });
    assert401(res, 'api_key_expired', true);
    assert.ok(!res.text.includes(old.slice(8)), 'the key is never echoed');
  }
  assertList(await api('/v1/products?limit=1', { key: fresh }));

  // An expired key cannot be rotated again.
  const again = adminResult(['key', 'rotate', old]);
  assert.equal(again.status, 1, 'rotating an expired key fails');
});

test('rotation with a key read from standard input keeps the key off the command line', async () => {
  const old = newKey({ account, mode: 'test', access: 'read-write' });
  const fresh = admin(['key', 'rotate', '-'], `${old}\n`).trim();
  assert.match(fresh, /^sk_test_/);
  const res = await api('/v1/webhooks', { key: fresh, method: 'POST', body: {} });
  assert.notEqual(res.status, 403, 'the rotated key keeps read-write access');
  assertList(await api('/v1/products?limit=1', { key: old }));
});

test('revocation: the key is refused at once with 401 invalid_api_key', async () => {
  const key = newKey({ account, mode: 'test', access: 'read-only' });
  assertList(await api('/v1/products?limit=1', { key }));
  admin(['key', 'revoke', key]);
  for (const path of ['/v1/products', `/v1/sellers/${seller}`, '/v1/nope']) {
    assert401(await api(path, { key }), 'invalid_api_key', true);
  }
  // A revoked key that was also rotated stays revoked, not merely expired.
  const other = newKey({ account, mode: 'test', access: 'read-only' });
  admin(['key', 'rotate', other]);
  admin(['key', 'revoke', other]);
  assert401(await api('/v1/products', { key: other }), 'invalid_api_key', true);
  // Other keys of the account are not affected.
  assertList(await api('/v1/products?limit=1', { key: readOnly }));
});

test('key list shows prefixes, never secrets', () => {
  const out = admin(['key', 'list', '--account', account]);
  const lines = out.trim().split('\n');
  assert.ok(lines.length >= 5, out);
  assert.ok(!out.includes(readOnly), 'the whole key is not listed');
  assert.ok(out.includes(readOnly.slice(0, 12)), 'its 12-character prefix is');
  assert.ok(!out.includes(readOnly.slice(12, 24)), 'nothing past the prefix');
});

test('a live key works against the live side only; a test key against the sandbox only', async () => {
  // (Mode isolation of the data itself is in catalogue.test.mjs.)
  const live = newKey({ account, mode: 'live', access: 'read-only' });
  const res = await api('/v1/products?limit=1', { key: live });
  assertList(res);
  assertRateHeaders(res);
  assertError(await api(`/v1/products/${product}`, { key: live }), 404, 'invalid_request_error', 'resource_missing', 'id');
  assertInvalid(await api('/v1/products?limit=0', { key: live }), 'parameter_invalid', 'limit');
});
