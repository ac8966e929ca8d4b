// bench/mirror.mjs: a client mirroring the whole catalogue (make bench, step "mirror").
//
//   node bench/mirror.mjs --base URL --keys FILE --cats FILE [--conns 8] [--limit 100]
//
// Walks every category of --cats (lines "slug count": the published products of each, as
// the database holds them) with `limit` pages, following next_cursor to the end, on --conns
// keep-alive connections at once: each connection takes the next category not yet walked,
// as an integrator copying a catalogue would split the work. Every page must be 200 and hold
// at most `limit` items; a category must yield exactly its count of distinct ids. Prints
// one line: products, requests, seconds, products per second, and the latency of a page
// (p50, p99). Keys are used in turn, one per page.
import http from 'node:http';
import { readFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const args = { conns: '8', limit: '100' };
for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, '')] = argv[i + 1];
if (!args.base || !args.keys || !args.cats) {
  process.stderr.write('mirror: --base, --keys and --cats are required\n');
  process.exit(2);
}
const base = new URL(args.base);
const keys = readFileSync(args.keys, 'utf8').split('\n').map((l) => l.trim()).filter(Boolean);
const cats = readFileSync(args.cats, 'utf8').split('\n').filter(Boolean).map((l) => {
  const [slug, count] = l.trim().split(/\s+/);
  return { slug, count: Number(count) };
});
const conns = Number(args.conns);
const limit = Number(args.limit);
let keyIndex = 0;

function page(agent, path) {
  const key = keys[keyIndex++ % keys.length];
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    http
      .get({ host: base.hostname, port: base.port || 80, path, agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const ms = Number(process.hrtime.bigint() - t0) / 1e6;
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) return reject(new Error(`${path}: status ${res.statusCode}: ${text.slice(0, 200)}`));
          resolve({ body: JSON.parse(text), ms });
        });
      })
      .on('error', reject);
  });
}

const latencies = [];
let requests = 0;
let products = 0;

async function walkCategory(agent, cat) {
  const seen = new Set();
  let cursor = null;
  do {
    const path = `/v1/products?category=${encodeURIComponent(cat.slug)}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const { body, ms } = await page(agent, path);
    requests++;
    latencies.push(ms);
    if (!Array.isArray(body.data) || body.data.length > limit) throw new Error(`${path}: not a page of at most ${limit}`);
    for (const item of body.data) seen.add(item.id);
    products += body.data.length;
    cursor = body.next_cursor;
  } while (cursor !== null);
  if (seen.size !== cat.count) throw new Error(`category ${cat.slug}: ${seen.size} distinct products, the database has ${cat.count}`);
}

const queue = [...cats].sort((a, b) => b.count - a.count); // the biggest first
const t0 = process.hrtime.bigint();
await Promise.all(
  Array.from({ length: conns }, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    for (let cat = queue.shift(); cat !== undefined; cat = queue.shift()) await walkCategory(agent, cat);
    agent.destroy();
  }),
);
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
latencies.sort((a, b) => a - b);
const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))].toFixed(1);
console.log(
  `mirror: ${products} products in ${requests} requests on ${conns} connections, ${seconds.toFixed(1)} s: ` +
    `${Math.round(products / seconds)} products/s, page p50 ${q(0.5)} ms p99 ${q(0.99)} ms`,
);
