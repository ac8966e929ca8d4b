// market-webhookd under stress, end to end (contract section 7): several drainers sharing
// one outbox deliver each event exactly once in normal operation; a drainer killed with
// SIGKILL mid-batch loses nothing (its leases run out and the deliveries are sent again);
// a receiver that is down for a while gets everything once it is back.
//
// Besides the stack's own drainer, this file starts market-webhookd processes of its own
// with the harness's environment (MARKET_DB, MARKET_SECRET_FILE, MARKET_WEBHOOK_CA_FILE,
// MARKET_WEBHOOK_ALLOW_PRIVATE, MARKET_WEBHOOK_RETRIES) and stops them by their pid.
// Events are payouts written with one INSERT ... SELECT, so that they all commit at once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';

import { api, importDoc, newKey, psql, uniqueId, MARKET_ADMIN } from './lib/stack.mjs';
import { startReceiver, verifyDelivery } from './fixtures/webhook_receiver.mjs';

const x = uniqueId('');
const WEBHOOKD = join(process.env.STACK_BIN_DIR ?? dirname(MARKET_ADMIN), 'market-webhookd');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const drainers = new Set(); // child processes started here, stopped in after()
let rx;

const acct = (s) => `acct_wd${s}_${x}`;
const seller = (s) => `wd${s}-${x}`;

before(async () => {
  assert.equal(process.env.MARKET_WEBHOOK_ALLOW_PRIVATE, '1', 'run with MARKET_WEBHOOK_ALLOW_PRIVATE=1 (tests/e2e/run sets it)');
  importDoc({
    mode: 'test',
    accounts: ['a', 'b', 'c'].map((s) => ({ id: acct(s) })),
    sellers: ['a', 'b', 'c'].map((s) => ({ id: seller(s), account: acct(s), name: `Drain seller ${s}` })),
  });
  rx = await startReceiver();
});

after(async () => {
  for (const d of drainers) d.kill('SIGKILL');
  await rx?.close();
});

async function subscribe(s, url) {
  const r = await api('/v1/webhooks', { key: newKey({ account: acct(s) }), method: 'POST', body: { url, events: ['payout.sent'] } });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

/** n payout.sent events for seller s, committed together; returns their payout ids' prefix. */
function payouts(s, n) {
  const prefix = `po_${s}${uniqueId('')}_`;
  psql(`INSERT INTO payouts (id, mode, seller_id, amount_minor, currency, status, sent_at)
        SELECT '${prefix}' || g, 'test', '${seller(s)}', 100 + g, 'USD', 'sent', now()
          FROM generate_series(1, ${n}) g`);
  return prefix;
}

/** Starts a market-webhookd of our own; resolves once it has started. */
async function startDrainer(extraEnv = {}) {
  const child = spawn(WEBHOOKD, [], { env: { ...process.env, ...extraEnv }, stdio: ['ignore', 'ignore', 'pipe'] });
  drainers.add(child);
  child.log = '';
  child.stderr.on('data', (d) => {
    child.log += d;
  });
  child.exited = new Promise((resolve) => child.on('exit', (code, signal) => {
    drainers.delete(child);
    resolve({ code, signal });
  }));
  const deadline = Date.now() + 10000;
  while (!/started as/.test(child.log)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`market-webhookd did not start: ${child.log}`);
    await sleep(20);
  }
  return child;
}

/** Pending deliveries of a subscription leased by the drainer with this pid right now. */
const leasedBy = (sub, pid) => Number(psql(`SELECT count(*) FROM webhook_deliveries WHERE subscription_id = '${sub}'
  AND status = 'pending' AND lease_until > now() AND leased_by LIKE '%:${pid}:%'`));

const statusCounts = (sub) => psql(`SELECT status || ' ' || count(*) FROM webhook_deliveries WHERE subscription_id = '${sub}' GROUP BY status ORDER BY status`);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------------------------------
test('two drainers at once over 1,000 events: each delivered exactly once', async () => {
  const N = 1000;
  rx.route('/count', () => ({ status: 204, delayMs: 50 }));
  const sub = await subscribe('a', rx.url('/count'));
  const second = await startDrainer();
  payouts('a', N);

  // Which drainers hold leases while the batch is worked off (the stack's and ours).
  const holders = new Set();
  const ids = () => new Set(rx.to('/count').map((r) => r.headers['webhook-id']));
  const deadline = Date.now() + 45000;
  while (ids().size < N) {
    assert.ok(Date.now() < deadline, `only ${ids().size} of ${N} events arrived`);
    for (const h of psql(`SELECT DISTINCT leased_by FROM webhook_deliveries WHERE subscription_id = '${sub.id}' AND leased_by IS NOT NULL`).split('\n')) {
      if (h) holders.add(h);
    }
    await sleep(50);
  }
  await sleep(1500); // a duplicate would arrive by now
  const got = rx.to('/count');
  assert.equal(ids().size, N, `${N} distinct webhook-ids`);
  assert.equal(got.length, N, `${N} requests in all: none sent twice`);
  assert.ok([...holders].some((h) => h.includes(`:${second.pid}:`)), `the second drainer took part: ${[...holders].join(', ')}`);
  assert.ok([...holders].some((h) => !h.includes(`:${second.pid}:`)), `the stack's drainer took part: ${[...holders].join(', ')}`);
  assert.equal(statusCounts(sub.id), `delivered ${N}`);
  assert.equal(psql(`SELECT count(*) FROM webhook_deliveries WHERE subscription_id = '${sub.id}' AND attempts <> 1`), '0');
  for (const rec of got.slice(0, 20)) verifyDelivery(sub.secret, rec);

  second.kill('SIGTERM');
  const { code } = await second.exited;
  assert.equal(code, 0, `market-webhookd stops cleanly on SIGTERM: ${second.log}`);
});

// ---------------------------------------------------------------------------------------
test('a drainer killed with SIGKILL mid-batch loses nothing: its leases run out, another sends', async () => {
  // The lease of a drainer is its MARKET_WEBHOOK_TIMEOUT + 30 s: the lowest timeout keeps
  // this test short. The receiver answers slowly so that requests are in flight.
  const N = 300;
  const env = { MARKET_WEBHOOK_TIMEOUT: '2' };
  rx.route('/slow', () => ({ status: 204, delayMs: 500 }));
  const sub = await subscribe('b', rx.url('/slow'));
  const victim = await startDrainer(env);
  payouts('b', N);

  await waitUntil(() => leasedBy(sub.id, victim.pid) > 0, 'the drainer to hold leases', 10000);
  victim.kill('SIGKILL');
  const { signal } = await victim.exited;
  assert.equal(signal, 'SIGKILL');
  const stranded = psql(`SELECT id FROM webhook_deliveries WHERE subscription_id = '${sub.id}'
    AND status = 'pending' AND leased_by LIKE '%:${victim.pid}:%'`).split('\n').filter(Boolean);
  assert.ok(stranded.length > 0, 'the killed drainer left leased deliveries behind');

  const successor = await startDrainer(env);
  const events = psql(`SELECT event_id FROM webhook_deliveries WHERE subscription_id = '${sub.id}'`).split('\n');
  assert.equal(events.length, N);
  await waitUntil(() => statusCounts(sub.id) === `delivered ${N}`, `all ${N} delivered (after the leases of 32 s ran out)`, 50000);
  const received = new Set(rx.to('/slow').map((r) => r.headers['webhook-id']));
  const lost = events.filter((e) => !received.has(e));
  assert.deepEqual(lost, [], 'every event arrived at least once');
  // The stranded ones were claimed again, as a new attempt, once their lease had run out.
  assert.equal(psql(`SELECT count(*) FROM webhook_deliveries WHERE id IN (${stranded.join(',')}) AND attempts >= 2`), String(stranded.length));

  successor.kill('SIGTERM');
  assert.equal((await successor.exited).code, 0, successor.log);
});

// ---------------------------------------------------------------------------------------
test('a receiver that is down and comes back later gets every event', async () => {
  const N = 20;
  const port = await freePort(); // nothing listens there yet
  const sub = await subscribe('c', `https://127.0.0.1:${port}/back`);
  payouts('c', N);
  // Two failed attempts each (connection refused), then the receiver comes up.
  await waitUntil(() => psql(`SELECT count(*) FROM webhook_deliveries WHERE subscription_id = '${sub.id}'
    AND status = 'pending' AND attempts >= 2 AND last_error IS NOT NULL AND lease_until IS NULL`) === String(N), 'two failed attempts of each delivery', 20000);
  const back = await startReceiver({ port });
  try {
    await back.waitFor((reqs) => new Set(reqs.map((r) => r.headers['webhook-id'])).size === N, `all ${N} events at the receiver`, 20000);
    await waitUntil(() => statusCounts(sub.id) === `delivered ${N}`, 'all delivered');
    for (const rec of back.requests) verifyDelivery(sub.secret, rec);
    assert.equal(psql(`SELECT count(*) FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
      WHERE d.subscription_id = '${sub.id}' AND a.http_status IS NULL AND a.error IS NOT NULL`), String(2 * N), 'the failed attempts are recorded with their error');
  } finally {
    await back.close();
  }
});

async function waitUntil(fn, message, timeout = 20000) {
  const deadline = Date.now() + timeout;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${message}`);
    await sleep(100);
  }
}
