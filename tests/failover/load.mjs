// The client side of tests/failover/run, in the `client` namespace, against the front.
//
//   node load.mjs steady --base URL --keys FILE --targets FILE --rate 30 --concurrency 64
//                        --timeout 20000 --max-seconds 300 --out FILE
//     RATE requests a second (paced by the clock, at most CONCURRENCY in flight), keys and
//     targets taken in turn, until SIGTERM or MAX-SECONDS. A target line is `GET PATH` (a
//     catalogue read or an orders list) or `MINT DOWNLOAD_ID` (POST
//     /v1/downloads/ID/link with a fresh Idempotency-Key and an expires_in body). Writes
//     one JSON line per request to OUT: {t0, t1, kind, path, status, retry_after, error,
//     key, idem, body} (body for mints only) and prints a summary JSON line.
//
//   node load.mjs verify --base URL --keys FILE --records FILE --before MS
//     For every mint answered 201 (those answered before BEFORE counted apart): the same
//     POST again with its Idempotency-Key must replay the same status and body, and its
//     link must download (200 with the file's bytes, through the files location). Prints
//     one JSON line of counts, with the first few mismatches.
//
// Times are milliseconds since the epoch (Date.now()), the clock the harness reads.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const [mode, ...rest] = process.argv.slice(2);
const { values: opt } = parseArgs({
  args: rest,
  options: {
    base: { type: 'string' }, keys: { type: 'string' }, targets: { type: 'string' },
    rate: { type: 'string', default: '30' }, concurrency: { type: 'string', default: '64' },
    timeout: { type: 'string', default: '20000' }, 'max-seconds': { type: 'string', default: '300' },
    out: { type: 'string' }, records: { type: 'string' }, before: { type: 'string' },
  },
});
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const lines = (file) => readFileSync(file, 'utf8').split('\n').map((l) => l.trim()).filter(Boolean);
const MINT_BODY = JSON.stringify({ expires_in: 3600 });

function mintRequest(id, key, idem) {
  return {
    path: `/v1/downloads/${id}/link`,
    init: {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': idem },
      body: MINT_BODY,
    },
  };
}

async function once(rec, path, init, timeout) {
  rec.t0 = Date.now();
  rec.path = path;
  try {
    const res = await fetch(opt.base + path, { ...init, signal: AbortSignal.timeout(timeout) });
    const text = await res.text();
    rec.status = res.status;
    rec.retry_after = res.headers.get('retry-after');
    if (rec.kind === 'mint') rec.body = text;
  } catch (e) {
    rec.status = 0;
    rec.error = e.name === 'TimeoutError' ? `no answer within ${timeout} ms` : String(e.cause?.code ?? e.message);
  }
  rec.t1 = Date.now();
  return rec;
}

async function steady() {
  const keys = lines(opt.keys);
  const targets = lines(opt.targets).map((l) => l.split(/\s+/));
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
  let skipped = 0;
  const start = Date.now();
  while (!stopping && Date.now() < deadline) {
    const wait = start + (i * 1000) / rate - Date.now();
    if (wait > 0) await sleep(wait);
    if (stopping) break;
    if (inflight.size >= concurrency) {
      skipped++;
    } else {
      const [verb, arg] = targets[i % targets.length];
      const keyIndex = i % keys.length;
      const rec = { kind: verb === 'MINT' ? 'mint' : 'get', key: keyIndex };
      let req;
      if (verb === 'MINT') {
        rec.idem = `fo-${start}-${i}`;
        req = mintRequest(arg, keys[keyIndex], rec.idem);
      } else {
        req = { path: arg, init: { headers: { Authorization: `Bearer ${keys[keyIndex]}` } } };
      }
      const p = once(rec, req.path, req.init, timeout).then((r) => { records.push(r); inflight.delete(p); });
      inflight.add(p);
    }
    i++;
  }
  await Promise.all(inflight);
  records.sort((a, b) => a.t0 - b.t0);
  writeFileSync(opt.out, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const statuses = {};
  for (const r of records) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  console.log(JSON.stringify({ total: records.length, skipped, statuses }));
}

async function verify() {
  const keys = lines(opt.keys);
  const before = Number(opt.before);
  const mints = lines(opt.records).map((l) => JSON.parse(l)).filter((r) => r.kind === 'mint' && r.status === 201);
  const out = {
    minted: mints.length, minted_before: 0, replay_equal: 0, replay_equal_before: 0,
    download_ok: 0, download_ok_before: 0, mismatches: [],
  };
  const wrong = (what) => { if (out.mismatches.length < 5) out.mismatches.push(what); };
  for (const m of mints) {
    const early = m.t1 < before;
    if (early) out.minted_before++;
    const id = m.path.split('/')[3];
    const req = mintRequest(id, keys[m.key], m.idem);
    const again = await once({ kind: 'mint' }, req.path, req.init, 10000);
    if (again.status === 201 && again.body === m.body) {
      out.replay_equal++;
      if (early) out.replay_equal_before++;
    } else {
      wrong({ idem: m.idem, first: m.body, replay: `${again.status} ${again.body ?? again.error}` });
    }
    const { url } = JSON.parse(m.body);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(10000) });
      const bytes = Buffer.from(await res.arrayBuffer());
      if (res.status === 200 && bytes.length > 0) {
        out.download_ok++;
        if (early) out.download_ok_before++;
      } else {
        wrong({ url, status: res.status, bytes: bytes.length });
      }
    } catch (e) {
      wrong({ url, error: String(e.cause?.code ?? e.message) });
    }
  }
  console.log(JSON.stringify(out));
}

if (mode === 'steady') await steady();
else if (mode === 'verify') await verify();
else {
  console.error('usage: load.mjs steady|verify [options] (see the header of tests/failover/load.mjs)');
  process.exit(2);
}
