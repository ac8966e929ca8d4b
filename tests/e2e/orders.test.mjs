// GET /v1/orders end to end: shape, money, order, pagination, filters, isolation between
// accounts and modes, and the download links it shows (reused, not minted per listing).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

import { api, importDoc, newKey, psql, uniqueId, DOWNLOAD_BASE_URL, FILES_ROOT } from './lib/stack.mjs';

const x = uniqueId('');
const A = `acct_oa_${x}`;
const B = `acct_ob_${x}`;
const handle = `os-${x}`;
const P = { fonts: `prod_of_${x}`, yen: `prod_oy_${x}`, nofiles: `prod_on_${x}`, live: `prod_ol_${x}` };
const T = { fontsP: `tier_ofp_${x}`, fontsC: `tier_ofc_${x}`, yen: `tier_oy_${x}`, nofiles: `tier_on_${x}`, live: `tier_ol_${x}` };
const O = (n) => `ord_o${n}_${x}`;
const dir = `orders-${x}`;
const fontBytes = randomBytes(4096);

// Shown to A in test mode, newest first: o9..o5 share one created_at (ties: id descending).
const SHOWN = [O(9), O(8), O(7), O(6), O(5), O(4), O(2), O(1)];

let kA;
let kB;
let kAlive;

function order(id, account, status, created, items) {
  return { id, account, status, created_at: created, items: items.map(([product, tier]) => ({ product, tier })) };
}

async function list(key, query = '') {
  const r = await api(`/v1/orders${query}`, { key });
  assert.equal(r.status, 200, r.text);
  return r.json;
}

async function walk(key, query, limit) {
  const seen = [];
  let cursor = null;
  let pages = 0;
  do {
    const q = `?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await list(key, q);
    assert.ok(page.data.length <= limit);
    seen.push(...page.data.map((o) => o.id));
    cursor = page.next_cursor;
    pages++;
    assert.ok(pages < 50, 'pagination ends');
  } while (cursor !== null);
  return { seen, pages };
}

const linksOf = (download) => Number(psql(`SELECT count(*) FROM download_tokens WHERE download_id = '${download}'`));

before(() => {
  mkdirSync(join(FILES_ROOT, dir), { recursive: true });
  writeFileSync(join(FILES_ROOT, dir, 'grotesk.zip'), fontBytes);
  writeFileSync(join(FILES_ROOT, dir, 'specimen.pdf'), 'specimen');
  writeFileSync(join(FILES_ROOT, dir, 'yen.zip'), 'yen');
  const fiveAt = '2026-01-05T00:00:00Z';
  importDoc({
    mode: 'test',
    accounts: [{ id: `acct_os_${x}` }, { id: A }, { id: B }],
    sellers: [{ id: handle, account: `acct_os_${x}`, name: 'Orders Seller' }],
    products: [
      {
        id: P.fonts, seller: handle, title: 'Grotesk Sans', category: 'fonts', currency: 'USD', status: 'published',
        tiers: [{ id: T.fontsP, name: 'Personal', price: 12.5 }, { id: T.fontsC, name: 'Commercial', price: 30 }],
        files: [
          { id: `file_ofa_${x}`, filename: 'grotesk.zip', path: `${dir}/grotesk.zip`, size_bytes: 4096 },
          { id: `file_ofb_${x}`, filename: 'specimen.pdf', path: `${dir}/specimen.pdf`, size_bytes: 8 },
        ],
      },
      {
        id: P.yen, seller: handle, title: 'Yen Pack', category: 'fonts', currency: 'JPY', status: 'published',
        tiers: [{ id: T.yen, name: 'Standard', price: 1200 }],
        files: [{ id: `file_oy_${x}`, filename: 'yen.zip', path: `${dir}/yen.zip`, size_bytes: 3 }],
      },
      {
        id: P.nofiles, seller: handle, title: 'Licence Only', category: 'fonts', currency: 'USD', status: 'published',
        tiers: [{ id: T.nofiles, name: 'Extra seat', price: 0.99 }],
      },
    ],
    orders: [
      order(O(1), A, 'paid', '2026-01-01T00:00:00Z', [[P.fonts, T.fontsP], [P.nofiles, T.nofiles]]),
      order(O(2), A, 'refunded', '2026-01-02T00:00:00Z', [[P.fonts, T.fontsC]]),
      order(O(3), A, 'pending', '2026-01-03T00:00:00Z', [[P.fonts, T.fontsP]]),
      order(O(4), A, 'paid', '2026-01-04T00:00:00Z', [[P.yen, T.yen]]),
      ...[5, 6, 7, 8, 9].map((n) => order(O(n), A, 'paid', fiveAt, [[P.nofiles, T.nofiles]])),
      order(`ord_ob1_${x}`, B, 'paid', '2026-01-06T00:00:00Z', [[P.fonts, T.fontsP]]),
    ],
  });
  importDoc({
    mode: 'live',
    products: [{
      id: P.live, seller: handle, title: 'Live Font', category: 'fonts', currency: 'USD', status: 'published',
      tiers: [{ id: T.live, name: 'Personal', price: 5 }],
      files: [{ id: `file_ol_${x}`, filename: 'grotesk.zip', path: `${dir}/grotesk.zip`, size_bytes: 4096 }],
    }],
    orders: [order(`ord_ol1_${x}`, A, 'paid', '2026-01-07T00:00:00Z', [[P.live, T.live]])],
  });
  kA = newKey({ account: A, access: 'read-only' });
  kB = newKey({ account: B, access: 'read-only' });
  kAlive = newKey({ account: A, mode: 'live', access: 'read-only' });
});

test('the caller\'s orders, newest first, pending never shown', async () => {
  const page = await list(kA, '?limit=100');
  assert.deepEqual(page.data.map((o) => o.id), SHOWN);
  assert.equal(page.next_cursor, null);
});

test('an order has the contract fields; money in the order currency', async () => {
  const page = await list(kA, '?limit=100');
  const o1 = page.data.find((o) => o.id === O(1));
  assert.deepEqual(Object.keys(o1), ['id', 'status', 'created_at', 'currency', 'total', 'items', 'downloads']);
  assert.equal(o1.status, 'paid');
  assert.equal(o1.created_at, '2026-01-01T00:00:00Z');
  assert.equal(o1.currency, 'USD');
  assert.equal(o1.total, 13.49);
  assert.deepEqual(o1.items, [
    { product: P.fonts, title: 'Grotesk Sans', tier: T.fontsP, tier_name: 'Personal', price: 12.5 },
    { product: P.nofiles, title: 'Licence Only', tier: T.nofiles, tier_name: 'Extra seat', price: 0.99 },
  ]);
  assert.equal(o1.downloads.length, 2);
  for (const d of o1.downloads) {
    assert.deepEqual(Object.keys(d), ['id', 'product', 'filename', 'size_bytes', 'url', 'expires_at']);
    assert.match(d.id, /^dl_/);
    assert.equal(d.product, P.fonts);
    assert.ok(d.url.startsWith(`${DOWNLOAD_BASE_URL}/`), d.url);
    const left = (Date.parse(d.expires_at) - Date.now()) / 1000;
    assert.ok(left > 300 && left <= 3600, `expires in ${left} s`);
  }
  assert.deepEqual(o1.downloads.map((d) => [d.filename, d.size_bytes]).sort(),
    [['grotesk.zip', 4096], ['specimen.pdf', 8]]);

  const o4 = page.data.find((o) => o.id === O(4));
  assert.equal(o4.currency, 'JPY');
  assert.equal(o4.total, 1200);
  assert.equal(o4.items[0].price, 1200);

  const o5 = page.data.find((o) => o.id === O(5));
  assert.deepEqual(o5.downloads, []);
});

test('a refunded order shows its downloads with null url and expires_at', async () => {
  const o2 = (await list(kA, '?status=refunded')).data;
  assert.deepEqual(o2.map((o) => o.id), [O(2)]);
  assert.equal(o2[0].status, 'refunded');
  assert.equal(o2[0].total, 30);
  assert.equal(o2[0].downloads.length, 2);
  for (const d of o2[0].downloads) {
    assert.equal(d.url, null);
    assert.equal(d.expires_at, null);
  }
});

test('listed links work and are shown again rather than minted per listing', async () => {
  const first = (await list(kA, '?limit=100')).data.find((o) => o.id === O(1)).downloads;
  const zip = first.find((d) => d.filename === 'grotesk.zip');
  const count = linksOf(zip.id);
  const again = (await list(kA, '?limit=100')).data.find((o) => o.id === O(1)).downloads;
  assert.deepEqual(again, first);
  assert.equal(linksOf(zip.id), count, 'no new link');

  const r = await api(zip.url);
  assert.equal(r.status, 200);
  assert.ok(r.body.equals(fontBytes));
});

test('a link with less than 5 minutes left, or revoked, is replaced by a fresh one', async () => {
  const zipOf = async () => (await list(kA, '?limit=100')).data.find((o) => o.id === O(1))
    .downloads.find((d) => d.filename === 'grotesk.zip');
  const old = await zipOf();
  const token = old.url.slice(DOWNLOAD_BASE_URL.length + 1);
  psql(`UPDATE download_tokens SET expires_at = now() + interval '4 minutes'
         WHERE token_hash = sha256('${token}'::bytea)`);
  const fresh = await zipOf();
  assert.notEqual(fresh.url, old.url);
  assert.ok(Date.parse(fresh.expires_at) - Date.now() > 3000 * 1000);
  assert.equal((await api(old.url)).status, 200, 'the old link still works until it expires');

  const freshToken = fresh.url.slice(DOWNLOAD_BASE_URL.length + 1);
  psql(`UPDATE download_tokens SET revoked_at = now() WHERE token_hash = sha256('${freshToken}'::bytea)`);
  const third = await zipOf();
  assert.notEqual(third.url, fresh.url);
  assert.notEqual(third.url, old.url);
  assert.equal((await api(fresh.url)).status, 404);
  assert.equal((await api(third.url)).status, 200);
});

test('a newer link minted by POST is the one listed', async () => {
  const kArw = newKey({ account: A });
  const zip = (await list(kA, '?limit=100')).data.find((o) => o.id === O(1))
    .downloads.find((d) => d.filename === 'grotesk.zip');
  const minted = await api(`/v1/downloads/${zip.id}/link`, { key: kArw, method: 'POST' });
  assert.equal(minted.status, 201);
  const listed = (await list(kA, '?limit=100')).data.find((o) => o.id === O(1))
    .downloads.find((d) => d.id === zip.id);
  assert.equal(listed.url, minted.json.url);
  assert.equal(listed.expires_at, minted.json.expires_at);
});

test('pagination walks every order exactly once, ties broken by id', async () => {
  for (const limit of [1, 2, 3, 7, 8, 100]) {
    const { seen, pages } = await walk(kA, '', limit);
    assert.deepEqual(seen, SHOWN, `limit ${limit}`);
    assert.equal(pages, Math.ceil(SHOWN.length / limit), `limit ${limit}: no empty last page`);
  }
  const paid = await walk(kA, '&status=paid', 3);
  assert.deepEqual(paid.seen, SHOWN.filter((id) => id !== O(2)));
});

test('a cursor is bound to the filter, the account and the mode', async () => {
  const page = await list(kA, '?limit=2');
  const cursor = encodeURIComponent(page.next_cursor);
  const reject = async (key, query) => {
    const r = await api(`/v1/orders?${query}`, { key });
    assert.equal(r.status, 400, `${query}: ${r.text}`);
    assert.equal(r.json.error.code, 'cursor_invalid');
    assert.equal(r.json.error.param, 'cursor');
  };
  await reject(kA, `cursor=${cursor}&status=paid`);
  await reject(kB, `cursor=${cursor}`);
  await reject(kAlive, `cursor=${cursor}`);
  const c = page.next_cursor;
  const tampered = c.slice(0, 5) + (c[5] === 'A' ? 'B' : 'A') + c.slice(6);
  await reject(kA, `cursor=${encodeURIComponent(tampered)}`);
  await reject(kA, 'cursor=nonsense');
  const ok = await api(`/v1/orders?cursor=${cursor}&limit=5`, { key: kA });
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.json.data.map((o) => o.id), SHOWN.slice(2, 7));
});

test('status filter', async () => {
  const paid = await list(kA, '?status=paid&limit=100');
  assert.deepEqual(paid.data.map((o) => o.id), SHOWN.filter((id) => id !== O(2)));
  assert.ok(paid.data.every((o) => o.status === 'paid'));
  for (const bad of ['pending', 'PAID', '', 'paid,refunded']) {
    const r = await api(`/v1/orders?status=${encodeURIComponent(bad)}`, { key: kA });
    assert.equal(r.status, 400, bad);
    assert.equal(r.json.error.code, 'parameter_invalid');
    assert.equal(r.json.error.param, 'status');
  }
});

test('query errors: limit, unknown and repeated parameters', async () => {
  const cases = [
    ['limit=0', 'parameter_invalid', 'limit'], ['limit=101', 'parameter_invalid', 'limit'],
    ['limit=abc', 'parameter_invalid', 'limit'], ['sort=newest', 'parameter_unknown', 'sort'],
    ['status=paid&status=paid', 'parameter_duplicated', 'status'],
    ['status=%ZZ', 'parameter_invalid', 'status'],
  ];
  for (const [query, code, param] of cases) {
    const r = await api(`/v1/orders?${query}`, { key: kA });
    assert.equal(r.status, 400, query);
    assert.equal(r.json.error.code, code, query);
    assert.equal(r.json.error.param, param, query);
  }
});

test('accounts and modes never see each other\'s orders', async () => {
  assert.deepEqual((await list(kB, '?limit=100')).data.map((o) => o.id), [`ord_ob1_${x}`]);
  const live = (await list(kAlive, '?limit=100')).data;
  assert.deepEqual(live.map((o) => o.id), [`ord_ol1_${x}`]);
  assert.equal(live[0].downloads.length, 1);
  const r = await api(live[0].downloads[0].url);
  assert.equal(r.status, 200);
  assert.ok(r.body.equals(fontBytes));
});

test('the route needs a key and takes GET only', async () => {
  const r = await api('/v1/orders');
  assert.equal(r.status, 401);
  assert.equal(r.json.error.code, 'missing_api_key');
  const post = await api('/v1/orders', { key: kA, method: 'POST' });
  assert.equal(post.status, 405);
  assert.equal(post.headers.get('allow'), 'GET');
});
