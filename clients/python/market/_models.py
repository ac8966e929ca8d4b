"""Typed values returned by the client: plain dataclasses.

Money (``price``, ``total``, ``amount``) is a :class:`decimal.Decimal` holding exactly the
number the API wrote (``19.99`` stays ``Decimal('19.99')``, ``5`` is ``Decimal('5')``).
Timestamps are timezone-aware :class:`datetime.datetime` values in UTC.

Objects returned by a call (a :class:`Page`, a :class:`Product`, a :class:`Seller`, a
:class:`DownloadLink`, a :class:`WebhookSubscription`, a
:class:`DeletedWebhookSubscription`, an :class:`Event`, an :class:`EventDetail`) carry the answer's rate-limit
figures in ``rate_limit`` and its ``X-Request-Id`` in ``request_id``; neither takes part
in ``repr()`` or ``==``.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable, Dict, Generic, Iterator, List, Mapping, Optional, TypeVar

T = TypeVar("T")

JSONObject = Dict[str, Any]


@dataclass(frozen=True)
class RateLimit:
    """The ``X-RateLimit-*`` figures of one answer (``None`` when a header was absent).

    ``limit``: requests allowed per window; ``remaining``: requests left in this window
    after this one; ``reset``: whole seconds until the window ends.
    """

    limit: Optional[int]
    remaining: Optional[int]
    reset: Optional[int]

    @classmethod
    def from_headers(cls, headers: Mapping[str, str]) -> Optional["RateLimit"]:
        """The figures of ``headers`` (any case-insensitive mapping), or ``None`` if none."""
        values = [
            _header_int(headers, "X-RateLimit-Limit"),
            _header_int(headers, "X-RateLimit-Remaining"),
            _header_int(headers, "X-RateLimit-Reset"),
        ]
        if all(v is None for v in values):
            return None
        return cls(limit=values[0], remaining=values[1], reset=values[2])


def _header_int(headers: Mapping[str, str], name: str) -> Optional[int]:
    value = headers.get(name)
    if value is None:
        return None
    value = value.strip()
    if not value.isdigit():
        return None
    return int(value)


# --- conversions ------------------------------------------------------------------------


def to_decimal(value: Any) -> Any:
    """A JSON number as Decimal (ints too); ``None`` and anything else unchanged."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return Decimal(value)
    return value


def to_datetime(value: Any) -> Optional[_dt.datetime]:
    """An RFC 3339 timestamp (``2026-11-21T10:04:05Z``) as an aware datetime; None stays None."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"timestamp is not a string: {value!r}")
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    parsed = _dt.datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_dt.timezone.utc)
    return parsed


def _meta() -> Any:
    # Response metadata: not shown by repr() and not compared.
    return field(default=None, repr=False, compare=False)


# --- pages ------------------------------------------------------------------------------


@dataclass
class Page(Generic[T]):
    """One page of a list: ``data`` in order and the ``next_cursor`` (``None`` on the last page).

    Iterating a page iterates ``data``; ``len(page)`` is the number of items on it.
    """

    data: List[T]
    next_cursor: Optional[str]
    rate_limit: Optional[RateLimit] = _meta()
    request_id: Optional[str] = _meta()

    @property
    def has_more(self) -> bool:
        """True when another page follows (``next_cursor`` is not ``None``)."""
        return self.next_cursor is not None

    def __iter__(self) -> Iterator[T]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    @classmethod
    def from_json(cls, obj: JSONObject, item: Callable[[JSONObject], T]) -> "Page[T]":
        return cls(data=[item(x) for x in obj.get("data") or []], next_cursor=obj.get("next_cursor"))


# --- catalogue --------------------------------------------------------------------------


@dataclass
class ProductListItem:
    """A product as lists show it: exactly the four fields of the specification.

    ``price`` is the lowest tier price, in the product's own currency (not given here).
    """

    id: str
    title: str
    price: Decimal
    seller: str

    @classmethod
    def from_json(cls, obj: JSONObject) -> "ProductListItem":
        return cls(id=obj.get("id"), title=obj.get("title"), price=to_decimal(obj.get("price")), seller=obj.get("seller"))


@dataclass
class Tier:
    """A licence tier of a product; ``licence`` is the seller's terms as a JSON object."""

    id: str
    name: str
    description: str
    price: Decimal
    currency: str
    licence: Dict[str, Any]

    @classmethod
    def from_json(cls, obj: JSONObject) -> "Tier":
        return cls(
            id=obj.get("id"),
            name=obj.get("name"),
            description=obj.get("description"),
            price=to_decimal(obj.get("price")),
            currency=obj.get("currency"),
            licence=obj.get("licence") or {},
        )


@dataclass
class Rating:
    """Mean of the product's reviews rounded to two decimals (``None`` when ``count`` is 0)."""

    average: Optional[Decimal]
    count: int

    @classmethod
    def from_json(cls, obj: Optional[JSONObject]) -> "Rating":
        obj = obj or {}
        return cls(average=to_decimal(obj.get("average")), count=obj.get("count", 0))


@dataclass
class Product:
    """One product with its licence tiers (GET /v1/products/:id)."""

    id: str
    title: str
    description: str
    category: str
    price: Decimal
    currency: str
    seller: str
    tiers: List[Tier]
    rating: Rating
    created_at: Optional[_dt.datetime]
    updated_at: Optional[_dt.datetime]
    rate_limit: Optional[RateLimit] = _meta()
    request_id: Optional[str] = _meta()

    @classmethod
    def from_json(cls, obj: JSONObject) -> "Product":
        return cls(
            id=obj.get("id"),
            title=obj.get("title"),
            description=obj.get("description"),
            category=obj.get("category"),
            price=to_decimal(obj.get("price")),
            currency=obj.get("currency"),
            seller=obj.get("seller"),
            tiers=[Tier.from_json(t) for t in obj.get("tiers") or []],
            rating=Rating.from_json(obj.get("rating")),
            created_at=to_datetime(obj.get("created_at")),
            updated_at=to_datetime(obj.get("updated_at")),
        )


@dataclass
class Seller:
    """A seller's profile and one page of its published catalogue (GET /v1/sellers/:id)."""

    id: str
    name: str
    bio: Optional[str]
    website: Optional[str]
    created_at: Optional[_dt.datetime]
    product_count: int
    products: Page[ProductListItem]
    rate_limit: Optional[RateLimit] = _meta()
    request_id: Optional[str] = _meta()

    @classmethod
    def from_json(cls, obj: JSONObject) -> "Seller":
        return cls(
            id=obj.get("id"),
            name=obj.get("name"),
            bio=obj.get("bio"),
            website=obj.get("website"),
            created_at=to_datetime(obj.get("created_at")),
            product_count=obj.get("product_count", 0),
            products=Page.from_json(obj.get("products") or {}, ProductListItem.from_json),
        )


# --- orders and downloads ---------------------------------------------------------------


@dataclass
class OrderItem:
    """A line of an order as it was at purchase (title, tier name and price are copies)."""

    product: str
    title: str
    tier: str
    tier_name: str
    price: Decimal

    @classmethod
    def from_json(cls, obj: JSONObject) -> "OrderItem":
        return cls(
            product=obj.get("product"),
            title=obj.get("title"),
            tier=obj.get("tier"),
            tier_name=obj.get("tier_name"),
            price=to_decimal(obj.get("price")),
        )


@dataclass
class Download:
    """A file of an order. ``url``/``expires_at`` are ``None`` for a refunded order."""

    id: str
    product: str
    filename: str
    size_bytes: int
    url: Optional[str]
    expires_at: Optional[_dt.datetime]

    @classmethod
    def from_json(cls, obj: JSONObject) -> "Download":
        return cls(
            id=obj.get("id"),
            product=obj.get("product"),
            filename=obj.get("filename"),
            size_bytes=obj.get("size_bytes"),
            url=obj.get("url"),
            expires_at=to_datetime(obj.get("expires_at")),
        )


@dataclass
class Order:
    """One of the caller's orders (``status`` is ``paid`` or ``refunded``), money in ``currency``."""

    id: str
    status: str
    created_at: Optional[_dt.datetime]
    currency: str
    total: Decimal
    items: List[OrderItem]
    downloads: List[Download]

    @classmethod
    def from_json(cls, obj: JSONObject) -> "Order":
        return cls(
            id=obj.get("id"),
            status=obj.get("status"),
            created_at=to_datetime(obj.get("created_at")),
            currency=obj.get("currency"),
            total=to_decimal(obj.get("total")),
            items=[OrderItem.from_json(i) for i in obj.get("items") or []],
            downloads=[Download.from_json(d) for d in obj.get("downloads") or []],
        )


@dataclass
class DownloadLink:
    """A freshly minted download link (POST /v1/downloads/:id/link)."""

    object: str
    download: str
    url: str
    expires_at: Optional[_dt.datetime]
    rate_limit: Optional[RateLimit] = _meta()
    request_id: Optional[str] = _meta()

    @classmethod
    def from_json(cls, obj: JSONObject) -> "DownloadLink":
        return cls(
            object=obj.get("object"),
            download=obj.get("download"),
            url=obj.get("url"),
            expires_at=to_datetime(obj.get("expires_at")),
        )


# --- webhooks ---------------------------------------------------------------------------


@dataclass
class WebhookSubscription:
    """A webhook subscription (POST /v1/webhooks, GET /v1/webhooks, GET and POST
    /v1/webhooks/:id, POST /v1/webhooks/:id/rotate_secret).

    ``status`` is ``enabled`` or ``disabled``; ``updated_at`` is the time of the last change
    (``created_at`` in the answer of a creation).

    ``secret`` (``whsec_...``) is shown by the API only in the answer of a creation or of a
    rotation (``None`` everywhere else): store it, it is what :func:`market.verify_webhook`
    needs. It is left out of ``repr()``.
    """

    id: str
    object: str
    url: str
    events: List[str]
    description: str
    status: str
    livemode: bool
    secret: Optional[str] = field(default=None, repr=False)
    created_at: Optional[_dt.datetime] = None
    updated_at: Optional[_dt.datetime] = None
    rate_limit: Optional[RateLimit] = _meta()
    request_id: Optional[str] = _meta()

    @classmethod
    def from_json(cls, obj: JSONObject) -> "WebhookSubscription":
        return cls(
            id=obj.get("id"),
            object=obj.get("object"),
            url=obj.get("url"),
            events=list(obj.get("events") or []),
            description=obj.get("description"),
            status=obj.get("status"),
            livemode=obj.get("livemode"),
            secret=obj.get("secret"),
            created_at=to_datetime(obj.get("created_at")),
            updated_at=to_datetime(obj.get("updated_at")),
        )


@dataclass
class DeletedWebhookSubscription:
    """The answer of DELETE /v1/webhooks/:id: ``id``, ``object`` (``webhook_subscription``)
    and ``deleted`` (``True``)."""

    id: str
    object: str
    deleted: bool
    rate_limit: Optional[RateLimit] = _meta()
    request_id: Optional[str] = _meta()

    @classmethod
    def from_json(cls, obj: JSONObject) -> "DeletedWebhookSubscription":
        return cls(id=obj.get("id"), object=obj.get("object"), deleted=obj.get("deleted"))


@dataclass
class Event:
    """An event: what a webhook delivery carries (:func:`market.verify_webhook`), what
    ``webhooks.test`` queued, and what ``events.list`` and ``events.all`` read back.

    ``type`` is ``sale.completed``, ``sale.refunded``, ``review.created``, ``payout.sent`` or
    ``webhook.test``; ``data`` is the event's object as a dict (its ``amount``, when
    present, a Decimal): sales ``{order, product, tier, amount, currency}``, reviews
    ``{review, product, rating, body}``, payouts ``{payout, amount, currency}``, test
    events ``{subscription}``. A type this client does not know keeps its ``data`` as
    the API sent it. ``WebhookEvent`` is another name of this class.
    """

    id: str
    type: str
    created_at: Optional[_dt.datetime]
    livemode: bool
    data: Dict[str, Any]
    rate_limit: Optional[RateLimit] = _meta()
    request_id: Optional[str] = _meta()

    @staticmethod
    def _fields(obj: JSONObject) -> Dict[str, Any]:
        data = dict(obj.get("data") or {})
        if "amount" in data:
            data["amount"] = to_decimal(data["amount"])
        return {
            "id": obj.get("id"),
            "type": obj.get("type"),
            "created_at": to_datetime(obj.get("created_at")),
            "livemode": obj.get("livemode"),
            "data": data,
        }

    @classmethod
    def from_json(cls, obj: JSONObject) -> "Event":
        return cls(**cls._fields(obj))


#: The earlier name of :class:`Event` (what ``verify_webhook`` returns).
WebhookEvent = Event


@dataclass
class EventDelivery:
    """One delivery of an event, to one subscription (GET /v1/events/:id).

    ``status`` is ``pending``, ``delivered``, ``failed`` or ``endpoint_deleted`` (its
    subscription was deleted before it was sent). ``last_attempt_at``: when the last attempt
    began; ``last_status``: the HTTP status that attempt got; ``last_error``: why it failed
    when no status says it (a timeout, a TLS error, ``subscription disabled``); each
    ``None`` when it does not apply.
    """

    subscription: str
    status: str
    attempts: int
    last_attempt_at: Optional[_dt.datetime]
    last_status: Optional[int]
    last_error: Optional[str]

    @classmethod
    def from_json(cls, obj: JSONObject) -> "EventDelivery":
        return cls(
            subscription=obj.get("subscription"),
            status=obj.get("status"),
            attempts=obj.get("attempts", 0),
            last_attempt_at=to_datetime(obj.get("last_attempt_at")),
            last_status=obj.get("last_status"),
            last_error=obj.get("last_error"),
        )


@dataclass
class EventDetail(Event):
    """One event with its ``deliveries`` (GET /v1/events/:id), one per subscription it was
    queued for, oldest first."""

    deliveries: List[EventDelivery] = field(default_factory=list)

    @classmethod
    def from_json(cls, obj: JSONObject) -> "EventDetail":
        return cls(
            **cls._fields(obj),
            deliveries=[EventDelivery.from_json(d) for d in obj.get("deliveries") or []],
        )
