// Whole and exact search pages (issue 33, item 1; docs/contract.md sections 5 and 6).
//
// On GET /v1/products (every q, sort and filter) and on a seller's catalogue (GET
// /v1/sellers/:id, newest first), a walk of N results takes ceil(N / limit) requests (one
// for N = 0), every page but the last is full, and the pages together are exactly the
// matching rows in the contract's order. This proves it on a catalogue of 200,000 seeded
// products (plus a few hundred imported ones with rare words, tied creation times and
// prices, drafts, archived and live-mode rows), with at least 1,000 cases drawn from the
// catalogue's own vocabulary: common, rare, absent and mixed-frequency words, pairs that
// are common apart but rare together, three words, phrases, `or`, `-word` and exclusions
// alone, times the four sorts and the default, times filters (category, seller,
// min_price, max_price and their combinations), times limits from 1 to 100. Each case is
// walked through next_cursor to its end (at least 1,000 of them; a case whose N is too
// large for the request budget is walked for its first pages only, counted apart) and
// compared, page by page and id for id, with a reference computed without any index.
//
// The reference (written from the contract, not from the engine's SQL), in transactions
// with index scans, bitmap scans and index-only scans off (every statement's plan is
// checked to read no index):
//   * the published test products, read once: id, created_at, price (the price column),
//     category, seller, and the lexemes of title_search;
//   * for each distinct q, one sequential scan answers its matches: mode 'test', status
//     'published', search @@ websearch_to_tsquery('english', q);
//   * here: the filters, and the order of contract sections 5 and 6: newest = created_at,
//     id descending; price_asc = price, id ascending; price_desc = both descending;
//     relevance = rank, id descending, where the rank is the number of q's distinct
//     lexemes outside any exclusion (read from websearch_to_tsquery's text) that the
//     title's tsvector holds. The default sort is relevance with q, newest without;
//   * and, for 25 of the cases, the whole answer again by one SQL statement each (filters,
//     order and rank in SQL): it must be the one computed here.
//
// Run by tests/search_exact/run (make search-exact-check), which starts a stack with the
// page cache off and the rate limit lifted. Against a stack of your own:
//   MARKET_PAGE_CACHE_MS=0 MARKET_RATE_LIMIT=1000000000 MARKET_KEY_INFLIGHT=256 \
//       tools/stack up --dir /tmp/s --port 18080 >/tmp/s.env && . /tmp/s.env
//   node tests/search_exact/exact.mjs      (seeds once; a second run reuses the catalogue)
//
// Environment:
//   SEARCH_EXACT_SEED         the random seed of the cases (default 33001; printed)
//   SEARCH_EXACT_PRODUCTS     products seeded (default 200000)
//   SEARCH_EXACT_QUERIES      distinct q drawn (default 250; 5 cases each)
//   SEARCH_EXACT_CONCURRENCY  walks in flight at once (default 4)
//   SEARCH_EXACT_WALK_SECONDS the walks stop after this long; cases not walked fail (240)
//   SEARCH_EXACT_ONLY         comma-separated case numbers: walk only those (the same
//                             seed draws the same cases)
//   SEARCH_EXACT_VERBOSE=1    print every failed case in full (default: the first 40)
//   SEARCH_EXACT_LIST=1       print every q drawn, its tsquery and its number of matches
import { spawn } from 'node:child_process';
import { adminResult, importDoc, newKey, psql, BASE_URL, MARKET_DB } from '../e2e/lib/stack.mjs';

const env = process.env;
const SEED = Number(env.SEARCH_EXACT_SEED ?? 33001);
const PRODUCTS = Number(env.SEARCH_EXACT_PRODUCTS ?? 200000);
const QUERIES = Number(env.SEARCH_EXACT_QUERIES ?? 250);
const CONCURRENCY = Number(env.SEARCH_EXACT_CONCURRENCY ?? 4);
const WALK_SECONDS = Number(env.SEARCH_EXACT_WALK_SECONDS ?? 240);
const ONLY = env.SEARCH_EXACT_ONLY ? new Set(env.SEARCH_EXACT_ONLY.split(',').map(Number)) : null;
const VERBOSE = env.SEARCH_EXACT_VERBOSE === '1';
const SELLERS = Math.max(1, Math.round(PRODUCTS / 800)); // about 720 published products each

// A walk may take up to PAGE_BUDGET pages; a few large ones up to LARGE_PAGES each, within
// LARGE_BUDGET pages in all; a case whose N needs more at limit 100 is walked for its
// first CAPPED_PAGES pages only (each full, the prefix exact) and counted apart.
const PAGE_BUDGET = 40;
const LARGE_PAGES = 400;
const LARGE_BUDGET = 3000;
const CAPPED_PAGES = 10;
// A walk that goes on past its expected pages is followed this much further (to show how
// many requests it takes), then given up.
const EXTRA_REQUESTS = 60;

const t0 = performance.now();
const elapsed = () => `${((performance.now() - t0) / 1000).toFixed(1)} s`;
const log = (s) => console.log(`search-exact: ${s}`);
const fmt = (n) => n.toLocaleString('en-US');

if (!BASE_URL || !MARKET_DB) {
  console.error('search-exact: BASE_URL and MARKET_DB are not set: run tests/search_exact/run, ' +
    'or eval the output of tools/stack up first');
  process.exit(2);
}

// --------------------------------------------------------------------------------------
// Randomness: one seeded generator (mulberry32), so that a seed draws the same cases.

function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const r = {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (xs) => xs[Math.floor(next() * xs.length)],
    chance: (p) => next() < p,
    weighted: (pairs) => { // [[weight, value], ...]
      let x = next() * pairs.reduce((s, [w]) => s + w, 0);
      for (const [w, v] of pairs) if ((x -= w) < 0) return v;
      return pairs[pairs.length - 1][1];
    },
    shuffle: (xs) => {
      for (let i = xs.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [xs[i], xs[j]] = [xs[j], xs[i]];
      }
      return xs;
    },
  };
  return r;
}

// --------------------------------------------------------------------------------------
// PostgreSQL, through psql: asynchronous, so that two reference scripts run at once.

function psqlAsync(sql) {
  return new Promise((resolve, reject) => {
    const child = spawn('psql', ['-X', '-q', '-A', '-t', '-F', '\x1f', '-v', 'ON_ERROR_STOP=1',
      '-d', MARKET_DB, '-f', '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out = [];
    let err = '';
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => { err += d; });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`psql failed (${code}): ${err.trim().slice(0, 2000)}`));
      else resolve(Buffer.concat(out).toString('utf8'));
    });
    child.stdin.end(sql);
  });
}

const lit = (s) => `'${String(s).replaceAll("'", "''")}'`;
const textArray = (xs) => `ARRAY[${xs.map(lit).join(',')}]::text[]`;
// Two scripts run at once (one per core): neither asks for parallel workers of its own.
const NO_INDEX = 'SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;' +
  ' SET LOCAL enable_indexonlyscan = off; SET LOCAL max_parallel_workers_per_gather = 0;';

/** Runs statements with every index scan off; checks that no plan reads an index; returns
 * each statement's rows (arrays of fields). */
async function noIndexRows(statements) {
  let script = `BEGIN;\n${NO_INDEX}\n`;
  statements.forEach((s, i) => {
    script += `\\echo @@plan ${i}\nEXPLAIN (COSTS OFF, FORMAT JSON) ${s};\n\\echo @@rows ${i}\n${s};\n`;
  });
  script += 'COMMIT;\n';
  const out = await psqlAsync(script);
  const plans = statements.map(() => []);
  const rows = statements.map(() => []);
  let into = null;
  let isPlan = false;
  for (const line of out.split('\n')) {
    const m = /^@@(plan|rows) (\d+)$/.exec(line);
    if (m) {
      isPlan = m[1] === 'plan';
      into = (isPlan ? plans : rows)[Number(m[2])];
      continue;
    }
    if (line === '' || into === null) continue;
    into.push(isPlan ? line : line.split('\x1f'));
  }
  // Every node of every plan (subplans included) is a scan of no index.
  const nodes = (plan) => [plan['Node Type'], ...(plan.Plans ?? []).flatMap(nodes)];
  plans.forEach((plan, i) => {
    const types = plan.length ? nodes(JSON.parse(plan.join('\n'))[0].Plan) : [];
    if (types.length === 0 || types.some((t) => /Index|Bitmap/.test(t))) {
      throw new Error(`the reference statement ${i} is planned with an index (${types.join(', ')}):\n${statements[i]}`);
    }
  });
  return rows;
}

// --------------------------------------------------------------------------------------
// Exact decimals: a price as an integer of 10^-8 units (the column is numeric; seeded and
// imported prices have at most 4 decimals, so nothing is lost, which is checked).

function decimal(s) {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(s);
  if (!m) throw new Error(`not a decimal: ${s}`);
  const frac = (m[2] ?? '').padEnd(8, '0');
  if (/[1-9]/.test(frac.slice(8))) throw new Error(`a price with more than 8 decimals: ${s}`);
  return BigInt(m[1]) * 100000000n + BigInt(frac.slice(0, 8));
}

// --------------------------------------------------------------------------------------
// q's lexemes outside any exclusion, from websearch_to_tsquery's text: the words whose
// presence in the title makes the rank (contract section 6). The text is a tsquery's:
// 'lexeme' (quotes doubled inside), !, &, |, <->, <N>, parentheses. A literal is excluded
// when an odd number of ! applies to it (websearch only ever writes one: -word, -"a b").

function rankWords(tsq) {
  const words = new Set();
  const re = /\s*(?:'((?:[^']|'')*)'(?::[*A-D]+)?|(!)|(\()|(\))|(&|\||<->|<\d+>))/y;
  const frames = [false]; // per parenthesis: excluded
  let pending = false; // a ! waits for its operand
  let pos = 0;
  while (pos < tsq.length) {
    re.lastIndex = pos;
    const m = re.exec(tsq);
    if (!m) {
      if (/^\s*$/.test(tsq.slice(pos))) break;
      throw new Error(`cannot read the tsquery ${JSON.stringify(tsq)} at ${pos}`);
    }
    pos = re.lastIndex;
    const excluded = frames[frames.length - 1];
    if (m[1] !== undefined) {
      if (excluded === pending) words.add(m[1].replaceAll("''", "'"));
      pending = false;
    } else if (m[2]) {
      pending = !pending;
    } else if (m[3]) {
      frames.push(excluded !== pending);
      pending = false;
    } else if (m[4]) {
      frames.pop();
    }
  }
  return [...words].sort();
}

// The reader's own check, on tsqueries as PostgreSQL writes them.
for (const [text, words] of [
  ["'retro' <-> 'aurora' | !'cozi' & 'fjord'", ['aurora', 'fjord', 'retro']],
  ["!( 'retro' <-> 'aurora' ) & 'cozi'", ['cozi']],
  ["'retro' & !( 'cozi' <-> 'fjord' ) | 'minim' & !'nova'", ['minim', 'retro']],
  ["!'includ'", []], ['', []], ["!!'retro'", ['retro']], ["'it''s' <2> 'x':*", ["it's", 'x']],
]) {
  const got = rankWords(text);
  if (JSON.stringify(got) !== JSON.stringify(words)) throw new Error(`rankWords(${text}) = ${JSON.stringify(got)}, not ${JSON.stringify(words)}`);
}

// --------------------------------------------------------------------------------------
// The catalogue: the seed, then the imported products that give it what a seed has not
// (its rarest word is in 1.3 % of the products): rare words, ties of creation time and
// price across ids that sort around the seeded ones, drafts, archived and live rows.

const RARE = [ // word, products holding it (about)
  ['quokka', 1], ['axolotl', 1], ['pangolin', 1], ['narwhal', 2], ['okapi', 2], ['tapir', 3],
  ['wombat', 4], ['dugong', 5], ['caracal', 7], ['quetzal', 9], ['kinkajou', 12],
  ['tarsier', 15], ['capybara', 20], ['marmoset', 26], ['numbat', 34], ['ibex', 45],
  ['gharial', 60], ['saola', 80], ['zorilla', 110], ['fossa', 150],
];
// Only in drafts, archived and live products: absent from every answer.
const HIDDEN = ['hoatzin', 'solenodon'];
const ADJECTIVES = ['Minimal', 'Retro', 'Vintage', 'Modern', 'Bold', 'Cozy', 'Dark', 'Golden',
  'Nordic', 'Neon'];
const THEMES = ['Aurora', 'Harbor', 'Fjord', 'Kite', 'Lotus', 'Ember', 'Nova'];
const NOUNS = ['Grotesk', 'Serif', 'Icon Set', 'Mug Mockup', 'Loop Pack', 'Blog Theme', 'Skies',
  'Lightroom Presets'];
const CATEGORIES = ['fonts', 'icons', 'mockups', 'audio', 'themes', 'photos', 'presets'];
// Creation times, many shared: ties broken by id (some after the seed's newest, 2026-11-01).
const TIMES = ['2026-11-20T10:00:00Z', '2026-11-20T10:00:00.000001Z', '2026-11-15T08:30:00.5Z',
  '2026-06-01T12:00:00.123456Z', '2026-06-01T12:00:00.123457Z', '2025-11-05T00:00:00Z',
  '2025-03-03T03:03:03Z', '2024-11-02T00:00:00Z', '2024-06-30T23:59:59.999999Z'];
const PRICES = { // the lowest tier's price, per currency (ties across currencies on purpose)
  USD: ['0', '4.99', '5', '18.99', '19', '24', '1200'],
  EUR: ['4.99', '19', '79'],
  JPY: ['0', '500', '1200', '4800'],
  KWD: ['1.234', '5', '19'],
};

function importCatalogue(bigSellers) {
  const r = rng(20261127); // the catalogue is the same whatever SEARCH_EXACT_SEED
  const rareWeights = RARE.map(([w, n]) => [n, w]);
  const cap = (w) => w[0].toUpperCase() + w.slice(1);
  const pad = (n) => String(n).padStart(4, '0');
  const status = () => r.weighted([[18, 'published'], [1, 'draft'], [1, 'archived']]);
  const product = (n, mode, status, seller, hidden) => {
    const rare = () => (hidden ? r.pick(HIDDEN) : r.weighted(rareWeights));
    const shape = r.int(1, 20);
    let title;
    let descWord = '';
    if (shape <= 10) title = `${r.pick(ADJECTIVES)} ${cap(rare())} ${r.pick(NOUNS)}`;
    else if (shape <= 14) title = `${cap(rare())} ${cap(rare())} ${r.pick(THEMES)}`;
    else if (shape <= 17) {
      title = `${r.pick(ADJECTIVES)} ${r.pick(THEMES)} ${r.pick(NOUNS)}`;
      descWord = ` with a ${rare()}`; // matched by its description alone
    } else title = `${cap(rare())} ${rare()} ${r.pick(NOUNS)}`; // a word twice
    if (r.chance(0.3)) descWord += ` and a ${rare()}`;
    const includes = r.chance(0.5) ? ' Includes layered one-shots.' : '';
    const currency = r.weighted([[6, 'USD'], [2, 'EUR'], [2, 'JPY'], [1, 'KWD']]);
    const low = r.pick(PRICES[currency]);
    const tiers = [{ id: `tier_sx${mode[0]}${n}_a`, name: 'Personal', price: Number(low) }];
    if (r.chance(0.5)) tiers.push({ id: `tier_sx${mode[0]}${n}_b`, name: 'Commercial', price: Math.floor(Number(low)) + 10 });
    // Ids before, among and after the seeded ones (prod_t0000001...), in byte order.
    const kind = n % 4;
    const id = kind === 0 ? `prod_A${mode[0]}${pad(n)}`
      : kind === 1 ? `prod_sx${mode[0]}${pad(n)}`
        : kind === 2 ? `prod_t${String(r.int(1, PRODUCTS)).padStart(7, '0')}_${mode[0]}${n}`
          : `prod_zz${mode[0]}${pad(n)}`;
    return {
      id, seller, title, category: r.pick(CATEGORIES), currency, status,
      description: `${r.pick(ADJECTIVES)} and hand-crafted${descWord}.${includes}`,
      created_at: r.pick(TIMES), tiers,
    };
  };

  const test = [];
  for (let n = 1; n <= 480; n++) {
    const seller = n <= 12 ? 'sx-small' : r.pick(bigSellers);
    const s = n <= 12 ? (n <= 9 ? 'published' : n === 10 ? 'draft' : 'archived') : status();
    test.push(product(n, 'test', s, seller, s !== 'published' && r.chance(0.5)));
  }
  for (let n = 481; n <= 484; n++) test.push(product(n, 'test', 'draft', 'sx-empty', false));
  importDoc({
    mode: 'test',
    accounts: [{ id: 'acct_sx_small' }, { id: 'acct_sx_empty' }],
    sellers: [{ id: 'sx-small', account: 'acct_sx_small', name: 'SX Small' },
      { id: 'sx-empty', account: 'acct_sx_empty', name: 'SX Empty' }],
    products: test,
  });
  const live = [];
  for (let n = 1; n <= 40; n++) live.push(product(n, 'live', 'published', n <= 6 ? 'sx-small' : r.pick(bigSellers), n % 3 === 0));
  importDoc({ mode: 'live', products: live });
}

async function prepareCatalogue() {
  const have = Number(psql("SELECT count(*) FROM products WHERE mode = 'test' AND id LIKE 'prod_t%'"));
  const imported = psql("SELECT count(*) FROM sellers WHERE id = 'sx-small'") === '1';
  if (have >= PRODUCTS && imported) {
    log(`the catalogue is there already (${fmt(have)} seeded test products): not seeded again`);
    return null;
  }
  if (have > 0) throw new Error(`the stack holds ${have} seeded test products, not ${PRODUCTS}: use a fresh stack`);
  const s0 = performance.now();
  const out = adminResult(['seed', '--mode', 'test', '--products', String(PRODUCTS), '--sellers', String(SELLERS), '--orders', '0']);
  if (out.status !== 0) throw new Error(`market-admin seed exited with ${out.status}: ${out.stderr.trim()}`);
  const seedSeconds = (performance.now() - s0) / 1000;
  log(`seeded in ${seedSeconds.toFixed(1)} s: ${`${out.stdout}\n${out.stderr}`.trim().split('\n').pop()}`);
  const big = psql("SELECT seller_id FROM products WHERE mode = 'test' AND status = 'published'" +
    ' GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 3').split('\n');
  const i0 = performance.now();
  importCatalogue(big);
  psql('ANALYZE products');
  log(`imported 524 more products (rare words, ties, drafts, live) and analyzed in ${((performance.now() - i0) / 1000).toFixed(1)} s`);
  return seedSeconds;
}

// --------------------------------------------------------------------------------------
// The rows, read once without an index: every published test product's sort keys and
// filter columns, and the vocabulary (lexemes with their document counts, titles and
// descriptions for real words and phrases, the lexemes of each product for co-occurrence).

async function readCatalogue() {
  const published = "p.mode = 'test' AND p.status = 'published'";
  const [rowsOut, searchStat, texts] = await noIndexRows([
    'SELECT p.id, (extract(epoch FROM p.created_at) * 1000000)::bigint, p.price, p.category,' +
      " p.seller_id, p.title, array_to_string(tsvector_to_array(p.title_search), ' ')," +
      ` array_to_string(tsvector_to_array(p.search), ' ') FROM products p WHERE ${published}`,
    `SELECT word, ndoc FROM ts_stat(${lit(`SELECT p.search FROM products p WHERE ${published}`)})`,
    `SELECT DISTINCT p.description FROM products p WHERE ${published}`,
  ]);
  const rows = []; // the published test products; a row's number is its index, in id order
  const lists = new Map(); // lexeme of search -> row numbers, ascending
  // In id order, not the scan's (which depends on where the seed's jobs wrote): a seed
  // draws the same cases on every run.
  rowsOut.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [id, us, price, category, seller, title, titleLexemes, lexemes] of rowsOut) {
    const i = rows.length;
    // price in 10^-8 units is a whole number well below 2^53: a Number compares it exactly.
    const p = decimal(price);
    if (p > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`a price too large to compare here: ${price}`);
    rows.push({
      i, id, created: Number(us), price: Number(p), priceText: price, category, seller, title,
      titleLexemes: titleLexemes ? titleLexemes.split(' ') : [],
    });
    for (const w of lexemes.split(' ')) {
      if (!lists.has(w)) lists.set(w, []);
      lists.get(w).push(i);
    }
  }
  const postings = new Map([...lists].map(([w, l]) => [w, Int32Array.from(l)]));
  // The filter columns as numbers, for the loops over every row.
  const codes = (key) => {
    const map = new Map();
    const col = Int32Array.from(rows, (row) => {
      if (!map.has(row[key])) map.set(row[key], map.size);
      return map.get(row[key]);
    });
    return { map, col };
  };
  const columns = {
    category: codes('category'), seller: codes('seller'), price: Float64Array.from(rows, (row) => row.price),
  };
  const number = new Map(rows.map((row) => [row.id, row.i]));
  // Every row in each order of the contract, once: a case keeps those of its matches.
  const sorted = (cmp) => Int32Array.from(rows.map((row) => row.i).sort((a, b) => cmp(rows[a], rows[b])));
  const order = {
    newest: sorted(ORDERS.newest), price_asc: sorted(ORDERS.price_asc), price_desc: sorted(ORDERS.price_desc),
    id_desc: sorted(ORDERS.id_desc),
  };
  const position = {}; // row number -> its place in each order
  for (const [name, o] of Object.entries(order)) {
    position[name] = new Int32Array(o.length);
    o.forEach((i, k) => { position[name][i] = k; });
  }
  if ((MAX_RANK + 1) * rows.length > 2 ** 31) throw new Error('too many rows for the relevance keys');
  return {
    rows, number, order, position, postings, columns, all: Int32Array.from(rows, (row) => row.i),
    ndoc: new Map(searchStat.map(([w, n]) => [w, Number(n)])),
    descriptions: texts.map(([d]) => d),
  };
}

function together(postings, words) {
  const lists = words.map((w) => postings.get(w) ?? new Int32Array(0)).sort((a, b) => a.length - b.length);
  let acc = lists[0];
  for (const l of lists.slice(1)) {
    const out = [];
    let j = 0;
    for (const x of acc) {
      while (j < l.length && l[j] < x) j++;
      if (j < l.length && l[j] === x) out.push(x);
    }
    acc = out;
  }
  return acc.length;
}

// --------------------------------------------------------------------------------------
// The queries, drawn from the vocabulary.

async function vocabulary(cat) {
  // Real words as written (q is stemmed again by the API, so it must be a word, not a
  // lexeme): every token of the titles and descriptions, with the lexeme PostgreSQL's
  // english configuration makes of it.
  const tokens = new Set();
  const add = (text) => {
    for (const t of text.split(/[\s,.;:!?()"]+/)) if (/^[A-Za-z][A-Za-z0-9'-]*$/.test(t)) tokens.add(t.toLowerCase());
  };
  const titles = cat.rows.map((row) => row.title);
  for (const t of new Set(titles)) add(t);
  for (const d of cat.descriptions) add(d);
  const list = [...tokens].sort();
  const out = await psqlAsync(`SELECT t, websearch_to_tsquery('english', t)::text FROM unnest(${textArray(list)}) t;`);
  const word = new Map(); // lexeme -> a word that gives it alone
  const hyphenated = [];
  for (const line of out.split('\n')) {
    if (!line) continue;
    const [t, q] = line.split('\x1f');
    const m = /^'([^']+)'$/.exec(q);
    if (m && !word.has(m[1])) word.set(m[1], t);
    else if (/<->|<\d+>/.test(q) && t.includes('-')) hyphenated.push(t);
  }
  const known = (lo, hi) => [...cat.ndoc].filter(([w, n]) => word.has(w) && n >= lo && n < hi)
    .map(([w]) => w).sort();
  return {
    word, hyphenated: hyphenated.sort(), titles,
    common: known(10000, Infinity), mid: known(1000, 10000), rare: known(1, 1000),
  };
}

function drawQueries(r, cat, voc, count) {
  const surface = (lexeme) => {
    let w = voc.word.get(lexeme);
    if (r.chance(0.12)) w = w.toUpperCase();
    else if (r.chance(0.2)) w = w[0].toUpperCase() + w.slice(1);
    return w;
  };
  const absentWord = () => r.weighted([
    [3, `zq${'bcdfghjklmnpqrstvwxz'.split('').map(() => r.pick('bcdfghjkmnpqrstvwxz')).join('').slice(0, r.int(3, 7))}`],
    [2, r.pick(['elephant', 'submarine', 'tangerine', 'accordion', 'volcano', 'über', 'café'])],
    [2, r.pick(HIDDEN)], // only in drafts, archived and live rows
  ]);
  const w = (cls) => {
    if (cls === 'absent') return absentWord();
    return surface(r.pick(voc[cls]));
  };
  const cls = () => r.weighted([[3, 'common'], [3, 'mid'], [3, 'rare'], [1, 'absent']]);
  // Words of one product (so that they are found together), of mixed frequencies: its
  // lexemes that a word gives, the first of them of the class asked when it has one.
  const has = (list, i) => {
    let lo = 0, hi = list.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid] === i) return true;
      if (list[mid] < i) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  };
  const classOf = (lexeme) => (voc.rare.includes(lexeme) ? 'rare' : voc.mid.includes(lexeme) ? 'mid' : 'common');
  const wordsOfOne = (first, count) => {
    const list = cat.postings.get(r.pick(voc[first]));
    const i = list[r.int(0, list.length - 1)];
    const lexemes = r.shuffle([...cat.postings].filter(([lexeme, l]) => voc.word.has(lexeme) && has(l, i)).map(([lexeme]) => lexeme));
    const picked = [lexemes.find((x) => classOf(x) === first)];
    for (const x of lexemes) if (picked.length < count && !picked.includes(x) && classOf(x) !== first) picked.push(x);
    for (const x of lexemes) if (picked.length < count && !picked.includes(x)) picked.push(x);
    return r.shuffle(picked).map(surface);
  };
  const titleWords = () => r.pick(voc.titles).split(' ');
  const phrase = () => {
    const t = titleWords();
    const len = t.length >= 3 && r.chance(0.3) ? 3 : 2;
    const at = r.int(0, t.length - len);
    let ws = t.slice(at, at + len);
    if (r.chance(0.25)) ws = ws.reverse(); // the same words, not adjacent in that order
    return `"${ws.join(' ')}"`;
  };
  // Pairs of words each in 1,000 products or more, with the products holding both.
  const pool = [...voc.common, ...voc.mid];
  const pairs = [];
  for (let i = 0; i < 3000; i++) {
    const a = r.pick(pool), b = r.pick(pool);
    if (a !== b) pairs.push([a, b, together(cat.postings, [a, b])]);
  }
  // Rare together: at most 30 products, or a 40th of the rarer word's (a seeded title
  // holds one adjective, one theme and one noun of its category, so most pairs of words in
  // thousands of products are in hundreds together or in none).
  const apartNone = pairs.filter(([, , n]) => n === 0);
  const apartFew = pairs.filter(([a, b, n]) => n > 0 && n <= Math.max(30, Math.min(cat.ndoc.get(a), cat.ndoc.get(b)) / 40));
  const oftenTogether = pairs.filter(([, , n]) => n >= 1000);
  const fromPairs = (list) => {
    if (list.length === 0) return `${w('common')} ${w('rare')}`;
    const [a, b] = r.pick(list);
    return `${surface(a)} ${surface(b)}`;
  };
  // Common apart, few products (or none) hold both.
  const rareTogether = () => fromPairs(r.chance(0.8) && apartFew.length ? apartFew : apartNone);
  const commonPair = () => fromPairs(oftenTogether);
  const kinds = [
    [18, 'common', () => w('common')],
    [14, 'mid', () => w('mid')],
    [20, 'rare', () => w('rare')],
    [10, 'absent', () => (r.chance(0.2) ? r.pick(['the', 'a or the', 'and']) : absentWord())],
    [18, 'mixed pair', () => (r.chance(0.7) ? wordsOfOne('rare', 2) : r.shuffle([w('common'), w('rare')])).join(' ')],
    [24, 'rare together', rareTogether],
    [8, 'common pair', commonPair],
    // Two words of one title, as the shared benchmark's searches are ("dusty raven"): each
    // word in many titles, both in few, so the top rank is read through the index of the
    // titles' pairs of words (sql/migrations/023_title_pairs.sql).
    [12, 'title pair', () => r.shuffle(titleWords().slice(0, 2)).join(' ')],
    [20, 'three words', () => r.weighted([
      [3, wordsOfOne(r.pick(['rare', 'mid', 'common']), 3)],
      [2, titleWords().slice(0, 3)],
      [1, [w(cls()), w(cls()), w(cls())]],
    ]).join(' ')],
    [24, 'phrase', () => r.weighted([
      [6, phrase()],
      [2, `${phrase()} ${w(cls())}`],
      [1, r.pick(voc.hyphenated)],
      [1, `"${w('common')} ${w('common')}"`],
    ])],
    [20, 'or', () => r.weighted([
      [3, `${w(cls())} or ${w(cls())}`],
      [1, `${w('rare')} or ${w('rare')}`],
      [1, `${w('absent')} or ${w('rare')}`],
      [1, `${w(cls())} or ${w(cls())} or ${w(cls())}`],
      [1, `${phrase()} or ${w(cls())}`],
    ])],
    [22, '-word', () => r.weighted([
      [3, `${w(cls())} -${w(cls())}`],
      [2, `${w('common')} -${w('common')}`],
      [1, `${w('rare')} -${w('common')}`],
      [1, `${w('common')} -${w('rare')}`],
      [1, (() => { const x = w('common'); return `${x} -${x}`; })()],
      [1, `${w(cls())} -${phrase()}`],
      [1, `${phrase()} -${w(cls())}`],
    ])],
    [12, 'exclusion only', () => r.weighted([
      [2, `-${w(cls())}`],
      [1, '-includes'],
      [1, `-includes -${w('rare')}`],
      [1, `-${w('common')} -${w('common')}`],
      [1, `-${phrase()}`],
    ])],
    [10, 'mixed', () => r.weighted([
      [1, `${phrase()} or ${w(cls())} -${w(cls())}`],
      [1, `${w(cls())} ${w(cls())} or ${w(cls())} -${w(cls())}`],
      [1, `${w(cls())} or -${w(cls())}`],
    ])],
  ];
  log(`pairs of words in 1,000 products or more: ${apartNone.length} never together, ${apartFew.length} rarely` +
    ` together, ${oftenTogether.length} in 1,000 or more together (of ${pairs.length} drawn)`);
  const seen = new Set();
  const queries = [];
  for (let tries = 0; queries.length < count && tries < count * 20; tries++) {
    const [, kind, make] = r.weighted(kinds.map((k) => [k[0], k]));
    let q = make();
    if (r.chance(0.05)) q = `  ${q.replace(' ', '   ')} `; // spaces websearch ignores
    if (q.length > 200 || seen.has(q)) continue;
    seen.add(q);
    queries.push({ q, kind });
  }
  return queries;
}

// --------------------------------------------------------------------------------------
// The reference of each q: its matching rows and their ranks, by PostgreSQL without an
// index; two scripts at once (two cores).

async function reference(cat, queries) {
  const tsq = await psqlAsync("SELECT u.i, websearch_to_tsquery('english', u.q)::text" +
    ` FROM unnest(${textArray(queries.map((x) => x.q))}) WITH ORDINALITY u(q, i);`);
  for (const line of tsq.split('\n')) {
    if (!line) continue;
    const [i, text] = line.split('\x1f');
    const x = queries[Number(i) - 1];
    x.tsquery = text;
    x.words = rankWords(text);
  }
  const lost = queries.find((x) => x.words === undefined);
  if (lost) throw new Error(`no tsquery for ${JSON.stringify(lost.q)}`);
  const statement = (x) => "SELECT p.id FROM products p WHERE p.mode = 'test' AND p.status = 'published'" +
    ` AND p.search @@ websearch_to_tsquery('english', ${lit(x.q)})`;
  const shards = [[], []];
  queries.forEach((x, i) => shards[i % 2].push(x));
  await Promise.all(shards.map(async (shard) => {
    const rows = await noIndexRows(shard.map(statement));
    shard.forEach((x, i) => {
      x.matches = Int32Array.from(rows[i].map(([id]) => {
        const n = cat.number.get(id);
        if (n === undefined) throw new Error(`${id} matches ${JSON.stringify(x.q)} but is not among the published rows read`);
        return n;
      })).sort();
    });
  }));
}

const ORDERS = {
  newest: (a, b) => (b.created - a.created) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
  price_asc: (a, b) => (a.price < b.price ? -1 : a.price > b.price ? 1 : 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  price_desc: (a, b) => (a.price < b.price ? 1 : a.price > b.price ? -1 : 0) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
  id_desc: (a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
};

// A case keeps at most this many of its expected ids (all of those of a walk to the end:
// LARGE_PAGES pages of 100 at most), and their count.
const KEEP_IDS = 100 * LARGE_PAGES;
// Above any rank: a rank is a number of q's words (q has at most 200 characters).
const MAX_RANK = 101;

/** The ids a case must answer, in order (the first KEEP_IDS), and how many there are. */
function expectedIds(cat, c) {
  const f = c.filters;
  const min = f.min_price !== undefined ? Number(decimal(f.min_price)) : -Infinity;
  const max = f.max_price !== undefined ? Number(decimal(f.max_price)) : Infinity;
  // A filter's value as its column's code: -1 without the filter, -2 for a value no row has.
  const code = (name) => (f[name] === undefined ? -1 : cat.columns[name].map.get(f[name]) ?? -2);
  const category = code('category'), seller = code('seller');
  const categories = cat.columns.category.col, sellers = cat.columns.seller.col, prices = cat.columns.price;
  const keepRow = (i) => (category < 0 ? category === -1 : categories[i] === category) &&
    (seller < 0 ? seller === -1 : sellers[i] === seller) && prices[i] >= min && prices[i] <= max;
  const sort = c.sort ?? (c.query ? 'relevance' : 'newest');
  const candidates = c.query ? c.query.matches : cat.all;
  // Each kept row's place in the order as one number, sorted: its place in the sort's
  // order of every row (cat.position), or for relevance the rank's place (from the highest)
  // then the place in descending id order.
  const keys = new Int32Array(candidates.length);
  let n = 0;
  let order;
  if (sort === 'relevance') {
    // Each match's rank, once per q: how many of q's words its title's tsvector holds.
    const q = c.query;
    if (!q.ranks) {
      q.ranks = new Int8Array(cat.rows.length).fill(-1);
      for (const i of q.matches) q.ranks[i] = q.words.filter((w) => cat.rows[i].titleLexemes.includes(w)).length;
    }
    const place = cat.position.id_desc, rows = cat.rows.length;
    for (let k = 0; k < candidates.length; k++) {
      const i = candidates[k];
      if (keepRow(i)) keys[n++] = (MAX_RANK - q.ranks[i]) * rows + place[i];
    }
    order = (key) => cat.order.id_desc[key % rows];
  } else {
    const place = cat.position[sort];
    for (let k = 0; k < candidates.length; k++) {
      const i = candidates[k];
      if (keepRow(i)) keys[n++] = place[i];
    }
    order = (key) => cat.order[sort][key];
  }
  const sorted = keys.subarray(0, n).sort();
  const ids = Array.from(sorted.subarray(0, Math.min(n, KEEP_IDS)), (key) => cat.rows[order(key)].id);
  return { ids, n };
}

// --------------------------------------------------------------------------------------
// The cases: each q with sorts, filters and limits; lists without q; sellers' catalogues.

function drawCases(r, cat, queries) {
  const categories = [...new Set(cat.rows.map((x) => x.category))].sort();
  const bySeller = new Map();
  for (const row of cat.rows) bySeller.set(row.seller, (bySeller.get(row.seller) ?? 0) + 1);
  const sellers = [...bySeller].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([s]) => s);
  const trim = (s) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
  const prices = [...new Set(cat.rows.map((x) => trim(x.priceText)))].sort();
  // Filter values are mostly those of a row the case's q matches (so that the filters
  // keep some of its matches), else any: every category, a big seller, the imported small
  // one, and values that match nothing (an unknown category or seller, a price between).
  const filtersFor = (sample) => {
    const matched = () => (r.chance(0.7) ? sample() : undefined);
    const price = () => {
      const row = matched();
      if (row) return trim(row.priceText);
      return r.weighted([[4, r.pick(prices)], [1, r.pick(['0', '10', '25.5', '100', '1000', '1.234', '100000'])]]);
    };
    const priceRange = () => {
      let a = price(), b = price();
      if (decimal(a) > decimal(b)) [a, b] = [b, a];
      return [a, b];
    };
    const seller = () => matched()?.seller ??
      r.weighted([[3, sellers[0]], [3, r.pick(sellers.slice(0, 50))], [2, 'sx-small'], [1, 'nobody-here']]);
    const category = () => matched()?.category ?? (r.chance(0.1) ? 'no-such-category' : r.pick(categories));
    return r.weighted([
      [30, () => ({})],
      [18, () => ({ category: category() })],
      [10, () => ({ seller: seller() })],
      [8, () => ({ min_price: price() })],
      [8, () => ({ max_price: price() })],
      [9, () => { const [a, b] = priceRange(); return { min_price: a, max_price: b }; }],
      [7, () => { const [a, b] = priceRange(); return { category: category(), min_price: a, max_price: b }; }],
      [4, () => ({ category: category(), seller: seller() })],
      [4, () => ({ seller: seller(), max_price: price() })],
      [2, () => { const [a, b] = priceRange(); return { category: category(), seller: seller(), min_price: a, max_price: b }; }],
    ])();
  };
  const limit = () => r.weighted([[40, r.int(1, 10)], [30, r.int(11, 50)], [15, r.int(51, 99)], [15, 100]]);

  const cases = [];
  for (const query of queries) {
    const sample = () => (query.matches.length ? cat.rows[query.matches[r.int(0, query.matches.length - 1)]] : undefined);
    for (let k = 0; k < 5; k++) {
      cases.push({ query, sort: r.pick(['newest', 'price_asc', 'price_desc', 'relevance', undefined]), filters: filtersFor(sample), limit: limit() });
    }
  }
  const any = () => r.pick(cat.rows);
  for (let k = 0; k < 80; k++) {
    cases.push({ query: null, sort: r.pick(['newest', 'price_asc', 'price_desc', undefined]), filters: filtersFor(any), limit: limit() });
  }
  const catalogues = [[sellers[0], 3], ['sx-small', 4], ['sx-empty', 2], [sellers[sellers.length - 1], 2]];
  for (let k = 0; k < 12; k++) catalogues.push([r.pick(sellers), 1]);
  for (const [s, n] of catalogues) for (let k = 0; k < n; k++) cases.push({ catalogue: s, limit: limit() });

  const big = [];
  cases.forEach((c, i) => {
    c.n = i;
    if (c.catalogue !== undefined) {
      c.expected = Array.from(cat.order.newest).filter((j) => cat.rows[j].seller === c.catalogue).map((j) => cat.rows[j].id);
      c.N = c.expected.length;
    } else ({ ids: c.expected, n: c.N } = expectedIds(cat, c));
    const N = c.N;
    c.mode = 'whole';
    if (Math.ceil(N / c.limit) > PAGE_BUDGET) {
      if (N <= 100 * PAGE_BUDGET) c.limit = Math.max(c.limit, Math.ceil(N / PAGE_BUDGET));
      else {
        c.mode = 'capped';
        if (N <= 100 * LARGE_PAGES) big.push(c);
      }
    }
  });
  // Some of the walks too long for the budget are walked to their end all the same.
  let largePages = 0;
  for (const c of r.shuffle(big)) {
    const limit = Math.max(c.limit, Math.ceil(c.N / LARGE_PAGES));
    const pages = Math.ceil(c.N / limit);
    if (largePages + pages > LARGE_BUDGET) continue;
    largePages += pages;
    c.limit = limit;
    c.mode = 'large';
  }
  for (const c of cases) {
    c.pages = c.mode === 'capped' ? CAPPED_PAGES : Math.max(1, Math.ceil(c.N / c.limit));
    if (c.mode === 'capped') c.expected = c.expected.slice(0, CAPPED_PAGES * c.limit);
    else if (c.expected.length !== c.N) throw new Error(`case ${c.n} walks to its end but keeps ${c.expected.length} of ${c.N} ids`);
  }
  for (const q of queries) delete q.mask;
  return cases;
}

/** The reference's own check: for a few cases, the whole answer (filters, order, rank)
 * by one statement in SQL alone, without an index, against the ids computed here. */
async function checkReference(r, cases, count) {
  const pool = r.shuffle(cases.filter((c) => c.catalogue === undefined && c.N > 0));
  const picked = [];
  for (const sort of ['newest', 'price_asc', 'price_desc', 'relevance', undefined]) {
    picked.push(...pool.filter((c) => c.sort === sort && (sort !== 'relevance' || c.query)).slice(0, Math.ceil(count / 5)));
  }
  const order = {
    newest: 'p.created_at DESC, p.id DESC', price_asc: 'p.price, p.id', price_desc: 'p.price DESC, p.id DESC',
  };
  const statement = (c) => {
    const where = ["p.mode = 'test'", "p.status = 'published'"];
    if (c.query) where.push(`p.search @@ websearch_to_tsquery('english', ${lit(c.query.q)})`);
    if (c.filters.category !== undefined) where.push(`p.category = ${lit(c.filters.category)}`);
    if (c.filters.seller !== undefined) where.push(`p.seller_id = ${lit(c.filters.seller)}`);
    if (c.filters.min_price !== undefined) where.push(`p.price >= ${lit(c.filters.min_price)}::numeric`);
    if (c.filters.max_price !== undefined) where.push(`p.price <= ${lit(c.filters.max_price)}::numeric`);
    const sort = c.sort ?? (c.query ? 'relevance' : 'newest');
    const by = sort === 'relevance'
      ? `(SELECT count(*) FROM unnest(p.title_search) t WHERE t.lexeme = ANY(${textArray(c.query.words)})) DESC, p.id DESC`
      : order[sort];
    return `SELECT p.id, count(*) OVER () FROM products p WHERE ${where.join(' AND ')} ORDER BY ${by} LIMIT ${c.expected.length}`;
  };
  const results = await noIndexRows(picked.map(statement));
  picked.forEach((c, i) => {
    const ids = results[i].map(([id]) => id);
    if (JSON.stringify(ids) !== JSON.stringify(c.expected) || Number(results[i][0][1]) !== c.N) {
      throw new Error(`the reference of case ${c.n} (${describe(c)}) differs from SQL's own answer:\n${statement(c)}`);
    }
  });
  return picked.length;
}

const describe = (c) => {
  if (c.catalogue !== undefined) return `GET /v1/sellers/${c.catalogue} limit=${c.limit}`;
  const parts = [];
  if (c.query) parts.push(`q=${JSON.stringify(c.query.q)} [${c.query.kind}]`);
  parts.push(`sort=${c.sort ?? '(default)'}`);
  for (const [k, v] of Object.entries(c.filters)) parts.push(`${k}=${v}`);
  parts.push(`limit=${c.limit}`);
  return parts.join(' ');
};

function path(c, cursor) {
  const p = new URLSearchParams();
  if (c.catalogue !== undefined) {
    p.set('limit', c.limit);
    if (cursor) p.set('cursor', cursor);
    return `/v1/sellers/${encodeURIComponent(c.catalogue)}?${p}`.replaceAll('+', '%20');
  }
  if (c.query) p.set('q', c.query.q);
  for (const [k, v] of Object.entries(c.filters)) p.set(k, v);
  if (c.sort) p.set('sort', c.sort);
  p.set('limit', c.limit);
  if (cursor) p.set('cursor', cursor);
  return `/v1/products?${p}`.replaceAll('+', '%20');
}

// --------------------------------------------------------------------------------------
// The walks.

async function walk(c, key) {
  const pages = []; // ids per page
  let cursor = null;
  let error = null;
  const cap = c.mode === 'capped' ? CAPPED_PAGES : c.pages + EXTRA_REQUESTS;
  let requests = 0;
  let lastCursor = null;
  while (requests < cap) {
    requests++;
    let res;
    let body;
    try {
      res = await fetch(BASE_URL + path(c, cursor), {
        headers: { Authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(30000),
      });
      body = await res.text();
    } catch (err) {
      error = `request ${requests}: ${err.message}`;
      break;
    }
    if (res.status !== 200) {
      error = `request ${requests}: HTTP ${res.status} ${body.slice(0, 300)}`;
      break;
    }
    const json = JSON.parse(body);
    const page = c.catalogue !== undefined ? json.products : json;
    pages.push(page.data.map((item) => item.id));
    lastCursor = page.next_cursor;
    if (lastCursor === null) break;
    cursor = lastCursor;
  }
  return { pages, requests, error, ended: lastCursor === null && error === null };
}

/** What is wrong with a walk, or null. */
function judge(c, w) {
  const problems = [];
  const kinds = new Set();
  const N = c.N;
  if (w.error) {
    kinds.add('HTTP error');
    problems.push(w.error);
  }
  const sizes = w.pages.map((p) => p.length);
  const checked = c.mode === 'capped' ? w.pages : w.pages.slice(0, -1);
  const over = sizes.findIndex((s) => s > c.limit);
  if (over >= 0) {
    kinds.add('page over the limit');
    problems.push(`page ${over + 1} holds ${sizes[over]} items, over limit ${c.limit}`);
  }
  const short = checked.map((p, i) => [i, p.length]).filter(([, s]) => s < c.limit);
  if (short.length > 0) {
    kinds.add('short pages');
    const empty = short.filter(([, s]) => s === 0).length;
    problems.push(`${short.length} short page(s) before the last (${empty} empty); first: page ${short[0][0] + 1} of ${short[0][1]} items`);
  }
  if (c.mode !== 'capped' && !w.error) {
    if (!w.ended) {
      kinds.add('too many requests');
      problems.push(`still a next_cursor after ${w.requests} requests (expected ${c.pages}): walk given up`);
    } else if (w.requests !== c.pages) {
      kinds.add(w.requests > c.pages ? 'too many requests' : 'too few requests');
      problems.push(`${w.requests} requests, expected max(1, ceil(${N} / ${c.limit})) = ${c.pages}`);
    }
  }
  if (c.mode === 'capped' && w.ended && !w.error && N > CAPPED_PAGES * c.limit) {
    kinds.add('too few requests');
    problems.push(`next_cursor null after ${w.requests} pages, but ${N} rows match`);
  }
  const got = w.pages.flat();
  const want = c.mode === 'capped' || !w.ended ? c.expected.slice(0, got.length) : c.expected;
  let diff = -1;
  for (let i = 0; i < Math.max(got.length, want.length); i++) {
    if (got[i] !== want[i]) {
      diff = i;
      break;
    }
  }
  if (diff >= 0) {
    let page = 0;
    for (let seen = 0; page < sizes.length && seen + sizes[page] <= diff; page++) seen += sizes[page];
    const gotSet = new Set(got);
    const dups = got.length - gotSet.size;
    const at = `ids differ at position ${diff} (page ${page + 1}): expected ${want[diff] ?? '(end)'},` +
      ` got ${got[diff] ?? '(end)'}; ${got.length} ids answered, ${N} expected`;
    if (c.mode === 'capped' || !w.ended) {
      // Only a prefix of the answer is known here: which rows are wrong cannot be told.
      kinds.add(dups ? 'wrong rows' : 'ids differ (first pages)');
      problems.push(`${at}; ${dups} repeated`);
    } else {
      const wantSet = new Set(c.expected);
      const extra = got.filter((id) => !wantSet.has(id)).length;
      const missing = c.expected.filter((id) => !gotSet.has(id)).length;
      kinds.add(extra || missing || dups ? 'wrong rows' : 'wrong order');
      problems.push(`${at}; ${extra} not expected, ${missing} missing, ${dups} repeated`);
    }
  }
  return problems.length ? { kinds: [...kinds], problems } : null;
}

// --------------------------------------------------------------------------------------

async function main() {
  log(`seed ${SEED} (SEARCH_EXACT_SEED to draw others), ${fmt(PRODUCTS)} products, base ${BASE_URL}`);
  await prepareCatalogue();
  const account = 'acct_search_exact';
  importDoc({ mode: 'test', accounts: [{ id: account }] });
  const key = newKey({ account, mode: 'test', access: 'read-only' });

  let s0 = performance.now();
  const cat = await readCatalogue();
  const voc = await vocabulary(cat);
  log(`read ${fmt(cat.rows.length)} published test products and ${fmt(cat.ndoc.size)} lexemes without an index` +
    ` (${voc.common.length} common, ${voc.mid.length} mid, ${voc.rare.length} rare words) in ${((performance.now() - s0) / 1000).toFixed(1)} s`);
  const r = rng(SEED);
  const queries = drawQueries(r, cat, voc, QUERIES);
  s0 = performance.now();
  await reference(cat, queries);
  log(`reference: ${queries.length} distinct q, each one sequential scan, in ${((performance.now() - s0) / 1000).toFixed(1)} s`);
  const kinds = new Map();
  for (const x of queries) (kinds.get(x.kind) ?? kinds.set(x.kind, []).get(x.kind)).push(x);
  for (const [kind, xs] of kinds) {
    const ns = xs.map((x) => x.matches.length).sort((a, b) => a - b);
    log(`  ${kind}: ${xs.length} q, matches ${ns[0]} / ${ns[ns.length >> 1]} / ${ns[ns.length - 1]} (min / median / max),` +
      ` e.g. ${xs.slice(0, 3).map((x) => `${JSON.stringify(x.q)} (${x.matches.length})`).join(', ')}`);
  }
  if (env.SEARCH_EXACT_LIST === '1') for (const x of queries) log(`  q ${JSON.stringify(x.q)} [${x.kind}] ${x.tsquery} -> ${x.matches.length}`);
  s0 = performance.now();
  const cases = drawCases(r, cat, queries);
  log(`drew the cases and their expected ids in ${((performance.now() - s0) / 1000).toFixed(1)} s`);
  s0 = performance.now();
  const checked = await checkReference(r, cases, 25);
  log(`the expected ids of ${checked} cases are those of one SQL statement each (filters, order and rank in SQL,` +
    ` no index) (${((performance.now() - s0) / 1000).toFixed(1)} s)`);
  const run = ONLY ? cases.filter((c) => ONLY.has(c.n)) : cases;
  const count = (f) => run.filter(f).length;
  const expectedRequests = run.reduce((s, c) => s + c.pages, 0);
  const Ns = run.map((c) => c.N).sort((a, b) => a - b);
  log(`${fmt(run.length)} cases: ${fmt(count((c) => c.query))} searches, ${fmt(count((c) => c.query === null))} lists without q,` +
    ` ${fmt(count((c) => c.catalogue !== undefined))} sellers' catalogues; ${fmt(count((c) => c.mode !== 'capped'))} walked to the end` +
    ` (${fmt(count((c) => c.mode === 'large'))} of more than ${PAGE_BUDGET} pages, the longest ${Math.max(...run.map((c) => (c.mode === 'capped' ? 0 : c.pages)))}),` +
    ` ${fmt(count((c) => c.mode === 'capped'))} capped at their first ${CAPPED_PAGES} pages; N = 0 in ${fmt(count((c) => c.N === 0))},` +
    ` median N ${fmt(Ns[Ns.length >> 1] ?? 0)}, largest walked ${fmt(Math.max(0, ...run.filter((c) => c.mode !== 'capped').map((c) => c.N)))};` +
    ` ${fmt(expectedRequests)} requests expected`);

  const failures = [];
  let requests = 0;
  let next = 0;
  let done = 0;
  let notRun = 0;
  const w0 = performance.now();
  const deadline = w0 + WALK_SECONDS * 1000;
  let lastReport = w0;
  async function worker() {
    while (next < run.length) {
      const c = run[next++];
      if (performance.now() > deadline) {
        notRun++;
        continue;
      }
      const w = await walk(c, key);
      requests += w.requests;
      const verdict = judge(c, w);
      if (verdict) failures.push({ c, w, ...verdict });
      done++;
      if (performance.now() - lastReport > 15000) {
        lastReport = performance.now();
        log(`${fmt(done)} of ${fmt(run.length)} cases walked, ${fmt(requests)} requests, ${failures.length} failed (${elapsed()})`);
      }
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const walkSeconds = (performance.now() - w0) / 1000;
  log(`walked ${fmt(done)} cases in ${walkSeconds.toFixed(1)} s: ${fmt(requests)} requests` +
    ` (${fmt(expectedRequests)} expected), ${(requests / walkSeconds).toFixed(0)} requests/s`);

  // The rarer kinds of failure first (wrong rows or order, errors), then by case number.
  const common = (f) => f.kinds.every((k) => k === 'short pages' || k === 'too many requests');
  failures.sort((a, b) => common(a) - common(b) || a.c.n - b.c.n);
  const shown = VERBOSE ? failures : failures.slice(0, 40);
  for (const f of shown) {
    console.log(`FAIL  case ${f.c.n}: ${describe(f.c)}`);
    console.log(`      N = ${f.c.N}, ${f.c.mode === 'capped' ? `first ${CAPPED_PAGES} pages` : `expected ${f.c.pages} request(s)`};` +
      ` answered ${f.w.requests} page(s) of sizes ${sizeList(f.w.pages)}`);
    for (const p of f.problems) console.log(`      | ${p}`);
  }
  if (failures.length > shown.length) console.log(`... and ${failures.length - shown.length} more failed cases (SEARCH_EXACT_VERBOSE=1 prints them all)`);
  if (failures.length) {
    const tally = (key) => {
      const m = new Map();
      for (const f of failures) for (const k of [].concat(key(f))) m.set(k, (m.get(k) ?? 0) + 1);
      return [...m].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`).join(', ');
    };
    const shortPages = failures.reduce((s, f) => s + f.w.pages.slice(0, f.c.mode === 'capped' ? undefined : -1).filter((p) => p.length < f.c.limit).length, 0);
    const extra = failures.reduce((s, f) => s + Math.max(0, f.w.requests - f.c.pages), 0);
    log(`failed cases by what failed: ${tally((f) => f.kinds)}`);
    log(`failed cases by q: ${tally((f) => (f.c.catalogue !== undefined ? 'seller catalogue' : f.c.query ? f.c.query.kind : 'no q'))}`);
    log(`failed cases by sort: ${tally((f) => (f.c.catalogue !== undefined ? 'catalogue' : f.c.sort ?? 'default'))}`);
    log(`failed cases by filters: ${tally((f) => (f.c.catalogue !== undefined ? 'catalogue' : Object.keys(f.c.filters).join('+') || 'none'))}`);
    log(`${fmt(shortPages)} short pages before the last in all; ${fmt(extra)} requests more than ceil(N / limit)`);
    log(`case numbers of the failures (SEARCH_EXACT_ONLY=... SEARCH_EXACT_SEED=${SEED} walks them again): ` +
      failures.slice(0, 60).map((f) => f.c.n).join(','));
  }
  if (notRun) log(`${notRun} cases not walked: the walks took more than ${WALK_SECONDS} s`);
  // The claim is 1,000 cases walked to their end at least (whatever the seed drew).
  const whole = ONLY ? 0 : Math.max(0, 1000 - count((c) => c.mode !== 'capped'));
  if (whole) log(`only ${count((c) => c.mode !== 'capped')} cases walked to their end, not 1,000: draw more (SEARCH_EXACT_QUERIES)`);
  const failed = failures.length + notRun + (whole ? 1 : 0);
  log(`total ${elapsed()}`);
  console.log(`${done - failures.length} passed, ${failed} failed`);
  process.exitCode = failed ? 1 : 0;
}

function sizeList(pages) {
  const sizes = pages.map((p) => p.length);
  const runs = [];
  for (const s of sizes) {
    const last = runs[runs.length - 1];
    if (last && last[0] === s) last[1]++;
    else runs.push([s, 1]);
  }
  return runs.map(([s, n]) => (n > 1 ? `${s}x${n}` : `${s}`)).join(' ');
}

main().catch((err) => {
  console.error(`search-exact: ${err.stack ?? err}`);
  console.log('0 passed, 1 failed');
  process.exitCode = 2;
});
