<?php

declare(strict_types=1);

namespace Market\Model;

use DateTimeImmutable;
use Market\Internal\Data;
use Market\RateLimit;
use Market\ResponseInfo;

/**
 * A webhook subscription (POST /v1/webhooks).
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
        /** "enabled". */
        public readonly string $status,
        public readonly bool $livemode,
        /** whsec_...: shown in this answer only (and its idempotent replay). Store it to verify deliveries. */
        public readonly string $secret,
        public readonly DateTimeImmutable $createdAt,
        public readonly ?RateLimit $rateLimit = null,
        public readonly ?string $requestId = null,
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
            Data::string($a, 'secret'),
            Data::time($a, 'created_at'),
            $info?->rateLimit,
            $info?->requestId,
            $info?->idempotentReplayed() ?? false,
        );
    }
}
