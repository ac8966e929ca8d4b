"""HTTP transport: a keep-alive connection pool (http.client) that honours the proxy
environment variables, JSON decoding with Decimal, retries (docs/clients.md), the
per-attempt hook, and the pure helpers they rely on (query encoding, retry decisions)."""

from __future__ import annotations

import base64
import datetime as _dt
import http.client
import json
import random
import select
import socket
import ssl
import threading
import time
import urllib.request
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple, Union
from urllib.parse import quote, unquote, urlsplit

from ._errors import APIConnectionError, MarketError, error_from_response, parse_retry_after
from ._models import RateLimit
from ._version import __version__

#: Statuses retried after ``Retry-After``: the API's 429 and 503, and the 502/504 that
#: nginx answers (``service_unavailable``, with ``Retry-After: 1``) when the worker pool is
#: down or too slow. 429 and 503 for any request (nothing was carried out); 502 and 504
#: only when sending again cannot act twice (a GET, or a request with an Idempotency-Key).
RETRY_STATUSES = frozenset({429, 502, 503, 504})
ALWAYS_RETRY_STATUSES = frozenset({429, 503})

#: The longest ``Retry-After`` waited for; a longer one is raised to the caller at once.
MAX_RETRY_AFTER = 60

#: Idle keep-alive connections kept per client.
MAX_IDLE_CONNECTIONS = 8

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
    """Whether to send a request again (pure; docs/clients.md).

    ``attempt`` counts the retries already made (0 after the first try). A 429 or 503 is
    retried for any request; a 502 or 504, and a network failure (no answer, a timeout,
    the connection dropped mid-answer), only when sending again cannot do a thing twice: a
    GET, or a request that carries an Idempotency-Key (the server replays the first
    answer). Never more than ``max_retries`` times.
    """
    if attempt >= max_retries:
        return False
    repeatable = method.upper() in SAFE_METHODS or bool(idempotency_key)
    if network_error:
        return repeatable
    if status in ALWAYS_RETRY_STATUSES:
        return True
    return status in RETRY_STATUSES and repeatable


def retry_delay(attempt: int, retry_after: Optional[str] = None, rand: Callable[[], float] = random.random) -> float:
    """Seconds to wait before retry number ``attempt + 1``.

    The server's ``Retry-After`` when the answer has one (an integer of seconds), else an
    exponential backoff: 0.5 s, 1 s, 2 s, ... capped at 8 s, each times a random factor
    from 0.5 to 1 (``rand`` gives [0, 1)) so that clients that failed together do not
    come back together.
    """
    seconds = parse_retry_after(retry_after)
    if seconds is not None:
        return float(seconds)
    return min(8.0, 0.5 * (2**attempt)) * (0.5 + rand() / 2)


def decode_json(body: bytes) -> Any:
    """JSON with every non-integer number as an exact Decimal."""
    return json.loads(body.decode("utf-8"), parse_float=Decimal)


def encode_json(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def new_idempotency_key() -> str:
    return f"market-python-{uuid.uuid4()}"


# --- transport --------------------------------------------------------------------------


@dataclass(frozen=True)
class RequestInfo:
    """What the ``on_response`` hook is told about one HTTP attempt (never the API key).

    ``path`` is the route's path with its query (``/v1/products?limit=2``), without the
    base URL; ``status`` is None when no complete answer came, and ``error`` then says why
    (``"timeout"``, or the connection error); ``attempt`` is 1 for the first attempt of a
    call, 2 for its first retry, and so on.
    """

    method: str
    path: str
    status: Optional[int]
    error: Optional[str]
    duration_ms: float
    request_id: Optional[str]
    attempt: int


def _is_dropped(conn: http.client.HTTPConnection) -> bool:
    """Whether an idle kept-alive connection was closed by the server (or has unexpected
    bytes waiting): its socket is readable while no answer is due."""
    sock = conn.sock
    if sock is None:
        return False  # not connected yet: it connects on its next request
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


class _Pool:
    """Idle keep-alive connections to one host (or to the proxy), shared by the threads
    that use one client; each request takes a connection of its own."""

    def __init__(self, factory: Callable[[], http.client.HTTPConnection], max_idle: int = MAX_IDLE_CONNECTIONS):
        self._factory = factory
        self._max_idle = max_idle
        self._idle: List[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def get(self) -> http.client.HTTPConnection:
        while True:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                return self._factory()
            if _is_dropped(conn):
                conn.close()
                continue
            return conn

    def put(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._idle) < self._max_idle:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


@dataclass(frozen=True)
class _Proxy:
    host: str
    port: int
    authorization: Optional[str]  # the Proxy-Authorization value, from the proxy URL's user info

    def __repr__(self) -> str:
        return f"<proxy {self.host}:{self.port}>"


def proxy_for(base_url: str) -> Optional[_Proxy]:
    """The proxy for requests to ``base_url`` from the environment (``HTTPS_PROXY`` for an
    https URL, ``HTTP_PROXY`` for an http one, either case; ``NO_PROXY`` exempts hosts), as
    ``urllib.request`` reads them; None for a direct connection. Only http:// proxies."""
    parts = urlsplit(base_url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if not proxy:
        return None
    netloc = parts.netloc.rsplit("@", 1)[-1]
    if urllib.request.proxy_bypass(netloc) or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    if "://" not in proxy:
        proxy = "http://" + proxy
    p = urlsplit(proxy)
    if p.scheme != "http" or not p.hostname:
        raise ValueError(f"only http:// proxies are supported, not {p.scheme}:// ({parts.scheme}_proxy)")
    auth = None
    if p.username is not None:
        creds = f"{unquote(p.username)}:{unquote(p.password or '')}".encode()
        auth = "Basic " + base64.b64encode(creds).decode("ascii")
    return _Proxy(p.hostname, p.port or 80, auth)


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
        on_response: Optional[Callable[[RequestInfo], None]] = None,
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
        if on_response is not None and not callable(on_response):
            raise TypeError("on_response must be callable")
        self.on_response = on_response
        self._proxy = proxy_for(self.base_url)
        self._pool = _Pool(self._connection)

    def __repr__(self) -> str:
        return f"<Transport {self.base_url}>"

    def close(self) -> None:
        """Closes the idle kept-alive connections (the client stays usable)."""
        self._pool.close()

    def _connection(self) -> http.client.HTTPConnection:
        proxy = self._proxy
        if self._scheme == "https":
            if proxy is None:
                return http.client.HTTPSConnection(self._host, self._port, timeout=self.timeout, context=self._ssl_context)
            # CONNECT through the proxy, then TLS with the API's host inside the tunnel.
            conn = http.client.HTTPSConnection(proxy.host, proxy.port, timeout=self.timeout, context=self._ssl_context)
            tunnel_headers = {"Proxy-Authorization": proxy.authorization} if proxy.authorization else None
            conn.set_tunnel(self._host, self._port or 443, headers=tunnel_headers)
            return conn
        if proxy is None:
            return http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)
        return http.client.HTTPConnection(proxy.host, proxy.port, timeout=self.timeout)

    def _send_once(
        self, method: str, target: str, body: Optional[bytes], headers: Mapping[str, str]
    ) -> Tuple[int, http.client.HTTPMessage, bytes]:
        """One attempt on a pooled connection: kept for the next request when the answer
        was read whole and the server keeps the connection open, else closed."""
        headers = dict(headers)
        if self._proxy is not None and self._scheme == "http":
            # Through an http proxy: the absolute form, and the proxy's credentials.
            host = self._host if self._port is None else f"{self._host}:{self._port}"
            if ":" in self._host:
                host = f"[{self._host}]" if self._port is None else f"[{self._host}]:{self._port}"
            target = f"http://{host}{target}"
            if self._proxy.authorization:
                headers["Proxy-Authorization"] = self._proxy.authorization
        conn = self._pool.get()
        keep = False
        try:
            conn.request(method, target, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            keep = not resp.will_close
            return resp.status, resp.headers, data
        finally:
            if keep:
                self._pool.put(conn)
            else:
                conn.close()

    def _report(self, method: str, path: str, status: Optional[int], error: Optional[str], started: float,
                request_id: Optional[str], attempt: int) -> None:
        hook = self.on_response
        if hook is None:
            return
        info = RequestInfo(method=method, path=path, status=status, error=error,
                           duration_ms=(time.monotonic() - started) * 1000.0, request_id=request_id,
                           attempt=attempt + 1)
        try:
            hook(info)
        except Exception:  # noqa: BLE001 - a failing hook must not change the call's outcome
            pass

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
        path_and_query = path + (f"?{qs}" if qs else "")
        target = self._prefix + path_and_query
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
            started = time.monotonic()
            try:
                status, resp_headers, raw = self._send_once(method, target, body, headers)
            except ssl.SSLCertVerificationError as exc:
                self._report(method, path_and_query, None, f"TLS certificate not trusted: {exc}", started, None, attempt)
                raise APIConnectionError(f"TLS certificate of {self.base_url} not trusted: {exc}") from exc
            except (OSError, http.client.HTTPException) as exc:
                why = "timeout" if isinstance(exc, (TimeoutError, socket.timeout)) else f"{type(exc).__name__}: {exc}"
                self._report(method, path_and_query, None, why, started, None, attempt)
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

            self._report(method, path_and_query, status, None, started, resp_headers.get("X-Request-Id"), attempt)
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

            retry_after = parse_retry_after(resp_headers.get("Retry-After"))
            if (retry_after is None or retry_after <= MAX_RETRY_AFTER) and should_retry(
                method, attempt=attempt, max_retries=self.max_retries, status=status, idempotency_key=idempotency_key
            ):
                self.sleep(retry_delay(attempt, resp_headers.get("Retry-After")))
                attempt += 1
                continue
            raise error_from_response(status, resp_headers, raw)

