"""The client: :class:`Market` and its resources (products, sellers, orders, downloads,
webhooks), one method per route of the API."""

from __future__ import annotations

import os
import ssl
import time
from decimal import Decimal
from typing import Callable, Iterator, List, Literal, Optional, Sequence, Union

from ._http import Transport, path_segment
from ._models import (
    DownloadLink,
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

DEFAULT_MAX_RETRIES = 2
DEFAULT_TIMEOUT = 30.0


class _Resource:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__} of {self._t.base_url}>"


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
        resp = self._t.request(
            "GET",
            "/v1/products",
            query=[
                ("category", category),
                ("q", q),
                ("seller", seller),
                ("min_price", min_price),
                ("max_price", max_price),
                ("sort", sort),
                ("limit", limit),
                ("cursor", cursor),
            ],
        )
        page = Page.from_json(resp.data, ProductListItem.from_json)
        page.rate_limit, page.request_id = resp.rate_limit, resp.request_id
        return page

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
        product = Product.from_json(resp.data)
        product.rate_limit, product.request_id = resp.rate_limit, resp.request_id
        return product


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
        resp = self._t.request("GET", "/v1/orders", query=[("status", status), ("limit", limit), ("cursor", cursor)])
        page = Page.from_json(resp.data, Order.from_json)
        page.rate_limit, page.request_id = resp.rate_limit, resp.request_id
        return page

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
        link = DownloadLink.from_json(resp.data)
        link.rate_limit, link.request_id = resp.rate_limit, resp.request_id
        return link


class Webhooks(_Resource):
    """Webhook subscriptions: ``POST /v1/webhooks``."""

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
        """
        body: dict = {"url": url}
        if events is not None:
            if isinstance(events, str):
                raise TypeError("events must be a list of event kinds, not a str")
            body["events"] = [e for e in events]
        if description is not None:
            body["description"] = description
        resp = self._t.request("POST", "/v1/webhooks", json_body=body, idempotency_key=idempotency_key)
        sub = WebhookSubscription.from_json(resp.data)
        sub.rate_limit, sub.request_id = resp.rate_limit, resp.request_id
        return sub


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
    - ``max_retries``: how many times a request is sent again after a 429 or 503 (waiting
      for ``Retry-After``) or, for GETs and POSTs (which always carry an Idempotency-Key),
      after a network failure.
    - ``timeout``: seconds per attempt (connect and each read).
    - ``sleep``: the function used to wait between attempts (``time.sleep``); tests and
      event-loop integrations may pass their own.
    - ``ssl_context``: for an https base URL with a private CA.
    """

    products: Products
    sellers: Sellers
    orders: Orders
    downloads: Downloads
    webhooks: Webhooks

    def __init__(
        self,
        api_key: str,
        *,
        base_url: Optional[str] = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float = DEFAULT_TIMEOUT,
        sleep: Callable[[float], None] = time.sleep,
        ssl_context: Optional[ssl.SSLContext] = None,
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
            api_key, base_url, max_retries=max_retries, timeout=timeout, sleep=sleep, ssl_context=ssl_context
        )
        self.products = Products(self._transport)
        self.sellers = Sellers(self._transport)
        self.orders = Orders(self._transport)
        self.downloads = Downloads(self._transport)
        self.webhooks = Webhooks(self._transport)

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    @property
    def max_retries(self) -> int:
        return self._transport.max_retries

    def __repr__(self) -> str:
        return f"Market(base_url={self.base_url!r}, max_retries={self.max_retries})"

    __str__ = __repr__


__all__: List[str] = ["Market", "Products", "Sellers", "Orders", "Downloads", "Webhooks"]
