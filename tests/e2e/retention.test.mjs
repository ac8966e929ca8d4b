// market-webhookd's retention pass, end to end (docs/contract.md section 12,
// docs/operations.md "Retention"): rows whose period is over are deleted, and nothing
// else is.
//
// The rows are made the ordinary way (webhook deliveries through a real HTTPS receiver,
// links minted through the API, keys rotated and revoked with market-admin, Idempotency-
// Key records of real POSTs), then dated back with SQL. This file starts a market-webhookd
// of its own with MARKET_RETENTION=2m (a pass every 2 s); the stack's own drainer keeps 30
// days and leaves rows of minutes alone. "Old" below is 10 minutes, "recent" 30 seconds.
//
//   pruned: an old finished event (delivered, or failed for good) with its deliveries and
//     attempts; an old event whose two deliveries are both finished; a link expired 10
//     minutes ago (404 resource_missing from then on instead of 410 link_expired); a key
//     expired after rotation or revoked 10 minutes ago (401 invalid_api_key from then on),
//     and a chain of two dead rotated keys; an Idempotency-Key record older than 24 h.
//   kept: an old event with a pending delivery (a retry to come), also when its other
//     delivery is finished; an old event whose failed delivery was attempted recently; a
//     recent event; a link expired 30 s ago and a valid one; a key revoked 30 s ago; a
//     dead key that a key still in its grace names as its replacement; an Idempotency-Key
//     record of 23 h; the orders, downloads and payouts.
//
// One drainer prunes at a time: while this file holds the retention's advisory lock in a
// session of its own, the drainer skips its passes and deletes nothing; once it is
// released, the next pass prunes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import {
  api, admin, importDoc, newKey, psql, uniqueId, waitFor, FILES_ROOT, MARKET_ADMIN, MARKET_DB,
} from './lib/stack.mjs';
import { startReceiver } from './fixtures/webhook_receiver.mjs';
import { parsePrometheus, value } from './fixtures/prometheus.mjs';

const x = uniqueId('');
const WEBHOOKD = join(process.env.STACK_BIN_DIR ?? dirname(MARKET_ADMIN), 'market-webhookd');
const RETENTION_LOCK = '7013620266'; // app/retention/retention.c
const ids = {
  seller1: `acct_rts1_${x}`, seller2: `acct_rts2_${x}`, buyer: `acct_rtb_${x}`,
  handle1: `rt1-${x}`, handle2: `rt2-${x}`, product: `prod_rt_${x}`, tier: `tier_rt_${x}`,
  order: `ord_rt_${x}`, oldOrder: `ord_rtold_${x}`,
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let rx;
let drainer;
let lockHolder;

const OLD = "now() - interval '10 minutes'";
const RECENT = "now() - interval '30 seconds'";
const count = (sql) => Number(psql(`SELECT count(*) ${sql}`));
const keyRow = (key) => `key_hash = sha256(convert_to('${key}', 'UTF8'))`;
const tokenRow = (url) => `token_hash = sha256(convert_to('${new URL(url).pathname.split('/').pop()}', 'UTF8'))`;
const idemRow = (k) => `idem_key = '${k}'`;

before(async () => {
  assert.equal(process.env.MARKET_WEBHOOK_ALLOW_PRIVATE, '1', 'run with tests/e2e/run');
  rx = await startReceiver();
  rx.route('/ok', () => 204);
  mkdirSync(join(FILES_ROOT, `rt-${x}`), { recursive: true });
  writeFileSync(join(FILES_ROOT, `rt-${x}`, 'kept.zip'), 'k');
  importDoc({
    mode: 'test',
    accounts: [{ id: ids.seller1 }, { id: ids.seller2 }, { id: ids.buyer }],
    sellers: [
      { id: ids.handle1, account: ids.seller1, name: 'Retention seller one' },
      { id: ids.handle2, account: ids.seller2, name: 'Retention seller two' },
    ],
    products: [{
      id: ids.product, seller: ids.handle1, title: 'Kept Forever', category: 'fonts', currency: 'USD',
      status: 'published', tiers: [{ id: ids.tier, name: 'Personal', price: 3 }],
      files: [{ id: `file_rt_${x}`, filename: 'kept.zip', path: `rt-${x}/kept.zip`, size_bytes: 1 }],
    }],
    orders: [
      { id: ids.order, account: ids.buyer, status: 'paid', created_at: '2026-01-01T00:00:00Z', items: [{ product: ids.product, tier: ids.tier }] },
      { id: ids.oldOrder, account: ids.buyer, status: 'paid', created_at: '2019-01-01T00:00:00Z', items: [{ product: ids.product, tier: ids.tier }] },
    ],
  });
});

after(async () => {
  drainer?.kill('SIGKILL');
  lockHolder?.kill('SIGKILL');
  await rx?.close();
});

async function subscribe(account, path) {
  const r = await api('/v1/webhooks', {
    key: newKey({ account }), method: 'POST', body: { url: rx.url(path), events: ['payout.sent'] },
  });
  assert.equal(r.status, 201, r.text);
  return r.json.id;
}

/** n payout.sent events for the seller, committed together: their event ids. */
function payoutEvents(handle, n) {
  const prefix = `po_rt${uniqueId('')}_`;
  psql(`INSERT INTO payouts (id, mode, seller_id, amount_minor, currency, status, sent_at)
        SELECT '${prefix}' || g, 'test', '${handle}', 500, 'USD', 'sent', now() FROM generate_series(1, ${n}) g`);
  const events = psql(`SELECT id FROM events WHERE body LIKE '%"${prefix}%' ORDER BY body`).split('\n');
  assert.equal(events.length, n, `the payouts of ${handle} made ${n} events`);
  return events;
}

/** SQL dating an event, its deliveries and their attempts back to `when`. */
const backdateSql = (event, when) => `
  UPDATE events SET created_at = ${when} WHERE id = '${event}';
  UPDATE webhook_deliveries SET created_at = ${when},
         delivered_at = CASE WHEN delivered_at IS NULL THEN NULL ELSE ${when} END
   WHERE event_id = '${event}';
  UPDATE webhook_attempts SET attempted_at = ${when}
   WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE event_id = '${event}');`;

/** SQL of what is left of an event: "events deliveries attempts". */
const leftSql = (event) => `(SELECT (SELECT count(*) FROM events WHERE id = '${event}') || ' ' ||
  (SELECT count(*) FROM webhook_deliveries WHERE event_id = '${event}') || ' ' ||
  (SELECT count(*) FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
    WHERE d.event_id = '${event}'))`;

async function metrics() {
  const res = await api('/metrics');
  assert.equal(res.status, 200);
  return parsePrometheus(res.text);
}

/** A psql session holding the retention's advisory lock until it is killed. */
async function holdLock() {
  const child = spawn('psql', ['-X', '-q', '-A', '-t', '-d', MARKET_DB], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  // The stack's drainer holds it for the milliseconds of its own pass: try until it is ours.
  for (let i = 0; i < 100; i++) {
    out = '';
    child.stdin.write(`SELECT pg_try_advisory_lock(${RETENTION_LOCK});\n`);
    await waitFor(() => /^[tf]$/m.test(out), { timeout: 5000, message: 'psql to answer' });
    if (/^t$/m.test(out)) return child;
    await sleep(50);
  }
  throw new Error('could not take the retention lock');
}

async function startDrainer() {
  const child = spawn(WEBHOOKD, [], {
    env: { ...process.env, MARKET_RETENTION: '2m' }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.log = '';
  child.stderr.on('data', (d) => { child.log += d; });
  child.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  await waitFor(() => /started as .*retention 2m/.test(child.log) || child.exitCode !== null,
    { timeout: 10000, message: 'market-webhookd to start' });
  assert.equal(child.exitCode, null, child.log);
  return child;
}

test('old finished rows go, pending, recent and business rows stay; one drainer at a time', async () => {
  // --- webhook events -----------------------------------------------------------------
  await subscribe(ids.seller1, '/ok');
  await subscribe(ids.seller2, '/ok');
  const sub2b = await subscribe(ids.seller2, '/ok');
  const [oldDelivered, oldFailed, oldFailedRecently, oldPending, recent] = payoutEvents(ids.handle1, 5);
  const [oldBothFinished, oldOnePending] = payoutEvents(ids.handle2, 2);
  const ev = { oldDelivered, oldFailed, oldFailedRecently, oldPending, recent, oldBothFinished, oldOnePending };
  const all = Object.values(ev).map((e) => `'${e}'`).join(',');
  await waitFor(() => count(`FROM webhook_deliveries WHERE event_id IN (${all}) AND status = 'pending'`) === 0,
    { timeout: 20000, message: 'the deliveries to the receiver' });
  assert.equal(count(`FROM webhook_deliveries WHERE event_id IN (${all}) AND status = 'delivered'`), 9,
    'the receiver took the 9 deliveries');

  // --- download links -----------------------------------------------------------------
  const buyerKey = newKey({ account: ids.buyer });
  const orders = await api('/v1/orders?limit=10', { key: buyerKey });
  assert.equal(orders.status, 200, orders.text);
  const download = orders.json.data.find((o) => o.id === ids.order).downloads[0].id;
  const mint = async (headers = {}) => {
    const r = await api(`/v1/downloads/${download}/link`, { key: buyerKey, method: 'POST', headers });
    assert.equal(r.status, 201, r.text);
    return r.json.url;
  };
  const link = { oldExpired: await mint(), recentlyExpired: await mint(), valid: await mint() };

  // --- API keys -----------------------------------------------------------------------
  const key = {};
  key.rotatedOld = newKey({ account: ids.buyer, access: 'read-only' });
  key.rotatedNew = admin(['key', 'rotate', key.rotatedOld]).trim();
  key.revokedOld = newKey({ account: ids.buyer });
  key.revokedRecently = newKey({ account: ids.buyer });
  key.chain1 = newKey({ account: ids.buyer });
  key.chain2 = admin(['key', 'rotate', key.chain1]).trim();
  key.chain3 = admin(['key', 'rotate', key.chain2]).trim();
  key.inGrace = newKey({ account: ids.buyer });
  key.namedByGrace = admin(['key', 'rotate', key.inGrace]).trim();
  admin(['key', 'revoke', key.revokedOld]);
  admin(['key', 'revoke', key.revokedRecently]);
  admin(['key', 'revoke', key.namedByGrace]);
  const auth = async (k) => {
    const r = await api('/v1/products?limit=1', { key: k });
    return r.status === 200 ? 200 : r.json.error.code;
  };

  // --- Idempotency-Key records --------------------------------------------------------
  const idem = { old: `rt-old-${x}`, young: `rt-young-${x}` };
  await mint({ 'Idempotency-Key': idem.old });
  await mint({ 'Idempotency-Key': idem.young });

  // --- everything dated back at once, so that "recent" stays recent to the end ----------
  // Besides the dates: failed for good after its last attempt; the same, attempted 30 s
  // ago; a retry due in an hour; the second subscription's delivery of an event waiting
  // for its retry.
  psql(`${Object.values(ev).map((e) => backdateSql(e, e === ev.recent ? RECENT : OLD)).join('\n')}
        UPDATE webhook_deliveries SET status = 'failed', delivered_at = NULL, last_status = 500
         WHERE event_id IN ('${ev.oldFailed}', '${ev.oldFailedRecently}');
        UPDATE webhook_attempts SET attempted_at = ${RECENT}
         WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE event_id = '${ev.oldFailedRecently}');
        UPDATE webhook_deliveries SET status = 'pending', delivered_at = NULL,
               next_attempt_at = now() + interval '1 hour'
         WHERE event_id = '${ev.oldPending}'
            OR (event_id = '${ev.oldOnePending}' AND subscription_id = '${sub2b}');
        UPDATE download_tokens SET created_at = now() - interval '2 hours', expires_at = ${OLD}
         WHERE ${tokenRow(link.oldExpired)};
        UPDATE download_tokens SET created_at = now() - interval '2 hours', expires_at = ${RECENT}
         WHERE ${tokenRow(link.recentlyExpired)};
        UPDATE api_keys SET expires_at = ${OLD}
         WHERE ${keyRow(key.rotatedOld)} OR ${keyRow(key.chain1)} OR ${keyRow(key.chain2)};
        UPDATE api_keys SET revoked_at = ${OLD} WHERE ${keyRow(key.revokedOld)} OR ${keyRow(key.namedByGrace)};
        UPDATE api_keys SET revoked_at = ${RECENT} WHERE ${keyRow(key.revokedRecently)};
        UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE ${idemRow(idem.old)};
        UPDATE idempotency_keys SET created_at = now() - interval '23 hours' WHERE ${idemRow(idem.young)};`);
  assert.equal((await api(link.oldExpired)).json?.error?.code, 'link_expired');
  assert.equal(await auth(key.rotatedOld), 'api_key_expired');
  assert.equal(await auth(key.revokedOld), 'invalid_api_key');

  // What is left, in one query: per event "events deliveries attempts", per link, key and
  // Idempotency-Key record 1 or 0, and the business rows.
  const state = () => JSON.parse(psql(`SELECT json_build_object(
    ${Object.entries(ev).map(([n, e]) => `'event ${n}', ${leftSql(e)}`).join(',\n    ')},
    ${Object.entries(link).map(([n, u]) => `'link ${n}', (SELECT count(*) FROM download_tokens WHERE ${tokenRow(u)})`).join(',\n    ')},
    ${Object.entries(key).map(([n, k]) => `'key ${n}', (SELECT count(*) FROM api_keys WHERE ${keyRow(k)})`).join(',\n    ')},
    ${Object.entries(idem).map(([n, k]) => `'idempotency ${n}', (SELECT count(*) FROM idempotency_keys WHERE ${idemRow(k)})`).join(',\n    ')},
    'key inGrace names its replacement', (SELECT count(*) FROM api_keys WHERE ${keyRow(key.inGrace)} AND replaced_by IS NOT NULL),
    'subscriptions', (SELECT count(*) FROM webhook_subscriptions WHERE account_id IN ('${ids.seller1}', '${ids.seller2}')),
    'orders', (SELECT count(*) FROM orders WHERE id IN ('${ids.order}', '${ids.oldOrder}')),
    'downloads', (SELECT count(*) FROM downloads WHERE order_id IN ('${ids.order}', '${ids.oldOrder}')),
    'payouts', (SELECT count(*) FROM payouts WHERE seller_id IN ('${ids.handle1}', '${ids.handle2}')))`));
  const everything = state();
  const expectedBefore = {
    'event oldDelivered': '1 1 1', 'event oldFailed': '1 1 1', 'event oldFailedRecently': '1 1 1',
    'event oldPending': '1 1 1', 'event recent': '1 1 1', 'event oldBothFinished': '1 2 2', 'event oldOnePending': '1 2 2',
    'link oldExpired': 1, 'link recentlyExpired': 1, 'link valid': 1,
    'key rotatedOld': 1, 'key rotatedNew': 1, 'key revokedOld': 1, 'key revokedRecently': 1, 'key chain1': 1,
    'key chain2': 1, 'key chain3': 1, 'key inGrace': 1, 'key namedByGrace': 1,
    'idempotency old': 1, 'idempotency young': 1, 'key inGrace names its replacement': 1,
    subscriptions: 3, orders: 2, downloads: 2, payouts: 7,
  };
  assert.deepEqual(everything, expectedBefore);
  const before = await metrics();

  // --- while another session holds the lock, the drainer prunes nothing ---------------
  lockHolder = await holdLock();
  drainer = await startDrainer();
  await waitFor(() => (drainer.log.match(/retention: pass skipped/g) ?? []).length >= 2,
    { timeout: 10000, message: 'two skipped passes' });
  assert.doesNotMatch(drainer.log, /retention: pruned/);
  assert.deepEqual(state(), expectedBefore, 'nothing pruned while the lock is held elsewhere');
  const skipped = (drainer.log.match(/retention: pass skipped/g) ?? []).length;

  // --- released: the next pass prunes ------------------------------------------------
  lockHolder.kill('SIGTERM');
  const started = Date.now();
  await waitFor(() => /retention: pruned/.test(drainer.log), { timeout: 10000, message: 'a pass after the lock was released' });
  const line = drainer.log.split('\n').find((l) => /retention: pruned/.test(l));
  console.log(`${skipped} passes skipped while the lock was held; then, ${Date.now() - started} ms after it was released:`);
  console.log(`${line.replace(/^.*retention: /, '')}`);

  assert.deepEqual(state(), {
    ...expectedBefore,
    // Old finished events go with their deliveries and attempts; a failed delivery
    // attempted 30 s ago, a pending one (also beside a finished one) and a recent event
    // stay.
    'event oldDelivered': '0 0 0', 'event oldFailed': '0 0 0', 'event oldBothFinished': '0 0 0',
    // A link expired 10 minutes ago goes; one expired 30 s ago and a valid one stay.
    'link oldExpired': 0,
    // Dead keys go, chains of them too; a key revoked 30 s ago and the replacement named
    // by a key in its grace stay.
    'key rotatedOld': 0, 'key revokedOld': 0, 'key chain1': 0, 'key chain2': 0,
    // Idempotency-Key records: 24 hours, whatever MARKET_RETENTION says.
    'idempotency old': 0,
  });
  const gone = await api(link.oldExpired);
  assert.equal(gone.status, 404, 'a pruned link is unknown');
  assert.equal(gone.json.error.code, 'resource_missing');
  assert.equal((await api(link.recentlyExpired)).json?.error?.code, 'link_expired');
  assert.equal((await api(link.valid)).status, 200);
  assert.equal(await auth(key.rotatedOld), 'invalid_api_key', 'a pruned key is unknown');
  assert.equal(await auth(key.rotatedNew), 200);
  assert.equal(await auth(key.chain3), 200);

  // The pass's figures: in its log line, in retention_totals and in /metrics. Other test
  // files' old rows may be pruned too, so at least ours.
  const figure = (name) => Number(line.match(new RegExp(` ${name}=(\\d+)`))[1]);
  const ours = { events: 3, webhook_deliveries: 4, webhook_attempts: 4, download_tokens: 1, api_keys: 4, idempotency_keys: 1 };
  const after = await metrics();
  for (const [table, n] of Object.entries(ours)) {
    // The stack's own drainer prunes Idempotency-Key records too (their 24 h window does not
    // follow its MARKET_RETENTION of 30 days) and may take the first pass after the lock is
    // released: that record is then in its log line, not in ours; /metrics counts both.
    if (table !== 'idempotency_keys')
      assert.ok(figure(table) >= n, `${table}: the log line says ${figure(table)}, at least ${n}`);
    const delta = value(after, 'market_retention_pruned_rows_total', { table }) -
      value(before, 'market_retention_pruned_rows_total', { table });
    assert.ok(delta >= n, `${table}: /metrics counted ${delta} more, at least ${n}`);
  }
  const last = value(after, 'market_retention_last_pass_timestamp_seconds');
  assert.ok(Math.abs(last - Date.now() / 1000) < 30, `the last pass ended ${Date.now() / 1000 - last} s ago`);

  drainer.kill('SIGTERM');
  assert.equal(await drainer.exited, 0, drainer.log);
});
