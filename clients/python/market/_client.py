"""The client: :class:`Market` and its resources (products, sellers, orders, downloads,
webhooks, events), one method per route of the API."""

from __future__ import annotations

import datetime as _dt
import os
import ssl
import time
from decimal import Decimal
from typing import Any, Callable, Iterator, List, Literal, Optional, Sequence, Tuple, TypeVar, Union

from ._http import RequestInfo, Response, Transport, format_timestamp, path_segment
from ._models import (
    DeletedWebhookSubscription,
    DownloadLink,
    Event,
    EventDetail,
    Order,
    Page,
    Product,
    ProductListItem,
    Seller,
    WebhookSubscription,
)

Price = Union[Decimal, int, float, str]
Sort = Literal["relevance", "newest", "price_asc", "price_desc"]
OrderStatus = Literal["paid", "refunded"]
EventKind = Literal["sale.completed", "sale.refunded", "review.created", "payout.sent"]
EventType = Literal["sale.completed", "sale.refunded", "review.created", "payout.sent", "webhook.test"]
DateTime = Union[_dt.datetime, str]
T = TypeVar("T")
A = TypeVar("A")

DEFAULT_MAX_RETRIES = 2
DEFAULT_TIMEOUT = 30.0


class _Resource:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__} of {self._t.base_url}>"

    def _page(self, path: str, query: List[Tuple[str, Any]], item: Callable[[Any], T]) -> Page[T]:
        """One page of the listing at ``path`` (GET with ``query``), each item made by ``item``."""
        resp = self._t.request("GET", path, query=query)
        return _answered(Page.from_json(resp.data, item), resp)


class Products(_Resource):
    """The catalogue: ``GET /v1/products`` and ``GET /v1/products/:id``."""

    def list(
        self,
        *,
        category: Optional[str] = None,
        q: Optional[str] = None,
        seller: Optional[str] = None,
        min_price: Optional[Price] = None,
        max_price: Optional[Price] = None,
        sort: Optional[Sort] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[ProductListItem]:
        """One page of published products.

        ``category`` (slug, exact), ``q`` (full-text search), ``seller`` (handle),
        ``min_price``/``max_price`` (inclusive, in the product's currency; a Decimal, an int
        or a string such as ``"19.99"``), ``sort`` (``relevance`` (only with ``q``, its
        default), ``newest`` (default otherwise), ``price_asc``, ``price_desc``), ``limit``
        (1..100, default 20) and ``cursor`` (a page's ``next_cursor``). Parameters left at
        None are not sent.
        """
        return self._page(
            "/v1/products",
            [
                ("category", category),
                ("q", q),
                ("seller", seller),
                ("min_price", min_price),
                ("max_price", max_price),
                ("sort", sort),
                ("limit", limit),
                ("cursor", cursor),
            ],
            ProductListItem.from_json,
        )

    def all(
        self,
        *,
        category: Optional[str] = None,
        q: Optional[str] = None,
        seller: Optional[str] = None,
        min_price: Optional[Price] = None,
        max_price: Optional[Price] = None,
        sort: Optional[Sort] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Iterator[ProductListItem]:
        """Every matching product of every page, as a generator.

        Takes the parameters of :meth:`list`; ``limit`` is the page size. Pages are fetched
        one at a time, only when the items of the one before have been consumed.
        """
        return _walk(
            lambda c: self.list(
                category=category, q=q, seller=seller, min_price=min_price, max_price=max_price,
                sort=sort, limit=limit, cursor=c,
            ),
            cursor,
        )

    def get(self, id: str) -> Product:
        """One published product with its licence tiers; :class:`NotFoundError` if none."""
        resp = self._t.request("GET", f"/v1/products/{path_segment('id', id)}")
        return _answered(Product.from_json(resp.data), resp)


class Sellers(_Resource):
    """Seller profiles: ``GET /v1/sellers/:id``."""

    def get(self, id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Seller:
        """A seller's profile (``id`` is its handle) with one page of its catalogue in
        ``products``; ``limit`` and ``cursor`` page that catalogue."""
        resp = self._t.request(
            "GET", f"/v1/sellers/{path_segment('id', id)}", query=[("limit", limit), ("cursor", cursor)]
        )
        seller = Seller.from_json(resp.data)
        seller.rate_limit, seller.request_id = resp.rate_limit, resp.request_id
        seller.products.rate_limit, seller.products.request_id = resp.rate_limit, resp.request_id
        return seller


class Orders(_Resource):
    """The caller's own orders: ``GET /v1/orders``."""

    def list(
        self, *, status: Optional[OrderStatus] = None, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> Page[Order]:
        """One page of the key's account's orders, newest first, with their downloads.

        ``status``: ``paid`` or ``refunded`` (both when None); ``limit`` 1..100; ``cursor``.
        """
        return self._page("/v1/orders", [("status", status), ("limit", limit), ("cursor", cursor)], Order.from_json)

    def all(
        self, *, status: Optional[OrderStatus] = None, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> Iterator[Order]:
        """Every order of every page, as a generator fetching pages lazily."""
        return _walk(lambda c: self.list(status=status, limit=limit, cursor=c), cursor)


class Downloads(_Resource):
    """Download links: ``POST /v1/downloads/:id/link``."""

    def create_link(
        self, id: str, *, expires_in: Optional[int] = None, idempotency_key: Optional[str] = None
    ) -> DownloadLink:
        """Mints a fresh link for download ``id`` (a ``dl_...`` of one of your orders).

        ``expires_in``: lifetime in seconds, 60..86400 (the server's default when None).
        ``idempotency_key``: sent as ``Idempotency-Key``; one is generated when None, and
        the same key is used by every retry of this call, so it mints one link at most.
        """
        body = None
        if expires_in is not None:
            if isinstance(expires_in, bool) or not isinstance(expires_in, int):
                raise TypeError("expires_in must be an int (seconds)")
            body = {"expires_in": expires_in}
        resp = self._t.request(
            "POST", f"/v1/downloads/{path_segment('id', id)}/link", json_body=body, idempotency_key=idempotency_key
        )
        return _answered(DownloadLink.from_json(resp.data), resp)


class Webhooks(_Resource):
    """Webhook subscriptions: ``POST /v1/webhooks``, ``GET /v1/webhooks``, ``GET``, ``POST``
    and ``DELETE /v1/webhooks/:id``, ``POST /v1/webhooks/:id/rotate_secret`` and
    ``POST /v1/webhooks/:id/test``.

    :meth:`create` (``POST /v1/webhooks``) is a route of the specification and works on
    every server. The other calls use routes of the API's extension ``webhook-management``,
    which a server has only when its operator sets
    ``MARKET_API_EXTENSIONS=webhook-management`` (off by default). Without it they raise
    the client's usual errors, never retried: :class:`NotFoundError` (status 404, code
    ``route_not_found``) for :meth:`get`, :meth:`update`, :meth:`delete`,
    :meth:`rotate_secret` and :meth:`test`; :class:`InvalidRequestError` (status 405, code
    ``method_not_allowed``, header ``Allow: POST``) for :meth:`list` and :meth:`all`, whose
    path exists for :meth:`create`."""

    def create(
        self,
        *,
        url: str,
        events: Optional[Sequence[EventKind]] = None,
        description: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> WebhookSubscription:
        """Subscribes an ``https://`` URL to events.

        ``events``: kinds among ``sale.completed``, ``sale.refunded``, ``review.created``,
        ``payout.sent`` (all four when None). ``description``: up to 500 characters.
        ``idempotency_key`` as for :meth:`Downloads.create_link`. The answer's ``secret``
        is shown only now: keep it to verify deliveries with :func:`market.verify_webhook`.
        Works with or without the server's extension ``webhook-management``.
        """
        body: dict = {"url": url}
        if events is not None:
            body["events"] = _event_kinds(events)
        if description is not None:
            body["description"] = description
        resp = self._t.request("POST", "/v1/webhooks", json_body=body, idempotency_key=idempotency_key)
        return _subscription(resp)

    def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page[WebhookSubscription]:
        """One page of the key's account's subscriptions in its mode, newest first.

        ``limit`` 1..100 (default 20); ``cursor``: a page's ``next_cursor``. The secrets are
        not shown (``secret`` is None).

        Needs the server's extension ``webhook-management``
        (``MARKET_API_EXTENSIONS=webhook-management``); without it
        :class:`InvalidRequestError` (405, code ``method_not_allowed``, ``Allow: POST``).
        """
        return self._page("/v1/webhooks", [("limit", limit), ("cursor", cursor)], WebhookSubscription.from_json)

    def all(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Iterator[WebhookSubscription]:
        """Every subscription of every page, as a generator fetching pages lazily. Needs the
        extension ``webhook-management`` (without it the first ``next()`` raises
        :class:`InvalidRequestError` 405 ``method_not_allowed``)."""
        return _walk(lambda c: self.list(limit=limit, cursor=c), cursor)

    def get(self, id: str) -> WebhookSubscription:
        """One subscription (``we_...``), without its secret; :class:`NotFoundError` if none
        (``resource_missing``). Needs the extension ``webhook-management`` (without it
        :class:`NotFoundError` ``route_not_found``)."""
        return _subscription(self._t.request("GET", f"/v1/webhooks/{path_segment('id', id)}"))

    def update(
        self,
        id: str,
        *,
        url: Optional[str] = None,
        events: Optional[Sequence[EventKind]] = None,
        description: Optional[str] = None,
        disabled: Optional[bool] = None,
        idempotency_key: Optional[str] = None,
    ) -> WebhookSubscription:
        """Changes a subscription and returns it updated.

        Only the fields given are sent (the rules of :meth:`create`; a new ``url`` is
        checked again); ``disabled=True`` stops deliveries to it, ``disabled=False``
        enables it again. With no field the body is ``{}``, which changes nothing.
        ``idempotency_key`` as for :meth:`Downloads.create_link`.

        Needs the server's extension ``webhook-management``
        (``MARKET_API_EXTENSIONS=webhook-management``); without it :class:`NotFoundError`
        (404, code ``route_not_found``).
        """
        body: dict = {}
        if url is not None:
            body["url"] = url
        if events is not None:
            body["events"] = _event_kinds(events)
        if description is not None:
            body["description"] = description
        if disabled is not None:
            if not isinstance(disabled, bool):
                raise TypeError("disabled must be a bool")
            body["disabled"] = disabled
        resp = self._t.request(
            "POST", f"/v1/webhooks/{path_segment('id', id)}", json_body=body, idempotency_key=idempotency_key
        )
        return _subscription(resp)

    def delete(self, id: str, *, idempotency_key: Optional[str] = None) -> DeletedWebhookSubscription:
        """Removes a subscription: nothing more is sent to it, and its pending deliveries end
        as ``endpoint_deleted``. A second delete is :class:`NotFoundError`, except the
        retries of one call, which carry its Idempotency-Key (``idempotency_key``, or one
        generated for the call) and so get the first answer again.

        Needs the server's extension ``webhook-management``
        (``MARKET_API_EXTENSIONS=webhook-management``); without it :class:`NotFoundError`
        (404, code ``route_not_found``).
        """
        resp = self._t.request("DELETE", f"/v1/webhooks/{path_segment('id', id)}", idempotency_key=idempotency_key)
        return _answered(DeletedWebhookSubscription.from_json(resp.data), resp)

    def rotate_secret(
        self, id: str, *, expire_old_in: Optional[int] = None, idempotency_key: Optional[str] = None
    ) -> WebhookSubscription:
        """A new signing secret for a subscription, returned in ``secret`` (shown only now).

        ``expire_old_in``: seconds, 0..604800, the replaced secret keeps signing beside the
        new one (every delivery meanwhile carries both signatures); 0 ends it at once (a
        leaked secret); the server's default (24 h) when None. ``idempotency_key`` as for
        :meth:`Downloads.create_link`: a replay shows the same new secret.

        Needs the server's extension ``webhook-management``
        (``MARKET_API_EXTENSIONS=webhook-management``); without it :class:`NotFoundError`
        (404, code ``route_not_found``).
        """
        body = None
        if expire_old_in is not None:
            if isinstance(expire_old_in, bool) or not isinstance(expire_old_in, int):
                raise TypeError("expire_old_in must be an int (seconds)")
            body = {"expire_old_in": expire_old_in}
        resp = self._t.request(
            "POST", f"/v1/webhooks/{path_segment('id', id)}/rotate_secret", json_body=body,
            idempotency_key=idempotency_key,
        )
        return _subscription(resp)

    def test(self, id: str, *, idempotency_key: Optional[str] = None) -> Event:
        """Queues a ``webhook.test`` event for this subscription alone and returns it: exactly
        the payload that will be delivered, ``data`` ``{"subscription": id}``.

        ``idempotency_key`` as for :meth:`Downloads.create_link`: a replay returns the same
        event and queues nothing more.

        Needs the server's extension ``webhook-management``
        (``MARKET_API_EXTENSIONS=webhook-management``); without it :class:`NotFoundError`
        (404, code ``route_not_found``).
        """
        resp = self._t.request(
            "POST", f"/v1/webhooks/{path_segment('id', id)}/test", idempotency_key=idempotency_key
        )
        return _answered(Event.from_json(resp.data), resp)


class Events(_Resource):
    """The events of the key's account and mode, as delivered: ``GET /v1/events`` and
    ``GET /v1/events/:id``.

    Both routes belong to the API's extension ``webhook-management``, which a server has
    only when its operator sets ``MARKET_API_EXTENSIONS=webhook-management`` (off by
    default). Without it every call here raises :class:`NotFoundError` (status 404, code
    ``route_not_found``), never retried."""

    def list(
        self,
        *,
        type: Optional[EventType] = None,
        created_gte: Optional[DateTime] = None,
        created_lt: Optional[DateTime] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Event]:
        """One page of events, newest first, each exactly the payload delivered.

        ``type``: one of ``sale.completed``, ``sale.refunded``, ``review.created``,
        ``payout.sent``, ``webhook.test``. ``created_gte`` / ``created_lt``: events created
        at or after / before a time, a :class:`datetime.datetime` (sent in UTC; a naive one
        is taken as UTC) or an RFC 3339 string sent as it is. ``limit`` 1..100; ``cursor``
        (a cursor holds the filters it was made with: pass the same ones).

        Needs the server's extension ``webhook-management``
        (``MARKET_API_EXTENSIONS=webhook-management``); without it :class:`NotFoundError`
        (404, code ``route_not_found``).
        """
        return self._page(
            "/v1/events",
            [
                ("type", type),
                ("created_gte", format_timestamp("created_gte", created_gte)),
                ("created_lt", format_timestamp("created_lt", created_lt)),
                ("limit", limit),
                ("cursor", cursor),
            ],
            Event.from_json,
        )

    def all(
        self,
        *,
        type: Optional[EventType] = None,
        created_gte: Optional[DateTime] = None,
        created_lt: Optional[DateTime] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Iterator[Event]:
        """Every matching event of every page, newest first, as a generator fetching pages
        lazily; takes the parameters of :meth:`list` (``limit`` is the page size). Needs the
        extension ``webhook-management`` (without it the first ``next()`` raises
        :class:`NotFoundError` ``route_not_found``)."""
        format_timestamp("created_gte", created_gte)  # a wrong type fails now, not at the first next()
        format_timestamp("created_lt", created_lt)
        return _walk(
            lambda c: self.list(type=type, created_gte=created_gte, created_lt=created_lt, limit=limit, cursor=c),
            cursor,
        )

    def get(self, id: str) -> EventDetail:
        """One event (``evt_...``) with its ``deliveries``; :class:`NotFoundError` if none
        (``resource_missing``). Needs the extension ``webhook-management`` (without it
        :class:`NotFoundError` ``route_not_found``)."""
        resp = self._t.request("GET", f"/v1/events/{path_segment('id', id)}")
        return _answered(EventDetail.from_json(resp.data), resp)


def _event_kinds(events: Sequence[EventKind]) -> List[str]:
    if isinstance(events, str):
        raise TypeError("events must be a list of event kinds, not a str")
    return [e for e in events]


def _answered(answer: A, resp: Response) -> A:
    """``answer`` with the ``rate_limit`` and ``request_id`` of the response it was read from."""
    answer.rate_limit, answer.request_id = resp.rate_limit, resp.request_id  # type: ignore[attr-defined]
    return answer


def _subscription(resp: Response) -> WebhookSubscription:
    return _answered(WebhookSubscription.from_json(resp.data), resp)


def _walk(fetch: Callable[[Optional[str]], Page], cursor: Optional[str]) -> Iterator:
    def gen() -> Iterator:
        current = cursor
        while True:
            page = fetch(current)
            yield from page.data
            if page.next_cursor is None or page.next_cursor == current:
                return
            current = page.next_cursor

    return gen()


class Market:
    """A client of the market API.

    ``Market(api_key, base_url=None, max_retries=2, timeout=30.0)``:

    - ``api_key``: an ``sk_test_...`` or ``sk_live_...`` key. It is sent only in the
      Authorization header and never shown by ``repr()``, ``str()`` or any error.
    - ``base_url``: where the API is (``https://api.example.com``); else the environment
      variable ``MARKET_BASE_URL``; else ValueError.
    - ``max_retries``: how many times a request is sent again after a 429, 502, 503 or 504
      (waiting for ``Retry-After``) or a network failure; GETs, POSTs and DELETEs (the last
      two always carry an Idempotency-Key) are all retried. The policy: docs/clients.md.
    - ``timeout``: seconds per attempt (connect and each read).
    - ``sleep``: the function used to wait between attempts (``time.sleep``); tests and
      event-loop integrations may pass their own.
    - ``ssl_context``: for an https base URL with a private CA.
    - ``on_response``: a callable given a :class:`RequestInfo` after every HTTP attempt,
      retries included (method, path with query, status or error, duration in ms, request
      id, attempt number); never the API key. What it raises is ignored.

    Connections are kept alive and reused (a small pool per client, safe to share between
    threads); ``close()`` (or ``with Market(...) as m:``) closes the idle ones. The
    environment's ``HTTPS_PROXY``/``HTTP_PROXY``/``NO_PROXY`` are honoured, read once when
    the client is made (an https API is reached through a CONNECT tunnel).
    """

    products: Products
    sellers: Sellers
    orders: Orders
    downloads: Downloads
    webhooks: Webhooks
    events: Events

    def __init__(
        self,
        api_key: str,
        *,
        base_url: Optional[str] = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float = DEFAULT_TIMEOUT,
        sleep: Callable[[float], None] = time.sleep,
        ssl_context: Optional[ssl.SSLContext] = None,
        on_response: Optional[Callable[[RequestInfo], None]] = None,
    ) -> None:
        if not isinstance(api_key, str) or not api_key.strip():
            raise ValueError("api_key is required (an sk_test_... or sk_live_... key)")
        if any(c in api_key for c in "\r\n\0") or api_key != api_key.strip():
            raise ValueError("api_key must not contain whitespace or control characters")
        if base_url is None:
            base_url = os.environ.get("MARKET_BASE_URL") or None
        if base_url is None:
            raise ValueError("base_url is required: pass base_url=... or set MARKET_BASE_URL")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError("max_retries must be an int >= 0")
        self._transport = Transport(
            api_key, base_url, max_retries=max_retries, timeout=timeout, sleep=sleep, ssl_context=ssl_context,
            on_response=on_response,
        )
        self.products = Products(self._transport)
        self.sellers = Sellers(self._transport)
        self.orders = Orders(self._transport)
        self.downloads = Downloads(self._transport)
        self.webhooks = Webhooks(self._transport)
        self.events = Events(self._transport)

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    @property
    def max_retries(self) -> int:
        return self._transport.max_retries

    def close(self) -> None:
        """Closes the kept-alive connections that are idle; the client stays usable."""
        self._transport.close()

    def __enter__(self) -> "Market":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Market(base_url={self.base_url!r}, max_retries={self.max_retries})"

    __str__ = __repr__


__all__: List[str] = ["Market", "Products", "Sellers", "Orders", "Downloads", "Webhooks", "Events"]
