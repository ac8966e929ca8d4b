<?php

declare(strict_types=1);

namespace Market\Model;

use Market\Internal\Data;

/**
 * A product as lists show it (GET /v1/products, a seller's catalogue): exactly the four
 * fields of the API's list item.
 */
final class ProductSummary
{
    public function __construct(
        public readonly string $id,
        public readonly string $title,
        /** Lowest tier price, a decimal string exactly as the API sent it ("19.99"). The list item carries no currency. */
        public readonly string $price,
        /** Handle of the seller. */
        public readonly string $seller,
    ) {
    }

    /**
     * @internal
     * @param array<mixed> $a
     */
    public static function fromArray(array $a): self
    {
        return new self(Data::string($a, 'id'), Data::string($a, 'title'), Data::money($a, 'price'), Data::string($a, 'seller'));
    }
}
