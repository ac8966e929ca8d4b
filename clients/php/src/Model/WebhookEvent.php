<?php

declare(strict_types=1);

namespace Market\Model;

use DateTimeImmutable;
use Market\Internal\Data;

/**
 * A verified webhook event (what Webhook::verify() returns).
 *
 * $data by type:
 * - sale.completed, sale.refunded: order, product, tier, amount, currency
 * - review.created: review, product, rating (int), body
 * - payout.sent: payout, amount, currency
 * - webhook.test: subscription (the id of the subscription tested)
 * "amount" is a decimal string exactly as sent ("19.99", "1200"); other numbers are
 * ints or floats. Another type keeps its data the same way, as a generic array.
 * The events API gives the same events as Market\Model\Event.
 */
final class WebhookEvent
{
    /**
     * @param array<string, mixed> $data
     */
    public function __construct(
        /** evt_...: the same on every retry; use it to drop duplicates. */
        public readonly string $id,
        public readonly string $type,
        public readonly DateTimeImmutable $createdAt,
        public readonly bool $livemode,
        public readonly array $data,
    ) {
    }

    /**
     * @internal
     * @param array<mixed> $a
     */
    public static function fromArray(array $a): self
    {
        return new self(
            Data::string($a, 'id'),
            Data::string($a, 'type'),
            Data::time($a, 'created_at'),
            Data::bool($a, 'livemode'),
            Data::eventData($a),
        );
    }
}
