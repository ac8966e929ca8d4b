"""Unit tests of the pure parts (retry decisions, parameter encoding, error mapping, money
and timestamps) and of the client's behaviour against a scripted local HTTP server: no
stack needed."""

from __future__ import annotations

import datetime as dt
import http.server
import json
import os
import socket
import threading
import unittest
from decimal import Decimal
from typing import Any, Dict, List, Optional, Tuple
from unittest import mock
from urllib.parse import parse_qsl, urlsplit

import market
from market import (
    APIConnectionError,
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    Market,
    MarketError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
)
from market._errors import error_class_for_status, error_from_response, parse_retry_after
from market._http import encode_query, format_query_value, path_segment, retry_delay, should_retry

KEY = "sk_test_" + "Zq9" * 14


# --- retry decisions --------------------------------------------------------------------


class RetryDecisionTest(unittest.TestCase):
    def test_retry_statuses(self) -> None:
        for status in (429, 503, 502, 504):
            self.assertTrue(should_retry("GET", attempt=0, max_retries=2, status=status), status)
            self.assertTrue(should_retry("POST", attempt=0, max_retries=2, status=status, idempotency_key="k"), status)
        for status in (400, 401, 403, 404, 405, 409, 410, 413, 415, 500, 501):
            self.assertFalse(should_retry("GET", attempt=0, max_retries=2, status=status), status)
            self.assertFalse(should_retry("POST", attempt=0, max_retries=2, status=status, idempotency_key="k"), status)

    def test_max_retries_bounds_attempts(self) -> None:
        self.assertTrue(should_retry("GET", attempt=1, max_retries=2, status=429))
        self.assertFalse(should_retry("GET", attempt=2, max_retries=2, status=429))
        self.assertFalse(should_retry("GET", attempt=0, max_retries=0, status=503))
        self.assertFalse(should_retry("GET", attempt=0, max_retries=0, network_error=True))

    def test_network_errors_only_for_get_or_idempotent_post(self) -> None:
        self.assertTrue(should_retry("GET", attempt=0, max_retries=2, network_error=True))
        self.assertTrue(should_retry("get", attempt=0, max_retries=2, network_error=True))
        self.assertTrue(should_retry("POST", attempt=0, max_retries=2, network_error=True, idempotency_key="abc"))
        self.assertFalse(should_retry("POST", attempt=0, max_retries=2, network_error=True))
        self.assertFalse(should_retry("POST", attempt=0, max_retries=2, network_error=True, idempotency_key=""))
        self.assertFalse(should_retry("DELETE", attempt=0, max_retries=2, network_error=True))

    def test_delay_is_retry_after_else_backoff(self) -> None:
        self.assertEqual(retry_delay(0, "7"), 7.0)
        self.assertEqual(retry_delay(3, " 60 "), 60.0)
        self.assertEqual(retry_delay(0, "0"), 0.0)
        self.assertEqual([retry_delay(a) for a in range(6)], [0.5, 1.0, 2.0, 4.0, 8.0, 8.0])
        self.assertEqual(retry_delay(1, "soon"), 1.0)
        self.assertEqual(retry_delay(0, "-3"), 0.5)
        self.assertEqual(parse_retry_after("12"), 12)
        self.assertIsNone(parse_retry_after(None))
        self.assertIsNone(parse_retry_after("1.5"))


# --- parameter encoding -----------------------------------------------------------------


class ParameterEncodingTest(unittest.TestCase):
    def test_query_values(self) -> None:
        self.assertEqual(format_query_value("limit", 10), "10")
        self.assertEqual(format_query_value("min_price", Decimal("19.99")), "19.99")
        self.assertEqual(format_query_value("min_price", Decimal("1E+2")), "100")
        self.assertEqual(format_query_value("min_price", Decimal("0.10")), "0.10")
        self.assertEqual(format_query_value("min_price", Decimal("1E-7")), "0.0000001")
        self.assertEqual(format_query_value("min_price", 19.99), "19.99")
        self.assertEqual(format_query_value("min_price", 0.1), "0.1")
        self.assertEqual(format_query_value("min_price", 5), "5")
        self.assertEqual(format_query_value("min_price", "7.5"), "7.5")
        with self.assertRaises(TypeError):
            format_query_value("limit", True)
        with self.assertRaises(TypeError):
            format_query_value("limit", [1])
        with self.assertRaises(ValueError):
            format_query_value("min_price", Decimal("NaN"))

    def test_query_string(self) -> None:
        self.assertEqual(
            encode_query([("category", "fonts"), ("q", 'retro "font" & co+1/2'), ("seller", None), ("limit", 10)]),
            "category=fonts&q=retro%20%22font%22%20%26%20co%2B1%2F2&limit=10",
        )
        self.assertEqual(encode_query([("q", "café ü")]), "q=caf%C3%A9%20%C3%BC")
        self.assertEqual(encode_query([("cursor", "abc-_.~")]), "cursor=abc-_.~")
        self.assertEqual(encode_query([("a", None)]), "")
        self.assertEqual(encode_query([]), "")

    def test_path_segment(self) -> None:
        self.assertEqual(path_segment("id", "prod_font1"), "prod_font1")
        self.assertEqual(path_segment("id", "a/b?c#d e"), "a%2Fb%3Fc%23d%20e")
        self.assertEqual(path_segment("id", ".."), "..")
        with self.assertRaises(ValueError):
            path_segment("id", "")
        with self.assertRaises(TypeError):
            path_segment("id", 5)


# --- errors -----------------------------------------------------------------------------


class ErrorMappingTest(unittest.TestCase):
    def test_status_to_class(self) -> None:
        expected = {
            400: InvalidRequestError, 401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError,
            405: InvalidRequestError, 408: InvalidRequestError, 409: ConflictError, 410: InvalidRequestError,
            413: InvalidRequestError, 414: InvalidRequestError, 415: InvalidRequestError,
            416: InvalidRequestError, 429: RateLimitError, 500: ServerError, 502: ServerError,
            503: ServerError, 504: ServerError,
        }
        for status, cls in expected.items():
            self.assertIs(error_class_for_status(status), cls, status)
            self.assertTrue(issubclass(cls, MarketError))

    def test_from_envelope(self) -> None:
        import email.message

        h = email.message.Message()
        h["X-RateLimit-Limit"] = "600"
        h["x-ratelimit-remaining"] = "0"
        h["X-RateLimit-Reset"] = "42"
        h["Retry-After"] = "42"
        h["X-Request-Id"] = "hdr-id"
        body = json.dumps({"error": {"type": "rate_limit_error", "code": "rate_limited", "message": "slow down",
                                     "request_id": "req_1"}}).encode()
        err = error_from_response(429, h, body)
        self.assertIsInstance(err, RateLimitError)
        self.assertEqual((err.status, err.type, err.code, err.message, err.param, err.request_id),
                         (429, "rate_limit_error", "rate_limited", "slow down", None, "req_1"))
        self.assertEqual(err.retry_after, 42)
        self.assertEqual((err.rate_limit.limit, err.rate_limit.remaining, err.rate_limit.reset), (600, 0, 42))
        self.assertEqual(str(err), "429 rate_limited: slow down (request_id=req_1)")

    def test_non_json_error_body(self) -> None:
        import email.message

        h = email.message.Message()
        h["X-Request-Id"] = "abc"
        err = error_from_response(502, h, b"<html>Bad Gateway</html>")
        self.assertIsInstance(err, ServerError)
        self.assertEqual(err.status, 502)
        self.assertIsNone(err.code)
        self.assertEqual(err.request_id, "abc")
        self.assertIsNone(err.rate_limit)
        self.assertIn("502", str(err))


# --- models -----------------------------------------------------------------------------


class ModelTest(unittest.TestCase):
    def test_money_and_timestamps(self) -> None:
        from market._http import decode_json

        obj = decode_json(
            b'{"id":"prod_1","title":"T","description":"","category":"fonts","price":19.99,"currency":"USD",'
            b'"seller":"s","tiers":[{"id":"tier_1","name":"P","description":"","price":19.99,"currency":"USD",'
            b'"licence":{"seats":1}},{"id":"tier_2","name":"C","description":"","price":1200,"currency":"USD",'
            b'"licence":{}}],"rating":{"average":4.5,"count":2},"created_at":"2026-01-02T03:04:05Z",'
            b'"updated_at":"2026-01-02T03:04:05Z"}'
        )
        p = market.Product.from_json(obj)
        self.assertEqual(p.price, Decimal("19.99"))
        self.assertEqual(str(p.price), "19.99")
        self.assertEqual(str(p.tiers[1].price), "1200")
        self.assertIsInstance(p.tiers[1].price, Decimal)
        self.assertEqual(p.rating.average, Decimal("4.5"))
        self.assertEqual(p.created_at, dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc))
        self.assertEqual(p.tiers[0].licence, {"seats": 1})

    def test_large_and_precise_money_exact(self) -> None:
        from market._http import decode_json

        item = market.ProductListItem.from_json(decode_json(b'{"id":"p","title":"t","price":123456789012.34,"seller":"s"}'))
        self.assertEqual(str(item.price), "123456789012.34")

    def test_secret_not_in_repr(self) -> None:
        sub = market.WebhookSubscription.from_json(
            {"id": "we_1", "object": "webhook_subscription", "url": "https://x", "events": [], "description": "",
             "status": "enabled", "livemode": False, "secret": "whsec_c2VjcmV0", "created_at": None}
        )
        self.assertNotIn("whsec_", repr(sub))
        self.assertEqual(sub.secret, "whsec_c2VjcmV0")


# --- construction and the key -----------------------------------------------------------


class ConstructionTest(unittest.TestCase):
    def test_base_url_argument_env_or_error(self) -> None:
        with mock.patch.dict(os.environ, {"MARKET_BASE_URL": "http://env.example:8080/"}):
            self.assertEqual(Market(KEY).base_url, "http://env.example:8080")
            self.assertEqual(Market(KEY, base_url="https://arg.example").base_url, "https://arg.example")
        with mock.patch.dict(os.environ, {}, clear=True):
            with self.assertRaises(ValueError) as cm:
                Market(KEY)
            self.assertIn("MARKET_BASE_URL", str(cm.exception))
        with self.assertRaises(ValueError):
            Market(KEY, base_url="ftp://x")
        with self.assertRaises(ValueError):
            Market(KEY, base_url="https://user:pw@x")
        with self.assertRaises(ValueError):
            Market("", base_url="http://x")
        with self.assertRaises(ValueError):
            Market(KEY + "\r\nX: y", base_url="http://x")
        with self.assertRaises(ValueError):
            Market(KEY, base_url="http://x", max_retries=-1)
        self.assertEqual(Market(KEY, base_url="http://x").max_retries, 2)

    def test_key_never_shown(self) -> None:
        m = Market(KEY, base_url="http://127.0.0.1:1", max_retries=0)
        texts = [repr(m), str(m), f"{m}", repr(m.products), repr(m.sellers), repr(m.orders),
                 repr(m.downloads), repr(m.webhooks), repr(vars(m)), repr(vars(m._transport)),
                 str(vars(m._transport)), f"{m._transport._key}", str(m._transport._key)]
        for text in texts:
            self.assertNotIn(KEY, text)
            self.assertNotIn(KEY[8:], text)
        with self.assertRaises(APIConnectionError) as cm:
            m.products.list()
        self.assertNotIn(KEY[8:], str(cm.exception) + repr(cm.exception))
        import pickle

        with self.assertRaises(TypeError):
            pickle.dumps(m)


# --- against a scripted server ----------------------------------------------------------


class ScriptedServer:
    """Answers requests from a script of (status, headers, body) or "drop" (close without
    answering); records every request (method, path, headers, body)."""

    def __init__(self, script: List[Any]) -> None:
        self.script = list(script)
        self.requests: List[Tuple[str, str, Dict[str, str], bytes]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                outer.requests.append((self.command, self.path, dict(self.headers.items()), body))
                step = outer.script.pop(0) if outer.script else (500, {}, b"{}")
                if step == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                status, headers, payload = step
                if isinstance(payload, (dict, list)):
                    payload = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _handle  # noqa: N815

            def log_message(self, fmt: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


RL = {"X-RateLimit-Limit": "600", "X-RateLimit-Remaining": "597", "X-RateLimit-Reset": "30", "X-Request-Id": "r1"}
PAGE = {"data": [{"id": "prod_1", "title": "A", "price": 19.99, "seller": "s"}], "next_cursor": None}


def err(status: int, type_: str, code: str, extra: Optional[Dict[str, str]] = None) -> Tuple[int, Dict[str, str], Any]:
    return status, {**RL, **(extra or {})}, {"error": {"type": type_, "code": code, "message": code, "request_id": "x"}}


class ScriptedClientTest(unittest.TestCase):
    def run_script(self, script: List[Any], **kw: Any) -> Tuple[Market, ScriptedServer, List[float]]:
        srv = ScriptedServer(script)
        self.addCleanup(srv.close)
        slept: List[float] = []
        m = Market(KEY, base_url=srv.url + "/api/", sleep=slept.append, timeout=5, **kw)
        return m, srv, slept

    def test_request_shape_and_query(self) -> None:
        m, srv, _ = self.run_script([(200, RL, PAGE)])
        page = m.products.list(category="fonts", q="retro font", min_price=Decimal("1.50"), max_price=20,
                               sort="price_asc", limit=10, cursor="c_1")
        method, path, headers, body = srv.requests[0]
        self.assertEqual(method, "GET")
        parts = urlsplit(path)
        self.assertEqual(parts.path, "/api/v1/products")
        self.assertEqual(parts.query, "category=fonts&q=retro%20font&min_price=1.50&max_price=20&sort=price_asc"
                                      "&limit=10&cursor=c_1")
        self.assertEqual(headers["Authorization"], f"Bearer {KEY}")
        self.assertEqual(headers["Accept"], "application/json")
        self.assertNotIn("Idempotency-Key", headers)
        self.assertEqual(body, b"")
        self.assertEqual(page.data[0].price, Decimal("19.99"))
        self.assertEqual((page.rate_limit.limit, page.rate_limit.remaining, page.rate_limit.reset), (600, 597, 30))
        self.assertEqual(page.request_id, "r1")
        self.assertFalse(page.has_more)

    def test_routes_and_bodies(self) -> None:
        link = {"object": "download_link", "download": "dl_1", "url": "http://x/files/t", "expires_at": "2026-11-21T11:04:05Z"}
        sub = {"id": "we_1", "object": "webhook_subscription", "url": "https://h/x", "events": ["payout.sent"],
               "description": "d", "status": "enabled", "livemode": False, "secret": "whsec_AA==",
               "created_at": "2026-11-21T10:04:05Z"}
        seller = {"id": "s", "name": "S", "bio": "", "website": None, "created_at": "2026-01-01T00:00:00Z",
                  "product_count": 1, "products": PAGE}
        m, srv, _ = self.run_script([(200, RL, seller), (200, RL, {"data": [], "next_cursor": None}),
                                     (201, RL, link), (201, RL, link), (201, RL, sub), (201, RL, sub)])
        s = m.sellers.get("pixel/forge", limit=5, cursor="cc")
        self.assertEqual(s.products.data[0].id, "prod_1")
        self.assertIsNone(s.website)
        m.orders.list(status="refunded", limit=3)
        m.downloads.create_link("dl_1")
        m.downloads.create_link("dl_1", expires_in=120, idempotency_key="my-key")
        m.webhooks.create(url="https://h/x")
        m.webhooks.create(url="https://h/x", events=["payout.sent", "sale.completed"], description="d",
                          idempotency_key="k2")
        reqs = srv.requests
        self.assertEqual(reqs[0][1], "/api/v1/sellers/pixel%2Fforge?limit=5&cursor=cc")
        self.assertEqual(reqs[1][1], "/api/v1/orders?status=refunded&limit=3")
        self.assertEqual((reqs[2][0], reqs[2][1], reqs[2][3]), ("POST", "/api/v1/downloads/dl_1/link", b""))
        self.assertNotIn("Content-Type", reqs[2][2])
        self.assertTrue(reqs[2][2]["Idempotency-Key"].startswith("market-python-"))
        self.assertEqual(json.loads(reqs[3][3]), {"expires_in": 120})
        self.assertEqual(reqs[3][2]["Content-Type"], "application/json")
        self.assertEqual(reqs[3][2]["Idempotency-Key"], "my-key")
        self.assertEqual(json.loads(reqs[4][3]), {"url": "https://h/x"})
        self.assertTrue(reqs[4][2]["Idempotency-Key"].startswith("market-python-"))
        self.assertNotEqual(reqs[4][2]["Idempotency-Key"], reqs[2][2]["Idempotency-Key"])
        self.assertEqual(reqs[5][3], b'{"url":"https://h/x","events":["payout.sent","sale.completed"],"description":"d"}')
        self.assertEqual(reqs[5][2]["Idempotency-Key"], "k2")

    def test_client_side_type_errors(self) -> None:
        m, srv, _ = self.run_script([])
        with self.assertRaises(TypeError):
            m.downloads.create_link("dl_1", expires_in="60")  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            m.webhooks.create(url="https://x", events="payout.sent")  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            m.products.list(limit=True)
        with self.assertRaises(TypeError):
            m.products.list(colour="red")  # type: ignore[call-arg]
        with self.assertRaises(ValueError):
            m.products.get("")
        self.assertEqual(srv.requests, [])

    def test_429_then_503_then_success_waits_retry_after(self) -> None:
        m, srv, slept = self.run_script([
            err(429, "rate_limit_error", "rate_limited", {"Retry-After": "7"}),
            err(503, "api_error", "service_unavailable", {"Retry-After": "1"}),
            (200, RL, PAGE),
        ])
        page = m.products.list()
        self.assertEqual(slept, [7.0, 1.0])
        self.assertEqual(len(srv.requests), 3)
        self.assertEqual(page.data[0].id, "prod_1")

    def test_429_gives_up_after_max_retries(self) -> None:
        m, srv, slept = self.run_script([err(429, "rate_limit_error", "rate_limited", {"Retry-After": "3"})] * 5)
        with self.assertRaises(RateLimitError) as cm:
            m.products.list()
        self.assertEqual(slept, [3.0, 3.0])
        self.assertEqual(len(srv.requests), 3)
        self.assertEqual(cm.exception.retry_after, 3)
        self.assertEqual(cm.exception.rate_limit.remaining, 597)

    def test_max_retries_zero(self) -> None:
        m, srv, slept = self.run_script([err(503, "api_error", "service_unavailable", {"Retry-After": "1"})],
                                        max_retries=0)
        with self.assertRaises(ServerError):
            m.orders.list()
        self.assertEqual((slept, len(srv.requests)), ([], 1))

    def test_post_retried_with_the_same_idempotency_key(self) -> None:
        link = {"object": "download_link", "download": "dl_1", "url": "http://x/files/t", "expires_at": None}
        m, srv, slept = self.run_script(["drop", err(503, "api_error", "service_unavailable", {"Retry-After": "2"}),
                                         (201, RL, link)])
        m.downloads.create_link("dl_1", expires_in=60)
        keys = [r[2]["Idempotency-Key"] for r in srv.requests]
        self.assertEqual(len(keys), 3)
        self.assertEqual(len(set(keys)), 1)
        self.assertEqual([r[3] for r in srv.requests], [b'{"expires_in":60}'] * 3)
        self.assertEqual(slept, [0.5, 2.0])

    def test_get_retried_after_dropped_connection(self) -> None:
        m, srv, slept = self.run_script(["drop", "drop", (200, RL, {"id": "prod_1", "tiers": []})])
        self.assertEqual(m.products.get("prod_1").id, "prod_1")
        self.assertEqual(slept, [0.5, 1.0])
        m2, srv2, slept2 = self.run_script(["drop", "drop", "drop"])
        with self.assertRaises(APIConnectionError) as cm:
            m2.products.get("prod_1")
        self.assertIsNone(cm.exception.status)
        self.assertEqual(len(srv2.requests), 3)

    def test_errors_not_retried(self) -> None:
        for status, cls, type_, code in [
            (400, InvalidRequestError, "invalid_request_error", "parameter_invalid"),
            (401, AuthenticationError, "authentication_error", "invalid_api_key"),
            (403, PermissionDeniedError, "permission_error", "insufficient_scope"),
            (404, NotFoundError, "invalid_request_error", "resource_missing"),
            (405, InvalidRequestError, "invalid_request_error", "method_not_allowed"),
            (409, ConflictError, "invalid_request_error", "order_refunded"),
            (413, InvalidRequestError, "invalid_request_error", "body_too_large"),
            (415, InvalidRequestError, "invalid_request_error", "unsupported_media_type"),
            (500, ServerError, "api_error", "internal_error"),
        ]:
            m, srv, slept = self.run_script([err(status, type_, code)])
            with self.assertRaises(cls) as cm:
                m.downloads.create_link("dl_1")
            e = cm.exception
            self.assertEqual((e.status, e.type, e.code), (status, type_, code))
            self.assertEqual((slept, len(srv.requests)), ([], 1))

    def test_connection_refused_is_retried_for_get_then_raises(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        slept: List[float] = []
        m = Market(KEY, base_url=f"http://127.0.0.1:{port}", sleep=slept.append)
        with self.assertRaises(APIConnectionError) as cm:
            m.products.list()
        self.assertEqual(slept, [0.5, 1.0])
        self.assertIsInstance(cm.exception.__cause__, OSError)
        self.assertIsInstance(cm.exception, MarketError)

    def test_all_fetches_lazily_and_follows_cursors(self) -> None:
        p1 = {"data": [{"id": "o1"}, {"id": "o2"}], "next_cursor": "c1"}
        p2 = {"data": [{"id": "o3"}], "next_cursor": None}
        m, srv, _ = self.run_script([(200, RL, p1), (200, RL, p2)])
        it = m.orders.all(status="paid", limit=2)
        self.assertEqual(len(srv.requests), 0)
        self.assertEqual(next(it).id, "o1")
        self.assertEqual(len(srv.requests), 1)
        self.assertEqual(next(it).id, "o2")
        self.assertEqual(len(srv.requests), 1)
        self.assertEqual([o.id for o in it], ["o3"])
        self.assertEqual([r[1] for r in srv.requests],
                         ["/api/v1/orders?status=paid&limit=2", "/api/v1/orders?status=paid&limit=2&cursor=c1"])


if __name__ == "__main__":
    unittest.main()
