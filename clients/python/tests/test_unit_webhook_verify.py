"""Unit tests of verify_webhook (Standard Webhooks), with signatures computed here
independently of the library (hmac + base64), and one fixed vector."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import unittest
from decimal import Decimal

from market import MarketError, WebhookEvent, verify_webhook
from market._errors import WebhookVerificationError

KEY = bytes(range(32))
SECRET = "whsec_" + base64.b64encode(KEY).decode()
OTHER_SECRET = "whsec_" + base64.b64encode(b"\x01" * 32).decode()
BODY = (
    b'{"id":"evt_5b0f8a2c9d3e4f1a8b7c6d5e4f3a2b1c","type":"sale.completed","created_at":"2026-11-21T10:04:05Z",'
    b'"livemode":false,"data":{"order":"ord_1","product":"prod_font1","tier":"tier_font1_p","amount":19.99,"currency":"USD"}}'
)
MSG_ID = "evt_5b0f8a2c9d3e4f1a8b7c6d5e4f3a2b1c"


def sign(body: bytes, msg_id: str, ts: int, key: bytes = KEY) -> str:
    mac = hmac.new(key, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def headers(ts: int, body: bytes = BODY, msg_id: str = MSG_ID, key: bytes = KEY) -> dict:
    sig = sign(body, msg_id, ts, key)
    return {"webhook-id": msg_id, "webhook-timestamp": str(ts), "webhook-signature": sig, "X-Signature": sig}


class VerifyWebhookTest(unittest.TestCase):
    def setUp(self) -> None:
        self.now = int(time.time())

    def assertRefused(self, payload, hdrs, secret=SECRET, msg: str = "", **kw) -> WebhookVerificationError:
        with self.assertRaises(WebhookVerificationError) as cm:
            verify_webhook(payload, hdrs, secret, **kw)
        self.assertIsInstance(cm.exception, MarketError)
        if msg:
            self.assertIn(msg, str(cm.exception))
        return cm.exception

    def test_valid_returns_parsed_event_with_decimal_amount(self) -> None:
        event = verify_webhook(BODY, headers(self.now), SECRET)
        self.assertIsInstance(event, WebhookEvent)
        self.assertEqual(event.id, MSG_ID)
        self.assertEqual(event.type, "sale.completed")
        self.assertIs(event.livemode, False)
        self.assertEqual(event.created_at.isoformat(), "2026-11-21T10:04:05+00:00")
        self.assertEqual(event.data["amount"], Decimal("19.99"))
        self.assertIsInstance(event.data["amount"], Decimal)
        self.assertEqual(event.data["order"], "ord_1")

    def test_fixed_vector(self) -> None:
        # Computed once with openssl: printf 'msg_1.1700000000.{"type":"x","a":1}' |
        #   openssl dgst -sha256 -mac HMAC -macopt hexkey:000102...1f -binary | base64
        body = b'{"type":"x","a":1}'
        expected = "v1,gsNwVmXaH7T6p0BcC3sU79KN4GQQzhvvf+9tz7YpFTg="
        h = {"webhook-id": "msg_1", "webhook-timestamp": "1700000000", "webhook-signature": expected}
        event = verify_webhook(body, h, SECRET, now=1700000000)
        self.assertEqual(event.type, "x")

    def test_tampered_body_refused(self) -> None:
        h = headers(self.now)
        self.assertRefused(BODY.replace(b"19.99", b"99.99"), h, msg="no signature matches")
        self.assertRefused(BODY + b" ", h)
        self.assertRefused(BODY[:-1], h)

    def test_tampered_id_or_timestamp_refused(self) -> None:
        h = headers(self.now)
        self.assertRefused(BODY, {**h, "webhook-id": "evt_other"})
        self.assertRefused(BODY, {**h, "webhook-timestamp": str(self.now + 1)})

    def test_wrong_secret_refused(self) -> None:
        self.assertRefused(BODY, headers(self.now), OTHER_SECRET)

    def test_tampered_signature_refused(self) -> None:
        h = headers(self.now)
        sig = h["webhook-signature"]
        flipped = sig[:-2] + ("A" if sig[-2] != "A" else "B") + sig[-1]
        self.assertRefused(BODY, {**h, "webhook-signature": flipped, "X-Signature": flipped})
        self.assertRefused(BODY, {**h, "webhook-signature": "v2," + sig[3:], "X-Signature": "v2," + sig[3:]})
        self.assertRefused(BODY, {**h, "webhook-signature": sig[3:], "X-Signature": sig[3:]})
        self.assertRefused(BODY, {**h, "webhook-signature": "v1,", "X-Signature": "v1,"})
        self.assertRefused(BODY, {**h, "webhook-signature": "v1,ü", "X-Signature": "v1,ü"})

    def test_expired_timestamp_refused(self) -> None:
        old = self.now - 301
        self.assertRefused(BODY, headers(old), msg="too old")
        future = self.now + 301
        self.assertRefused(BODY, headers(future), msg="future")
        # Within five minutes either way is accepted.
        verify_webhook(BODY, headers(self.now - 299), SECRET)
        verify_webhook(BODY, headers(self.now + 299), SECRET)

    def test_tolerance_and_now_are_adjustable(self) -> None:
        ts = 1_700_000_000
        verify_webhook(BODY, headers(ts), SECRET, now=ts + 300)
        self.assertRefused(BODY, headers(ts), now=ts + 301)
        verify_webhook(BODY, headers(ts), SECRET, now=ts + 3000, tolerance=3600)

    def test_bad_timestamp_refused(self) -> None:
        h = headers(self.now)
        for bad in ("", "abc", "-5", "1.5", "1e9", str(self.now) + "x"):
            self.assertRefused(BODY, {**h, "webhook-timestamp": bad})

    def test_several_signatures_one_matching(self) -> None:
        good = sign(BODY, MSG_ID, self.now)
        other = sign(BODY, MSG_ID, self.now, b"\x01" * 32)
        h = {"webhook-id": MSG_ID, "webhook-timestamp": str(self.now)}
        verify_webhook(BODY, {**h, "webhook-signature": f"{other} {good}"}, SECRET)
        verify_webhook(BODY, {**h, "webhook-signature": f"{good} {other}"}, SECRET)
        verify_webhook(BODY, {**h, "webhook-signature": f"v2,abc {good}"}, SECRET)
        self.assertRefused(BODY, {**h, "webhook-signature": f"{other} v1,AAAA"})

    def test_x_signature_alone(self) -> None:
        h = headers(self.now)
        del h["webhook-signature"]
        self.assertEqual(verify_webhook(BODY, h, SECRET).id, MSG_ID)
        h["X-Signature"] = sign(BODY, MSG_ID, self.now, b"\x01" * 32)
        self.assertRefused(BODY, h)

    def test_webhook_signature_wins_over_x_signature(self) -> None:
        h = headers(self.now)
        h["X-Signature"] = "v1,AAAA"
        verify_webhook(BODY, h, SECRET)
        h = headers(self.now)
        h["webhook-signature"] = "v1,AAAA"
        self.assertRefused(BODY, h)

    def test_missing_headers_refused(self) -> None:
        h = headers(self.now)
        for name in ("webhook-id", "webhook-timestamp"):
            partial = {k: v for k, v in h.items() if k != name}
            self.assertRefused(BODY, partial, msg=name)
        partial = {k: v for k, v in h.items() if k not in ("webhook-signature", "X-Signature")}
        self.assertRefused(BODY, partial, msg="webhook-signature")
        self.assertRefused(BODY, {})

    def test_header_forms(self) -> None:
        h = headers(self.now)
        # Any case, a list of pairs, a WSGI environ, an email.message.Message.
        verify_webhook(BODY, {k.upper(): v for k, v in h.items()}, SECRET)
        verify_webhook(BODY, list(h.items()), SECRET)
        verify_webhook(BODY, {"HTTP_" + k.upper().replace("-", "_"): v for k, v in h.items()}, SECRET)
        import email.message

        msg = email.message.Message()
        for k, v in h.items():
            msg[k] = v
        verify_webhook(BODY, msg, SECRET)

    def test_payload_forms_and_secret_forms(self) -> None:
        h = headers(self.now)
        verify_webhook(bytearray(BODY), h, SECRET)
        verify_webhook(memoryview(BODY), h, SECRET)
        verify_webhook(BODY.decode(), h, SECRET)
        verify_webhook(BODY, h, SECRET[len("whsec_"):])
        verify_webhook(BODY, h, KEY)
        with self.assertRaises(ValueError):
            verify_webhook(BODY, h, "whsec_not base64!")
        with self.assertRaises(ValueError):
            verify_webhook(BODY, h, "")
        with self.assertRaises(TypeError):
            verify_webhook({"a": 1}, h, SECRET)  # type: ignore[arg-type]

    def test_signed_but_not_an_event_refused(self) -> None:
        for body in (b"not json", b"[1,2]", b'{"id":"x"}', b"\xff\xfe"):
            self.assertRefused(body, headers(self.now, body=body))

    def test_constant_time_comparison_is_used(self) -> None:
        import market._webhooks as w

        calls = []
        real = hmac.compare_digest

        def spy(a, b):  # type: ignore[no-untyped-def]
            calls.append((a, b))
            return real(a, b)

        w.hmac.compare_digest = spy  # type: ignore[assignment]
        try:
            verify_webhook(BODY, headers(self.now), SECRET)
        finally:
            w.hmac.compare_digest = real  # type: ignore[assignment]
        self.assertEqual(len(calls), 1)

    def test_amount_integer_becomes_decimal(self) -> None:
        body = json.dumps(
            {"id": "evt_1", "type": "payout.sent", "created_at": "2026-11-21T10:04:05Z", "livemode": True,
             "data": {"payout": "po_1", "amount": 1200, "currency": "JPY"}}
        ).encode()
        event = verify_webhook(body, headers(self.now, body=body, msg_id="evt_1"), SECRET)
        self.assertEqual(event.data["amount"], Decimal(1200))
        self.assertIsInstance(event.data["amount"], Decimal)
        self.assertIs(event.livemode, True)


if __name__ == "__main__":
    unittest.main()
