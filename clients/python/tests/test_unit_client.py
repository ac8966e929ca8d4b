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
from market._http import (
    encode_query,
    format_query_value,
    format_timestamp,
    path_segment,
    retry_delay,
    should_retry,
)

KEY = "sk_test_" + "Zq9" * 14


def assert_waits(tc: unittest.TestCase, slept: List[float], expected: List[float]) -> None:
    """The waits between attempts: each one ``e`` (a Retry-After) or a back-off from e/2
    to e (the jitter)."""
    tc.assertEqual(len(slept), len(expected), slept)
    for got, e in zip(slept, expected):
        tc.assertTrue(e / 2 <= got <= e, f"waited {got}, expected {e / 2}..{e}")


# --- retry decisions --------------------------------------------------------------------


class RetryDecisionTest(unittest.TestCase):
    def test_retry_statuses(self) -> None:
        for status in (429, 503, 502, 504):
            self.assertTrue(should_retry("GET", attempt=0, max_retries=2, status=status), status)
            self.assertTrue(should_retry("POST", attempt=0, max_retries=2, status=status, idempotency_key="k"), status)
        for status in (400, 401, 403, 404, 405, 409, 410, 413, 415, 500, 501):
            self.assertFalse(should_retry("GET", attempt=0, max_retries=2, status=status), status)
            self.assertFalse(should_retry("POST", attempt=0, max_retries=2, status=status, idempotency_key="k"), status)
        # 502/504 (the gateway) only when sending again cannot act twice; 429/503 always.
        for status in (502, 504):
            self.assertFalse(should_retry("POST", attempt=0, max_retries=2, status=status), status)
        for status in (429, 503):
            self.assertTrue(should_retry("POST", attempt=0, max_retries=2, status=status), status)

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
        self.assertEqual([round(retry_delay(a, rand=lambda: 0.999999), 3) for a in range(6)], [0.5, 1.0, 2.0, 4.0, 8.0, 8.0])
        self.assertEqual([retry_delay(a, rand=lambda: 0.0) for a in range(6)], [0.25, 0.5, 1.0, 2.0, 4.0, 4.0])
        for a in range(6):
            self.assertTrue(0.25 * 2**min(a, 4) <= retry_delay(a) <= 0.5 * 2**min(a, 4))
        self.assertEqual(retry_delay(1, "soon", rand=lambda: 0.0), 0.5)
        self.assertEqual(retry_delay(0, "-3", rand=lambda: 0.0), 0.25)
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

    def test_timestamps_rfc3339_utc(self) -> None:
        utc = dt.timezone.utc
        self.assertEqual(format_timestamp("t", dt.datetime(2026, 11, 26, 10, 4, 5, tzinfo=utc)), "2026-11-26T10:04:05Z")
        # naive: taken as UTC
        self.assertEqual(format_timestamp("t", dt.datetime(2026, 11, 26, 10, 4, 5)), "2026-11-26T10:04:05Z")
        # another offset: converted to UTC (across midnight and a year)
        plus1 = dt.timezone(dt.timedelta(hours=1))
        self.assertEqual(format_timestamp("t", dt.datetime(2027, 1, 1, 0, 30, 0, tzinfo=plus1)), "2026-12-31T23:30:00Z")
        minus = dt.timezone(dt.timedelta(hours=-5, minutes=-30))
        self.assertEqual(format_timestamp("t", dt.datetime(2026, 2, 28, 20, 0, 0, tzinfo=minus)), "2026-03-01T01:30:00Z")
        # a fraction only when there is one, without trailing zeros
        self.assertEqual(format_timestamp("t", dt.datetime(2026, 11, 26, 10, 4, 5, 250000, tzinfo=utc)),
                         "2026-11-26T10:04:05.25Z")
        self.assertEqual(format_timestamp("t", dt.datetime(2026, 11, 26, 10, 4, 5, 123456, tzinfo=utc)),
                         "2026-11-26T10:04:05.123456Z")
        self.assertEqual(format_timestamp("t", dt.datetime(2026, 11, 26, 10, 4, 5, 7)), "2026-11-26T10:04:05.000007Z")
        self.assertEqual(format_timestamp("t", dt.datetime(999, 1, 2, 3, 4, 5)), "0999-01-02T03:04:05Z")
        # a string as it is; None stays None
        self.assertEqual(format_timestamp("t", "2026-11-26T11:04:05+01:00"), "2026-11-26T11:04:05+01:00")
        self.assertIsNone(format_timestamp("t", None))
        for bad in (dt.date(2026, 11, 26), 1764151445, 1764151445.5):
            with self.assertRaises(TypeError) as cm:
                format_timestamp("created_gte", bad)
            self.assertIn("created_gte", str(cm.exception))


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

    def test_subscription_as_managed_without_secret(self) -> None:
        sub = market.WebhookSubscription.from_json(
            {"id": "we_1", "object": "webhook_subscription", "url": "https://x", "events": ["payout.sent"],
             "description": "d", "status": "disabled", "livemode": True, "created_at": "2026-11-21T10:04:05Z",
             "updated_at": "2026-11-22T11:05:06Z"}
        )
        self.assertIsNone(sub.secret)
        self.assertEqual((sub.status, sub.livemode, sub.events), ("disabled", True, ["payout.sent"]))
        self.assertEqual(sub.created_at, dt.datetime(2026, 11, 21, 10, 4, 5, tzinfo=dt.timezone.utc))
        self.assertEqual(sub.updated_at, dt.datetime(2026, 11, 22, 11, 5, 6, tzinfo=dt.timezone.utc))
        created = market.WebhookSubscription.from_json({"id": "we_2", "secret": "whsec_AA==", "created_at": None})
        self.assertIsNone(created.updated_at)
        deleted = market.DeletedWebhookSubscription.from_json({"id": "we_1", "object": "webhook_subscription",
                                                               "deleted": True})
        self.assertEqual((deleted.id, deleted.object, deleted.deleted), ("we_1", "webhook_subscription", True))

    def test_events_of_every_type_and_an_unknown_one(self) -> None:
        from market._http import decode_json

        head = '"created_at":"2026-11-21T10:04:05Z","livemode":false'
        sale = market.Event.from_json(decode_json(
            ('{"id":"evt_1","type":"sale.refunded",' + head + ',"data":{"order":"ord_1","product":"p","tier":"t",'
             '"amount":123456789012.34,"currency":"USD"}}').encode()))
        self.assertEqual(sale.data["amount"], Decimal("123456789012.34"))
        self.assertEqual(str(sale.data["amount"]), "123456789012.34")
        payout = market.Event.from_json(decode_json(
            ('{"id":"evt_2","type":"payout.sent",' + head + ',"data":{"payout":"po_1","amount":1200,'
             '"currency":"JPY"}}').encode()))
        self.assertIsInstance(payout.data["amount"], Decimal)
        self.assertEqual(payout.data["amount"], Decimal("1200"))
        review = market.Event.from_json(decode_json(
            ('{"id":"evt_3","type":"review.created",' + head + ',"data":{"review":"rev_1","product":"p",'
             '"rating":5,"body":"Lovely"}}').encode()))
        self.assertEqual(review.data, {"review": "rev_1", "product": "p", "rating": 5, "body": "Lovely"})
        test = market.Event.from_json(decode_json(
            ('{"id":"evt_4","type":"webhook.test",' + head + ',"data":{"subscription":"we_1"}}').encode()))
        self.assertEqual((test.type, test.data), ("webhook.test", {"subscription": "we_1"}))
        self.assertEqual(test.created_at, dt.datetime(2026, 11, 21, 10, 4, 5, tzinfo=dt.timezone.utc))
        self.assertIs(test.livemode, False)
        unknown = market.Event.from_json(decode_json(
            ('{"id":"evt_5","type":"thing.happened",' + head + ',"data":{"x":[1,{"y":null}],"rate":0.5}}').encode()))
        self.assertEqual(unknown.type, "thing.happened")
        self.assertEqual(unknown.data, {"x": [1, {"y": None}], "rate": Decimal("0.5")})
        self.assertIs(market.WebhookEvent, market.Event)

    def test_event_with_deliveries_and_nulls(self) -> None:
        from market._http import decode_json

        detail = market.EventDetail.from_json(decode_json(
            b'{"id":"evt_1","type":"payout.sent","created_at":"2026-11-21T10:04:05Z","livemode":false,'
            b'"data":{"payout":"po_1","amount":12.5,"currency":"USD"},"deliveries":['
            b'{"subscription":"we_a","status":"delivered","attempts":1,"last_attempt_at":"2026-11-21T10:04:06Z",'
            b'"last_status":204,"last_error":null},'
            b'{"subscription":"we_b","status":"pending","attempts":0,"last_attempt_at":null,"last_status":null,'
            b'"last_error":null},'
            b'{"subscription":"we_c","status":"failed","attempts":3,"last_attempt_at":"2026-11-21T10:05:00Z",'
            b'"last_status":null,"last_error":"connection refused"}]}'
        ))
        self.assertIsInstance(detail, market.Event)
        self.assertEqual(detail.data["amount"], Decimal("12.5"))
        self.assertEqual([d.subscription for d in detail.deliveries], ["we_a", "we_b", "we_c"])
        a, b, c = detail.deliveries
        self.assertEqual(a, market.EventDelivery(subscription="we_a", status="delivered", attempts=1,
                                                 last_attempt_at=dt.datetime(2026, 11, 21, 10, 4, 6,
                                                                             tzinfo=dt.timezone.utc),
                                                 last_status=204, last_error=None))
        self.assertEqual((b.status, b.attempts, b.last_attempt_at, b.last_status, b.last_error),
                         ("pending", 0, None, None, None))
        self.assertEqual((c.status, c.attempts, c.last_status, c.last_error), ("failed", 3, None, "connection refused"))
        self.assertEqual(c.last_attempt_at, dt.datetime(2026, 11, 21, 10, 5, tzinfo=dt.timezone.utc))
        self.assertEqual(market.EventDetail.from_json({"id": "evt_2", "type": "webhook.test", "data": {},
                                                       "deliveries": []}).deliveries, [])


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

            do_GET = do_POST = do_DELETE = _handle  # noqa: N815

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
        assert_waits(self, slept, [7.0, 1.0])
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
        assert_waits(self, slept, [0.5, 2.0])

    def test_get_retried_after_dropped_connection(self) -> None:
        m, srv, slept = self.run_script(["drop", "drop", (200, RL, {"id": "prod_1", "tiers": []})])
        self.assertEqual(m.products.get("prod_1").id, "prod_1")
        assert_waits(self, slept, [0.5, 1.0])
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
        assert_waits(self, slept, [0.5, 1.0])
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


SUB = {"id": "we_1", "object": "webhook_subscription", "url": "https://h/x", "events": ["payout.sent"],
       "description": "d", "status": "enabled", "livemode": False, "created_at": "2026-11-21T10:04:05Z",
       "updated_at": "2026-11-21T10:04:05Z"}
TEST_EVENT = {"id": "evt_t1", "type": "webhook.test", "created_at": "2026-11-21T10:04:05Z", "livemode": False,
              "data": {"subscription": "we_1"}}


class WebhooksAndEventsScriptedTest(unittest.TestCase):
    """The management calls and the events calls against the scripted server: the request
    each one sends, its Idempotency-Key, and what it returns."""

    run_script = ScriptedClientTest.run_script

    def test_webhook_reads(self) -> None:
        page = {"object": "list", "data": [SUB, {**SUB, "id": "we_0", "status": "disabled"}], "next_cursor": "cur_2"}
        m, srv, _ = self.run_script([(200, RL, page), (200, RL, {"object": "list", "data": [], "next_cursor": None}),
                                     (200, RL, SUB)])
        p = m.webhooks.list(limit=2)
        self.assertEqual([x.id for x in p], ["we_1", "we_0"])
        self.assertIsInstance(p.data[1], market.WebhookSubscription)
        self.assertEqual(p.data[1].status, "disabled")
        self.assertIsNone(p.data[0].secret)
        self.assertEqual(p.data[0].updated_at, dt.datetime(2026, 11, 21, 10, 4, 5, tzinfo=dt.timezone.utc))
        self.assertEqual((p.next_cursor, p.request_id, p.rate_limit.remaining), ("cur_2", "r1", 597))
        m.webhooks.list(cursor="cur_2")
        sub = m.webhooks.get("we_1/..?")
        self.assertEqual((sub.id, sub.url, sub.request_id, sub.rate_limit.limit), ("we_1", "https://h/x", "r1", 600))
        reqs = srv.requests
        self.assertEqual([(r[0], r[1], r[3]) for r in reqs], [
            ("GET", "/api/v1/webhooks?limit=2", b""),
            ("GET", "/api/v1/webhooks?cursor=cur_2", b""),
            ("GET", "/api/v1/webhooks/we_1%2F..%3F", b""),
        ])
        for r in reqs:
            self.assertNotIn("Idempotency-Key", r[2])
            self.assertEqual(r[2]["Authorization"], f"Bearer {KEY}")

    def test_webhooks_all_walks_pages_lazily(self) -> None:
        p1 = {"object": "list", "data": [SUB], "next_cursor": "c1"}
        p2 = {"object": "list", "data": [{**SUB, "id": "we_0"}], "next_cursor": None}
        m, srv, _ = self.run_script([(200, RL, p1), (200, RL, p2)])
        it = m.webhooks.all(limit=1)
        self.assertEqual(srv.requests, [])
        self.assertEqual(next(it).id, "we_1")
        self.assertEqual(len(srv.requests), 1)
        self.assertEqual([s.id for s in it], ["we_0"])
        self.assertEqual([r[1] for r in srv.requests], ["/api/v1/webhooks?limit=1", "/api/v1/webhooks?limit=1&cursor=c1"])

    def test_webhook_changes(self) -> None:
        rotated = {**SUB, "secret": "whsec_bmV3"}
        deleted = {"id": "we_1", "object": "webhook_subscription", "deleted": True}
        m, srv, _ = self.run_script([(200, RL, SUB), (200, RL, {**SUB, "status": "disabled"}), (200, RL, SUB),
                                     (200, RL, deleted), (200, RL, deleted), (200, RL, rotated), (200, RL, rotated),
                                     (202, RL, TEST_EVENT), (202, RL, TEST_EVENT)])
        self.assertEqual(m.webhooks.update("we_1").id, "we_1")
        upd = m.webhooks.update("we_1", description="new", disabled=True)
        self.assertEqual(upd.status, "disabled")
        m.webhooks.update("we_1", url="https://h/y", events=["sale.completed", "payout.sent"], description="",
                          disabled=False, idempotency_key="upd-1")
        d = m.webhooks.delete("we_1")
        self.assertIsInstance(d, market.DeletedWebhookSubscription)
        self.assertEqual((d.id, d.object, d.deleted, d.request_id), ("we_1", "webhook_subscription", True, "r1"))
        m.webhooks.delete("we 1", idempotency_key="del-1")
        r = m.webhooks.rotate_secret("we_1")
        self.assertEqual(r.secret, "whsec_bmV3")
        self.assertNotIn("whsec_bmV3", repr(r))
        m.webhooks.rotate_secret("we_1", expire_old_in=0, idempotency_key="rot-1")
        ev = m.webhooks.test("we_1")
        self.assertIsInstance(ev, market.Event)
        self.assertEqual((ev.id, ev.type, ev.data, ev.livemode), ("evt_t1", "webhook.test", {"subscription": "we_1"}, False))
        self.assertEqual((ev.request_id, ev.rate_limit.reset), ("r1", 30))
        m.webhooks.test("we_1", idempotency_key="test-1")

        reqs = srv.requests
        self.assertEqual([(r[0], r[1], r[3]) for r in reqs], [
            ("POST", "/api/v1/webhooks/we_1", b"{}"),
            ("POST", "/api/v1/webhooks/we_1", b'{"description":"new","disabled":true}'),
            ("POST", "/api/v1/webhooks/we_1",
             b'{"url":"https://h/y","events":["sale.completed","payout.sent"],"description":"","disabled":false}'),
            ("DELETE", "/api/v1/webhooks/we_1", b""),
            ("DELETE", "/api/v1/webhooks/we%201", b""),
            ("POST", "/api/v1/webhooks/we_1/rotate_secret", b""),
            ("POST", "/api/v1/webhooks/we_1/rotate_secret", b'{"expire_old_in":0}'),
            ("POST", "/api/v1/webhooks/we_1/test", b""),
            ("POST", "/api/v1/webhooks/we_1/test", b""),
        ])
        for i in (0, 1, 2, 6):
            self.assertEqual(reqs[i][2]["Content-Type"], "application/json")
        for i in (3, 4, 5, 7, 8):
            self.assertNotIn("Content-Type", reqs[i][2])
        keys = [r[2].get("Idempotency-Key") for r in reqs]
        self.assertEqual([keys[i] for i in (2, 4, 6, 8)], ["upd-1", "del-1", "rot-1", "test-1"])
        generated = [keys[i] for i in (0, 1, 3, 5, 7)]
        for k in generated:
            self.assertTrue(k and k.startswith("market-python-"), k)
        self.assertEqual(len(set(generated)), len(generated), "one key per call")

    def test_changes_retried_with_the_same_idempotency_key(self) -> None:
        calls = [
            ("update", lambda m: m.webhooks.update("we_1", disabled=True), (200, RL, SUB), b'{"disabled":true}'),
            ("delete", lambda m: m.webhooks.delete("we_1"),
             (200, RL, {"id": "we_1", "object": "webhook_subscription", "deleted": True}), b""),
            ("rotate_secret", lambda m: m.webhooks.rotate_secret("we_1", expire_old_in=60),
             (200, RL, {**SUB, "secret": "whsec_AA=="}), b'{"expire_old_in":60}'),
            ("test", lambda m: m.webhooks.test("we_1"), (202, RL, TEST_EVENT), b""),
        ]
        for name, call, answer, body in calls:
            with self.subTest(name):
                m, srv, slept = self.run_script(["drop", err(503, "api_error", "service_unavailable",
                                                             {"Retry-After": "2"}), answer])
                call(m)
                self.assertEqual(len(srv.requests), 3)
                keys = [r[2].get("Idempotency-Key") for r in srv.requests]
                self.assertTrue(keys[0] and keys[0].startswith("market-python-"), keys)
                self.assertEqual(len(set(keys)), 1, keys)
                self.assertEqual([r[3] for r in srv.requests], [body] * 3)
                assert_waits(self, slept, [0.5, 2.0])
                # a second call: a new key
                m2, srv2, _ = self.run_script([answer])
                call(m2)
                self.assertNotEqual(srv2.requests[0][2]["Idempotency-Key"], keys[0])

    def test_delete_retried_after_a_drop_then_404_raised(self) -> None:
        # A DELETE carries a key, so it is retried after a dropped connection; a 404 after
        # that is raised as NotFoundError, not retried.
        m, srv, slept = self.run_script(["drop", err(404, "invalid_request_error", "resource_missing")])
        with self.assertRaises(NotFoundError):
            m.webhooks.delete("we_1", idempotency_key="k")
        self.assertEqual(len(srv.requests), 2)
        assert_waits(self, slept, [0.5])

    def test_events_list_query(self) -> None:
        page = {"object": "list", "data": [TEST_EVENT], "next_cursor": None}
        m, srv, _ = self.run_script([(200, RL, page)] * 3)
        p = m.events.list(type="webhook.test", created_gte=dt.datetime(2026, 11, 26, 11, 4, 5, 500000,
                                                                      tzinfo=dt.timezone(dt.timedelta(hours=1))),
                          created_lt="2026-11-27T00:00:00+01:00", limit=50, cursor="c 1")
        self.assertEqual([(e.id, e.type) for e in p], [("evt_t1", "webhook.test")])
        self.assertIsInstance(p.data[0], market.Event)
        self.assertEqual((p.request_id, p.next_cursor), ("r1", None))
        m.events.list()
        m.events.list(created_lt=dt.datetime(2026, 11, 26, 10, 4, 5))
        self.assertEqual([(r[0], r[1], r[3]) for r in srv.requests], [
            ("GET", "/api/v1/events?type=webhook.test&created_gte=2026-11-26T10%3A04%3A05.5Z"
                    "&created_lt=2026-11-27T00%3A00%3A00%2B01%3A00&limit=50&cursor=c%201", b""),
            ("GET", "/api/v1/events", b""),
            ("GET", "/api/v1/events?created_lt=2026-11-26T10%3A04%3A05Z", b""),
        ])
        parsed = dict(parse_qsl(urlsplit(srv.requests[0][1]).query))
        self.assertEqual(parsed["created_gte"], "2026-11-26T10:04:05.5Z")
        self.assertEqual(parsed["created_lt"], "2026-11-27T00:00:00+01:00")
        for r in srv.requests:
            self.assertNotIn("Idempotency-Key", r[2])

    def test_events_all_keeps_the_filters_on_every_page(self) -> None:
        e2 = {**TEST_EVENT, "id": "evt_t0"}
        m, srv, _ = self.run_script([(200, RL, {"data": [TEST_EVENT], "next_cursor": "n1"}),
                                     (200, RL, {"data": [e2], "next_cursor": None})])
        it = m.events.all(type="webhook.test", created_gte=dt.datetime(2026, 1, 2, 3, 4, 5), limit=1)
        self.assertEqual(srv.requests, [])
        self.assertEqual([e.id for e in it], ["evt_t1", "evt_t0"])
        q = "/api/v1/events?type=webhook.test&created_gte=2026-01-02T03%3A04%3A05Z&limit=1"
        self.assertEqual([r[1] for r in srv.requests], [q, q + "&cursor=n1"])

    def test_events_get(self) -> None:
        detail = {**TEST_EVENT, "deliveries": [
            {"subscription": "we_1", "status": "failed", "attempts": 0, "last_attempt_at": None, "last_status": None,
             "last_error": "subscription disabled"}]}
        m, srv, _ = self.run_script([(200, RL, detail)])
        ev = m.events.get("evt_t1")
        self.assertIsInstance(ev, market.EventDetail)
        self.assertEqual((ev.id, ev.type, ev.data), ("evt_t1", "webhook.test", {"subscription": "we_1"}))
        self.assertEqual(ev.deliveries, [market.EventDelivery("we_1", "failed", 0, None, None, "subscription disabled")])
        self.assertEqual((ev.request_id, ev.rate_limit.remaining), ("r1", 597))
        self.assertEqual((srv.requests[0][0], srv.requests[0][1]), ("GET", "/api/v1/events/evt_t1"))

    def test_client_side_checks_send_nothing(self) -> None:
        m, srv, _ = self.run_script([])
        with self.assertRaises(TypeError):
            m.webhooks.update("we_1", events="payout.sent")  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            m.webhooks.update("we_1", disabled="true")  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            m.webhooks.update("we_1", disabled=1)  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            m.webhooks.rotate_secret("we_1", expire_old_in="60")  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            m.webhooks.rotate_secret("we_1", expire_old_in=True)
        with self.assertRaises(TypeError):
            m.events.list(created_gte=dt.date(2026, 1, 1))  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            m.events.all(created_lt=1700000000)  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            m.webhooks.list(limit=True)
        for call in (m.webhooks.get, m.webhooks.update, m.webhooks.delete, m.webhooks.rotate_secret, m.webhooks.test,
                     m.events.get):
            with self.assertRaises(ValueError):
                call("")
            with self.assertRaises(TypeError):
                call(None)  # type: ignore[arg-type]
        self.assertEqual(srv.requests, [])


if __name__ == "__main__":
    unittest.main()
