<?php

declare(strict_types=1);

namespace Market\Model;

use Market\Internal\Data;
use Market\Internal\Json;

/**
 * A licence tier of a product.
 */
final class Tier
{
    /**
     * @param array<string, mixed> $licence
     */
    public function __construct(
        public readonly string $id,
        public readonly string $name,
        public readonly string $description,
        /** Decimal string exactly as the API sent it ("19.99"). */
        public readonly string $price,
        /** ISO 4217 code. */
        public readonly string $currency,
        /** The licence terms as the seller recorded them (a JSON object, decoded to an array). */
        public readonly array $licence,
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
            Data::string($a, 'name'),
            Data::string($a, 'description'),
            Data::money($a, 'price'),
            Data::string($a, 'currency'),
            Json::toNative(Data::object($a, 'licence')),
        );
    }
}
