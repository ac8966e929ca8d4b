// clients/conformance/run.mjs: drives each client through every case of server.mjs and
// checks the outcome against the retry and timeout policy of docs/clients.md, then prints
// the table case x language. Exits 1 on any failure. Called by run.sh (which builds the
// Go driver and passes it as GO_DRIVER).
//
//   node run.mjs [--lang js,python,php,go] [--case get_502,...] [--verbose]
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { CASES, SLOW_MS, startServer } from './server.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const D = join(HERE, 'drivers');
const DRIVERS = {
  js: [process.execPath, join(D, 'js.mjs')],
  python: [process.env.PYTHON ?? 'python3', join(D, 'python.py')],
  php: [process.env.PHP ?? 'php', join(D, 'php.php')],
  go: [process.env.GO_DRIVER ?? join(D, 'go', 'conformance-driver')],
};
const TIMEOUT_MS = 500; // what every driver configures
const MAX_RETRIES = 2;

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1].split(',') : null;
};
const langs = opt('--lang') ?? Object.keys(DRIVERS);
const cases = opt('--case') ?? Object.keys(CASES);
const verbose = args.includes('--verbose');

/** What the policy expects of each case. */
const POST_SAME_KEY = { sameKey: true };
const EXPECT = {
  get_ok: { attempts: 1, ok: true },
  get_query: { attempts: 1, ok: true },
  get_429_retry_after: { attempts: 2, ok: true, gaps: [[900, 2500]] },
  get_429_long_retry_after: { attempts: 1, error: { kind: 'api', status: 429 } },
  get_502: { attempts: 3, error: { kind: 'api', status: 502 }, backoff: true },
  get_503: { attempts: 3, error: { kind: 'api', status: 503 }, backoff: true },
  get_504: { attempts: 3, error: { kind: 'api', status: 504 }, backoff: true },
  get_503_then_ok: { attempts: 2, ok: true, backoff: true },
  get_500: { attempts: 1, error: { kind: 'api', status: 500 } },
  get_reset: { attempts: 2, ok: true, backoff: true },
  get_cut_body: { attempts: 2, ok: true, backoff: true },
  get_timeout: { attempts: 3, error: { kind: 'connection', status: null, timeout: true }, timedOut: [0, 1, 2] },
  get_timeout_then_ok: { attempts: 2, ok: true, timedOut: [0] },
  post_502: { attempts: 2, ok: true, ...POST_SAME_KEY },
  post_504: { attempts: 2, ok: true, ...POST_SAME_KEY },
  post_reset: { attempts: 2, ok: true, ...POST_SAME_KEY },
  post_timeout: { attempts: 2, ok: true, timedOut: [0], ...POST_SAME_KEY },
  post_400: { attempts: 1, error: { kind: 'api', status: 400 }, ...POST_SAME_KEY },
  delete_503: { attempts: 2, ok: true, ...POST_SAME_KEY },
};

function run(cmd, argv) {
  return new Promise((resolve) => {
    const p = spawn(cmd[0], [...cmd.slice(1), ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('error', (e) => resolve({ code: -1, out, err: err + String(e) }));
    p.on('close', (code) => resolve({ code, out, err }));
  });
}

/** The problems of one case's outcome (an empty list: pass). */
function check(name, exp, res, seen, key) {
  const bad = [];
  const must = (cond, what) => { if (!cond) bad.push(what); };
  if (res.out.includes(key) || res.err.includes(key) || res.out.includes(key.slice(8))) bad.push('the API key appears in the driver output (hook)');
  if (/bearer/i.test(res.out)) bad.push('an Authorization value appears in the hook records');
  let r;
  try {
    r = JSON.parse(res.out.trim().split('\n').pop());
  } catch {
    return [`no JSON line from the driver (exit ${res.code}): ${res.err.trim().split('\n').slice(-3).join(' | ')}`];
  }
  const hook = r.hook ?? [];
  must(seen.length === exp.attempts, `the server saw ${seen.length} attempts, the policy wants ${exp.attempts}`);
  must(hook.length === seen.length, `the hook saw ${hook.length} attempts, the server ${seen.length}`);
  if (exp.ok) must(r.ok === true, `the call failed: ${JSON.stringify(r.error)}`);
  if (exp.error) {
    must(r.ok === false && r.error, 'the call succeeded; the policy wants an error');
    if (r.error) {
      must(r.error.kind === exp.error.kind, `error kind ${r.error.kind}, want ${exp.error.kind}`);
      must((r.error.status ?? null) === exp.error.status, `error status ${r.error.status}, want ${exp.error.status}`);
      if (exp.error.timeout) must(r.error.timeout === true, 'the error does not say it was a timeout');
    }
  }
  hook.forEach((h, i) => {
    const s = seen[i];
    must(h.attempt === i + 1, `hook record ${i + 1} has attempt ${h.attempt}`);
    if (!s) return;
    must(h.method === s.method, `hook method ${h.method}, sent ${s.method}`);
    must(h.path === s.path, `hook path ${h.path}, sent ${s.path}`);
    must(typeof h.duration_ms === 'number' && h.duration_ms >= 0, `hook duration ${h.duration_ms}`);
    if (typeof s.answer === 'number') {
      must(h.status === s.answer, `hook status ${h.status} for the answer ${s.answer}`);
      must(h.request_id === s.requestId, `hook request id ${h.request_id}, sent ${s.requestId}`);
      must(h.error === null || h.error === undefined, `hook error ${h.error} with a status`);
    } else {
      must(h.status === null || h.status === undefined, `hook status ${h.status} for a ${s.answer}`);
      must(typeof h.error === 'string' && h.error !== '', `no hook error for a ${s.answer}`);
    }
  });
  // Timeouts: the attempt gave up after about the timeout, without waiting for the answer.
  for (const i of exp.timedOut ?? []) {
    const h = hook[i];
    if (!h) continue;
    must(h.error === 'timeout', `attempt ${i + 1}: hook error ${JSON.stringify(h.error)}, want "timeout"`);
    must(h.duration_ms >= TIMEOUT_MS * 0.8 && h.duration_ms < SLOW_MS - 200, `attempt ${i + 1} lasted ${Math.round(h.duration_ms)} ms, timeout ${TIMEOUT_MS} ms`);
  }
  // Waits between attempts: Retry-After when given, else the back-off (0.5 s doubling, times 0.5..1).
  // A wait runs from the end of the previous attempt to the start of the next, both on the
  // server's clock: the end is when the server answered, reset or cut the connection, or (for
  // a slow answer) when the client closed it on giving up. (The hook's duration would be on
  // the client's clock and also count what the client did before sending, tens of
  // milliseconds for a first call in a fresh process: a wait would look that much shorter.)
  const gaps = seen.slice(1).map((s, i) => s.t - (seen[i].ended ?? seen[i].t));
  (exp.gaps ?? []).forEach(([lo, hi], i) => {
    if (gaps[i] !== undefined) must(gaps[i] >= lo && gaps[i] <= hi, `wait ${i + 1} was ${Math.round(gaps[i])} ms, want ${lo}..${hi} (Retry-After)`);
  });
  if (exp.backoff) {
    gaps.forEach((g, i) => {
      const nominal = 500 * 2 ** i;
      must(g >= nominal * 0.5 - 60 && g <= nominal + 400, `wait ${i + 1} was ${Math.round(g)} ms, want the back-off ${nominal / 2}..${nominal} ms`);
    });
  }
  if (exp.sameKey) {
    const keys = seen.map((s) => s.headers['idempotency-key']);
    must(keys.every((k) => typeof k === 'string' && k !== ''), `a ${seen[0]?.method} without an Idempotency-Key`);
    must(new Set(keys).size <= 1, `Idempotency-Keys differ between attempts: ${keys.join(', ')}`);
  }
  for (const s of seen) {
    must(s.headers.authorization === `Bearer ${key}`, 'the request did not carry the key');
  }
  return bad;
}

const server = await startServer();
const base = `http://127.0.0.1:${server.port}`;
const results = {};
await Promise.all(langs.map(async (lang) => {
  results[lang] = {};
  for (const name of cases) {
    const c = CASES[name];
    const id = `${lang}.${name}.${randomBytes(4).toString('hex')}`;
    const key = `sk_test_conf${randomBytes(12).toString('hex')}`;
    const res = await run(DRIVERS[lang], [base, c.call, id, key]);
    const problems = check(name, EXPECT[name], res, server.log(id), key);
    results[lang][name] = problems;
    if (verbose) console.error(`${lang} ${name}: ${res.out.trim()}`);
  }
}));
await server.close();

// The table.
const w = Math.max(...cases.map((c) => c.length), 4);
const line = (cells) => `| ${cells[0].padEnd(w)} | ${cells.slice(1).map((c) => c.padEnd(6)).join(' | ')} |`;
console.log(line(['case', ...langs]));
console.log(`|${'-'.repeat(w + 2)}|${langs.map(() => '-'.repeat(8)).join('|')}|`);
let failed = 0;
for (const name of cases) {
  console.log(line([name, ...langs.map((l) => (results[l][name].length === 0 ? 'pass' : 'FAIL'))]));
}
for (const l of langs) {
  for (const name of cases) {
    for (const p of results[l][name]) {
      failed++;
      console.log(`FAIL ${l} ${name}: ${p}`);
    }
  }
}
const cells = langs.length * cases.length;
const bad = langs.reduce((n, l) => n + cases.filter((c) => results[l][c].length).length, 0);
console.log(`conformance: ${cells - bad}/${cells} cells pass (${cases.length} cases x ${langs.length} languages)`);
process.exit(failed ? 1 : 0);
