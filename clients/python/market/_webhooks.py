"""Verification of webhook deliveries (Standard Webhooks, https://www.standardwebhooks.com).

A delivery carries ``webhook-id`` (the event id), ``webhook-timestamp`` (Unix seconds of
the attempt) and ``webhook-signature`` (also sent as ``X-Signature``): space-separated
``v1,<base64>`` entries, each base64(HMAC-SHA256(key, id + "." + timestamp + "." + body)),
where key is the base64-decoded part of the secret after ``whsec_``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from decimal import Decimal
from typing import Any, Iterable, Mapping, Optional, Tuple, Union

from ._errors import WebhookVerificationError
from ._models import Event

#: Seconds a delivery's timestamp may be away from now, either way.
DEFAULT_TOLERANCE = 300

Headers = Union[Mapping[str, Any], Iterable[Tuple[str, Any]]]


def _normalise(name: str) -> str:
    # "Webhook-Id", "webhook_id", "HTTP_WEBHOOK_ID" (WSGI environ, Django META) -> "webhook-id"
    n = name.strip().lower().replace("_", "-")
    return n[5:] if n.startswith("http-") else n


def _header_map(headers: Headers) -> dict:
    items = headers.items() if hasattr(headers, "items") else headers
    found: dict = {}
    for name, value in items:  # type: ignore[union-attr]
        if not isinstance(name, str):
            continue
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        if isinstance(value, (list, tuple)):
            value = " ".join(v.decode("latin-1") if isinstance(v, bytes) else str(v) for v in value)
        key = _normalise(name)
        if key in found:
            found[key] = f"{found[key]} {value}" if key in ("webhook-signature", "x-signature") else found[key]
        else:
            found[key] = str(value)
    return found


def _secret_key(secret: Union[str, bytes]) -> bytes:
    if isinstance(secret, (bytes, bytearray)):
        return bytes(secret)
    if not isinstance(secret, str) or not secret:
        raise ValueError("the webhook secret must be the whsec_... string of the subscription")
    text = secret[len("whsec_") :] if secret.startswith("whsec_") else secret
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError("the webhook secret is not whsec_ followed by base64") from exc


def sign_webhook(secret: Union[str, bytes], msg_id: str, timestamp: int, payload: bytes) -> str:
    """The ``v1,<base64>`` signature of a payload (what the server sends); for tests."""
    key = _secret_key(secret)
    mac = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + payload, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode("ascii")


def verify_webhook(
    payload: Union[bytes, bytearray, memoryview, str],
    headers: Headers,
    secret: Union[str, bytes],
    *,
    tolerance: int = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
) -> Event:
    """Checks a webhook delivery and returns its event; raises if it must not be trusted.

    - ``payload``: the raw body exactly as received (bytes; before any JSON parsing).
    - ``headers``: the request's headers, any mapping or list of pairs; names are matched
      case-insensitively (a WSGI environ / Django ``META`` works too). The signature is
      read from ``webhook-signature``, or from ``X-Signature`` when that is absent.
    - ``secret``: the subscription's ``whsec_...`` secret (raw key bytes are accepted).
    - ``tolerance``: seconds the ``webhook-timestamp`` may be away from now (5 minutes).

    One matching ``v1`` entry among several (key rotation) is enough; comparisons are in
    constant time. Raises :class:`market.WebhookVerificationError` for missing headers, a
    timestamp outside the tolerance, no matching signature or a body that is not an event,
    and ValueError for a malformed ``secret``. Amounts in ``event.data`` are Decimals.
    """
    if isinstance(payload, str):
        body = payload.encode("utf-8")
    elif isinstance(payload, (bytes, bytearray, memoryview)):
        body = bytes(payload)
    else:
        raise TypeError("payload must be the raw body as bytes")
    key = _secret_key(secret)
    h = _header_map(headers)

    msg_id = h.get("webhook-id")
    timestamp = h.get("webhook-timestamp")
    signatures = h.get("webhook-signature")
    if signatures is None:
        signatures = h.get("x-signature")
    missing = [
        n for n, v in (("webhook-id", msg_id), ("webhook-timestamp", timestamp), ("webhook-signature", signatures)) if not v
    ]
    if missing:
        raise WebhookVerificationError(f"missing header(s): {', '.join(missing)}")
    assert msg_id is not None and timestamp is not None and signatures is not None

    ts_text = timestamp.strip()
    if not ts_text.isdigit() or len(ts_text) > 15:
        raise WebhookVerificationError("webhook-timestamp is not a Unix time in seconds")
    ts = int(ts_text)
    current = time.time() if now is None else now
    if ts < current - tolerance:
        raise WebhookVerificationError("webhook-timestamp is too old")
    if ts > current + tolerance:
        raise WebhookVerificationError("webhook-timestamp is too far in the future")

    mac = hmac.new(key, f"{msg_id}.{ts_text}.".encode("utf-8") + body, hashlib.sha256).digest()
    expected = base64.b64encode(mac)
    matched = False
    for entry in signatures.split():
        version, _, value = entry.partition(",")
        if version != "v1":
            continue
        # No early exit: every entry is compared, each in constant time.
        if hmac.compare_digest(expected, value.encode("utf-8", "replace")):
            matched = True
    if not matched:
        raise WebhookVerificationError("no signature matches")

    try:
        obj = json.loads(body.decode("utf-8"), parse_float=Decimal)
    except (UnicodeDecodeError, ValueError) as exc:
        raise WebhookVerificationError("the payload is not JSON") from exc
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise WebhookVerificationError("the payload is not an event")
    try:
        return Event.from_json(obj)
    except ValueError as exc:
        raise WebhookVerificationError(f"the payload is not an event: {exc}") from exc
