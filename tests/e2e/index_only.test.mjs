// A list page is read from its index alone (sql/migrations/010_covering_pages.sql): the
// (filter, sort) indexes carry the item's members after its id as JSON text, list_item,
// when they fit in an index entry (017_list_items.sql). What must hold:
//   - every title and price comes back whole and exact, including items too long for the
//     index (their row is read by id), items at the 1,536-byte bound, titles that need
//     escaping, and prices of currencies with 0, 2 and 3 decimals;
//   - list_item is exactly the members the worker would write (JSON.stringify's escaping,
//     money_format's price), and NULL past the bound;
//   - on an all-visible catalogue, a page of 50 reads a handful of buffers, not one table
//     page per item: pg_stat_statements' block counts per call of the list statements
//     (the stack preloads it) tell an index-only page from one that reads the table.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { api, importDoc, newKey, psql, uniqueId } from './lib/stack.mjs';
import { assertList } from './fixtures/expect.mjs';

const run = uniqueId('');
const category = `covering-${run}`.toLowerCase().replace(/[^a-z0-9-]/g, '-').slice(0, 40);
const owner = `acct_co_${run}`;
let key;

// 150 products, one an hour. Some titles sit at or past the bound of list_item (the
// members' 1,536 bytes: kept in the index, or read from the table), some need escaping.
const priceOf = (i) => 100 * ((i * 13) % 70) + [0, 50, 5][i % 3]; // 12, 12.5, 12.05
const longTitles = new Map([
  [3, 'a'.repeat(1024)],
  [40, 'b'.repeat(1025)],
  [77, 'É'.repeat(1500)],
  [149, `Ünïcödé ${'ß'.repeat(4000)} end`],
  [11, 'He said "hi" \\ back\\slash\ttab \u0001 ctl \u001f 🎉 </script>'],
  [12, `quotes ${'"'.repeat(800)}`], // 800 characters escaped to 1,600 bytes: past the bound
]);
const seller = `cseller_${run}`;
const currencyOf = (i) => (i === 20 ? ['JPY', 0] : i === 21 || i === 22 ? ['KWD', 3] : ['USD', 2]);
const minorOf = (i) => (i === 20 ? 1500 : i === 21 ? 1234 : i === 22 ? 2500 : priceOf(i));
/** The price as money_format writes it: major units, no trailing fractional zeros. */
function priceText(minor, exponent) {
  const digits = String(minor).padStart(exponent + 1, '0');
  const whole = digits.slice(0, digits.length - exponent);
  const fraction = digits.slice(digits.length - exponent).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}
const products = [];
for (let i = 0; i < 150; i++) {
  const [currency, exponent] = currencyOf(i);
  const minor = minorOf(i);
  products.push({
    id: `prod_c${run}_${String(i).padStart(3, '0')}`,
    seller,
    title: longTitles.get(i) ?? `Covered item ${i}`,
    description: 'plain',
    category,
    currency,
    status: 'published',
    created_at: new Date(Date.UTC(2026, 1, 1) + i * 3600e3).toISOString(),
    minor,
    price: priceText(minor, exponent),
  });
}
// Bound edges: an ASCII title whose members are exactly 1,536 bytes, and one a byte more.
for (const [i, extra] of [
  [60, 0],
  [61, 1],
]) {
  const p = products[i];
  const fixed = `"title":"","price":${p.price},"seller":${JSON.stringify(seller)}`.length;
  p.title = 'x'.repeat(1536 - fixed + extra);
}
/** What list_item must hold for p: its members after the id. */
const membersOf = (p) => `"title":${JSON.stringify(p.title)},"price":${p.price},"seller":${JSON.stringify(p.seller)}`;

before(() => {
  importDoc({
    mode: 'test',
    accounts: [{ id: owner, email: `${owner}@example.com` }],
    sellers: [{ id: seller, account: owner, name: 'Covering Shop', bio: '' }],
    products: products.map(({ minor, price, ...p }) => ({
      ...p,
      tiers: [{ id: `tier_${p.id.slice(5)}`, name: 'Personal', price: Number(price), licence: {} }],
    })),
  });
  psql('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  // What autovacuum does to a catalogue at rest: every page all-visible.
  psql('VACUUM products');
  key = newKey({ account: owner, mode: 'test', access: 'read-only' });
});

/** Every item of a walk from `first`, pages of `limit`. */
async function walk(first, limit, items = (b) => b) {
  const all = [];
  let url = `${first}${first.includes('?') ? '&' : '?'}limit=${limit}`;
  for (let pages = 0; pages < 100; pages++) {
    const res = await api(url, { key });
    assert.equal(res.status, 200, res.text);
    const body = items(res.json);
    all.push(...body.data);
    if (body.next_cursor === null) return all;
    url = `${first}${first.includes('?') ? '&' : '?'}limit=${limit}&cursor=${body.next_cursor}`;
  }
  assert.fail('the walk ends');
}

test('every title and price comes back whole and exact, long ones included, in every sort', async () => {
  const byId = new Map(products.map((p) => [p.id, p]));
  const check = (items, what) => {
    assert.equal(items.length, products.length, what);
    for (const item of items) {
      const p = byId.get(item.id);
      assert.deepEqual(item, { id: p.id, title: p.title, price: Number(p.price), seller }, `${what}: ${item.id}`);
    }
  };
  for (const sort of ['newest', 'price_asc', 'price_desc']) {
    check(await walk(`/v1/products?category=${category}&sort=${sort}`, 37), sort);
  }
  check(await walk(`/v1/sellers/${seller}`, 41, (b) => b.products), 'seller catalogue');
});

test('list_item holds the members the worker writes, and nothing past the bound', () => {
  const rows = psql(`SELECT id, coalesce(list_item, '<null>') FROM products WHERE seller_id = '${seller}'`);
  const stored = new Map(rows.split('\n').map((line) => [line.slice(0, line.indexOf('|')), line.slice(line.indexOf('|') + 1)]));
  let kept = 0;
  for (const p of products) {
    const members = membersOf(p);
    const fits = Buffer.byteLength(members) <= 1536;
    assert.equal(stored.get(p.id), fits ? members : '<null>', p.id);
    kept += fits;
  }
  assert.equal(stored.get(products[60].id), membersOf(products[60]), 'members of exactly 1,536 bytes are kept');
  assert.equal(stored.get(products[61].id), '<null>', 'members of 1,537 bytes are not');
  assert.equal(kept, products.length - 4); // 12, 61, 77 and 149
});

/** Calls and buffers (hit + read) of the list statements that read a category's newest. */
function categoryNewestCounters() {
  const row = psql(`SELECT coalesce(sum(calls), 0), coalesce(sum(shared_blks_hit + shared_blks_read), 0)
                      FROM pg_stat_statements
                     WHERE query LIKE 'SELECT p.id, coalesce(p.list_item%'
                       AND query LIKE '%p.category = $3%ORDER BY p.created_at DESC%'
                       AND query NOT LIKE '%WITH%'`);
  const [calls, blocks] = row.split('|').map(Number);
  return { calls, blocks };
}

test('a page of 50 reads its index, not a table page per item', async () => {
  assertList(await api(`/v1/products?category=${category}&limit=3`, { key }));
  const before = categoryNewestCounters();
  assert.ok(before.calls > 0, 'pg_stat_statements sees the list statements');
  // Three pages of 50: 150 items. Each page holds one or two of the long titles, so the
  // lookups of a title by id are counted too.
  const items = await walk(`/v1/products?category=${category}`, 50);
  assert.equal(items.length, 150);
  const after = categoryNewestCounters();
  const calls = after.calls - before.calls;
  const perCall = (after.blocks - before.blocks) / calls;
  assert.ok(calls >= 3, `three pages were read by the database (${calls} calls)`);
  // Reading the table costs a buffer per item: 50 a page. An index-only page of 50 costs
  // its index pages (one or two leaves and the way down), a visibility map page, and a
  // primary key lookup and table page for a long title (one or two a page here).
  assert.ok(perCall < 20, `${perCall.toFixed(1)} buffers per page of 50 (index-only: about 10)`);
});
