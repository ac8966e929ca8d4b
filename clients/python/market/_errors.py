"""Errors raised by the client.

Every error is a :class:`MarketError`. An answer of the API with an error status raises the
subclass for its status, carrying what the API's error envelope said::

    {"error": {"type": ..., "code": ..., "message": ..., "param": ..., "request_id": ...}}

=============================  ============================================================
status                          class
=============================  ============================================================
400, 405, 408, 410, 413-416    :class:`InvalidRequestError` (and any other 4xx not below)
401                            :class:`AuthenticationError`
403                            :class:`PermissionDeniedError`
404                            :class:`NotFoundError`
409                            :class:`ConflictError`
429                            :class:`RateLimitError`
5xx                            :class:`ServerError`
no answer                      :class:`APIConnectionError` (status ``None``)
=============================  ============================================================

Branch on ``code`` (``parameter_invalid``, ``order_refunded``, ...); ``message`` is for
people.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Optional, Type

from ._models import RateLimit


class MarketError(Exception):
    """Base class of every error of the client.

    Attributes (``None`` where the answer did not say):

    - ``status``: the HTTP status (``None`` when no answer came)
    - ``type``, ``code``, ``message``, ``param``, ``request_id``: the API's error envelope
      (``request_id`` falls back to the ``X-Request-Id`` header)
    - ``rate_limit``: the answer's :class:`RateLimit` figures
    - ``retry_after``: the answer's ``Retry-After`` in seconds (429, 503)
    - ``headers``: the answer's headers (a case-insensitive mapping), if any
    """

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        type: Optional[str] = None,
        code: Optional[str] = None,
        param: Optional[str] = None,
        request_id: Optional[str] = None,
        rate_limit: Optional[RateLimit] = None,
        retry_after: Optional[int] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.type = type
        self.code = code
        self.param = param
        self.request_id = request_id
        self.rate_limit = rate_limit
        self.retry_after = retry_after
        self.headers = headers

    def __str__(self) -> str:
        head = " ".join(str(p) for p in (self.status, self.code) if p is not None)
        text = f"{head}: {self.message}" if head else self.message
        extra = []
        if self.param is not None:
            extra.append(f"param={self.param}")
        if self.request_id is not None:
            extra.append(f"request_id={self.request_id}")
        return f"{text} ({', '.join(extra)})" if extra else text

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(status={self.status!r}, type={self.type!r}, "
            f"code={self.code!r}, message={self.message!r}, param={self.param!r}, "
            f"request_id={self.request_id!r})"
        )


class AuthenticationError(MarketError):
    """401: no key, an unknown, revoked or expired key (``invalid_api_key``, ``api_key_expired``)."""


class PermissionDeniedError(MarketError):
    """403 ``insufficient_scope``: the key lacks the scope the route needs (read-only key)."""


class NotFoundError(MarketError):
    """404 ``resource_missing``: nothing the caller may see has that id; or 404
    ``route_not_found``: the server has no such route (a call of the extension
    ``webhook-management``, :class:`Webhooks` but ``create`` and :class:`Events`, on a
    server without it)."""


class ConflictError(MarketError):
    """409: ``order_refunded`` or ``idempotency_conflict``."""


class RateLimitError(MarketError):
    """429 ``rate_limited``: ``retry_after`` says how many seconds until the window ends."""


class InvalidRequestError(MarketError):
    """400 and the other 4xx: the request was refused as it is (see ``code`` and ``param``)."""


class ServerError(MarketError):
    """5xx: ``internal_error``, or ``service_unavailable`` (database or workers down)."""


class APIConnectionError(MarketError):
    """No answer: connection refused or dropped, timeout, TLS failure. ``status`` is None.

    The underlying exception is the ``__cause__``.
    """


class WebhookVerificationError(MarketError):
    """A webhook delivery that must not be trusted: missing headers, a timestamp outside
    the tolerance, no matching signature, or a body that is not an event."""


_BY_STATUS: Dict[int, Type[MarketError]] = {
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    429: RateLimitError,
}


def error_class_for_status(status: int) -> Type[MarketError]:
    """The error class of an HTTP status (pure; see the table in the module's doc)."""
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if 400 <= status < 500:
        return InvalidRequestError
    if status >= 500:
        return ServerError
    return MarketError


def parse_retry_after(value: Optional[str]) -> Optional[int]:
    """``Retry-After`` as whole seconds (the API sends an integer), or None if unusable."""
    if value is None:
        return None
    value = value.strip()
    if not value.isdigit():
        return None
    return int(value)


def error_from_response(status: int, headers: Mapping[str, str], body: bytes) -> MarketError:
    """The error for an answer with an error status: its class from the status, its fields
    from the JSON envelope when there is one (a non-JSON body gives a generic message)."""
    envelope: Dict[str, Any] = {}
    try:
        parsed = json.loads(body.decode("utf-8"))
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            envelope = parsed["error"]
    except (UnicodeDecodeError, ValueError):
        pass
    message = envelope.get("message")
    if not isinstance(message, str) or not message:
        message = f"HTTP {status} without an API error body"
    cls = error_class_for_status(status)
    return cls(
        message,
        status=status,
        type=envelope.get("type"),
        code=envelope.get("code"),
        param=envelope.get("param"),
        request_id=envelope.get("request_id") or headers.get("X-Request-Id"),
        rate_limit=RateLimit.from_headers(headers),
        retry_after=parse_retry_after(headers.get("Retry-After")),
        headers=headers,
    )
