// Nothing acknowledged is lost (issue 21, item 6): a write the API answered is on disk
// before the client hears of it (synchronous_commit stays on: tools/stack's cluster
// configuration), so a crash of PostgreSQL loses none of them.
//
// 300 download links are minted with an Idempotency-Key each (201), then every process
// of the stack's PostgreSQL cluster, the postmaster first, is killed with SIGKILL at once
// (nothing gets to flush anything), and the cluster is started again (crash recovery
// from the WAL). Then each of the 300 is still there: its Idempotency-Key replays the
// same URL, and the URL downloads the file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { api, importDoc, newKey, uniqueId, waitFor, FILES_ROOT } from './lib/stack.mjs';
import { pool } from './fixtures/expect.mjs';
import { pgRunning, pgStart, postmasterPid } from './fixtures/postgres.mjs';

const LINKS = 300;
const x = uniqueId('');
const buyer = `acct_dur_${x}`;
const bytes = randomBytes(3000);
const keys = []; // four keys of the buyer: 150 requests each, well within 600 a minute
let download;

before(async () => {
  const rel = `dur-${x}/font.zip`;
  mkdirSync(join(FILES_ROOT, `dur-${x}`), { recursive: true });
  writeFileSync(join(FILES_ROOT, rel), bytes);
  importDoc({
    mode: 'test',
    accounts: [{ id: `acct_durs_${x}` }, { id: buyer }],
    sellers: [{ id: `dur-${x}`, account: `acct_durs_${x}`, name: 'Durable Shop' }],
    products: [{
      id: `prod_dur_${x}`, seller: `dur-${x}`, title: 'Durable Font', category: 'fonts', currency: 'USD',
      status: 'published', tiers: [{ id: `tier_dur_${x}`, name: 'Personal', price: 3 }],
      files: [{ id: `file_dur_${x}`, filename: 'font.zip', path: rel, size_bytes: bytes.length }],
    }],
    orders: [{ id: `ord_dur_${x}`, account: buyer, status: 'paid', items: [{ product: `prod_dur_${x}`, tier: `tier_dur_${x}` }] }],
  });
  for (let i = 0; i < 4; i++) keys.push(newKey({ account: buyer }));
  const orders = await api('/v1/orders?limit=1', { key: keys[0] });
  assert.equal(orders.status, 200, orders.text);
  download = orders.json.data[0].downloads[0].id;
});

// Whatever happens, the next file gets a running database.
after(() => {
  if (!pgRunning()) pgStart();
});

const children = (pid) => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
};
const exists = (pid) => {
  try {
    readFileSync(`/proc/${pid}/stat`);
    return true;
  } catch {
    return false;
  }
};

// A key's request refused for its requests in flight (429 too_many_in_flight, when the
// stack runs with the default cap, as in make hostile-check) was not run: send it again.
const mint = async (i) => {
  for (;;) {
    const r = await api(`/v1/downloads/${download}/link`, {
      key: keys[i % keys.length], method: 'POST', headers: { 'Idempotency-Key': `dur-${x}-${i}` },
    });
    if (r.status !== 429 || r.json?.error?.code !== 'too_many_in_flight') return r;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

test(`${LINKS} acknowledged links survive PostgreSQL killed with SIGKILL, each replay equal`, async (t) => {
  const minted = await pool(Array.from({ length: LINKS }, (_, i) => () => mint(i)), 16);
  for (const [i, r] of minted.entries()) assert.equal(r.status, 201, `mint ${i}: ${r.text.slice(0, 200)}`);
  const urls = minted.map((r) => r.json.url);
  assert.equal(new Set(urls).size, LINKS, 'every mint made its own link');

  // The whole cluster at once, the instant the last 201 arrived.
  const postmaster = postmasterPid();
  assert.ok(postmaster, 'PostgreSQL runs');
  const pids = [postmaster, ...children(postmaster)];
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  await waitFor(() => pids.every((pid) => !exists(pid)), { timeout: 10000, message: 'the killed PostgreSQL processes to go' });
  t.diagnostic(`killed ${pids.length} PostgreSQL processes (postmaster ${postmaster}) after ${LINKS} links answered 201`);
  pgStart();
  await waitFor(async () => (await api('/v1/products?limit=1', { key: keys[0] })).status === 200,
    { timeout: 15000, interval: 200, message: 'the API to answer 200 again' });

  const replays = await pool(Array.from({ length: LINKS }, (_, i) => () => mint(i)), 16);
  const lost = [];
  for (const [i, r] of replays.entries()) {
    if (r.status !== 201 || r.json?.url !== urls[i]) lost.push(`${i}: ${r.status} ${r.json?.url ?? r.text.slice(0, 100)}`);
  }
  const files = await pool(urls.map((url) => () => api(url)), 16);
  const dead = files.map((r, i) => [r, i]).filter(([r]) => r.status !== 200 || !r.body.equals(bytes)).map(([r, i]) => `${i}: ${r.status}`);
  console.log(`durability: ${LINKS} links acknowledged, ${lost.length} replays differ, ${dead.length} links dead after kill -9 (bound 0)`);
  assert.deepEqual(lost, [], 'every Idempotency-Key replays the URL first answered');
  assert.deepEqual(dead, [], 'every acknowledged link downloads its file');
});
