<?php

declare(strict_types=1);

namespace Market;

/**
 * HTTP 429 rate_limit_error: too many requests in this minute (rate_limited); getRetryAfter() says how long to wait. Thrown once max_retries retries are spent.
 */
class RateLimitException extends MarketException
{
}
