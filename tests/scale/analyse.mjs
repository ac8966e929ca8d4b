// Figures of tests/scale/run's scenario 3 (app1 cut off), from what the run recorded.
//
//   node analyse.mjs cut --cut MS --load FILE --access FILE --stranded FILE
//                        --received FILE --app1 ADDR --app2 ADDR --upstream-port PORT
//
//   --cut       the time of the cut, ms since the epoch
//   --load      load.mjs steady records (JSON lines: t0, t1, status, ok, error)
//   --access    the front's access log lines written during the load (tests/scale/run's
//               log_format: "end_s duration status upstream, ...| statuses| method uri")
//   --stranded  event ids of the deliveries app1's drainer held at the cut, one a line
//   --received  the receiver's requests of the scenario's path (receiver.mjs /requests)
//
// Prints one JSON object of figures (see the keys below).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  args: process.argv.slice(3),
  options: Object.fromEntries(['cut', 'load', 'access', 'stranded', 'received', 'app1', 'app2', 'upstream-port']
    .map((k) => [k, { type: 'string' }])),
});
const cut = Number(opt.cut);
const lines = (f) => readFileSync(f, 'utf8').split('\n').filter(Boolean);
const app1 = `${opt.app1}:${opt['upstream-port']}`;
const app2 = `${opt.app2}:${opt['upstream-port']}`;

// The client's side.
const load = lines(opt.load).map((l) => JSON.parse(l));
const failed = load.filter((r) => !r.ok);
const afterCut = load.filter((r) => r.t0 >= cut);

// The front's side: requests whose first pool was app1 and that were under way at the cut.
// $upstream_addr is "a:port, b:port" when nginx tried a second pool.
const access = lines(opt.access).map((l) => {
  const [head] = l.split('| ');
  const [end, duration, status, ...pools] = head.split(' ');
  const endMs = Number(end) * 1000;
  return {
    start: endMs - Number(duration) * 1000, end: endMs, status: Number(status),
    pools: pools.join(' ').match(/[0-9.]+:[0-9]+/g) ?? [],
  };
});
const inflightApp1 = access.filter((r) => r.pools[0] === app1 && r.start <= cut && r.end >= cut);
// nginx logs whole milliseconds ($msec, $request_time), so a start is known to within a
// few: one that app1 answered as the link went down may appear to start just after it.
const CLOCK_SLACK_MS = 5;
const laterOnApp1 = access.filter((r) => r.start > cut + CLOCK_SLACK_MS && r.pools.at(-1) === app1 && r.status === 200);
// Sent to app1 first, then to app2 when app1 did not answer the connection in time.
const retried = access.filter((r) => r.start > cut && r.pools[0] === app1 && r.pools.at(-1) === app2);
const slowest = Math.max(0, ...access.filter((r) => r.start > cut).map((r) => r.end - r.start));
const servedApp2AfterCut = access.filter((r) => r.start > cut && r.pools.at(-1) === app2 && r.status === 200);

// The webhooks.
const stranded = lines(opt.stranded);
const received = JSON.parse(readFileSync(opt.received, 'utf8'));
const fromApp2 = new Map(); // event id -> first 2xx answer to app2 after the cut
for (const r of received) {
  if (!r.remote.endsWith(opt.app2) || r.at < cut || !(r.status >= 200 && r.status < 300)) continue;
  if (!fromApp2.has(r.id) || r.answered_at < fromApp2.get(r.id)) fromApp2.set(r.id, r.answered_at);
}
const resent = stranded.filter((id) => fromApp2.has(id));
const handback = resent.length ? Math.max(...resent.map((id) => fromApp2.get(id))) - cut : null;
const ids = new Set(received.map((r) => r.id));

console.log(JSON.stringify({
  requests: load.length,
  ok: load.length - failed.length,
  failed: failed.length,
  failed_started_before_cut: failed.filter((r) => r.t0 <= cut).length,
  failed_reasons: [...new Set(failed.map((r) => r.error ?? `status ${r.status}`))].join('; '),
  ok_after_cut: afterCut.filter((r) => r.ok).length,
  requests_after_cut: afterCut.length,
  inflight_app1_at_cut: inflightApp1.length,
  served_by_app2_after_cut: servedApp2AfterCut.length,
  served_by_app1_after_cut: laterOnApp1.length,
  retried_on_app2: retried.length,
  slowest_after_cut_ms: Math.round(slowest),
  stranded: stranded.length,
  stranded_resent_by_app2: resent.length,
  handback_ms: handback,
  received_requests: received.length,
  received_distinct: ids.size,
}));
