// Every call of the client against the real stack: the six routes with every parameter,
// the iterators, money exactness, rate-limit figures on answers, and each error status
// mapped to its error class.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { randomBytes } from 'node:crypto';

import {
  Market, MarketError, AuthenticationError, PermissionError, NotFoundError, InvalidRequestError,
  ConflictError,
} from '@markethq/market';
import { main, uniqueId, recordingFetch } from './lib.mjs';

const st = main();
const x = uniqueId();
const ids = {
  sellerAcct: `acct_jss_${x}`, buyerAcct: `acct_jsb_${x}`, otherAcct: `acct_jso_${x}`,
  seller: `js-${x}`, category: `jscat-${x}`, otherCategory: `jsone-${x}`,
  detail: `prod_jsdetail_${x}`, big: `prod_jsbig_${x}`,
  paid: `ord_jspaid_${x}`, refunded: `ord_jsref_${x}`,
};
const N = 45;
// Prices with cents, written as decimal text; created_at one minute apart (newest last).
const catalogue = Array.from({ length: N }, (_, i) => ({
  id: `prod_js${String(i).padStart(2, '0')}_${x}`,
  title: `Client walk item ${i}`,
  price: (((i * 737) % 5000) / 100 + 0.01).toFixed(2),
  created: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString().replace('.000Z', 'Z'),
}));
const BIG = '90071992547409.93'; // 9007199254740993 minor units: beyond 2^53
const fileBytes = randomBytes(4096);
const filePath = `js-${x}/pack.zip`;

let buyer; // read-write key of the buyer
let buyerRO; // read-only key of the buyer
let market; // Market with the buyer's key
let dlPaid; // a download of the paid order
let dlRefunded; // a download of the refunded order

const client = (apiKey, opts = {}) => new Market({ apiKey, baseUrl: st.baseUrl, ...opts });
const usd = (s) => String(Number(s)); // how the API writes an amount: 12.50 -> 12.5

before(() => {
  mkdirSync(dirname(join(st.filesRoot, filePath)), { recursive: true });
  writeFileSync(join(st.filesRoot, filePath), fileBytes);
  const product = (p, category) => ({
    id: p.id, seller: ids.seller, title: p.title, description: `Description of ${p.title}`, category,
    currency: 'USD', status: 'published', created_at: p.created,
    tiers: [{ id: p.id.replace('prod_', 'tier_'), name: 'Personal', description: '', price: '@@' + p.price + '@@', licence: { seats: 1 } }],
  });
  const doc = {
    mode: 'test',
    accounts: [{ id: ids.sellerAcct }, { id: ids.buyerAcct }, { id: ids.otherAcct }],
    sellers: [{ id: ids.seller, account: ids.sellerAcct, name: 'JS Seller', bio: 'Sells to the JS client', website: 'https://js.example' }],
    products: [
      ...catalogue.map((p) => product(p, ids.category)),
      {
        id: ids.detail, seller: ids.seller, title: `Zanzibarish detail ${x}`, description: 'A product with two tiers',
        category: ids.otherCategory, currency: 'USD', status: 'published', created_at: '2025-06-01T00:00:00Z',
        tiers: [
          { id: `tier_jsd_team_${x}`, name: 'Team', description: 'Five seats', price: '@@49.5@@', licence: { seats: 5, commercial: true, max_prints: 1000 } },
          { id: `tier_jsd_p_${x}`, name: 'Personal', description: 'One seat', price: '@@19.99@@', licence: { seats: 1, commercial: false } },
        ],
        files: [{ id: `file_js_${x}`, filename: 'pack.zip', path: filePath, size_bytes: fileBytes.length }],
      },
      product({ id: ids.big, title: 'Very expensive', price: BIG, created: '2025-01-01T00:00:00Z' }, `jsbig-${x}`),
    ],
    orders: [
      { id: ids.paid, account: ids.buyerAcct, status: 'paid', created_at: '2026-02-01T00:00:00Z', items: [{ product: ids.detail, tier: `tier_jsd_p_${x}` }] },
      { id: ids.refunded, account: ids.buyerAcct, status: 'paid', created_at: '2026-01-01T00:00:00Z', items: [{ product: ids.detail, tier: `tier_jsd_team_${x}` }] },
    ],
    reviews: [
      { id: `rev_js1_${x}`, product: ids.detail, account: ids.buyerAcct, rating: 5, body: 'Great' },
      { id: `rev_js2_${x}`, product: ids.detail, account: ids.otherAcct, rating: 4, body: 'Good' },
    ],
  };
  // Prices go in as the decimal text (never through a double), like a JSON document a
  // person would write.
  st.importDoc(JSON.stringify(doc).replace(/"@@([0-9.]+)@@"/g, '$1'));
  st.admin(['refund', ids.refunded]);
  buyer = st.newKey(ids.buyerAcct);
  buyerRO = st.newKey(ids.buyerAcct, 'read-only');
  market = client(buyer);
  const row = (order) => st.psql(`SELECT id FROM downloads WHERE order_id = '${order}'`);
  dlPaid = row(ids.paid);
  dlRefunded = row(ids.refunded);
  assert.match(dlPaid, /^dl_/);
  assert.match(dlRefunded, /^dl_/);
});

test('products.list: one page of a category, money exact, rate-limit figures', async () => {
  const page = await market.products.list({ category: ids.category, limit: 10 });
  assert.equal(page.data.length, 10);
  assert.equal(typeof page.nextCursor, 'string');
  // Newest first: the last imported first.
  assert.deepEqual(page.data.map((p) => p.id), catalogue.slice(-10).reverse().map((p) => p.id));
  for (const p of page.data) {
    const want = catalogue.find((c) => c.id === p.id);
    assert.deepEqual(p, { id: want.id, title: want.title, price: usd(want.price), seller: ids.seller });
  }
  const rl = page.rateLimit;
  assert.equal(rl.limit, 600);
  assert.ok(rl.remaining >= 0 && rl.remaining < 600, `remaining ${rl.remaining}`);
  assert.ok(rl.reset >= 1 && rl.reset <= 60, `reset ${rl.reset}`);
  assert.equal(page.lastResponse.status, 200);
  assert.ok(page.lastResponse.requestId, 'X-Request-Id');
  // The next page follows on.
  const next = await market.products.list({ category: ids.category, limit: 10, cursor: page.nextCursor });
  assert.deepEqual(next.data.map((p) => p.id), catalogue.slice(-20, -10).reverse().map((p) => p.id));
});

test('products.all: a 45-product category walked 10 at a time, every product exactly once, 5 requests', async () => {
  const fetch = recordingFetch();
  const m = client(buyer, { fetch });
  const seen = [];
  for await (const p of m.products.all({ category: ids.category, limit: 10 })) {
    seen.push(p.id);
    assert.equal(typeof p.price, 'string');
  }
  assert.equal(seen.length, N);
  assert.equal(new Set(seen).size, N, 'no product twice');
  assert.deepEqual(seen, catalogue.map((p) => p.id).reverse(), 'every product, newest first');
  assert.equal(fetch.log.length, 5, 'pages of 10, 10, 10, 10, 5');
  assert.ok(fetch.log.slice(1).every((r) => /[?&]cursor=/.test(r.url)), 'pages after the first pass the cursor');
  assert.ok(fetch.log.every((r) => r.url.includes(`category=${ids.category}`) && r.url.includes('limit=10')));
});

test('products.all with price filters and a price sort', async () => {
  const got = [];
  for await (const p of market.products.all({ category: ids.category, minPrice: '10.00', maxPrice: 30, sort: 'price_asc', limit: 7 })) got.push(p);
  const want = catalogue.filter((p) => Number(p.price) >= 10 && Number(p.price) <= 30)
    .sort((a, b) => Number(a.price) - Number(b.price) || (a.id < b.id ? -1 : 1));
  assert.ok(want.length > 3);
  assert.deepEqual(got.map((p) => [p.id, p.price]), want.map((p) => [p.id, usd(p.price)]));
  const desc = await market.products.list({ category: ids.category, sort: 'price_desc', limit: 1 });
  const max = catalogue.reduce((a, b) => (Number(b.price) > Number(a.price) ? b : a));
  assert.equal(desc.data[0].price, usd(max.price));
});

test('products.list: q (full text, relevance) and seller', async () => {
  const found = await market.products.list({ q: `zanzibarish ${x}` });
  assert.deepEqual(found.data.map((p) => p.id), [ids.detail]);
  const rel = await market.products.list({ q: 'zanzibarish', sort: 'relevance', seller: ids.seller });
  assert.deepEqual(rel.data.map((p) => p.id), [ids.detail]);
  let count = 0;
  for await (const p of market.products.all({ seller: ids.seller, limit: 100 })) {
    assert.equal(p.seller, ids.seller);
    count++;
  }
  assert.equal(count, N + 2);
});

test('money is the exact decimal the API wrote, beyond what a double holds', async () => {
  const page = await market.products.list({ category: `jsbig-${x}` });
  assert.equal(page.data[0].price, BIG);
  assert.notEqual(String(JSON.parse(BIG)), BIG, 'a double would have changed it');
  const p = await market.products.get(ids.big);
  assert.equal(p.price, BIG);
  assert.equal(p.tiers[0].price, BIG);
});

test('products.get: detail with tiers by price, licence as recorded, rating', async () => {
  const p = await market.products.get(ids.detail);
  assert.equal(p.id, ids.detail);
  assert.equal(p.title, `Zanzibarish detail ${x}`);
  assert.equal(p.description, 'A product with two tiers');
  assert.equal(p.category, ids.otherCategory);
  assert.equal(p.price, '19.99');
  assert.equal(p.currency, 'USD');
  assert.equal(p.seller, ids.seller);
  assert.deepEqual(p.tiers.map((t) => [t.id, t.name, t.price, t.currency]), [
    [`tier_jsd_p_${x}`, 'Personal', '19.99', 'USD'],
    [`tier_jsd_team_${x}`, 'Team', '49.5', 'USD'],
  ]);
  assert.deepEqual(p.tiers[1].licence, { seats: 5, commercial: true, max_prints: 1000 });
  assert.deepEqual(p.rating, { average: 4.5, count: 2 });
  assert.equal(p.createdAt, '2025-06-01T00:00:00Z');
  assert.match(p.updatedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(p.lastResponse.status, 200);
  assert.equal(p.rateLimit.limit, 600);
});

test('sellers.get: profile and a paged catalogue (limit, cursor)', async () => {
  const s = await market.sellers.get(ids.seller, { limit: 5 });
  assert.equal(s.id, ids.seller);
  assert.equal(s.name, 'JS Seller');
  assert.equal(s.bio, 'Sells to the JS client');
  assert.equal(s.website, 'https://js.example');
  assert.match(s.createdAt, /Z$/);
  assert.equal(s.productCount, N + 2);
  assert.equal(s.products.data.length, 5);
  assert.deepEqual(s.products.data.map((p) => p.id), catalogue.slice(-5).reverse().map((p) => p.id));
  assert.equal(typeof s.products.nextCursor, 'string');
  const s2 = await market.sellers.get(ids.seller, { limit: 5, cursor: s.products.nextCursor });
  assert.deepEqual(s2.products.data.map((p) => p.id), catalogue.slice(-10, -5).reverse().map((p) => p.id));
  assert.equal(s2.rateLimit.limit, 600);
});

test('orders.list and orders.all: the buyer\'s orders, status filter, downloads', async () => {
  const page = await market.orders.list({ limit: 1 });
  assert.equal(page.data.length, 1);
  const o = page.data[0];
  assert.equal(o.id, ids.paid);
  assert.equal(o.status, 'paid');
  assert.equal(o.currency, 'USD');
  assert.equal(o.total, '19.99');
  assert.deepEqual(o.items, [{ product: ids.detail, title: `Zanzibarish detail ${x}`, tier: `tier_jsd_p_${x}`, tierName: 'Personal', price: '19.99' }]);
  assert.equal(o.downloads.length, 1);
  const d = o.downloads[0];
  assert.equal(d.id, dlPaid);
  assert.equal(d.filename, 'pack.zip');
  assert.equal(d.sizeBytes, fileBytes.length);
  assert.match(d.url, /^http:\/\/127\.0\.0\.1:\d+\/files\//);
  assert.match(d.expiresAt, /Z$/);
  assert.equal(typeof page.nextCursor, 'string');

  const all = [];
  for await (const ord of market.orders.all({ limit: 1 })) all.push(ord);
  assert.deepEqual(all.map((e) => [e.id, e.status]), [[ids.paid, 'paid'], [ids.refunded, 'refunded']]);
  assert.equal(all[1].total, '49.5');
  assert.equal(all[1].downloads[0].url, null);
  assert.equal(all[1].downloads[0].expiresAt, null);

  const refunded = await market.orders.list({ status: 'refunded' });
  assert.deepEqual(refunded.data.map((e) => e.id), [ids.refunded]);
  assert.equal(refunded.nextCursor, null);
  const paid = [];
  for await (const ord of market.orders.all({ status: 'paid' })) paid.push(ord.id);
  assert.deepEqual(paid, [ids.paid]);
});

test('downloads.createLink: a working link with the lifetime asked for', async () => {
  const before = Date.now();
  const link = await market.downloads.createLink(dlPaid, { expiresIn: 120 });
  assert.equal(link.object, 'download_link');
  assert.equal(link.download, dlPaid);
  assert.equal(link.lastResponse.status, 201);
  assert.equal(link.lastResponse.idempotentReplayed, false);
  assert.match(link.lastResponse.idempotencyKey, /^market-js-/);
  const expires = Date.parse(link.expiresAt);
  assert.ok(Math.abs(expires - (before + 120000)) < 5000, `expiresAt ${link.expiresAt} is in 120 s`);
  const res = await fetch(link.url);
  assert.equal(res.status, 200);
  assert.deepEqual(Buffer.from(await res.arrayBuffer()), fileBytes);
  // Default lifetime, no body.
  const dflt = await market.downloads.createLink(dlPaid);
  assert.ok(Math.abs(Date.parse(dflt.expiresAt) - (Date.now() + 3600000)) < 5000);
  assert.notEqual(dflt.url, link.url);
});

test('downloads.createLink with an idempotencyKey: the same call replays the same link', async () => {
  const key = `js-link-${x}`;
  const a = await market.downloads.createLink(dlPaid, { expiresIn: 300, idempotencyKey: key });
  const b = await market.downloads.createLink(dlPaid, { expiresIn: 300, idempotencyKey: key });
  assert.equal(b.url, a.url);
  assert.equal(b.lastResponse.idempotentReplayed, true);
  // The same key with another body is a conflict.
  await assert.rejects(market.downloads.createLink(dlPaid, { expiresIn: 301, idempotencyKey: key }), (e) => {
    assert.ok(e instanceof ConflictError);
    assert.equal(e.status, 409);
    assert.equal(e.code, 'idempotency_conflict');
    return true;
  });
});

test('webhooks.create: a subscription with its secret; replayed with the same key', async () => {
  const m = client(st.newKey(ids.sellerAcct));
  const params = { url: 'https://127.0.0.1:9/hooks', events: ['sale.refunded', 'sale.completed', 'sale.completed'], description: 'JS client test', idempotencyKey: `js-wh-${x}` };
  const sub = await m.webhooks.create(params);
  assert.match(sub.id, /^we_/);
  assert.equal(sub.object, 'webhook_subscription');
  assert.equal(sub.url, 'https://127.0.0.1:9/hooks');
  assert.deepEqual(sub.events, ['sale.completed', 'sale.refunded']);
  assert.equal(sub.description, 'JS client test');
  assert.equal(sub.status, 'enabled');
  assert.equal(sub.livemode, false);
  assert.match(sub.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.match(sub.createdAt, /Z$/);
  assert.equal(sub.lastResponse.status, 201);
  const again = await m.webhooks.create(params);
  assert.equal(again.id, sub.id);
  assert.equal(again.secret, sub.secret);
  assert.equal(again.lastResponse.idempotentReplayed, true);
  // Defaults: every kind, an empty description.
  const dflt = await m.webhooks.create({ url: 'https://127.0.0.1:9/all' });
  assert.deepEqual(dflt.events, ['sale.completed', 'sale.refunded', 'review.created', 'payout.sent']);
  assert.equal(dflt.description, '');
});

// --- errors -------------------------------------------------------------------------

function expectError(Cls, status, code, param = null) {
  return (e) => {
    assert.ok(e instanceof Cls, `${Cls.name} expected, got ${e?.constructor?.name}: ${e?.message}`);
    assert.ok(e instanceof MarketError);
    assert.equal(e.status, status);
    assert.equal(e.code, code);
    assert.equal(e.param, param);
    assert.ok(e.message.length > 0);
    assert.ok(e.requestId, 'request id');
    return true;
  };
}

test('401: an unknown key is an AuthenticationError', async () => {
  const bad = client(`sk_test_${'A'.repeat(40)}`);
  await assert.rejects(bad.products.list(), expectError(AuthenticationError, 401, 'invalid_api_key'));
  const err = await bad.products.get(ids.detail).catch((e) => e);
  assert.equal(err.type, 'authentication_error');
  assert.match(err.headers.get('www-authenticate'), /Bearer realm="market"/);
  assert.equal(err.rateLimit, null, 'no rate-limit figures before a key is known');
});

test('403: a read-only key on the POST routes is a PermissionError', async () => {
  const ro = client(buyerRO);
  await assert.rejects(ro.downloads.createLink(dlPaid), expectError(PermissionError, 403, 'insufficient_scope'));
  await assert.rejects(ro.webhooks.create({ url: 'https://127.0.0.1:9/x' }), (e) => {
    assert.ok(e instanceof PermissionError);
    assert.equal(e.type, 'permission_error');
    assert.equal(e.rateLimit.limit, 600, 'errors carry the rate-limit figures');
    return true;
  });
  // The read-only key still reads.
  assert.equal((await ro.orders.list()).data.length, 2);
});

test('404: an unknown product, seller or download is a NotFoundError', async () => {
  await assert.rejects(market.products.get(`prod_nope_${x}`), expectError(NotFoundError, 404, 'resource_missing', 'id'));
  await assert.rejects(market.sellers.get(`nope-${x}`), expectError(NotFoundError, 404, 'resource_missing', 'id'));
  await assert.rejects(market.downloads.createLink(`dl_nope_${x}`), expectError(NotFoundError, 404, 'resource_missing', 'id'));
});

test('400: bad parameters are InvalidRequestErrors naming the parameter', async () => {
  await assert.rejects(market.products.list({ limit: 0 }), expectError(InvalidRequestError, 400, 'parameter_invalid', 'limit'));
  await assert.rejects(market.products.list({ sort: 'relevance' }), expectError(InvalidRequestError, 400, 'parameter_invalid', 'sort'));
  await assert.rejects(market.products.list({ minPrice: '5', maxPrice: '1' }), expectError(InvalidRequestError, 400, 'parameter_invalid', 'max_price'));
  await assert.rejects(market.products.list({ colour: 'red' }), expectError(InvalidRequestError, 400, 'parameter_unknown', 'colour'));
  await assert.rejects(market.products.list({ cursor: 'forged' }), expectError(InvalidRequestError, 400, 'cursor_invalid', 'cursor'));
  await assert.rejects(market.orders.list({ status: 'pending' }), expectError(InvalidRequestError, 400, 'parameter_invalid', 'status'));
  await assert.rejects(market.downloads.createLink(dlPaid, { expiresIn: 59 }), expectError(InvalidRequestError, 400, 'parameter_invalid', 'expires_in'));
  const m = client(st.newKey(ids.sellerAcct));
  await assert.rejects(m.webhooks.create({ url: 'http://127.0.0.1/x' }), expectError(InvalidRequestError, 400, 'url_not_https', 'url'));
  await assert.rejects(m.webhooks.create({ url: 'https://127.0.0.1/x', events: ['nope'] }), expectError(InvalidRequestError, 400, 'parameter_invalid', 'events'));
});

test('409: a link for a refunded order is a ConflictError (and an InvalidRequestError)', async () => {
  await assert.rejects(market.downloads.createLink(dlRefunded), (e) => {
    expectError(ConflictError, 409, 'order_refunded', 'id')(e);
    assert.ok(e instanceof InvalidRequestError);
    assert.equal(e.type, 'invalid_request_error');
    return true;
  });
});
