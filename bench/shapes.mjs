// bench/shapes.mjs: the latency of searches of every shape, one request at a time, on a
// large catalogue (issue 21: "every request is cheap whatever it matches").
//
//   BASE_URL=http://127.0.0.1:18090 KEY=sk_test_... node bench/shapes.mjs [REQUESTS]
//
// For each shape (a q that matches nothing, a few, a phrase of common words, an exclusion
// alone, a common word), in each sort, REQUESTS requests (default 40), each with another
// `limit` (20..59) so that no worker answers it from its page cache; prints p50 and p99 in
// ms and the items of the first page. With SELLER=handle, that seller's profile first.
// Ratios against another run are what to quote.
import { readFileSync } from 'node:fs';

const base = process.env.BASE_URL;
const key = process.env.KEY;
if (!base || !key) {
  console.error('shapes: BASE_URL and KEY are required');
  process.exit(2);
}
const requests = Number(process.argv[2] ?? 40);
// The shapes are in bench/shapes.txt (one list, also read by bench/search_peers): a name, a
// tab, then q.
const shapes = readFileSync(new URL('./shapes.txt', import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => line !== '' && !line.startsWith('#'))
  .map((line) => line.split('\t'));
const sorts = ['newest', 'price_asc', 'price_desc', 'relevance'];

const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
console.log(`${'shape'.padEnd(40)} ${'sort'.padEnd(11)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} items`);
async function measure(name, sort, pathOf) {
  const times = [];
  let items = 0;
  for (let i = 0; i < requests; i++) {
    const url = `${base}${pathOf(20 + (i % 40))}`;
    const t0 = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    const body = await res.json();
    times.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
    if (i === 0) items = (body.data ?? body.products.data).length;
  }
  times.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(40)} ${sort.padEnd(11)} ${pct(times, 50).toFixed(1).padStart(8)} ${pct(times, 99).toFixed(1).padStart(8)} ${items}`,
  );
}

// A few requests first, not timed: the client's first ones (its connections, node's
// compilation of fetch) took 50 - 140 ms, which the first shape measured would count as
// the server's p99.
for (let i = 0; i < 10; i++) {
  const res = await fetch(`${base}/v1/products?limit=1`, { headers: { authorization: `Bearer ${key}` } });
  await res.arrayBuffer();
}

// SELLER: a seller's profile (the biggest seller's, say: its product count is kept).
if (process.env.SELLER) await measure(`seller ${process.env.SELLER}`, 'newest', (limit) => `/v1/sellers/${process.env.SELLER}?limit=${limit}`);
for (const [name, q] of shapes) {
  for (const sort of sorts) {
    await measure(name, sort, (limit) => `/v1/products?q=${encodeURIComponent(q)}&sort=${sort}&limit=${limit}`);
  }
}
