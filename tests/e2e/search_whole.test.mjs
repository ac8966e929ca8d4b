// Search pages are whole (contract section 5, "Whole pages"): a page holds `limit` items
// whenever that many matches remain after its cursor, only the last page holds fewer and
// its next_cursor is null, so a walk of N matches takes max(1, ceil(N / limit)) requests;
// and the pages together are every match exactly once, in the sort's order. A page reads
// its matches by a walk of at most 16 x (limit + 1) rows here (market_search_walk_rows,
// 018_whole_pages.sql: the catalogue is small) or, when that finds no page, through the
// GIN indexes: a category of 240 products with dense and sparse words takes both ways.
import { test, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { api, importDoc, newKey, psql, uniqueId } from './lib/stack.mjs';
import { assertList } from './fixtures/expect.mjs';

const run = uniqueId('');
const category = `bounded-${run}`.toLowerCase().replace(/[^a-z0-9-]/g, '-').slice(0, 40);
const seller = `bseller_${run}`;
const seller2 = `bseller2_${run}`;
const owner = `acct_bo_${run}`;
let key;

// 240 products, one an hour, prices cycling. Words: "quartz" in every third title (dense);
// "zircon" only in the 60 oldest (sparse where a newest walk starts, dense at its end);
// "onyx basalt" as a phrase in 3 descriptions, the two words apart in 60 more (a phrase
// whose words are common and whose matches are rare); "garnet" in every fourth title from
// the second and every ninth description, so that relevance has titles with two words of
// q, with one, and with none.
const products = [];
for (let i = 0; i < 240; i++) {
  const words = [];
  if (i % 3 === 0) words.push('quartz');
  if (i < 60) words.push('zircon');
  if (i % 4 === 1) words.push('garnet');
  const description =
    (i % 80 === 7 ? 'carved onyx basalt' : i % 4 === 1 ? 'onyx and some basalt' : 'plain goods') +
    (i % 9 === 3 ? ' with garnet dust' : '');
  products.push({
    id: `prod_b${run}_${String(i).padStart(3, '0')}`,
    seller: i % 5 === 0 ? seller2 : seller,
    title: `Stone ${words.join(' ')} ${i}`,
    description,
    category,
    currency: 'USD',
    status: i % 37 === 5 ? 'draft' : 'published',
    created_at: new Date(Date.UTC(2026, 0, 1) + i * 3600e3).toISOString(),
    minor: 100 * ((i * 7) % 50),
  });
}
const priceOf = (p) => p.minor / 100;
const byId = (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const SORTS = {
  newest: (a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : -byId(a, b)),
  price_asc: (a, b) => priceOf(a) - priceOf(b) || byId(a, b),
  price_desc: (a, b) => priceOf(b) - priceOf(a) || -byId(a, b),
};

before(() => {
  importDoc({
    mode: 'test',
    accounts: [{ id: owner, email: `${owner}@example.com` }],
    sellers: [
      { id: seller, account: owner, name: 'Stone Shop', bio: '' },
      { id: seller2, account: owner, name: 'Second Stone', bio: '' },
    ],
    products: products.map(({ minor, ...p }) => ({
      ...p,
      tiers: [{ id: `tier_${p.id.slice(5)}`, name: 'Personal', price: minor / 100, licence: {} }],
    })),
  });
});

// A key per test: a walk of small pages is many requests (600 a minute per key).
beforeEach(() => {
  key = newKey({ account: owner, mode: 'test', access: 'read-only' });
});

/** Every page from `first` on; checks that every page but the last is full, and that the
 * walk took max(1, ceil(N / limit)) requests for its N items. */
async function walk(first, limit) {
  const pages = [];
  let url = `${first}&limit=${limit}`;
  for (;;) {
    const body = assertList(await api(url, { key }));
    assert.ok(body.data.length <= limit, `a page holds at most ${limit} items`);
    pages.push(body);
    if (body.next_cursor === null) break;
    assert.equal(body.data.length, limit, `page ${pages.length} of ${first} is whole`);
    assert.ok(pages.length < 400, 'the walk ends');
    url = `${first}&limit=${limit}&cursor=${body.next_cursor}`;
  }
  const n = pages.reduce((sum, p) => sum + p.data.length, 0);
  assert.equal(pages.length, Math.max(1, Math.ceil(n / limit)), `${first}: ${n} items in ${pages.length} requests`);
  return pages;
}

// match: the product matches q; rank: its relevance rank, the number of distinct words of
// q its title holds (contract section 6; an excluded word is none of them).
const words = (p, ...ws) => ws.filter((w) => p.title.includes(w)).length;
const inText = (p, w) => p.title.includes(w) || p.description.includes(w);
const cases = [
  { q: 'quartz', match: (p) => p.title.includes('quartz'), rank: () => 1 },
  { q: 'zircon', match: (p) => p.title.includes('zircon'), rank: () => 1 },
  { q: '"onyx basalt"', match: (p) => p.description.includes('onyx basalt'), rank: () => 0 },
  { q: 'zircon -quartz', match: (p) => p.title.includes('zircon') && !p.title.includes('quartz'), rank: () => 1 },
  { q: '-quartz', match: (p) => !p.title.includes('quartz'), rank: () => 0 },
  { q: 'stone -zircon', match: (p) => !p.title.includes('zircon'), rank: () => 1 },
  { q: 'nothingmatchesthis', match: () => false, rank: () => 0 },
  // An alternative that holds a word and its exclusion matches nothing; the other one still
  // does, and the excluded word counts toward no rank.
  { q: 'quartz -quartz or zircon', match: (p) => p.title.includes('zircon'), rank: (p) => words(p, 'zircon') },
  { q: 'garnet -garnet', match: () => false, rank: () => 0 },
  { q: '-"quartz garnet" garnet', match: (p) => inText(p, 'garnet') && !p.title.includes('quartz garnet'), rank: (p) => words(p, 'garnet') },
  // Graded: two, one or no word of q in the title.
  { q: 'garnet', match: (p) => inText(p, 'garnet'), rank: (p) => words(p, 'garnet') },
  {
    q: 'quartz garnet',
    match: (p) => p.title.includes('quartz') && inText(p, 'garnet'),
    rank: (p) => words(p, 'quartz', 'garnet'),
  },
  { q: 'garnet dust', match: (p) => p.description.includes('garnet dust'), rank: (p) => words(p, 'garnet') },
  {
    q: 'quartz or garnet or basalt',
    match: (p) => p.title.includes('quartz') || inText(p, 'garnet') || p.description.includes('basalt'),
    rank: (p) => words(p, 'quartz', 'garnet'),
  },
];

for (const sort of [...Object.keys(SORTS), 'relevance']) {
  for (const { q, match, rank } of cases) {
    test(`q=${q} sort=${sort}: every match once, in order, whatever the page sizes`, async () => {
      // relevance: the most words of q in the title first, each rank by id descending.
      const order = SORTS[sort] ?? ((a, b) => rank(b) - rank(a) || -byId(a, b));
      const expected = products
        .filter((p) => p.status === 'published' && match(p))
        .sort(order)
        .map((p) => p.id);
      for (const limit of [7, 100]) {
        const pages = await walk(
          `/v1/products?category=${category}&q=${encodeURIComponent(q)}&sort=${sort}`,
          limit,
        );
        assert.deepEqual(pages.flatMap((p) => p.data.map((i) => i.id)), expected, `limit ${limit}`);
      }
    });
  }
}

test('a phrase of words that are everywhere and never together: one empty page', async () => {
  // "zircon stone": both words are in 40 titles, never in that order. The page reads
  // every candidate through the index rather than ending early.
  const pages = await walk(`/v1/products?category=${category}&q=${encodeURIComponent('"zircon stone"')}`, 10);
  assert.equal(pages.length, 1);
  assert.equal(pages[0].data.length, 0);
});

test('a sparse match sorted newest: whole pages from the first, one request per page', async () => {
  // zircon: only the 60 oldest products; a newest walk of the first rows finds none of
  // them, so the page is read through the GIN index, whole.
  const pages = await walk(`/v1/products?category=${category}&q=zircon&sort=newest`, 10);
  assert.equal(pages[0].data.length, 10);
  const n = products.filter((p) => p.status === 'published' && p.title.includes('zircon')).length;
  assert.equal(pages.length, Math.ceil(n / 10));
});

test('filters the walk does not read (seller with category, price range in newest)', async () => {
  const expected = products
    .filter((p) => p.status === 'published' && p.seller === seller2 && p.title.includes('quartz'))
    .filter((p) => priceOf(p) >= 10 && priceOf(p) <= 40)
    .sort(SORTS.newest)
    .map((p) => p.id);
  assert.ok(expected.length > 3);
  const pages = await walk(
    `/v1/products?category=${category}&seller=${seller2}&q=quartz&min_price=10&max_price=40&sort=newest`,
    3,
  );
  assert.deepEqual(pages.flatMap((p) => p.data.map((i) => i.id)), expected);
  const priced = await walk(
    `/v1/products?category=${category}&seller=${seller2}&q=quartz&min_price=10&max_price=40&sort=price_desc`,
    3,
  );
  assert.deepEqual(
    priced.flatMap((p) => p.data.map((i) => i.id)),
    products.filter((p) => expected.includes(p.id)).sort(SORTS.price_desc).map((p) => p.id),
  );
});
