<?php

declare(strict_types=1);

namespace Market;

/**
 * HTTP 401 authentication_error: no, invalid (unknown, revoked) or expired API key (missing_api_key, invalid_api_key, api_key_expired).
 */
class AuthenticationException extends MarketException
{
}
