// Managing webhook subscriptions and reading events, over a scripted fetch: the request
// each call makes (method, path, query, body, Idempotency-Key), date-time parameters, the
// key kept across retries, and the values the answers become.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { dateTime, encodeQuery } from '../../src/params.js';
import { decode, EVENT_PAGE, EVENT_WITH_DELIVERIES } from '../../src/json.js';
import { Market, NotFoundError, PermissionError } from '@markethq/market';
import { KEY, fakeFetch, fakeSleep, errorBody, networkError } from './helpers.mjs';

function client(script, opts = {}) {
  const fetch = fakeFetch(script);
  const sleep = fakeSleep();
  const market = new Market({ apiKey: KEY, baseUrl: 'http://api.test/', fetch, sleep, ...opts });
  return { market, fetch, sleep };
}

const SUB = {
  id: 'we_1', object: 'webhook_subscription', url: 'https://h.test/x', events: ['sale.completed', 'payout.sent'],
  description: 'd', status: 'disabled', livemode: false, created_at: '2026-11-26T10:00:00Z', updated_at: '2026-11-26T10:04:05Z',
};
const SUB_VALUE = {
  id: 'we_1', object: 'webhook_subscription', url: 'https://h.test/x', events: ['sale.completed', 'payout.sent'],
  description: 'd', status: 'disabled', livemode: false, createdAt: '2026-11-26T10:00:00Z', updatedAt: '2026-11-26T10:04:05Z',
};
const TEST_EVENT = { id: 'evt_t1', type: 'webhook.test', created_at: '2026-11-26T10:04:05Z', livemode: false, data: { subscription: 'we_1' } };
const page = (data, next = null) => ({ status: 200, body: { data, next_cursor: next } });
const unavailable = { status: 503, body: errorBody('api_error', 'service_unavailable'), headers: { 'retry-after': '1' } };
const line = (c) => `${c.method} ${c.url}`;

test('dateTime: RFC 3339 in UTC, milliseconds only when not zero', () => {
  assert.equal(dateTime('t', new Date(Date.UTC(2026, 10, 26, 10, 4, 5))), '2026-11-26T10:04:05Z');
  assert.equal(dateTime('t', new Date(Date.UTC(2026, 10, 26, 10, 4, 5, 250))), '2026-11-26T10:04:05.250Z');
  assert.equal(dateTime('t', new Date(Date.UTC(2026, 10, 26, 10, 4, 5, 7))), '2026-11-26T10:04:05.007Z');
  // A Date made from a local time is written in UTC.
  assert.equal(dateTime('t', new Date('2026-11-26T11:04:05+01:00')), '2026-11-26T10:04:05Z');
  assert.equal(dateTime('t', new Date('2026-01-01T00:00:00.000Z')), '2026-01-01T00:00:00Z');
  assert.throws(() => dateTime('createdGte', new Date('nope')), /createdGte is an invalid Date/);
});

test('encodeQuery: a Date becomes an RFC 3339 date-time, a string goes as it is', () => {
  assert.equal(
    encodeQuery({ createdGte: new Date(Date.UTC(2026, 10, 26, 10, 4, 5)), createdLt: '2026-11-26T11:04:05+01:00' }),
    '?created_gte=2026-11-26T10%3A04%3A05Z&created_lt=2026-11-26T11%3A04%3A05%2B01%3A00',
  );
  assert.equal(encodeQuery({ createdGte: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 600)) }), '?created_gte=2026-01-02T03%3A04%3A05.600Z');
  assert.throws(() => encodeQuery({ createdGte: new Date(NaN) }), TypeError);
});

test('webhooks.list, all and get: their paths and queries, subscriptions camelCased', async () => {
  const { market, fetch } = client([
    page([SUB], 'c1'),
    { body: SUB },
    page([SUB, { ...SUB, id: 'we_0' }], 'n1'),
    page([{ ...SUB, id: 'we_z' }], null),
    page([]),
  ]);
  const p = await market.webhooks.list({ limit: 2, cursor: 'c0' });
  assert.deepEqual(p, { data: [SUB_VALUE], nextCursor: 'c1' });
  const s = await market.webhooks.get('we_1/x y');
  assert.deepEqual(s, SUB_VALUE);
  const all = [];
  for await (const w of market.webhooks.all({ limit: 2 })) all.push(w.id);
  assert.deepEqual(all, ['we_1', 'we_0', 'we_z']);
  await market.webhooks.list();
  assert.deepEqual(fetch.calls.map(line), [
    'GET http://api.test/v1/webhooks?limit=2&cursor=c0',
    'GET http://api.test/v1/webhooks/we_1%2Fx%20y',
    'GET http://api.test/v1/webhooks?limit=2',
    'GET http://api.test/v1/webhooks?limit=2&cursor=n1',
    'GET http://api.test/v1/webhooks',
  ]);
  for (const c of fetch.calls) {
    assert.equal(c.headers['Idempotency-Key'], undefined, 'GETs carry no key');
    assert.equal(c.body, undefined);
  }
  assert.throws(() => market.webhooks.get(''), TypeError);
  assert.throws(() => market.webhooks.get(7), TypeError);
  assert.throws(() => market.webhooks.list('limit=1'), TypeError);
});

test('webhooks.update: POST with the fields given, snake_case, {} when none; a key always', async () => {
  const ok = { body: SUB };
  const { market, fetch } = client([ok, ok, ok, ok]);
  const s = await market.webhooks.update('we_1', {
    url: 'https://h.test/y', events: ['payout.sent'], description: 'new', disabled: true, idempotencyKey: 'upd-1',
  });
  await market.webhooks.update('we_1', { disabled: false, description: undefined });
  await market.webhooks.update('we_1');
  await market.webhooks.update('we_1', {});
  const [a, b, c, d] = fetch.calls;
  assert.equal(line(a), 'POST http://api.test/v1/webhooks/we_1');
  assert.equal(a.body, '{"url":"https://h.test/y","events":["payout.sent"],"description":"new","disabled":true}');
  assert.equal(a.headers['Content-Type'], 'application/json');
  assert.equal(a.headers['Idempotency-Key'], 'upd-1');
  assert.equal(b.body, '{"disabled":false}');
  assert.equal(c.body, '{}', 'no field: an empty object, which changes nothing');
  assert.equal(d.body, '{}');
  assert.equal(c.headers['Content-Type'], 'application/json');
  for (const k of [b, c, d].map((x) => x.headers['Idempotency-Key'])) assert.match(k, /^market-js-[0-9a-f-]{36}$/);
  assert.equal(new Set([b, c, d].map((x) => x.headers['Idempotency-Key'])).size, 3, 'one key per call');
  assert.deepEqual(s, SUB_VALUE);
  assert.equal(s.lastResponse.idempotencyKey, 'upd-1');
  assert.throws(() => market.webhooks.update('we_1', { idempotencyKey: '' }), TypeError);
  assert.throws(() => market.webhooks.update('', {}), TypeError);
});

test('webhooks.delete: DELETE without a body, with an Idempotency-Key; {id, object, deleted}', async () => {
  const gone = { body: { id: 'we_1', object: 'webhook_subscription', deleted: true } };
  const { market, fetch } = client([gone, gone]);
  const r = await market.webhooks.delete('we_1');
  await market.webhooks.delete('we_1', { idempotencyKey: 'del-1' });
  const [a, b] = fetch.calls;
  assert.equal(line(a), 'DELETE http://api.test/v1/webhooks/we_1');
  assert.equal(a.body, undefined);
  assert.equal(a.headers['Content-Type'], undefined);
  assert.match(a.headers['Idempotency-Key'], /^market-js-[0-9a-f-]{36}$/);
  assert.equal(b.headers['Idempotency-Key'], 'del-1');
  assert.deepEqual(r, { id: 'we_1', object: 'webhook_subscription', deleted: true });
  assert.equal(r.lastResponse.idempotencyKey, a.headers['Idempotency-Key']);
  assert.throws(() => market.webhooks.delete('we_1', { disabled: true }), /takes only idempotencyKey, not disabled/);
  assert.throws(() => market.webhooks.delete('we_1', 'k'), TypeError);
  assert.throws(() => market.webhooks.delete(undefined), TypeError);
});

test('webhooks.rotateSecret: no body by default, expire_old_in when given (0 included); the new secret', async () => {
  const rotated = { body: { ...SUB, status: 'enabled', secret: 'whsec_new' } };
  const { market, fetch } = client([rotated, rotated, rotated]);
  const r = await market.webhooks.rotateSecret('we_1');
  await market.webhooks.rotateSecret('we_1', { expireOldIn: 0 });
  await market.webhooks.rotateSecret('we_1', { expireOldIn: 3600, idempotencyKey: 'rot-1' });
  const [a, b, c] = fetch.calls;
  assert.equal(line(a), 'POST http://api.test/v1/webhooks/we_1/rotate_secret');
  assert.equal(a.body, undefined);
  assert.equal(a.headers['Content-Type'], undefined);
  assert.match(a.headers['Idempotency-Key'], /^market-js-/);
  assert.equal(b.body, '{"expire_old_in":0}');
  assert.equal(b.headers['Content-Type'], 'application/json');
  assert.equal(c.body, '{"expire_old_in":3600}');
  assert.equal(c.headers['Idempotency-Key'], 'rot-1');
  assert.equal(r.secret, 'whsec_new');
  assert.equal(r.updatedAt, '2026-11-26T10:04:05Z');
});

test('webhooks.test: POST without a body, with a key; the webhook.test event (202)', async () => {
  const { market, fetch } = client([{ status: 202, body: TEST_EVENT }, { status: 202, body: TEST_EVENT }]);
  const ev = await market.webhooks.test('we_1');
  await market.webhooks.test('we_1', { idempotencyKey: 'test-1' });
  const [a, b] = fetch.calls;
  assert.equal(line(a), 'POST http://api.test/v1/webhooks/we_1/test');
  assert.equal(a.body, undefined);
  assert.equal(a.headers['Content-Type'], undefined);
  assert.match(a.headers['Idempotency-Key'], /^market-js-/);
  assert.equal(b.headers['Idempotency-Key'], 'test-1');
  assert.deepEqual(ev, { id: 'evt_t1', type: 'webhook.test', createdAt: '2026-11-26T10:04:05Z', livemode: false, data: { subscription: 'we_1' } });
  assert.equal(ev.lastResponse.status, 202);
  assert.throws(() => market.webhooks.test('we_1', { expireOldIn: 1 }), /webhooks\.test takes only idempotencyKey/);
});

test('update, delete, rotateSecret and test: a retry sends the same Idempotency-Key (and body)', async () => {
  const gone = { body: { id: 'we_1', object: 'webhook_subscription', deleted: true } };
  const calls = [
    ['update', (m) => m.webhooks.update('we_1', { disabled: true }), { body: SUB }],
    ['delete', (m) => m.webhooks.delete('we_1'), gone],
    ['rotateSecret', (m) => m.webhooks.rotateSecret('we_1', { expireOldIn: 60 }), { body: { ...SUB, secret: 'whsec_x' } }],
    ['test', (m) => m.webhooks.test('we_1'), { status: 202, body: TEST_EVENT }],
  ];
  for (const [name, run, answer] of calls) {
    // A lost answer (network failure), then a 503, then the answer.
    const { market, fetch, sleep } = client([networkError(), unavailable, answer]);
    const v = await run(market);
    assert.equal(fetch.calls.length, 3, `${name}: retried twice`);
    assert.equal(sleep.waits.length, 2);
    const keys = fetch.calls.map((c) => c.headers['Idempotency-Key']);
    assert.match(keys[0], /^market-js-[0-9a-f-]{36}$/, name);
    assert.deepEqual(keys, [keys[0], keys[0], keys[0]], `${name}: one key for every attempt`);
    assert.equal(new Set(fetch.calls.map((c) => c.body)).size, 1, `${name}: the same body`);
    assert.equal(new Set(fetch.calls.map(line)).size, 1);
    assert.equal(v.lastResponse.retries, 2);
    assert.equal(v.lastResponse.idempotencyKey, keys[0]);
  }
  // The caller's own key is the one retried.
  const { market, fetch } = client([networkError(), gone]);
  await market.webhooks.delete('we_1', { idempotencyKey: 'mine' });
  assert.deepEqual(fetch.calls.map((c) => c.headers['Idempotency-Key']), ['mine', 'mine']);
});

test('a DELETE whose connection drops is not retried without retries, and a 404 is not retried', async () => {
  const c1 = client([networkError()], { maxRetries: 0 });
  await assert.rejects(c1.market.webhooks.delete('we_1'), (e) => e.status === null);
  assert.equal(c1.fetch.calls.length, 1);
  const c2 = client([{ status: 404, body: errorBody('invalid_request_error', 'resource_missing', 'no such webhook subscription', 'id') }]);
  await assert.rejects(c2.market.webhooks.delete('we_1'), (e) => e instanceof NotFoundError && e.code === 'resource_missing' && e.param === 'id');
  assert.equal(c2.fetch.calls.length, 1);
  const c3 = client([{ status: 403, body: errorBody('permission_error', 'insufficient_scope') }]);
  await assert.rejects(c3.market.webhooks.list(), PermissionError);
});

test('events.list and events.all: type, created_gte, created_lt (Date or string), limit, cursor on every page', async () => {
  const ev = (n) => ({ id: `evt_${n}`, type: 'payout.sent', created_at: 'c', livemode: false, data: { payout: 'po', amount: 19.99, currency: 'USD' } });
  const { market, fetch } = client([page([ev(1)], 'p1'), page([ev(2), ev(3)], 'p2'), page([ev(4)], null), page([])]);
  const gte = new Date(Date.UTC(2026, 10, 26, 10, 4, 5, 120));
  const p = await market.events.list({ type: 'payout.sent', createdGte: gte, createdLt: '2026-11-27T00:00:00+01:00', limit: 1, cursor: 'p0' });
  assert.equal(p.nextCursor, 'p1');
  assert.deepEqual(p.data[0], { id: 'evt_1', type: 'payout.sent', createdAt: 'c', livemode: false, data: { payout: 'po', amount: '19.99', currency: 'USD' } });
  const seen = [];
  for await (const e of market.events.all({ type: 'webhook.test', createdGte: new Date(Date.UTC(2026, 10, 26)), limit: 2 })) seen.push(e.id);
  assert.deepEqual(seen, ['evt_2', 'evt_3', 'evt_4']);
  await market.events.list();
  assert.deepEqual(fetch.calls.map(line), [
    'GET http://api.test/v1/events?type=payout.sent&created_gte=2026-11-26T10%3A04%3A05.120Z&created_lt=2026-11-27T00%3A00%3A00%2B01%3A00&limit=1&cursor=p0',
    'GET http://api.test/v1/events?type=webhook.test&created_gte=2026-11-26T00%3A00%3A00Z&limit=2',
    'GET http://api.test/v1/events?type=webhook.test&created_gte=2026-11-26T00%3A00%3A00Z&limit=2&cursor=p2',
    'GET http://api.test/v1/events',
  ]);
  assert.ok(fetch.calls.every((c) => c.headers['Idempotency-Key'] === undefined));
  // Like every query value the client cannot write, refused before anything is sent.
  await assert.rejects(market.events.list({ createdLt: new Date('x') }), (e) => e instanceof TypeError && /createdLt is an invalid Date/.test(e.message));
  assert.equal(fetch.calls.length, 4);
});

test('events.get: the event with its deliveries, nulls kept, money exact', async () => {
  const body = '{"id":"evt_9","type":"sale.completed","created_at":"2026-11-26T10:04:05Z","livemode":true,'
    + '"data":{"order":"ord_1","product":"prod_1","tier":"tier_1","amount":90071992547409.93,"currency":"USD"},'
    + '"deliveries":[{"subscription":"we_1","status":"pending","attempts":0,"last_attempt_at":null,"last_status":null,"last_error":null},'
    + '{"subscription":"we_2","status":"failed","attempts":3,"last_attempt_at":"2026-11-26T10:04:12Z","last_status":null,"last_error":"subscription disabled"},'
    + '{"subscription":"we_3","status":"delivered","attempts":1,"last_attempt_at":"2026-11-26T10:04:06Z","last_status":204,"last_error":null}]}';
  const { market, fetch } = client([{ body }]);
  const ev = await market.events.get('evt_9');
  assert.equal(line(fetch.calls[0]), 'GET http://api.test/v1/events/evt_9');
  assert.deepEqual(ev, {
    id: 'evt_9', type: 'sale.completed', createdAt: '2026-11-26T10:04:05Z', livemode: true,
    data: { order: 'ord_1', product: 'prod_1', tier: 'tier_1', amount: '90071992547409.93', currency: 'USD' },
    deliveries: [
      { subscription: 'we_1', status: 'pending', attempts: 0, lastAttemptAt: null, lastStatus: null, lastError: null },
      { subscription: 'we_2', status: 'failed', attempts: 3, lastAttemptAt: '2026-11-26T10:04:12Z', lastStatus: null, lastError: 'subscription disabled' },
      { subscription: 'we_3', status: 'delivered', attempts: 1, lastAttemptAt: '2026-11-26T10:04:06Z', lastStatus: 204, lastError: null },
    ],
  });
  assert.equal(typeof ev.deliveries[2].lastStatus, 'number');
  assert.throws(() => market.events.get(''), TypeError);
});

test('events: every known type parses, and a type unknown to the client comes through as a generic map', () => {
  const text = '{"data":['
    + '{"id":"evt_1","type":"payout.sent","created_at":"c","livemode":false,"data":{"payout":"po_1","amount":1200,"currency":"JPY"}},'
    + '{"id":"evt_2","type":"review.created","created_at":"c","livemode":false,"data":{"review":"rev_1","product":"p","rating":5,"body":"b"}},'
    + '{"id":"evt_3","type":"webhook.test","created_at":"c","livemode":false,"data":{"subscription":"we_1"}},'
    + '{"id":"evt_4","type":"sale.refunded","created_at":"c","livemode":false,"data":{"order":"o","product":"p","tier":"t","amount":0.1,"currency":"USD"}},'
    + '{"id":"evt_5","type":"payout.failed","created_at":"c","livemode":false,"data":{"payout":"po_2","failure_code":"closed","retry_count":2,"nested_info":{"bank_name":"B"}}}'
    + '],"next_cursor":null}';
  const v = decode(text, EVENT_PAGE);
  assert.deepEqual(v.data.map((e) => e.data), [
    { payout: 'po_1', amount: '1200', currency: 'JPY' },
    { review: 'rev_1', product: 'p', rating: 5, body: 'b' },
    { subscription: 'we_1' },
    { order: 'o', product: 'p', tier: 't', amount: '0.1', currency: 'USD' },
    { payout: 'po_2', failureCode: 'closed', retryCount: 2, nestedInfo: { bankName: 'B' } },
  ]);
  assert.equal(v.data[4].type, 'payout.failed');
  // deliveries absent (a list item) or empty
  assert.deepEqual(decode('{"id":"e","type":"webhook.test","created_at":"c","livemode":false,"data":{"subscription":"we_1"},"deliveries":[]}', EVENT_WITH_DELIVERIES).deliveries, []);
});

test('the new resources keep the key out of sight', async () => {
  const { inspect } = await import('node:util');
  const { market } = client([]);
  const secretPart = KEY.slice('sk_test_'.length);
  for (const s of [inspect(market.events, { showHidden: true, depth: Infinity }), inspect(market.webhooks, { customInspect: false, showHidden: true, depth: Infinity }), JSON.stringify(market.events)]) {
    assert.ok(!s.includes(secretPart), s);
  }
  assert.equal(Object.isFrozen(market.events), true);
  assert.ok(Object.keys(market).includes('events'));
});
