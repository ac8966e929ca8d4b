// The DNS server of tests/scale/run, in the `dns` namespace: the app hosts' resolv.conf
// names it, so the drainers (c-ares) and the pools (glibc) ask it for the receivers'
// names. Each name answers an A query with one address after a delay of its own (or
// never), an AAAA query with no address (NOERROR) after the same delay; any other name is
// NXDOMAIN at once. A retransmitted query (the same id, name and type) is not answered
// twice: the one answer goes out at first arrival + the delay. A control server on a Unix
// socket lets the harness set the names and read what was asked:
//
//   node dns.mjs --host 10.77.9.53 --control /tmp/.../dns.sock
//
//   POST /name?name=slow.example&addr=10.77.9.30&delay=5000   (delay -1: never answer)
//   GET  /queries?name=slow.example   [{id, type, from, at, answered_at, repeats}]
//
// Stops on SIGTERM.
import dgram from 'node:dgram';
import http from 'node:http';
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: { host: { type: 'string' }, port: { type: 'string' }, control: { type: 'string' } },
});
if (!opt.host || !opt.control) {
  console.error('usage: dns.mjs --host ADDR [--port 53] --control SOCKET');
  process.exit(2);
}

const names = new Map(); // name -> {addr, delay}
const queries = []; // {id, type, name, from, at, answered_at, repeats}
const open = new Map(); // "id name type" -> query record, until answered

/** The question of a query: {name, type, end} (end: the offset just past it), or null. */
function question(msg) {
  if (msg.length < 12 || msg.readUInt16BE(4) !== 1) return null;
  const labels = [];
  let off = 12;
  while (off < msg.length && msg[off] !== 0) {
    const len = msg[off];
    if (len > 63 || off + 1 + len > msg.length) return null;
    labels.push(msg.subarray(off + 1, off + 1 + len).toString('latin1').toLowerCase());
    off += 1 + len;
  }
  if (off + 5 > msg.length) return null;
  return { name: labels.join('.'), type: msg.readUInt16BE(off + 1), end: off + 5 };
}

/** The answer to msg: its header and question, then an A record when addr is given. */
function reply(msg, q, rcode, addr) {
  const head = Buffer.from(msg.subarray(0, q.end));
  head[2] = 0x84 | (msg[2] & 0x01); // a response, authoritative, RD as asked
  head[3] = 0x80 | rcode; // RA, the code
  head.writeUInt16BE(addr ? 1 : 0, 6);
  head.writeUInt16BE(0, 8);
  head.writeUInt16BE(0, 10);
  if (!addr) return head;
  const rr = Buffer.alloc(16);
  rr.writeUInt16BE(0xc00c, 0); // the question's name
  rr.writeUInt16BE(1, 2); // A
  rr.writeUInt16BE(1, 4); // IN
  rr.writeUInt32BE(0, 6); // TTL 0: nobody keeps it
  rr.writeUInt16BE(4, 10);
  addr.split('.').forEach((b, i) => rr.writeUInt8(Number(b), 12 + i));
  return Buffer.concat([head, rr]);
}

const sock = dgram.createSocket('udp4');
sock.on('message', (msg, from) => {
  const q = question(msg);
  if (!q) return;
  const key = `${msg.readUInt16BE(0)} ${q.name} ${q.type}`;
  const seen = open.get(key);
  if (seen) {
    seen.repeats++;
    return;
  }
  const rec = { id: msg.readUInt16BE(0), type: q.type === 1 ? 'A' : q.type === 28 ? 'AAAA' : String(q.type),
    name: q.name, from: from.address, at: Date.now(), answered_at: null, repeats: 0 };
  queries.push(rec);
  const entry = names.get(q.name);
  const answer = entry ? reply(msg, q, 0, q.type === 1 ? entry.addr : null) : reply(msg, q, 3, null);
  const delay = entry ? entry.delay : 0;
  open.set(key, rec);
  if (delay < 0) return; // never: the client gives up
  setTimeout(() => {
    open.delete(key);
    rec.answered_at = Date.now();
    sock.send(answer, from.port, from.address);
  }, delay);
});
await new Promise((resolve, reject) => {
  sock.once('error', reject);
  sock.bind(Number(opt.port ?? 53), opt.host, resolve);
});

const control = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://control');
  const send = (status, body) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const name = (url.searchParams.get('name') ?? '').toLowerCase();
  if (req.method === 'POST' && url.pathname === '/name' && name) {
    names.set(name, { addr: url.searchParams.get('addr') ?? '', delay: Number(url.searchParams.get('delay') ?? 0) });
    return send(200, { name, ...names.get(name) });
  }
  if (req.method === 'GET' && url.pathname === '/queries') {
    return send(200, queries.filter((q) => !name || q.name === name));
  }
  return send(404, { error: 'unknown control request' });
});
rmSync(opt.control, { force: true });
await new Promise((resolve, reject) => {
  control.once('error', reject);
  control.listen(opt.control, resolve);
});
console.log(`dns listening on ${opt.host}:${opt.port ?? 53}/udp, control on ${opt.control}`);

process.on('SIGTERM', () => {
  control.close();
  sock.close();
  rmSync(opt.control, { force: true });
  process.exit(0);
});
