// POST /v1/downloads/:id/link, the files location and Idempotency-Key, end to end: real
// files under FILES_ROOT served by nginx through the workers' X-Accel-Redirect.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

import {
  api, admin, importDoc, newKey, psql, uniqueId, DOWNLOAD_BASE_URL, FILES_ROOT,
} from './lib/stack.mjs';

const x = uniqueId('');
const ids = {
  seller: `acct_dls_${x}`, b1: `acct_dlb1_${x}`, b2: `acct_dlb2_${x}`, handle: `dl-${x}`,
  product: `prod_dl_${x}`, tier: `tier_dl_${x}`, liveProduct: `prod_dllive_${x}`,
  liveTier: `tier_dllive_${x}`, oddProduct: `prod_dlodd_${x}`, oddTier: `tier_dlodd_${x}`,
  b1Paid: `ord_dl1_${x}`, b2Paid: `ord_dl2_${x}`, b1Refunded: `ord_dl3_${x}`,
  b1ToRefund: `ord_dl4_${x}`, b1Pending: `ord_dl5_${x}`, b1Live: `ord_dllive_${x}`,
  b1Odd: `ord_dlodd_${x}`,
};
const dir = `dl-${x}`;
const zipBytes = randomBytes(200 * 1024 + 17);
const pdfBytes = Buffer.from('%PDF-1.4 not really a pdf\n');
const liveBytes = randomBytes(1000);
const ZIP_NAME = 'font pack.zip';
// market-admin import refuses quotes and backslashes in file names; the test sets this one
// in the database afterwards, as another writer of the catalogue might.
const PDF_NAME = 'Ünïcode "q" \\ guide.pdf';
const PDF_IMPORT_NAME = 'Ünïcode guide.pdf';

let k1; // buyer 1, test, read-write
let k2; // buyer 2, test, read-write
let k1live; // buyer 1, live, read-write
let k1ro; // buyer 1, test, read-only
const dl = {}; // download ids by name

function writeFile(rel, bytes) {
  const path = join(FILES_ROOT, rel);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, bytes);
}

function order(id, account, status, created, product, tier) {
  return { id, account, status, created_at: created, items: [{ product, tier }] };
}

async function downloadsOf(key, orderId) {
  const r = await api('/v1/orders?limit=100', { key });
  assert.equal(r.status, 200, r.text);
  const o = r.json.data.find((e) => e.id === orderId);
  assert.ok(o, `order ${orderId} is listed`);
  return o.downloads;
}

const mint = (id, key, opts = {}) => api(`/v1/downloads/${id}/link`, { key, method: 'POST', ...opts });
const tokenCount = (download) => Number(psql(`SELECT count(*) FROM download_tokens WHERE download_id = '${download}'`));

before(async () => {
  writeFile(`${dir}/font pack.zip`, zipBytes);
  writeFile(`${dir}/sub dir/ü.pdf`, pdfBytes);
  writeFile(`${dir}/live.bin`, liveBytes);
  writeFile(`${dir}/odd.bin`, Buffer.from('odd'));
  const files = [
    { id: `file_dlzip_${x}`, filename: ZIP_NAME, path: `${dir}/font pack.zip`, size_bytes: zipBytes.length },
    { id: `file_dlpdf_${x}`, filename: PDF_IMPORT_NAME, path: `${dir}/sub dir/ü.pdf`, size_bytes: pdfBytes.length },
  ];
  importDoc({
    mode: 'test',
    accounts: [{ id: ids.seller }, { id: ids.b1 }, { id: ids.b2 }],
    sellers: [{ id: ids.handle, account: ids.seller, name: 'Downloads Seller' }],
    products: [
      {
        id: ids.product, seller: ids.handle, title: 'Font Pack', category: 'fonts', currency: 'USD',
        status: 'published', tiers: [{ id: ids.tier, name: 'Personal', price: 9.5 }], files,
      },
      {
        id: ids.oddProduct, seller: ids.handle, title: 'Odd', category: 'misc', currency: 'USD',
        status: 'published', tiers: [{ id: ids.oddTier, name: 'Personal', price: 1 }],
        files: [{ id: `file_dlodd_${x}`, filename: 'odd.bin', path: `${dir}/odd.bin`, size_bytes: 3 }],
      },
    ],
    orders: [
      order(ids.b1Paid, ids.b1, 'paid', '2026-01-01T00:00:00Z', ids.product, ids.tier),
      order(ids.b2Paid, ids.b2, 'paid', '2026-01-01T00:00:00Z', ids.product, ids.tier),
      order(ids.b1Refunded, ids.b1, 'refunded', '2026-01-02T00:00:00Z', ids.product, ids.tier),
      order(ids.b1ToRefund, ids.b1, 'paid', '2026-01-03T00:00:00Z', ids.product, ids.tier),
      order(ids.b1Pending, ids.b1, 'pending', '2026-01-04T00:00:00Z', ids.product, ids.tier),
      order(ids.b1Odd, ids.b1, 'paid', '2026-01-05T00:00:00Z', ids.oddProduct, ids.oddTier),
    ],
  });
  importDoc({
    mode: 'live',
    products: [{
      id: ids.liveProduct, seller: ids.handle, title: 'Live Pack', category: 'fonts', currency: 'USD',
      status: 'published', tiers: [{ id: ids.liveTier, name: 'Personal', price: 5 }],
      files: [{ id: `file_dllive_${x}`, filename: 'live.bin', path: `${dir}/live.bin`, size_bytes: 1000 }],
    }],
    orders: [order(ids.b1Live, ids.b1, 'paid', '2026-01-01T00:00:00Z', ids.liveProduct, ids.liveTier)],
  });
  psql(`UPDATE files SET filename = '${PDF_NAME}' WHERE id = 'file_dlpdf_${x}'`);
  k1 = newKey({ account: ids.b1 });
  k2 = newKey({ account: ids.b2 });
  k1live = newKey({ account: ids.b1, mode: 'live' });
  k1ro = newKey({ account: ids.b1, access: 'read-only' });

  const byName = (list, name) => list.find((d) => d.filename === name).id;
  const b1 = await downloadsOf(k1, ids.b1Paid);
  dl.b1zip = byName(b1, ZIP_NAME);
  dl.b1pdf = byName(b1, PDF_NAME);
  dl.b2zip = byName(await downloadsOf(k2, ids.b2Paid), ZIP_NAME);
  dl.b1refunded = byName(await downloadsOf(k1, ids.b1Refunded), ZIP_NAME);
  const toRefund = await downloadsOf(k1, ids.b1ToRefund);
  dl.toRefundZip = byName(toRefund, ZIP_NAME);
  dl.toRefundPdf = byName(toRefund, PDF_NAME);
  dl.b1odd = (await downloadsOf(k1, ids.b1Odd))[0].id;
  dl.b1live = (await downloadsOf(k1live, ids.b1Live))[0].id;
  dl.b1pending = psql(`SELECT id FROM downloads WHERE order_id = '${ids.b1Pending}' LIMIT 1`);
  assert.match(dl.b1pending, /^dl_/);
});

test('minting a link: 201 with the contract shape, default lifetime', async () => {
  const r = await mint(dl.b1zip, k1);
  assert.equal(r.status, 201, r.text);
  assert.match(r.headers.get('content-type'), /^application\/json; charset=utf-8$/);
  assert.deepEqual(Object.keys(r.json), ['object', 'download', 'url', 'expires_at']);
  assert.equal(r.json.object, 'download_link');
  assert.equal(r.json.download, dl.b1zip);
  assert.ok(r.json.url.startsWith(`${DOWNLOAD_BASE_URL}/`), r.json.url);
  assert.match(r.json.url.slice(DOWNLOAD_BASE_URL.length + 1), /^[A-Za-z0-9_-]{43}$/);
  assert.match(r.json.expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  const left = (Date.parse(r.json.expires_at) - Date.now()) / 1000;
  assert.ok(left > 3600 - 30 && left <= 3600, `expires in ${left} s`);
});

test('expires_in sets the lifetime within 60..86400', async () => {
  for (const seconds of [60, 86400]) {
    const r = await mint(dl.b1zip, k1, { body: { expires_in: seconds } });
    assert.equal(r.status, 201, r.text);
    const left = (Date.parse(r.json.expires_at) - Date.now()) / 1000;
    assert.ok(left > seconds - 30 && left <= seconds, `expires in ${left} s, asked ${seconds}`);
  }
});

test('a link serves the exact bytes with attachment headers; HEAD works', async () => {
  const link = (await mint(dl.b1zip, k1)).json.url;
  const r = await api(link);
  assert.equal(r.status, 200);
  assert.ok(r.body.equals(zipBytes), 'the body is the file');
  assert.equal(r.headers.get('content-length'), String(zipBytes.length));
  assert.equal(r.headers.get('content-type'), 'application/zip');
  assert.equal(r.headers.get('content-disposition'), 'attachment; filename="font pack.zip"');
  assert.equal(r.headers.get('accept-ranges'), 'bytes');

  const h = await api(link, { method: 'HEAD' });
  assert.equal(h.status, 200);
  assert.equal(h.headers.get('content-length'), String(zipBytes.length));
  assert.equal(h.body.length, 0);
});

test('a non-ASCII file name gets an ASCII fallback and filename*', async () => {
  const link = (await mint(dl.b1pdf, k1)).json.url;
  const r = await api(link);
  assert.equal(r.status, 200);
  assert.ok(r.body.equals(pdfBytes));
  assert.equal(r.headers.get('content-type'), 'application/pdf');
  const cd = r.headers.get('content-disposition');
  assert.equal(cd, 'attachment; filename="_n_code \\"q\\" \\\\ guide.pdf"; ' +
    `filename*=UTF-8''${"%C3%9Cn%C3%AFcode%20%22q%22%20%5C%20guide.pdf"}`);
  const star = decodeURIComponent(cd.split("filename*=UTF-8''")[1]);
  assert.equal(star, PDF_NAME);
});

test('Range requests get 206 with the right bytes', async () => {
  const link = (await mint(dl.b1zip, k1)).json.url;
  const r = await api(link, { headers: { Range: 'bytes=1000-1999' } });
  assert.equal(r.status, 206);
  assert.equal(r.headers.get('content-range'), `bytes 1000-1999/${zipBytes.length}`);
  assert.ok(r.body.equals(zipBytes.subarray(1000, 2000)));

  const tail = await api(link, { headers: { Range: 'bytes=-17' } });
  assert.equal(tail.status, 206);
  assert.ok(tail.body.equals(zipBytes.subarray(zipBytes.length - 17)));

  // A few ranges are served as a multipart answer; more than 8 are ignored: the whole
  // file, never an answer many times its size (2,000 one-byte ranges).
  const few = await api(link, { headers: { Range: 'bytes=0-0,10-10,20-20' } });
  assert.equal(few.status, 206);
  assert.match(few.headers.get('content-type'), /^multipart\/byteranges/);
  const many = Array.from({ length: 2000 }, (_, i) => `${i}-${i}`).join(',');
  const all = await api(link, { headers: { Range: `bytes=${many}` } });
  assert.equal(all.status, 200);
  assert.ok(all.body.equals(zipBytes), 'the whole file, once');
});

test('ownership and modes: anything but the caller\'s own download is 404, never 403', async () => {
  const cases = [
    [k1, dl.b2zip, 404], [k2, dl.b1zip, 404], [k2, dl.b1pdf, 404],
    [k1, dl.b1live, 404], [k1live, dl.b1zip, 404], [k1, dl.b1pending, 404],
    [k1, `dl_nothing_${x}`, 404], [k1, 'not-a-download', 404],
    [k1, dl.b1zip, 201], [k2, dl.b2zip, 201], [k1live, dl.b1live, 201],
  ];
  for (const [key, id, status] of cases) {
    const r = await mint(id, key);
    assert.equal(r.status, status, `${id}: ${r.text}`);
    if (status === 404) {
      assert.equal(r.json.error.code, 'resource_missing');
      assert.equal(r.json.error.type, 'invalid_request_error');
    }
  }
  const live = await api((await mint(dl.b1live, k1live)).json.url);
  assert.equal(live.status, 200);
  assert.ok(live.body.equals(liveBytes));
});

test('a read-only key may not mint (403 insufficient_scope)', async () => {
  const r = await mint(dl.b1zip, k1ro);
  assert.equal(r.status, 403);
  assert.equal(r.json.error.code, 'insufficient_scope');
});

test('a download of a refunded order is 409 order_refunded', async () => {
  const r = await mint(dl.b1refunded, k1);
  assert.equal(r.status, 409, r.text);
  assert.equal(r.json.error.code, 'order_refunded');
});

test('body errors: 415, 413, 400', async () => {
  const url = `/v1/downloads/${dl.b1zip}/link`;
  const post = (opts) => api(url, { key: k1, method: 'POST', ...opts });
  let r = await post({ body: '{"expires_in": 60}', headers: { 'Content-Type': 'text/plain' } });
  assert.equal(r.status, 415);
  assert.equal(r.json.error.code, 'unsupported_media_type');
  r = await post({ body: { expires_in: 60, pad: 'a'.repeat(17 * 1024) } });
  assert.equal(r.status, 413);
  assert.equal(r.json.error.code, 'body_too_large');
  for (const body of ['{', '[60]', '"x"', '{"expires_in": 60} x']) {
    r = await post({ body, headers: { 'Content-Type': 'application/json' } });
    assert.equal(r.status, 400, body);
    assert.equal(r.json.error.code, 'body_invalid_json', body);
  }
  r = await post({ body: { expires_in: 60, extra: 1 } });
  assert.equal(r.status, 400);
  assert.equal(r.json.error.code, 'parameter_unknown');
  assert.equal(r.json.error.param, 'extra');
  for (const bad of [59, 86401, 60.5, '60', null, true, -1, 1e20]) {
    r = await post({ body: `{"expires_in": ${JSON.stringify(bad)}}`, headers: { 'Content-Type': 'application/json' } });
    assert.equal(r.status, 400, String(bad));
    assert.equal(r.json.error.code, 'parameter_invalid');
    assert.equal(r.json.error.param, 'expires_in');
  }
  r = await api(`${url}?expires_in=60`, { key: k1, method: 'POST' });
  assert.equal(r.status, 400);
  assert.equal(r.json.error.code, 'parameter_unknown');
  assert.equal(r.json.error.message, 'unknown query parameter expires_in');
  r = await post({ body: { expires_in: 59 } });
  assert.equal(r.json.error.message, 'expires_in must be an integer number of seconds from 60 to 86400');
  // A download id is looked up by the mint, after the body: a body's fault comes first.
  r = await api('/v1/downloads/nope/link', { key: k1, method: 'POST', body: { expires_in: 59 } });
  assert.equal(r.status, 400);
  assert.equal(r.json.error.param, 'expires_in');
  r = await api('/v1/downloads/nope/link', { key: k1, method: 'POST', body: { expires_in: 60 } });
  assert.equal(r.status, 404);
  assert.equal(r.json.error.code, 'resource_missing');
});

test('an expired link is 410 link_expired; forged and unknown tokens are 404', async () => {
  const link = (await mint(dl.b1zip, k1, { body: { expires_in: 60 } })).json.url;
  assert.equal((await api(link)).status, 200);
  const token = link.slice(DOWNLOAD_BASE_URL.length + 1);
  psql(`UPDATE download_tokens SET expires_at = now() - interval '1 second'
         WHERE token_hash = sha256('${token}'::bytea)`);
  const r = await api(link);
  assert.equal(r.status, 410);
  assert.match(r.headers.get('content-type'), /^application\/json/);
  assert.equal(r.json.error.code, 'link_expired');

  const flip = token.slice(0, 10) + (token[10] === 'A' ? 'B' : 'A') + token.slice(11);
  const forged = [flip, token.slice(0, 42), `${token}A`, 'A'.repeat(43), 'x', `${token.slice(0, 42)}%41`];
  for (const t of forged) {
    const f = await api(`${DOWNLOAD_BASE_URL}/${t}`);
    assert.equal(f.status, 404, t);
    assert.equal(f.json.error.code, 'resource_missing', t);
  }
});

test('the files location takes GET and HEAD only, without an API key', async () => {
  const link = (await mint(dl.b1zip, k1)).json.url;
  const r = await api(link, { method: 'POST' });
  assert.equal(r.status, 405);
  assert.equal(r.headers.get('allow'), 'GET, HEAD');
  assert.equal(r.json.error.code, 'method_not_allowed');
});

test('a revoked link is 404 even when also expired', async () => {
  const link = (await mint(dl.b1zip, k1)).json.url;
  const token = link.slice(DOWNLOAD_BASE_URL.length + 1);
  psql(`UPDATE download_tokens SET revoked_at = now(), expires_at = now() - interval '1 second'
         WHERE token_hash = sha256('${token}'::bytea)`);
  const r = await api(link);
  assert.equal(r.status, 404);
  assert.equal(r.json.error.code, 'resource_missing');
});

test('a refund kills every live link of the order', async () => {
  const links = [
    (await mint(dl.toRefundZip, k1)).json.url,
    (await mint(dl.toRefundPdf, k1, { body: { expires_in: 86400 } })).json.url,
    ...(await downloadsOf(k1, ids.b1ToRefund)).map((d) => d.url),
  ];
  for (const link of links) assert.equal((await api(link)).status, 200, link);

  admin(['refund', ids.b1ToRefund]);

  for (const link of links) {
    const r = await api(link);
    assert.equal(r.status, 404, link);
    assert.equal(r.json.error.code, 'resource_missing');
  }
  for (const d of await downloadsOf(k1, ids.b1ToRefund)) {
    assert.equal(d.url, null);
    assert.equal(d.expires_at, null);
  }
  const again = await mint(dl.toRefundZip, k1);
  assert.equal(again.status, 409);
  assert.equal(again.json.error.code, 'order_refunded');
});

test('a link whose file is missing on disk is a JSON 404; an unsafe path is never followed', async () => {
  const fileId = `file_dlodd_${x}`;
  psql(`UPDATE files SET path = '${dir}/gone.bin' WHERE id = '${fileId}'`);
  let r = await api((await mint(dl.b1odd, k1)).json.url);
  assert.equal(r.status, 404);
  assert.equal(r.json.error.code, 'resource_missing');

  for (const path of ['../etc/passwd', `${dir}/../${dir}/odd.bin`, `/etc/passwd`, `${dir}//odd.bin`, `./${dir}/odd.bin`]) {
    psql(`UPDATE files SET path = '${path}' WHERE id = '${fileId}'`);
    r = await api((await mint(dl.b1odd, k1)).json.url);
    assert.equal(r.status, 500, path);
    assert.equal(r.json.error.code, 'internal_error');
  }
  psql(`UPDATE files SET path = '${dir}/odd.bin' WHERE id = '${fileId}'`);
  r = await api((await mint(dl.b1odd, k1)).json.url);
  assert.equal(r.status, 200);
  assert.equal(r.text, 'odd');
});

test('Idempotency-Key: a replay gives the same status and body, another body is 409', async () => {
  const key = `idem-${x}-1`;
  const headers = { 'Idempotency-Key': key };
  const before = tokenCount(dl.b1zip);
  const first = await mint(dl.b1zip, k1, { headers, body: { expires_in: 600 } });
  assert.equal(first.status, 201);
  const replay = await mint(dl.b1zip, k1, {
    headers: { ...headers, 'Content-Type': 'application/json' }, body: '{ "expires_in" : 600 }',
  });
  assert.equal(replay.status, 201);
  assert.equal(replay.text, first.text);
  assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  assert.equal(tokenCount(dl.b1zip), before + 1, 'one link minted');

  for (const other of [
    () => mint(dl.b1zip, k1, { headers, body: { expires_in: 601 } }),
    () => mint(dl.b1zip, k1, { headers }),
    () => mint(dl.b1pdf, k1, { headers, body: { expires_in: 600 } }),
  ]) {
    const r = await other();
    assert.equal(r.status, 409, r.text);
    assert.equal(r.json.error.code, 'idempotency_conflict');
  }
  // Keys belong to one API key: buyer 2 may use the same string for its own request.
  const theirs = await mint(dl.b2zip, k2, { headers });
  assert.equal(theirs.status, 201);
});

test('Idempotency-Key: an error outcome is replayed too', async () => {
  const headers = { 'Idempotency-Key': `idem-${x}-404` };
  const first = await mint(dl.b2zip, k1, { headers });
  assert.equal(first.status, 404);
  const again = await mint(dl.b2zip, k1, { headers });
  assert.equal(again.status, 404);
  assert.equal(again.text, first.text);
});

test('Idempotency-Key must be 1..255 printable ASCII characters', async () => {
  for (const value of ['', 'k'.repeat(256), 'clé', 'tab\there']) {
    const r = await mint(dl.b1zip, k1, { headers: { 'Idempotency-Key': value } });
    assert.equal(r.status, 400, JSON.stringify(value));
    assert.equal(r.json.error.code, 'idempotency_key_invalid');
    assert.equal(r.json.error.param, 'Idempotency-Key', 'the header at fault, by its name');
  }
  const ok = await mint(dl.b1zip, k1, { headers: { 'Idempotency-Key': `${'k'.repeat(240)} ~!${x}` } });
  assert.equal(ok.status, 201, ok.text);
});

test('Idempotency-Key: 10 concurrent identical requests make exactly one link', async () => {
  const headers = { 'Idempotency-Key': `race-${x}` };
  const before = tokenCount(dl.b1pdf);
  const results = await Promise.all(Array.from({ length: 10 },
    () => mint(dl.b1pdf, k1, { headers, body: { expires_in: 900 } })));
  for (const r of results) {
    assert.equal(r.status, 201, r.text);
    assert.equal(r.text, results[0].text);
  }
  assert.equal(tokenCount(dl.b1pdf), before + 1);
  assert.equal((await api(results[0].json.url)).status, 200);
});

test('Idempotency-Key: after 24 hours the key is free again', async () => {
  const headers = { 'Idempotency-Key': `old-${x}` };
  const first = await mint(dl.b1zip, k1, { headers });
  assert.equal(first.status, 201);
  psql(`UPDATE idempotency_keys SET created_at = now() - interval '24 hours 1 second'
         WHERE idem_key = 'old-${x}'`);
  const other = await mint(dl.b1zip, k1, { headers, body: { expires_in: 120 } });
  assert.equal(other.status, 201, other.text);
  assert.notEqual(other.json.url, first.json.url);
  const replay = await mint(dl.b1zip, k1, { headers, body: { expires_in: 120 } });
  assert.equal(replay.text, other.text);
});
