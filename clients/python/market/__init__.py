"""Python client of the market API (catalogue, orders, download links, webhooks, events).

    from market import Market, MarketError, verify_webhook

    m = Market("sk_test_...", base_url="https://api.example.com")
    for product in m.products.all(category="fonts"):
        print(product.id, product.price)

Standard library only. See README.md for every call.
"""

from ._client import Downloads, Events, Market, Orders, Products, Sellers, Webhooks
from ._http import RequestInfo
from ._errors import (
    APIConnectionError,
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    MarketError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    WebhookVerificationError,
)
from ._models import (
    DeletedWebhookSubscription,
    Download,
    DownloadLink,
    Event,
    EventDelivery,
    EventDetail,
    Order,
    OrderItem,
    Page,
    Product,
    ProductListItem,
    RateLimit,
    Rating,
    Seller,
    Tier,
    WebhookEvent,
    WebhookSubscription,
)
from ._version import __version__
from ._webhooks import verify_webhook

__all__ = [
    "Market",
    "verify_webhook",
    "MarketError",
    "APIConnectionError",
    "AuthenticationError",
    "ConflictError",
    "InvalidRequestError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "ServerError",
    "WebhookVerificationError",
    "DeletedWebhookSubscription",
    "Download",
    "DownloadLink",
    "Event",
    "EventDelivery",
    "EventDetail",
    "Order",
    "OrderItem",
    "Page",
    "Product",
    "ProductListItem",
    "RateLimit",
    "RequestInfo",
    "Rating",
    "Seller",
    "Tier",
    "WebhookEvent",
    "WebhookSubscription",
    "Products",
    "Sellers",
    "Orders",
    "Downloads",
    "Webhooks",
    "Events",
    "__version__",
]
