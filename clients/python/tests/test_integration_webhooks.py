"""webhooks.create and a real delivery from market-webhookd to an HTTPS receiver here,
verified with verify_webhook; tampered copies of it are refused."""

from __future__ import annotations

import datetime as dt
import os
import unittest
from decimal import Decimal

from market import WebhookEvent, WebhookSubscription, WebhookVerificationError, verify_webhook

from . import support

X = support.unique("")
SELLER = f"pyw-{X}"
SELLER_ACCT = f"acct_pyw_{X}"
KEY = ""


def setUpModule() -> None:
    global KEY
    support.require_stack()
    missing = [n for n in ("MARKET_TEST_TLS_CERT", "MARKET_TEST_TLS_KEY") if not os.environ.get(n)]
    if missing or os.environ.get("MARKET_WEBHOOK_ALLOW_PRIVATE") != "1":
        msg = "the webhook tests need MARKET_TEST_TLS_CERT/KEY and a stack with MARKET_WEBHOOK_ALLOW_PRIVATE=1 (test.sh)"
        if os.environ.get("MARKET_TEST_REQUIRE_STACK") == "1":
            raise RuntimeError(msg)
        raise unittest.SkipTest(msg)
    support.import_doc({
        "mode": "test",
        "accounts": [{"id": SELLER_ACCT}],
        "sellers": [{"id": SELLER, "account": SELLER_ACCT, "name": "Py Webhooks"}],
    })
    KEY = support.new_key(SELLER_ACCT)


class WebhooksTest(unittest.TestCase):
    def setUp(self) -> None:
        self.m = support.client(KEY)

    def test_create_defaults_and_idempotent_replay(self) -> None:
        key = f"py-webhook-{X}"
        a = self.m.webhooks.create(url="https://127.0.0.1:9/defaults", idempotency_key=key)
        b = self.m.webhooks.create(url="https://127.0.0.1:9/defaults", idempotency_key=key)
        self.assertIsInstance(a, WebhookSubscription)
        self.assertEqual(a.events, ["sale.completed", "sale.refunded", "review.created", "payout.sent"])
        self.assertEqual(a.description, "")
        self.assertEqual((b.id, b.secret), (a.id, a.secret), "the replay shows the same subscription and secret")
        self.assertEqual(a, b)
        rows = support.psql(f"SELECT count(*) FROM webhook_subscriptions WHERE id = {support.sql_quote(a.id)}")
        self.assertEqual(rows, "1")
        self.assertNotIn(a.secret, repr(a))

    def test_real_delivery_verified_and_tampered_copy_refused(self) -> None:
        rx = support.HttpsReceiver(support.env("MARKET_TEST_TLS_CERT"), support.env("MARKET_TEST_TLS_KEY"))
        self.addCleanup(rx.close)
        sub = self.m.webhooks.create(url=rx.url("/hook"), events=["payout.sent", "payout.sent"],
                                     description="python client test")
        self.assertTrue(sub.id.startswith("we_"))
        self.assertEqual(sub.object, "webhook_subscription")
        self.assertEqual(sub.url, rx.url("/hook"))
        self.assertEqual(sub.events, ["payout.sent"])
        self.assertEqual(sub.description, "python client test")
        self.assertEqual(sub.status, "enabled")
        self.assertIs(sub.livemode, False)
        self.assertTrue(sub.secret.startswith("whsec_"))
        self.assertIsInstance(sub.created_at, dt.datetime)
        support.check_rate_limit(self, sub.rate_limit)

        support.admin("payout", "--seller", SELLER, "--amount", "12.34", "--currency", "USD", "--mode", "test")
        deliveries = support.wait_for(lambda: rx.to("/hook"), timeout=30, what="a delivery from market-webhookd")
        d = deliveries[0]

        event = verify_webhook(d.body, d.headers, sub.secret)
        self.assertIsInstance(event, WebhookEvent)
        self.assertEqual(event.type, "payout.sent")
        self.assertEqual(event.id, d.header("webhook-id"))
        self.assertTrue(event.id.startswith("evt_"))
        self.assertIs(event.livemode, False)
        self.assertEqual(event.data["amount"], Decimal("12.34"))
        self.assertIsInstance(event.data["amount"], Decimal)
        self.assertEqual(event.data["currency"], "USD")
        self.assertTrue(event.data["payout"].startswith("po_"))
        self.assertIsInstance(event.created_at, dt.datetime)

        # The signature alone under the specification's name.
        self.assertEqual(d.header("X-Signature"), d.header("webhook-signature"))
        only_x = [(n, v) for n, v in d.headers if n.lower() != "webhook-signature"]
        self.assertEqual(verify_webhook(d.body, only_x, sub.secret).id, event.id)

        # Tampered copies.
        self.assertIn(b"12.34", d.body)
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(d.body.replace(b"12.34", b"99.34"), d.headers, sub.secret)
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(d.body + b"\n", d.headers, sub.secret)
        forged_id = [(n, "evt_forged" if n.lower() == "webhook-id" else v) for n, v in d.headers]
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(d.body, forged_id, sub.secret)
        other = self.m.webhooks.create(url=rx.url("/other"), events=["payout.sent"])
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(d.body, d.headers, other.secret)
        ts = int(d.header("webhook-timestamp"))
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(d.body, d.headers, sub.secret, now=ts + 301)  # replayed six minutes later
        verify_webhook(d.body, d.headers, sub.secret, now=ts + 299)

        # Delivered once, recorded as delivered.
        support.wait_for(
            lambda: support.psql(
                f"SELECT status FROM webhook_deliveries WHERE subscription_id = {support.sql_quote(sub.id)}"
            ) == "delivered",
            timeout=10, what="the delivery to be recorded",
        )
        self.assertEqual(len(rx.to("/hook")), 1)


if __name__ == "__main__":
    unittest.main()
