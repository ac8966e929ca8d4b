<?php

declare(strict_types=1);

namespace Market;

/**
 * What the client saw of the last HTTP answer of a call: status, request id, rate-limit
 * figures and every header (names in lower case). See Client::lastResponse().
 */
final class ResponseInfo
{
    /**
     * @param array<string, string> $headers
     */
    public function __construct(
        public readonly int $status,
        public readonly ?string $requestId,
        public readonly ?RateLimit $rateLimit,
        public readonly array $headers,
        /** How many HTTP requests the call took (1 + retries). */
        public readonly int $attempts = 1,
    ) {
    }

    /** True when the API replayed the stored answer of an earlier request with the same Idempotency-Key. */
    public function idempotentReplayed(): bool
    {
        return strtolower($this->headers['idempotent-replayed'] ?? '') === 'true';
    }
}
