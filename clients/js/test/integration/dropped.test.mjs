// A POST whose answer is lost is sent again with the same Idempotency-Key and mints one
// link only. A TCP proxy between the client and nginx forwards the first POST to the
// server and cuts the client's connection as the answer starts to come back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Market, ConnectionError } from '@markethq/market';
import { main, uniqueId, startProxy } from './lib.mjs';

const st = main();
const x = uniqueId();
let proxy;
let key;
let dl;

before(async () => {
  mkdirSync(join(st.filesRoot, `jsdrop-${x}`), { recursive: true });
  writeFileSync(join(st.filesRoot, `jsdrop-${x}/a.zip`), '0123456789');
  const buyer = `acct_jsdrop_${x}`;
  st.importDoc({
    mode: 'test',
    accounts: [{ id: `acct_jsdrops_${x}` }, { id: buyer }],
    sellers: [{ id: `jsdrop-${x}`, account: `acct_jsdrops_${x}`, name: 'Drop seller' }],
    products: [{
      id: `prod_jsdrop_${x}`, seller: `jsdrop-${x}`, title: 'Dropped', description: 'd', category: `jsdrop-${x}`,
      currency: 'USD', status: 'published',
      tiers: [{ id: `tier_jsdrop_${x}`, name: 'Personal', description: '', price: 3.5, licence: {} }],
      files: [{ id: `file_jsdrop_${x}`, filename: 'a.zip', path: `jsdrop-${x}/a.zip`, size_bytes: 10 }],
    }],
    orders: [{ id: `ord_jsdrop_${x}`, account: buyer, status: 'paid', items: [{ product: `prod_jsdrop_${x}`, tier: `tier_jsdrop_${x}` }] }],
  });
  key = st.newKey(buyer);
  dl = st.psql(`SELECT id FROM downloads WHERE order_id = 'ord_jsdrop_${x}'`);
  assert.match(dl, /^dl_/);
  proxy = await startProxy(st.baseUrl);
});

after(() => proxy?.close());

const tokens = () => Number(st.psql(`SELECT count(*) FROM download_tokens WHERE download_id = '${dl}'`));
const linkPosts = () => proxy.requests.filter((r) => r.method === 'POST' && r.path === `/v1/downloads/${dl}/link`);

test('the answer to the first POST is lost: the client retries with the same key and one link is minted', async () => {
  const waits = [];
  const market = new Market({
    apiKey: key, baseUrl: proxy.url, maxRetries: 2,
    sleep: (ms) => {
      waits.push(ms);
      return new Promise((resolve) => setTimeout(resolve, ms));
    },
  });
  const before = tokens();
  const seenBefore = linkPosts().length;
  proxy.dropNext((r) => r.method === 'POST');
  const link = await market.downloads.createLink(dl, { expiresIn: 600 });

  assert.equal(proxy.dropped, 1, 'the first answer was cut off');
  const posts = linkPosts().slice(seenBefore);
  assert.equal(posts.length, 2, 'the POST was sent twice');
  assert.ok(posts[0].dropped && !posts[1].dropped);
  assert.match(posts[0].headers['idempotency-key'], /^market-js-/);
  assert.equal(posts[1].headers['idempotency-key'], posts[0].headers['idempotency-key'], 'with the same Idempotency-Key');
  assert.equal(posts[1].body, posts[0].body, 'and the same body');
  assert.equal(waits.length, 1, 'one wait before the retry');
  assert.equal(link.lastResponse.retries, 1);
  assert.equal(link.lastResponse.idempotentReplayed, true, 'the second answer is the replay of the first');
  assert.equal(tokens() - before, 1, 'one download_tokens row for the two POSTs');
  assert.equal(link.download, dl);
  const file = await fetch(link.url);
  assert.equal(file.status, 200, 'the link works');
  assert.equal(await file.text(), '0123456789');
});

test('the control: without retries the same cut is a ConnectionError, and the server did mint a link', async () => {
  const market = new Market({ apiKey: key, baseUrl: proxy.url, maxRetries: 0 });
  const before = tokens();
  proxy.dropNext((r) => r.method === 'POST');
  await assert.rejects(market.downloads.createLink(dl), (e) => {
    assert.ok(e instanceof ConnectionError, `${e}`);
    assert.equal(e.status, null);
    return true;
  });
  assert.equal(tokens() - before, 1, 'the lost answer was for a link that exists');
});

test('a GET whose answer is lost is sent again', async () => {
  const market = new Market({ apiKey: key, baseUrl: proxy.url, sleep: async () => {} });
  const n = proxy.requests.length;
  proxy.dropNext((r) => r.method === 'GET');
  const page = await market.orders.list();
  assert.equal(page.data.length, 1);
  assert.equal(page.lastResponse.retries, 1);
  assert.equal(proxy.requests.slice(n).filter((r) => r.path === '/v1/orders').length, 2);
});
