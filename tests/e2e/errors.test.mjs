// The error rules of docs/contract.md sections 1, 4 and 5 as the three catalogue routes meet
// them: routes and methods (404 route_not_found, 405 with Allow), strict query parsing
// (parameter_invalid, parameter_unknown, parameter_duplicated with the right param),
// hostile input (malformed percent-encoding, invalid UTF-8, NUL, over-long values, a
// 10 KiB query string) answered with the API's own 400, the envelope, Content-Type,
// X-Request-Id and the X-RateLimit headers on every authenticated answer.
import { test, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { api, importDoc, newKey, uniqueId, BASE_URL } from './lib/stack.mjs';
import {
  assertApiHeaders, assertError, assertInvalid, assertList, assertRateHeaders, rawRequest,
} from './fixtures/expect.mjs';

const run = uniqueId('');
const account = `acct_err_${run}`;
const seller = `err-${run}`;
const product = `prod_err_${run}`;
const category = `err-${run}`;
let key;

before(() => {
  importDoc({
    mode: 'test',
    accounts: [{ id: account, email: `${account}@example.com` }],
    sellers: [{ id: seller, account, name: 'Error Shop' }],
    products: [{
      id: product, seller, title: 'Plain Product', description: 'for the error tests',
      category, currency: 'USD', status: 'published',
      tiers: [{ id: `tier_err_${run}`, name: 'Personal', price: 3, licence: {} }],
    }],
  });
});

// A fresh key for every test, so that no test runs into the 600-a-minute limit.
beforeEach(() => {
  key = newKey({ account, mode: 'test', access: 'read-only' });
});

const get = (path, opts = {}) => api(path, { key, ...opts });

test('the routes answer 200 with the API headers', async () => {
  for (const path of ['/v1/products', `/v1/products/${product}`, `/v1/sellers/${seller}`]) {
    const res = await get(path);
    assert.equal(res.status, 200, `${path}: ${res.text.slice(0, 200)}`);
    assertApiHeaders(res);
    assertRateHeaders(res);
  }
});

test('every other path is 404 route_not_found, with the rate-limit headers', async () => {
  const paths = [
    '/', '/v1', '/v1/', '/v1/products/', '/v1/sellers', '/v1/sellers/', '/v1/product',
    '/v1/products/x/', `/v1/products/${product}/tiers`, `/v1/sellers/${seller}/products`,
    '/v1//products', '/V1/products', '/v2/products', '/v1/products.json', '/products',
    '/v1/orders/', '/v1/webhooks/', '/v1/webhooks/we_x/', '/v1/webhooks/we_x/nope', '/v1/downloads/dl_x', '/v1/downloads//link',
    '/index.html', '/v1/products%2F', '/favicon.ico',
  ];
  for (const path of paths) {
    const res = await get(path);
    assertError(res, 404, 'invalid_request_error', 'route_not_found', null);
    assert.equal(res.headers.get('location'), null, `${path} is not redirected`);
    assertRateHeaders(res);
  }
});

test('another method on a route is 405 with Allow, after the key and before the scope', async () => {
  const cases = [
    ['POST', '/v1/products', 'GET'], ['PUT', `/v1/products/${product}`, 'GET'],
    ['DELETE', `/v1/products/${product}`, 'GET'], ['PATCH', `/v1/sellers/${seller}`, 'GET'],
    ['DELETE', '/v1/sellers/x', 'GET'], ['POST', '/v1/orders', 'GET'],
    // The read-only key lacks the webhooks scopes and downloads:write, but the 405 comes
    // first; a path of several routes names the methods of all of them.
    ['DELETE', '/v1/webhooks', 'GET, POST'], ['PUT', '/v1/webhooks', 'GET, POST'],
    ['PUT', '/v1/webhooks/we_x', 'GET, POST, DELETE'], ['PATCH', '/v1/webhooks/we_x', 'GET, POST, DELETE'],
    ['GET', '/v1/downloads/dl_x/link', 'POST'],
  ];
  for (const [method, path, allow] of cases) {
    const res = await get(path, { method });
    const e = assertError(res, 405, 'invalid_request_error', 'method_not_allowed', null);
    assert.equal(res.headers.get('allow'), allow, `${method} ${path}: Allow`);
    assert.ok(e.message.includes(method), 'the message names the method');
    assertRateHeaders(res);
  }
});

test('methods nginx refuses itself are a JSON 405 as well', async () => {
  const res = await rawRequest(BASE_URL, `TRACE /v1/products HTTP/1.1\r\nAuthorization: Bearer ${key}`);
  assert.equal(res.status, 405);
  assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
  assert.equal(res.json?.error?.code, 'method_not_allowed', res.text.slice(0, 200));
});

test('limit: an integer from 1 to 100 written plainly, else parameter_invalid', async () => {
  for (const ok of ['1', '7', '100']) {
    const body = assertList(await get(`/v1/products?limit=${ok}&category=${category}`));
    assert.equal(body.data.length, 1);
  }
  for (const bad of ['0', '101', '1000', '-1', '+5', '1.5', '020', 'abc', '', '%205', '1e2', '5%20', '0x10', '99999999999999999999']) {
    assertInvalid(await get(`/v1/products?limit=${bad}`), 'parameter_invalid', 'limit');
    assertInvalid(await get(`/v1/sellers/${seller}?limit=${bad}`), 'parameter_invalid', 'limit');
  }
});

test('sort, category, seller, q, min_price and max_price are validated with their param', async () => {
  const cases = [
    ['sort=bogus', 'sort'], ['sort=NEWEST', 'sort'], ['sort=', 'sort'], ['sort=relevance', 'sort'],
    ['category=Fonts', 'category'], ['category=a%20b', 'category'], ['category=', 'category'],
    [`category=${'a'.repeat(41)}`, 'category'], ['category=-fonts', 'category'],
    ['seller=Bad!', 'seller'], ['seller=', 'seller'], [`seller=${'s'.repeat(41)}`, 'seller'],
    ['q=', 'q'], ['q=a%01b', 'q'], ['q=tab%09tab', 'q'], ['q=del%7F', 'q'], ['q=c1%C2%85', 'q'], [`q=${'a'.repeat(201)}`, 'q'], [`q=${'%C3%A9'.repeat(201)}`, 'q'],
    ['min_price=-1', 'min_price'], ['min_price=abc', 'min_price'], ['min_price=1e3', 'min_price'],
    ['min_price=', 'min_price'], ['min_price=1.', 'min_price'], ['min_price=.5', 'min_price'],
    ['max_price=1,5', 'max_price'], ['max_price=NaN', 'max_price'], ['max_price=%2B1', 'max_price'],
    ['max_price=Infinity', 'max_price'], [`max_price=${'9'.repeat(40)}`, 'max_price'],
  ];
  for (const [query, param] of cases) {
    const res = await get(`/v1/products?${query}`);
    assertInvalid(res, 'parameter_invalid', param);
    assertRateHeaders(res);
  }
  // The limits themselves are allowed: 200 characters (not bytes) of q, a 40-char slug.
  assertList(await get(`/v1/products?q=${'%C3%A9'.repeat(200)}`));
  assertList(await get(`/v1/products?q=${'a'.repeat(200)}`));
  assertList(await get(`/v1/products?category=${'a'.repeat(40)}`));
  assertList(await get(`/v1/products?q=font&sort=relevance`));
});

test('unknown query parameters are parameter_unknown on every route, names compared exactly', async () => {
  const routes = ['/v1/products', `/v1/products/${product}`, `/v1/sellers/${seller}`];
  for (const route of routes) {
    for (const [query, param] of [['foo=1', 'foo'], ['Limit=5', 'Limit'], ['page=2', 'page'], ['offset', 'offset'], ['q%5B%5D=x', 'q[]']]) {
      const res = await get(`${route}?${query}`);
      assertInvalid(res, 'parameter_unknown', param);
      assertRateHeaders(res);
    }
  }
  // Parameters of another route are unknown here.
  assertInvalid(await get(`/v1/sellers/${seller}?category=fonts`), 'parameter_unknown', 'category');
  assertInvalid(await get(`/v1/products/${product}?limit=5`), 'parameter_unknown', 'limit');
  assertInvalid(await get('/v1/products?status=paid'), 'parameter_unknown', 'status');
});

test('a repeated parameter is parameter_duplicated, whatever the values', async () => {
  for (const [query, param] of [['limit=5&limit=5', 'limit'], ['category=a&category=b', 'category'],
    ['q=x&sort=newest&q=y', 'q'], ['cursor=a&cursor=a', 'cursor'], ['min_price=1&min_price=', 'min_price']]) {
    assertInvalid(await get(`/v1/products?${query}`), 'parameter_duplicated', param);
  }
  assertInvalid(await get(`/v1/sellers/${seller}?limit=1&limit=2`), 'parameter_duplicated', 'limit');
  // "a=1&&b=2" is not a repetition of anything: empty segments are skipped.
  assertList(await get(`/v1/products?&limit=1&&category=${category}&`));
});

test('malformed percent-encoding, invalid UTF-8, NUL bytes: 400 parameter_invalid naming the parameter', async () => {
  const values = ['%zz', '%', '%4', 'a%g1', '%C3%28', '%C3', '%FF', '%ED%A0%80', '%C0%AF', '%F4%90%80%80', '%00', 'a%00b'];
  for (const param of ['q', 'category', 'seller', 'min_price', 'sort', 'limit', 'cursor']) {
    for (const v of values) {
      const res = await get(`/v1/products?${param}=${v}`);
      assertInvalid(res, 'parameter_invalid', param);
      assertRateHeaders(res);
    }
  }
  for (const v of ['%zz', '%C3%28', '%00']) {
    assertInvalid(await get(`/v1/sellers/${seller}?cursor=${v}`), 'parameter_invalid', 'cursor');
  }
  // A name that does not decode is named as it was sent (docs/contract.md section 4:
  // param always where one input is at fault).
  for (const name of ['%FF', '%zz', '%00', 'q%C3%28']) {
    assertInvalid(await get(`/v1/products?${name}=1`), 'parameter_invalid', name);
  }
});

test('raw bytes outside ASCII in the query are decoded as UTF-8 or refused', async () => {
  const ok = await rawRequest(BASE_URL, Buffer.concat([
    Buffer.from('GET /v1/products?q=caf', 'latin1'), Buffer.from('é', 'utf8'),
    Buffer.from(` HTTP/1.1\r\nAuthorization: Bearer ${key}`, 'latin1'),
  ]));
  assert.equal(ok.status, 200, ok.text.slice(0, 200));
  assert.equal(ok.headers['content-type'], 'application/json; charset=utf-8');
  for (const bytes of [[0xff], [0xc3, 0x28], [0xe2, 0x82], [0x80]]) {
    const res = await rawRequest(BASE_URL, Buffer.concat([
      Buffer.from('GET /v1/products?q=a', 'latin1'), Buffer.from(bytes),
      Buffer.from(` HTTP/1.1\r\nAuthorization: Bearer ${key}`, 'latin1'),
    ]));
    assert.equal(res.status, 400, `bytes ${bytes}: ${res.text.slice(0, 200)}`);
    assert.equal(res.json.error.code, 'parameter_invalid');
    assert.equal(res.json.error.param, 'q');
    assert.match(res.headers['x-ratelimit-remaining'] ?? '', /^\d+$/, 'answered by the API, not nginx');
  }
});

test('over-long values and a 10 KiB query string get the API\'s own 400, not nginx\'s', async () => {
  const tenKiB = 'a'.repeat(10 * 1024);
  for (const param of ['q', 'category', 'seller', 'cursor', 'min_price', 'sort']) {
    const res = await get(`/v1/products?${param}=${tenKiB}`);
    assertInvalid(res, 'parameter_invalid', param);
    assertRateHeaders(res); // only the worker sets these: nginx did not answer
  }
  // 10 KiB spread over many parameters: still the API's answer.
  const many = Array.from({ length: 100 }, (_, i) => `p${i}=${'b'.repeat(100)}`).join('&');
  const res = await get(`/v1/products?${many}`);
  assertInvalid(res, 'parameter_unknown', 'p0');
  assertRateHeaders(res);
  // Percent-encoded: 3 KiB of %41 decodes to 1 KiB of "A".
  assertInvalid(await get(`/v1/products?q=${'%41'.repeat(3 * 1024)}`), 'parameter_invalid', 'q');
  // An over-long unknown name is not echoed back.
  const longName = await get(`/v1/products?${'n'.repeat(5000)}=1`);
  const e = assertInvalid(longName, 'parameter_unknown');
  assert.ok(!longName.text.includes('n'.repeat(100)), 'the long name is not echoed');
  assert.ok(e.param === undefined || e.param.length <= 64);
});

test('the path parameter: bad encodings are 400 parameter_invalid id, unknown ids 404', async () => {
  for (const route of ['/v1/products/', '/v1/sellers/']) {
    for (const v of ['%C3%28', 'prod_%FF', 'x%E2%82', '%ED%A0%80', '%C0%AF']) {
      const res = await get(route + v);
      assertInvalid(res, 'parameter_invalid', 'id');
      assertRateHeaders(res);
    }
    // nginx decodes the path itself and refuses these before any worker sees them: its
    // answer is the same JSON 400 parameter_invalid (without param: nginx cannot tell).
    for (const v of ['%zz', '%00', '%', 'a%0']) {
      assertInvalid(await get(route + v), 'parameter_invalid');
    }
    assertInvalid(await get(route + 'x'.repeat(5000)), 'parameter_invalid', 'id');
  }
  for (const id of ['prod_nope', 'nope', 'PROD_X', 'prod_', 'prod_a-b', 'prod_%2E%2E', 'prod_x%2Fy', product.toUpperCase()]) {
    assertError(await get(`/v1/products/${id}`), 404, 'invalid_request_error', 'resource_missing', 'id');
  }
  for (const id of ['nope-nope-nope', 'UPPER', '-x', 'a%20b', 'x'.repeat(41), seller.toUpperCase()]) {
    assertError(await get(`/v1/sellers/${id}`), 404, 'invalid_request_error', 'resource_missing', 'id');
  }
  // A percent-encoded id is decoded before the lookup.
  const encoded = await get(`/v1/products/${product.replace('_', '%5F')}`);
  assert.equal(encoded.status, 200);
  assert.equal(encoded.json.id, product);
});

test('X-Request-Id: a sane client id is echoed, anything else replaced by a generated one', async () => {
  const sane = ['abc-123', 'A.b_c-9', 'x'.repeat(64), '0'];
  const insane = ['bad id!', 'x'.repeat(65), 'a/b', 'a\tb', 'ümlaut', 'a,b', '"quoted"'];
  const paths = ['/v1/products?limit=1', '/v1/nope', '/v1/products?limit=0'];
  for (const path of paths) {
    for (const id of sane) {
      const res = await get(path, { headers: { 'X-Request-Id': id } });
      assert.equal(res.headers.get('x-request-id'), id, `${path} echoes ${id}`);
      if (res.status !== 200) assert.equal(res.json.error.request_id, id);
    }
    const seen = new Set();
    for (const id of insane) {
      const res = await rawRequest(BASE_URL, Buffer.concat([
        Buffer.from(`GET ${path} HTTP/1.1\r\nAuthorization: Bearer ${key}\r\nX-Request-Id: `, 'latin1'),
        Buffer.from(id, 'utf8'),
      ]));
      const got = res.headers['x-request-id'];
      assert.match(got ?? '', /^[A-Za-z0-9._-]{1,64}$/, `${path} with ${JSON.stringify(id)}: generated id`);
      assert.notEqual(got, id);
      assert.ok(!seen.has(got), 'generated ids differ');
      seen.add(got);
      if (res.status !== 200) assert.equal(res.json.error.request_id, got);
    }
  }
  // Without a key too (401 is answered by the worker).
  const res = await api('/v1/products', { headers: { 'X-Request-Id': 'abc-123' } });
  assert.equal(res.status, 401);
  assert.equal(res.headers.get('x-request-id'), 'abc-123');
  assert.equal(res.json.error.request_id, 'abc-123');
});

test('X-RateLimit headers are on every authenticated answer and count every request', async () => {
  const fresh = newKey({ account, mode: 'test', access: 'read-only' });
  const requests = [
    ['GET', '/v1/products?limit=1', 200], ['GET', '/v1/products?limit=0', 400],
    ['GET', '/v1/nope', 404], ['DELETE', '/v1/products', 405], ['POST', '/v1/webhooks', 403],
    ['GET', `/v1/products/prod_missing_${run}`, 404], ['GET', `/v1/sellers/${seller}`, 200],
    ['GET', '/v1/products?cursor=forged.cursor', 400], ['GET', '/', 404],
  ];
  let expected = 599;
  let lastReset = 61;
  for (const [method, path, status] of requests) {
    const res = await api(path, { key: fresh, method });
    assert.equal(res.status, status, `${method} ${path}: ${res.text.slice(0, 200)}`);
    assertApiHeaders(res);
    const rate = assertRateHeaders(res);
    if (rate.reset > lastReset) expected = 599; // a new window began between two requests
    assert.equal(rate.remaining, expected, `${method} ${path}: X-RateLimit-Remaining`);
    expected -= 1;
    lastReset = rate.reset;
  }
});

test('answers without a key carry no rate-limit headers but the same envelope', async () => {
  const res = await api('/v1/products');
  assertError(res, 401, 'authentication_error', 'missing_api_key', null);
  assert.equal(res.headers.get('x-ratelimit-remaining'), null);
});

test('a success and an error are both exactly application/json; charset=utf-8 with a body that parses', async () => {
  for (const path of ['/v1/products?limit=2', `/v1/products/${product}`, `/v1/sellers/${seller}`, '/v1/x', '/v1/products?limit=x']) {
    const res = await get(path);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.doesNotThrow(() => JSON.parse(res.text));
    assert.equal(Number(res.headers.get('content-length') ?? res.body.length), res.body.length);
  }
});
