// The load generator of tests/scale/run, run in the `client` namespace against the front
// nginx. Plain fetch (node's undici, keep-alive connections to nginx). Two modes:
//
//   node load.mjs burst --base URL --key KEY --n 650 --concurrency 16 --path /v1/products?limit=1
//     N requests at once with one key, CONCURRENCY at a time; prints one JSON line:
//     {n, statuses: {"200": 600, "429": 50}, started, ended, ms}
//
//   node load.mjs steady --base URL --keys FILE --targets FILE --rate 40 --concurrency 32
//                        --timeout 10000 --max-seconds 120 --out FILE
//     RATE requests a second (at most CONCURRENCY in flight), the keys taken in turn (one
//     a line in FILE, so that no key nears its rate limit) and the targets in turn (lines
//     of FILE: `STATUS PATH [!ID,ID...]`: the status expected and ids that the body must
//     not contain), each with a client timeout, until SIGTERM or MAX-SECONDS. Writes one
//     JSON line per request to OUT ({t0, t1, path, status, expected, ok, error}) and
//     prints a summary JSON line: {total, ok, failed, statuses, errors, first, last}.
//
// Times are milliseconds since the epoch (Date.now()), the same clock the harness reads.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const [mode, ...rest] = process.argv.slice(2);
const { values: opt } = parseArgs({
  args: rest,
  options: {
    base: { type: 'string' }, key: { type: 'string' }, keys: { type: 'string' },
    targets: { type: 'string' }, path: { type: 'string', default: '/v1/products?limit=1' },
    n: { type: 'string', default: '650' }, concurrency: { type: 'string', default: '16' },
    rate: { type: 'string', default: '40' }, timeout: { type: 'string', default: '10000' },
    'max-seconds': { type: 'string', default: '120' }, out: { type: 'string' },
  },
});
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const lines = (file) => readFileSync(file, 'utf8').split('\n').map((l) => l.trim()).filter(Boolean);

async function once(path, key, { timeout, expected = 200, absent = [] } = {}) {
  const rec = { t0: Date.now(), path, expected };
  try {
    const res = await fetch(opt.base + path, {
      headers: { Authorization: `Bearer ${key}` },
      signal: timeout ? AbortSignal.timeout(timeout) : undefined,
    });
    const text = await res.text();
    rec.status = res.status;
    const leaked = absent.filter((id) => text.includes(`"${id}"`));
    if (leaked.length) rec.error = `body names ${leaked.join(', ')}`;
  } catch (e) {
    rec.status = 0;
    rec.error = e.name === 'TimeoutError' ? `no answer within ${timeout} ms` : String(e.cause?.code ?? e.message);
  }
  rec.t1 = Date.now();
  rec.ok = rec.status === expected && !rec.error;
  return rec;
}

async function burst() {
  const n = Number(opt.n);
  const concurrency = Number(opt.concurrency);
  const statuses = {};
  let next = 0;
  const started = Date.now();
  const worker = async () => {
    while (next < n) {
      next++;
      const r = await once(opt.path, opt.key);
      const k = r.status === 0 ? `error ${r.error}` : String(r.status);
      statuses[k] = (statuses[k] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const ended = Date.now();
  console.log(JSON.stringify({ n, statuses, started, ended, ms: ended - started }));
}

async function steady() {
  const keys = lines(opt.keys);
  const targets = lines(opt.targets).map((l) => {
    const [status, path, absent] = l.split(/\s+/);
    return { expected: Number(status), path, absent: absent?.startsWith('!') ? absent.slice(1).split(',') : [] };
  });
  const rate = Number(opt.rate);
  const concurrency = Number(opt.concurrency);
  const timeout = Number(opt.timeout);
  const deadline = Date.now() + Number(opt['max-seconds']) * 1000;
  let stopping = false;
  process.on('SIGTERM', () => { stopping = true; });
  process.on('SIGINT', () => { stopping = true; });

  const records = [];
  const inflight = new Set();
  let i = 0;
  let skipped = 0; // ticks with CONCURRENCY requests already in flight
  const start = Date.now();
  while (!stopping && Date.now() < deadline) {
    // Paced by the clock, not by answers, so that a stalled host does not slow the load.
    const due = start + (i * 1000) / rate;
    const wait = due - Date.now();
    if (wait > 0) await sleep(wait);
    if (stopping) break;
    if (inflight.size >= concurrency) {
      skipped++;
    } else {
      const t = targets[i % targets.length];
      const p = once(t.path, keys[i % keys.length], { timeout, expected: t.expected, absent: t.absent })
        .then((r) => { records.push(r); inflight.delete(p); });
      inflight.add(p);
    }
    i++;
  }
  await Promise.all(inflight);
  records.sort((a, b) => a.t0 - b.t0);
  writeFileSync(opt.out, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const statuses = {};
  const errors = {};
  for (const r of records) {
    statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    if (!r.ok) errors[r.error ?? `status ${r.status}`] = (errors[r.error ?? `status ${r.status}`] ?? 0) + 1;
  }
  const ok = records.filter((r) => r.ok).length;
  console.log(JSON.stringify({
    total: records.length, ok, failed: records.length - ok, skipped, statuses, errors,
    first: records[0]?.t0 ?? null, last: records.at(-1)?.t1 ?? null,
  }));
}

if (mode === 'burst') await burst();
else if (mode === 'steady') await steady();
else {
  console.error('usage: load.mjs burst|steady [options] (see the header of tests/scale/load.mjs)');
  process.exit(2);
}
