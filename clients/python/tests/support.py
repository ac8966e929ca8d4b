"""Helpers of the tests.

The integration tests talk to a running stack through real nginx, the FastCGI workers and
PostgreSQL. clients/python/test.sh starts one (tools/stack up) and exports its variables;
to run them against a stack of your own:

    eval "$(tools/stack up --dir /tmp/mystack --port 18200)"
    cd clients/python && python3 -m unittest -v

Without BASE_URL, MARKET_ADMIN and MARKET_DB the integration tests are skipped, unless
MARKET_TEST_REQUIRE_STACK=1 (test.sh sets it), which makes that an error.

The webhook test needs MARKET_TEST_TLS_CERT and MARKET_TEST_TLS_KEY (a certificate for
127.0.0.1 signed by a CA that the stack's market-webhookd trusts through
MARKET_WEBHOOK_CA_FILE) and a stack started with MARKET_WEBHOOK_ALLOW_PRIVATE=1. The tests
of subscription management and events need the stack's extension:
MARKET_API_EXTENSIONS=webhook-management (test.sh sets it).

test_integration_extension_off.py needs a second stack without any extension, its
variables exported with the prefix PLAIN_ (PLAIN_BASE_URL, PLAIN_MARKET_ADMIN,
PLAIN_MARKET_DB, PLAIN_MARKET_SECRET_FILE, ...; test.sh starts it), and is skipped (or
fails, under MARKET_TEST_REQUIRE_STACK=1) without one.
"""

from __future__ import annotations

import http.server
import json
import os
import secrets
import socket
import ssl
import string
import subprocess
import threading
import time
import unittest
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import market

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
STACK_VARS = ("BASE_URL", "MARKET_ADMIN", "MARKET_DB")


def env(name: str) -> str:
    return os.environ[name]


def require_stack() -> None:
    """Skips the calling module (SkipTest) when no stack is configured, or fails if one is required."""
    missing = [n for n in STACK_VARS if not os.environ.get(n)]
    if missing:
        msg = f"no stack ({', '.join(missing)} not set): run clients/python/test.sh"
        if os.environ.get("MARKET_TEST_REQUIRE_STACK") == "1":
            raise RuntimeError(msg)
        raise unittest.SkipTest(msg)


def unique(prefix: str = "") -> str:
    """prefix + 8 random lowercase letters and digits."""
    alphabet = string.ascii_lowercase + string.digits
    return prefix + "".join(secrets.choice(alphabet) for _ in range(8))


def _admin_env() -> Dict[str, str]:
    e = dict(os.environ)
    if os.environ.get("FILES_ROOT"):
        e["MARKET_FILES_ROOT"] = os.environ["FILES_ROOT"]
    if os.environ.get("DOWNLOAD_BASE_URL"):
        e["MARKET_DOWNLOAD_BASE_URL"] = os.environ["DOWNLOAD_BASE_URL"]
    return e


def admin(*args: str, input: Optional[str] = None) -> str:
    """Runs market-admin and returns its stdout; raises with its stderr on failure."""
    r = subprocess.run(
        [env("MARKET_ADMIN"), *args], input=input, capture_output=True, text=True, env=_admin_env(), timeout=120
    )
    if r.returncode != 0:
        raise RuntimeError(f"market-admin {' '.join(args)} exited with {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def import_doc(doc: Dict[str, Any]) -> str:
    return admin("import", "-", input=json.dumps(doc))


def new_key(account: str, mode: str = "test", access: str = "read-write") -> str:
    return admin("key", "create", "--account", account, "--mode", mode, "--access", access).strip()


class PlainStack:
    """The second stack of test.sh: no MARKET_API_EXTENSIONS, the specification's six routes
    (its tools/stack variables exported with the prefix PLAIN_)."""

    VARS = ("PLAIN_BASE_URL", "PLAIN_MARKET_ADMIN", "PLAIN_MARKET_DB", "PLAIN_MARKET_SECRET_FILE")

    @classmethod
    def require(cls) -> "PlainStack":
        missing = [n for n in cls.VARS if not os.environ.get(n)]
        if missing:
            msg = f"no stack without extensions ({', '.join(missing)} not set): run clients/python/test.sh"
            if os.environ.get("MARKET_TEST_REQUIRE_STACK") == "1":
                raise RuntimeError(msg)
            raise unittest.SkipTest(msg)
        return cls()

    def __init__(self) -> None:
        self.base_url = env("PLAIN_BASE_URL")

    def admin(self, *args: str, input: Optional[str] = None) -> str:
        """market-admin on this stack's database and secret."""
        e = dict(os.environ)
        e["MARKET_DB"] = env("PLAIN_MARKET_DB")
        e["MARKET_SECRET_FILE"] = env("PLAIN_MARKET_SECRET_FILE")
        e.pop("MARKET_API_EXTENSIONS", None)
        for name in ("FILES_ROOT", "DOWNLOAD_BASE_URL"):
            if os.environ.get("PLAIN_" + name):
                e["MARKET_" + name] = os.environ["PLAIN_" + name]
        r = subprocess.run(
            [env("PLAIN_MARKET_ADMIN"), *args], input=input, capture_output=True, text=True, env=e, timeout=120
        )
        if r.returncode != 0:
            raise RuntimeError(f"market-admin {' '.join(args)} exited with {r.returncode}: {r.stderr.strip()}")
        return r.stdout

    def new_key(self, account: str, access: str = "read-write") -> str:
        return self.admin("key", "create", "--account", account, "--mode", "test", "--access", access).strip()

    def client(self, key: str, **kw: Any) -> market.Market:
        kw.setdefault("sleep", no_sleep)
        return market.Market(key, base_url=self.base_url, **kw)


def psql(sql: str) -> str:
    """Runs SQL on the stack's database: unaligned, tuples only, trimmed."""
    r = subprocess.run(
        ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", env("MARKET_DB"), "-f", "-"],
        input=sql, capture_output=True, text=True, timeout=60,
    )
    if r.returncode != 0:
        raise RuntimeError(f"psql failed ({r.returncode}): {r.stderr.strip()}")
    return r.stdout.strip()


def expected_rate_limit() -> int:
    """The stack's requests per window: MARKET_RATE_LIMIT as the stack got it, else 600."""
    return int(os.environ.get("MARKET_RATE_LIMIT") or 600)


def check_rate_limit(tc: unittest.TestCase, rl: Optional[market.RateLimit]) -> None:
    """The X-RateLimit figures of an authenticated answer are all there and sensible."""
    tc.assertIsInstance(rl, market.RateLimit)
    assert rl is not None
    tc.assertEqual(rl.limit, expected_rate_limit())
    tc.assertTrue(0 <= rl.remaining < rl.limit, rl)
    tc.assertTrue(1 <= rl.reset <= 60, rl)


def sql_quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


class SleepRecorder:
    """A ``sleep`` for the client that records the delays instead of waiting; ``then`` runs
    at each call (e.g. to make the retry succeed)."""

    def __init__(self, then: Optional[Callable[[float], None]] = None) -> None:
        self.calls: List[float] = []
        self.then = then

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)
        if self.then is not None:
            self.then(seconds)


def no_sleep(seconds: float) -> None:
    raise AssertionError(f"the client wanted to retry (sleep {seconds}) where no retry was expected")


def client(key: str, **kw: Any) -> market.Market:
    """A client of the stack; by default any retry is a test failure."""
    kw.setdefault("sleep", no_sleep)
    return market.Market(key, base_url=env("BASE_URL"), **kw)


def count_requests(m: market.Market) -> List[str]:
    """Records every attempt the client sends (method and target) in the returned list."""
    sent: List[str] = []
    t = m._transport
    original = t._send_once

    def wrapped(method: str, target: str, body: Any, headers: Any) -> Any:
        sent.append(f"{method} {target}")
        return original(method, target, body, headers)

    t._send_once = wrapped  # type: ignore[method-assign]
    return sent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(fn: Callable[[], Any], timeout: float = 20.0, interval: float = 0.1, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


class Delivery:
    def __init__(self, path: str, headers: List[tuple], body: bytes) -> None:
        self.path = path
        self.headers = headers  # [(name, value)] as received
        self.body = body

    def header(self, name: str) -> Optional[str]:
        for n, v in self.headers:
            if n.lower() == name.lower():
                return v
        return None


class HttpsReceiver:
    """An HTTPS server on 127.0.0.1 that records every POST and answers 204."""

    def __init__(self, cert: str, key: str) -> None:
        self.deliveries: List[Delivery] = []
        lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with lock:
                    receiver.deliveries.append(Delivery(self.path, list(self.headers.items()), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, fmt: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def to(self, path: str) -> List[Delivery]:
        return [d for d in self.deliveries if d.path == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
