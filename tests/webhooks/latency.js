// Load for the commit-to-receive latency measurement (scratch tooling): commits COUNT
// paid orders, one per transaction, RATE per second (latency-report.js then compares each
// event's commit time with its arrival at receiver.js). Prints {order, t} per commit, t
// being when COMMIT returned (ms since the epoch).
//
//   NODE_PATH=<dir with node_modules> node latency.js CONNSTRING COUNT RATE PREFIX
'use strict';
const { Client } = require('pg');

const [conn, count, rate, prefix] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

(async () => {
  const c = new Client({ connectionString: conn });
  await c.connect();
  for (let i = 0; i < +count; i++) {
    const id = `ord_${prefix}_${i}`;
    await c.query('BEGIN');
    await c.query("INSERT INTO orders (id, mode, account_id, status, currency) VALUES ($1, 'test', 'acct_bob', 'paid', 'USD')", [id]);
    await c.query("INSERT INTO order_items VALUES ($1, 1, 'prod_a', 'tier_a', 'A', 'Personal', 1999)", [id]);
    await c.query('COMMIT');
    const t = performance.timeOrigin + performance.now();
    process.stdout.write(JSON.stringify({ order: id, t }) + '\n');
    await sleep(1000 / +rate);
  }
  await c.end();
})();
