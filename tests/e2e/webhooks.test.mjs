// POST /v1/webhooks and the deliveries of market-webhookd, end to end (docs/contract.md sections
// 6 and 7): subscriptions through the API, events caused through market-admin (import,
// refund, payout), delivered by the stack's real drainer to a real HTTPS receiver on
// 127.0.0.1, verified with the standardwebhooks package and by hand. Also the input rules
// of the route, its idempotency and its limit, and the URL checks with
// MARKET_WEBHOOK_ALLOW_PRIVATE=0 on a second, small stack started by this file.
//
// Needs MARKET_WEBHOOK_ALLOW_PRIVATE=1 and short MARKET_WEBHOOK_RETRIES (tests/e2e/run
// sets 1s,2s,4s) for the stack it runs against.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { api, admin, importDoc, newKey, psql, rawRequest, startStack, uniqueId, MARKET_DB } from './lib/stack.mjs';
import { assertError, assertInvalid, RFC3339 } from './fixtures/expect.mjs';
import { startReceiver, verifyDelivery, failsWith } from './fixtures/webhook_receiver.mjs';

const KINDS = ['sale.completed', 'sale.refunded', 'review.created', 'payout.sent'];
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const x = uniqueId('');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const execFileP = promisify(execFile);

// The retry schedule the stack runs with: the delays in ms, and attempts in all.
const RETRY_MS = (process.env.MARKET_WEBHOOK_RETRIES ?? '5s,5m,30m,2h,5h,10h,10h').split(',').map((d) => {
  const m = /^(\d+)(s|m|h)$/.exec(d.trim());
  assert.ok(m, `cannot read MARKET_WEBHOOK_RETRIES element ${d}`);
  return Number(m[1]) * { s: 1000, m: 60000, h: 3600000 }[m[2]];
});
const ATTEMPTS = RETRY_MS.length + 1;

let rx; // the HTTPS receiver

async function subscribe(key, body, headers = {}) {
  const r = await api('/v1/webhooks', { key, method: 'POST', body, headers });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

const post = (key, body, headers = {}) => api('/v1/webhooks', { key, method: 'POST', body, headers });

function deliveries(failedOnly = false) {
  return admin(['deliveries', ...(failedOnly ? ['--failed'] : [])]).split('\n').filter(Boolean).map((line) => {
    const [event, type, subscription, status, attempts, last] = line.split('\t');
    return { event, type, subscription, status, attempts: Number(attempts), last };
  });
}

// ---------------------------------------------------------------------------------------
// A second stack with MARKET_WEBHOOK_ALLOW_PRIVATE=0, for the address checks. It boots in
// the background while the other tests run.
async function startStack2() {
  const s = await startStack({ settings: { MARKET_WEBHOOK_ALLOW_PRIVATE: '0' }, workers: 1 });
  const account = `acct_wh0_${x}`;
  s.admin(['import', '-'], JSON.stringify({ mode: 'test', accounts: [{ id: account }] }));
  s.key = s.admin(['key', 'create', '--account', account, '--mode', 'test', '--access', 'read-write']);
  return s;
}
const stack2 = startStack2().then((s) => ({ s }), (error) => ({ error }));

after(async () => {
  await rx?.close();
  const { s } = await stack2;
  s?.down();
});

// ---------------------------------------------------------------------------------------
// Sellers A, B, C (with products), D, E, F (payouts only) and a buyer.
const acct = (s) => `acct_w${s}_${x}`;
const seller = (s) => `w${s}-${x}`;
const P = { a: `prod_wa_${x}`, b: `prod_wb_${x}`, c: `prod_wc_${x}`, aLive: `prod_wal_${x}` };
const T = { a: `tier_wa_${x}`, b: `tier_wb_${x}`, c: `tier_wc_${x}`, aLive: `tier_wal_${x}` };
const keys = {};

before(async () => {
  assert.equal(process.env.MARKET_WEBHOOK_ALLOW_PRIVATE, '1', 'run with MARKET_WEBHOOK_ALLOW_PRIVATE=1 (tests/e2e/run sets it)');
  assert.ok(RETRY_MS.reduce((a, b) => a + b, 0) <= 30000, 'run with short MARKET_WEBHOOK_RETRIES such as 1s,2s,4s (tests/e2e/run sets it)');
  const product = (id, s, tier, price, mode) => ({
    id, seller: seller(s), title: `Webhook product ${id}`, category: 'fonts', currency: 'USD', status: 'published',
    tiers: [{ id: tier, name: `Personal ${mode}`, price }],
  });
  importDoc({
    mode: 'test',
    accounts: ['a', 'b', 'c', 'd', 'e', 'f', 'buy'].map((s) => ({ id: acct(s) })),
    sellers: ['a', 'b', 'c', 'd', 'e', 'f'].map((s) => ({ id: seller(s), account: acct(s), name: `Seller ${s}` })),
    products: [product(P.a, 'a', T.a, 19.99, 'test'), product(P.b, 'b', T.b, 5, 'test'), product(P.c, 'c', T.c, 7.5, 'test')],
  });
  importDoc({ mode: 'live', products: [product(P.aLive, 'a', T.aLive, 1200.5, 'live')] });
  for (const s of ['a', 'b', 'c', 'd', 'e', 'f']) keys[s] = newKey({ account: acct(s), mode: 'test' });
  keys.aLive = newKey({ account: acct('a'), mode: 'live' });
  rx = await startReceiver();
});

// ---------------------------------------------------------------------------------------
test('a subscription: 201 with the contract fields, normalised url, a one-time secret', async () => {
  const account = uniqueId('acct_wn_');
  importDoc({ mode: 'test', accounts: [{ id: account }] });
  const key = newKey({ account });
  const url = `HTTPS://LocalHost:${rx.port}/Hook/%7Euser?x=1&y=A`;
  const before = Date.now();
  const r = await post(key, { url, events: ['review.created', 'sale.completed', 'review.created'], description: 'Shop ünïcode "quoted"' });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
  const s = r.json;
  assert.deepEqual(Object.keys(s), ['id', 'object', 'url', 'events', 'description', 'status', 'livemode', 'secret', 'created_at', 'updated_at']);
  assert.match(s.id, /^we_[A-Za-z0-9_]{1,60}$/);
  assert.equal(s.object, 'webhook_subscription');
  assert.equal(s.url, `https://localhost:${rx.port}/Hook/%7Euser?x=1&y=A`, 'scheme and host lower-cased, the rest kept');
  assert.deepEqual(s.events, ['sale.completed', 'review.created'], 'duplicates dropped, canonical order');
  assert.equal(s.description, 'Shop ünïcode "quoted"');
  assert.equal(s.status, 'enabled');
  assert.equal(s.livemode, false);
  assert.match(s.secret, SECRET);
  assert.equal(Buffer.from(s.secret.slice(6), 'base64').length, 32);
  assert.match(s.created_at, RFC3339);
  assert.ok(Math.abs(Date.parse(s.created_at) - before) < 60000);
  assert.equal(s.updated_at, s.created_at, 'a new subscription: updated_at is created_at');

  // Defaults: every kind, in the canonical order, and an empty description.
  const d = await subscribe(key, { url: rx.url('/defaults') });
  assert.deepEqual(d.events, KINDS);
  assert.equal(d.description, '');
  assert.notEqual(d.secret, s.secret);
  assert.notEqual(d.id, s.id);

  // A live key makes a live subscription.
  const live = await subscribe(newKey({ account, mode: 'live' }), { url: rx.url('/live') });
  assert.equal(live.livemode, true);

  // At rest: the normalised URL, the mode, and the secret only sealed.
  const row = psql(`SELECT url, mode, array_to_string(events, ','), secret_sealed FROM webhook_subscriptions WHERE id = '${s.id}'`).split('|');
  assert.deepEqual(row.slice(0, 3), [s.url, 'test', 'sale.completed,review.created']);
  const raw = s.secret.slice(6);
  assert.ok(!row[3].includes(raw) && !row[3].includes(s.secret), 'the secret is not stored in clear');
  assert.equal(psql(`SELECT count(*) FROM webhook_subscriptions WHERE secret_sealed LIKE '%' || '${raw.slice(0, 20)}' || '%'`), '0');
  assert.equal(psql(`SELECT mode FROM webhook_subscriptions WHERE id = '${live.id}'`), 'live');
});

// ---------------------------------------------------------------------------------------
function checkPayload(p, rec, type, livemode, data) {
  assert.deepEqual(Object.keys(p), ['id', 'type', 'created_at', 'livemode', 'data'], rec.body);
  assert.match(p.id, /^evt_[A-Za-z0-9_]+$/);
  assert.equal(p.id, rec.headers['webhook-id'], 'webhook-id is the event id');
  assert.equal(p.type, type);
  assert.match(p.created_at, RFC3339);
  assert.equal(p.livemode, livemode);
  assert.deepEqual(p.data, data, rec.body);
  assert.equal(rec.method, 'POST');
  assert.match(rec.headers['content-type'], /^application\/json/);
}

test('every event kind reaches exactly the subscriptions that asked for it, in its mode, signed', async () => {
  const subs = {
    aTest: await subscribe(keys.a, { url: rx.url('/a-test') }),
    aReviews: await subscribe(keys.a, { url: rx.url('/a-reviews'), events: ['review.created'] }),
    aLive: await subscribe(keys.aLive, { url: rx.url('/a-live') }),
    bTest: await subscribe(keys.b, { url: rx.url('/b-test') }),
    cPayouts: await subscribe(keys.c, { url: rx.url('/c-payouts'), events: ['payout.sent'] }),
  };
  const O1 = `ord_w1_${x}`;
  const O2 = `ord_w2_${x}`;
  const OL = `ord_wl_${x}`;
  const REV = `rev_w1_${x}`;
  const REVL = `rev_wl_${x}`;
  const reviewBody = 'Great "font", ünïcode\nsecond line';
  // One paid order of two products of two sellers; one of seller C (who only wants
  // payouts); a live order and a live review of A's live product.
  importDoc({
    mode: 'test',
    orders: [
      { id: O1, account: acct('buy'), status: 'paid', items: [{ product: P.a, tier: T.a }, { product: P.b, tier: T.b }] },
      { id: O2, account: acct('buy'), status: 'paid', items: [{ product: P.c, tier: T.c }] },
    ],
  });
  importDoc({
    mode: 'live',
    orders: [{ id: OL, account: acct('buy'), status: 'paid', items: [{ product: P.aLive, tier: T.aLive }] }],
    reviews: [{ id: REVL, product: P.aLive, account: acct('buy'), rating: 3, body: 'live one' }],
  });
  admin(['refund', O1]);
  importDoc({ mode: 'test', reviews: [{ id: REV, product: P.a, account: acct('buy'), rating: 4, body: reviewBody }] });
  const poA = admin(['payout', '--seller', seller('a'), '--amount', '12.34', '--currency', 'USD', '--mode', 'test']).trim();
  const poC = admin(['payout', '--seller', seller('c'), '--amount', '1200', '--currency', 'JPY', '--mode', 'test']).trim();
  const poAL = admin(['payout', '--seller', seller('a'), '--amount', '0.5', '--currency', 'EUR', '--mode', 'live']).trim();
  assert.match(poA, /^po_/);

  const expected = {
    '/a-test': [
      ['sale.completed', { order: O1, product: P.a, tier: T.a, amount: 19.99, currency: 'USD' }],
      ['sale.refunded', { order: O1, product: P.a, tier: T.a, amount: 19.99, currency: 'USD' }],
      ['review.created', { review: REV, product: P.a, rating: 4, body: reviewBody }],
      ['payout.sent', { payout: poA, amount: 12.34, currency: 'USD' }],
    ],
    '/a-reviews': [['review.created', { review: REV, product: P.a, rating: 4, body: reviewBody }]],
    '/a-live': [
      ['sale.completed', { order: OL, product: P.aLive, tier: T.aLive, amount: 1200.5, currency: 'USD' }],
      ['review.created', { review: REVL, product: P.aLive, rating: 3, body: 'live one' }],
      ['payout.sent', { payout: poAL, amount: 0.5, currency: 'EUR' }],
    ],
    '/b-test': [
      ['sale.completed', { order: O1, product: P.b, tier: T.b, amount: 5, currency: 'USD' }],
      ['sale.refunded', { order: O1, product: P.b, tier: T.b, amount: 5, currency: 'USD' }],
    ],
    '/c-payouts': [['payout.sent', { payout: poC, amount: 1200, currency: 'JPY' }]],
  };
  const total = Object.values(expected).reduce((n, list) => n + list.length, 0);
  const ours = () => rx.requests.filter((r) => r.path in expected);
  await rx.waitFor(() => ours().length >= total, `${total} deliveries`);
  await sleep(1500); // anything extra (another mode, another seller) would arrive by now
  assert.equal(ours().length, total, `exactly ${total} deliveries: ${ours().map((r) => r.path + ' ' + r.body).join('\n')}`);

  const secretOf = { '/a-test': subs.aTest.secret, '/a-reviews': subs.aReviews.secret, '/a-live': subs.aLive.secret, '/b-test': subs.bTest.secret, '/c-payouts': subs.cPayouts.secret };
  const seenIds = new Map();
  for (const [path, list] of Object.entries(expected)) {
    const got = rx.to(path);
    const payloads = got.map((rec) => verifyDelivery(secretOf[path], rec));
    // Order of arrival is not guaranteed: match by type and data.
    for (const [type, data] of list) {
      const i = payloads.findIndex((p) => p.type === type && JSON.stringify(p.data) === JSON.stringify(data));
      assert.ok(i >= 0, `${path} got ${type} ${JSON.stringify(data)}; it got ${got.map((r) => r.body).join(', ')}`);
      checkPayload(payloads[i], got[i], type, path === '/a-live', data);
      seenIds.set(`${path} ${type}`, payloads[i].id);
    }
    // Another subscription's secret does not verify these.
    for (const [other, secret] of Object.entries(secretOf)) {
      if (other !== path) assert.ok(got.every((rec) => failsWith(secret, rec)), `${path} deliveries do not verify with the secret of ${other}`);
    }
  }
  // Amounts are JSON numbers as written, never strings or long floats.
  assert.ok(rx.to('/a-test').some((r) => r.body.includes('"amount":19.99,')), 'amount 19.99 as a number');
  assert.ok(rx.to('/b-test').some((r) => r.body.includes('"amount":5,')), 'amount 5 as a number');
  // One review, two subscriptions: the same event id at both, each signed with its own secret.
  assert.equal(seenIds.get('/a-test review.created'), seenIds.get('/a-reviews review.created'));
  const [r1] = rx.to('/a-reviews');
  const r2 = rx.to('/a-test').find((r) => r.headers['webhook-id'] === r1.headers['webhook-id']);
  assert.notEqual(r1.headers['webhook-signature'], r2.headers['webhook-signature']);
  // The outbox agrees: all delivered at the first attempt.
  const mine = new Set(Object.values(subs).map((s) => s.id));
  const rows = deliveries().filter((d) => mine.has(d.subscription));
  assert.equal(rows.length, total);
  for (const d of rows) assert.deepEqual([d.status, d.attempts, d.last], ['delivered', 1, '204'], JSON.stringify(d));
});

// ---------------------------------------------------------------------------------------
test(`retries: same webhook-id until a 2xx, ${ATTEMPTS} attempts then failed, redirects are failures, redeliver`, async () => {
  let failHealthy = false;
  rx.route('/flaky', (rec, n) => (n <= 2 ? 500 : 204));
  rx.route('/fail', () => (failHealthy ? 204 : 500));
  rx.route('/redirect', () => ({ status: 302, headers: { Location: rx.url('/redirect-target') } }));
  const flaky = await subscribe(keys.d, { url: rx.url('/flaky'), events: ['payout.sent'] });
  const fail = await subscribe(keys.e, { url: rx.url('/fail'), events: ['payout.sent'] });
  const redirect = await subscribe(keys.f, { url: rx.url('/redirect'), events: ['payout.sent'] });
  for (const s of ['d', 'e', 'f']) admin(['payout', '--seller', seller(s), '--amount', '1', '--currency', 'USD', '--mode', 'test']);

  const patience = RETRY_MS.reduce((a, b) => a + b, 0) * 1.1 + 10000;
  await rx.waitFor(() => rx.to('/flaky').length >= 3, 'three attempts at /flaky', patience);
  const fl = rx.to('/flaky');
  assert.equal(new Set(fl.map((r) => r.headers['webhook-id'])).size, 1, 'the same webhook-id on every attempt');
  assert.equal(new Set(fl.map((r) => r.body)).size, 1, 'the same body on every attempt');
  for (const rec of fl) verifyDelivery(flaky.secret, rec);
  // Each retry waits its delay, within the +-10 % jitter (and the drainer's wake-up slack).
  for (let i = 1; i < 3; i++) {
    const gap = fl[i].at - fl[i - 1].at;
    assert.ok(gap >= RETRY_MS[i - 1] * 0.9 - 100 && gap <= RETRY_MS[i - 1] * 1.1 + 2500, `gap ${i}: ${gap} ms for a ${RETRY_MS[i - 1]} ms delay`);
  }

  const failed = () => deliveries(true).filter((d) => d.subscription === fail.id || d.subscription === redirect.id);
  await waitUntil(() => failed().length === 2, 'both the failing and the redirected delivery marked failed', patience);
  await sleep(1500);
  assert.equal(rx.to('/fail').length, ATTEMPTS, `exactly ${ATTEMPTS} attempts: 1 + ${RETRY_MS.length} retries`);
  assert.equal(rx.to('/redirect').length, ATTEMPTS, 'a redirect is a failed attempt, retried like one');
  assert.equal(rx.to('/redirect-target').length, 0, 'redirects are not followed');
  const byId = Object.fromEntries(failed().map((d) => [d.subscription, d]));
  assert.deepEqual([byId[fail.id].status, byId[fail.id].attempts, byId[fail.id].last], ['failed', ATTEMPTS, '500']);
  assert.deepEqual([byId[redirect.id].status, byId[redirect.id].attempts, byId[redirect.id].last], ['failed', ATTEMPTS, '302']);
  assert.equal(rx.to('/flaky').length, 3, 'no attempt after the success');
  const flakyRow = deliveries().find((d) => d.subscription === flaky.id);
  assert.deepEqual([flakyRow.status, flakyRow.attempts, flakyRow.last], ['delivered', 3, '204']);
  // Every attempt is recorded.
  assert.equal(psql(`SELECT count(*) FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.subscription_id = '${fail.id}'`), String(ATTEMPTS));

  // redeliver: the receiver is healthy again; the same event arrives once more and is delivered.
  failHealthy = true;
  const event = byId[fail.id].event;
  assert.match(admin(['redeliver', event]), new RegExp(event));
  await rx.waitFor(() => rx.to('/fail').length === ATTEMPTS + 1, 'the redelivery');
  const again = rx.to('/fail').at(-1);
  assert.equal(again.headers['webhook-id'], event);
  verifyDelivery(fail.secret, again);
  await waitUntil(() => deliveries().find((d) => d.event === event && d.subscription === fail.id)?.status === 'delivered', 'redelivered delivery marked delivered');
});

async function waitUntil(fn, message, timeout = 20000) {
  const deadline = Date.now() + timeout;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${message}`);
    await sleep(200);
  }
}

// ---------------------------------------------------------------------------------------
test('input rules: url, events, description, unknown fields, body and query', async () => {
  const account = uniqueId('acct_wi_');
  importDoc({ mode: 'test', accounts: [{ id: account }] });
  const key = newKey({ account });
  const ok = rx.url('/input');
  const cases = [
    [{}, 'parameter_missing', 'url'],
    [undefined, 'parameter_missing', 'url'],
    [{ url: null }, 'parameter_invalid', 'url'],
    [{ url: 5 }, 'parameter_invalid', 'url'],
    [{ url: '' }, 'parameter_invalid', 'url'],
    [{ url: 'http://example.com/hook' }, 'url_not_https', 'url'],
    [{ url: `HTTP://127.0.0.1:${rx.port}/` }, 'url_not_https', 'url'],
    [{ url: 'ftp://example.com/' }, 'parameter_invalid', 'url'],
    [{ url: 'example.com/hook' }, 'parameter_invalid', 'url'],
    [{ url: 'https:///x' }, 'parameter_invalid', 'url'],
    [{ url: `https://u:p@127.0.0.1:${rx.port}/` }, 'parameter_invalid', 'url'],
    [{ url: `${ok}#x` }, 'parameter_invalid', 'url'],
    [{ url: `${ok}/a b` }, 'parameter_invalid', 'url'],
    [{ url: `${ok}\\x` }, 'parameter_invalid', 'url'],
    [{ url: 'https://127.0.0.1:0/' }, 'parameter_invalid', 'url'],
    [{ url: 'https://127.0.0.1:65536/' }, 'parameter_invalid', 'url'],
    [{ url: 'https://127.1/' }, 'parameter_invalid', 'url'],
    [{ url: 'https://[::1/' }, 'parameter_invalid', 'url'],
    [{ url: `${ok}/\u0000` }, 'parameter_invalid', undefined], // a NUL: refused with the body or the field
    [{ url: `https://127.0.0.1/${'a'.repeat(2049 - 'https://127.0.0.1/'.length)}` }, 'parameter_invalid', 'url'],
    [{ url: 'https://does-not-exist.invalid/hook' }, 'url_not_allowed', 'url'],
    [{ url: ok, events: [] }, 'parameter_invalid', 'events'],
    [{ url: ok, events: 'sale.completed' }, 'parameter_invalid', 'events'],
    [{ url: ok, events: null }, 'parameter_invalid', 'events'],
    [{ url: ok, events: { 'sale.completed': true } }, 'parameter_invalid', 'events'],
    [{ url: ok, events: ['sale.completed', 'sale.exploded'] }, 'parameter_invalid', 'events'],
    [{ url: ok, events: ['Sale.Completed'] }, 'parameter_invalid', 'events'],
    [{ url: ok, events: ['sale.completed\u0000'] }, 'parameter_invalid', undefined],
    [{ url: ok, events: [1] }, 'parameter_invalid', 'events'],
    [{ url: ok, description: 5 }, 'parameter_invalid', 'description'],
    [{ url: ok, description: null }, 'parameter_invalid', 'description'],
    [{ url: ok, description: 'x'.repeat(501) }, 'parameter_invalid', 'description'],
    [{ url: ok, description: 'a\u0000b' }, 'parameter_invalid', undefined],
    [{ url: ok, description: 'a\u0001b' }, 'parameter_invalid', 'description'],
    [{ url: ok, description: 'two\nlines' }, 'parameter_invalid', 'description'],
    [{ url: ok, description: 'del\u007f' }, 'parameter_invalid', 'description'],
    [{ url: ok, description: 'c1\u0085' }, 'parameter_invalid', 'description'],
    [{ url: ok, secret: 'whsec_mine' }, 'parameter_unknown', 'secret'],
    [{ url: ok, status: 'disabled' }, 'parameter_unknown', 'status'],
  ];
  for (const [body, code, param] of cases) {
    const r = await post(key, body);
    assertInvalid(r, code, param);
  }
  // Limits are inclusive: 2048 bytes of url, 500 characters (not bytes) of description.
  const long = `https://127.0.0.1/${'a'.repeat(2048 - 'https://127.0.0.1/'.length)}`;
  assert.equal((await subscribe(key, { url: long })).url, long);
  assert.equal((await subscribe(key, { url: ok, description: 'é'.repeat(500) })).description, 'é'.repeat(500));
  assert.deepEqual((await subscribe(key, { url: ok, events: ['payout.sent', 'payout.sent'] })).events, ['payout.sent']);
  assert.equal((await subscribe(key, { url: `https://[::1]:${rx.port}/v6` })).url, `https://[::1]:${rx.port}/v6`);

  assertInvalid(await api('/v1/webhooks?x=1', { key, method: 'POST', body: { url: ok } }), 'parameter_unknown', 'x');
  assertInvalid(await post(key, '{"url": "https://127.0.0.1/"', { 'Content-Type': 'application/json' }), 'body_invalid_json', null);
  assertInvalid(await post(key, '["https://127.0.0.1/"]', { 'Content-Type': 'application/json' }), 'body_invalid_json', null);
  // A lone surrogate (JSON.stringify would escape one as \ud800): stored as U+FFFD by
  // JSON parsers, so refused, naming the field; a pair is one character.
  for (const text of ['a\\ud800b', '\\udfff', '\\ud800\\u0041'])
    assertInvalid(await post(key, `{"url": "${ok}", "description": "${text}"}`, { 'Content-Type': 'application/json' }), 'parameter_invalid', 'description');
  const pair = await post(key, `{"url": "${ok}", "description": "\\ud83d\\ude00"}`, { 'Content-Type': 'application/json' });
  assert.equal(pair.status, 201, pair.text);
  assert.equal(pair.json.description, '\u{1F600}');
  assertError(await post(key, JSON.stringify({ url: ok }), { 'Content-Type': 'text/plain' }), 415, 'invalid_request_error', 'unsupported_media_type', null);
  assertError(await post(newKey({ account, access: 'read-only' }), { url: ok }), 403, 'permission_error', 'insufficient_scope', null);
  assert.equal(psql(`SELECT count(*) FROM webhook_subscriptions WHERE account_id = '${account}'`), '5', 'only the valid requests made subscriptions');
});

// ---------------------------------------------------------------------------------------
test('Idempotency-Key sent twice is 400, whichever the two values', async () => {
  const account = uniqueId('acct_wk2_');
  importDoc({ mode: 'test', accounts: [{ id: account }] });
  const key = newKey({ account });
  // rawRequest sends an array value as one header line per element (fetch would join them).
  const twice = (values) => rawRequest('/v1/webhooks', {
    key, method: 'POST', body: JSON.stringify({ url: rx.url('/twice') }),
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': values },
  });
  for (const values of [[uniqueId('a-'), uniqueId('b-')], ['same', 'same']]) {
    const r = await twice(values);
    assert.equal(r.status, 400, JSON.stringify(r.json));
    assert.equal(r.json.error.code, 'idempotency_key_invalid');
    assert.equal(r.json.error.param, 'Idempotency-Key');
  }
  assert.equal(psql(`SELECT count(*) FROM webhook_subscriptions WHERE account_id = '${account}'`), '0');
  assert.equal((await twice([uniqueId('one-')])).status, 201, 'once is fine');
});

// ---------------------------------------------------------------------------------------
test('Idempotency-Key: replay with the same secret, 409 for another body, input errors not stored', async () => {
  const account = uniqueId('acct_wk_');
  importDoc({ mode: 'test', accounts: [{ id: account }] });
  const key = newKey({ account });
  const idem = { 'Idempotency-Key': uniqueId('idem-') };
  const body = { url: rx.url('/idem'), events: ['sale.completed'] };
  // An input error under the key is not stored: the corrected request then runs.
  assertInvalid(await post(key, { url: 'http://x.example' }, idem), 'url_not_https', 'url');
  const first = await post(key, body, idem);
  assert.equal(first.status, 201, first.text);
  const replay = await post(key, body, idem);
  assert.equal(replay.status, 201);
  assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  assert.equal(replay.text, first.text, 'the same body byte for byte, secret included');
  assert.match(replay.json.secret, SECRET);
  // The stored response holds the secret: it must be sealed at rest, never in clear.
  const stored = psql(`SELECT body FROM idempotency_keys WHERE idem_key = '${idem['Idempotency-Key']}'`);
  assert.ok(stored.length > 40, 'a stored response');
  assert.ok(!stored.includes('whsec_') && !stored.includes(first.json.secret.slice(6, 30)),
    'the stored response does not show the secret');
  assertError(await post(key, { ...body, description: 'other' }, idem), 409, 'invalid_request_error', 'idempotency_conflict', null);
  assert.equal(psql(`SELECT count(*) FROM webhook_subscriptions WHERE account_id = '${account}'`), '1');
  // Twins racing with one key make one subscription.
  const twin = { 'Idempotency-Key': uniqueId('twin-') };
  const racing = await Promise.all(Array.from({ length: 6 }, () => post(key, { url: rx.url('/twin') }, twin)));
  assert.deepEqual(racing.map((r) => r.status), Array(6).fill(201));
  assert.equal(new Set(racing.map((r) => r.json.secret)).size, 1);
  assert.equal(psql(`SELECT count(*) FROM webhook_subscriptions WHERE account_id = '${account}'`), '2');
});

// ---------------------------------------------------------------------------------------
test('at most 16 subscriptions per account and mode, also under concurrent creation', async () => {
  const account = uniqueId('acct_wl_');
  importDoc({ mode: 'test', accounts: [{ id: account }] });
  const key = newKey({ account });
  for (let i = 0; i < 16; i++) await subscribe(key, { url: rx.url(`/limit/${i}`) });
  assertInvalid(await post(key, { url: rx.url('/limit/16') }), 'subscription_limit_reached', null);
  // The other mode of the same account has its own 16.
  await subscribe(newKey({ account, mode: 'live' }), { url: rx.url('/limit/live') });

  const racer = uniqueId('acct_wr_');
  importDoc({ mode: 'test', accounts: [{ id: racer }] });
  const rkey = newKey({ account: racer });
  const all = await Promise.all(Array.from({ length: 24 }, (_, i) => post(rkey, { url: rx.url(`/race/${i}`) })));
  for (const r of all.filter((res) => res.status !== 201)) assertInvalid(r, 'subscription_limit_reached', null);
  assert.equal(all.filter((r) => r.status === 201).length, 16, 'exactly 16 of 24 concurrent creations succeed');
  assert.equal(psql(`SELECT count(*) FROM webhook_subscriptions WHERE account_id = '${racer}' AND mode = 'test'`), '16');

  // The race at the 16th, made certain: a session holding a SHARE lock on the table stalls
  // every creation at its INSERT, so the workers' INSERTs all run at once when it lets go.
  // Counting without serialising per account would let more than one through.
  const edge = uniqueId('acct_we_');
  importDoc({ mode: 'test', accounts: [{ id: edge }] });
  const ekey = newKey({ account: edge });
  for (let i = 0; i < 15; i++) await subscribe(ekey, { url: rx.url(`/edge/${i}`) });
  const blocker = execFileP('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', MARKET_DB, '-c',
    'BEGIN; LOCK TABLE webhook_subscriptions IN SHARE MODE; SELECT pg_sleep(1.5); COMMIT;']);
  await waitUntil(() => psql("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'webhook_subscriptions' AND l.mode = 'ShareLock' AND l.granted") === '1', 'the SHARE lock', 5000);
  const edgeRace = await Promise.all(Array.from({ length: 6 }, (_, i) => post(ekey, { url: rx.url(`/edge/race/${i}`) })));
  await blocker;
  assert.equal(edgeRace.filter((r) => r.status === 201).length, 1, `one creation fits: ${edgeRace.map((r) => r.status)}`);
  for (const r of edgeRace.filter((res) => res.status !== 201)) assertInvalid(r, 'subscription_limit_reached', null);
  assert.equal(psql(`SELECT count(*) FROM webhook_subscriptions WHERE account_id = '${edge}'`), '16');
});

// ---------------------------------------------------------------------------------------
test('with MARKET_WEBHOOK_ALLOW_PRIVATE=0: http, malformed and non-public hosts refused', async () => {
  const { s, error } = await stack2;
  if (error) throw error;
  const p = (url) => api(`${s.base}/v1/webhooks`, { key: s.key, method: 'POST', body: { url } });
  const cases = [
    ['http://1.1.1.1/hook', 'url_not_https'],
    ['https:///x', 'parameter_invalid'],
    ['https://u:p@example.com/', 'parameter_invalid'],
    ['https://1.1.1.1/hook#x', 'parameter_invalid'],
    ['https://127.0.0.1/hook', 'url_not_allowed'],
    ['https://127.0.0.1:8443/hook', 'url_not_allowed'],
    ['https://10.0.0.1/hook', 'url_not_allowed'],
    ['https://192.168.1.1/hook', 'url_not_allowed'],
    ['https://172.16.0.1/hook', 'url_not_allowed'],
    ['https://100.64.0.1/hook', 'url_not_allowed'],
    ['https://169.254.169.254/latest/meta-data', 'url_not_allowed'],
    ['https://0.0.0.0/hook', 'url_not_allowed'],
    ['https://[::1]/hook', 'url_not_allowed'],
    ['https://[::ffff:127.0.0.1]/hook', 'url_not_allowed'],
    ['https://[fe80::1]/hook', 'url_not_allowed'],
    ['https://[fc00::1]/hook', 'url_not_allowed'],
    ['https://localhost/hook', 'url_not_allowed'],
    ['https://LOCALHOST:9/hook', 'url_not_allowed'],
    ['https://does-not-exist.invalid/hook', 'url_not_allowed'],
  ];
  for (const [url, code] of cases) assertInvalid(await p(url), code, 'url');
  // A public address passes (an address literal: no DNS needed).
  const r = await p('https://1.1.1.1/hook');
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.url, 'https://1.1.1.1/hook');
});
