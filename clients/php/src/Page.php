<?php

declare(strict_types=1);

namespace Market;

use ArrayIterator;
use Countable;
use IteratorAggregate;
use Market\Internal\Data;
use Traversable;

/**
 * One page of a list: the items, the cursor of the next page (null on the last page),
 * and the rate-limit figures of the answer. Iterate over it (foreach) or count() it.
 *
 * @template T
 * @implements IteratorAggregate<int, T>
 */
final class Page implements IteratorAggregate, Countable
{
    /**
     * @param list<T> $data
     */
    public function __construct(
        public readonly array $data,
        /** Pass it back as "cursor" for the next page; null on the last page. */
        public readonly ?string $nextCursor,
        public readonly ?RateLimit $rateLimit = null,
        public readonly ?string $requestId = null,
    ) {
    }

    public function hasMore(): bool
    {
        return $this->nextCursor !== null;
    }

    /** @return ArrayIterator<int, T> */
    public function getIterator(): Traversable
    {
        return new ArrayIterator($this->data);
    }

    public function count(): int
    {
        return count($this->data);
    }

    /**
     * @internal
     * @template U
     * @param array<mixed> $a the list envelope {"data": [...], "next_cursor": ...}
     * @param callable(array<mixed>): U $make
     * @return Page<U>
     */
    public static function fromArray(array $a, callable $make, ?ResponseInfo $info = null): self
    {
        if (!array_key_exists('next_cursor', $a)) {
            throw new \UnexpectedValueException('field "next_cursor" is missing');
        }
        return new self(
            Data::listOf($a, 'data', $make),
            Data::nullableString($a, 'next_cursor'),
            $info?->rateLimit,
            $info?->requestId,
        );
    }
}
