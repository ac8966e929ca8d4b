<?php

declare(strict_types=1);

namespace Market\Model;

use DateTimeImmutable;
use Market\Internal\Data;
use Market\RateLimit;
use Market\ResponseInfo;

/**
 * An event as the events API gives it (events->list(), all(), get()) and as
 * webhooks->test() answers it: exactly the payload that was (or will be) delivered, the
 * same $id as the webhook-id header.
 *
 * $data by type, as in Market\Model\WebhookEvent (what Webhook::verify() gives):
 * - sale.completed, sale.refunded: order, product, tier, amount, currency
 * - review.created: review, product, rating (int), body
 * - payout.sent: payout, amount, currency
 * - webhook.test: subscription
 * "amount" is a decimal string exactly as sent ("19.99", "1200"); other numbers are
 * ints or floats. A type this client does not know keeps its data the same way.
 */
final class Event
{
    public const SALE_COMPLETED = 'sale.completed';
    public const SALE_REFUNDED = 'sale.refunded';
    public const REVIEW_CREATED = 'review.created';
    public const PAYOUT_SENT = 'payout.sent';
    public const WEBHOOK_TEST = 'webhook.test';

    /**
     * @param array<string, mixed> $data
     * @param list<EventDelivery>|null $deliveries
     */
    public function __construct(
        /** evt_...: the same on every retry of its deliveries; use it to drop duplicates. */
        public readonly string $id,
        public readonly string $type,
        public readonly DateTimeImmutable $createdAt,
        public readonly bool $livemode,
        public readonly array $data,
        /**
         * events->get() only: one delivery per subscription the event was queued for,
         * oldest first ([] when none). Null in lists and in the answer of webhooks->test().
         */
        public readonly ?array $deliveries = null,
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
            Data::string($a, 'type'),
            Data::time($a, 'created_at'),
            Data::bool($a, 'livemode'),
            Data::eventData($a),
            array_key_exists('deliveries', $a) ? Data::listOf($a, 'deliveries', [EventDelivery::class, 'fromArray']) : null,
            $info?->rateLimit,
            $info?->requestId,
            $info?->idempotentReplayed() ?? false,
        );
    }
}
