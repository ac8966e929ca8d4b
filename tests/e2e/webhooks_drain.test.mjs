// market-webhookd under stress, end to end (docs/contract.md section 7): several drainers sharing
// one outbox deliver each event exactly once in normal operation; a drainer killed with
// SIGKILL mid-batch loses nothing (its 10 s leases run out and another drainer sends them);
// a send slower than the lease keeps its lease (renewed every 3 s);
// a drainer stopped with SIGTERM waits for the answers of its sends in flight, records
// them and exits 0; a receiver that is down for a while gets everything once it is back.
//
// Besides the stack's own drainer, this file starts market-webhookd processes of its own
// with the harness's environment (MARKET_DB, MARKET_SECRET_FILE, MARKET_WEBHOOK_CA_FILE,
// MARKET_WEBHOOK_ALLOW_PRIVATE, MARKET_WEBHOOK_RETRIES) and stops them by their pid.
// Events are payouts written with one INSERT ... SELECT, so that they all commit at once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';

import { api, freePort, importDoc, newKey, psql, uniqueId, MARKET_ADMIN } from './lib/stack.mjs';
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
    accounts: ['a', 'b', 'c', 'd', 'e'].map((s) => ({ id: acct(s) })),
    sellers: ['a', 'b', 'c', 'd', 'e'].map((s) => ({ id: seller(s), account: acct(s), name: `Drain seller ${s}` })),
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
test('a drainer killed with SIGKILL mid-batch hands its deliveries back within 15 s, and loses nothing', async () => {
  // A drainer's leases last 10 s and are renewed every 3 s while it holds deliveries, so
  // those of a dead drainer run out within 10 s of its death and another claims them at
  // its next poll (1 s). The receiver answers slowly so that requests are in flight.
  const N = 300;
  rx.route('/slow', () => ({ status: 204, delayMs: 500 }));
  const sub = await subscribe('b', rx.url('/slow'));
  const victim = await startDrainer();
  payouts('b', N);

  await waitUntil(() => leasedBy(sub.id, victim.pid) > 0, 'the drainer to hold leases', 10000);
  victim.kill('SIGKILL');
  const { signal } = await victim.exited;
  const killedAt = Date.now();
  assert.equal(signal, 'SIGKILL');
  const stranded = psql(`SELECT id FROM webhook_deliveries WHERE subscription_id = '${sub.id}'
    AND status = 'pending' AND leased_by LIKE '%:${victim.pid}:%'`).split('\n').filter(Boolean);
  assert.ok(stranded.length > 0, 'the killed drainer left leased deliveries behind');

  const events = psql(`SELECT event_id FROM webhook_deliveries WHERE subscription_id = '${sub.id}'`).split('\n');
  assert.equal(events.length, N);
  // The stack's own drainer takes them over: no successor needs to start.
  await waitUntil(() => psql(`SELECT count(*) FROM webhook_deliveries WHERE id IN (${stranded.join(',')})
    AND (attempts >= 2 OR status <> 'pending')`) === String(stranded.length), 'the stranded deliveries to be claimed again', 20000);
  const handedBackMs = Date.now() - killedAt;
  assert.ok(handedBackMs <= 15000, `the dead drainer's ${stranded.length} deliveries were claimed again after ${handedBackMs} ms (at most 15 s)`);
  await waitUntil(() => statusCounts(sub.id) === `delivered ${N}`, `all ${N} delivered`, 30000);
  const received = new Set(rx.to('/slow').map((r) => r.headers['webhook-id']));
  const lost = events.filter((e) => !received.has(e));
  assert.deepEqual(lost, [], 'every event arrived at least once');
  assert.equal(psql(`SELECT count(*) FROM webhook_deliveries WHERE id IN (${stranded.join(',')}) AND attempts >= 2`), String(stranded.length));
});

test('a send that outlasts the lease keeps it: a slow receiver gets the event once, with two drainers running', async () => {
  // 13 s to answer, longer than the 10 s lease: only the renewals every 3 s keep the
  // other drainer from claiming the delivery while the first still waits.
  const env = { MARKET_WEBHOOK_TIMEOUT: '30' };
  rx.route('/very-slow', () => ({ status: 204, delayMs: 13000 }));
  const sub = await subscribe('d', rx.url('/very-slow'));
  const first = await startDrainer(env);
  const second = await startDrainer(env);
  payouts('d', 2);
  await waitUntil(() => statusCounts(sub.id) === 'delivered 2', 'both delivered', 40000);
  const got = rx.to('/very-slow');
  assert.equal(got.length, 2, `each event sent once: ${got.map((r) => r.headers['webhook-id']).join(', ')}`);
  assert.equal(psql(`SELECT count(*) FROM webhook_deliveries WHERE subscription_id = '${sub.id}' AND attempts = 1`), '2');
  first.kill('SIGTERM');
  second.kill('SIGTERM');
  await Promise.all([first.exited, second.exited]);
});

test('SIGTERM with sends in flight: the drainer waits for their answers, records them and exits 0', async () => {
  // The receiver answers 3 s after each request, so the drainer holds sends in flight
  // when it is told to stop; its leases (10 s) keep the stack's drainer off them meanwhile.
  // More events than the stack's drainer takes at once (64 in flight), so ours gets some.
  const N = 100;
  rx.route('/inflight', () => ({ status: 204, delayMs: 3000 }));
  const sub = await subscribe('e', rx.url('/inflight'));
  const drainer = await startDrainer();
  payouts('e', N);
  await waitUntil(() => leasedBy(sub.id, drainer.pid) > 0, 'the drainer to hold leases', 10000);
  const held = psql(`SELECT id FROM webhook_deliveries WHERE subscription_id = '${sub.id}'
    AND status = 'pending' AND leased_by LIKE '%:${drainer.pid}:%'`).split('\n').filter(Boolean);
  drainer.kill('SIGTERM');
  const { code } = await drainer.exited;
  assert.equal(code, 0, `market-webhookd exits 0 after its sends in flight: ${drainer.log}`);
  // Right at its exit, before any other drainer could have taken them over: each held
  // delivery was sent once, answered, recorded and its lease given back.
  assert.equal(psql(`SELECT count(*) FROM webhook_deliveries WHERE id IN (${held.join(',')})
    AND status = 'delivered' AND attempts = 1 AND lease_until IS NULL`), String(held.length));
  assert.equal(psql(`SELECT count(*) FROM webhook_attempts WHERE delivery_id IN (${held.join(',')})
    AND http_status = 204`), String(held.length));
  await waitUntil(() => statusCounts(sub.id) === `delivered ${N}`, `all ${N} delivered`);
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
