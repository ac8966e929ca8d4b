// Managing webhook subscriptions and reading events against the real stack: list, the
// iterator, get, update (disabled), rotateSecret with its grace and with expireOldIn 0
// (deliveries to an HTTPS receiver of this test verified with verifyWebhook), test events
// found again through events.list, events.all and events.get, delete (and a DELETE whose
// answer is lost, retried with its key), and the errors: 404 after a delete, 403 for a
// read-only key, 400 for bad filters.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  Market, verifyWebhook, WebhookVerificationError, NotFoundError, PermissionError, InvalidRequestError,
} from '@markethq/market';
import {
  main, uniqueId, startReceiver, startProxy, waitFor, recordingFetch,
} from './lib.mjs';

const st = main();
const x = uniqueId();
const account = `acct_jsmg_${x}`;
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const WHSEC = /^whsec_[A-Za-z0-9+/]{43}=$/;
let rx;
let key;
let market;
let subA; // created first
let subB; // created second: newest
let secretB; // B's secret as creation showed it
let currentB; // B's secret after the rotations

/** The receiver's request for an event (by webhook-id), once it arrived. */
const deliveryOf = (eventId) => waitFor(
  () => rx.requests.find((r) => r.headers['webhook-id'] === eventId),
  { timeout: 30000, message: `the delivery of ${eventId}` },
);

/** events.get of an event once its first delivery has left `pending`. */
const settled = (eventId) => waitFor(async () => {
  const ev = await market.events.get(eventId);
  return ev.deliveries.length > 0 && ev.deliveries[0].status !== 'pending' ? ev : null;
}, { timeout: 30000, interval: 200, message: `the delivery of ${eventId} to settle` });

const refused = (e) => {
  assert.ok(e instanceof WebhookVerificationError, `${e}`);
  assert.equal(e.code, 'no_matching_signature');
  return true;
};

before(async () => {
  st.importDoc({ mode: 'test', accounts: [{ id: account }] });
  rx = await startReceiver();
  key = st.newKey(account);
  market = new Market({ apiKey: key, baseUrl: st.baseUrl });
  subA = await market.webhooks.create({ url: rx.url('/a'), events: ['sale.completed'], description: 'A' });
  subB = await market.webhooks.create({ url: rx.url('/b'), description: 'B' });
  secretB = subB.secret;
});

after(() => rx?.close());

test('webhooks.list: both subscriptions, newest first, without secrets; get shows the same object', async () => {
  const page = await market.webhooks.list();
  assert.deepEqual(page.data.map((s) => s.id), [subB.id, subA.id]);
  assert.equal(page.nextCursor, null);
  assert.equal(page.lastResponse.status, 200);
  const [b, a] = page.data;
  assert.deepEqual(Object.keys(a), ['id', 'object', 'url', 'events', 'description', 'status', 'livemode', 'createdAt', 'updatedAt']);
  assert.deepEqual(a, {
    id: subA.id, object: 'webhook_subscription', url: rx.url('/a'), events: ['sale.completed'], description: 'A',
    status: 'enabled', livemode: false, createdAt: subA.createdAt, updatedAt: a.updatedAt,
  });
  assert.match(a.updatedAt, RFC3339);
  assert.equal(b.secret, undefined, 'the secret is never shown again');
  assert.deepEqual(b.events, ['sale.completed', 'sale.refunded', 'review.created', 'payout.sent']);

  const one = await market.webhooks.get(subA.id);
  assert.deepEqual(one, a);

  const first = await market.webhooks.list({ limit: 1 });
  assert.deepEqual(first.data.map((s) => s.id), [subB.id]);
  assert.equal(typeof first.nextCursor, 'string');
  const second = await market.webhooks.list({ limit: 1, cursor: first.nextCursor });
  assert.deepEqual(second.data.map((s) => s.id), [subA.id]);
});

test('webhooks.all with limit 1 walks both, newest first, a request per page', async () => {
  const fetch = recordingFetch();
  const m = new Market({ apiKey: key, baseUrl: st.baseUrl, fetch });
  const seen = [];
  for await (const s of m.webhooks.all({ limit: 1 })) seen.push(s.id);
  assert.deepEqual(seen, [subB.id, subA.id]);
  assert.equal(fetch.log.length, 2);
  assert.ok(fetch.log.every((r) => r.url.includes('limit=1')));
  assert.match(fetch.log[1].url, /[?&]cursor=/);
});

test('webhooks.update: description and disabled; status "disabled", updatedAt the time of the change; {} changes nothing', async () => {
  const before = Math.floor(Date.now() / 1000) * 1000;
  const off = await market.webhooks.update(subA.id, { description: 'A, paused', disabled: true });
  assert.equal(off.id, subA.id);
  assert.equal(off.status, 'disabled');
  assert.equal(off.description, 'A, paused');
  assert.equal(off.url, rx.url('/a'), 'fields not given keep their value');
  assert.deepEqual(off.events, ['sale.completed']);
  assert.equal(off.createdAt, subA.createdAt);
  assert.match(off.updatedAt, RFC3339);
  const updated = Date.parse(off.updatedAt);
  assert.ok(updated >= before && updated <= Date.now(), `updatedAt ${off.updatedAt} is the time of the change`);
  assert.equal(off.lastResponse.status, 200);
  assert.match(off.lastResponse.idempotencyKey, /^market-js-/);
  assert.deepEqual(await market.webhooks.get(subA.id), off);

  const same = await market.webhooks.update(subA.id);
  assert.equal(same.status, 'disabled');
  assert.equal(same.description, 'A, paused');

  const events = await market.webhooks.update(subA.id, { events: ['payout.sent', 'sale.completed'] });
  assert.deepEqual(events.events, ['sale.completed', 'payout.sent']);
  assert.equal(events.status, 'disabled');
});

test('a test event for a disabled subscription is recorded and its delivery ended unsent', async () => {
  const ev = await market.webhooks.test(subA.id);
  assert.equal(ev.type, 'webhook.test');
  assert.deepEqual(ev.data, { subscription: subA.id });
  const got = await settled(ev.id);
  assert.deepEqual(got.deliveries, [{
    subscription: subA.id, status: 'failed', attempts: got.deliveries[0].attempts, lastAttemptAt: got.deliveries[0].lastAttemptAt,
    lastStatus: null, lastError: 'subscription disabled',
  }]);
  assert.ok(!rx.requests.some((r) => r.headers['webhook-id'] === ev.id), 'nothing was sent');
  // Enabled again, it receives.
  const on = await market.webhooks.update(subA.id, { disabled: false });
  assert.equal(on.status, 'enabled');
});

test('rotateSecret: a new secret; during the grace a delivery verifies with the new and the old one', async () => {
  const r = await market.webhooks.rotateSecret(subB.id);
  assert.match(r.secret, WHSEC);
  assert.notEqual(r.secret, secretB);
  assert.equal(r.id, subB.id);
  assert.equal(r.status, 'enabled');
  assert.match(r.updatedAt, RFC3339);
  assert.equal(r.lastResponse.status, 200);
  assert.equal((await market.webhooks.get(subB.id)).secret, undefined);

  const ev = await market.webhooks.test(subB.id);
  const d = await deliveryOf(ev.id);
  assert.equal(d.path, '/b');
  assert.equal(d.headers['webhook-signature'].split(' ').length, 2, 'two signatures during the grace');
  const withNew = verifyWebhook(d.body, d.headers, r.secret);
  const withOld = verifyWebhook(d.body, d.headers, secretB);
  assert.deepEqual(withNew, { id: ev.id, type: 'webhook.test', createdAt: ev.createdAt, livemode: false, data: { subscription: subB.id } });
  assert.deepEqual(withOld, withNew);
  const stranger = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
  assert.throws(() => verifyWebhook(d.body, d.headers, stranger), refused);

  // expireOldIn 0 ends the old secret at once: the next delivery verifies with the newest
  // secret only.
  const r2 = await market.webhooks.rotateSecret(subB.id, { expireOldIn: 0, idempotencyKey: `js-rot-${x}` });
  assert.match(r2.secret, WHSEC);
  assert.notEqual(r2.secret, r.secret);
  const replay = await market.webhooks.rotateSecret(subB.id, { expireOldIn: 0, idempotencyKey: `js-rot-${x}` });
  assert.equal(replay.secret, r2.secret, 'the replay shows the same secret');
  assert.equal(replay.lastResponse.idempotentReplayed, true);

  const ev2 = await market.webhooks.test(subB.id);
  const d2 = await deliveryOf(ev2.id);
  assert.equal(d2.headers['webhook-signature'].split(' ').length, 1, 'one signature');
  assert.equal(verifyWebhook(d2.body, d2.headers, r2.secret).id, ev2.id);
  assert.throws(() => verifyWebhook(d2.body, d2.headers, r.secret), refused);
  assert.throws(() => verifyWebhook(d2.body, d2.headers, secretB), refused);
  currentB = r2.secret;
});

test('webhooks.test: the event it answers is found by events.list, events.all (createdGte) and events.get', async () => {
  const t0 = new Date(); // just before the test event
  const ev = await market.webhooks.test(subB.id, { idempotencyKey: `js-test-${x}` });
  assert.match(ev.id, /^evt_/);
  assert.equal(ev.type, 'webhook.test');
  assert.equal(ev.livemode, false);
  assert.match(ev.createdAt, RFC3339);
  assert.deepEqual(ev.data, { subscription: subB.id });
  assert.equal(ev.lastResponse.status, 202);
  const again = await market.webhooks.test(subB.id, { idempotencyKey: `js-test-${x}` });
  assert.equal(again.id, ev.id, 'a replay answers the same event');
  assert.equal(again.lastResponse.idempotentReplayed, true);

  // The delivery arrives and is the same event.
  const d = await deliveryOf(ev.id);
  const delivered = verifyWebhook(d.body, d.headers, currentB);
  assert.deepEqual(delivered, { id: ev.id, type: ev.type, createdAt: ev.createdAt, livemode: ev.livemode, data: ev.data });

  // events.list with the type: newest first, so this one first.
  const page = await market.events.list({ type: 'webhook.test' });
  assert.equal(page.data[0].id, ev.id);
  assert.deepEqual(page.data[0], delivered);
  assert.ok(page.data.every((e) => e.type === 'webhook.test'));
  assert.ok(page.data.length >= 4, 'the earlier test events too');

  // created_gte just before the test: this event only (its replay queued nothing).
  const since = [];
  for await (const e of market.events.all({ type: 'webhook.test', createdGte: t0, limit: 1 })) since.push(e.id);
  assert.deepEqual(since, [ev.id]);
  const sinceAny = [];
  for await (const e of market.events.all({ createdGte: t0.toISOString() })) sinceAny.push(e.id);
  assert.deepEqual(sinceAny, [ev.id], 'a string goes through as it is');
  // created_lt the same time: every earlier test event, not this one.
  const earlier = [];
  for await (const e of market.events.all({ createdLt: t0, limit: 2 })) earlier.push(e.id);
  assert.ok(earlier.length >= 3);
  assert.ok(!earlier.includes(ev.id));

  // events.get: the event with its delivery, once delivered.
  const got = await settled(ev.id);
  assert.equal(got.id, ev.id);
  assert.equal(got.type, 'webhook.test');
  assert.deepEqual(got.data, { subscription: subB.id });
  assert.equal(got.deliveries.length, 1);
  const [del] = got.deliveries;
  assert.equal(del.subscription, subB.id);
  assert.equal(del.status, 'delivered');
  assert.equal(del.attempts, 1);
  assert.match(del.lastAttemptAt, RFC3339);
  assert.equal(del.lastStatus, 204);
  assert.equal(del.lastError, null);
});

test('webhooks.delete: deleted true, the replay of its key too; then get is a NotFoundError', async () => {
  const k = `js-del-${x}`;
  const del = await market.webhooks.delete(subA.id, { idempotencyKey: k });
  assert.deepEqual(del, { id: subA.id, object: 'webhook_subscription', deleted: true });
  assert.equal(del.lastResponse.idempotencyKey, k);
  const replay = await market.webhooks.delete(subA.id, { idempotencyKey: k });
  assert.deepEqual(replay, del);
  assert.equal(replay.lastResponse.idempotentReplayed, true);
  const expect404 = (e) => {
    assert.ok(e instanceof NotFoundError, `${e}`);
    assert.equal(e.status, 404);
    assert.equal(e.code, 'resource_missing');
    assert.equal(e.param, 'id');
    return true;
  };
  await assert.rejects(market.webhooks.get(subA.id), expect404);
  await assert.rejects(market.webhooks.delete(subA.id), expect404, 'a second DELETE with another key');
  await assert.rejects(market.webhooks.update(subA.id, { disabled: true }), expect404);
  await assert.rejects(market.webhooks.rotateSecret(subA.id), expect404);
  await assert.rejects(market.webhooks.test(subA.id), expect404);
  assert.deepEqual((await market.webhooks.list()).data.map((s) => s.id), [subB.id]);
});

test('a DELETE whose answer is lost is sent again with the same key: the replay, not a 404', async () => {
  const proxy = await startProxy(st.baseUrl);
  try {
    const sub = await market.webhooks.create({ url: rx.url('/c'), events: ['payout.sent'] });
    const m = new Market({ apiKey: key, baseUrl: proxy.url, sleep: async () => {} });
    proxy.dropNext((r) => r.method === 'DELETE');
    const del = await m.webhooks.delete(sub.id);
    assert.equal(proxy.dropped, 1);
    const sent = proxy.requests.filter((r) => r.method === 'DELETE');
    assert.equal(sent.length, 2);
    assert.match(sent[0].headers['idempotency-key'], /^market-js-/);
    assert.equal(sent[1].headers['idempotency-key'], sent[0].headers['idempotency-key']);
    assert.deepEqual(del, { id: sub.id, object: 'webhook_subscription', deleted: true });
    assert.equal(del.lastResponse.retries, 1);
    assert.equal(del.lastResponse.idempotentReplayed, true);
    await assert.rejects(market.webhooks.get(sub.id), NotFoundError);
  } finally {
    await proxy.close();
  }
});

test('errors: a read-only key gets a PermissionError; an unknown event a NotFoundError; bad filters InvalidRequestErrors', async () => {
  const ro = new Market({ apiKey: st.newKey(account, 'read-only'), baseUrl: st.baseUrl });
  const forbidden = (e) => {
    assert.ok(e instanceof PermissionError, `${e}`);
    assert.equal(e.status, 403);
    assert.equal(e.code, 'insufficient_scope');
    assert.equal(e.type, 'permission_error');
    return true;
  };
  await assert.rejects(ro.webhooks.list(), forbidden);
  await assert.rejects(ro.events.list(), forbidden);
  await assert.rejects(ro.webhooks.rotateSecret(subB.id), forbidden);

  await assert.rejects(market.events.get(`evt_nope${x}`), (e) => e instanceof NotFoundError && e.code === 'resource_missing');
  const invalid = (param) => (e) => {
    assert.ok(e instanceof InvalidRequestError, `${e}`);
    assert.equal(e.code, 'parameter_invalid');
    assert.equal(e.param, param);
    return true;
  };
  await assert.rejects(market.events.list({ type: 'sale.created' }), invalid('type'));
  await assert.rejects(market.events.list({ createdGte: 'yesterday' }), invalid('created_gte'));
  await assert.rejects(market.events.list({ createdLt: '2026-02-30T00:00:00Z' }), invalid('created_lt'));
  await assert.rejects(market.webhooks.rotateSecret(subB.id, { expireOldIn: 604801 }), invalid('expire_old_in'));
  await assert.rejects(market.webhooks.update(subB.id, { disabled: 'yes' }), invalid('disabled'));
});
