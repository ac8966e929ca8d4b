"""The calls of contract section 13 against a stack without the server's extension.

test.sh starts a second, plain stack without MARKET_API_EXTENSIONS: the specification's
six routes only. There ``webhooks.create`` (POST /v1/webhooks, a route of the
specification) still subscribes, and every other ``webhooks`` call and every ``events``
call raises the client's own error for a route the server does not have: NotFoundError,
status 404, code ``route_not_found``; except ``webhooks.list`` and ``webhooks.all``,
whose path /v1/webhooks exists for POST and so answers 405 ``method_not_allowed`` with
``Allow: POST`` (InvalidRequestError). The control: the main stack, started with
MARKET_API_EXTENSIONS=webhook-management, answers the same calls.

Retries are off (``max_retries=0``, and any wish to sleep fails the test): a 404 or a
405 is final anyway, and nothing may hide behind a retry."""

from __future__ import annotations

import unittest
from typing import Any, Callable

from market import InvalidRequestError, MarketError, NotFoundError, WebhookSubscription

from . import support

X = support.unique("")
ACCT = f"acct_pyext_{X}"
EVENT_ID = "evt_1f2e3d4c5b6a79880716253443526170"
PLAIN: support.PlainStack
SUB: WebhookSubscription


def setUpModule() -> None:
    global PLAIN, SUB
    support.require_stack()
    PLAIN = support.PlainStack.require()
    PLAIN.admin("import", "-", input='{"mode": "test", "accounts": [{"id": "%s"}]}' % ACCT)
    m = PLAIN.client(PLAIN.new_key(ACCT), max_retries=0)
    # The one call of the group that is a route of the specification: it works.
    SUB = m.webhooks.create(url="https://127.0.0.1:9/market-py-ext", events=["sale.completed"], description="ext off")


class ExtensionOffTest(unittest.TestCase):
    def setUp(self) -> None:
        self.m = PLAIN.client(PLAIN.new_key(ACCT), max_retries=0)

    def test_create_still_subscribes(self) -> None:
        self.assertTrue(SUB.id.startswith("we_"), SUB.id)
        self.assertTrue((SUB.secret or "").startswith("whsec_"))
        self.assertEqual(SUB.status, "enabled")
        self.assertEqual(SUB.events, ["sale.completed"])

    def not_found(self, name: str, call: Callable[[], Any]) -> None:
        with self.subTest(call=name):
            try:
                got = call()
            except NotFoundError as e:
                self.assertIsInstance(e, MarketError)
                self.assertEqual(e.status, 404, name)
                self.assertEqual(e.type, "invalid_request_error", name)
                self.assertEqual(e.code, "route_not_found", f"{name}: {e}")
                self.assertTrue(e.request_id, name)
            except MarketError as e:  # another error class: the wrong answer
                self.fail(f"{name}: {e!r}, not NotFoundError route_not_found")
            else:
                self.fail(f"{name} answered {got!r}: the route exists without the extension")

    def test_subscription_calls_raise_not_found_route_not_found(self) -> None:
        # A real subscription of this account: the 404 is the route's, not the row's.
        self.not_found("webhooks.get", lambda: self.m.webhooks.get(SUB.id))
        self.not_found("webhooks.update", lambda: self.m.webhooks.update(SUB.id, disabled=True))
        self.not_found("webhooks.delete", lambda: self.m.webhooks.delete(SUB.id))
        self.not_found("webhooks.rotate_secret", lambda: self.m.webhooks.rotate_secret(SUB.id, expire_old_in=0))
        self.not_found("webhooks.test", lambda: self.m.webhooks.test(SUB.id))

    def test_event_calls_raise_not_found_route_not_found(self) -> None:
        self.not_found("events.list", lambda: self.m.events.list(type="sale.completed"))
        self.not_found("events.all", lambda: next(self.m.events.all()))
        self.not_found("events.get", lambda: self.m.events.get(EVENT_ID))

    def test_listing_subscriptions_raises_405_allow_post(self) -> None:
        for name, call in (
            ("webhooks.list", lambda: self.m.webhooks.list(limit=5)),
            ("webhooks.all", lambda: next(self.m.webhooks.all())),
        ):
            with self.subTest(call=name):
                with self.assertRaises(InvalidRequestError, msg=f"{name}: GET /v1/webhooks exists without the extension") as cm:
                    call()
                e = cm.exception
                self.assertNotIsInstance(e, NotFoundError)
                self.assertEqual((e.status, e.type, e.code), (405, "invalid_request_error", "method_not_allowed"), str(e))
                self.assertIsNotNone(e.headers)
                self.assertEqual(e.headers.get("Allow"), "POST")

    def test_control_the_main_stack_has_the_extension(self) -> None:
        acct = f"acct_pyexton_{X}"
        support.import_doc({"mode": "test", "accounts": [{"id": acct}]})
        m = support.client(support.new_key(acct), max_retries=0)
        page = m.webhooks.list()
        self.assertEqual((page.data, page.next_cursor), ([], None))
        self.assertEqual(m.events.list().data, [])
        with self.assertRaises(NotFoundError) as cm:
            m.events.get(EVENT_ID)
        self.assertEqual(cm.exception.code, "resource_missing", "with the extension: a missing event, not a missing route")


if __name__ == "__main__":
    unittest.main()
