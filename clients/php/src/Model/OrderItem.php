<?php

declare(strict_types=1);

namespace Market\Model;

use Market\Internal\Data;

/**
 * A line of an order as it was at purchase (copies kept on the order, not today's catalogue).
 */
final class OrderItem
{
    public function __construct(
        /** Product id. */
        public readonly string $product,
        public readonly string $title,
        /** Tier id. */
        public readonly string $tier,
        public readonly string $tierName,
        /** What was paid, a decimal string in the order's currency. */
        public readonly string $price,
    ) {
    }

    /**
     * @internal
     * @param array<mixed> $a
     */
    public static function fromArray(array $a): self
    {
        return new self(
            Data::string($a, 'product'),
            Data::string($a, 'title'),
            Data::string($a, 'tier'),
            Data::string($a, 'tier_name'),
            Data::money($a, 'price'),
        );
    }
}
