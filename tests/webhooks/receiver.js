// Test receiver for market-webhookd (scratch tooling): an HTTPS server that verifies every
// delivery with the standardwebhooks npm package and logs one JSON line per request.
//
//   NODE_PATH=<dir with node_modules> node receiver.js PORT CERTDIR SECRET LOGFILE
//
// Paths choose the answer: /ok -> 204, /status/NNN -> NNN, /slow/MS -> 204 after MS ms,
// /flaky/N -> 503 for the first N requests of each webhook-id then 204,
// /redirect -> 302 to /ok. GET /stats -> counts so far.
'use strict';
const https = require('https');
const fs = require('fs');
const { Webhook } = require('standardwebhooks');

const [port, certdir, secret, logfile] = process.argv.slice(2);
const wh = new Webhook(secret);
const log = fs.createWriteStream(logfile, { flags: 'a' });
const seen = new Map(); // webhook-id -> requests so far
const stats = { requests: 0, verified: 0, bad: 0, tls_connections: 0 };

function now() {
  return performance.timeOrigin + performance.now();
}

function answer(req, res, id) {
  const path = req.url;
  let m;
  if (path === '/ok') return res.writeHead(204).end();
  if ((m = path.match(/^\/status\/(\d{3})$/))) return res.writeHead(+m[1]).end('{}');
  if ((m = path.match(/^\/slow\/(\d+)$/)))
    return setTimeout(() => res.writeHead(204).end(), +m[1]);
  if ((m = path.match(/^\/flaky\/(\d+)$/)))
    return res.writeHead(seen.get(id) <= +m[1] ? 503 : 204).end();
  if (path === '/redirect') return res.writeHead(302, { Location: '/ok' }).end();
  res.writeHead(404).end();
}

function handle(req, res, body) {
  const t = now();
  if (req.method === 'GET' && req.url === '/stats') {
    return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats));
  }
  const id = req.headers['webhook-id'];
  seen.set(id, (seen.get(id) || 0) + 1);
  let ok = false, payload = null, error = null;
  try {
    payload = wh.verify(body, req.headers);
    ok = true;
  } catch (e) {
    error = String(e.message || e);
  }
  const xsig = req.headers['x-signature'] === req.headers['webhook-signature'];
  stats.requests++;
  if (ok && xsig && req.headers['content-type'] === 'application/json') stats.verified++;
  else stats.bad++;
  log.write(JSON.stringify({
    t, path: req.url, id, ts: req.headers['webhook-timestamp'], ok, xsig, error,
    ctype: req.headers['content-type'], n: seen.get(id), type: payload && payload.type,
    data: payload && payload.data, body: ok ? undefined : body,
  }) + '\n');
  answer(req, res, id);
}

const server = https.createServer({
  key: fs.readFileSync(certdir + '/server.key'),
  cert: fs.readFileSync(certdir + '/server.pem'),
}, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
});
server.keepAliveTimeout = 60000;
server.on('secureConnection', () => stats.tls_connections++);
server.listen(+port, '127.0.0.1', () => console.error(`receiver on https://127.0.0.1:${port}`));
process.on('SIGTERM', () => { log.end(); process.exit(0); });
