// The search attacker of search.test.mjs, in a process of its own so that the test can
// run it at the lowest CPU priority: on this 2-core machine the attacker's own client
// would otherwise take the CPU the victim's requests need, which a real attacker's
// machine does not. Sends the most expensive searches on 8 connections, ignoring every
// refusal, until SIGTERM; then prints its counts as JSON.
//   node attacker.mjs BASE_URL KEY CATEGORIES(comma-separated)
const [base, key, cats] = process.argv.slice(2);
const categories = cats.split(',');
// Phrases of words found everywhere that match nothing, a word and its exclusion, an
// exclusion alone, OR-ed phrases, in every sort, with filters the walk does not read,
// pages of 50 to 100.
const QUERIES = ['"includes client"', '"dashboard poster"', 'includes -includes', '-includes',
  '"client work" or "play retro" or "soft grain"', 'retro -retro or kit -kit', 'zebra quokka'];
const SORTS = ['newest', 'price_asc', 'price_desc', 'relevance'];

function expensive(i) {
  const q = encodeURIComponent(QUERIES[i % QUERIES.length]);
  const sort = SORTS[Math.floor(i / QUERIES.length) % SORTS.length];
  const extra = i % 3 === 0 ? '&min_price=1&max_price=99999'
    : i % 3 === 1 ? `&category=${categories[i % categories.length]}` : '';
  return `${base}/v1/products?q=${q}&sort=${sort}&limit=${50 + (i % 51)}${extra}`;
}

const statuses = {};
let stop = false;
let n = 0;
process.on('SIGTERM', () => { stop = true; });
async function connection() {
  while (!stop) {
    try {
      const r = await fetch(expensive(n++), { headers: { authorization: `Bearer ${key}` } });
      const body = await r.json().catch(() => null);
      const k = r.status === 429 ? `429 ${body?.error?.code}` : String(r.status);
      statuses[k] = (statuses[k] ?? 0) + 1;
    } catch (e) {
      statuses.error = (statuses.error ?? 0) + 1;
    }
  }
}
await Promise.all(Array.from({ length: 8 }, connection));
console.log(JSON.stringify({ requests: n, statuses }));
