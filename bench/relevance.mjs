// bench/relevance.mjs: how well relevance ranks, as NDCG@20 against the grades of contract
// section 6 (make bench, step "relevance").
//
//   BASE_URL=… KEY=… MARKET_DB=… node bench/relevance.mjs
//
// For each query: the first 20 results a client sees (following next_cursor when a page
// ends short at a window), each graded by the contract's definition, computed here on its
// own from PostgreSQL's english stemming: the number of distinct words of q
// (to_tsvector('english', q)) that to_tsvector('english', title) holds. The ideal ranking
// is every match of q (websearch_to_tsquery over title and description) sorted by grade.
// NDCG@20 = DCG / ideal DCG with gain 2^grade - 1 and discount log2(position + 1); 1.000
// when nothing matches with a grade above 0. Prints one line per shape of query (its
// mean and lowest), and one for all of them.
import http from 'node:http';
import { execFileSync } from 'node:child_process';

const { BASE_URL, KEY, MARKET_DB } = process.env;
if (!BASE_URL || !KEY || !MARKET_DB) {
  process.stderr.write('relevance: BASE_URL, KEY and MARKET_DB are required\n');
  process.exit(2);
}
const DEPTH = 20;

// The shapes the issue names, on the bench catalogue ("Adjective Noun Kind" titles, word
// salad descriptions with compounds found in no title).
const SHAPES = {
  'one word': ['raven', 'copper', 'tulip', 'kerning', 'font'],
  'words found together in titles': ['dusty raven', 'shiny canyon', 'giant garden', 'juicy falcon', 'glossy robot'],
  'a title word and a description word': ['otter kerning', 'icon ttf', 'whale layers', 'raven harborlight', 'tulip vector'],
  'three words': ['dusty raven font', 'glossy robot loop', 'shiny canyon font', 'otter kerning font', 'juicy falcon pack'],
};

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function get(path) {
  const base = new URL(BASE_URL);
  return new Promise((resolve, reject) => {
    http
      .get({ host: base.hostname, port: base.port, path, agent, headers: { authorization: `Bearer ${KEY}` } }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) return reject(new Error(`${path}: status ${res.statusCode}: ${text.slice(0, 200)}`));
          resolve(JSON.parse(text));
        });
      })
      .on('error', reject);
  });
}

/** The first DEPTH results of q, as a client iterating the pages gets them. */
async function results(q) {
  const ids = [];
  let cursor = null;
  let requests = 0;
  do {
    const path = `/v1/products?q=${encodeURIComponent(q)}&limit=${DEPTH}${cursor ? `&cursor=${cursor}` : ''}`;
    const page = await get(path);
    requests++;
    ids.push(...page.data.map((i) => i.id));
    cursor = page.next_cursor;
  } while (ids.length < DEPTH && cursor !== null && requests < 50);
  return { ids: ids.slice(0, DEPTH), requests };
}

function psql(sql, vars) {
  const args = ['-X', '-At', '-q', '-v', 'ON_ERROR_STOP=1', MARKET_DB];
  for (const [k, v] of Object.entries(vars)) args.push('-v', `${k}=${v}`);
  return execFileSync('psql', args, { input: sql, encoding: 'utf8', maxBuffer: 64 << 20 });
}

// The grade of a product for q, by the contract: distinct words of q in its title.
const GRADE = `(SELECT count(*) FROM unnest(tsvector_to_array(to_tsvector('english', :'q'))) w
                 WHERE w = ANY (tsvector_to_array(to_tsvector('english', p.title))))`;

function grades(q, ids) {
  if (ids.length === 0) return [];
  const out = psql(
    `SELECT p.id, ${GRADE} FROM products p WHERE p.id = ANY (string_to_array(:'ids', ','));`,
    { q, ids: ids.join(',') },
  );
  const byId = Object.fromEntries(out.trim().split('\n').filter(Boolean).map((l) => l.split('|')));
  return ids.map((id) => Number(byId[id]));
}

/** Grade -> number of matches of q with that grade. */
function histogram(q) {
  const out = psql(
    `SELECT g, count(*) FROM (SELECT ${GRADE} AS g FROM products p
      WHERE p.mode = 'test' AND p.status = 'published'
        AND p.search @@ websearch_to_tsquery('english', :'q')) x GROUP BY g ORDER BY g DESC;`,
    { q },
  );
  return out.trim().split('\n').filter(Boolean).map((l) => l.split('|').map(Number));
}

const dcg = (gs) => gs.reduce((sum, g, i) => sum + (2 ** g - 1) / Math.log2(i + 2), 0);

function idealGrades(hist) {
  const gs = [];
  for (const [g, n] of hist) for (let i = 0; i < n && gs.length < DEPTH; i++) gs.push(g);
  return gs;
}

const all = [];
for (const [shape, queries] of Object.entries(SHAPES)) {
  const scores = [];
  const notes = [];
  for (const q of queries) {
    const { ids, requests } = await results(q);
    const hist = histogram(q);
    const ideal = dcg(idealGrades(hist));
    const score = ideal === 0 ? 1 : dcg(grades(q, ids)) / ideal;
    const matches = hist.reduce((n, [, c]) => n + c, 0);
    scores.push(score);
    notes.push(`"${q}" ${score.toFixed(3)} (${matches} matches, ${requests} request${requests === 1 ? '' : 's'})`);
  }
  all.push(...scores);
  const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
  console.log(`relevance NDCG@${DEPTH}, ${shape}: mean ${mean.toFixed(3)}, lowest ${Math.min(...scores).toFixed(3)}: ${notes.join('; ')}`);
}
const mean = all.reduce((a, b) => a + b, 0) / all.length;
console.log(`relevance NDCG@${DEPTH}, all ${all.length} queries: mean ${mean.toFixed(3)}, lowest ${Math.min(...all).toFixed(3)} (goal >= 0.99)`);
agent.destroy();
