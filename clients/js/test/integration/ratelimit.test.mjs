// A real 429 from the real stack: the second stack runs with MARKET_RATE_LIMIT=3, so the
// fourth request of a minute is refused with Retry-After (seconds to the end of the Unix
// minute). The client waits that long and tries again, which succeeds in the new window.
// The wait is real (up to 60 s); test.sh runs this file beside the others.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';

import { Market, RateLimitError, MarketError } from '@markethq/market';
import { rateLimited, uniqueId, recordingFetch, sleep } from './lib.mjs';

const st = rateLimited();
const x = uniqueId();
const LIMIT = 3;
let key;

before(() => {
  st.importDoc({ mode: 'test', accounts: [{ id: `acct_jsrl_${x}` }] });
  key = st.newKey(`acct_jsrl_${x}`, 'read-only');
});

const secondsLeft = () => 60 - ((Date.now() / 1000) % 60);
const minute = () => Math.floor(Date.now() / 60000);

test('429: thrown with Retry-After when retries are off or used up; waited for and retried otherwise', async (t) => {
  // Steps 1-3 must fall in one window.
  if (secondsLeft() < 8) {
    t.diagnostic(`waiting ${secondsLeft().toFixed(1)} s for the next minute`);
    await sleep(secondsLeft() * 1000 + 300);
  }
  const windowAtStart = minute();

  // 1. The window's three requests: Remaining 2, 1, 0 on the answers.
  const m0 = new Market({ apiKey: key, baseUrl: st.baseUrl, maxRetries: 0 });
  for (const remaining of [2, 1, 0]) {
    const page = await m0.products.list({ limit: 1 });
    assert.deepEqual([page.rateLimit.limit, page.rateLimit.remaining], [LIMIT, remaining]);
    assert.ok(page.rateLimit.reset >= 1 && page.rateLimit.reset <= 60);
  }

  // 2. maxRetries 0: the 429 is thrown at once, with its figures.
  const err = await m0.products.list().catch((e) => e);
  assert.ok(err instanceof RateLimitError, `${err}`);
  assert.ok(err instanceof MarketError);
  assert.equal(err.status, 429);
  assert.equal(err.type, 'rate_limit_error');
  assert.equal(err.code, 'rate_limited');
  assert.ok(err.retryAfter >= 1 && err.retryAfter <= 60, `Retry-After ${err.retryAfter}`);
  assert.ok(Math.abs(err.retryAfter - secondsLeft()) <= 2, `Retry-After ${err.retryAfter} is the rest of the minute (${secondsLeft().toFixed(1)} s)`);
  assert.deepEqual(err.rateLimit, { limit: LIMIT, remaining: 0, reset: err.retryAfter });

  // 3. Retries used up (a sleep that does not wait): each attempt got a real 429, and the
  //    client asked to wait exactly Retry-After before the retry.
  const waits = [];
  const f1 = recordingFetch();
  const m1 = new Market({ apiKey: key, baseUrl: st.baseUrl, maxRetries: 1, fetch: f1, sleep: async (ms) => { waits.push(ms); } });
  await assert.rejects(m1.products.list(), RateLimitError);
  assert.deepEqual(f1.log.map((r) => r.status), [429, 429]);
  assert.deepEqual(waits, [Number(f1.log[0].retryAfter) * 1000]);
  assert.equal(minute(), windowAtStart, 'steps 1-3 stayed in one window');

  // 4. The real thing: the client sleeps Retry-After, retries, and the retry succeeds in
  //    the next window.
  const realWaits = [];
  const f2 = recordingFetch();
  const m2 = new Market({
    apiKey: key, baseUrl: st.baseUrl, fetch: f2,
    sleep: (ms) => {
      realWaits.push(ms);
      return sleep(ms);
    },
  });
  const t0 = Date.now();
  t.diagnostic(`the client waits about ${secondsLeft().toFixed(0)} s for the next window`);
  const page = await m2.products.list({ limit: 1 });
  const elapsed = Date.now() - t0;
  assert.deepEqual(f2.log.map((r) => r.status), [429, 200], 'a 429, then a success');
  assert.deepEqual(realWaits, [Number(f2.log[0].retryAfter) * 1000], 'waited Retry-After');
  assert.ok(elapsed >= realWaits[0], `${elapsed} ms elapsed`);
  assert.ok(minute() > windowAtStart, 'the retry went to the next window');
  assert.equal(page.lastResponse.retries, 1);
  assert.deepEqual([page.rateLimit.limit, page.rateLimit.remaining], [LIMIT, LIMIT - 1], 'the first request of the new window');
});
