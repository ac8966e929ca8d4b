// clients/conformance/server.mjs: a scripted HTTP server with real faults, for the
// conformance suite (run.mjs). No dependencies.
//
// Every request names its case in its path: the id a driver passes is
// "<lang>.<case>.<nonce>" (GET /v1/products/<id>, POST /v1/downloads/<id>/link,
// DELETE /v1/webhooks/<id>, GET /v1/products?category=<id>). The case's script gives the
// answer to each attempt (its last step repeats). The server records every request
// (method, path, headers, time) under the id: GET /_log/<id> returns them.
//
// Steps: {status, headers, body} an answer; 'reset' the connection reset (TCP RST) once
// the request has arrived; 'cut' a 200 whose Content-Length promises more than is sent,
// then the connection closed; 'slow' a 200 sent only after SLOW_MS (past the drivers'
// timeout).
//
//   node server.mjs [port]     prints "listening <port>" and serves until killed
import http from 'node:http';

export const SLOW_MS = 1500;

const PRODUCT = (id) => ({
  id, title: 'T', description: 'D', category: 'fonts', price: 19.99, currency: 'USD', seller: 's', tiers: [],
  rating: { average: null, count: 0 }, created_at: '2026-11-21T10:04:05Z', updated_at: '2026-11-21T10:04:05Z',
});
const LINK = { object: 'download_link', download: 'dl_1', url: 'http://files.test/files/t', expires_at: '2026-11-21T11:04:05Z' };
const DELETED = (id) => ({ id, object: 'webhook_subscription', deleted: true });
const PAGE = { data: [], next_cursor: null };
const err = (status, type, code, headers = {}) => ({
  status, headers, body: { error: { type, code, message: code } },
});
const E429 = (ra) => err(429, 'rate_limit_error', 'rate_limited', { 'Retry-After': String(ra) });
const E500 = err(500, 'api_error', 'internal_error');
const E502 = err(502, 'api_error', 'service_unavailable');
const E503 = err(503, 'api_error', 'service_unavailable');
const E504 = err(504, 'api_error', 'service_unavailable');
const E400 = err(400, 'invalid_request_error', 'parameter_invalid');
const OK = (body) => ({ status: 200, body });
const CREATED = (body) => ({ status: 201, body });

/** Each case: the call the driver makes, and the script of answers (last step repeats). */
export const CASES = {
  get_ok: { call: 'get', script: [OK(PRODUCT)] },
  get_query: { call: 'list', script: [OK(PAGE)] },
  get_429_retry_after: { call: 'get', script: [E429(1), OK(PRODUCT)] },
  get_429_long_retry_after: { call: 'get', script: [E429(120)] },
  get_502: { call: 'get', script: [E502] },
  get_503: { call: 'get', script: [E503] },
  get_504: { call: 'get', script: [E504] },
  get_503_then_ok: { call: 'get', script: [E503, OK(PRODUCT)] },
  get_500: { call: 'get', script: [E500] },
  get_reset: { call: 'get', script: ['reset', OK(PRODUCT)] },
  get_cut_body: { call: 'get', script: ['cut', OK(PRODUCT)] },
  get_timeout: { call: 'get', script: ['slow'] },
  get_timeout_then_ok: { call: 'get', script: ['slow', OK(PRODUCT)] },
  post_502: { call: 'post', script: [E502, CREATED(LINK)] },
  post_504: { call: 'post', script: [E504, CREATED(LINK)] },
  post_reset: { call: 'post', script: ['reset', CREATED(LINK)] },
  post_timeout: { call: 'post', script: ['slow', CREATED(LINK)] },
  post_400: { call: 'post', script: [E400] },
  delete_503: { call: 'delete', script: [E503, OK(DELETED)] },
};

const ID = /([a-z]+)\.([a-z0-9_]+)\.([A-Za-z0-9]+)/;

export function startServer(port = 0) {
  const log = new Map(); // id -> [{method, path, headers, t, ended}]
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.url.startsWith('/_log/')) {
        const id = decodeURIComponent(req.url.slice(6));
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(log.get(id) ?? []));
        return;
      }
      const m = ID.exec(decodeURIComponent(req.url));
      const c = m && CASES[m[2]];
      if (!c) {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'invalid_request_error', code: 'route_not_found', message: 'no case' } }));
        return;
      }
      const id = m[0];
      const seen = log.get(id) ?? [];
      log.set(id, seen);
      const n = seen.length;
      const step = c.script[Math.min(n, c.script.length - 1)];
      const requestId = `req_${m[2]}_${n + 1}`;
      const entry = {
        method: req.method, path: req.url, headers: req.headers, t: performance.now(), body: Buffer.concat(chunks).toString(),
        answer: typeof step === 'string' ? step : step.status, requestId,
      };
      seen.push(entry);
      // When the attempt ended, on this clock: the answer sent, the reset or the cut made, or
      // (for 'slow') the client's side closing the connection when it gave up.
      const ended = () => { entry.ended ??= performance.now(); };
      const answer = (s) => {
        const body = JSON.stringify(typeof s.body === 'function' ? s.body(id) : s.body);
        res.writeHead(s.status, {
          'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'X-Request-Id': requestId, ...(s.headers ?? {}),
        });
        res.end(body);
        ended();
      };
      if (step === 'reset') {
        req.socket.resetAndDestroy();
        ended();
      } else if (step === 'cut') {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '1000', 'X-Request-Id': requestId });
        res.write('{"id":"prod_1","ti');
        setTimeout(() => {
          req.socket.destroy();
          ended();
        }, 50);
      } else if (step === 'slow') {
        const timer = setTimeout(() => answer(OK(c.call === 'post' ? LINK : PRODUCT)), SLOW_MS);
        req.socket.on('close', () => {
          clearTimeout(timer);
          ended();
        });
      } else {
        answer(step);
      }
    });
  });
  server.keepAliveTimeout = 5000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => {
      resolve({
        port: server.address().port,
        log: (id) => log.get(id) ?? [],
        close: () => new Promise((r) => {
          for (const s of sockets) s.destroy();
          server.close(r);
        }),
      });
    });
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const s = await startServer(Number(process.argv[2] ?? 0));
  console.log(`listening ${s.port}`);
}
