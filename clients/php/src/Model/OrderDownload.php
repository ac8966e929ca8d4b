<?php

declare(strict_types=1);

namespace Market\Model;

use DateTimeImmutable;
use Market\Internal\Data;

/**
 * A download of an order: one per file of each item's product.
 */
final class OrderDownload
{
    public function __construct(
        /** The download id (dl_...), for Downloads::createLink(). */
        public readonly string $id,
        /** Product id. */
        public readonly string $product,
        public readonly string $filename,
        public readonly int $sizeBytes,
        /** A working download link; null for a refunded order. */
        public readonly ?string $url,
        /** When $url stops working; null for a refunded order. */
        public readonly ?DateTimeImmutable $expiresAt,
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
            Data::string($a, 'product'),
            Data::string($a, 'filename'),
            Data::int($a, 'size_bytes'),
            Data::nullableString($a, 'url'),
            Data::nullableTime($a, 'expires_at'),
        );
    }
}
