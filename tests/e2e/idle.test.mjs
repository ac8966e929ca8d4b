// Idle sites cost nothing (issue 36, item 2; docs/operations.md, "Idle sites"): a pool
// that has answered no API request for MARKET_IDLE_EXIT seconds, and serves none, stops
// whole. One worker (the pool's leader) logs "pool idle for N s: exiting" and sends its
// multiwatch SIGTERM; multiwatch passes a stop signal on (SIGQUIT, with Debian's
// multiwatch) and every worker ends once it has answered what it holds, closing its
// database connection; multiwatch exits with status 0. Under systemd the socket unit then
// starts the pool at the next connection; under tools/stack the supervisor starts it 1 s
// later. Either way the listening socket stays open, so no request is lost or answered
// 5xx across the stop. An idle drainer holds one database connection: its LISTEN.
//
// This file starts a stack of its own (two workers, MARKET_IDLE_EXIT=2) and watches its
// pool through API_PIDFILE's file (run/api.pid: the running multiwatch) and its log. The
// socket activation itself is systemd's, checked where the units run under systemd.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { api, startStack, uniqueId, waitFor } from './lib/stack.mjs';
import { startReceiver } from './fixtures/webhook_receiver.mjs';

const IDLE_S = 2;
const x = uniqueId('');
const account = `acct_idle_${x}`;
const seller = `idle-${x}`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let s;
let key; // read-only
let rwKey;

before(async () => {
  // A statement timeout long enough for the slow request of the lock test; retention at
  // its default (a pass a minute), so that the drainer's retention connection is closed
  // between passes.
  s = await startStack({
    settings: { MARKET_IDLE_EXIT: String(IDLE_S), MARKET_STATEMENT_TIMEOUT: '30000', MARKET_RETENTION: null },
    workers: 2,
  });
  s.admin(['import', '-'], JSON.stringify({
    mode: 'test',
    accounts: [{ id: account }],
    sellers: [{ id: seller, account, name: 'Idle seller' }],
  }));
  key = s.admin(['key', 'create', '--account', account, '--mode', 'test', '--access', 'read-only']);
  rwKey = s.admin(['key', 'create', '--account', account, '--mode', 'test', '--access', 'read-write']);
});
after(() => s?.down());

const get = (path, k = key) => api(`${s.base}${path}`, { key: k });
const psql = (sql) => execFileSync('psql', ['-X', '-q', '-A', '-t', '-d', s.db, '-c', sql], { encoding: 'utf8' }).trim();
const log = () => readFileSync(`${s.dir}/log/api.log`, 'utf8');
const idleLines = () => log().match(/market-api\[\d+\] info: pool idle for \d+ s: exiting$/gm) ?? [];

/** The running multiwatch's pid, or null while the pool is down. */
function poolPid() {
  try {
    const pid = Number(readFileSync(`${s.dir}/run/api.pid`, 'utf8').trim());
    return pid > 0 && existsSync(`/proc/${pid}`) ? pid : null;
  } catch {
    return null;
  }
}

/** The workers of multiwatch pid. */
function workersOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

const alive = (pid) => existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));

/**
 * A running pool that has just answered a request, and is not stopping: its multiwatch's
 * pid. (One that decided to stop just before the request is seen by its line.)
 */
async function servingPool() {
  for (;;) {
    const lines = idleLines().length;
    assert.equal((await get('/v1/products?limit=1')).status, 200);
    const pid = await waitFor(() => poolPid(), { message: 'a running multiwatch in run/api.pid' });
    if (idleLines().length === lines) return pid;
  }
}

const exits = () => log().match(/supervisor: \S*multiwatch exited with status \d+/g) ?? [];

test('requests keep the pool; idle for MARKET_IDLE_EXIT, it stops and closes its connections', async (t) => {
  const pid = await servingPool();
  const workers = workersOf(pid);
  assert.equal(workers.length, 2, `multiwatch ${pid} runs 2 workers (${workers})`);
  const linesBefore = idleLines().length;
  const exitsBefore = exits().length;
  // A request every 0.7 s, for twice the idle time: the pool stays.
  let last = 0;
  for (const end = Date.now() + 2 * IDLE_S * 1000; Date.now() < end;) {
    assert.equal((await get('/v1/products?limit=1')).status, 200);
    last = Date.now();
    await sleep(700);
  }
  assert.equal(poolPid(), pid, 'requests less than MARKET_IDLE_EXIT apart keep the pool');
  assert.equal(idleLines().length, linesBefore);

  // Then nothing: the pool stops once idle for the whole period, with one line.
  await waitFor(() => !alive(pid), { timeout: (IDLE_S + 8) * 1000, message: `multiwatch ${pid} to exit` });
  const stoppedAfter = Date.now() - last;
  t.diagnostic(`pool stopped ${stoppedAfter} ms after its last request (MARKET_IDLE_EXIT=${IDLE_S})`);
  assert.ok(stoppedAfter >= IDLE_S * 1000 - 100, `not before MARKET_IDLE_EXIT (${stoppedAfter} ms)`);
  const lines = idleLines().slice(linesBefore);
  assert.equal(lines.length, 1, `one line for one stop: ${lines}`);
  assert.match(lines[0], new RegExp(`pool idle for ${IDLE_S} s: exiting$`));
  for (const w of workers) assert.ok(!alive(w), `worker ${w} exited`);
  // Their database sessions are gone (a later pool's are newer than the stop).
  const stoppedAt = psql('SELECT now()');
  await waitFor(() => psql(`SELECT count(*) FROM pg_stat_activity WHERE application_name = 'market-api'
                              AND backend_start < '${stoppedAt}'`) === '0', { message: "the stopped pool's sessions to end" });
  // multiwatch ended with status 0 (what the unit's RestartPreventExitStatus=0 keeps
  // systemd from restarting), as the supervisor says.
  await waitFor(() => exits().length > exitsBefore, { message: "the supervisor's line" });
  assert.deepEqual(exits().slice(exitsBefore).map((l) => l.replace(/.* /, '')), ['0']);
});

test('requests sent as the pool stops are all answered, none 5xx', async (t) => {
  for (let round = 0; round < 3; round++) {
    const pid = await servingPool();
    const linesBefore = idleLines().length;
    // Wait for the stop to begin (its line), then send at once: GETs on nginx's kept
    // connections, POSTs (never sent twice by nginx) on connections of their own, and
    // more while the pool is down and starting again.
    await waitFor(() => idleLines().length > linesBefore, { timeout: (IDLE_S + 8) * 1000, interval: 2, message: 'the idle line' });
    const sent = [];
    for (let i = 0; i < 20; i++) sent.push(get('/v1/products?limit=1'));
    for (let i = 0; i < 5; i++) sent.push(api(`${s.base}/v1/downloads/dl_${x}${i}/link`, { key: rwKey, method: 'POST', body: {} }));
    for (let i = 0; i < 15; i++) {
      await sleep(100);
      sent.push(get('/v1/products?limit=1'));
    }
    const answers = await Promise.all(sent);
    const statuses = answers.map((r) => r.status);
    t.diagnostic(`round ${round}: ${statuses.join(' ')}`);
    for (const [i, r] of answers.entries()) {
      assert.ok(r.status < 500, `request ${i}: ${r.status} ${r.text}`);
      if (i < 20 || i >= 25) assert.equal(r.status, 200, `GET ${i}: ${r.text}`);
    }
    await waitFor(() => !alive(pid), { message: `multiwatch ${pid} to exit` });
    await waitFor(() => poolPid() !== null && poolPid() !== pid, { message: 'the next pool' });
  }
});

test('a request in progress keeps the pool, and a stop lets it finish', async () => {
  const pid = await servingPool();
  // The request waits on a lock the test holds: longer than MARKET_IDLE_EXIT.
  const session = spawn('psql', ['-X', '-q', '-d', s.db], { stdio: ['pipe', 'ignore', 'inherit'] });
  const ended = new Promise((resolve) => session.on('exit', resolve));
  session.stdin.write('BEGIN;\nLOCK TABLE products IN ACCESS EXCLUSIVE MODE;\n');
  try {
    await waitFor(() => psql("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation " +
      "WHERE c.relname = 'products' AND l.mode = 'AccessExclusiveLock' AND l.granted") === '1', { message: 'the lock' });
    let answered = false;
    const slow = get(`/v1/products?category=${x}`).then((r) => {
      answered = true;
      return r;
    });
    await waitFor(() => psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'market-api' " +
      "AND wait_event_type = 'Lock'") === '1', { message: 'the request waits on the lock' });
    const linesBefore = idleLines().length;
    await sleep((2 * IDLE_S + 1) * 1000);
    assert.equal(poolPid(), pid, 'a pool serving a request does not stop, however long it takes');
    assert.equal(idleLines().length, linesBefore);

    // Stopped now (as systemctl stop would, and as an idle pool stops itself), the pool
    // lets the request finish: its worker ends after the answer, not before.
    process.kill(pid, 'SIGTERM');
    await sleep(500);
    assert.ok(!answered, 'the request still waits');
    assert.ok(workersOf(pid).length >= 1, 'its worker waits with it');
    session.stdin.end('COMMIT;\n');
    await ended;
    const r = await slow;
    assert.equal(r.status, 200, r.text);
    await waitFor(() => !alive(pid), { message: `multiwatch ${pid} to exit` });
  } finally {
    if (session.exitCode === null) session.kill();
  }
});

test('/healthz and /metrics are no activity: a polled pool stops all the same', async () => {
  const pid = await servingPool();
  let polls = 0;
  while (alive(pid)) {
    assert.ok(polls < (IDLE_S + 8) * 4, `the pool did not stop within ${polls} polls`);
    const r = await api(`${s.base}${polls % 2 ? '/metrics' : '/healthz'}`);
    if (alive(pid)) assert.equal(r.status, 200, r.text);
    polls++;
    await sleep(250);
  }
  // The counters of /metrics go on across the stop (the metrics file outlives the pool).
  const after = await api(`${s.base}/metrics`);
  assert.equal(after.status, 200);
  assert.match(after.text, /^market_http_requests_total\{route="products_list",status="200"\} [1-9]\d*$/m);
});

test('an idle drainer holds one database connection, and an event still leaves at once', async (t) => {
  const drainer = () => psql("SELECT string_agg(application_name, ',' ORDER BY application_name) FROM pg_stat_activity " +
    "WHERE application_name LIKE 'market-webhookd%'");
  // Between retention passes (a minute apart) only the LISTEN connection is open.
  await waitFor(() => drainer() === 'market-webhookd', { timeout: 15000, message: 'the drainer at one connection' });
  const rx = await startReceiver();
  try {
    const sub = await api(`${s.base}/v1/webhooks`, { key: rwKey, method: 'POST', body: { url: rx.url('/idle'), events: ['payout.sent'] } });
    assert.equal(sub.status, 201, sub.text);
    await waitFor(() => drainer() === 'market-webhookd', { message: 'the drainer still at one connection' });
    const committed = Date.now();
    psql(`INSERT INTO payouts (id, mode, seller_id, amount_minor, currency, status, sent_at)
          VALUES ('po_idle_${x}', 'test', '${seller}', 100, 'USD', 'sent', now())`);
    await rx.waitFor((reqs) => reqs.some((q) => q.path === '/idle'), 'the delivery');
    const ms = rx.requests.find((q) => q.path === '/idle').at - committed;
    t.diagnostic(`delivered ${ms} ms after its commit, woken by NOTIFY on the drainer's one connection`);
    assert.ok(ms < 1000, `an event leaves within the drainer's usual delay (${ms} ms)`);
  } finally {
    await rx.close();
  }
});

test("a pool that stops when idle connects at its workers' first requests, not at its start", async () => {
  // A request starts such a pool, and one worker takes it: the others would only compete
  // with it for the CPU while it connects (app/api/http/worker.c).
  const pid = await servingPool();
  await waitFor(() => !alive(pid), { timeout: (IDLE_S + 8) * 1000, message: `multiwatch ${pid} to exit` });
  const next = await waitFor(() => {
    const p = poolPid();
    return p !== null && p !== pid && workersOf(p).length === 2 ? p : null;
  }, { message: 'the next pool with its 2 workers' });
  const sessions = () => psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'market-api'");
  await waitFor(() => sessions() === '0', { message: "the stopped pool's sessions to end" });
  await sleep(300); // time for a worker that would connect at its start to have done so
  assert.equal(sessions(), '0', `the workers of multiwatch ${next} started without a session`);
  assert.equal((await get('/v1/products?limit=1')).status, 200);
  assert.equal(sessions(), '1', 'the worker that answered connected; the other waits');
});
