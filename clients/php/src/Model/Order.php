<?php

declare(strict_types=1);

namespace Market\Model;

use DateTimeImmutable;
use Market\Internal\Data;

/**
 * One of the caller's orders (GET /v1/orders).
 */
final class Order
{
    /**
     * @param list<OrderItem> $items
     * @param list<OrderDownload> $downloads
     */
    public function __construct(
        public readonly string $id,
        /** "paid" or "refunded". */
        public readonly string $status,
        public readonly DateTimeImmutable $createdAt,
        public readonly string $currency,
        /** Sum of the items, a decimal string exactly as the API sent it. */
        public readonly string $total,
        public readonly array $items,
        public readonly array $downloads,
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
            Data::string($a, 'status'),
            Data::time($a, 'created_at'),
            Data::string($a, 'currency'),
            Data::money($a, 'total'),
            Data::listOf($a, 'items', [OrderItem::class, 'fromArray']),
            Data::listOf($a, 'downloads', [OrderDownload::class, 'fromArray']),
        );
    }
}
