<?php

declare(strict_types=1);

namespace Market\Model;

use DateTimeImmutable;
use Market\Internal\Data;
use Market\RateLimit;
use Market\ResponseInfo;

/**
 * A webhook subscription: what webhooks->create(), list(), all(), get(), update() and
 * rotateSecret() give.
 */
final class WebhookSubscription
{
    /**
     * @param list<string> $events
     */
    public function __construct(
        /** we_... */
        public readonly string $id,
        /** "webhook_subscription". */
        public readonly string $object,
        /** Normalised: scheme and host lower-cased. */
        public readonly string $url,
        /** Kinds in canonical order: sale.completed, sale.refunded, review.created, payout.sent. */
        public readonly array $events,
        public readonly string $description,
        /** "enabled" or "disabled" (a disabled subscription receives nothing). */
        public readonly string $status,
        public readonly bool $livemode,
        /**
         * whsec_...: only in the answers of create() and rotateSecret() (and their
         * idempotent replays), null everywhere else. Store it to verify deliveries.
         */
        public readonly ?string $secret,
        public readonly DateTimeImmutable $createdAt,
        /** The time of the last change (null only if the answer did not carry it). */
        public readonly ?DateTimeImmutable $updatedAt = null,
        public readonly ?RateLimit $rateLimit = null,
        public readonly ?string $requestId = null,
        /** True when the API replayed the answer to an earlier request with the same Idempotency-Key. */
        public readonly bool $idempotentReplayed = false,
    ) {
    }

    /**
     * @internal
     * @param array<mixed> $a
     */
    public static function fromArray(array $a, ?ResponseInfo $info = null): self
    {
        return new self(
            Data::string($a, 'id'),
            Data::string($a, 'object'),
            Data::string($a, 'url'),
            Data::stringList($a, 'events'),
            Data::string($a, 'description'),
            Data::string($a, 'status'),
            Data::bool($a, 'livemode'),
            Data::nullableString($a, 'secret'),
            Data::time($a, 'created_at'),
            Data::nullableTime($a, 'updated_at'),
            $info?->rateLimit,
            $info?->requestId,
            $info?->idempotentReplayed() ?? false,
        );
    }
}
