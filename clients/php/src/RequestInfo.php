<?php

declare(strict_types=1);

namespace Market;

/**
 * What the "on_response" hook is told about one HTTP attempt, retries included
 * (docs/clients.md). It never holds the API key nor the Authorization header.
 */
final class RequestInfo
{
    public function __construct(
        public readonly string $method,
        /** The route's path with its query ("/v1/products?limit=2"), without the base URL. */
        public readonly string $path,
        /** The HTTP status, or null when no complete answer came (see $error). */
        public readonly ?int $status,
        /** Why no answer came: "timeout", or the connection error; null with a status. */
        public readonly ?string $error,
        public readonly float $durationMs,
        /** The X-Request-Id response header, or null. */
        public readonly ?string $requestId,
        /** 1 for the first attempt of a call, 2 for its first retry... */
        public readonly int $attempt,
    ) {
    }
}
