// A list page is read from its index alone (sql/migrations/010_covering_pages.sql): the
// (filter, sort) indexes carry the item's columns, the title as title_head when it fits in
// an index entry. What must hold:
//   - every title comes back whole, including titles too long for the index (their row
//     is read by id) and titles at the 1,024-byte bound;
//   - on an all-visible catalogue, a page of 50 reads a handful of buffers, not one table
//     page per item: pg_stat_statements' block counts per call of the list statements
//     (the stack preloads it) tell an index-only page from one that reads the table.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { api, importDoc, newKey, psql, uniqueId } from './lib/stack.mjs';
import { assertList } from './fixtures/expect.mjs';

const run = uniqueId('');
const category = `covering-${run}`.toLowerCase().replace(/[^a-z0-9-]/g, '-').slice(0, 40);
const seller = `cseller_${run}`;
const owner = `acct_co_${run}`;
let key;

// 150 products, one an hour. Four titles sit at or past the bound: 1,024 bytes (kept in
// the index), 1,025 bytes, and two long multi-byte ones (read from the table).
const longTitles = new Map([
  [3, 'a'.repeat(1024)],
  [40, 'b'.repeat(1025)],
  [77, 'É'.repeat(1500)],
  [149, `Ünïcödé ${'ß'.repeat(4000)} end`],
]);
const products = [];
for (let i = 0; i < 150; i++) {
  products.push({
    id: `prod_c${run}_${String(i).padStart(3, '0')}`,
    seller,
    title: longTitles.get(i) ?? `Covered item ${i}`,
    description: 'plain',
    category,
    currency: 'USD',
    status: 'published',
    created_at: new Date(Date.UTC(2026, 1, 1) + i * 3600e3).toISOString(),
    minor: 100 * ((i * 13) % 70),
  });
}

before(() => {
  importDoc({
    mode: 'test',
    accounts: [{ id: owner, email: `${owner}@example.com` }],
    sellers: [{ id: seller, account: owner, name: 'Covering Shop', bio: '' }],
    products: products.map(({ minor, ...p }) => ({
      ...p,
      tiers: [{ id: `tier_${p.id.slice(5)}`, name: 'Personal', price: minor / 100, licence: {} }],
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

test('every title comes back whole, long ones included, in every sort', async () => {
  const titles = new Map(products.map((p) => [p.id, p.title]));
  for (const sort of ['newest', 'price_asc', 'price_desc']) {
    const items = await walk(`/v1/products?category=${category}&sort=${sort}`, 37);
    assert.equal(items.length, products.length, sort);
    for (const item of items) assert.equal(item.title, titles.get(item.id), `${sort}: ${item.id}`);
  }
  const items = await walk(`/v1/sellers/${seller}`, 41, (b) => b.products);
  assert.equal(items.length, products.length, 'seller catalogue');
  for (const item of items) assert.equal(item.title, titles.get(item.id), `seller: ${item.id}`);
});

/** Calls and buffers (hit + read) of the list statements that read a category's newest. */
function categoryNewestCounters() {
  const row = psql(`SELECT coalesce(sum(calls), 0), coalesce(sum(shared_blks_hit + shared_blks_read), 0)
                      FROM pg_stat_statements
                     WHERE query LIKE 'SELECT p.id, coalesce(p.title_head%'
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
