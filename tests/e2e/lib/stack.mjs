// Helpers for the end-to-end tests: they talk to a running stack through real nginx,
// the FastCGI workers and PostgreSQL.
//
// tests/e2e/run starts a fresh stack (tools/stack up) and exports its variables before it
// runs `node --test`; to run one file against a stack of your own:
//
//   eval "$(tools/stack up --dir /tmp/mystack --port 18080)"
//   node --test tests/e2e/smoke.test.mjs
//
// Exports:
//   BASE_URL, DOWNLOAD_BASE_URL, FILES_ROOT, MARKET_DB, MARKET_ADMIN, STACK_DIR,
//   API_PIDFILE, WEBHOOKD_PIDFILE     the stack's variables (see tools/stack)
//   TLS                               {ca, cert, key}: file paths of a test CA and of a
//                                     certificate for localhost and 127.0.0.1 signed by
//                                     it; the stack's market-webhookd trusts the CA
//                                     (MARKET_WEBHOOK_CA_FILE), so an HTTPS receiver can
//                                     be a node:https server with {cert, key}
//   api(path, opts)                   one HTTP request -> {status, headers, json, text}
//   rawRequest(path, opts)            the same on a connection of its own, from a chosen
//                                     local address, with headers sent as given (an
//                                     array value: one header line per element)
//   admin(args, input)                run market-admin, return its stdout (throws on failure)
//   adminResult(args, input)          run market-admin, return {status, stdout, stderr}
//   importDoc(doc)                    market-admin import of a JS object
//   newKey({account, mode, access})   market-admin key create; returns the key
//   newAccount(prefix)                imports a fresh account (prefix + a unique id, with
//                                     an e-mail address); returns its id
//   psql(sql)                         run SQL, return psql's unaligned tuples-only output
//   uniqueId(prefix)                  a fresh identifier such as acct_e2e_k3j9x2a1
//   waitFor(fn, opts)                 poll until fn() returns a truthy value
//   startStack({env, workers})        another whole stack (tools/stack up) in a temporary
//                                     directory on a free port, with these MARKET_* settings
//                                     (null: unset):
//                                     {base, db, admin(args, input), down()}
//
// The stack's processes read the MARKET_* variables tests/e2e/run set before starting it
// (MARKET_WEBHOOK_ALLOW_PRIVATE=1, MARKET_WEBHOOK_RETRIES=1s,2s,4s unless set otherwise).
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import net, { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const env = process.env;

export const BASE_URL = env.BASE_URL;
export const DOWNLOAD_BASE_URL = env.DOWNLOAD_BASE_URL;
export const FILES_ROOT = env.FILES_ROOT;
export const MARKET_DB = env.MARKET_DB;
export const MARKET_ADMIN = env.MARKET_ADMIN;
export const STACK_DIR = env.STACK_DIR;
export const API_PIDFILE = env.API_PIDFILE;
export const WEBHOOKD_PIDFILE = env.WEBHOOKD_PIDFILE;
export const TLS = { ca: env.E2E_TLS_CA, cert: env.E2E_TLS_CERT, key: env.E2E_TLS_KEY };

function need(name) {
  if (!env[name]) {
    throw new Error(`${name} is not set: run the end-to-end tests with tests/e2e/run, ` +
      'or eval the output of tools/stack up first');
  }
  return env[name];
}

/**
 * One HTTP request to the stack. `path` is relative to BASE_URL ("/v1/products?limit=3")
 * or an absolute URL (a download link). Redirects are not followed.
 *
 *   key      API key sent as "Authorization: Bearer <key>"
 *   method   default GET
 *   body     an object or array is sent as JSON (with Content-Type: application/json
 *            unless headers say otherwise); a string or Buffer is sent as it is
 *   headers  extra request headers
 *   signal   an AbortSignal, to hang up before the answer
 *
 * Returns {status, headers (a Headers object), text, json (parsed body, or undefined when
 * the body is not JSON), body (a Buffer of the raw bytes)}.
 */
export async function api(path, { key, method = 'GET', body, headers = {}, signal } = {}) {
  const url = /^https?:\/\//.test(path) ? path : need('BASE_URL') + path;
  const h = { ...headers };
  if (key !== undefined) h.Authorization = `Bearer ${key}`;
  let payload = body;
  if (body !== undefined && body !== null && typeof body === 'object' && !Buffer.isBuffer(body)) {
    payload = JSON.stringify(body);
    if (!Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) {
      h['Content-Type'] = 'application/json';
    }
  }
  const res = await fetch(url, { method, headers: h, body: payload, redirect: 'manual', signal });
  const raw = Buffer.from(await res.arrayBuffer());
  const text = raw.toString('utf8');
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json, body: raw };
}

function adminEnv() {
  // market-admin reads MARKET_DB and MARKET_SECRET_FILE (exported by tools/stack); the
  // files root and the download base are those of the stack as well.
  return {
    ...env,
    MARKET_FILES_ROOT: env.FILES_ROOT ?? env.MARKET_FILES_ROOT,
    MARKET_DOWNLOAD_BASE_URL: env.DOWNLOAD_BASE_URL ?? env.MARKET_DOWNLOAD_BASE_URL,
  };
}

/** Runs market-admin with `args` (an array) and optional stdin `input`: {status, stdout, stderr}. */
export function adminResult(args, input) {
  const r = spawnSync(need('MARKET_ADMIN'), args, {
    input, env: adminEnv(), encoding: 'utf8', maxBuffer: 64 << 20,
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs market-admin and returns its stdout; throws (with its stderr) on a non-zero exit. */
export function admin(args, input) {
  const r = adminResult(args, input);
  if (r.status !== 0) {
    const err = new Error(`market-admin ${args.join(' ')} exited with ${r.status}: ${r.stderr.trim()}`);
    Object.assign(err, r);
    throw err;
  }
  return r.stdout;
}

/** market-admin import of a document in the format of docs/contract.md section 9. */
export function importDoc(doc) {
  return admin(['import', '-'], JSON.stringify(doc));
}

/** Imports a fresh account, `prefix` + a unique id, with an e-mail address; returns its id. */
export function newAccount(prefix = 'acct_e2e_') {
  const id = uniqueId(prefix);
  importDoc({ mode: 'test', accounts: [{ id, email: `${id}@example.com` }] });
  return id;
}

/** Creates an API key and returns it (market-admin prints the key alone). */
export function newKey({ account, mode = 'test', access = 'read-write' }) {
  if (!account) throw new Error('newKey needs an account');
  return admin(['key', 'create', '--account', account, '--mode', mode, '--access', access]).trim();
}

/**
 * Runs SQL (one or more statements) with psql on the stack's database and returns the
 * output trimmed: unaligned, tuples only, one row per line, fields separated by "|".
 * Throws on an SQL error.
 */
export function psql(sql) {
  const r = spawnSync('psql', ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', need('MARKET_DB'), '-f', '-'], {
    input: sql, encoding: 'utf8', maxBuffer: 64 << 20,
  });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`psql failed (${r.status}): ${r.stderr.trim()}`);
  return r.stdout.trim();
}

/** A fresh identifier: prefix + 8 random lowercase letters and digits. */
export function uniqueId(prefix = 'e2e_') {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(8);
  let s = '';
  for (const b of bytes) s += alphabet[b % alphabet.length];
  return prefix + s;
}

/**
 * Calls fn (sync or async) every `interval` ms until it returns a truthy value, which is
 * returned; throws after `timeout` ms with `message`.
 */
export async function waitFor(fn, { timeout = 10000, interval = 100, message = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeout} ms waiting for ${message}`);
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/** A free TCP port on 127.0.0.1 (free when asked; another process may take it after). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const STACK = fileURLToPath(new URL('../../../tools/stack', import.meta.url));

/**
 * Starts another stack (tools/stack up) in a temporary directory on a free port, with
 * the MARKET_* settings of `settings` over those of this run, and `workers` FastCGI
 * workers. Returns {base, db, admin(args, input) -> stdout, down()}; down() stops it and
 * removes its directory (call it in an after hook).
 */
export async function startStack({ settings = {}, workers = 1 } = {}) {
  const stackEnv = { ...env, ...settings };
  for (const [name, value] of Object.entries(settings)) if (value === null) delete stackEnv[name];
  delete stackEnv.MARKET_FILES_ROOT;
  delete stackEnv.MARKET_DOWNLOAD_BASE_URL;
  const dir = mkdtempSync(join(tmpdir(), 'market-e2e-extra-'));
  const down = () => {
    spawnSync(STACK, ['down', '--dir', dir], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  };
  let stdout;
  try {
    ({ stdout } = await promisify(execFile)(STACK,
      ['up', '--dir', dir, '--port', String(await freePort()), '--workers', String(workers)],
      { env: stackEnv, maxBuffer: 1 << 20 }));
  } catch (err) {
    down();
    throw err;
  }
  const vars = {};
  for (const line of stdout.split('\n')) {
    const m = /^export (\w+)=(.*)$/.exec(line);
    if (m) vars[m[1]] = m[2].startsWith("'") ? m[2].slice(1, -1).replaceAll("'\\''", "'") : m[2];
  }
  const adminEnv = { ...stackEnv, MARKET_DB: vars.MARKET_DB, MARKET_SECRET_FILE: vars.MARKET_SECRET_FILE };
  const runAdmin = (args, input) => {
    const r = spawnSync(need('MARKET_ADMIN'), args, { input, env: adminEnv, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`market-admin ${args.join(' ')} exited with ${r.status}: ${r.stderr.trim()}`);
    return r.stdout.trim();
  };
  return { base: vars.BASE_URL, db: vars.MARKET_DB, dir, admin: runAdmin, down };
}

/**
 * One request with node:http on a connection of its own (what fetch cannot do): from
 * `localAddress` (another address of 127.0.0.0/8 is another client to nginx), with a
 * header given as an array sent as several header lines. `path` as for api(). Returns
 * {status, headers, text, json, ms}; fails after timeoutMs without an answer.
 */
export function rawRequest(path, { key, method = 'GET', headers = {}, body, localAddress, timeoutMs = 15000 } = {}) {
  const url = new URL(path, need('BASE_URL'));
  const h = { Connection: 'close', ...headers };
  if (key !== undefined) h.Authorization = `Bearer ${key}`;
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: url.hostname, port: url.port, path: url.pathname + url.search, method, localAddress,
      agent: false, headers: h,
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        resolve({ status: res.statusCode, headers: new Headers(res.headers), text, json, ms });
      });
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * `n` connections held open at nginx from `localAddress`, each of which sent `head`: the
 * complete headers of a request whose body never comes (a request nginx counts against
 * limit_conn from its headers on), or part of a header (an idle connection nginx drops at
 * client_header_timeout). A connection nginx answers or closes is no longer held
 * (`answered`; `closedAt` says when it closed): that happens when the requests of an
 * earlier test are still counted for a moment after their reset (nginx answers 429 to the
 * one over the limit). topUp() replaces such connections, release() resets them all.
 * Returns {sockets, topUp, release}.
 */
export async function holdRequests(n, head, { localAddress = '127.0.0.1', batch = 256 } = {}) {
  const url = new URL(need('BASE_URL'));
  const sockets = [];
  const open = () => new Promise((resolve, reject) => {
    const s = net.connect({ host: url.hostname, port: Number(url.port), localAddress }, () => {
      s.write(head);
      resolve(s);
    });
    s.answered = false;
    s.closedAt = null;
    s.setNoDelay(true);
    s.on('data', () => { s.answered = true; });
    s.on('close', () => {
      s.answered = true;
      s.closedAt = Date.now();
    });
    s.on('error', () => {}); // ECONNRESET once nginx gives up on it
    s.once('error', reject);
  });
  const release = () => {
    for (const s of sockets) if (!s.destroyed) s.resetAndDestroy();
    sockets.length = 0;
  };
  const topUp = async () => {
    for (let i = sockets.length - 1; i >= 0; i--) {
      if (sockets[i].answered) sockets.splice(i, 1)[0].destroy();
    }
    while (sockets.length < n) {
      sockets.push(...await Promise.all(Array.from({ length: Math.min(batch, n - sockets.length) }, open)));
    }
  };
  try {
    await topUp();
  } catch (err) {
    release();
    throw err;
  }
  return { sockets, topUp, release };
}
