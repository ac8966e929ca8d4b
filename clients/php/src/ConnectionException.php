<?php

declare(strict_types=1);

namespace Market;

use Throwable;

/**
 * No complete answer arrived: the connection was refused or dropped, timed out, or TLS
 * failed. getStatus() is null. GET requests, and POST requests (which always carry an
 * Idempotency-Key), are retried up to max_retries times before this is thrown.
 */
class ConnectionException extends MarketException
{
    public function __construct(string $message, private readonly int $curlErrno = 0, ?Throwable $previous = null)
    {
        parent::__construct($message, previous: $previous);
    }

    /** libcurl's error number (CURLE_*), 0 when the failure did not come from curl. */
    public function getCurlErrno(): int
    {
        return $this->curlErrno;
    }
}
