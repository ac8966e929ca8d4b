// The pool always comes back (issue 21, item 5): workers that die again and again make
// multiwatch give up ("died to often, not forking again") and exit with status 0;
// tools/stack's supervisor starts the pool again on the same socket whatever the status,
// and rewrites API_PIDFILE with the new multiwatch's pid.
//
// The test kills the workers (the children of the multiwatch named by API_PIDFILE) with
// SIGKILL as fast as they are started, at least 50 deaths, and goes on until the
// multiwatch in charge has given up, so that the pool is entirely gone; then it measures
// how long the API takes to answer GET /v1/products with a valid key again (at most
// 10 s), while every answer in between is nginx's JSON 502.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { api, newAccount, newKey, API_PIDFILE } from './lib/stack.mjs';
import { assertError, sleep } from './fixtures/expect.mjs';

const DEATHS = 50;
const RECOVERY_BOUND_MS = 10000;

let account;
let key;

before(() => {
  account = newAccount('acct_crash_');
  key = newKey({ account, mode: 'test', access: 'read-only' });
});

/** The pid in API_PIDFILE, or null while the supervisor has none running. */
function multiwatchPid() {
  try {
    const pid = Number(readFileSync(API_PIDFILE, 'utf8').trim());
    return pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

const comm = (pid) => {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
};
const alive = (pid) => comm(pid) !== '';

function workersOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)
      .filter(Boolean).map(Number).filter((p) => comm(p) === 'market-api');
  } catch {
    return [];
  }
}

test(`a crash loop of ${DEATHS} worker deaths: the pool serves again within ${RECOVERY_BOUND_MS / 1000} s`, async (t) => {
  assert.equal((await api('/v1/products?limit=1', { key })).status, 200, 'the pool serves before');
  const first = multiwatchPid();
  assert.ok(first && alive(first), `API_PIDFILE names a running multiwatch (${first})`);

  const seen = new Set([first]);
  let deaths = 0;
  let current = first;
  let goneAt = null;
  const deadline = Date.now() + 60000;
  // Kill every worker as soon as it is there. Once DEATHS have died, go on with the
  // workers of the multiwatch then in charge until it gives up.
  let lastOne = null;
  while (goneAt === null) {
    assert.ok(Date.now() < deadline, `the crash loop took over 60 s (${deaths} deaths, ${seen.size} pools)`);
    const pid = multiwatchPid();
    if (pid !== null && !seen.has(pid)) seen.add(pid);
    if (deaths >= DEATHS && lastOne === null) lastOne = pid ?? current;
    if (lastOne !== null && (pid !== lastOne || !alive(lastOne))) {
      goneAt = Date.now();
      break;
    }
    if (pid !== null) {
      current = pid;
      for (const w of workersOf(pid)) {
        try {
          process.kill(w, 'SIGKILL');
          deaths++;
        } catch {
          // gone already
        }
      }
    }
    await sleep(5);
  }
  t.diagnostic(`${deaths} workers killed; ${seen.size} multiwatch processes in turn, the last of which gave up`);
  assert.ok(deaths >= DEATHS, `${deaths} deaths`);
  assert.ok(seen.size >= 2, 'multiwatch gave up and was started again during the crash loop');

  // Recovery: poll until a 200; whatever comes before is nginx's JSON 502 (no pool).
  let res;
  let failures = 0;
  for (;;) {
    res = await api('/v1/products?limit=1', { key });
    if (res.status === 200) break;
    assertError(res, 502, 'api_error', 'service_unavailable', null);
    failures++;
    assert.ok(Date.now() - goneAt < RECOVERY_BOUND_MS,
      `the pool did not serve again within ${RECOVERY_BOUND_MS} ms (last: ${res.status})`);
    await sleep(50);
  }
  const recoveredMs = Date.now() - goneAt;
  t.diagnostic(`time to recover: ${recoveredMs} ms after the last multiwatch gave up (${failures} answers 502 in between)`);
  console.log(`crash loop: ${deaths} worker deaths, recovered in ${recoveredMs} ms (bound ${RECOVERY_BOUND_MS} ms)`);
  assert.ok(recoveredMs <= RECOVERY_BOUND_MS);

  // A new multiwatch, its full set of workers, and API_PIDFILE names it.
  const now = multiwatchPid();
  assert.ok(now && now !== lastOne && comm(now) === 'multiwatch', `API_PIDFILE names the new multiwatch (${now})`);
  assert.ok(workersOf(now).length >= 1, 'the new pool has workers');
  for (let i = 0; i < 5; i++) {
    assert.equal((await api('/v1/products?limit=1', { key })).status, 200, `request ${i} after the recovery`);
  }
});
