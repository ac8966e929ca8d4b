// The workers' page cache (app/api/main.c): a catalogue page answered again within
// MARKET_PAGE_CACHE_MS comes from the worker's memory, yet every rule of the contract
// holds: each request is still counted against the key, a catalogue write is seen at once
// (the workers LISTEN for it), modes never mix, and a revoked key is refused at once.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { admin, api, importDoc, newKey, uniqueId } from './lib/stack.mjs';
import { assertError, assertList } from './fixtures/expect.mjs';

const run = uniqueId('').toLowerCase();
const account = `acct_pc_${run}`;
const seller = `pc-${run}`;
const category = `pc-${run}`;
let key;

function product(id, title, status = 'published', created = '2026-03-01T00:00:00Z') {
  return {
    id, seller, title, description: 'cached goods', category, currency: 'USD', status,
    created_at: created,
    tiers: [{ id: id.replace('prod_', 'tier_'), name: 'Personal', description: '', price: 9.5, licence: {} }],
  };
}

function load(mode, products) {
  importDoc({
    mode,
    accounts: [{ id: account }],
    sellers: [{ id: seller, account, name: 'Page Cache', bio: '', website: null }],
    products,
  });
}

before(() => {
  load('test', [product(`prod_pca${run}`, 'Cached Alpha'), product(`prod_pcb${run}`, 'Cached Beta')]);
  key = newKey({ account, mode: 'test', access: 'read-only' });
});

// Enough repeats that every worker of the pool has answered (and kept) the page.
const REPEATS = 8;

async function repeatGet(path, k = key) {
  const bodies = [];
  for (let i = 0; i < REPEATS; i++) bodies.push(await api(path, { key: k }));
  return bodies;
}

test('a repeated page is the same page, and every repeat is counted against the key', async () => {
  const counter = newKey({ account, mode: 'test', access: 'read-only' });
  const path = `/v1/products?category=${category}&limit=1`;
  const answers = await repeatGet(path, counter);
  const remaining = answers.map((r) => Number(r.headers.get('x-ratelimit-remaining')));
  for (let i = 1; i < remaining.length; i++) {
    assert.equal(remaining[i], remaining[i - 1] - 1, `request ${i + 1} was counted: ${remaining}`);
  }
  const first = assertList(answers[0]);
  for (const r of answers.slice(1)) assert.deepEqual(assertList(r), first);
  // The cursor of a kept page still leads to the next page.
  assert.notEqual(first.next_cursor, null);
  const next = assertList(await api(`${path}&cursor=${first.next_cursor}`, { key: counter }));
  assert.equal(next.data.length, 1);
  assert.notEqual(next.data[0].id, first.data[0].id);
});

test('a catalogue write is seen at once: new title, new product, unpublished product', async () => {
  const detail = `/v1/products/prod_pca${run}`;
  const list = `/v1/products?category=${category}`;
  for (const r of await repeatGet(detail)) assert.equal(r.json.title, 'Cached Alpha');
  for (const r of await repeatGet(list)) assert.equal(assertList(r).data.length, 2);

  load('test', [product(`prod_pca${run}`, 'Renamed Alpha'), product(`prod_pcc${run}`, 'Cached Gamma', 'published', '2026-03-02T00:00:00Z')]);
  for (const r of await repeatGet(detail)) assert.equal(r.json.title, 'Renamed Alpha');
  for (const r of await repeatGet(list)) {
    assert.deepEqual(assertList(r).data.map((p) => p.title).sort(), ['Cached Beta', 'Cached Gamma', 'Renamed Alpha']);
  }

  load('test', [product(`prod_pcb${run}`, 'Cached Beta', 'draft')]);
  for (const r of await repeatGet(`/v1/products/prod_pcb${run}`)) {
    assertError(r, 404, 'invalid_request_error', 'resource_missing', 'id');
  }
  for (const r of await repeatGet(list)) assert.equal(assertList(r).data.length, 2);
  for (const r of await repeatGet(`/v1/sellers/${seller}`)) assert.equal(r.json.product_count, 2);
});

test('kept pages never cross modes', async () => {
  const path = `/v1/products?category=${category}`;
  await repeatGet(path);
  const live = newKey({ account, mode: 'live', access: 'read-only' });
  for (const r of await repeatGet(path, live)) assert.deepEqual(assertList(r).data, []);
});

test('a revoked key is refused at once, even for a page the workers keep', async () => {
  const doomed = newKey({ account, mode: 'test', access: 'read-only' });
  const path = `/v1/products?category=${category}`;
  for (const r of await repeatGet(path, doomed)) assertList(r);
  admin(['key', 'revoke', doomed]);
  for (const r of await repeatGet(path, doomed)) {
    assertError(r, 401, 'authentication_error', 'invalid_api_key', null);
  }
});

test('input errors still come after the key check (401, then 400)', async () => {
  const bad = await api(`/v1/products?category=${category}&limit=0`, { key: 'sk_test_' + 'x'.repeat(40) });
  assertError(bad, 401, 'authentication_error', 'invalid_api_key', null);
  const invalid = await api(`/v1/products?category=${category}&limit=0`, { key });
  assertError(invalid, 400, 'invalid_request_error', 'parameter_invalid', 'limit');
  assert.ok(invalid.headers.get('x-ratelimit-remaining') !== null, 'a 400 is counted and says so');
});
