<?php

declare(strict_types=1);

namespace Market\Model;

use DateTimeImmutable;
use Market\Internal\Data;
use Market\Internal\Json;
use Market\Internal\JsonNumber;

/**
 * A verified webhook event (what Webhook::verify() returns).
 *
 * $data by type:
 * - sale.completed, sale.refunded: order, product, tier, amount, currency
 * - review.created: review, product, rating (int), body
 * - payout.sent: payout, amount, currency
 * "amount" is a decimal string exactly as sent ("19.99", "1200"); other numbers are
 * ints or floats.
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
        $data = [];
        foreach (Data::object($a, 'data') as $key => $value) {
            $data[$key] = ($key === 'amount' && $value instanceof JsonNumber) ? $value->raw : Json::toNative($value);
        }
        return new self(
            Data::string($a, 'id'),
            Data::string($a, 'type'),
            Data::time($a, 'created_at'),
            Data::bool($a, 'livemode'),
            $data,
        );
    }
}
