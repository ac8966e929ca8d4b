"""A real 429 from a real stack with a low MARKET_RATE_LIMIT, retried after Retry-After.

The stack's limit is a setting of its workers, read at start. When the stack answers with
a higher limit (test.sh starts it with the default 600 for the other tests), this module
restarts it with MARKET_RATE_LIMIT=3 (``tools/stack up`` on the same folder and port keeps
the database and restarts the pool, the drainer and nginx) and restores it afterwards.

The window is the Unix minute, so Retry-After may be up to 60 s: the client gets a
``sleep`` that records the delay instead of waiting. To let the retry through without
waiting for the next minute, that sleep deletes the key's counter row for the current
window (what the start of a new window amounts to), so the retry is served, as it would
be after a real wait.
"""

from __future__ import annotations

import http.client
import os
import subprocess
import time
import unittest
from typing import Dict, Optional, Tuple
from urllib.parse import urlsplit

from market import RateLimitError

from . import support

LOW = 3
X = support.unique("")
ACCT = f"acct_pyrl_{X}"
LIMIT = 0


def _limit_now() -> int:
    key = support.new_key(ACCT, access="read-only")
    page = support.client(key, max_retries=0).products.list(limit=1)
    assert page.rate_limit is not None and page.rate_limit.limit is not None
    return page.rate_limit.limit


def _restart(env_changes: Dict[str, Optional[str]]) -> None:
    stack = support.REPO / "tools" / "stack"
    port = urlsplit(support.env("BASE_URL")).port
    env = dict(os.environ)
    for name, value in env_changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    r = subprocess.run(
        [str(stack), "up", "--dir", support.env("STACK_DIR"), "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120,
    )
    if r.returncode != 0:
        raise RuntimeError(f"tools/stack up failed ({r.returncode}):\n{r.stderr}")


def setUpModule() -> None:
    global LIMIT
    support.require_stack()
    support.import_doc({"mode": "test", "accounts": [{"id": ACCT}]})
    LIMIT = _limit_now()
    if LIMIT > 10:
        if not os.environ.get("STACK_DIR") or not (support.REPO / "tools" / "stack").exists():
            raise unittest.SkipTest(f"the stack's rate limit is {LIMIT}, and it cannot be restarted (no STACK_DIR)")
        _restart({"MARKET_RATE_LIMIT": str(LOW)})
        unittest.addModuleCleanup(_restart, {"MARKET_RATE_LIMIT": os.environ.get("MARKET_RATE_LIMIT")})
        LIMIT = _limit_now()
    if LIMIT != LOW:
        raise AssertionError(f"the restarted stack answers X-RateLimit-Limit {LIMIT}, not {LOW}")


def _exhausted_key() -> str:
    """A fresh key whose window's requests are all used, with at least 8 s of window left."""
    left = 60 - time.time() % 60
    if left < 8:
        time.sleep(left + 0.3)
    key = support.new_key(ACCT, access="read-only")
    m = support.client(key, max_retries=0)
    remaining = [m.products.list(limit=1).rate_limit.remaining for _ in range(LIMIT)]
    assert remaining == list(range(LIMIT - 1, -1, -1)), remaining
    return key


def _probe(key: str) -> Tuple[int, Dict[str, str]]:
    """One raw request (a rejected request does not count): status and headers."""
    url = urlsplit(support.env("BASE_URL"))
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        conn.request("GET", "/v1/products?limit=1", headers={"Authorization": f"Bearer {key}"})
        resp = conn.getresponse()
        resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}
    finally:
        conn.close()


def _new_window(key: str) -> None:
    support.psql(
        "DELETE FROM rate_counters WHERE key_id = (SELECT id FROM api_keys WHERE key_hash = "
        f"sha256(convert_to({support.sql_quote(key)}, 'UTF8')))"
    )


class RateLimitTest(unittest.TestCase):
    def test_429_waits_retry_after_then_retries(self) -> None:
        key = _exhausted_key()
        status, headers = _probe(key)
        self.assertEqual(status, 429)
        retry_after = int(headers["retry-after"])
        self.assertTrue(1 <= retry_after <= 60)

        slept = support.SleepRecorder(then=lambda _s: _new_window(key))
        m = support.client(key, sleep=slept)
        sent = support.count_requests(m)
        page = m.products.list(limit=1)

        self.assertEqual(len(slept.calls), 1, "one wait, then the retry")
        self.assertLessEqual(abs(slept.calls[0] - retry_after), 1, (slept.calls, retry_after))
        self.assertGreaterEqual(slept.calls[0], 1)
        self.assertEqual(len(sent), 2, "the request was sent again")
        self.assertEqual(sent[0], sent[1])
        self.assertEqual(page.rate_limit.limit, LOW)
        self.assertEqual(page.rate_limit.remaining, LOW - 1, "the retry was served and counted in the new window")
        self.assertEqual(len(page.data), 1)

    def test_429_gives_up_after_max_retries(self) -> None:
        key = _exhausted_key()
        slept = support.SleepRecorder()
        m = support.client(key, sleep=slept, max_retries=2)
        sent = support.count_requests(m)
        with self.assertRaises(RateLimitError) as cm:
            m.orders.list()
        e = cm.exception
        self.assertEqual(len(sent), 3, "the first try and two retries")
        self.assertEqual(len(slept.calls), 2)
        self.assertEqual((e.status, e.type, e.code), (429, "rate_limit_error", "rate_limited"))
        self.assertTrue(1 <= e.retry_after <= 60)
        for s in slept.calls:
            self.assertLessEqual(abs(s - e.retry_after), 1)
        self.assertEqual((e.rate_limit.limit, e.rate_limit.remaining), (LOW, 0))
        self.assertLessEqual(abs(e.rate_limit.reset - e.retry_after), 1)

    def test_429_without_retries(self) -> None:
        key = _exhausted_key()
        slept = support.SleepRecorder()
        m = support.client(key, sleep=slept, max_retries=0)
        with self.assertRaises(RateLimitError) as cm:
            m.products.get("prod_anything")
        self.assertEqual(cm.exception.status, 429, "429 comes before 404")
        self.assertEqual(slept.calls, [])


if __name__ == "__main__":
    unittest.main()
