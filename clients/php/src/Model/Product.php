<?php

declare(strict_types=1);

namespace Market\Model;

use DateTimeImmutable;
use Market\Internal\Data;
use Market\RateLimit;
use Market\ResponseInfo;

/**
 * One product with its licence tiers (GET /v1/products/:id).
 */
final class Product
{
    /**
     * @param list<Tier> $tiers
     */
    public function __construct(
        public readonly string $id,
        public readonly string $title,
        public readonly string $description,
        public readonly string $category,
        /** Lowest tier price, a decimal string exactly as the API sent it. */
        public readonly string $price,
        public readonly string $currency,
        /** Handle of the seller. */
        public readonly string $seller,
        /** Ordered by price, then id. */
        public readonly array $tiers,
        public readonly Rating $rating,
        public readonly DateTimeImmutable $createdAt,
        public readonly DateTimeImmutable $updatedAt,
        /** Rate-limit figures of the answer that brought this product. */
        public readonly ?RateLimit $rateLimit = null,
        public readonly ?string $requestId = null,
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
            Data::string($a, 'title'),
            Data::string($a, 'description'),
            Data::string($a, 'category'),
            Data::money($a, 'price'),
            Data::string($a, 'currency'),
            Data::string($a, 'seller'),
            Data::listOf($a, 'tiers', [Tier::class, 'fromArray']),
            Rating::fromArray(Data::object($a, 'rating')),
            Data::time($a, 'created_at'),
            Data::time($a, 'updated_at'),
            $info?->rateLimit,
            $info?->requestId,
        );
    }
}
