// Reading events back (docs/contract.md section 13): GET /v1/events, newest first, the
// payloads byte for byte as delivered, filtered by type and time, cursor-paged; and
// GET /v1/events/:id with its deliveries. Events are payouts and test events, delivered by
// the stack's real drainer to a real HTTPS receiver.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { admin, api, importDoc, newKey, psql, uniqueId } from './lib/stack.mjs';
import { assertError, assertInvalid, RFC3339, sleep } from './fixtures/expect.mjs';
import { startReceiver } from './fixtures/webhook_receiver.mjs';

const x = uniqueId('');
let rx;
const A = { account: `acct_ev_${x}`, seller: `ev-${x}` };
const B = { account: `acct_ew_${x}`, seller: `ew-${x}` };
let subA;
let subFailing;
const made = []; // A's test-mode events, oldest first: {id, type, body}

async function subscribe(key, body) {
  const r = await api('/v1/webhooks', { key, method: 'POST', body });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

function payoutEvent(seller, mode = 'test') {
  const po = admin(['payout', '--seller', seller, '--amount', '2.50', '--currency', 'USD', '--mode', mode]).trim();
  return psql(`SELECT id FROM events WHERE type = 'payout.sent' AND body LIKE '%${po}%'`);
}

const bodyOf = (id) => psql(`SELECT body FROM events WHERE id = '${id}'`);

/** Every item of GET /v1/events from query, pages of limit. */
async function walk(key, query, limit) {
  const items = [];
  let url = `/v1/events?${query}${query ? '&' : ''}limit=${limit}`;
  for (let pages = 0; ; pages++) {
    assert.ok(pages < 50, 'the walk ends');
    const r = await api(url, { key });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.json).sort(), ['data', 'next_cursor']);
    assert.ok(r.json.data.length <= limit);
    items.push(...r.json.data);
    if (r.json.next_cursor === null) return items;
    url = `/v1/events?${query}${query ? '&' : ''}limit=${limit}&cursor=${r.json.next_cursor}`;
  }
}

before(async () => {
  rx = await startReceiver();
  rx.route('/ev-fail', () => 500);
  importDoc({
    mode: 'test',
    accounts: [{ id: A.account }, { id: B.account }],
    sellers: [{ id: A.seller, account: A.account, name: 'Events A' }, { id: B.seller, account: B.account, name: 'Events B' }],
  });
  A.key = newKey({ account: A.account });
  A.live = newKey({ account: A.account, mode: 'live' });
  A.readOnly = newKey({ account: A.account, access: 'read-only' });
  B.key = newKey({ account: B.account });
  subA = await subscribe(A.key, { url: rx.url('/ev-a'), events: ['payout.sent'] });
  subFailing = await subscribe(A.key, { url: rx.url('/ev-fail'), events: ['payout.sent'] });
  await subscribe(B.key, { url: rx.url('/ev-b'), events: ['payout.sent'] });
  await subscribe(A.live, { url: rx.url('/ev-live'), events: ['payout.sent'] });
  for (let i = 0; i < 7; i++) {
    const id = payoutEvent(A.seller);
    made.push({ id, type: 'payout.sent' });
    if (i === 3) {
      const t = await api(`/v1/webhooks/${subA.id}/test`, { key: A.key, method: 'POST' });
      assert.equal(t.status, 202, t.text);
      made.push({ id: t.json.id, type: 'webhook.test' });
    }
    await sleep(5); // distinct created_at, so the time filters below have room
  }
  payoutEvent(B.seller);
  payoutEvent(A.seller, 'live');
  for (const e of made) e.body = bodyOf(e.id);
  await rx.waitFor((reqs) => made.every((e) => reqs.some((q) => q.path === '/ev-a' && q.headers['webhook-id'] === e.id)),
    'every event of A delivered to /ev-a');
});
after(async () => {
  await rx?.close();
});

test('newest first, byte for byte the payloads delivered, every page the same, other accounts and modes never', async () => {
  const r = await api('/v1/events', { key: A.key });
  assert.equal(r.status, 200, r.text);
  const expected = [...made].reverse();
  assert.deepEqual(r.json.data.map((e) => e.id), expected.map((e) => e.id));
  // The answer's text holds each events row as it is: compact, in the stored key order.
  for (const e of expected) assert.ok(r.text.includes(e.body), `${e.id} verbatim`);
  for (const e of expected) {
    const delivered = rx.requests.find((q) => q.path === '/ev-a' && q.headers['webhook-id'] === e.id);
    assert.equal(delivered.body, e.body, `${e.id}: the listed event is what was delivered`);
  }
  for (const limit of [1, 3, 100]) {
    assert.deepEqual((await walk(A.key, '', limit)).map((e) => e.id), expected.map((e) => e.id), `limit ${limit}`);
  }
  const live = await api('/v1/events', { key: A.live });
  assert.equal(live.json.data.length, 1);
  assert.equal(live.json.data[0].livemode, true);
  assert.ok(!(await walk(B.key, '', 100)).some((e) => made.some((m) => m.id === e.id)), 'B sees none of A\'s');
});

test('filters: type, created_gte and created_lt, and the cursor is bound to them', async () => {
  const tests = await walk(A.key, 'type=webhook.test', 2);
  assert.deepEqual(tests.map((e) => e.id), made.filter((e) => e.type === 'webhook.test').map((e) => e.id));
  const payouts = await walk(A.key, 'type=payout.sent', 2);
  assert.equal(payouts.length, 7);
  assert.deepEqual((await walk(A.key, 'type=sale.completed', 5)), []);

  // A time range from the database's own timestamps (full precision).
  const at = (id) => psql(`SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') FROM events WHERE id = '${id}'`);
  const from = at(made[2].id);
  const to = at(made[6].id);
  const range = await walk(A.key, `created_gte=${from}&created_lt=${to}`, 2);
  assert.deepEqual(range.map((e) => e.id), made.slice(2, 6).map((e) => e.id).reverse(), 'gte inclusive, lt exclusive');
  const offset = from.replace('Z', '+00:00').replace('T', 't');
  assert.deepEqual((await walk(A.key, `created_gte=${encodeURIComponent(offset)}`, 100)).length, made.length - 2);

  const page = await api('/v1/events?type=payout.sent&limit=2', { key: A.key });
  const cursor = page.json.next_cursor;
  assertInvalid(await api(`/v1/events?type=webhook.test&limit=2&cursor=${cursor}`, { key: A.key }), 'cursor_invalid', 'cursor');
  assertInvalid(await api(`/v1/events?limit=2&cursor=${cursor}`, { key: A.key }), 'cursor_invalid', 'cursor');
  assertInvalid(await api(`/v1/events?type=payout.sent&cursor=${cursor}`, { key: B.key }), 'cursor_invalid', 'cursor');

  for (const [q, param] of [
    ['type=payout', 'type'], ['type=', 'type'], ['created_gte=2026-02-30T00:00:00Z', 'created_gte'],
    ['created_lt=yesterday', 'created_lt'], ['created_gte=2026-11-26T10:04:05', 'created_gte'],
    ['limit=0', 'limit'], ['bogus=1', 'bogus'],
  ]) {
    const res = await api(`/v1/events?${q}`, { key: A.key });
    assertInvalid(res, param === 'bogus' ? 'parameter_unknown' : 'parameter_invalid', param);
  }
  const ro = await api('/v1/events', { key: A.readOnly });
  assert.match(assertError(ro, 403, 'permission_error', 'insufficient_scope').message, /webhooks:read/);
});

test('one event with its deliveries: status, attempts, the last attempt', async () => {
  const e = made[made.length - 1];
  // The failing subscription's first attempt is recorded (no lease: not in flight); its
  // retry is then put an hour away, so that what follows sees it pending. Both in one
  // statement: the drainer retries within a second here (MARKET_WEBHOOK_RETRIES=1s,...),
  // which a slow machine may take between two statements; attempts is whatever it is then.
  const until = Date.now() + 15000;
  let attempts;
  while (!(attempts = psql(`UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour'
                             WHERE event_id = '${e.id}' AND subscription_id = '${subFailing.id}'
                               AND status = 'pending' AND attempts >= 1 AND last_status = 500
                               AND leased_by IS NULL
                             RETURNING attempts`))) {
    assert.ok(Date.now() < until, 'the failing delivery\'s first attempt');
    await sleep(50);
  }
  attempts = Number(attempts);
  const r = await api(`/v1/events/${e.id}`, { key: A.key });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(Object.keys(r.json), ['id', 'type', 'created_at', 'livemode', 'data', 'deliveries']);
  assert.ok(r.text.startsWith(e.body.slice(0, -1)), 'the payload as delivered, then the deliveries');
  assert.equal(r.json.deliveries.length, 2);
  const ok = r.json.deliveries.find((d) => d.subscription === subA.id);
  assert.deepEqual(Object.keys(ok), ['subscription', 'status', 'attempts', 'last_attempt_at', 'last_status', 'last_error']);
  assert.equal(ok.status, 'delivered');
  assert.equal(ok.attempts, 1);
  assert.match(ok.last_attempt_at, RFC3339);
  assert.equal(ok.last_status, 204);
  assert.equal(ok.last_error, null);
  const failing = r.json.deliveries.find((d) => d.subscription === subFailing.id);
  assert.equal(failing.status, 'pending');
  assert.equal(failing.attempts, attempts);
  assert.equal(failing.last_status, 500);
  assert.match(failing.last_attempt_at, RFC3339);

  // A second attempt in flight (claimed as a drainer claims: leased, attempts counted)
  // counts once its outcome is recorded, so attempts still agrees with the last attempt.
  psql(`UPDATE webhook_deliveries SET leased_by = 'e2e', lease_until = now() + interval '1 hour',
               attempts = attempts + 1
         WHERE event_id = '${e.id}' AND subscription_id = '${subFailing.id}'`);
  const inFlight = (await api(`/v1/events/${e.id}`, { key: A.key })).json.deliveries.find((d) => d.subscription === subFailing.id);
  assert.deepEqual([inFlight.status, inFlight.attempts, inFlight.last_attempt_at], ['pending', attempts, failing.last_attempt_at]);
  psql(`UPDATE webhook_deliveries SET leased_by = NULL, lease_until = NULL, attempts = attempts - 1
         WHERE event_id = '${e.id}' AND subscription_id = '${subFailing.id}'`);

  // A deleted subscription's pending delivery shows as endpoint_deleted.
  assert.equal((await api(`/v1/webhooks/${subFailing.id}`, { key: A.key, method: 'DELETE' })).status, 200);
  const after = await api(`/v1/events/${e.id}`, { key: A.key });
  assert.equal(after.json.deliveries.find((d) => d.subscription === subFailing.id).status, 'endpoint_deleted');

  // Nothing of another account or mode, nothing unknown.
  for (const [key, id] of [[B.key, e.id], [A.live, e.id], [A.key, 'evt_nosuch'], [A.key, 'nope']]) {
    assertError(await api(`/v1/events/${id}`, { key }), 404, 'invalid_request_error', 'resource_missing', 'id');
  }
  assertInvalid(await api(`/v1/events/${e.id}?x=1`, { key: A.key }), 'parameter_unknown', 'x');
  const ro = await api(`/v1/events/${e.id}`, { key: A.readOnly });
  assert.match(assertError(ro, 403, 'permission_error', 'insufficient_scope').message, /webhooks:read/);
  const post = await api('/v1/events', { key: A.key, method: 'POST', body: {} });
  assertError(post, 405, 'invalid_request_error', 'method_not_allowed');
  assert.equal(post.headers.get('allow'), 'GET');
});
