// The soak of `make soak` (tests/soak/run starts the stack, seeds it and runs this):
//
//   node tests/soak/soak.mjs --duration 3600 --retention 600 [--samples FILE]
//
// 1. Capacity: a closed-loop burst of the API mix below, 32 requests in flight, for 10 s.
// 2. The soak, for --duration seconds, at half that rate, paced by the clock:
//      the API mix (weights): catalogue pages by category 35, searches 10, product pages
//      10, seller profiles 5, orders lists 15, download link mints with an
//      Idempotency-Key (a quarter of them replays) 15, downloads of a link minted in the
//      last 30 s 10;
//      a webhook subscription created every 10 s (and replayed with its Idempotency-Key);
//      market-admin writing every second, in turn, a payout, an import of two paid orders
//      and two reviews, and a refund of an earlier order: events for four sellers
//      subscribed to a real HTTPS receiver (tests/e2e/fixtures/webhook_receiver.mjs),
//      which verifies every delivery's signature; a key rotated every 10 s (5 s grace).
//    Every sample (every --sample seconds, default duration/60, at least 2 s) reads the
//    RSS of each market-api worker and of market-webhookd (/proc), PostgreSQL's
//    connections by application_name, the rows and bytes of the tables that grow, and the
//    rows the retention rules say must be gone already.
// 3. Once the load stops, the outbox drains, and the verdict: every expectation below with
//    its figure, then "N passed, M failed"; the exit status is 1 when any failed.
//
// Expectations: no error (an unexpected status, a timeout, a market-admin failure, a bad
// signature, a 5xx in nginx's log, a worker or drainer restarted); every delivery made
// during the soak received, none failed; each process's RSS flat (its peak in the last
// quarter at most 2 MiB over its peak in the second); PostgreSQL's connections of the
// pool, the drainer and its retention pass the same at every sample; at no sample a row
// older than its retention rule allows; the tables whose period fits in a third of the
// soak no larger in its last third than 1.25 × in its middle third (rows, and bytes too
// for soaks of 10 minutes or more; a table growing steadily from empty is at 1.5 ×); and
// the retention pass deleted events. The rate achieved is reported with the load
// generator's event-loop lag, not judged: on a shared machine the generator itself may
// be short of CPU.
import http from 'node:http';
import { spawn } from 'node:child_process';
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

import { startReceiver, verifyDelivery } from '../e2e/fixtures/webhook_receiver.mjs';

const { values: opt } = parseArgs({
  options: {
    duration: { type: 'string', default: '3600' }, retention: { type: 'string', default: '600' },
    sample: { type: 'string' }, samples: { type: 'string' },
  },
});
const DURATION = Number(opt.duration);
const RETENTION = Number(opt.retention);
const SAMPLE = Number(opt.sample ?? Math.max(2, Math.round(DURATION / 60)));
const BURST_SECONDS = 10;
const BURST_CONCURRENCY = 32;
const MAX_IN_FLIGHT = 256;
const REQUEST_TIMEOUT_MS = 10000;
const PRODUCE_MS = 1000;
const SUBSCRIBE_MS = 10000;
const ROTATE_MS = 10000;
const KEY_GRACE = 5; // MARKET_KEY_GRACE of the rotations
const LINK_TTL = 60; // expires_in of the minted links
// How late the retention pass may be: its interval (app/retention/prune_pass.c) and room
// for a pass under way and for the sample itself.
const PASS_INTERVAL = Math.min(60, Math.max(1, RETENTION / 60));
const SLACK = PASS_INTERVAL + 10;

const env = process.env;
for (const name of ['BASE_URL', 'MARKET_DB', 'MARKET_ADMIN', 'API_PIDFILE', 'WEBHOOKD_PIDFILE']) {
  if (!env[name]) {
    console.error(`soak: ${name} is not set (run tests/soak/run)`);
    process.exit(2);
  }
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const pick = (list) => list[Math.floor(Math.random() * list.length)];
const say = (s) => console.log(s);

// --- processes ---------------------------------------------------------------------------

/** Runs a command without blocking the load: {code, stdout, stderr}. */
function run(cmd, args, { input, extraEnv } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { env: { ...env, ...extraEnv }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', (e) => resolve({ code: -1, stdout, stderr: String(e) }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

// One psql session for the whole soak: starting a process from node blocks its event
// loop for a while (fork), which would show as the load generator's own latency. A query
// is one line of SQL followed by a marker line; its output is what came before the
// marker. One query at a time.
const session = { child: null, out: '', waiting: null, queue: Promise.resolve() };
function psql(sql) {
  if (session.child === null) {
    session.child = spawn('psql', ['-X', '-q', '-A', '-t', '-d', env.MARKET_DB], { stdio: ['pipe', 'pipe', 'pipe'] });
    session.child.stdout.on('data', (d) => {
      session.out += d;
      const end = session.out.indexOf('__soak_end__\n');
      if (end >= 0 && session.waiting) {
        const text = session.out.slice(0, end);
        session.out = session.out.slice(end + '__soak_end__\n'.length);
        session.waiting(text);
      }
    });
    session.child.stderr.on('data', (d) => error('psql', String(d).trim()));
    session.child.on('exit', () => { session.child = null; });
  }
  const query = session.queue.then(() => new Promise((resolve) => {
    session.waiting = (text) => { session.waiting = null; resolve(text.trim()); };
    session.child.stdin.write(`${sql.replace(/\s*\n\s*/g, ' ')};\n\\echo __soak_end__\n`);
  }));
  session.queue = query.catch(() => {});
  return query;
}

const adminEnv = {
  MARKET_FILES_ROOT: env.FILES_ROOT, MARKET_DOWNLOAD_BASE_URL: env.DOWNLOAD_BASE_URL, MARKET_KEY_GRACE: String(KEY_GRACE),
};
const admin = (args, input) => run(env.MARKET_ADMIN, args, { input, extraEnv: adminEnv });
async function adminOk(args, input) {
  const r = await admin(args, input);
  if (r.code !== 0) throw new Error(`market-admin ${args[0]}: ${r.stderr.trim()}`);
  return r.stdout.trim();
}

function children(pid) {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
const comm = (pid) => { try { return readFileSync(`/proc/${pid}/comm`, 'utf8').trim(); } catch { return ''; } };
function rssKiB(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)/m)[1]);
  } catch {
    return null;
  }
}
const pidfile = (file) => Number(readFileSync(file, 'utf8').trim());
const workerPids = () => children(pidfile(env.API_PIDFILE)).filter((p) => comm(p) === 'market-api').sort((a, b) => a - b);
const drainerPids = () => children(pidfile(env.WEBHOOKD_PIDFILE)).filter((p) => comm(p) === 'market-webhookd');

// --- HTTP --------------------------------------------------------------------------------

// Idle connections are closed well before nginx's keepalive_timeout (65 s), so that a
// request never goes out on a connection nginx is closing at that very moment.
const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT, timeout: 30000 });
function request(method, target, { key, body, headers = {} } = {}) {
  return new Promise((resolve) => {
    const url = new URL(target, env.BASE_URL);
    const h = { ...headers };
    if (key) h.Authorization = `Bearer ${key}`;
    let payload;
    if (body !== undefined) {
      payload = JSON.stringify(body);
      h['Content-Type'] = 'application/json';
      h['Content-Length'] = Buffer.byteLength(payload);
    }
    const t0 = performance.now();
    const req = http.request({
      host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers: h, agent,
      timeout: REQUEST_TIMEOUT_MS,
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - t0 }));
      res.on('error', (e) => resolve({ status: 0, error: e.code ?? e.message, ms: performance.now() - t0 }));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: `no answer in ${REQUEST_TIMEOUT_MS} ms` })));
    req.on('error', (e) => resolve({ status: 0, error: e.code ?? e.message, ms: performance.now() - t0 }));
    req.end(payload);
  });
}

// --- what went wrong ---------------------------------------------------------------------

const errors = new Map(); // what -> count
const errorSamples = [];
function error(what, detail) {
  errors.set(what, (errors.get(what) ?? 0) + 1);
  if (errorSamples.length < 20) errorSamples.push(`${what}: ${String(detail).slice(0, 300)}`);
}
const errorCount = () => [...errors.values()].reduce((a, b) => a + b, 0);

// --- the data the mix uses ---------------------------------------------------------------

const data = {};
async function setup() {
  const q = JSON.parse(await psql(`SELECT json_build_object(
    'categories', (SELECT json_agg(DISTINCT category) FROM products WHERE mode = 'test' AND status = 'published'),
    'products', (SELECT json_agg(id) FROM (SELECT id FROM products WHERE mode = 'test' AND status = 'published' ORDER BY id LIMIT 500) p),
    'sellers', (SELECT json_agg(seller_id) FROM (SELECT DISTINCT seller_id FROM products WHERE mode = 'test' AND status = 'published' ORDER BY 1 LIMIT 40) s),
    'words', (SELECT json_agg(w) FROM (SELECT DISTINCT lower(split_part(title, ' ', 1)) w FROM products WHERE mode = 'test' ORDER BY 1 LIMIT 40) t),
    'downloads', (SELECT json_agg(json_build_object('id', d.id, 'account', o.account_id)) FROM (
       SELECT d.id, d.order_id FROM downloads d JOIN orders o ON o.id = d.order_id
        WHERE o.mode = 'test' AND o.status = 'paid' ORDER BY d.id LIMIT 400) d JOIN orders o ON o.id = d.order_id),
    'event_sellers', (SELECT json_agg(json_build_object('handle', s.id, 'account', s.account_id, 'product', t.product_id, 'tier', t.id))
       FROM (SELECT DISTINCT ON (p.seller_id) p.seller_id, p.id AS product_id FROM products p
              WHERE p.mode = 'test' AND p.status = 'published' ORDER BY p.seller_id, p.id LIMIT 4) p
       JOIN sellers s ON s.id = p.seller_id
       JOIN LATERAL (SELECT id, product_id FROM tiers WHERE product_id = p.product_id ORDER BY id LIMIT 1) t ON true))`));
  for (const k of ['categories', 'products', 'sellers', 'words', 'downloads', 'event_sellers']) {
    if (!q[k]?.length) throw new Error(`the seeded sandbox has no ${k}`);
  }
  Object.assign(data, q);
  // A read-write key per buyer of the downloads, which also reads the catalogue.
  data.buyerKeys = new Map();
  for (const account of [...new Set(q.downloads.map((d) => d.account))].slice(0, 12)) {
    data.buyerKeys.set(account, await adminOk(['key', 'create', '--account', account, '--mode', 'test', '--access', 'read-write']));
  }
  data.downloads = q.downloads.filter((d) => data.buyerKeys.has(d.account));
  data.keys = [...data.buyerKeys.values()];
  data.buyer = data.downloads[0].account;
  // Accounts that create the subscriptions of the mix (16 at most per account and mode).
  const subscribers = Math.ceil((DURATION * 1000) / SUBSCRIBE_MS / 15) + 1;
  const run_ = Date.now().toString(36);
  data.subscribers = Array.from({ length: subscribers }, (_, i) => `acct_soak_${run_}_${i}`);
  await adminOk(['import', '-'], JSON.stringify({ mode: 'test', accounts: data.subscribers.map((id) => ({ id })) }));
  data.subscriberKeys = [];
  for (const account of data.subscribers) {
    data.subscriberKeys.push(await adminOk(['key', 'create', '--account', account, '--mode', 'test', '--access', 'read-write']));
  }
  data.rotating = await adminOk(['key', 'create', '--account', data.buyer, '--mode', 'test', '--access', 'read-only']);
}

// --- the webhook receiver ------------------------------------------------------------------

let rx;
const received = new Set(); // "path webhook-id"
let receivedTotal = 0;
async function startHooks() {
  rx = await startReceiver();
  rx.route('/sub', () => 204);
  data.hooks = [];
  for (const [i, s] of data.event_sellers.entries()) {
    const key = await adminOk(['key', 'create', '--account', s.account, '--mode', 'test', '--access', 'read-write']);
    const path = `/hook/${i}`;
    const r = await request('POST', '/v1/webhooks', { key, body: { url: rx.url(path), description: 'soak' } });
    if (r.status !== 201) throw new Error(`subscribing ${s.handle}: ${r.status} ${r.text}`);
    const { secret } = JSON.parse(r.text);
    rx.route(path, (rec) => {
      receivedTotal++;
      received.add(`${path} ${rec.headers['webhook-id']}`);
      try {
        verifyDelivery(secret, rec);
      } catch (e) {
        error('webhook signature', e.message);
      }
      return 204;
    });
    data.hooks.push(path);
  }
  // The receiver keeps every request; the soak only needs the counts above.
  setInterval(() => { rx.requests.length = 0; }, 5000).unref();
}

// --- the API mix -----------------------------------------------------------------------------

const recentLinks = []; // {url, at}
const recentMints = []; // {download, key, idem}: replayed with the same request
let idemSeq = 0;
const mix = [
  [35, () => ({ name: 'products_category', path: `/v1/products?category=${pick(data.categories)}&limit=20${Math.random() < 0.3 ? '&sort=price_asc' : ''}`, expect: 200 })],
  [10, () => ({ name: 'products_search', path: `/v1/products?q=${encodeURIComponent(pick(data.words))}&limit=10`, expect: 200 })],
  [10, () => ({ name: 'product_get', path: `/v1/products/${pick(data.products)}`, expect: 200 })],
  [5, () => ({ name: 'seller_get', path: `/v1/sellers/${pick(data.sellers)}?limit=5`, expect: 200 })],
  [15, () => ({ name: 'orders_list', path: '/v1/orders?limit=5', key: data.buyerKeys.get(pick(data.downloads).account), expect: 200 })],
  [15, () => {
    let m;
    if (recentMints.length > 0 && Math.random() < 0.25) {
      m = pick(recentMints);
    } else {
      const d = pick(data.downloads);
      m = { download: d.id, key: data.buyerKeys.get(d.account), idem: `soak-${process.pid}-${++idemSeq}` };
      recentMints.push(m);
      if (recentMints.length > 200) recentMints.shift();
    }
    return {
      name: 'download_link', method: 'POST', path: `/v1/downloads/${m.download}/link`, key: m.key,
      body: { expires_in: LINK_TTL }, headers: { 'Idempotency-Key': m.idem }, expect: 201,
      onOk: (r) => recentLinks.push({ url: JSON.parse(r.text).url, at: Date.now() }),
    };
  }],
  [10, () => {
    while (recentLinks.length > 0 && Date.now() - recentLinks[0].at > 30000) recentLinks.shift();
    if (recentLinks.length === 0) return { name: 'products_category', path: `/v1/products?category=${pick(data.categories)}&limit=20`, expect: 200 };
    return { name: 'file', path: pick(recentLinks).url, expect: 200 };
  }],
];
const totalWeight = mix.reduce((a, [w]) => a + w, 0);
function nextRequest() {
  let r = Math.random() * totalWeight;
  for (const [w, make] of mix) {
    if ((r -= w) < 0) return make();
  }
  return mix[0][1]();
}

const stats = { sent: 0, done: 0, byName: new Map(), latencies: [] };
async function fire() {
  const q = nextRequest();
  const key = q.key ?? pick(data.keys);
  stats.sent++;
  const r = await request(q.method ?? 'GET', q.path, { key: q.name === 'file' ? undefined : key, body: q.body, headers: q.headers });
  stats.done++;
  stats.latencies.push(r.ms);
  const n = stats.byName.get(q.name) ?? { n: 0, ms: 0 };
  n.n++;
  n.ms += r.ms;
  stats.byName.set(q.name, n);
  if (r.status !== q.expect) error(`${q.name} ${r.status || r.error}`, `${q.path.slice(0, 80)}: ${r.text ?? r.error}`);
  else q.onOk?.(r);
}

const percentile = (xs, p) => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function burst() {
  const until = performance.now() + BURST_SECONDS * 1000;
  const before = stats.done;
  stats.latencies = [];
  const t0 = performance.now();
  await Promise.all(Array.from({ length: BURST_CONCURRENCY }, async () => {
    while (performance.now() < until) await fire();
  }));
  const seconds = (performance.now() - t0) / 1000;
  return { rate: (stats.done - before) / seconds, p50: percentile(stats.latencies, 50), p99: percentile(stats.latencies, 99) };
}

// --- the soak's writers --------------------------------------------------------------------

const produced = { payout: 0, import: 0, refund: 0, rotate: 0, subscribe: 0 };
let adminBusy = 0;
let producerSkipped = 0;
const soakOrders = [];
let seq = 0;
async function produce() {
  if (adminBusy >= 2) {
    producerSkipped++;
    return;
  }
  adminBusy++;
  const n = ++seq;
  const s = data.event_sellers[n % data.event_sellers.length];
  const t = data.event_sellers[(n + 1) % data.event_sellers.length];
  const tag = `${process.pid}_${n}`;
  let kind = ['payout', 'import', 'refund'][n % 3];
  if (kind === 'refund' && soakOrders.length === 0) kind = 'import';
  let r;
  if (kind === 'payout') {
    r = await admin(['payout', '--seller', s.handle, '--amount', '1.25', '--currency', 'USD', '--mode', 'test']);
  } else if (kind === 'import') {
    // Two paid orders and two reviews: four events, for two sellers.
    const orders = [s, t].map((x, i) => ({
      id: `ord_soak_${tag}_${i}`, account: data.buyer, status: 'paid', items: [{ product: x.product, tier: x.tier }],
    }));
    r = await admin(['import', '-'], JSON.stringify({
      mode: 'test', orders,
      reviews: [s, t].map((x, i) => ({ id: `rev_soak_${tag}_${i}`, product: x.product, account: data.buyer, rating: 1 + ((n + i) % 5), body: 'soak' })),
    }));
    if (r.code === 0) soakOrders.push(...orders.map((o) => o.id));
  } else {
    r = await admin(['refund', soakOrders.shift()]);
  }
  adminBusy--;
  if (r.code !== 0) error(`market-admin ${kind}`, r.stderr.trim());
  else produced[kind]++;
}

async function rotate() {
  const r = await admin(['key', 'rotate', data.rotating]);
  if (r.code !== 0) return error('market-admin key rotate', r.stderr.trim());
  data.rotating = r.stdout.trim();
  produced.rotate++;
}

let subSeq = 0;
async function subscribe() {
  const i = subSeq++;
  const key = data.subscriberKeys[Math.floor(i / 15)];
  const req = { key, body: { url: rx.url('/sub'), events: ['review.created'], description: `soak ${i}` }, headers: { 'Idempotency-Key': `soak-sub-${process.pid}-${i}` } };
  const first = await request('POST', '/v1/webhooks', req);
  const replay = await request('POST', '/v1/webhooks', req);
  if (first.status !== 201) return error(`webhooks_create ${first.status || first.error}`, first.text ?? first.error);
  if (replay.status !== 201 || replay.text !== first.text) return error('webhooks_create replay', `${replay.status} ${replay.text ?? replay.error}`);
  produced.subscribe++;
}

// --- samples -------------------------------------------------------------------------------

const TABLES = ['events', 'webhook_deliveries', 'webhook_attempts', 'download_tokens', 'api_keys', 'idempotency_keys', 'rate_counters', 'webhook_subscriptions', 'orders'];
// The rows the retention rules say must be gone by now (docs/contract.md section 12).
const cutoff = `now() - interval '${RETENTION + SLACK} seconds'`;
const STATS_SQL = `SELECT json_build_object(
  'conns', (SELECT coalesce(json_object_agg(app, n), '{}') FROM (
     SELECT coalesce(nullif(application_name, ''), '-') AS app, count(*) AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
      GROUP BY 1) c),
  'rows', json_build_object(${TABLES.map((t) => `'${t}', (SELECT count(*) FROM ${t})`).join(', ')}),
  'bytes', json_build_object(${TABLES.map((t) => `'${t}', pg_total_relation_size('${t}')`).join(', ')}),
  'overdue', json_build_object(
    'events', (SELECT count(*) FROM events e WHERE e.created_at < ${cutoff} AND NOT EXISTS (
       SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND (d.status = 'pending'
          OR EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.attempted_at >= ${cutoff})))),
    'download_tokens', (SELECT count(*) FROM download_tokens WHERE expires_at < ${cutoff}),
    'api_keys', (SELECT count(*) FROM api_keys k WHERE least(k.expires_at, k.revoked_at) < ${cutoff}
       AND NOT EXISTS (SELECT 1 FROM api_keys o WHERE o.replaced_by = k.id
                        AND coalesce(least(o.expires_at, o.revoked_at) >= ${cutoff}, true))),
    'idempotency_keys', (SELECT count(*) FROM idempotency_keys WHERE created_at < now() - interval '24 hours ${SLACK} seconds'),
    'rate_counters', (SELECT count(*) FROM rate_counters WHERE window_start < floor(extract(epoch FROM now()) / 60) - 3)),
  'deliveries', (SELECT json_build_object('pending', count(*) FILTER (WHERE status = 'pending'),
     'delivered', count(*) FILTER (WHERE status = 'delivered'), 'failed', count(*) FILTER (WHERE status = 'failed'))
     FROM webhook_deliveries),
  'pruned', (SELECT json_object_agg(relation, pruned) FROM retention_totals))`;

// The load generator's own delay: when it is starved of CPU, latencies are its own.
const lag = monitorEventLoopDelay({ resolution: 10 });
const lagAll = monitorEventLoopDelay({ resolution: 10 });
lag.enable();
lagAll.enable();

const samples = [];
let soakStart = 0;
let lastSample = { done: 0, at: 0 };
async function sample() {
  const at = performance.now();
  const workers = workerPids();
  const drainers = drainerPids();
  const db = JSON.parse(await psql(STATS_SQL));
  const s = {
    t: Math.round((at - soakStart) / 1000),
    rate: (stats.done - lastSample.done) / ((at - lastSample.at) / 1000),
    p99: percentile(stats.latencies, 99),
    lag: lag.percentile(99) / 1e6,
    errors: errorCount(),
    workers: workers.map((pid) => ({ pid, rss: rssKiB(pid) })),
    drainers: drainers.map((pid) => ({ pid, rss: rssKiB(pid) })),
    ...db,
  };
  stats.latencies = [];
  lag.reset();
  lastSample = { done: stats.done, at };
  samples.push(s);
  printSample(s);
  return s;
}

const MiB = (b) => (b / 1048576).toFixed(1);
function printSample(s) {
  if (samples.length === 1) {
    say('     t  req/s  p99ms lagms err |   RSS KiB: workers  drainer | conns api/wd/ret/other | rows: events deliv attempts tokens keys idem subs | MiB: outbox tokens idem | pend deliv');
  }
  const c = s.conns;
  const other = Object.entries(c).filter(([k]) => !['market-api', 'market-webhookd', 'market-webhookd-retention'].includes(k)).reduce((a, [, n]) => a + n, 0);
  const r = s.rows;
  const b = s.bytes;
  say([
    String(s.t).padStart(6), s.rate.toFixed(0).padStart(6), s.p99.toFixed(1).padStart(6), s.lag.toFixed(0).padStart(5), String(s.errors).padStart(3), '|',
    s.workers.map((w) => String(w.rss)).join(' ').padStart(17), String(s.drainers[0]?.rss ?? '-').padStart(8), '|',
    `${c['market-api'] ?? 0}/${c['market-webhookd'] ?? 0}/${c['market-webhookd-retention'] ?? 0}/${other}`.padStart(22), '|',
    [r.events, r.webhook_deliveries, r.webhook_attempts, r.download_tokens, r.api_keys, r.idempotency_keys, r.webhook_subscriptions]
      .map((n, i) => String(n).padStart([12, 6, 9, 7, 5, 6, 5][i])).join(''), '|',
    MiB(b.events + b.webhook_deliveries + b.webhook_attempts).padStart(11), MiB(b.download_tokens).padStart(7), MiB(b.idempotency_keys).padStart(5), '|',
    String(s.deliveries.pending).padStart(5), String(s.deliveries.delivered).padStart(6),
  ].join(' '));
}

// --- the verdict ---------------------------------------------------------------------------

const checks = [];
function expect(name, ok, figure, expectation) {
  checks.push({ name, ok, figure, expectation });
}

/** nginx's own view of the requests (its access log: "... STATUS BYTES REQUEST_TIME rid=..."),
 * read line by line into a histogram of milliseconds: an hour's log is millions of lines. */
async function nginxFigures() {
  if (!env.STACK_DIR) return null;
  const counts = new Array(10002).fill(0); // [ms], the last: slower than 10 s
  let n = 0;
  let status5xx = 0;
  let max = 0;
  try {
    const lines = createInterface({ input: createReadStream(`${env.STACK_DIR}/log/nginx-access.log`), crlfDelay: Infinity });
    for await (const line of lines) {
      const m = line.match(/" (\d{3}) \d+ ([\d.]+) rid=/);
      if (!m) continue;
      const ms = Number(m[2]) * 1000;
      counts[Math.min(10001, Math.round(ms))]++;
      n++;
      if (ms > max) max = ms;
      if (m[1].startsWith('5')) status5xx++;
    }
  } catch {
    return null;
  }
  const at = (p) => {
    let seen = 0;
    for (let ms = 0; ms < counts.length; ms++) {
      seen += counts[ms];
      if (seen > (p / 100) * n) return ms;
    }
    return counts.length - 1;
  };
  return { n, p50: at(50), p99: at(99), max: Math.round(max), status5xx };
}

function verdict({ capacity, target, soakSeconds, deliveriesMade, finalSample, serverSide }) {
  const inSoak = samples.filter((s) => s.t >= 0 && s.t <= soakSeconds + SAMPLE);
  const part = (from, to) => inSoak.filter((s) => s.t >= from * soakSeconds && s.t <= to * soakSeconds);

  expect('no errors', errorCount() === 0, errorCount() === 0 ? '0' : [...errors].map(([k, n]) => `${k} ×${n}`).join(', '), '0');
  if (serverSide) expect('nginx answered no 5xx', serverSide.status5xx === 0, String(serverSide.status5xx), '0');
  expect('every delivery received', received.size === deliveriesMade && finalSample.deliveries.failed === 0 && finalSample.deliveries.pending === 0,
    `${received.size} received of ${deliveriesMade} made (${receivedTotal - received.size} repeats), ${finalSample.deliveries.failed} failed, ${finalSample.deliveries.pending} pending`,
    'all, 0 failed, 0 pending');

  // Memory: each process's peak in the last quarter against its peak in the second.
  const peak = (list, pid, kind) => Math.max(...list.map((s) => s[kind].find((p) => p.pid === pid)?.rss ?? 0));
  const first = inSoak[0];
  const workersSame = inSoak.every((s) => s.workers.map((w) => w.pid).join() === first.workers.map((w) => w.pid).join());
  const drainerSame = inSoak.every((s) => s.drainers.map((w) => w.pid).join() === first.drainers.map((w) => w.pid).join());
  expect('no worker or drainer restarted', workersSame && drainerSame,
    `workers ${first.workers.map((w) => w.pid).join(',')}, drainer ${first.drainers.map((w) => w.pid).join(',')}${workersSame && drainerSame ? ' throughout' : ': changed'}`, 'the same pids');
  for (const [kind, label] of [['workers', 'market-api'], ['drainers', 'market-webhookd']]) {
    for (const { pid } of first[kind]) {
      const q2 = peak(part(0.25, 0.5), pid, kind);
      const q4 = peak(part(0.75, 1), pid, kind);
      expect(`RSS flat: ${label} ${pid}`, q4 - q2 <= 2048, `${q2} → ${q4} KiB (${q4 - q2 >= 0 ? '+' : ''}${q4 - q2})`, '≤ +2048 KiB');
    }
  }

  // Connections of the long-lived sessions: the same at every sample.
  for (const app of ['market-api', 'market-webhookd', 'market-webhookd-retention']) {
    const counts = inSoak.map((s) => s.conns[app] ?? 0);
    const want = app === 'market-api' ? first.workers.length : 1;
    expect(`connections flat: ${app}`, counts.every((n) => n === want), `${Math.min(...counts)}..${Math.max(...counts)}`, `${want} at every sample`);
  }
  const others = inSoak.map((s) => Object.entries(s.conns).filter(([k]) => !k.startsWith('market-api') && !k.startsWith('market-webhookd')).reduce((a, [, n]) => a + n, 0));
  say(`other sessions (market-admin commands, none kept open): ${Math.min(...others)}..${Math.max(...others)}`);

  // Retention: nothing overdue, ever (once the first period is over), and a plateau.
  const due = inSoak.filter((s) => s.t > RETENTION + SLACK);
  for (const table of ['events', 'download_tokens', 'api_keys', 'idempotency_keys', 'rate_counters']) {
    const worst = Math.max(0, ...due.map((s) => s.overdue[table]));
    expect(`nothing overdue: ${table}`, worst === 0, `${worst} at worst over ${due.length} samples`, '0');
  }
  const periods = {
    events: RETENTION, webhook_deliveries: RETENTION, webhook_attempts: RETENTION,
    download_tokens: LINK_TTL + RETENTION, api_keys: KEY_GRACE + RETENTION, rate_counters: 180, idempotency_keys: 86400,
  };
  const middle = part(1 / 3, 2 / 3);
  const last = part(2 / 3, 1);
  for (const [table, period] of Object.entries(periods)) {
    if (period > soakSeconds / 3) {
      say(`${table}: kept ${period} s, more than a third of the soak: it grows for now (${first.rows[table]} → ${finalSample.rows[table]} rows), its overdue rows are checked above`);
      continue;
    }
    const rows = (list) => Math.max(...list.map((s) => s.rows[table]));
    expect(`rows bounded: ${table}`, rows(last) <= 1.25 * rows(middle) + 10, `${rows(middle)} → ${rows(last)} rows (peaks of the middle and last thirds)`, '≤ 1.25 × + 10');
    if (soakSeconds >= 600) {
      const bytes = (list) => Math.max(...list.map((s) => s.bytes[table]));
      expect(`bytes bounded: ${table}`, bytes(last) <= 1.25 * bytes(middle) + 1048576, `${MiB(bytes(middle))} → ${MiB(bytes(last))} MiB`, '≤ 1.25 × + 1 MiB');
    }
  }
  const prunedEvents = (finalSample.pruned.events ?? 0) - (first.pruned.events ?? 0);
  expect('the retention pass pruned events', prunedEvents > 0, `${prunedEvents} events, ${(finalSample.pruned.download_tokens ?? 0) - (first.pruned.download_tokens ?? 0)} links, ${(finalSample.pruned.api_keys ?? 0) - (first.pruned.api_keys ?? 0)} keys`, '> 0 events');

  say('');
  say(`capacity ${capacity.rate.toFixed(0)} req/s (p50 ${capacity.p50.toFixed(1)} ms, p99 ${capacity.p99.toFixed(1)} ms); soak at ${target.toFixed(0)} req/s for ${soakSeconds} s`);
  // Not an expectation: on a shared machine the load generator itself may be starved of
  // CPU (the lag column), which sends fewer requests, not different answers.
  const achieved = stats.soakDone / soakSeconds;
  say(`rate achieved: ${achieved.toFixed(0)} req/s (${((100 * achieved) / target).toFixed(0)} % of the target), ${stats.skipped} of ${stats.skipped + stats.soakSent} requests not sent (${MAX_IN_FLIGHT} in flight already); load generator's event-loop lag p99 ${(lagAll.percentile(99) / 1e6).toFixed(0)} ms`);
  say(`requests: ${[...stats.byName].map(([k, v]) => `${k} ${v.n} (${(v.ms / v.n).toFixed(1)} ms)`).join(', ')}`);
  if (serverSide) {
    say(`server side (nginx $request_time of ${serverSide.n} requests): p50 ${serverSide.p50} ms, p99 ${serverSide.p99} ms, max ${serverSide.max} ms; ${serverSide.status5xx} answered 5xx`);
  }
  say(`writes: ${Object.entries(produced).map(([k, n]) => `${k} ${n}`).join(', ')}; market-admin ticks skipped (two still running) ${producerSkipped}`);
  say(`retention ${RETENTION} s (a pass every ${PASS_INTERVAL} s), checked with ${SLACK} s of slack; samples every ${SAMPLE} s`);
  for (const e of errorSamples) say(`error: ${e}`);
  say('');
  for (const c of checks) say(`${c.ok ? 'PASS' : 'FAIL'}  ${c.name}: ${c.figure} (expected ${c.expectation})`);
  const failed = checks.filter((c) => !c.ok).length;
  say(`${checks.length - failed} passed, ${failed} failed`);
  return failed === 0;
}

// --- main ----------------------------------------------------------------------------------

let stopping = false;
process.on('SIGINT', () => { stopping = true; });
process.on('SIGTERM', () => { stopping = true; });

await setup();
await startHooks();
say(`soak: ${data.categories.length} categories, ${data.products.length} products, ${data.downloads.length} downloads of ${data.buyerKeys.size} buyers, ${data.event_sellers.length} sellers subscribed to ${rx.url('/hook/N')}`);

const capacity = await burst();
const target = capacity.rate / 2;
say(`soak: capacity ${capacity.rate.toFixed(0)} req/s (closed loop, ${BURST_CONCURRENCY} in flight, ${BURST_SECONDS} s; p99 ${capacity.p99.toFixed(1)} ms); soaking at ${target.toFixed(0)} req/s for ${DURATION} s`);
const errorsBeforeSoak = errorCount();

soakStart = performance.now();
lastSample = { done: stats.done, at: soakStart };
await sample();
const doneBefore = stats.done;
stats.skipped = 0;
stats.soakSent = 0;
const inflight = new Set();
const timers = [
  setInterval(() => { if (!stopping) produce(); }, PRODUCE_MS),
  setInterval(() => { if (!stopping) rotate(); }, ROTATE_MS),
  setInterval(() => { if (!stopping) subscribe(); }, SUBSCRIBE_MS),
];
let nextSampleAt = soakStart + SAMPLE * 1000;
let sampling = null;
const end = soakStart + DURATION * 1000;
let ticks = 0;
while (!stopping && performance.now() < end) {
  // Paced by the clock, not by answers: the requests due by now, at most MAX_IN_FLIGHT.
  const due = Math.floor(((performance.now() - soakStart) / 1000) * target);
  while (ticks < due) {
    ticks++;
    if (inflight.size >= MAX_IN_FLIGHT) {
      stats.skipped++;
      continue;
    }
    stats.soakSent++;
    const p = fire().finally(() => inflight.delete(p));
    inflight.add(p);
  }
  if (performance.now() >= nextSampleAt && sampling === null) {
    nextSampleAt += SAMPLE * 1000;
    sampling = sample().catch((e) => error('sample', e.message)).finally(() => { sampling = null; });
  }
  await sleep(5);
}
const soakSeconds = Math.round((performance.now() - soakStart) / 1000);
for (const t of timers) clearInterval(t);
await Promise.all(inflight);
await sampling;
stats.soakDone = stats.done - doneBefore;

// The outbox drains (the last writes' deliveries), then the last sample.
const drainStart = Date.now();
while (Date.now() - drainStart < 60000) {
  while (adminBusy > 0) await sleep(100);
  const pending = Number(await psql("SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'"));
  if (pending === 0) break;
  await sleep(500);
}
await sleep(1000); // a repeat of the last delivery would arrive by now
const finalSample = await sample();
const deliveriesMade = finalSample.rows.webhook_deliveries + ((finalSample.pruned.webhook_deliveries ?? 0) - (samples[0].pruned.webhook_deliveries ?? 0));
if (errorsBeforeSoak > 0) say(`soak: ${errorsBeforeSoak} error(s) already during the capacity burst`);
if (opt.samples) writeFileSync(opt.samples, JSON.stringify({ capacity, target, samples }, null, 1));
const passed = verdict({ capacity, target, soakSeconds, deliveriesMade, finalSample, serverSide: await nginxFigures() });
agent.destroy();
session.child?.stdin.end();
await rx.close();
process.exit(passed ? 0 : 1);
