// The HTTPS webhook receiver of tests/scale/run, in the `recv` namespace: the end-to-end
// tests' receiver (tests/e2e/fixtures/webhook_receiver.mjs) on the namespace's address,
// with the test CA's certificate (E2E_TLS_CERT, E2E_TLS_KEY), plus a control server on a
// Unix socket that the harness reaches from outside the namespace:
//
//   node receiver.mjs --host 10.77.9.30 --port 8443 --control /tmp/.../recv.sock
//
//   GET  /requests?path=/s2           [{id, remote, at, answered_at, status}] of that path
//   POST /delay?path=/s3&ms=3000      answer that path after ms milliseconds (0: at once)
//
// Every path answers 204 unless told to wait. Stops on SIGTERM.
import http from 'node:http';
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';

import { startReceiver } from '../e2e/fixtures/webhook_receiver.mjs';

const { values: opt } = parseArgs({
  options: { host: { type: 'string' }, port: { type: 'string' }, control: { type: 'string' } },
});
if (!opt.host || !opt.port || !opt.control) {
  console.error('usage: receiver.mjs --host ADDR --port PORT --control SOCKET');
  process.exit(2);
}

const rx = await startReceiver({ host: opt.host, port: Number(opt.port) });
const delays = new Map(); // path -> ms
const routed = new Set();

function route(path) {
  if (routed.has(path)) return;
  routed.add(path);
  rx.route(path, () => ({ status: 204, delayMs: delays.get(path) ?? 0 }));
}

const control = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://control');
  const path = url.searchParams.get('path') ?? '/';
  const reply = (status, body) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.method === 'GET' && url.pathname === '/requests') {
    return reply(200, rx.to(path).map((r) => ({
      id: r.headers['webhook-id'], remote: r.remote, at: r.at,
      answered_at: r.answered?.at ?? null, status: r.answered?.status ?? null,
    })));
  }
  if (req.method === 'POST' && url.pathname === '/delay') {
    route(path);
    delays.set(path, Number(url.searchParams.get('ms') ?? 0));
    return reply(200, { path, ms: delays.get(path) });
  }
  return reply(404, { error: 'unknown control request' });
});
rmSync(opt.control, { force: true });
await new Promise((resolve, reject) => {
  control.once('error', reject);
  control.listen(opt.control, resolve);
});
console.log(`receiver listening on https://${opt.host}:${rx.port}, control on ${opt.control}`);

process.on('SIGTERM', async () => {
  control.close();
  await rx.close();
  rmSync(opt.control, { force: true });
  process.exit(0);
});
