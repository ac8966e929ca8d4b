<?php

declare(strict_types=1);

namespace Market\Internal;

use Closure;

/**
 * When to retry a request, and how long to wait first. Pure: no I/O, no clock unless
 * given one.
 *
 * The policy of docs/clients.md, the same in the four clients:
 *
 * - An answer 429 (rate limited) or 503 (service unavailable) is retried after its
 *   Retry-After (whole seconds or an HTTP date); without a usable Retry-After, after an
 *   exponential backoff. A Retry-After over MAX_RETRY_AFTER seconds is not waited for:
 *   the error is thrown at once. A 429 is safe to retry for any method (the API counts
 *   the rate limit before it runs a route); a 503 is answered when the database is out of
 *   reach, so nothing ran.
 * - A 502 or 504 (nginx: the worker pool is down or too slow; the request may have run)
 *   is retried the same way, but only when repeating is safe: GET/HEAD, or a request that
 *   carries an Idempotency-Key (every POST and DELETE of this client does).
 * - A network failure (no complete answer) is retried only for GET/HEAD and for requests
 *   that carry an Idempotency-Key, since a POST may have taken effect before the
 *   connection dropped, and only the key makes the API replay instead of acting twice.
 * - Any other answer is final.
 * - At most $maxRetries retries (so $maxRetries + 1 requests).
 *
 * @internal
 */
final class RetryPolicy
{
    public const RETRY_STATUSES = [429, 503];
    /** Retried only when repeating the request is safe (see delayAfterStatus). */
    public const RETRY_STATUSES_WHEN_REPEATABLE = [502, 504];
    public const MAX_RETRY_AFTER = 60;

    /** @var Closure(): float */
    private Closure $random;

    /**
     * @param (Closure(): float)|null $random returns a float in [0, 1) for the jitter
     */
    public function __construct(
        public readonly int $maxRetries = 2,
        public readonly float $baseDelay = 0.5,
        public readonly float $maxDelay = 8.0,
        ?Closure $random = null,
    ) {
        $this->random = $random ?? static fn (): float => mt_rand() / (mt_getrandmax() + 1);
    }

    /**
     * Seconds to wait before retrying after an answer with this status, or null when it
     * must not be retried.
     *
     * @param int $retriesDone retries already made for this call (0 after the first request)
     * @param bool $repeatable whether sending the request again cannot act twice (a GET or
     *        HEAD, or a request with an Idempotency-Key)
     */
    public function delayAfterStatus(int $retriesDone, int $status, ?string $retryAfter, ?int $now = null, bool $repeatable = true): ?float
    {
        if ($retriesDone >= $this->maxRetries) {
            return null;
        }
        if (!in_array($status, self::RETRY_STATUSES, true)
            && !($repeatable && in_array($status, self::RETRY_STATUSES_WHEN_REPEATABLE, true))) {
            return null;
        }
        $seconds = self::parseRetryAfter($retryAfter, $now);
        if ($seconds === null) {
            return $this->backoff($retriesDone);
        }
        if ($seconds > self::MAX_RETRY_AFTER) {
            return null;
        }
        return (float) $seconds;
    }

    /**
     * Seconds to wait before retrying after a network failure, or null when it must not
     * be retried.
     */
    public function delayAfterNetworkError(int $retriesDone, string $method, bool $hasIdempotencyKey): ?float
    {
        if ($retriesDone >= $this->maxRetries) {
            return null;
        }
        $method = strtoupper($method);
        if ($method !== 'GET' && $method !== 'HEAD' && !$hasIdempotencyKey) {
            return null;
        }
        return $this->backoff($retriesDone);
    }

    /** Exponential backoff with jitter: base * 2^n, capped, times a factor in [0.5, 1). */
    public function backoff(int $retriesDone): float
    {
        $delay = min($this->maxDelay, $this->baseDelay * (2 ** min($retriesDone, 30)));
        return $delay * (0.5 + 0.5 * ($this->random)());
    }

    /**
     * Retry-After as whole seconds from now (never negative), from its two forms:
     * delay-seconds ("7") or an HTTP date ("Wed, 21 Oct 2026 07:28:00 GMT"). Null when
     * absent or unreadable.
     */
    public static function parseRetryAfter(?string $value, ?int $now = null): ?int
    {
        if ($value === null) {
            return null;
        }
        $value = trim($value);
        if (preg_match('/^\d{1,10}$/', $value) === 1) {
            return (int) $value;
        }
        $date = \DateTimeImmutable::createFromFormat('D, d M Y H:i:s \G\M\T', $value, new \DateTimeZone('UTC'));
        if ($date === false) {
            return null;
        }
        return max(0, $date->getTimestamp() - ($now ?? time()));
    }
}
