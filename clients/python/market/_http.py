"""HTTP transport: one request per connection (http.client), JSON decoding with Decimal,
retries, and the pure helpers they rely on (query encoding, retry decisions)."""

from __future__ import annotations

import datetime as _dt
import http.client
import json
import ssl
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Mapping, Optional, Sequence, Tuple, Union
from urllib.parse import quote, urlsplit

from ._errors import APIConnectionError, MarketError, error_from_response, parse_retry_after
from ._models import RateLimit
from ._version import __version__

#: Statuses retried after ``Retry-After``: the API's 429 and 503, and the 502/504 that
#: nginx answers (``service_unavailable``, with ``Retry-After: 1``) when the worker pool is
#: down or too slow.
RETRY_STATUSES = frozenset({429, 502, 503, 504})

#: Methods that may be sent again after a network failure without an Idempotency-Key.
SAFE_METHODS = frozenset({"GET", "HEAD"})

#: Methods that always carry an Idempotency-Key (the caller's, or one generated per call).
IDEMPOTENT_KEY_METHODS = frozenset({"POST", "DELETE"})

QueryValue = Union[str, int, Decimal, float, None]


class _Secret:
    """Holds the API key; never shows it (repr, str, format all give ``<redacted>``)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "<redacted>"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return "<redacted>"

    def __reduce__(self) -> Any:
        raise TypeError("the API key cannot be pickled")


# --- pure helpers -----------------------------------------------------------------------


def format_query_value(name: str, value: Any) -> str:
    """One query value as the API expects it.

    ``str`` as it is; ``int`` in plain decimal; ``Decimal`` (and ``float``, through its
    shortest repr) in plain notation without an exponent (``Decimal('1E+2')`` is ``100``).
    Booleans and other types are a TypeError: the API has no boolean parameters.
    """
    if isinstance(value, bool):
        raise TypeError(f"{name} must not be a bool")
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        value = Decimal(repr(value))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"{name} must be a finite number")
        text = format(value, "f")
        return "0" if text in ("-0", "-0.0") else text
    raise TypeError(f"{name} must be a str, int or Decimal, not {type(value).__name__}")


def format_timestamp(name: str, value: Any) -> Optional[str]:
    """A date-time query value (``created_gte``, ``created_lt``) as the API expects it.

    A :class:`datetime.datetime` is written in RFC 3339 in UTC, ``2026-11-26T10:04:05Z``,
    with a fraction of a second only when it has one (``10:04:05.25Z``); an aware value is
    converted to UTC, a naive one is taken as UTC. A ``str`` is passed through as it is;
    ``None`` stays ``None``. Anything else (a :class:`datetime.date`, a number) is a
    TypeError.
    """
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, _dt.datetime):
        raise TypeError(f"{name} must be a datetime or a str, not {type(value).__name__}")
    v = value if value.utcoffset() is None else value.astimezone(_dt.timezone.utc)  # naive: UTC
    text = f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}:{v.second:02d}"
    if v.microsecond:
        text += f".{v.microsecond:06d}".rstrip("0")
    return text + "Z"


def encode_query(params: Sequence[Tuple[str, Any]]) -> str:
    """``a=1&b=x%20y`` from (name, value) pairs, leaving out those whose value is None.

    Every byte outside RFC 3986's unreserved set is percent-encoded (a space is ``%20``,
    never ``+``), so what the server decodes is exactly the value given.
    """
    parts = []
    for name, value in params:
        if value is None:
            continue
        text = format_query_value(name, value)
        parts.append(f"{quote(name, safe='')}={quote(text, safe='')}")
    return "&".join(parts)


def path_segment(name: str, value: Any) -> str:
    """An identifier for a path (``/v1/products/<id>``), percent-encoded, never empty."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    if value == "":
        raise ValueError(f"{name} must not be empty")
    return quote(value, safe="")


def should_retry(
    method: str,
    *,
    attempt: int,
    max_retries: int,
    status: Optional[int] = None,
    network_error: bool = False,
    idempotency_key: Optional[str] = None,
) -> bool:
    """Whether to send a request again (pure).

    ``attempt`` counts the retries already made (0 after the first try). An answer is
    retried when its status is in :data:`RETRY_STATUSES`; a network failure (no answer, or
    the connection dropped mid-answer) only when sending again cannot do a thing twice: a
    GET, or a request that carries an Idempotency-Key (the server replays the first
    answer). Never more than ``max_retries`` times.
    """
    if attempt >= max_retries:
        return False
    if network_error:
        return method.upper() in SAFE_METHODS or bool(idempotency_key)
    return status in RETRY_STATUSES


def retry_delay(attempt: int, retry_after: Optional[str] = None) -> float:
    """Seconds to wait before retry number ``attempt + 1`` (pure).

    The server's ``Retry-After`` when the answer has one (an integer of seconds), else an
    exponential backoff: 0.5 s, 1 s, 2 s, ... capped at 8 s.
    """
    seconds = parse_retry_after(retry_after)
    if seconds is not None:
        return float(seconds)
    return min(8.0, 0.5 * (2**attempt))


def decode_json(body: bytes) -> Any:
    """JSON with every non-integer number as an exact Decimal."""
    return json.loads(body.decode("utf-8"), parse_float=Decimal)


def encode_json(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def new_idempotency_key() -> str:
    return f"market-python-{uuid.uuid4()}"


# --- transport --------------------------------------------------------------------------


@dataclass
class Response:
    status: int
    headers: http.client.HTTPMessage
    data: Any
    rate_limit: Optional[RateLimit]
    request_id: Optional[str]


class Transport:
    """Sends requests to the API with the key, decodes answers, retries, raises errors."""

    def __init__(
        self,
        api_key: str,
        base_url: str,
        *,
        max_retries: int,
        timeout: float,
        sleep: Callable[[float], None],
        ssl_context: Optional[ssl.SSLContext] = None,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http:// or https:// URL, not {base_url!r}")
        if parts.query or parts.fragment or parts.username is not None:
            raise ValueError("base_url must not have user info, a query or a fragment")
        self._key = _Secret(api_key)
        self.base_url = base_url.rstrip("/")
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self.max_retries = max_retries
        self.timeout = timeout
        self.sleep = sleep
        if self._scheme == "https" and ssl_context is None:
            ssl_context = ssl.create_default_context()
        self._ssl_context = ssl_context

    def __repr__(self) -> str:
        return f"<Transport {self.base_url}>"

    def _connection(self) -> http.client.HTTPConnection:
        if self._scheme == "https":
            return http.client.HTTPSConnection(self._host, self._port, timeout=self.timeout, context=self._ssl_context)
        return http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)

    def _send_once(
        self, method: str, target: str, body: Optional[bytes], headers: Mapping[str, str]
    ) -> Tuple[int, http.client.HTTPMessage, bytes]:
        conn = self._connection()
        try:
            conn.request(method, target, body=body, headers=dict(headers))
            resp = conn.getresponse()
            return resp.status, resp.headers, resp.read()
        finally:
            conn.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Sequence[Tuple[str, Any]] = (),
        json_body: Any = None,
        idempotency_key: Optional[str] = None,
    ) -> Response:
        """Sends ``method path`` and returns the decoded 2xx answer, or raises.

        Every POST and DELETE carries an Idempotency-Key: ``idempotency_key``, or one
        generated here and kept for every retry of this call.
        """
        method = method.upper()
        qs = encode_query(query)
        target = self._prefix + path + (f"?{qs}" if qs else "")
        headers = {
            "Authorization": f"Bearer {self._key.reveal()}",
            "Accept": "application/json",
            "User-Agent": f"market-python/{__version__}",
        }
        body = None
        if json_body is not None:
            body = encode_json(json_body)
            headers["Content-Type"] = "application/json"
        if method in IDEMPOTENT_KEY_METHODS and idempotency_key is None:
            idempotency_key = new_idempotency_key()
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key

        attempt = 0
        while True:
            try:
                status, resp_headers, raw = self._send_once(method, target, body, headers)
            except ssl.SSLCertVerificationError as exc:
                raise APIConnectionError(f"TLS certificate of {self.base_url} not trusted: {exc}") from exc
            except (OSError, http.client.HTTPException) as exc:
                if should_retry(
                    method, attempt=attempt, max_retries=self.max_retries, network_error=True, idempotency_key=idempotency_key
                ):
                    self.sleep(retry_delay(attempt))
                    attempt += 1
                    continue
                raise APIConnectionError(
                    f"{method} {self.base_url}{path}: no answer ({type(exc).__name__}: {exc})"
                    + (f" after {attempt + 1} attempts" if attempt else "")
                ) from exc

            if 200 <= status < 300:
                try:
                    data = decode_json(raw) if raw else None
                except (UnicodeDecodeError, ValueError) as exc:
                    raise MarketError(
                        f"{method} {path}: the answer is not JSON", status=status,
                        request_id=resp_headers.get("X-Request-Id"), rate_limit=RateLimit.from_headers(resp_headers),
                        headers=resp_headers,
                    ) from exc
                return Response(
                    status=status,
                    headers=resp_headers,
                    data=data,
                    rate_limit=RateLimit.from_headers(resp_headers),
                    request_id=resp_headers.get("X-Request-Id"),
                )

            if should_retry(method, attempt=attempt, max_retries=self.max_retries, status=status):
                self.sleep(retry_delay(attempt, resp_headers.get("Retry-After")))
                attempt += 1
                continue
            raise error_from_response(status, resp_headers, raw)

