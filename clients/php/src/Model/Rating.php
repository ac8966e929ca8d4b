<?php

declare(strict_types=1);

namespace Market\Model;

use Market\Internal\Data;

/**
 * The reviews of a product in the key's mode.
 */
final class Rating
{
    public function __construct(
        /** Mean rating rounded to two decimals; null when there is no review. */
        public readonly ?float $average,
        public readonly int $count,
    ) {
    }

    /**
     * @internal
     * @param array<mixed> $a
     */
    public static function fromArray(array $a): self
    {
        return new self(Data::nullableFloat($a, 'average'), Data::int($a, 'count'));
    }
}
