// GET /v1/products, GET /v1/products/:id and GET /v1/sellers/:id against contract
// sections 2 (modes), 5 (pagination) and 6 (routes): whole-category walks page by page
// for every sort with ties in created_at and price, also while products are added
// mid-walk; cursors that are tampered with or replayed elsewhere; full-text search;
// price filters; money rendering; the detail and the seller profile; only published
// products of the key's mode anywhere.
import { test, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { api, importDoc, newKey, psql, uniqueId } from './lib/stack.mjs';
import { assertError, assertInvalid, assertList, assertRateHeaders, RFC3339 } from './fixtures/expect.mjs';
import { buildCatalogue, itemOf, major, newWalkProducts, toImport } from './fixtures/catalogue.mjs';

const run = uniqueId('');
const cat = buildCatalogue(run);
const { names } = cat;
let testKey; // sk_test_, read-only (a new one for each test)
let liveKey; // sk_live_, read-only (a new one for each test)
let otherKey; // sk_test_ of another account

// Every published test-mode product of walk-<run> known so far, by id (walks add more).
const walkKnown = new Map();

before(() => {
  importDoc(cat.testDoc);
  importDoc(cat.liveDoc);
  const other = uniqueId('acct_cato_');
  importDoc({ mode: 'test', accounts: [{ id: other }] });
  otherKey = newKey({ account: other, mode: 'test', access: 'read-only' });
  for (const p of cat.walk) walkKnown.set(p.id, p);
});

// Fresh keys for every test, so that no test runs into the 600-a-minute limit.
beforeEach(() => {
  testKey = newKey({ account: names.buyer, mode: 'test', access: 'read-only' });
  liveKey = newKey({ account: names.buyer, mode: 'live', access: 'read-only' });
});

const get = (path, key = testKey) => api(path, { key });

/** Follows next_cursor from `first` to the end; returns the pages (envelopes). */
async function walkPages(first, { key = testKey, onPage } = {}) {
  const pages = [];
  let url = first;
  for (;;) {
    const res = await get(url, key);
    const body = assertList(res);
    pages.push(body);
    if (onPage) await onPage(pages.length, body);
    if (body.next_cursor === null) break;
    assert.ok(pages.length < 200, 'the walk ends');
    url = `${first}${first.includes('?') ? '&' : '?'}cursor=${body.next_cursor}`;
  }
  return pages;
}

// The orders of docs/contract.md section 5, on fixture products.
const byId = (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const priceOf = (p) => major(p.minor, p.currency);
// Relevance of q=widget: rank 1 when the title matches, else 0 (a description match);
// ties by id, descending.
const rankOf = (p) => (/widget/i.test(p.title) ? 1 : 0);
const SORTS = {
  newest: (a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : -byId(a, b)),
  price_asc: (a, b) => priceOf(a) - priceOf(b) || byId(a, b),
  price_desc: (a, b) => priceOf(b) - priceOf(a) || -byId(a, b),
  relevance: (a, b) => rankOf(b) - rankOf(a) || -byId(a, b),
};
const matchesWidget = (p) => /widget/i.test(p.title) || /widget/i.test(p.description);

/**
 * Walks walk-<run> with limit 7 in one sort; after page 2, adds products (some sorting
 * before the position reached, some after, some tied with existing rows) and checks:
 * no duplicates, the order of the sort, every product known before the walk exactly
 * once, and each new product present exactly when it sorts after the page it was added
 * behind.
 */
async function walkWithInserts(sort, query) {
  const cmp = SORTS[sort];
  const filter = sort === 'relevance' ? matchesWidget : () => true;
  const before = [...walkKnown.values()].filter(filter).sort(cmp);
  assert.ok(before.length > 30, 'the walk spans many pages');
  let boundary = null; // the last item served before the insert
  let added = [];
  const nowish = new Date(Date.now() - 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const pages = await walkPages(`/v1/products?category=${names.walk}&limit=7${query}`, {
    onPage: async (n, body) => {
      // The first full page from page 2 on: its next_cursor is its last item (a relevance
      // page may end at its window instead, short: docs/api.md).
      if (n < 2 || boundary !== null || body.data.length !== 7) return;
      boundary = walkKnown.get(body.data.at(-1).id);
      // Rows tied with the last row served on its sort key, with ids on both sides of
      // it; a row before it in every sort (newest, cheapest, dearest, best ranked) and
      // one after it in every sort; rows elsewhere in the walk.
      const tie = {
        created_at: boundary.created_at, minor: Math.round(priceOf(boundary) * 100), currency: 'USD',
        kind: rankOf(boundary) === 1 ? 0 : 1,
      };
      added = newWalkProducts(run, sort.replace('_', ''), names, [
        { ...tie, side: 'z' },
        { ...tie, side: 'a' },
        { created_at: nowish, minor: 0, currency: 'USD', kind: 3, side: 'a' },
        { created_at: '2025-06-01T00:00:00Z', minor: 99999999, currency: 'USD', kind: 1, side: 'z' },
        { created_at: cat.walk[50].created_at, minor: 1999, currency: 'EUR', kind: 2, side: 'a' },
        { created_at: cat.walk[99].created_at, minor: 5, currency: 'JPY', kind: 0, side: 'z' },
      ]);
      importDoc({ mode: 'test', products: added.map(toImport) });
      for (const p of added) walkKnown.set(p.id, p);
    },
  });

  assert.ok(boundary !== null, 'a full page from page 2 on, behind which products were added');
  pages.forEach((p, i) => {
    if (sort === 'relevance') assert.ok(p.data.length <= 7, `page ${i + 1} holds at most 7`);
    else if (i < pages.length - 1) assert.equal(p.data.length, 7, `page ${i + 1} is full`);
    else assert.ok(p.data.length >= 1 && p.data.length <= 7, 'the last page is not empty');
  });
  const items = pages.flatMap((p) => p.data);
  const ids = items.map((i) => i.id);
  assert.equal(new Set(ids).size, ids.length, `${sort}: no product twice`);
  for (const item of items) {
    const p = walkKnown.get(item.id);
    assert.ok(p, `${sort}: ${item.id} belongs to the walk (published, test mode, this category)`);
    assert.deepEqual(item, itemOf(p), `${sort}: the item of ${item.id}`);
  }
  const served = items.map((i) => walkKnown.get(i.id));
  for (let i = 1; i < served.length; i++) {
    assert.ok(cmp(served[i - 1], served[i]) < 0, `${sort}: ${served[i - 1].id} before ${served[i].id}`);
  }
  const servedIds = new Set(ids);
  for (const p of before) assert.ok(servedIds.has(p.id), `${sort}: ${p.id} was not skipped`);
  for (const p of added.filter(filter)) {
    const after = cmp(boundary, p) < 0;
    assert.equal(servedIds.has(p.id), after,
      `${sort}: the new ${p.id} ${after ? 'sorts after the position and must appear' : 'sorts before the position and must not appear'}`);
  }
  // The inserts exercised both cases: rows behind the position (never served) and rows
  // ahead of it (served once).
  const fresh = added.filter(filter);
  assert.ok(fresh.some((p) => servedIds.has(p.id)), `${sort}: some new product sorted after the position`);
  assert.ok(fresh.some((p) => !servedIds.has(p.id)), `${sort}: some new product sorted before the position`);
  return items;
}

test('walk: newest (created_at then id, descending) while products are added', async () => {
  const items = await walkWithInserts('newest', '');
  assert.ok(items.length >= 100);
});

test('walk: price_asc (price then id, ascending; JPY 5 ties USD 5.00) while products are added', async () => {
  await walkWithInserts('price_asc', '&sort=price_asc');
});

test('walk: price_desc (price then id, descending) while products are added', async () => {
  await walkWithInserts('price_desc', '&sort=price_desc');
});

test('walk: relevance with q (title matches first, then id descending) while products are added', async () => {
  const items = await walkWithInserts('relevance', '&q=widget');
  // relevance is the default sort when q is given: the same first page.
  const implicit = assertList(await get(`/v1/products?category=${names.walk}&limit=7&q=widget`));
  const explicit = assertList(await get(`/v1/products?category=${names.walk}&limit=7&q=widget&sort=relevance`));
  assert.deepEqual(implicit.data, explicit.data);
  assert.ok(/widget/i.test(items[0].title));
});

test('walk: limit 100 and the default limit 20 give the same order as limit 7; the seller filter', async () => {
  const all = (await walkPages(`/v1/products?category=${names.walk}&limit=100`)).flatMap((p) => p.data);
  const twenty = await walkPages(`/v1/products?category=${names.walk}`);
  twenty.slice(0, -1).forEach((p) => assert.equal(p.data.length, 20));
  assert.deepEqual(twenty.flatMap((p) => p.data), all);
  const expected = [...walkKnown.values()].sort(SORTS.newest).map(itemOf);
  assert.deepEqual(all, expected);
  // The seller filter, combined with the category and a price sort, paged.
  const bySeller = (await walkPages(`/v1/products?category=${names.walk}&seller=${names.seller2}&limit=9&sort=price_desc`)).flatMap((p) => p.data);
  assert.deepEqual(bySeller, [...walkKnown.values()].filter((p) => p.seller === names.seller2).sort(SORTS.price_desc).map(itemOf));
  // An unknown seller or category is an empty list, not an error.
  assert.deepEqual(assertList(await get(`/v1/products?seller=nobody-${run}`)), { data: [], next_cursor: null });
  assert.deepEqual(assertList(await get(`/v1/products?category=nothing-${run}`)), { data: [], next_cursor: null });
});

test('draft and archived products appear nowhere', async () => {
  const hiddenIds = [...cat.hidden, ...cat.fonts.filter((p) => p.status !== 'published')].map((p) => p.id);
  for (const id of hiddenIds) {
    assertError(await get(`/v1/products/${id}`), 404, 'invalid_request_error', 'resource_missing', 'id');
  }
  const lists = [
    `/v1/products?category=${names.walk}&limit=100&sort=price_asc`,
    `/v1/products?category=${names.fonts}&limit=100`,
    `/v1/products?q=widget&category=${names.walk}&limit=100`,
    `/v1/products?q=fonts&category=${names.fonts}`,
    `/v1/products?seller=${names.seller}&limit=100&max_price=0`,
  ];
  for (const url of lists) {
    for (const page of await walkPages(url)) {
      for (const item of page.data) assert.ok(!hiddenIds.includes(item.id), `${url}: ${item.id} is hidden`);
    }
  }
  let cursor = null;
  let seen = 0;
  do {
    const res = await get(`/v1/sellers/${names.seller}?limit=50${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(res.status, 200, res.text.slice(0, 200));
    for (const item of res.json.products.data) assert.ok(!hiddenIds.includes(item.id), `seller page: ${item.id} is hidden`);
    seen += res.json.products.data.length;
    cursor = res.json.products.next_cursor;
  } while (cursor !== null);
  assert.ok(seen > 50, 'the seller walk covered the catalogue');
});

test('cursor tampering: a modified or spliced cursor is 400 cursor_invalid', async () => {
  const base = `/v1/products?category=${names.walk}&limit=7`;
  const p1 = assertList(await get(base));
  const p2 = assertList(await get(`${base}&cursor=${p1.next_cursor}`));
  const [payload1, mac1] = p1.next_cursor.split('.');
  const [payload2, mac2] = p2.next_cursor.split('.');
  assert.ok(payload1 && mac1 && payload2 && mac2);
  const flip = (s, i) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  const forged = [
    `${flip(payload1, 3)}.${mac1}`, // the position changed
    `${payload1}.${flip(mac1, 5)}`, // the MAC changed
    `${payload1}.${mac2}`, // another cursor's MAC
    `${payload2}.${mac1}`,
    `${payload1.slice(0, -2)}.${mac1}`,
    `${payload1}.${mac1}A`,
    `${payload1}.${mac1.slice(0, -1)}`,
    `${payload1}${mac1}`,
    `${payload1}.`,
    `.${mac1}`,
    '.',
    'abc',
    '',
    `${payload1}.${mac1}.${mac1}`,
    `${Buffer.from('9999-01-01 00:00:00+00\x1fprod_x').toString('base64url')}.${mac1}`,
    'x'.repeat(600),
  ];
  for (const c of forged) {
    const res = await get(`${base}&cursor=${encodeURIComponent(c)}`);
    assertInvalid(res, 'cursor_invalid', 'cursor');
    assertRateHeaders(res);
  }
  // The genuine cursor still works, with another page size too (the limit is not bound).
  assert.deepEqual(assertList(await get(`${base}&cursor=${p1.next_cursor}`)).data, p2.data);
  const bigger = assertList(await get(`/v1/products?category=${names.walk}&limit=3&cursor=${p1.next_cursor}`));
  assert.deepEqual(bigger.data, p2.data.slice(0, 3));
});

test('a cursor replayed with other filters, sort, mode or on another route is 400 cursor_invalid', async () => {
  const base = `/v1/products?category=${names.walk}&limit=7`;
  const c = assertList(await get(base)).next_cursor;
  const rel = assertList(await get(`${base}&q=widget`)).next_cursor;
  const sellerPage = await get(`/v1/sellers/${names.seller}?limit=2`);
  assert.equal(sellerPage.status, 200);
  const sc = sellerPage.json.products.next_cursor;
  assert.equal(typeof sc, 'string');

  const replays = [
    [`/v1/products?category=${names.fonts}&limit=7&cursor=${c}`, testKey],
    [`/v1/products?limit=7&cursor=${c}`, testKey],
    [`${base}&sort=price_asc&cursor=${c}`, testKey],
    [`${base}&sort=price_desc&cursor=${c}`, testKey],
    [`${base}&q=walk&sort=newest&cursor=${c}`, testKey],
    [`${base}&min_price=0&cursor=${c}`, testKey],
    [`${base}&max_price=99999&cursor=${c}`, testKey],
    [`${base}&seller=${names.seller}&cursor=${c}`, testKey],
    [`${base}&q=widgets&cursor=${rel}`, testKey], // another q
    [`${base}&q=widget&sort=newest&cursor=${rel}`, testKey],
    [`${base}&cursor=${c}`, liveKey], // another mode
    [`${base}&q=widget&cursor=${rel}`, liveKey],
    [`/v1/sellers/${names.seller}?limit=7&cursor=${c}`, testKey], // another route
    [`/v1/products?seller=${names.seller}&limit=2&cursor=${sc}`, testKey],
    [`${base}&cursor=${sc}`, testKey],
    [`/v1/sellers/${names.seller2}?limit=2&cursor=${sc}`, testKey], // another seller
    [`/v1/sellers/${names.seller}?limit=2&cursor=${sc}`, liveKey], // another mode
    [`/v1/orders?cursor=${c}`, testKey],
  ];
  for (const [url, key] of replays) {
    const res = await get(url, key);
    assertInvalid(res, 'cursor_invalid', 'cursor');
  }
  // Bound to the sort, not to how it was spelled: the default sort given explicitly, and
  // another account of the same mode (product lists are not per account), are accepted.
  assert.equal((await get(`${base}&sort=newest&cursor=${c}`)).status, 200);
  assert.equal((await get(`${base}&cursor=${c}`, otherKey)).status, 200);
  assert.equal((await get(`${base}&q=widget&sort=relevance&cursor=${rel}`)).status, 200);
  assert.equal((await get(`/v1/sellers/${names.seller}?limit=5&cursor=${sc}`)).status, 200);
});

test('full-text search: title and description words, stemming, relevance puts title matches first', async () => {
  const f = Object.fromEntries(cat.fonts.map((p) => [p.id.slice(5, 6), p])); // m, j, s, k, f, d
  const search = async (q, extra = '') =>
    assertList(await get(`/v1/products?category=${names.fonts}&q=${encodeURIComponent(q)}${extra}`)).data.map((i) => i.id);
  // Title hits ("Font", "Fonts") rank above the description hit ("fonts"); the draft
  // "Draft Fonts Bundle" is not found; equal ranks are ordered by id, descending.
  const titleHits = [f.m.id, f.j.id].sort().reverse();
  assert.deepEqual(await search('fonts'), [...titleHits, f.s.id]);
  assert.deepEqual(await search('font'), [...titleHits, f.s.id]);
  assert.deepEqual(await search('FONT'), [...titleHits, f.s.id]);
  assert.deepEqual(await search('grotesk'), [f.m.id]); // a title word
  assert.deepEqual(await search('weights'), [f.m.id]); // a description word, stemmed
  assert.deepEqual(await search('weight'), [f.m.id]);
  assert.deepEqual(await search('elegant'), [f.s.id]);
  assert.deepEqual(await search('dashboard'), [f.k.id]); // "dashboards"
  assert.deepEqual(await search('"elegant fonts"'), [f.s.id]); // a phrase (websearch syntax)
  assert.deepEqual(await search('fonts -serif'), titleHits); // exclusion
  // k matches in its title ("Icon Pack") and description, j in its description only.
  assert.deepEqual(await search('lettering OR icons'), [f.k.id, f.j.id]);
  assert.deepEqual(await search('nothingmatchesthis'), []);
  assert.deepEqual(await search('the'), []); // only a stop word: nothing, not an error
  assert.deepEqual(await search('font&|!():*<->\''), [...titleHits, f.s.id]); // operators are text
  // q with another sort, and with the price filters.
  assert.deepEqual(await search('fonts', '&sort=price_asc'), [f.m.id, f.s.id, f.j.id]);
  assert.deepEqual(await search('fonts', '&sort=newest'), [f.s.id, f.j.id, f.m.id]);
  assert.deepEqual(await search('fonts', '&max_price=19.99'), [f.m.id, f.s.id]);
  // Search spans the catalogue (no category) and respects the seller filter.
  const wide = assertList(await get(`/v1/products?q=grotesk&seller=${names.seller}`)).data.map((i) => i.id);
  assert.deepEqual(wide, [f.m.id]);
});

test('price filters are inclusive, compare the lowest tier price in the product\'s own units', async () => {
  const ids = async (query) =>
    assertList(await get(`/v1/products?category=${names.fonts}&sort=price_asc&${query}`)).data.map((i) => i.id);
  const f = Object.fromEntries(cat.fonts.map((p) => [p.id.slice(5, 6), p]));
  // Prices: f 0 USD, k 1.5 KWD, m 5 USD, s 19.99 USD, j 1200 JPY (d is a draft).
  assert.deepEqual(await ids(''), [f.f.id, f.k.id, f.m.id, f.s.id, f.j.id]);
  assert.deepEqual(await ids('min_price=19.99'), [f.s.id, f.j.id]);
  assert.deepEqual(await ids('max_price=19.99'), [f.f.id, f.k.id, f.m.id, f.s.id]);
  assert.deepEqual(await ids('min_price=19.99&max_price=19.99'), [f.s.id]);
  assert.deepEqual(await ids('min_price=19.991'), [f.j.id]);
  assert.deepEqual(await ids('max_price=19.989999999999'), [f.f.id, f.k.id, f.m.id]);
  assert.deepEqual(await ids('min_price=5&max_price=5.00'), [f.m.id]);
  assert.deepEqual(await ids('min_price=1200&max_price=1200'), [f.j.id]); // JPY 1200, no conversion
  assert.deepEqual(await ids('min_price=1.5&max_price=1.5'), [f.k.id]); // KWD 1.500
  assert.deepEqual(await ids('max_price=0'), [f.f.id]);
  assert.deepEqual(await ids('min_price=0'), [f.f.id, f.k.id, f.m.id, f.s.id, f.j.id]);
  assert.deepEqual(await ids('min_price=000005&max_price=0019.990'), [f.m.id, f.s.id]);
  assert.deepEqual(await ids('min_price=1201'), []);
  // A tier dearer than the filter does not matter: only the lowest price counts
  // (m has tiers 5, 19.99 and 1200.5).
  assert.deepEqual(await ids('min_price=1200.5'), []);
  for (const [query, param] of [['min_price=20&max_price=19.99', null], ['min_price=0.02&max_price=0.01', null]]) {
    const e = assertInvalid(await get(`/v1/products?${query}`), 'parameter_invalid', param ?? undefined);
    assert.ok(['min_price', 'max_price'].includes(e.param), `min > max names a price: ${e.param}`);
  }
});

test('product detail: fields, money rendering, tiers by price, licence, rating', async () => {
  const m = cat.fonts[0];
  const res = await get(`/v1/products/${m.id}`);
  assert.equal(res.status, 200, res.text);
  assertRateHeaders(res);
  const d = res.json;
  assert.deepEqual(Object.keys(d).sort(), ['category', 'created_at', 'currency', 'description', 'id',
    'price', 'rating', 'seller', 'tiers', 'title', 'updated_at']);
  assert.equal(d.id, m.id);
  assert.equal(d.title, 'Grotesk Sans Font');
  assert.equal(d.description, m.description);
  assert.equal(d.category, names.fonts);
  assert.equal(d.price, 5);
  assert.equal(d.currency, 'USD');
  assert.equal(d.seller, names.seller);
  assert.equal(d.created_at, '2026-02-03T04:05:06Z');
  assert.equal(d.updated_at, '2026-02-04T00:00:00Z');
  assert.deepEqual(d.rating, { average: 4.33, count: 3 });
  assert.deepEqual(d.tiers, [
    { id: `tier_m${run}_personal`, name: 'Personal', description: 'One seat, personal use', price: 5,
      currency: 'USD', licence: { seats: 1, commercial: false } },
    { id: `tier_m${run}_studio`, name: 'Studio', description: 'Up to five seats', price: 19.99,
      currency: 'USD', licence: { seats: 5, commercial: true } },
    { id: `tier_m${run}_enterprise`, name: 'Enterprise', description: 'Unlimited', price: 1200.5,
      currency: 'USD', licence: { seats: null, commercial: true, notes: 'worldwide' } },
  ]);
  // The JSON text itself: plain decimals, never 19.990000001 or 5.00.
  assert.match(res.text, /"price":19\.99[,}]/);
  assert.match(res.text, /"price":5[,}]/);
  assert.match(res.text, /"price":1200\.5[,}]/);
  assertPlainPrices(res.text);

  const j = assertDetail(await get(`/v1/products/prod_j${run}`));
  assert.equal(j.price, 1200);
  assert.equal(j.currency, 'JPY');
  assert.deepEqual(j.tiers.map((t) => [t.price, t.currency]), [[1200, 'JPY']]);
  assert.deepEqual(j.rating, { average: 5, count: 2 });

  const kRes = await get(`/v1/products/prod_k${run}`);
  const k = assertDetail(kRes);
  assert.equal(k.price, 1.5);
  assert.equal(k.currency, 'KWD');
  assert.deepEqual(k.tiers.map((t) => [t.name, t.price]), [['Personal', 1.5], ['Business', 12.345]]);
  assert.match(kRes.text, /"price":12\.345[,}]/);
  assertPlainPrices(kRes.text);
  assert.deepEqual(k.rating, { average: null, count: 0 });

  const free = assertDetail(await get(`/v1/products/prod_f${run}`));
  assert.equal(free.price, 0);
  assert.deepEqual(free.tiers[0].licence, { seats: 1 });
  // updated_at defaults to the import time when not given: a valid timestamp.
  assert.match(free.updated_at, RFC3339);

  // The list renders the same lowest price.
  const list = assertList(await get(`/v1/products?category=${names.fonts}&sort=price_asc`)).data;
  assert.deepEqual(list.map((i) => i.price), [0, 1.5, 5, 19.99, 1200]);
  assert.deepEqual(list.find((i) => i.id === m.id), { id: m.id, title: m.title, price: 5, seller: names.seller });
});

/** Every "price" in a JSON text is a plain decimal: no exponent, no trailing zero. */
function assertPlainPrices(text) {
  const prices = [...text.matchAll(/"price":([^,}\]]*)/g)].map((m) => m[1]);
  assert.ok(prices.length > 0);
  for (const p of prices) assert.match(p, /^(0|[1-9]\d*)(\.\d*[1-9])?$/, `price ${p}`);
}

function assertDetail(res) {
  assert.equal(res.status, 200, res.text);
  for (const t of res.json.tiers) {
    assert.deepEqual(Object.keys(t).sort(), ['currency', 'description', 'id', 'licence', 'name', 'price']);
    assert.equal(typeof t.licence, 'object');
    assert.notEqual(t.licence, null);
  }
  const prices = res.json.tiers.map((t) => t.price);
  assert.deepEqual(prices, [...prices].sort((a, b) => a - b), 'tiers are ordered by price');
  assert.match(res.json.created_at, RFC3339);
  assert.match(res.json.updated_at, RFC3339);
  return res.json;
}

test('seller profile: fields, product_count, newest-first catalogue paged with limit and cursor', async () => {
  const res = await get(`/v1/sellers/${names.seller}?limit=7`);
  assert.equal(res.status, 200, res.text);
  assertRateHeaders(res);
  const s = res.json;
  assert.deepEqual(Object.keys(s).sort(), ['bio', 'created_at', 'id', 'name', 'product_count', 'products', 'website']);
  assert.equal(s.id, names.seller);
  assert.equal(s.name, 'Pixel Forge');
  assert.equal(s.bio, 'Fonts and icons');
  assert.equal(s.website, 'https://pixelforge.example');
  assert.equal(s.created_at, '2025-03-04T05:06:07Z');
  assert.deepEqual(Object.keys(s.products).sort(), ['data', 'next_cursor']);

  const expected = [...walkKnown.values(), ...cat.fonts]
    .filter((p) => p.seller === names.seller && p.status === 'published')
    .sort(SORTS.newest).map(itemOf);
  assert.equal(s.product_count, expected.length);

  const served = [...s.products.data];
  let cursor = s.products.next_cursor;
  let pages = 1;
  while (cursor !== null) {
    assert.equal(typeof cursor, 'string');
    const next = await get(`/v1/sellers/${names.seller}?limit=7&cursor=${cursor}`);
    assert.equal(next.status, 200, next.text);
    assert.equal(next.json.product_count, expected.length, 'product_count on every page');
    assert.equal(next.json.name, 'Pixel Forge');
    served.push(...next.json.products.data);
    cursor = next.json.products.next_cursor;
    pages += 1;
    assert.ok(pages < 100);
  }
  assert.deepEqual(served, expected, 'every published product once, newest first');
  assert.equal(pages, Math.ceil(expected.length / 7));

  // Default page size 20; limit is validated like the list's.
  const first = await get(`/v1/sellers/${names.seller}`);
  assert.deepEqual(first.json.products.data, expected.slice(0, 20));
  assertInvalid(await get(`/v1/sellers/${names.seller}?limit=101`), 'parameter_invalid', 'limit');
  assertInvalid(await get(`/v1/sellers/${names.seller}?cursor=abc`), 'cursor_invalid', 'cursor');

  // A seller without a website, and one with no products.
  const s2 = (await get(`/v1/sellers/${names.seller2}?limit=1`)).json;
  assert.equal(s2.website, null);
  assert.equal(s2.bio, '');
  assert.equal(s2.product_count, [...walkKnown.values()].filter((p) => p.seller === names.seller2).length);
  const s3 = await get(`/v1/sellers/${names.seller3}`);
  assert.equal(s3.status, 200);
  assert.equal(s3.json.product_count, 0);
  assert.deepEqual(s3.json.products, { data: [], next_cursor: null });

  assertError(await get(`/v1/sellers/nobody-${run}`), 404, 'invalid_request_error', 'resource_missing', 'id');
});

test('seller profile: a worker counts once, and a catalogue write shows in product_count at once', async () => {
  // Each worker keeps a seller's count until a catalogue write is notified; requests with
  // other limits (pages no worker kept) reach every worker with the kept count.
  const seller = uniqueId('countseller_');
  const owner = uniqueId('acct_cnt_');
  const product = (i, status = 'published') => ({
    id: `prod_cnt${run}_${i}`, seller, title: `Counted ${i}`, description: '', category: names.walk,
    currency: 'USD', status, created_at: '2026-01-01T00:00:00Z',
    tiers: [{ id: `tier_cnt${run}_${i}`, name: 'Personal', price: 1, licence: {} }],
  });
  importDoc({
    mode: 'test', accounts: [{ id: owner }],
    sellers: [{ id: seller, account: owner, name: 'Counted', bio: '' }],
    products: [product(0), product(1), product(2, 'draft')],
  });
  const counts = async (from) => {
    const seen = [];
    for (let limit = from; limit < from + 8; limit++) seen.push((await get(`/v1/sellers/${seller}?limit=${limit}`)).json.product_count);
    return seen;
  };
  assert.deepEqual(await counts(1), Array(8).fill(2));
  importDoc({ mode: 'test', products: [product(3), { ...product(0), status: 'archived' }, { ...product(2) }] });
  assert.deepEqual(await counts(11), Array(8).fill(3), 'one added, one archived, one published: 3 everywhere');
});

test('mode isolation: a test key never sees live products and a live key never sees sandbox ones', async () => {
  const livePublished = cat.live.filter((p) => p.status === 'published');
  // Detail: each side 404s the other's products.
  for (const p of cat.live) {
    assertError(await get(`/v1/products/${p.id}`, testKey), 404, 'invalid_request_error', 'resource_missing', 'id');
  }
  for (const p of [...cat.walk.slice(0, 5), cat.fonts[0]]) {
    assertError(await get(`/v1/products/${p.id}`, liveKey), 404, 'invalid_request_error', 'resource_missing', 'id');
  }
  const liveDetail = await get(`/v1/products/${livePublished[0].id}`, liveKey);
  assert.equal(liveDetail.status, 200);
  assert.equal(liveDetail.json.price, 1);
  assertError(await get(`/v1/products/${cat.live[5].id}`, liveKey), 404, 'invalid_request_error', 'resource_missing', 'id');

  // Lists: the same category holds only the key's mode.
  const liveItems = (await walkPages(`/v1/products?category=${names.walk}&limit=2`, { key: liveKey })).flatMap((p) => p.data);
  assert.deepEqual(liveItems, [...livePublished].sort(SORTS.newest).map(itemOf));
  const liveSearch = assertList(await get(`/v1/products?category=${names.walk}&q=widget`, liveKey)).data.map((i) => i.id);
  assert.deepEqual(liveSearch, livePublished.filter(matchesWidget).sort(SORTS.relevance).map((p) => p.id));
  const liveCheap = assertList(await get(`/v1/products?category=${names.walk}&max_price=2&sort=price_asc`, liveKey)).data.map((i) => i.id);
  assert.deepEqual(liveCheap, [cat.live[0].id, cat.live[1].id]);
  assert.deepEqual(assertList(await get(`/v1/products?category=${names.fonts}`, liveKey)).data, []);
  const testItems = (await walkPages(`/v1/products?category=${names.walk}&limit=100`)).flatMap((p) => p.data);
  for (const p of cat.live) assert.ok(!testItems.some((i) => i.id === p.id), `${p.id} is live only`);

  // Seller profiles: shared fields, per-mode catalogue and count.
  const [t, l] = [(await get(`/v1/sellers/${names.seller}?limit=100`)).json, (await get(`/v1/sellers/${names.seller}?limit=100`, liveKey)).json];
  for (const f of ['id', 'name', 'bio', 'website', 'created_at']) assert.equal(l[f], t[f], `shared ${f}`);
  assert.equal(l.product_count, livePublished.length);
  assert.deepEqual(l.products.data, [...livePublished].sort(SORTS.newest).map(itemOf));
  assert.equal(l.products.next_cursor, null);
  assert.ok(t.product_count > livePublished.length);
  assert.ok(!t.products.data.some((i) => i.id.startsWith(`prod_l${run}`)));
  const l2 = (await get(`/v1/sellers/${names.seller2}`, liveKey)).json;
  assert.equal(l2.product_count, 0);
  assert.deepEqual(l2.products, { data: [], next_cursor: null });

  // The database agrees that both sides hold rows (the isolation is the API's doing).
  assert.equal(psql(`SELECT count(*) FROM products WHERE category = '${names.walk}' AND mode = 'live'`), String(cat.live.length));
});
