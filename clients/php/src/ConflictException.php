<?php

declare(strict_types=1);

namespace Market;

/**
 * HTTP 409: the download's order was refunded (order_refunded), or an Idempotency-Key was reused with another request (idempotency_conflict).
 */
class ConflictException extends MarketException
{
}
