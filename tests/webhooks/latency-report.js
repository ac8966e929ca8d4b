// Commit-to-receive latency of webhook deliveries (scratch tooling). Needs the database
// to run with track_commit_timestamp = on; joins each event's commit time (from the
// server, exact) with the first arrival of that event at receiver.js (same machine clock).
//   NODE_PATH=... node latency-report.js CONNSTRING RECEIVER.log
'use strict';
const fs = require('fs');
const { Client } = require('pg');

(async () => {
  const c = new Client({ connectionString: process.argv[2] });
  await c.connect();
  const { rows } = await c.query(
    'SELECT id, extract(epoch FROM pg_xact_commit_timestamp(xmin)) * 1000 AS t FROM events');
  await c.end();
  const committed = new Map(rows.map((r) => [r.id, Number(r.t)]));
  const first = new Map();
  for (const line of fs.readFileSync(process.argv[3], 'utf8').split('\n')) {
    if (!line) continue;
    const r = JSON.parse(line);
    if (committed.has(r.id) && !first.has(r.id)) first.set(r.id, r.t);
  }
  const lat = [...first].map(([id, t]) => t - committed.get(id)).sort((a, b) => a - b);
  const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))].toFixed(1);
  console.log(`events ${committed.size}, received ${lat.length}; commit to receive, ms: ` +
              `min ${lat[0].toFixed(1)} median ${q(0.5)} p90 ${q(0.9)} p99 ${q(0.99)} ` +
              `max ${lat[lat.length - 1].toFixed(1)}`);
})();
