"""The transport without a stack: keep-alive connection reuse, the proxy environment
variables (absolute-form requests to an http proxy, CONNECT for https), the
``on_response`` hook (and that it never sees the key), the Retry-After cap."""

from __future__ import annotations

import http.server
import json
import os
import socket
import threading
import unittest
from typing import Any, Dict, List, Tuple
from unittest import mock

import market
from market import APIConnectionError, RateLimitError, RequestInfo

KEY = "sk_test_" + "Hk7" * 14
PRODUCT = {"id": "prod_1", "tiers": []}
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "ALL_PROXY",
              "all_proxy", "REQUEST_METHOD")


class Recorder:
    """An HTTP/1.1 server (keep-alive) that answers from a script of (status, headers,
    body), or as a proxy would: it records the request line, the headers and the client's
    port of every request, and refuses CONNECT with a 403 (after recording it)."""

    def __init__(self, script: List[Tuple[int, Dict[str, str], Any]]) -> None:
        self.script = list(script)
        self.seen: List[Dict[str, Any]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                outer.seen.append({"method": self.command, "target": self.path, "headers": dict(self.headers.items()),
                                   "port": self.client_address[1]})
                if self.command == "CONNECT":
                    self.send_response(403)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    self.close_connection = True
                    return
                status, headers, body = outer.script.pop(0) if outer.script else (200, {}, PRODUCT)
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_DELETE = do_CONNECT = _handle  # noqa: N815

            def log_message(self, fmt: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class TransportTest(unittest.TestCase):
    def setUp(self) -> None:
        patcher = mock.patch.dict(os.environ)  # restored after the test, whatever it set
        patcher.start()
        self.addCleanup(patcher.stop)
        for name in PROXY_VARS:
            os.environ.pop(name, None)

    def server(self, script: List[Tuple[int, Dict[str, str], Any]]) -> Recorder:
        srv = Recorder(script)
        self.addCleanup(srv.close)
        return srv

    def test_two_requests_share_one_tcp_connection(self) -> None:
        srv = self.server([(200, {}, PRODUCT), (200, {}, PRODUCT), (200, {}, PRODUCT)])
        with market.Market(KEY, base_url=srv.url, max_retries=0) as m:
            m.products.get("prod_1")
            m.products.get("prod_1")
            m.close()  # the idle connection is closed; the next request opens another
            m.products.get("prod_1")
        ports = [s["port"] for s in srv.seen]
        self.assertEqual(ports[0], ports[1], "the second request reused the first one's connection")
        self.assertNotEqual(ports[1], ports[2], "close() dropped the idle connection")

    def test_a_connection_the_server_closed_is_not_reused(self) -> None:
        srv = self.server([(200, {"Connection": "close"}, PRODUCT), (200, {}, PRODUCT)])
        m = market.Market(KEY, base_url=srv.url, max_retries=0, sleep=lambda s: self.fail("no retry expected"))
        m.products.get("prod_1")
        m.products.get("prod_1")
        self.assertNotEqual(srv.seen[0]["port"], srv.seen[1]["port"])

    def test_threads_share_the_pool(self) -> None:
        srv = self.server([(200, {}, PRODUCT)] * 8)
        m = market.Market(KEY, base_url=srv.url, max_retries=0)
        errors: List[BaseException] = []

        def work() -> None:
            try:
                m.products.get("prod_1")
                m.products.get("prod_1")
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(srv.seen), 8)
        self.assertLessEqual(len({s["port"] for s in srv.seen}), 4, "connections were reused")

    def test_http_proxy_gets_the_absolute_form(self) -> None:
        proxy = self.server([(200, {}, PRODUCT)])
        env = {"HTTP_PROXY": f"http://user:p%40ss@127.0.0.1:{proxy.port}"}
        with mock.patch.dict(os.environ, env):
            m = market.Market(KEY, base_url="http://api.example.test:8080/base", max_retries=0)
        self.assertEqual(m.products.get("prod_1").id, "prod_1")
        seen = proxy.seen[0]
        self.assertEqual(seen["target"], "http://api.example.test:8080/base/v1/products/prod_1")
        self.assertEqual(seen["headers"]["Host"], "api.example.test:8080")
        self.assertEqual(seen["headers"]["Proxy-Authorization"], "Basic dXNlcjpwQHNz")  # user:p@ss

    def test_https_goes_through_a_connect_tunnel(self) -> None:
        proxy = self.server([])
        env = {"HTTPS_PROXY": f"127.0.0.1:{proxy.port}"}
        with mock.patch.dict(os.environ, env):
            m = market.Market(KEY, base_url="https://api.example.test", max_retries=0)
        with self.assertRaises(APIConnectionError):
            m.products.get("prod_1")  # the recording proxy refuses the tunnel
        seen = proxy.seen[0]
        self.assertEqual((seen["method"], seen["target"]), ("CONNECT", "api.example.test:443"))
        self.assertNotIn("Authorization", seen["headers"], "the key never goes to the proxy in clear")

    def test_no_proxy_and_scheme_apply(self) -> None:
        origin = self.server([(200, {}, PRODUCT), (200, {}, PRODUCT)])
        proxy = self.server([])
        env = {"HTTP_PROXY": f"http://127.0.0.1:{proxy.port}", "NO_PROXY": "localhost,127.0.0.1"}
        with mock.patch.dict(os.environ, env):
            m = market.Market(KEY, base_url=origin.url, max_retries=0)
        m.products.get("prod_1")
        env = {"HTTPS_PROXY": f"http://127.0.0.1:{proxy.port}"}  # an https proxy only: http goes direct
        with mock.patch.dict(os.environ, env):
            m = market.Market(KEY, base_url=origin.url, max_retries=0)
        m.products.get("prod_1")
        self.assertEqual(len(origin.seen), 2)
        self.assertEqual(proxy.seen, [])

    def test_hook_once_per_attempt_and_never_the_key(self) -> None:
        srv = self.server([(502, {"X-Request-Id": "req_a"}, {"error": {"type": "api_error"}}),
                           (429, {"X-Request-Id": "req_b", "Retry-After": "0"}, {"error": {"type": "rate_limit_error"}}),
                           (200, {"X-Request-Id": "req_c"}, {"object": "list", "data": [], "next_cursor": None})])
        infos: List[RequestInfo] = []
        m = market.Market(KEY, base_url=srv.url + "/api", sleep=lambda s: None, on_response=infos.append)
        m.orders.list(limit=2)
        self.assertEqual([(i.method, i.path, i.status, i.error, i.request_id, i.attempt) for i in infos], [
            ("GET", "/v1/orders?limit=2", 502, None, "req_a", 1),
            ("GET", "/v1/orders?limit=2", 429, None, "req_b", 2),
            ("GET", "/v1/orders?limit=2", 200, None, "req_c", 3),
        ])
        self.assertTrue(all(i.duration_ms >= 0 for i in infos))
        shown = repr(infos) + json.dumps([vars(i) if hasattr(i, "__dict__") else i.__repr__() for i in infos])
        self.assertNotIn(KEY, shown)
        self.assertNotIn(KEY[8:], shown)
        self.assertNotIn("Bearer", shown)

    def test_hook_sees_network_failures_and_its_errors_are_ignored(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        infos: List[RequestInfo] = []

        def hook(i: RequestInfo) -> None:
            infos.append(i)
            raise RuntimeError("a broken hook")

        m = market.Market(KEY, base_url=f"http://127.0.0.1:{port}", sleep=lambda s: None, on_response=hook)
        with self.assertRaises(APIConnectionError):
            m.products.get("prod_1")
        self.assertEqual([(i.status, i.attempt) for i in infos], [(None, 1), (None, 2), (None, 3)])
        self.assertTrue(all(i.error for i in infos))
        with self.assertRaises(TypeError):
            market.Market(KEY, base_url="http://x", on_response="no")  # type: ignore[arg-type]

    def test_retry_after_over_60_s_is_not_waited_for(self) -> None:
        srv = self.server([(429, {"Retry-After": "61"}, {"error": {"type": "rate_limit_error"}})])
        m = market.Market(KEY, base_url=srv.url, sleep=lambda s: self.fail(f"slept {s}"))
        with self.assertRaises(RateLimitError):
            m.products.get("prod_1")
        self.assertEqual(len(srv.seen), 1)


if __name__ == "__main__":
    unittest.main()
