// Managing webhook subscriptions (docs/contract.md section 13): list, read, change and
// delete, through the API, with the stack's real drainer and a real HTTPS receiver for
// what deleting and disabling mean for deliveries. Events are payouts recorded with
// market-admin (contract section 9).
//
// Needs MARKET_WEBHOOK_ALLOW_PRIVATE=1 and short MARKET_WEBHOOK_RETRIES (tests/e2e/run).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { admin, api, importDoc, newKey, psql, uniqueId } from './lib/stack.mjs';
import { assertError, assertInvalid, RFC3339, sleep } from './fixtures/expect.mjs';
import { failsWith, startReceiver, verifyDelivery } from './fixtures/webhook_receiver.mjs';

const KINDS = ['sale.completed', 'sale.refunded', 'review.created', 'payout.sent'];
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const OBJECT_KEYS = ['id', 'object', 'url', 'events', 'description', 'status', 'livemode', 'created_at', 'updated_at'];
const x = uniqueId('');
let rx;

/** A fresh account with a seller (for payouts) and its keys. */
function newSellerAccount(tag) {
  const account = `acct_wm${tag}_${x}`;
  const seller = `wm${tag}-${x}`;
  importDoc({ mode: 'test', accounts: [{ id: account }], sellers: [{ id: seller, account, name: `Seller ${tag}` }] });
  return {
    account,
    seller,
    key: newKey({ account }),
    readOnly: newKey({ account, access: 'read-only' }),
    live: newKey({ account, mode: 'live' }),
  };
}

async function subscribe(key, body) {
  const r = await api('/v1/webhooks', { key, method: 'POST', body });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

const get = (key, path) => api(path, { key });
const change = (key, id, body, headers = {}) => api(`/v1/webhooks/${id}`, { key, method: 'POST', body, headers });
const remove = (key, id, headers = {}) => api(`/v1/webhooks/${id}`, { key, method: 'DELETE', headers });

function payout(seller) {
  return admin(['payout', '--seller', seller, '--amount', '1.00', '--currency', 'USD', '--mode', 'test']).trim();
}

/** The deliveries of an event, by subscription: {status, attempts, last_error}. */
function deliveriesOf(eventId) {
  const out = {};
  const rows = psql(`SELECT d.subscription_id, d.status, d.attempts, coalesce(d.last_error, '')
                       FROM webhook_deliveries d WHERE d.event_id = '${eventId}'`);
  for (const line of rows.split('\n').filter(Boolean)) {
    const [sub, status, attempts, lastError] = line.split('|');
    out[sub] = { status, attempts: Number(attempts), lastError };
  }
  return out;
}

/** The event of a payout, found by the payout's id in its body. */
function eventOfPayout(payoutId) {
  return psql(`SELECT id FROM events WHERE type = 'payout.sent' AND body LIKE '%${payoutId}%'`);
}

before(async () => {
  rx = await startReceiver();
});
after(async () => {
  await rx?.close();
});

test('list, read and change: the subscription object, newest first, cursor pages', async () => {
  const a = newSellerAccount('l');
  const made = [];
  for (let i = 0; i < 5; i++) made.push(await subscribe(a.key, { url: rx.url(`/list-${i}`), description: `n${i}` }));

  const one = await get(a.key, `/v1/webhooks/${made[2].id}`);
  assert.equal(one.status, 200, one.text);
  assert.deepEqual(Object.keys(one.json), OBJECT_KEYS);
  assert.equal(one.json.id, made[2].id);
  assert.equal(one.json.object, 'webhook_subscription');
  assert.equal(one.json.url, made[2].url);
  assert.deepEqual(one.json.events, KINDS);
  assert.equal(one.json.description, 'n2');
  assert.equal(one.json.status, 'enabled');
  assert.equal(one.json.livemode, false);
  assert.equal(one.json.created_at, made[2].created_at);
  assert.match(one.json.updated_at, RFC3339);
  assert.equal(one.json.secret, undefined, 'the secret is never shown again');

  // Pages of 2: all five, newest first, each once.
  const seen = [];
  let url = '/v1/webhooks?limit=2';
  for (let pages = 0; ; pages++) {
    assert.ok(pages < 5, 'the walk ends');
    const r = await get(a.key, url);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.json).sort(), ['data', 'next_cursor']);
    assert.ok(r.json.data.length <= 2);
    for (const s of r.json.data) assert.deepEqual(Object.keys(s), OBJECT_KEYS);
    seen.push(...r.json.data.map((s) => s.id));
    if (r.json.next_cursor === null) break;
    url = `/v1/webhooks?limit=2&cursor=${r.json.next_cursor}`;
  }
  assert.deepEqual(seen, made.map((s) => s.id).reverse());

  // A change: only the fields given; the rest stays.
  const c = await change(a.key, made[0].id, {
    url: rx.url('/moved'), events: ['payout.sent', 'sale.completed', 'payout.sent'], description: 'moved',
  });
  assert.equal(c.status, 200, c.text);
  assert.deepEqual(Object.keys(c.json), OBJECT_KEYS);
  assert.equal(c.json.url, rx.url('/moved'));
  assert.deepEqual(c.json.events, ['sale.completed', 'payout.sent'], 'duplicates dropped, canonical order');
  assert.equal(c.json.description, 'moved');
  assert.equal(c.json.status, 'enabled');
  assert.ok(Date.parse(c.json.updated_at) >= Date.parse(made[0].created_at));
  const d = await change(a.key, made[0].id, { disabled: true });
  assert.equal(d.json.status, 'disabled');
  assert.equal(d.json.url, rx.url('/moved'), 'a field not given keeps its value');
  assert.deepEqual(d.json.events, ['sale.completed', 'payout.sent']);
  assert.equal((await change(a.key, made[0].id, { disabled: false })).json.status, 'enabled');
  const before = (await get(a.key, `/v1/webhooks/${made[0].id}`)).json.updated_at;
  await new Promise((resolve) => setTimeout(resolve, 1100)); // updated_at shows whole seconds
  const same = await change(a.key, made[0].id, {});
  assert.deepEqual(same.json.events, ['sale.completed', 'payout.sent']);
  assert.equal(same.json.updated_at, before, '{} changes nothing, updated_at included');
  const again = await change(a.key, made[0].id, { description: 'moved', disabled: false });
  assert.equal(again.json.updated_at, before, 'the same values change nothing either');
  const moved = await change(a.key, made[0].id, { description: 'moved again' });
  assert.ok(Date.parse(moved.json.updated_at) > Date.parse(before), 'a real change moves updated_at');
  assert.deepEqual((await get(a.key, `/v1/webhooks/${made[0].id}`)).json.events, ['sale.completed', 'payout.sent']);
});

test('another account, the other mode, a deleted one: 404 and never listed; scopes and methods', async () => {
  const a = newSellerAccount('o');
  const b = newSellerAccount('p');
  const mine = await subscribe(a.key, { url: rx.url('/mine') });
  const theirs = await subscribe(b.key, { url: rx.url('/theirs') });
  const live = await subscribe(a.live, { url: rx.url('/live') });
  for (const [key, id] of [[a.key, theirs.id], [a.key, live.id], [a.live, mine.id], [a.key, 'we_nosuch'], [a.key, 'nope']]) {
    assertError(await get(key, `/v1/webhooks/${id}`), 404, 'invalid_request_error', 'resource_missing', 'id');
    assertError(await change(key, id, { description: 'x' }), 404, 'invalid_request_error', 'resource_missing', 'id');
    assertError(await remove(key, id), 404, 'invalid_request_error', 'resource_missing', 'id');
  }
  assert.deepEqual((await get(a.key, '/v1/webhooks')).json.data.map((s) => s.id), [mine.id]);
  assert.deepEqual((await get(a.live, '/v1/webhooks')).json.data.map((s) => s.id), [live.id]);
  assert.equal((await get(b.key, `/v1/webhooks/${theirs.id}`)).json.description, '', 'untouched by the other account');

  // A read-only key lacks webhooks:read (and webhooks:write).
  const ro = (res, scope) => {
    const e = assertError(res, 403, 'permission_error', 'insufficient_scope');
    assert.match(e.message, new RegExp(scope));
  };
  ro(await get(a.readOnly, '/v1/webhooks'), 'webhooks:read');
  ro(await get(a.readOnly, `/v1/webhooks/${mine.id}`), 'webhooks:read');
  ro(await change(a.readOnly, mine.id, { description: 'x' }), 'webhooks:write');
  ro(await remove(a.readOnly, mine.id), 'webhooks:write');
  // 404 before 403: an unknown route is 404 whatever the key.
  assertError(await get(a.readOnly, '/v1/webhooks/we_1/nope'), 404, 'invalid_request_error', 'route_not_found');

  // Other methods: 405 naming every method of the path.
  const put = await api(`/v1/webhooks/${mine.id}`, { key: a.key, method: 'PUT', body: {} });
  assertError(put, 405, 'invalid_request_error', 'method_not_allowed');
  assert.equal(put.headers.get('allow'), 'GET, POST, DELETE');
  const del = await api('/v1/webhooks', { key: a.key, method: 'DELETE' });
  assertError(del, 405, 'invalid_request_error', 'method_not_allowed');
  assert.equal(del.headers.get('allow'), 'GET, POST');

  // Delete: the answer, then 404 everywhere, gone from the list.
  const r = await remove(a.key, mine.id);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json, { id: mine.id, object: 'webhook_subscription', deleted: true });
  assertError(await remove(a.key, mine.id), 404, 'invalid_request_error', 'resource_missing', 'id');
  assertError(await get(a.key, `/v1/webhooks/${mine.id}`), 404, 'invalid_request_error', 'resource_missing', 'id');
  assertError(await change(a.key, mine.id, { disabled: false }), 404, 'invalid_request_error', 'resource_missing', 'id');
  assert.deepEqual((await get(a.key, '/v1/webhooks')).json.data, []);
});

test('input rules of a change, and Idempotency-Key on changes and deletes', async () => {
  const a = newSellerAccount('i');
  const s = await subscribe(a.key, { url: rx.url('/rules') });
  assertInvalid(await change(a.key, s.id, { secret: 'x' }), 'parameter_unknown', 'secret');
  assertInvalid(await change(a.key, s.id, { url: 'http://example.com/' }), 'url_not_https', 'url');
  assertInvalid(await change(a.key, s.id, { url: 'https://' }), 'parameter_invalid', 'url');
  assertInvalid(await change(a.key, s.id, { url: 42 }), 'parameter_invalid', 'url');
  assertInvalid(await change(a.key, s.id, { events: [] }), 'parameter_invalid', 'events');
  assertInvalid(await change(a.key, s.id, { events: ['sale.exploded'] }), 'parameter_invalid', 'events');
  assertInvalid(await change(a.key, s.id, { description: 'x'.repeat(501) }), 'parameter_invalid', 'description');
  assertInvalid(await change(a.key, s.id, { disabled: 'yes' }), 'parameter_invalid', 'disabled');
  assertInvalid(await change(a.key, s.id, { disabled: null }), 'parameter_invalid', 'disabled');
  const notJson = await api(`/v1/webhooks/${s.id}`, {
    key: a.key, method: 'POST', body: 'disabled=true', headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assertError(notJson, 415, 'invalid_request_error', 'unsupported_media_type');
  assertInvalid(await api(`/v1/webhooks/${s.id}?x=1`, { key: a.key }), 'parameter_unknown', 'x');
  // Several faults: the route table's order, query, then path, then the body's fields in
  // their declared order (url, events, description, disabled), whatever the body's order.
  assertInvalid(await api('/v1/webhooks/nope?x=1', { key: a.key, method: 'POST', body: { bogus: 1 } }),
    'parameter_unknown', 'x');
  assertError(await change(a.key, 'nope', { bogus: 1 }), 404, 'invalid_request_error', 'resource_missing');
  const several = await change(a.key, s.id, { disabled: 'yes', description: 5, events: [], url: 'http://example.com/' });
  assert.equal(assertInvalid(several, 'url_not_https', 'url').message, 'url must use https');
  const later = await change(a.key, s.id, { disabled: 'yes', description: 'a\tb', events: ['x'] });
  assert.equal(assertInvalid(later, 'parameter_invalid', 'events').message,
    'events[0] is not an event kind: use sale.completed, sale.refunded, review.created or payout.sent');
  const last = await change(a.key, s.id, { disabled: 'yes', description: 'a\tb' });
  assert.equal(assertInvalid(last, 'parameter_invalid', 'description').message,
    'description must not contain control characters');
  // Nothing changed by the refusals.
  const now = (await get(a.key, `/v1/webhooks/${s.id}`)).json;
  assert.equal(now.url, s.url);
  assert.equal(now.status, 'enabled');

  // The same key and body replays; another body is 409.
  const idem = { 'Idempotency-Key': `chg-${x}` };
  const first = await change(a.key, s.id, { description: 'once' }, idem);
  assert.equal(first.status, 200, first.text);
  await change(a.key, s.id, { description: 'meanwhile' });
  const replay = await change(a.key, s.id, { description: 'once' }, idem);
  assert.equal(replay.status, 200);
  assert.equal(replay.text, first.text, 'the first answer, replayed');
  assert.equal((await get(a.key, `/v1/webhooks/${s.id}`)).json.description, 'meanwhile', 'the replay changed nothing');
  assertError(await change(a.key, s.id, { description: 'other' }, idem), 409, 'invalid_request_error', 'idempotency_conflict');
  const delIdem = { 'Idempotency-Key': `del-${x}` };
  const gone = await remove(a.key, s.id, delIdem);
  assert.equal(gone.status, 200, gone.text);
  const again = await remove(a.key, s.id, delIdem);
  assert.equal(again.status, 200, 'a retried DELETE with its key replays the answer');
  assert.equal(again.text, gone.text);
});

test('the limit of 16 counts subscriptions not deleted: deleting one makes room', async () => {
  const a = newSellerAccount('n');
  const subs = [];
  for (let i = 0; i < 16; i++) subs.push(await subscribe(a.key, { url: rx.url(`/n${i}`) }));
  assertInvalid(await api('/v1/webhooks', { key: a.key, method: 'POST', body: { url: rx.url('/n16') } }),
    'subscription_limit_reached', null);
  await change(a.key, subs[3].id, { disabled: true });
  assertInvalid(await api('/v1/webhooks', { key: a.key, method: 'POST', body: { url: rx.url('/n16') } }),
    'subscription_limit_reached', null);
  assert.equal((await remove(a.key, subs[3].id)).status, 200);
  await subscribe(a.key, { url: rx.url('/n16') });
});

test('deleting takes effect at once: pending deliveries end as endpoint_deleted, unsent', async () => {
  const a = newSellerAccount('d');
  rx.route('/del-retry', () => 500);
  const retrying = await subscribe(a.key, { url: rx.url('/del-retry'), events: ['payout.sent'] });
  const leased = await subscribe(a.key, { url: rx.url('/del-leased'), events: ['payout.sent'] });
  const kept = await subscribe(a.key, { url: rx.url('/del-kept'), events: ['payout.sent'] });

  // A lease held by a drainer that stalled before its send (no send_started_at): the
  // delivery must not be sent once the subscription is deleted, whoever holds it.
  psql(`UPDATE webhook_subscriptions SET status = 'disabled' WHERE id = '${leased.id}'`);
  const event = eventOfPayout(payout(a.seller));
  psql(`UPDATE webhook_subscriptions SET status = 'enabled' WHERE id = '${leased.id}'`);
  psql(`INSERT INTO webhook_deliveries (event_id, subscription_id, attempts, lease_until, leased_by)
        VALUES ('${event}', '${leased.id}', 1, now() + interval '1 hour', 'stalled-drainer')`);
  // The retrying one fails its first attempt and waits for its retry.
  await rx.waitFor((reqs) => reqs.some((q) => q.path === '/del-retry'), 'the first attempt');
  await rx.waitFor((reqs) => reqs.some((q) => q.path === '/del-kept'), 'the kept subscription gets it');
  await retryIn(event, retrying.id, 2);

  for (const s of [retrying, leased]) assert.equal((await remove(a.key, s.id)).status, 200);
  const deletedAt = Date.now();
  const d = deliveriesOf(event);
  assert.equal(d[retrying.id].status, 'endpoint_deleted');
  assert.equal(d[leased.id].status, 'endpoint_deleted', 'ended even under another drainer\'s lease');
  assert.equal(d[kept.id].status, 'delivered');

  // Events after the answer: none queued for the deleted ones, the kept one gets it.
  const later = eventOfPayout(payout(a.seller));
  await rx.waitFor((reqs) => reqs.some((q) => q.path === '/del-kept' && q.headers['webhook-id'] === later), 'the later event');
  assert.deepEqual(Object.keys(deliveriesOf(later)), [kept.id]);
  // Past the retry schedule's first delays: nothing more reached the deleted ones.
  await sleep(3500);
  assert.ok(!rx.requests.some((q) => q.path === '/del-retry' && q.at > deletedAt), 'no retry after the DELETE');
  assert.equal(rx.to('/del-leased').length, 0, 'never sent');
  assert.equal(deliveriesOf(event)[retrying.id].status, 'endpoint_deleted', 'the drainer left it ended');
});

test('a delivery queued for a subscription deleted meanwhile is ended by the drainer, unsent', async () => {
  // What the drainer sees when an event committed alongside a DELETE queued a delivery
  // for it: the claim finds the subscription deleted, and the delivery ends unsent.
  const a = newSellerAccount('q');
  const s = await subscribe(a.key, { url: rx.url('/queued'), events: ['payout.sent'] });
  const other = await subscribe(a.key, { url: rx.url('/queued-other'), events: ['payout.sent'] });
  const event = eventOfPayout(payout(a.seller));
  await rx.waitFor((reqs) => reqs.some((q) => q.path === '/queued-other'), 'the event reached the other');
  assert.equal((await remove(a.key, s.id)).status, 200);
  psql(`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), attempts = 0,
          delivered_at = NULL, lease_until = NULL, leased_by = NULL
        WHERE event_id = '${event}' AND subscription_id = '${s.id}'`);
  psql("NOTIFY market_webhooks");
  const sentBefore = rx.to('/queued').length;
  await waitForStatus(event, s.id, 'endpoint_deleted');
  assert.equal(rx.to('/queued').length, sentBefore, 'not sent again');
  assert.equal(deliveriesOf(event)[other.id].status, 'delivered');
});

test('disabling takes effect at once: nothing queued, a pending retry is not sent', async () => {
  const a = newSellerAccount('x');
  rx.route('/dis-retry', () => 500);
  const s = await subscribe(a.key, { url: rx.url('/dis-retry'), events: ['payout.sent'] });
  const event = eventOfPayout(payout(a.seller));
  await rx.waitFor((reqs) => reqs.some((q) => q.path === '/dis-retry'), 'the first attempt');
  await retryIn(event, s.id, 2);
  assert.equal((await change(a.key, s.id, { disabled: true })).json.status, 'disabled');
  const disabledAt = Date.now();
  const later = eventOfPayout(payout(a.seller));
  assert.deepEqual(deliveriesOf(later), {}, 'nothing queued while disabled');
  await waitForStatus(event, s.id, 'failed');
  assert.equal(deliveriesOf(event)[s.id].lastError, 'subscription disabled');
  assert.ok(!rx.requests.some((q) => q.path === '/dis-retry' && q.at > disabledAt), 'no send after the answer');
  // Enabled again: later events reach it.
  await change(a.key, s.id, { disabled: false });
  rx.route('/dis-retry', () => 204);
  const third = eventOfPayout(payout(a.seller));
  await rx.waitFor((reqs) => reqs.some((q) => q.path === '/dis-retry' && q.headers['webhook-id'] === third), 'enabled again');
});

/** Once the failed first attempt is recorded (pending, no lease: no send in flight), its
 * retry is put `seconds` from now, so that what the test does next comes before it. */
async function retryIn(event, sub, seconds) {
  const until = Date.now() + 15000;
  while (psql(`SELECT count(*) FROM webhook_deliveries WHERE event_id = '${event}'
                 AND subscription_id = '${sub}' AND status = 'pending' AND attempts >= 1
                 AND leased_by IS NULL`) !== '1') {
    if (Date.now() > until) assert.fail(`the first attempt of ${event} to ${sub} was not recorded`);
    await sleep(50);
  }
  psql(`UPDATE webhook_deliveries SET next_attempt_at = now() + interval '${seconds} seconds'
         WHERE event_id = '${event}' AND subscription_id = '${sub}'`);
}

/** The next delivery of a payout to path: makes one and waits for it. */
async function nextDelivery(seller, path) {
  const event = eventOfPayout(payout(seller));
  await rx.waitFor((reqs) => reqs.some((q) => q.path === path && q.headers['webhook-id'] === event), `the delivery of ${event}`);
  return rx.requests.find((q) => q.path === path && q.headers['webhook-id'] === event);
}

test('rotating a secret: shown once, both sign during the grace, expire_old_in 0 ends the old one', async () => {
  const a = newSellerAccount('r');
  const s = await subscribe(a.key, { url: rx.url('/rot'), events: ['payout.sent'] });
  const rotate = (body, headers = {}) => api(`/v1/webhooks/${s.id}/rotate_secret`, { key: a.key, method: 'POST', body, headers });

  const r1 = await rotate();
  assert.equal(r1.status, 200, r1.text);
  assert.deepEqual(Object.keys(r1.json), ['id', 'object', 'url', 'events', 'description', 'status', 'livemode', 'secret', 'created_at', 'updated_at']);
  assert.match(r1.json.secret, SECRET);
  assert.notEqual(r1.json.secret, s.secret);
  assert.equal((await get(a.key, `/v1/webhooks/${s.id}`)).json.secret, undefined, 'never shown again');
  // During the grace: two signatures, each secret verifies (the standardwebhooks library
  // and by hand), a third does not.
  const during = await nextDelivery(a.seller, '/rot');
  assert.equal(during.headers['webhook-signature'].split(' ').length, 2, during.headers['webhook-signature']);
  verifyDelivery(r1.json.secret, during);
  verifyDelivery(s.secret, during);
  assert.ok(failsWith('whsec_' + Buffer.alloc(32, 7).toString('base64'), during));

  // expire_old_in: 0 ends the old one at once: one signature, the new secret's.
  const r2 = await rotate({ expire_old_in: 0 });
  assert.equal(r2.status, 200, r2.text);
  const after = await nextDelivery(a.seller, '/rot');
  assert.equal(after.headers['webhook-signature'].split(' ').length, 1);
  verifyDelivery(r2.json.secret, after);
  assert.ok(failsWith(r1.json.secret, after), 'the previous secret no longer verifies');
  assert.ok(failsWith(s.secret, after));

  // A grace that has run out: the drainer signs with the new secret alone.
  const r3 = await rotate({ expire_old_in: 60 });
  psql(`UPDATE webhook_subscriptions SET previous_secret_expires_at = now() - interval '1 second' WHERE id = '${s.id}'`);
  const expired = await nextDelivery(a.seller, '/rot');
  assert.equal(expired.headers['webhook-signature'].split(' ').length, 1);
  verifyDelivery(r3.json.secret, expired);
  assert.ok(failsWith(r2.json.secret, expired));

  // At rest: sealed, never in clear.
  const row = psql(`SELECT secret_sealed || ' ' || coalesce(previous_secret_sealed, '') FROM webhook_subscriptions WHERE id = '${s.id}'`);
  for (const secret of [s.secret, r1.json.secret, r2.json.secret, r3.json.secret]) assert.ok(!row.includes(secret.slice(6)));

  // Input, idempotency, other accounts.
  for (const bad of [-1, 604801, 1.5, '60', null, true]) {
    assertInvalid(await rotate({ expire_old_in: bad }), 'parameter_invalid', 'expire_old_in');
  }
  assertInvalid(await rotate({ secret: 'mine' }), 'parameter_unknown', 'secret');
  assert.equal((await rotate({ expire_old_in: 604800 })).status, 200);
  const idem = { 'Idempotency-Key': `rot-${x}` };
  const first = await rotate({}, idem);
  const replay = await rotate({}, idem);
  assert.equal(replay.text, first.text, 'the replay shows the same secret');
  assertError(await rotate({ expire_old_in: 5 }, idem), 409, 'invalid_request_error', 'idempotency_conflict');
  const b = newSellerAccount('s');
  assertError(await api(`/v1/webhooks/${s.id}/rotate_secret`, { key: b.key, method: 'POST' }), 404, 'invalid_request_error', 'resource_missing', 'id');
  const ro = await api(`/v1/webhooks/${s.id}/rotate_secret`, { key: a.readOnly, method: 'POST' });
  assert.match(assertError(ro, 403, 'permission_error', 'insufficient_scope').message, /webhooks:write/);
  const getRotate = await api(`/v1/webhooks/${s.id}/rotate_secret`, { key: a.key });
  assertError(getRotate, 405, 'invalid_request_error', 'method_not_allowed');
  assert.equal(getRotate.headers.get('allow'), 'POST');
  assert.equal((await remove(a.key, s.id)).status, 200);
  assertError(await rotate(), 404, 'invalid_request_error', 'resource_missing', 'id');
});

test('a test event: 202 with the event, delivered signed to that subscription alone, like any event', async () => {
  const a = newSellerAccount('t');
  // It asked for payouts only: the test event reaches it all the same, and no other.
  const s = await subscribe(a.key, { url: rx.url('/test-one'), events: ['payout.sent'] });
  const other = await subscribe(a.key, { url: rx.url('/test-other') });
  const sendTest = (id, headers = {}) => api(`/v1/webhooks/${id}/test`, { key: a.key, method: 'POST', headers });

  const r = await sendTest(s.id);
  assert.equal(r.status, 202, r.text);
  assert.deepEqual(Object.keys(r.json), ['id', 'type', 'created_at', 'livemode', 'data']);
  assert.match(r.json.id, /^evt_[A-Za-z0-9_]+$/);
  assert.equal(r.json.type, 'webhook.test');
  assert.match(r.json.created_at, RFC3339);
  assert.equal(r.json.livemode, false);
  assert.deepEqual(r.json.data, { subscription: s.id });
  await rx.waitFor((reqs) => reqs.some((q) => q.path === '/test-one' && q.headers['webhook-id'] === r.json.id), 'the test event');
  const rec = rx.requests.find((q) => q.path === '/test-one' && q.headers['webhook-id'] === r.json.id);
  assert.equal(rec.body, r.text, 'the delivered payload is the answer, byte for byte');
  verifyDelivery(s.secret, rec);
  assert.deepEqual(Object.keys(deliveriesOf(r.json.id)), [s.id], 'to that subscription alone');
  await waitForStatus(r.json.id, s.id, 'delivered');
  assert.ok(!rx.requests.some((q) => q.path === '/test-other' && q.headers['webhook-id'] === r.json.id));

  // Retried like any event: a receiver failing twice gets it a third time.
  rx.route('/test-flaky', (req, n) => (n <= 2 ? 503 : 204));
  const flaky = await subscribe(a.key, { url: rx.url('/test-flaky') });
  const f = await sendTest(flaky.id);
  await waitForStatus(f.json.id, flaky.id, 'delivered');
  assert.equal(deliveriesOf(f.json.id)[flaky.id].attempts, 3);

  // Idempotency: the replay answers the same event and queues nothing more.
  const idem = { 'Idempotency-Key': `test-${x}` };
  const first = await sendTest(other.id, idem);
  const replay = await sendTest(other.id, idem);
  assert.equal(replay.status, 202);
  assert.equal(replay.text, first.text);
  assert.equal(psql(`SELECT count(*) FROM events WHERE type = 'webhook.test' AND body LIKE '%${other.id}%'`), '1');

  // A disabled subscription: recorded, ended unsent.
  await change(a.key, other.id, { disabled: true });
  const d = await sendTest(other.id);
  assert.equal(d.status, 202, d.text);
  const ended = await waitForStatus(d.json.id, other.id, 'failed');
  assert.equal(ended.lastError, 'subscription disabled');
  assert.ok(!rx.requests.some((q) => q.headers['webhook-id'] === d.json.id), 'never sent');

  // Input, scopes, isolation, deleted.
  const body = await api(`/v1/webhooks/${s.id}/test`, { key: a.key, method: 'POST', body: { type: 'sale.completed' } });
  assertInvalid(body, 'parameter_unknown', 'type');
  const ro = await api(`/v1/webhooks/${s.id}/test`, { key: a.readOnly, method: 'POST' });
  assert.match(assertError(ro, 403, 'permission_error', 'insufficient_scope').message, /webhooks:write/);
  const b = newSellerAccount('u');
  assertError(await api(`/v1/webhooks/${s.id}/test`, { key: b.key, method: 'POST' }), 404, 'invalid_request_error', 'resource_missing', 'id');
  assertError(await api(`/v1/webhooks/${s.id}/test`, { key: a.live, method: 'POST' }), 404, 'invalid_request_error', 'resource_missing', 'id');
  assert.equal((await remove(a.key, s.id)).status, 200);
  assertError(await sendTest(s.id), 404, 'invalid_request_error', 'resource_missing', 'id');
});

async function waitForStatus(event, sub, status, timeout = 15000) {
  const until = Date.now() + timeout;
  for (;;) {
    const d = deliveriesOf(event)[sub];
    if (d?.status === status) return d;
    if (Date.now() > until) assert.fail(`delivery of ${event} to ${sub}: ${JSON.stringify(d)}, not ${status}`);
    await sleep(100);
  }
}
