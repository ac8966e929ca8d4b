// Helpers of the integration tests: they run against real stacks started by test.sh
// (tools/stack: nginx, the market-api pool, market-webhookd, PostgreSQL).
//
// Environment (set by test.sh):
//   BASE_URL, MARKET_DB, MARKET_SECRET_FILE, MARKET_ADMIN, FILES_ROOT, DOWNLOAD_BASE_URL
//                       the main stack (rate limit 600, webhooks to private addresses,
//                       MARKET_API_EXTENSIONS=webhook-management: the calls of contract
//                       section 13)
//   RL_BASE_URL, RL_MARKET_DB, RL_MARKET_SECRET_FILE, RL_MARKET_ADMIN, ...
//                       the second stack, started with MARKET_RATE_LIMIT=3 and without
//                       extensions (the specification's six routes)
//   TLS_CA, TLS_CERT, TLS_KEY   a throwaway CA (trusted by the main stack's
//                       market-webhookd) and a certificate for 127.0.0.1 signed by it
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';

const env = process.env;

export function need(name) {
  if (!env[name]) throw new Error(`${name} is not set: run the integration tests with clients/js/test.sh`);
  return env[name];
}

/** A stack's variables: main() or rateLimited() (which is also the one without extensions). */
export const main = () => stack('');
export const rateLimited = () => stack('RL_');

function stack(prefix) {
  const v = (n) => need(prefix + n);
  const st = {
    baseUrl: v('BASE_URL'),
    db: v('MARKET_DB'),
    filesRoot: v('FILES_ROOT'),
    admin(args, input) {
      const r = spawnSync(v('MARKET_ADMIN'), args, {
        input,
        encoding: 'utf8',
        env: {
          ...env,
          MARKET_DB: v('MARKET_DB'),
          MARKET_SECRET_FILE: v('MARKET_SECRET_FILE'),
          MARKET_FILES_ROOT: v('FILES_ROOT'),
          MARKET_DOWNLOAD_BASE_URL: v('DOWNLOAD_BASE_URL'),
        },
      });
      if (r.error) throw r.error;
      if (r.status !== 0) throw new Error(`market-admin ${args.join(' ')} exited with ${r.status}: ${r.stderr.trim()}`);
      return r.stdout;
    },
    /** market-admin import of a document (an object, or JSON text as it is). */
    importDoc(doc) {
      return st.admin(['import', '-'], typeof doc === 'string' ? doc : JSON.stringify(doc));
    },
    newKey(account, access = 'read-write', mode = 'test') {
      return st.admin(['key', 'create', '--account', account, '--mode', mode, '--access', access]).trim();
    },
    psql(sql) {
      const r = spawnSync('psql', ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', v('MARKET_DB'), '-f', '-'], {
        input: sql, encoding: 'utf8',
      });
      if (r.error) throw r.error;
      if (r.status !== 0) throw new Error(`psql failed: ${r.stderr.trim()}`);
      return r.stdout.trim();
    },
  };
  return st;
}

/** A fresh lowercase id: prefix + 8 random letters and digits. */
export function uniqueId(prefix = '') {
  const a = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return prefix + [...randomBytes(8)].map((b) => a[b % a.length]).join('');
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor(fn, { timeout = 20000, interval = 100, message = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${message}`);
    await sleep(interval);
  }
}

/** A fetch that records every request's method, URL, headers and answer status. */
export function recordingFetch() {
  const log = [];
  const f = async (url, init = {}) => {
    const rec = { method: init.method ?? 'GET', url, headers: { ...init.headers }, status: null };
    log.push(rec);
    const res = await fetch(url, init);
    rec.status = res.status;
    rec.retryAfter = res.headers.get('retry-after');
    return res;
  };
  f.log = log;
  return f;
}

/**
 * An HTTPS webhook receiver on 127.0.0.1 with the test certificate: it answers 204 and
 * keeps each request's raw body (a Buffer) and headers.
 */
export async function startReceiver() {
  const requests = [];
  const server = https.createServer({ cert: readFileSync(need('TLS_CERT')), key: readFileSync(need('TLS_KEY')) }, (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      requests.push({ path: req.url, method: req.method, headers: req.headers, body: Buffer.concat(chunks), at: Date.now() });
      res.writeHead(204);
      res.end();
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    requests,
    url: (path) => `https://127.0.0.1:${port}${path}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    }),
  };
}

/**
 * A TCP proxy on 127.0.0.1 in front of `target` (an http://host:port URL). Every HTTP
 * request that passes is recorded ({method, path, headers}). proxy.dropNext(pred) arms it:
 * the next request for which pred(request) is true is forwarded to the server, and once
 * the server's answer starts to arrive the client's connection is cut without a byte of
 * it, as a network failure after the server did the work would.
 */
export async function startProxy(target) {
  const { hostname, port } = new URL(target);
  const requests = [];
  const sockets = new Set();
  let dropWhen = null;
  let dropped = 0;
  const server = net.createServer((client) => {
    sockets.add(client);
    const upstream = net.connect(Number(port), hostname);
    sockets.add(upstream);
    let pending = '';
    let drop = false;
    client.on('data', (chunk) => {
      // Record the request heads that pass (requests here are small: one chunk each).
      pending += chunk.toString('latin1');
      let end;
      while ((end = pending.indexOf('\r\n\r\n')) >= 0) {
        const head = pending.slice(0, end).split('\r\n');
        const [method, path] = head[0].split(' ');
        const headers = {};
        for (const line of head.slice(1)) {
          const i = line.indexOf(':');
          headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
        }
        const len = Number(headers['content-length'] ?? 0);
        if (pending.length < end + 4 + len) break;
        const req = { method, path, headers, body: pending.slice(end + 4, end + 4 + len) };
        pending = pending.slice(end + 4 + len);
        requests.push(req);
        if (dropWhen && dropWhen(req)) {
          dropWhen = null;
          drop = true;
          req.dropped = true;
        }
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (drop) {
        dropped++;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', () => {
      sockets.delete(client);
      upstream.end();
    });
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.end();
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    get dropped() {
      return dropped;
    },
    dropNext(pred) {
      dropWhen = pred;
    },
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}
