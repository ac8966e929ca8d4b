// Parameter encoding, the request each call makes, error mapping and the key's secrecy,
// over a scripted fetch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';

import { encodeQuery, pathId, snakeCase, encodeBody } from '../../src/params.js';
import {
  Market, MarketError, AuthenticationError, PermissionError, NotFoundError, InvalidRequestError,
  ConflictError, RateLimitError, ServerError,
} from '@markethq/market';
import { KEY, fakeFetch, fakeSleep, errorBody } from './helpers.mjs';

const page = (data, next = null) => ({ status: 200, body: { data, next_cursor: next } });
const item = (n) => ({ id: `prod_${n}`, title: `P${n}`, price: 1.1, seller: 's' });

function client(script, opts = {}) {
  const fetch = fakeFetch(script);
  const market = new Market({ apiKey: KEY, baseUrl: 'http://api.test/', fetch, sleep: fakeSleep(), ...opts });
  return { market, fetch };
}

test('snakeCase and encodeQuery', () => {
  assert.equal(snakeCase('minPrice'), 'min_price');
  assert.equal(snakeCase('expiresIn'), 'expires_in');
  assert.equal(snakeCase('q'), 'q');
  assert.equal(encodeQuery(undefined), '');
  assert.equal(encodeQuery({}), '');
  assert.equal(encodeQuery({ limit: undefined, cursor: null }), '');
  assert.equal(encodeQuery({ minPrice: 19.99, maxPrice: '100.10', limit: 10 }), '?min_price=19.99&max_price=100.10&limit=10');
  assert.equal(encodeQuery({ q: 'retro font & "x"' }), '?q=retro+font+%26+%22x%22');
  assert.equal(encodeQuery({ q: 'é+/?#' }), '?q=%C3%A9%2B%2F%3F%23');
  assert.equal(encodeQuery({ limit: 10n }), '?limit=10');
  assert.throws(() => encodeQuery({ limit: NaN }), TypeError);
  assert.throws(() => encodeQuery({ limit: Infinity }), TypeError);
  assert.throws(() => encodeQuery({ category: ['a', 'b'] }), TypeError);
  assert.throws(() => encodeQuery({ category: { a: 1 } }), TypeError);
  assert.throws(() => encodeQuery('limit=1'), TypeError);
});

test('pathId and encodeBody', () => {
  assert.equal(pathId('id', 'prod_1'), 'prod_1');
  assert.equal(pathId('id', 'a/b?c#d é'), 'a%2Fb%3Fc%23d%20%C3%A9');
  assert.equal(pathId('id', '..'), '..');
  assert.throws(() => pathId('id', ''), TypeError);
  assert.throws(() => pathId('id', 5), TypeError);
  assert.throws(() => pathId('id', undefined), TypeError);
  assert.deepEqual(encodeBody({ expiresIn: 60 }), { expires_in: 60 });
  assert.equal(encodeBody({ expiresIn: undefined }), undefined);
  assert.deepEqual(encodeBody({ url: 'u', events: ['a'], description: undefined }), { url: 'u', events: ['a'] });
});

test('products.list sends every parameter in snake_case and returns a page', async () => {
  const { market, fetch } = client([page([item(1)], 'CUR')]);
  const p = await market.products.list({
    category: 'fonts', q: 'retro font', seller: 'pixelforge', minPrice: '1.50', maxPrice: 20, sort: 'price_asc', limit: 5, cursor: 'abc',
  });
  const c = fetch.calls[0];
  assert.equal(c.method, 'GET');
  assert.equal(c.url, 'http://api.test/v1/products?category=fonts&q=retro+font&seller=pixelforge&min_price=1.50&max_price=20&sort=price_asc&limit=5&cursor=abc');
  assert.equal(c.headers.Authorization, `Bearer ${KEY}`);
  assert.equal(c.headers.Accept, 'application/json');
  assert.equal(c.headers['Idempotency-Key'], undefined);
  assert.equal(c.body, undefined);
  assert.deepEqual(p, { data: [{ id: 'prod_1', title: 'P1', price: '1.1', seller: 's' }], nextCursor: 'CUR' });
  assert.deepEqual(Object.keys(p), ['data', 'nextCursor'], 'lastResponse and rateLimit are not enumerable');
});

test('products.get, sellers.get, orders.list build their paths and queries', async () => {
  const { market, fetch } = client([
    { body: { id: 'a b', price: 2 } },
    { body: { id: 's', products: { data: [], next_cursor: null } } },
    page([]),
    page([]),
  ]);
  await market.products.get('a b');
  await market.sellers.get('pixel-forge', { limit: 3, cursor: 'c1' });
  await market.orders.list({ status: 'refunded', limit: 2, cursor: 'c2' });
  await market.orders.list();
  assert.deepEqual(fetch.calls.map((c) => `${c.method} ${c.url}`), [
    'GET http://api.test/v1/products/a%20b',
    'GET http://api.test/v1/sellers/pixel-forge?limit=3&cursor=c1',
    'GET http://api.test/v1/orders?status=refunded&limit=2&cursor=c2',
    'GET http://api.test/v1/orders',
  ]);
});

test('downloads.createLink: no body by default, expires_in when given, an Idempotency-Key always', async () => {
  const link = { status: 201, body: { object: 'download_link', download: 'dl_1', url: 'u', expires_at: '2026-01-01T00:00:00Z' } };
  const { market, fetch } = client([link, link, link]);
  const l = await market.downloads.createLink('dl_1');
  await market.downloads.createLink('dl_1', { expiresIn: 120 });
  await market.downloads.createLink('dl_1', { expiresIn: 60, idempotencyKey: 'k-1' });
  const [a, b, c] = fetch.calls;
  assert.equal(a.method, 'POST');
  assert.equal(a.url, 'http://api.test/v1/downloads/dl_1/link');
  assert.equal(a.body, undefined);
  assert.equal(a.headers['Content-Type'], undefined);
  assert.match(a.headers['Idempotency-Key'], /^market-js-/);
  assert.equal(b.body, '{"expires_in":120}');
  assert.equal(b.headers['Content-Type'], 'application/json');
  assert.equal(c.headers['Idempotency-Key'], 'k-1');
  assert.deepEqual(l, { object: 'download_link', download: 'dl_1', url: 'u', expiresAt: '2026-01-01T00:00:00Z' });
  assert.throws(() => market.downloads.createLink('dl_1', { idempotencyKey: 5 }), TypeError);
});

test('webhooks.create sends url, events, description as JSON', async () => {
  const { market, fetch } = client([{ status: 201, body: { id: 'we_1', created_at: 'c', secret: 'whsec_x' } }]);
  const s = await market.webhooks.create({ url: 'https://h.test/x', events: ['sale.completed'], description: 'd', idempotencyKey: 'k' });
  const c = fetch.calls[0];
  assert.equal(c.url, 'http://api.test/v1/webhooks');
  assert.equal(c.body, '{"url":"https://h.test/x","events":["sale.completed"],"description":"d"}');
  assert.equal(c.headers['Idempotency-Key'], 'k');
  assert.equal(s.createdAt, 'c');
  assert.throws(() => market.webhooks.create(), TypeError);
});

test('all() fetches lazily, page by page, and passes the cursor and filters on', async () => {
  const { market, fetch } = client([page([item(1), item(2)], 'c1'), page([item(3)], 'c2'), page([], null)]);
  const it = market.products.all({ category: 'fonts', limit: 2 });
  assert.equal(fetch.calls.length, 0, 'nothing fetched before the first item is asked for');
  const first = await it.next();
  assert.equal(first.value.id, 'prod_1');
  assert.equal(fetch.calls.length, 1);
  await it.next();
  assert.equal(fetch.calls.length, 1, 'the second item comes from the first page');
  const third = await it.next();
  assert.equal(third.value.id, 'prod_3');
  assert.equal(fetch.calls.length, 2);
  const end = await it.next();
  assert.equal(end.done, true);
  assert.deepEqual(fetch.calls.map((c) => c.url), [
    'http://api.test/v1/products?category=fonts&limit=2',
    'http://api.test/v1/products?category=fonts&limit=2&cursor=c1',
    'http://api.test/v1/products?category=fonts&limit=2&cursor=c2',
  ]);
});

test('all() stops fetching when the loop stops', async () => {
  const { market, fetch } = client([page([item(1), item(2)], 'c1'), page([item(3)], null)]);
  const seen = [];
  for await (const p of market.products.all()) {
    seen.push(p.id);
    if (seen.length === 2) break;
  }
  assert.deepEqual(seen, ['prod_1', 'prod_2']);
  assert.equal(fetch.calls.length, 1);
});

test('orders.all walks every page', async () => {
  const o = (n) => ({ id: `ord_${n}`, total: 3.3, items: [], downloads: [] });
  const { market, fetch } = client([page([o(1)], 'x'), page([o(2)], null)]);
  const got = [];
  for await (const ord of market.orders.all({ status: 'paid' })) got.push([ord.id, ord.total]);
  assert.deepEqual(got, [['ord_1', '3.3'], ['ord_2', '3.3']]);
  assert.equal(fetch.calls[1].url, 'http://api.test/v1/orders?status=paid&cursor=x');
});

test('each error status maps to its class, with every field of the error body', async () => {
  const cases = [
    [400, 'invalid_request_error', 'parameter_invalid', InvalidRequestError, 'limit'],
    [401, 'authentication_error', 'invalid_api_key', AuthenticationError],
    [403, 'permission_error', 'insufficient_scope', PermissionError],
    [404, 'invalid_request_error', 'resource_missing', NotFoundError],
    [405, 'invalid_request_error', 'method_not_allowed', InvalidRequestError],
    [409, 'invalid_request_error', 'order_refunded', ConflictError],
    [410, 'invalid_request_error', 'link_expired', InvalidRequestError],
    [413, 'invalid_request_error', 'body_too_large', InvalidRequestError],
    [415, 'invalid_request_error', 'unsupported_media_type', InvalidRequestError],
    [429, 'rate_limit_error', 'rate_limited', RateLimitError],
    [500, 'api_error', 'internal_error', ServerError],
    [502, 'api_error', 'service_unavailable', ServerError],
    [503, 'api_error', 'service_unavailable', ServerError],
  ];
  for (const [status, type, code, Cls, param] of cases) {
    const { market } = client([{
      status,
      body: errorBody(type, code, `msg ${status}`, param),
      headers: { 'x-request-id': 'hdr', 'x-ratelimit-limit': '600', 'x-ratelimit-remaining': '7', 'x-ratelimit-reset': '30', 'retry-after': '1' },
    }], { maxRetries: 0 });
    await assert.rejects(market.products.list(), (e) => {
      assert.ok(e instanceof Cls, `${status}: ${e.constructor.name}`);
      assert.ok(e instanceof MarketError);
      assert.ok(e instanceof Error);
      assert.equal(e.name, Cls.name);
      assert.equal(e.status, status);
      assert.equal(e.type, type);
      assert.equal(e.code, code);
      assert.equal(e.message, `msg ${status}`);
      assert.equal(e.param, param ?? null);
      assert.equal(e.requestId, 'req_1', 'the body\'s request_id');
      assert.deepEqual(e.rateLimit, { limit: 600, remaining: 7, reset: 30 });
      assert.equal(e.retryAfter, 1);
      return true;
    });
  }
  assert.ok(new ConflictError('x') instanceof InvalidRequestError, '409 is also an invalid request');
});

test('an error answer that is not the API\'s envelope still makes a useful error', async () => {
  const { market } = client([{ status: 502, body: '<html>Bad Gateway</html>', headers: { 'x-request-id': 'r9' } }], { maxRetries: 0 });
  await assert.rejects(market.products.list(), (e) => {
    assert.ok(e instanceof ServerError);
    assert.equal(e.status, 502);
    assert.equal(e.code, null);
    assert.equal(e.requestId, 'r9', 'from the X-Request-Id header');
    assert.match(e.message, /HTTP 502/);
    return true;
  });
  const c2 = client([{ status: 200, body: 'not json' }]);
  await assert.rejects(c2.market.products.list(), (e) => e instanceof MarketError && e.status === 200 && /not JSON/.test(e.message));
});

test('lastResponse: status, request id, rate limit, replay flag', async () => {
  const { market } = client([{
    status: 201,
    body: { object: 'download_link' },
    headers: { 'x-request-id': 'rid', 'x-ratelimit-limit': '600', 'x-ratelimit-remaining': '599', 'x-ratelimit-reset': '12', 'idempotent-replayed': 'true' },
  }]);
  const l = await market.downloads.createLink('dl_1');
  assert.equal(l.lastResponse.status, 201);
  assert.equal(l.lastResponse.requestId, 'rid');
  assert.deepEqual(l.lastResponse.rateLimit, { limit: 600, remaining: 599, reset: 12 });
  assert.equal(l.lastResponse.idempotentReplayed, true);
  assert.equal(l.lastResponse.headers.get('x-request-id'), 'rid');
  assert.deepEqual(l.rateLimit, l.lastResponse.rateLimit);
  assert.equal(JSON.stringify(l), '{"object":"download_link"}');
});

test('the API key never shows: toString, inspect, JSON, console.log, resources, errors', async (t) => {
  const { market } = client([{ status: 401, body: errorBody('authentication_error', 'invalid_api_key') }]);
  const secretPart = KEY.slice('sk_test_'.length);
  const shown = [
    String(market), `${market}`, market.toString(), JSON.stringify(market), JSON.stringify({ market }),
    inspect(market), inspect(market, { showHidden: true, depth: Infinity, getters: true }),
    inspect(market, { customInspect: false, showHidden: true, depth: Infinity }),
    inspect(market.products, { showHidden: true, depth: Infinity }),
    inspect(market.orders, { customInspect: false, showHidden: true, depth: Infinity }), inspect(market.webhooks, { showHidden: true }),
    JSON.stringify(market.products), Object.keys(market).join(','), Object.getOwnPropertyNames(market).join(','),
  ];
  const logged = [];
  t.mock.method(console, 'log', (...args) => logged.push(inspect(args.length === 1 ? args[0] : args)));
  console.log(market);
  console.log('%o', market);
  shown.push(...logged);
  const err = await market.products.list().catch((e) => e);
  shown.push(inspect(err, { showHidden: true, depth: Infinity }), JSON.stringify(err), String(err), err.stack);
  for (const s of shown) assert.ok(!s.includes(secretPart), `the key shows in: ${s}`);
  assert.match(String(market), /sk_test_\*\*\*\*/);
  assert.match(inspect(market), /baseUrl: 'http:\/\/api\.test'/);
});

test('baseUrl: argument, else MARKET_BASE_URL, else an error', (t) => {
  const saved = process.env.MARKET_BASE_URL;
  t.after(() => {
    if (saved === undefined) delete process.env.MARKET_BASE_URL;
    else process.env.MARKET_BASE_URL = saved;
  });
  process.env.MARKET_BASE_URL = 'http://from-env.test:8080/';
  assert.equal(new Market({ apiKey: KEY }).baseUrl, 'http://from-env.test:8080');
  assert.equal(new Market({ apiKey: KEY, baseUrl: 'https://arg.test/prefix/' }).baseUrl, 'https://arg.test/prefix');
  delete process.env.MARKET_BASE_URL;
  assert.throws(() => new Market({ apiKey: KEY }), /MARKET_BASE_URL/);
  assert.throws(() => new Market({ apiKey: KEY, baseUrl: 'ftp://x' }), TypeError);
  assert.throws(() => new Market({ apiKey: KEY, baseUrl: 'not a url' }), TypeError);
  assert.throws(() => new Market({ baseUrl: 'http://x' }), /apiKey/);
  assert.throws(() => new Market({ apiKey: 'sk_test_a\nb', baseUrl: 'http://x' }), TypeError);
  assert.throws(() => new Market({ apiKey: KEY, baseUrl: 'http://x', maxRetries: -1 }), TypeError);
  assert.throws(() => new Market({ apiKey: KEY, baseUrl: 'http://x', maxRetries: 1.5 }), TypeError);
  assert.equal(new Market({ apiKey: KEY, baseUrl: 'http://x' }).maxRetries, 2);
});

test('a base URL with a path prefix keeps it', async () => {
  const fetch = fakeFetch([page([])]);
  const market = new Market({ apiKey: KEY, baseUrl: 'https://gw.test/market/', fetch });
  await market.products.list();
  assert.equal(fetch.calls[0].url, 'https://gw.test/market/v1/products');
});

test('onResponse: one call per attempt, retries included, never the API key', async () => {
  const infos = [];
  const { market } = client([
    { status: 502, body: errorBody('api_error', 'service_unavailable'), headers: { 'x-request-id': 'req_a' } },
    new TypeError('fetch failed'),
    { status: 200, body: item(1), headers: { 'x-request-id': 'req_c' } },
  ], { onResponse: (i) => infos.push(i) });
  await market.products.list({ limit: 2 }).catch(() => {});
  assert.equal(infos.length, 3);
  assert.deepEqual(infos.map((i) => [i.method, i.path, i.status, i.requestId, i.attempt]), [
    ['GET', '/v1/products?limit=2', 502, 'req_a', 1],
    ['GET', '/v1/products?limit=2', null, null, 2],
    ['GET', '/v1/products?limit=2', 200, 'req_c', 3],
  ]);
  assert.equal(infos[0].error, null);
  assert.equal(typeof infos[1].error, 'string');
  for (const i of infos) assert.ok(i.durationMs >= 0);
  const shown = JSON.stringify(infos) + inspect(infos, { depth: 9, showHidden: true });
  assert.ok(!shown.includes(KEY), 'the key reached the hook');
  assert.ok(!/authorization|bearer/i.test(shown), 'the Authorization header reached the hook');
});

test('onResponse: a hook that throws does not change the outcome; a non-function is refused', async () => {
  const { market } = client([{ status: 200, body: item(1) }], { onResponse: () => { throw new Error('hook'); } });
  const p = await market.products.get('prod_1');
  assert.equal(p.id, 'prod_1');
  assert.throws(() => new Market({ apiKey: KEY, baseUrl: 'http://api.test', onResponse: 'x' }), TypeError);
});
