// bench/heavy.mjs: a search-rich rotation of our own, for wrk and ../shared/bench/lua/mix.lua.
//
//   node bench/heavy.mjs --base URL --keys FILE --cats a,b,c --words w1,w2 --out FILE
//
// Heavier than the shared mix in the three ways that cost a catalogue API the most:
//   * single common words (a category's kind such as "font" matches ~220,000 products,
//     a title noun ~17,000), each as page 1 of 20 and of 100, and pages 2 and 3 of 100
//     reached by following next_cursor;
//   * bigger pages: limit=100;
//   * deeper cursors: pages 10, 20, 30, 40 and 50 of 100 items of each category.
// Only what every peer implements (q, category, limit, cursor), so the same rotation runs
// against market and fastify, each with cursors it signed itself. Every page is checked
// on the way (200, the list envelope, full pages where more follow). Lines are shuffled
// deterministically; line i uses key i mod N. Prints one JSON summary line on stdout.
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';

const args = {};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, '')] = argv[i + 1];
for (const need of ['base', 'keys', 'cats', 'words', 'out']) {
  if (!args[need]) die(`--${need} is required`);
}
const base = new URL(args.base);
const keys = readFileSync(args.keys, 'utf8').split('\n').map((s) => s.trim()).filter(Boolean);
const cats = args.cats.split(',').filter(Boolean);
const words = args.words.split(',').filter(Boolean);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let calls = 0;

function die(msg) {
  process.stderr.write(`heavy: ${msg}\n`);
  process.exit(1);
}

function get(path) {
  const key = keys[calls++ % keys.length];
  return new Promise((resolve, reject) => {
    const req = http.get(
      { host: base.hostname, port: base.port || 80, path, agent, headers: { authorization: `Bearer ${key}` } },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) return reject(new Error(`${path}: status ${res.statusCode}: ${text.slice(0, 200)}`));
          let body;
          try {
            body = JSON.parse(text);
          } catch {
            return reject(new Error(`${path}: not JSON`));
          }
          if (!Array.isArray(body.data) || !('next_cursor' in body)) return reject(new Error(`${path}: not a list envelope`));
          resolve(body);
        });
      },
    );
    req.on('error', reject);
    req.setTimeout(120000, () => req.destroy(new Error(`${path}: timeout`)));
  });
}

/** Follows next_cursor from `first`; returns the paths of the pages wanted (1-based). */
async function pages(first, wanted, limit) {
  const out = [];
  const last = Math.max(...wanted);
  let path = first;
  for (let n = 1; n <= last; n++) {
    if (wanted.includes(n)) out.push(path);
    const body = await get(path);
    if (body.next_cursor === null) break;
    if (body.data.length !== limit) die(`${path}: a page of ${body.data.length} items before the end`);
    path = `${first}&cursor=${encodeURIComponent(body.next_cursor)}`;
  }
  return out;
}

const enc = encodeURIComponent;
const rotation = [];
for (const w of words) {
  rotation.push(`/v1/products?q=${enc(w)}`);
  rotation.push(...(await pages(`/v1/products?q=${enc(w)}&limit=100`, [1, 2, 3], 100)));
}
for (const c of cats) {
  rotation.push(...(await pages(`/v1/products?category=${enc(c)}&limit=100`, [1, 10, 20, 30, 40, 50], 100)));
}

// Deterministic shuffle (LCG), then keys round robin.
let seed = 12345;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
for (let i = rotation.length - 1; i > 0; i--) {
  const j = Math.floor(rnd() * (i + 1));
  [rotation[i], rotation[j]] = [rotation[j], rotation[i]];
}
writeFileSync(args.out, rotation.map((p, i) => `${keys[i % keys.length]} ${p}\n`).join(''));
agent.destroy();
console.log(JSON.stringify({ requests: rotation.length, words: words.length, categories: cats.length, collected_with: calls }));
