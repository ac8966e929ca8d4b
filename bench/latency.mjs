// bench/latency.mjs: latency of single requests, one at a time on one keep-alive
// connection (so the figure is the service's own: nginx, a worker and PostgreSQL).
//
//   node bench/latency.mjs --base URL --key KEY --requests N --label L --path P [--path P2 ...]
//
// The paths are requested in turn (P1, P2, ... P1, ...) after 20 warm-up rounds; prints one
// line per path: label, path, requests, p50, p90, p99 and max in milliseconds. Any answer
// other than 200 stops it with an error.
import http from 'node:http';

const argv = process.argv.slice(2);
const paths = [];
const args = {};
for (let i = 0; i < argv.length; i += 2) {
  const name = argv[i].replace(/^--/, '');
  if (name === 'path') paths.push(argv[i + 1]);
  else args[name] = argv[i + 1];
}
if (!args.base || !args.key || paths.length === 0) {
  process.stderr.write('latency: --base, --key and --path are required\n');
  process.exit(2);
}
const base = new URL(args.base);
const requests = Number(args.requests || 300);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function once(path) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.get(
      { host: base.hostname, port: base.port || 80, path, agent, headers: { authorization: `Bearer ${args.key}` } },
      (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`${path}: status ${res.statusCode}`));
          resolve(Number(process.hrtime.bigint() - t0) / 1e6);
        });
      },
    );
    req.on('error', reject);
  });
}

const times = paths.map(() => []);
for (let round = 0; round < 20 + requests; round++) {
  for (let i = 0; i < paths.length; i++) {
    const ms = await once(paths[i]);
    if (round >= 20) times[i].push(ms);
  }
}
agent.destroy();
const pct = (a, p) => a[Math.min(a.length - 1, Math.floor(a.length * p))];
for (let i = 0; i < paths.length; i++) {
  const a = times[i].sort((x, y) => x - y);
  const f = (v) => v.toFixed(2);
  console.log(`${(args.label || '').padEnd(28)} ${String(a.length).padStart(6)} ${f(pct(a, 0.5)).padStart(8)} ${f(pct(a, 0.9)).padStart(8)} ${f(pct(a, 0.99)).padStart(8)} ${f(a[a.length - 1]).padStart(8)}  ${paths[i]}`);
}
