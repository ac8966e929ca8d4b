<?php

declare(strict_types=1);

namespace Market\Model;

use DateTimeImmutable;
use Market\Internal\Data;

/**
 * One delivery of an event, to one subscription (in $event->deliveries of events->get()).
 */
final class EventDelivery
{
    public const PENDING = 'pending';
    public const DELIVERED = 'delivered';
    public const FAILED = 'failed';
    public const ENDPOINT_DELETED = 'endpoint_deleted';

    public function __construct(
        /** we_...: the subscription it is for. */
        public readonly string $subscription,
        /** "pending", "delivered", "failed" or "endpoint_deleted" (its subscription was deleted before it was sent). */
        public readonly string $status,
        /** Attempts made so far. */
        public readonly int $attempts,
        /** When the last attempt began; null before the first. */
        public readonly ?DateTimeImmutable $lastAttemptAt,
        /** The HTTP status of the last attempt; null when no answer came, or before the first. */
        public readonly ?int $lastStatus,
        /** Why the last attempt failed when no status says it (a timeout, a TLS error, "subscription disabled"); else null. */
        public readonly ?string $lastError,
    ) {
    }

    /**
     * @internal
     * @param array<mixed> $a
     */
    public static function fromArray(array $a): self
    {
        return new self(
            Data::string($a, 'subscription'),
            Data::string($a, 'status'),
            Data::int($a, 'attempts'),
            Data::nullableTime($a, 'last_attempt_at'),
            Data::nullableInt($a, 'last_status'),
            Data::nullableString($a, 'last_error'),
        );
    }
}
