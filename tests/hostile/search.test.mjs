// The search attack of issue 21 (make hostile-check): one key sends the most expensive
// searches we can build, on 8 connections at once, ignoring every refusal; another key
// browses the catalogue one request at a time. Its latency under the attack should stay
// within twice its quiet value (printed beside that bound): the attacker's searches are
// bounded (a walk of the sort's index or a cheap index, never the whole catalogue), and it
// holds at most MARKET_KEY_INFLIGHT of the host's workers (refused at once beyond that).
//
// tests/hostile/run starts the stack with MARKET_RATE_LIMIT lifted (the attacker is not
// stopped by its 600 a minute: the cap and the bounded plans alone must do) and seeds
// HOSTILE_PRODUCTS products (200,000 by default).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { admin, api, newKey, psql, uniqueId, BASE_URL } from '../e2e/lib/stack.mjs';

const ATTACKER = fileURLToPath(new URL('./attacker.mjs', import.meta.url));

const PRODUCTS = Number(process.env.HOSTILE_PRODUCTS ?? 200000);
const SECONDS = Number(process.env.HOSTILE_SECONDS ?? 15);
const VICTIM_REQUESTS = 400;
let attacker;
let victim;
let categories;

before(() => {
  admin(['seed', '--mode', 'test', '--products', String(PRODUCTS)]);
  const account = uniqueId('acct_hostile_');
  admin(['import', '-'], JSON.stringify({ mode: 'test', accounts: [{ id: account }] }));
  attacker = newKey({ account, mode: 'test', access: 'read-only' });
  victim = newKey({ account, mode: 'test', access: 'read-only' });
});

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** The victim's latencies (ms) over VICTIM_REQUESTS sequential list pages. */
async function browse() {
  const times = [];
  for (let i = 0; i < VICTIM_REQUESTS; i++) {
    // Another limit each time: no worker answers it from its page cache.
    const path = `/v1/products?category=${categories[i % categories.length]}&limit=${1 + (i % 100)}`;
    const t0 = performance.now();
    const r = await api(path, { key: victim });
    times.push(performance.now() - t0);
    assert.equal(r.status, 200, r.text);
  }
  return times;
}

test('search attack: another key keeps its latency', async (t) => {
  categories = psql("SELECT DISTINCT category FROM products WHERE mode = 'test' ORDER BY 1 LIMIT 20").split('\n');
  assert.ok(categories.length >= 5, `the seeded categories: ${categories}`);
  await browse(); // warm
  const quiet = await browse();

  // The attacker at the lowest CPU priority (see attacker.mjs), the victim as it is.
  const child = spawn('nice', ['-n', '19', process.execPath, ATTACKER, BASE_URL, attacker, categories.join(',')],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  await new Promise((resolve) => setTimeout(resolve, 500)); // its 8 connections at work
  const started = performance.now();
  const loaded = [];
  while (performance.now() - started < SECONDS * 1000) loaded.push(...(await browse()));
  child.kill('SIGTERM');
  await exited;
  const { requests: n, statuses } = JSON.parse(output);

  const q50 = percentile(quiet, 50), q99 = percentile(quiet, 99);
  const l50 = percentile(loaded, 50), l99 = percentile(loaded, 99);
  t.diagnostic(`attacker's answers: ${JSON.stringify(statuses)}`);
  const within = l99 <= 2 * q99;
  const line = `search attack: victim p50/p99 ${q50.toFixed(1)}/${q99.toFixed(1)} ms quiet, ` +
    `${l50.toFixed(1)}/${l99.toFixed(1)} ms under 8 connections of one key ` +
    `(${n} attacking requests: ${statuses['200'] ?? 0} answered, ${statuses['429 too_many_in_flight'] ?? 0} refused in flight); ` +
    `bound p99 <= 2 x quiet = ${(2 * q99).toFixed(1)} ms: ${within ? 'within' : 'PAST THE BOUND'}`;
  console.log(line);
  // Latency is reported, not asserted (a timing on a shared 2-core machine is a
  // measurement, not a test); what must hold is asserted: every victim request answered
  // 200 (browse), the attacker served too (its searches are legal), and held to its share
  // of the workers (refused in flight, never 5xx).
  assert.ok((statuses['200'] ?? 0) > 0, `the attacker was served too: ${JSON.stringify(statuses)}`);
  assert.ok((statuses['429 too_many_in_flight'] ?? 0) > 0, `the attacker was held to its share: ${JSON.stringify(statuses)}`);
  const failed = Object.keys(statuses).filter((k) => k !== '200' && k !== '429 too_many_in_flight');
  assert.deepEqual(failed, [], `the attacker got only 200s and refusals: ${JSON.stringify(statuses)}`);
});
