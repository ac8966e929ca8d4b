// bench/events.mjs: GET /v1/events of an account with a million events, page 1 against
// page 1,000 (make bench, step "events"; issue 20: "page 1 and page 1,000 equally
// cheap").
//
//   BASE_URL=… KEY=… node bench/events.mjs [ROUNDS]
//
// KEY belongs to the account bench/run filled. Follows next_cursor from page 1 to page
// 1,000 with limit=100 (99,900 events deep), the same with type=webhook.test (a type one
// event in ten has, pages 1 and 100), then asks for each page ROUNDS times (default 300),
// one request at a time, the pages taking turns, and prints p50 and p99 of each and the
// ratio of the p50s.
import http from 'node:http';

const { BASE_URL, KEY } = process.env;
if (!BASE_URL || !KEY) {
  process.stderr.write('events: BASE_URL and KEY are required\n');
  process.exit(2);
}
const ROUNDS = Number(process.argv[2] ?? 300);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function get(path) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.get(new URL(path, BASE_URL), { agent, headers: { Authorization: `Bearer ${KEY}` } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        if (res.statusCode !== 200) reject(new Error(`${path}: ${res.statusCode} ${Buffer.concat(chunks).toString().slice(0, 200)}`));
        else resolve({ ms, body: JSON.parse(Buffer.concat(chunks).toString()) });
      });
    });
    req.on('error', reject);
  });
}

/** The URL of page `page` (1-based) of `query`, found by following next_cursor. */
async function pageUrl(query, page) {
  let url = `/v1/events?${query}`;
  for (let i = 1; i < page; i++) {
    const { body } = await get(url);
    if (body.next_cursor === null) throw new Error(`${query}: only ${i} pages`);
    url = `/v1/events?${query}&cursor=${body.next_cursor}`;
  }
  return url;
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

async function compare(label, query, deep) {
  const first = await pageUrl(query, 1);
  const far = await pageUrl(query, deep);
  const times = { first: [], far: [] };
  let items = 0;
  for (let i = 0; i < ROUNDS; i++) {
    for (const [k, url] of [['first', first], ['far', far]]) {
      const { ms, body } = await get(url);
      times[k].push(ms);
      items += body.data.length;
    }
  }
  if (items !== ROUNDS * 2 * 100) throw new Error(`${label}: pages of fewer than 100 events`);
  const f = (xs) => `p50 ${pct(xs, 50).toFixed(2)} ms, p99 ${pct(xs, 99).toFixed(2)} ms`;
  console.log(`events: ${label}: page 1 ${f(times.first)}; page ${deep} ${f(times.far)}; ` +
    `page ${deep} / page 1 (p50) ${(pct(times.far, 50) / pct(times.first, 50)).toFixed(2)}`);
}

await compare('all types, limit=100', 'limit=100', 1000);
await compare('type=webhook.test (one event in ten), limit=100', 'type=webhook.test&limit=100', 100);
agent.destroy();
