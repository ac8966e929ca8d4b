"""Managing subscriptions and reading events against the real stack: webhooks.list, all,
get, update, delete, rotate_secret (both secrets verify during the grace, the old one no
longer after expire_old_in=0), test (a webhook.test delivered to an HTTPS receiver here);
events.list, all and get with their filters and deliveries; a read-only key refused.

Each test has an account of its own, so that its lists hold only what it made."""

from __future__ import annotations

import datetime as dt
import os
import unittest
from decimal import Decimal
from typing import List, Optional, Tuple

from market import (
    DeletedWebhookSubscription,
    Event,
    EventDelivery,
    EventDetail,
    Market,
    NotFoundError,
    PermissionDeniedError,
    WebhookSubscription,
    WebhookVerificationError,
    verify_webhook,
)

from . import support

X = support.unique("")
N = 0


def setUpModule() -> None:
    support.require_stack()
    missing = [n for n in ("MARKET_TEST_TLS_CERT", "MARKET_TEST_TLS_KEY") if not os.environ.get(n)]
    if missing or os.environ.get("MARKET_WEBHOOK_ALLOW_PRIVATE") != "1":
        msg = "the webhook tests need MARKET_TEST_TLS_CERT/KEY and a stack with MARKET_WEBHOOK_ALLOW_PRIVATE=1 (test.sh)"
        if os.environ.get("MARKET_TEST_REQUIRE_STACK") == "1":
            raise RuntimeError(msg)
        raise unittest.SkipTest(msg)


def new_seller() -> Tuple[str, str, str]:
    """A fresh seller: (handle, account, read-write key)."""
    global N
    N += 1
    handle, acct = f"pym{N}-{X}", f"acct_pym{N}_{X}"
    support.import_doc({
        "mode": "test",
        "accounts": [{"id": acct}],
        "sellers": [{"id": handle, "account": acct, "name": "Py Webhook Management"}],
    })
    return handle, acct, support.new_key(acct)


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def signatures(d: support.Delivery) -> List[str]:
    return (d.header("webhook-signature") or "").split()


class ManageTest(unittest.TestCase):
    def setUp(self) -> None:
        self.handle, self.account, key = new_seller()
        self.m = support.client(key)

    def receiver(self) -> support.HttpsReceiver:
        rx = support.HttpsReceiver(support.env("MARKET_TEST_TLS_CERT"), support.env("MARKET_TEST_TLS_KEY"))
        self.addCleanup(rx.close)
        return rx

    def delivery_of(self, rx: support.HttpsReceiver, path: str, event_id: str) -> support.Delivery:
        def find() -> Optional[support.Delivery]:
            return next((d for d in rx.to(path) if d.header("webhook-id") == event_id), None)

        return support.wait_for(find, timeout=30, what=f"the delivery of {event_id} to {path}")

    def test_list_get_update_delete(self) -> None:
        a = self.m.webhooks.create(url="https://127.0.0.1:9/a", events=["sale.completed"], description="first")
        b = self.m.webhooks.create(url="https://127.0.0.1:9/b", description="second")

        page = self.m.webhooks.list()
        self.assertEqual([s.id for s in page], [b.id, a.id], "newest first")
        self.assertIsNone(page.next_cursor)
        support.check_rate_limit(self, page.rate_limit)
        listed_a = page.data[1]
        self.assertIsInstance(listed_a, WebhookSubscription)
        self.assertEqual((listed_a.url, listed_a.events, listed_a.description, listed_a.status, listed_a.livemode),
                         ("https://127.0.0.1:9/a", ["sale.completed"], "first", "enabled", False))
        self.assertIsNone(listed_a.secret, "a list never shows the secret")
        self.assertEqual(listed_a.created_at, a.created_at)
        self.assertIsInstance(listed_a.updated_at, dt.datetime)

        first = self.m.webhooks.list(limit=1)
        self.assertEqual([s.id for s in first], [b.id])
        self.assertIsNotNone(first.next_cursor)
        self.assertEqual([s.id for s in self.m.webhooks.list(limit=1, cursor=first.next_cursor)], [a.id])

        sent = support.count_requests(self.m)
        walked = self.m.webhooks.all(limit=1)
        self.assertEqual(sent, [], "lazy: nothing is asked before the first item")
        self.assertEqual([s.id for s in walked], [b.id, a.id])
        self.assertGreaterEqual(len(sent), 2, sent)
        self.assertTrue(all(r.startswith("GET ") and "limit=1" in r for r in sent), sent)

        got = self.m.webhooks.get(a.id)
        self.assertEqual(got, listed_a)
        self.assertIsNone(got.secret)
        support.check_rate_limit(self, got.rate_limit)

        # Changed in a later second than it was made, so that updated_at shows the change.
        assert got.created_at is not None and got.updated_at is not None
        created = got.created_at
        support.wait_for(lambda: utcnow().replace(microsecond=0) > created, timeout=5, interval=0.05,
                         what="the next second")
        upd = self.m.webhooks.update(a.id, description="paused", disabled=True)
        self.assertEqual((upd.id, upd.status, upd.description, upd.events), (a.id, "disabled", "paused",
                                                                             ["sale.completed"]))
        assert upd.updated_at is not None
        self.assertGreater(upd.updated_at, created)
        self.assertLessEqual(upd.updated_at, utcnow())
        self.assertEqual(upd.created_at, created)
        self.assertIsNone(upd.secret)
        self.assertEqual(self.m.webhooks.get(a.id), upd)
        same = self.m.webhooks.update(a.id)  # {}: changes nothing
        self.assertEqual((same.status, same.description, same.events, same.url, same.created_at),
                         (upd.status, upd.description, upd.events, upd.url, upd.created_at))
        back = self.m.webhooks.update(a.id, disabled=False, events=["payout.sent", "sale.completed"],
                                      url="https://127.0.0.1:9/a2")
        self.assertEqual((back.status, back.events, back.url, back.description),
                         ("enabled", ["sale.completed", "payout.sent"], "https://127.0.0.1:9/a2", "paused"))

        # Delete, and its replay with the same key; then it is gone.
        gone = self.m.webhooks.delete(a.id, idempotency_key=f"py-del-{X}")
        self.assertIsInstance(gone, DeletedWebhookSubscription)
        self.assertEqual((gone.id, gone.object, gone.deleted), (a.id, "webhook_subscription", True))
        support.check_rate_limit(self, gone.rate_limit)
        again = self.m.webhooks.delete(a.id, idempotency_key=f"py-del-{X}")
        self.assertEqual(again, gone, "a retried DELETE with its key replays the first answer")
        with self.assertRaises(NotFoundError) as cm:
            self.m.webhooks.get(a.id)
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.param), (404, "resource_missing", "id"))
        with self.assertRaises(NotFoundError):
            self.m.webhooks.delete(a.id)
        with self.assertRaises(NotFoundError):
            self.m.webhooks.update(a.id, description="x")
        self.assertEqual([s.id for s in self.m.webhooks.all()], [b.id])

    def test_read_only_key_refused(self) -> None:
        ro = support.client(support.new_key(self.account, access="read-only"))
        for call in (ro.webhooks.list, ro.events.list):
            with self.assertRaises(PermissionDeniedError) as cm:
                call()
            e = cm.exception
            self.assertEqual((e.status, e.type, e.code), (403, "permission_error", "insufficient_scope"))
            self.assertIn("webhooks:read", e.message)

    def test_rotate_secret_both_signatures_then_old_expired(self) -> None:
        rx = self.receiver()
        sub = self.m.webhooks.create(url=rx.url("/rot"), events=["payout.sent"])
        old = sub.secret
        assert old is not None

        rotated = self.m.webhooks.rotate_secret(sub.id)
        self.assertIsInstance(rotated, WebhookSubscription)
        new = rotated.secret
        assert new is not None
        self.assertTrue(new.startswith("whsec_"), new)
        self.assertNotEqual(new, old)
        self.assertNotIn(new, repr(rotated))
        self.assertEqual((rotated.id, rotated.status, rotated.url), (sub.id, "enabled", rx.url("/rot")))
        self.assertIsInstance(rotated.updated_at, dt.datetime)
        self.assertIsNone(self.m.webhooks.get(sub.id).secret, "shown only in the rotation's answer")

        ev = self.m.webhooks.test(sub.id)
        d = self.delivery_of(rx, "/rot", ev.id)
        self.assertEqual(len(signatures(d)), 2, "the grace: the new secret's signature and the old one's")
        for secret in (new, old):
            got = verify_webhook(d.body, d.headers, secret)
            self.assertEqual((got.id, got.type, got.data), (ev.id, "webhook.test", {"subscription": sub.id}))

        ended = self.m.webhooks.rotate_secret(sub.id, expire_old_in=0)
        newest = ended.secret
        assert newest is not None
        self.assertTrue(newest.startswith("whsec_"))
        self.assertNotIn(newest, (old, new))
        ev2 = self.m.webhooks.test(sub.id)
        d2 = self.delivery_of(rx, "/rot", ev2.id)
        self.assertEqual(len(signatures(d2)), 1)
        self.assertEqual(verify_webhook(d2.body, d2.headers, newest).id, ev2.id)
        for secret in (new, old):
            with self.assertRaises(WebhookVerificationError):
                verify_webhook(d2.body, d2.headers, secret)

    def test_test_event_then_events_list_all_and_get(self) -> None:
        rx = self.receiver()
        before = utcnow() - dt.timedelta(seconds=1)  # a fraction of a second included
        sub = self.m.webhooks.create(url=rx.url("/evt"), events=["payout.sent"])

        ev = self.m.webhooks.test(sub.id, idempotency_key=f"py-test-{X}")
        self.assertIsInstance(ev, Event)
        self.assertTrue(ev.id.startswith("evt_"), ev.id)
        self.assertEqual((ev.type, ev.livemode, ev.data), ("webhook.test", False, {"subscription": sub.id}))
        assert ev.created_at is not None
        self.assertGreaterEqual(ev.created_at, before.replace(microsecond=0))
        support.check_rate_limit(self, ev.rate_limit)
        replay = self.m.webhooks.test(sub.id, idempotency_key=f"py-test-{X}")
        self.assertEqual(replay, ev, "a replay answers the same event")

        d = self.delivery_of(rx, "/evt", ev.id)
        self.assertEqual(verify_webhook(d.body, d.headers, sub.secret or "").id, ev.id)

        # A payout: an event with money, for this subscription.
        support.admin("payout", "--seller", self.handle, "--amount", "12.34", "--currency", "USD", "--mode", "test")
        payout = support.wait_for(lambda: next(iter(self.m.events.list(type="payout.sent").data), None),
                                  timeout=10, what="the payout event")

        tests = self.m.events.list(type="webhook.test")
        self.assertEqual([e.id for e in tests], [ev.id], "the replay queued nothing more")
        self.assertEqual(tests.data[0], ev)
        support.check_rate_limit(self, tests.rate_limit)
        self.assertEqual(payout.data["amount"], Decimal("12.34"))
        self.assertIsInstance(payout.data["amount"], Decimal)
        self.assertEqual(payout.data["currency"], "USD")

        everything = self.m.events.list()
        self.assertEqual([e.id for e in everything], [payout.id, ev.id], "newest first")
        walked = list(self.m.events.all(created_gte=before, limit=1))
        self.assertEqual([e.id for e in walked], [payout.id, ev.id])
        as_text = before.astimezone(dt.timezone(dt.timedelta(hours=2))).isoformat()  # +02:00 and a fraction
        self.assertEqual([e.id for e in self.m.events.all(type="webhook.test", created_gte=as_text)], [ev.id])
        self.assertEqual(list(self.m.events.all(created_lt=before)), [])
        self.assertEqual(list(self.m.events.all(created_gte=utcnow() + dt.timedelta(minutes=1))), [])
        self.assertEqual([e.id for e in self.m.events.all(created_lt=utcnow() + dt.timedelta(minutes=1),
                                                          type="webhook.test")], [ev.id])

        def delivered() -> Optional[EventDetail]:
            got = self.m.events.get(ev.id)
            return got if got.deliveries and got.deliveries[0].status == "delivered" else None

        detail = support.wait_for(delivered, timeout=20, what="the delivery recorded as delivered")
        self.assertIsInstance(detail, EventDetail)
        self.assertEqual((detail.id, detail.type, detail.data), (ev.id, "webhook.test", {"subscription": sub.id}))
        self.assertEqual(len(detail.deliveries), 1)
        dl = detail.deliveries[0]
        self.assertIsInstance(dl, EventDelivery)
        self.assertEqual(dl.subscription, sub.id)
        self.assertEqual((dl.attempts, dl.last_status, dl.last_error), (1, 204, None))
        self.assertIsInstance(dl.last_attempt_at, dt.datetime)
        support.check_rate_limit(self, detail.rate_limit)

        # A disabled subscription: its test event is recorded, its delivery ends unsent,
        # with nulls where nothing was attempted.
        self.m.webhooks.update(sub.id, disabled=True)
        ev3 = self.m.webhooks.test(sub.id)

        def ended() -> Optional[EventDelivery]:
            got = self.m.events.get(ev3.id).deliveries
            return got[0] if got and got[0].status != "pending" else None

        unsent = support.wait_for(ended, timeout=20, what="the delivery of a disabled subscription to end")
        self.assertEqual((unsent.subscription, unsent.status, unsent.last_error), (sub.id, "failed",
                                                                                   "subscription disabled"))
        self.assertIsNone(unsent.last_status)
        self.assertNotIn(ev3.id, [d.header("webhook-id") for d in rx.to("/evt")], "nothing sent to a disabled one")

        with self.assertRaises(NotFoundError) as cm:
            self.m.events.get("evt_" + "0" * 32)
        self.assertEqual((cm.exception.status, cm.exception.code), (404, "resource_missing"))
        # Another account sees none of it.
        _, _, other_key = new_seller()
        other: Market = support.client(other_key)
        self.assertEqual(other.events.list().data, [])
        with self.assertRaises(NotFoundError):
            other.events.get(ev.id)
        with self.assertRaises(NotFoundError):
            other.webhooks.get(sub.id)


if __name__ == "__main__":
    unittest.main()
