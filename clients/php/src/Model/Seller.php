<?php

declare(strict_types=1);

namespace Market\Model;

use DateTimeImmutable;
use Market\Internal\Data;
use Market\Page;
use Market\RateLimit;
use Market\ResponseInfo;

/**
 * A seller's profile and one page of its published catalogue (GET /v1/sellers/:id).
 */
final class Seller
{
    /**
     * @param Page<ProductSummary> $products
     */
    public function __construct(
        /** The seller's handle. */
        public readonly string $id,
        public readonly string $name,
        public readonly string $bio,
        public readonly ?string $website,
        public readonly DateTimeImmutable $createdAt,
        /** Published products in the key's mode. */
        public readonly int $productCount,
        /** Newest first; pass $products->nextCursor as "cursor" to Sellers::get() for the next page. */
        public readonly Page $products,
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
            Data::string($a, 'name'),
            Data::nullableString($a, 'bio') ?? '',
            Data::nullableString($a, 'website'),
            Data::time($a, 'created_at'),
            Data::int($a, 'product_count'),
            Page::fromArray(Data::object($a, 'products'), [ProductSummary::class, 'fromArray'], $info),
            $info?->rateLimit,
            $info?->requestId,
        );
    }
}
