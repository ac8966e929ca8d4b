"""Each error status of a real stack mapped to its error class, with the envelope's fields
and the rate-limit figures: 401 (bad key), 403 (read-only key on a POST), 404, 400 (bad
parameters), 409 (an order refunded with market-admin refund; an Idempotency-Key reused
with another body)."""

from __future__ import annotations

import unittest
from typing import Any, Callable, Optional, Type

import market
from market import (
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    MarketError,
    NotFoundError,
    PermissionDeniedError,
)

from . import support

X = support.unique("")
SELLER = f"pye-{X}"
SELLER_ACCT = f"acct_pyes_{X}"
BUYER = f"acct_pyeb_{X}"
PROD = f"prod_pye_{X}"
TIER = f"tier_pye_{X}"
ORDER = f"ord_pye_{X}"
RW = RO = ""
DOWNLOAD = ""


def setUpModule() -> None:
    global RW, RO, DOWNLOAD
    support.require_stack()
    support.import_doc({
        "mode": "test",
        "accounts": [{"id": SELLER_ACCT}, {"id": BUYER}],
        "sellers": [{"id": SELLER, "account": SELLER_ACCT, "name": "Py Errors"}],
        "products": [{"id": PROD, "seller": SELLER, "title": "E", "description": "", "category": "fonts",
                      "currency": "USD", "status": "published",
                      "tiers": [{"id": TIER, "name": "P", "description": "", "price": 3.5, "licence": {}}],
                      "files": [{"id": f"file_pye_{X}", "filename": "e.bin", "path": f"pye-{X}/e.bin",
                                 "size_bytes": 1}]}],
        "orders": [{"id": ORDER, "account": BUYER, "status": "paid", "created_at": "2026-02-01T00:00:00Z",
                    "items": [{"product": PROD, "tier": TIER}]}],
    })
    RW = support.new_key(BUYER)
    RO = support.new_key(BUYER, access="read-only")
    DOWNLOAD = support.client(RW).orders.list().data[0].downloads[0].id


class ErrorsTest(unittest.TestCase):
    def check(
        self,
        call: Callable[[], Any],
        cls: Type[MarketError],
        status: int,
        type_: str,
        code: str,
        param: Optional[str] = None,
        rate_limited: bool = True,
    ) -> MarketError:
        with self.assertRaises(cls) as cm:
            call()
        e = cm.exception
        self.assertIsInstance(e, MarketError)
        self.assertEqual((e.status, e.type, e.code, e.param), (status, type_, code, param))
        self.assertTrue(e.message)
        self.assertRegex(e.request_id or "", r"^[A-Za-z0-9._-]{1,64}$")
        self.assertIn(code, str(e))
        if rate_limited:
            self.assertIsNotNone(e.rate_limit, "authenticated errors carry the X-RateLimit figures")
            support.check_rate_limit(self, e.rate_limit)
        return e

    def test_401_bad_key(self) -> None:
        bad = "sk_test_" + "N0tAVal1dKey" * 4
        m = support.client(bad)
        e = self.check(m.products.list, AuthenticationError, 401, "authentication_error", "invalid_api_key",
                       rate_limited=False)
        self.assertIsNone(e.rate_limit)
        self.assertNotIn(bad[8:], str(e) + repr(e) + repr(m))
        self.assertIn("Bearer", e.headers.get("WWW-Authenticate", ""))
        self.check(lambda: m.downloads.create_link(DOWNLOAD), AuthenticationError, 401, "authentication_error",
                   "invalid_api_key", rate_limited=False)

    def test_401_revoked_key(self) -> None:
        key = support.new_key(BUYER, access="read-only")
        support.admin("key", "revoke", key)
        self.check(support.client(key).orders.list, AuthenticationError, 401, "authentication_error",
                   "invalid_api_key", rate_limited=False)

    def test_403_read_only_key_on_posts(self) -> None:
        m = support.client(RO)
        e = self.check(lambda: m.downloads.create_link(DOWNLOAD), PermissionDeniedError, 403, "permission_error",
                       "insufficient_scope")
        self.assertIn("downloads:write", e.message)
        e = self.check(lambda: m.webhooks.create(url="https://hooks.example.com/x"), PermissionDeniedError, 403,
                       "permission_error", "insufficient_scope")
        self.assertIn("webhooks:write", e.message)
        # and the same key reads fine
        self.assertEqual(m.orders.list().data[0].id, ORDER)

    def test_404(self) -> None:
        m = support.client(RW)
        self.check(lambda: m.products.get(f"prod_nope_{X}"), NotFoundError, 404, "invalid_request_error",
                   "resource_missing", param="id")
        self.check(lambda: m.sellers.get(f"nope-{X}"), NotFoundError, 404, "invalid_request_error",
                   "resource_missing", param="id")
        self.check(lambda: m.downloads.create_link(f"dl_nope{X}"), NotFoundError, 404, "invalid_request_error",
                   "resource_missing", param="id")
        # an identifier with a slash stays one path segment
        self.check(lambda: m.products.get(f"{PROD}/x"), NotFoundError, 404, "invalid_request_error",
                   "resource_missing", param="id")

    def test_400_bad_parameters(self) -> None:
        m = support.client(RW)
        inv = "invalid_request_error"
        self.check(lambda: m.products.list(limit=0), InvalidRequestError, 400, inv, "parameter_invalid", "limit")
        self.check(lambda: m.products.list(limit=101), InvalidRequestError, 400, inv, "parameter_invalid", "limit")
        self.check(lambda: m.products.list(sort="relevance"), InvalidRequestError, 400, inv, "parameter_invalid", "sort")
        self.check(lambda: m.products.list(min_price=-1), InvalidRequestError, 400, inv, "parameter_invalid",
                   "min_price")
        self.check(lambda: m.products.list(min_price=5, max_price=1), InvalidRequestError, 400, inv,
                   "parameter_invalid", "max_price")
        self.check(lambda: m.products.list(cursor="bogus"), InvalidRequestError, 400, inv, "cursor_invalid", "cursor")
        self.check(lambda: m.orders.list(status="pending"), InvalidRequestError, 400, inv, "parameter_invalid",
                   "status")
        # a cursor of one filter replayed with another
        cursor = m.products.list(category="fonts", limit=1).next_cursor
        if cursor:
            self.check(lambda: m.products.list(category="icons", limit=1, cursor=cursor), InvalidRequestError, 400,
                       inv, "cursor_invalid", "cursor")
        self.check(lambda: m.downloads.create_link(DOWNLOAD, expires_in=59), InvalidRequestError, 400, inv,
                   "parameter_invalid", "expires_in")
        self.check(lambda: m.webhooks.create(url="http://hooks.example.com/x"), InvalidRequestError, 400, inv,
                   "url_not_https", "url")
        self.check(lambda: m.webhooks.create(url="https://hooks.example.com/x", events=["sale.nope"]),
                   InvalidRequestError, 400, inv, "parameter_invalid", "events")
        self.check(lambda: m.webhooks.create(url="https://hooks.example.com/x", events=[]),
                   InvalidRequestError, 400, inv, "parameter_invalid", "events")
        # A header at fault is named by its name (the API's contract, section 4).
        self.check(lambda: m.downloads.create_link(DOWNLOAD, idempotency_key="\u00e9"),
                   InvalidRequestError, 400, inv, "idempotency_key_invalid", "Idempotency-Key")

    def test_409_refunded_order_and_idempotency_conflict(self) -> None:
        m = support.client(RW)
        key = f"py-conflict-{X}"
        m.downloads.create_link(DOWNLOAD, expires_in=60, idempotency_key=key)
        self.check(lambda: m.downloads.create_link(DOWNLOAD, expires_in=61, idempotency_key=key), ConflictError, 409,
                   "invalid_request_error", "idempotency_conflict")

        support.admin("refund", ORDER)
        self.check(lambda: m.downloads.create_link(DOWNLOAD), ConflictError, 409, "invalid_request_error",
                   "order_refunded", param="id")
        order = m.orders.list(status="refunded").data[0]
        self.assertEqual((order.id, order.status), (ORDER, "refunded"))
        self.assertIsNone(order.downloads[0].url)

    def test_connection_error(self) -> None:
        port = support.free_port()
        slept = support.SleepRecorder()
        m = market.Market(RW, base_url=f"http://127.0.0.1:{port}", sleep=slept, max_retries=1)
        with self.assertRaises(market.APIConnectionError) as cm:
            m.products.list()
        self.assertIsNone(cm.exception.status)
        self.assertEqual(len(slept.calls), 1)
        self.assertTrue(0.25 <= slept.calls[0] <= 0.5, slept.calls)


if __name__ == "__main__":
    unittest.main()
