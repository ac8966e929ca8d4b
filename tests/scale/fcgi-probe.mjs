// One FastCGI request straight to a market-api pool, bypassing nginx, from whichever
// namespace it runs in (tests/scale/run: libfcgi's peer check, FCGI_WEB_SERVER_ADDRS).
//
//   node fcgi-probe.mjs HOST PORT
//
// Sends GET /v1/products without a key and prints one JSON line: {connected, bytes,
// status}, where status is the worker's Status header (401 expected) or null when the
// pool closed the connection without an answer, as libfcgi does for a peer whose address
// FCGI_WEB_SERVER_ADDRS does not list.
import net from 'node:net';

const [host, port] = process.argv.slice(2);
const record = (type, body) => {
  const head = Buffer.alloc(8);
  head.writeUInt8(1, 0); // version
  head.writeUInt8(type, 1);
  head.writeUInt16BE(1, 2); // request id
  head.writeUInt16BE(body.length, 4);
  return Buffer.concat([head, body]);
};
const pair = (name, value) => {
  const n = Buffer.from(name);
  const v = Buffer.from(value);
  return Buffer.concat([Buffer.from([n.length, v.length]), n, v]);
};
const params = Buffer.concat(Object.entries({
  REQUEST_METHOD: 'GET', REQUEST_URI: '/v1/products', DOCUMENT_URI: '/v1/products',
  SCRIPT_NAME: '/v1/products', QUERY_STRING: '', SERVER_PROTOCOL: 'HTTP/1.1',
  GATEWAY_INTERFACE: 'CGI/1.1', REMOTE_ADDR: '127.0.0.1', REQUEST_ID: 'fcgi-probe',
}).map(([k, v]) => pair(k, v)));
const request = Buffer.concat([
  record(1, Buffer.from([0, 1, 0, 0, 0, 0, 0, 0])), // BEGIN_REQUEST, responder, close
  record(4, params), record(4, Buffer.alloc(0)), // PARAMS
  record(5, Buffer.alloc(0)), // STDIN
]);

let connected = false;
const chunks = [];
const socket = net.connect({ host, port: Number(port) }, () => {
  connected = true;
  socket.write(request);
});
socket.setTimeout(5000, () => socket.destroy());
socket.on('data', (d) => chunks.push(d));
socket.on('error', () => {});
socket.on('close', () => {
  const data = Buffer.concat(chunks);
  // STDOUT records (type 6) carry the CGI response: its Status header comes first.
  const m = /Status: (\d{3})/.exec(data.toString('latin1'));
  console.log(JSON.stringify({ connected, bytes: data.length, status: m ? Number(m[1]) : null }));
});
