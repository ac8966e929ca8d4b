// The calls of contract section 13 without the server's extension: the second stack (the
// rate-limit one) runs without MARKET_API_EXTENSIONS, that is the specification's six
// routes only. There webhooks.create (POST /v1/webhooks) works; every other webhooks call
// and every events call throws the client's own error for a route the server does not
// have: NotFoundError 404 `route_not_found`, except listing subscriptions, whose path
// exists for POST and so answers 405 `method_not_allowed` with `Allow: POST`
// (InvalidRequestError). The main stack, started with
// MARKET_API_EXTENSIONS=webhook-management, answers the same calls (manage.test.mjs);
// one of them is repeated here as the control.
//
// That stack allows 3 requests per key and minute (MARKET_RATE_LIMIT=3, counted before
// the route is looked up): each call below has a key of its own, and retries are off so
// that a 429 could not hide behind a wait.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';

import {
  Market, MarketError, NotFoundError, InvalidRequestError,
} from '@markethq/market';
import { main, rateLimited, uniqueId } from './lib.mjs';

const plain = rateLimited();
const x = uniqueId();
const account = `acct_jsext_${x}`;
let sub; // subscribed on the stack without the extension

/** A client of the stack without the extension, with a fresh key of `account`. */
const client = () => new Market({ apiKey: plain.newKey(account), baseUrl: plain.baseUrl, maxRetries: 0 });

/** The first value of an async iterator (the iterators fetch lazily). */
const first = async (it) => (await it.next()).value;

before(() => {
  plain.importDoc({ mode: 'test', accounts: [{ id: account }] });
});

test('without the extension, webhooks.create (POST /v1/webhooks, a route of the specification) still subscribes', async () => {
  sub = await client().webhooks.create({ url: 'https://127.0.0.1:9/market-js-ext', events: ['sale.completed'], description: 'ext off' });
  assert.match(sub.id, /^we_/);
  assert.match(sub.secret, /^whsec_/);
  assert.equal(sub.status, 'enabled');
  assert.deepEqual(sub.events, ['sale.completed']);
  assert.equal(sub.lastResponse.status, 201);
});

// Each call of section 13 that has a path of its own: the route does not exist. The
// subscription id is a real one of this account, so the 404 is the route's, not the row's.
const missingRoutes = [
  ['webhooks.get', (m) => m.webhooks.get(sub.id)],
  ['webhooks.update', (m) => m.webhooks.update(sub.id, { disabled: true })],
  ['webhooks.delete', (m) => m.webhooks.delete(sub.id)],
  ['webhooks.rotateSecret', (m) => m.webhooks.rotateSecret(sub.id, { expireOldIn: 0 })],
  ['webhooks.test', (m) => m.webhooks.test(sub.id)],
  ['events.list', (m) => m.events.list({ type: 'sale.completed' })],
  ['events.all', (m) => first(m.events.all())],
  ['events.get', (m) => m.events.get('evt_1f2e3d4c5b6a79880716253443526170')],
];

for (const [name, call] of missingRoutes) {
  test(`without the extension, ${name} throws NotFoundError 404 route_not_found`, async () => {
    assert.ok(sub, 'subscribed first');
    const err = await call(client()).then(
      (v) => assert.fail(`${name} answered ${JSON.stringify(v)}: the route exists without the extension`),
      (e) => e,
    );
    assert.ok(err instanceof NotFoundError, `${name}: ${err}`);
    assert.ok(err instanceof MarketError);
    assert.equal(err.status, 404);
    assert.equal(err.type, 'invalid_request_error');
    assert.equal(err.code, 'route_not_found', `${name}: ${err.message}`);
    assert.ok(err.requestId, 'a request id');
  });
}

for (const [name, call] of [
  ['webhooks.list', (m) => m.webhooks.list({ limit: 5 })],
  ['webhooks.all', (m) => first(m.webhooks.all())],
]) {
  test(`without the extension, ${name} throws InvalidRequestError 405 method_not_allowed (Allow: POST)`, async () => {
    const err = await call(client()).then(
      (v) => assert.fail(`${name} answered ${JSON.stringify(v)}: GET /v1/webhooks exists without the extension`),
      (e) => e,
    );
    assert.ok(err instanceof InvalidRequestError, `${name}: ${err}`);
    assert.ok(!(err instanceof NotFoundError));
    assert.equal(err.status, 405);
    assert.equal(err.type, 'invalid_request_error');
    assert.equal(err.code, 'method_not_allowed', `${name}: ${err.message}`);
    assert.equal(err.headers.get('allow'), 'POST');
  });
}

test('control: the main stack, with MARKET_API_EXTENSIONS=webhook-management, answers the same calls', async () => {
  const st = main();
  const acct = `acct_jsexton_${x}`;
  st.importDoc({ mode: 'test', accounts: [{ id: acct }] });
  const m = new Market({ apiKey: st.newKey(acct), baseUrl: st.baseUrl, maxRetries: 0 });
  const page = await m.webhooks.list();
  assert.deepEqual(page.data, []);
  assert.equal(page.nextCursor, null);
  const events = await m.events.list();
  assert.deepEqual(events.data, []);
  const err = await m.events.get('evt_1f2e3d4c5b6a79880716253443526170').catch((e) => e);
  assert.ok(err instanceof NotFoundError);
  assert.equal(err.code, 'resource_missing', 'with the extension an unknown event is a missing resource, not a missing route');
});
