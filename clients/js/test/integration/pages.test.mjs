// Whole pages (contract section 5, decided 2026-11-27): a page holds `limit` items whenever
// at least that many matches remain after its cursor; only the last holds fewer, and its
// nextCursor is null. So products.all() walks a search of N results in
// max(1, ceil(N / limit)) requests, and a search that matches nothing costs one request.
//
// Requests are counted through the client's own onResponse hook (one call per HTTP
// attempt, retries included); a fetch wrapper reads each page's body to see its size and
// its next_cursor. Each walk uses a fresh key, so the rate limit never adds a retry.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';

import { Market } from '@markethq/market';
import { main, uniqueId } from './lib.mjs';

const st = main();
const x = uniqueId();
const word = `pagewalk${x}`; // in 5 titles and 3 descriptions, nowhere else
const account = `acct_jspw_${x}`;
const seller = `jspw-${x}`;
const pid = (i) => `prod_jspw_${x}_${String(i).padStart(2, '0')}`;
// created_at hours and prices (cents) chosen so that each sort gives another order; two
// prices tie (120) so that price_asc needs its id tie-break.
const HOURS = [3, 7, 0, 9, 5, 1, 10, 4, 8, 2, 6, 11];
const CENTS = [500, 120, 999, 350, 120, 780, 50, 610, 40, 30, 20, 10];
// 0..4: the word in the title (rank 1); 5..7: in the description only (rank 0);
// 8..10: elsewhere in the catalogue (no match); 11: a draft with the word (never shown).
const products = HOURS.map((h, i) => ({
  id: pid(i),
  title: i < 5 || i === 11 ? `${word} poster ${i}` : `Plain print ${i}`,
  description: i >= 5 && i < 8 ? `A print that mentions ${word} in its description` : 'A print for the page walk',
  status: i === 11 ? 'draft' : 'published',
  created: new Date(Date.UTC(2026, 1, 1, h)).toISOString().replace('.000Z', 'Z'),
  cents: CENTS[i],
}));
const matches = products.slice(0, 8);
const byIdDesc = (a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
const EXPECTED = {
  relevance: [...matches.slice(0, 5).sort(byIdDesc), ...matches.slice(5).sort(byIdDesc)].map((p) => p.id),
  newest: [...matches].sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : byIdDesc(a, b))).map((p) => p.id),
  price_asc: [...matches].sort((a, b) => a.cents - b.cents || -byIdDesc(a, b)).map((p) => p.id),
};

before(() => {
  st.importDoc({
    mode: 'test',
    accounts: [{ id: account }],
    sellers: [{ id: seller, account, name: 'JS Page Walk', bio: '' }],
    products: products.map((p) => ({
      id: p.id, seller, title: p.title, description: p.description, category: `jspw-${x}`,
      currency: 'USD', status: p.status, created_at: p.created,
      tiers: [{ id: p.id.replace('prod_', 'tier_'), name: 'Personal', description: '', price: p.cents / 100, licence: {} }],
    })),
  });
});

/**
 * Walks products.all(params) with a fresh key; returns the ids in order, the attempts the
 * onResponse hook saw, and each page as the wire carried it ({size, nextCursor}).
 */
async function walk(params) {
  const attempts = [];
  const pages = [];
  const fetch = async (url, init) => {
    const res = await globalThis.fetch(url, init);
    if (new URL(url).pathname === '/v1/products') {
      const body = await res.clone().json();
      pages.push({ status: res.status, size: body.data?.length, nextCursor: body.next_cursor });
    }
    return res;
  };
  const market = new Market({
    apiKey: st.newKey(account, 'read-only'), baseUrl: st.baseUrl, fetch, onResponse: (info) => attempts.push(info),
  });
  const ids = [];
  for await (const p of market.products.all(params)) ids.push(p.id);
  return { ids, attempts, pages };
}

/** The whole-page rule for a walk of `ids.length` results in pages of `limit`. */
function assertWholePages({ ids, attempts, pages }, limit) {
  const n = ids.length;
  const want = Math.max(1, Math.ceil(n / limit));
  assert.ok(attempts.every((a) => a.status === 200 && a.attempt === 1), `no retry: ${JSON.stringify(attempts)}`);
  assert.equal(pages.length, attempts.length, 'the hook saw every request the wire carried');
  const sizes = pages.map((p) => p.size);
  assert.equal(attempts.length, want,
    `${n} results in pages of ${limit} take ${want} request(s), not ${attempts.length} (page sizes ${sizes.join(', ')})`);
  pages.forEach((p, i) => {
    if (i < pages.length - 1) {
      assert.equal(p.size, limit, `page ${i + 1} of ${pages.length} is full (page sizes ${sizes.join(', ')})`);
      assert.equal(typeof p.nextCursor, 'string', `page ${i + 1} has a next_cursor`);
    } else {
      assert.ok(p.size <= limit && (p.size > 0 || n === 0), `the last page holds 1..${limit} items, or none when nothing matched`);
      assert.equal(p.nextCursor, null, 'the last page has next_cursor null');
    }
  });
  assert.equal(sizes.reduce((a, b) => a + b, 0), n, 'the walk yielded what the pages held');
}

test('products.all: a search walked 3 at a time (relevance), every page but the last full', async () => {
  const w = await walk({ q: word, limit: 3 });
  assert.deepEqual(w.ids, EXPECTED.relevance, 'every match once: titles first, then descriptions, id descending');
  assertWholePages(w, 3); // 8 matches: 3 + 3 + 2
});

test('products.all: a search walked 2 at a time (newest): the last page full, its next_cursor null', async () => {
  const w = await walk({ q: word, sort: 'newest', limit: 2 });
  assert.deepEqual(w.ids, EXPECTED.newest, 'every match once, newest first');
  assertWholePages(w, 2); // 8 matches: 2 + 2 + 2 + 2, no empty fifth page
});

test('products.all: a search walked 3 at a time by price, ties by id', async () => {
  const w = await walk({ q: word, sort: 'price_asc', limit: 3 });
  assert.deepEqual(w.ids, EXPECTED.price_asc, 'every match once, cheapest first');
  assertWholePages(w, 3);
});

test('products.all: a search that matches nothing is one request of one empty page', async () => {
  const w = await walk({ q: `${word}nothing`, limit: 2 });
  assert.deepEqual(w.ids, []);
  assertWholePages(w, 2);
  assert.equal(w.attempts.length, 1);
});
