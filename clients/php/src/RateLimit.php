<?php

declare(strict_types=1);

namespace Market;

/**
 * The rate-limit figures of one answer of the API (headers X-RateLimit-Limit,
 * X-RateLimit-Remaining and X-RateLimit-Reset). Every authenticated answer carries them,
 * errors included.
 */
final class RateLimit
{
    public function __construct(
        /** Requests allowed per window (X-RateLimit-Limit). */
        public readonly int $limit,
        /** Requests left in this window after this one, never below 0 (X-RateLimit-Remaining). */
        public readonly int $remaining,
        /** Whole seconds until the window ends, 1..60 (X-RateLimit-Reset). */
        public readonly int $reset,
    ) {
    }

    /**
     * Reads the figures from response headers (names in lower case). Null when the
     * answer has none of them (an answer to a request without a valid key, for example).
     *
     * @param array<string, string> $headers
     */
    public static function fromHeaders(array $headers): ?self
    {
        $read = static function (string $name) use ($headers): ?int {
            $value = $headers[$name] ?? null;
            if ($value === null || preg_match('/^\s*(\d{1,18})\s*$/', $value, $m) !== 1) {
                return null;
            }
            return (int) $m[1];
        };
        $limit = $read('x-ratelimit-limit');
        $remaining = $read('x-ratelimit-remaining');
        $reset = $read('x-ratelimit-reset');
        if ($limit === null || $remaining === null || $reset === null) {
            return null;
        }
        return new self($limit, $remaining, $reset);
    }
}
