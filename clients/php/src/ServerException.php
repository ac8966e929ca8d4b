<?php

declare(strict_types=1);

namespace Market;

/**
 * HTTP 5xx api_error: internal_error (500), service_unavailable (503, 502 and 504 from the gateway).
 */
class ServerException extends MarketException
{
}
