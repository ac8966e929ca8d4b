<?php

declare(strict_types=1);

namespace Market\Internal;

use Generator;
use Market\MarketException;
use Market\Page;

/**
 * What the services over a listing share: one page (GET $path with the parameters as the
 * query) and every item of every page, fetched lazily. The service has $requestor and a
 * public list(array $params = []): Page.
 *
 * @internal
 */
trait Listing
{
    /**
     * One page of the listing at $path, each item made by $make.
     *
     * @template U
     * @param array<string, mixed> $params
     * @param callable(array<mixed>): U $make
     * @return Page<U>
     * @throws MarketException
     */
    private function listPage(string $path, array $params, callable $make): Page
    {
        return $this->requestor->get($path, $params)
            ->to(static fn (array $a, $info) => Page::fromArray($a, $make, $info));
    }

    /**
     * Every item of the pages list() answers for $params, page after page: each page is
     * fetched when the loop gets to it.
     *
     * @param array<string, mixed> $params
     * @return Generator<int, mixed>
     * @throws MarketException
     */
    private function listAll(array $params): Generator
    {
        do {
            $page = $this->list($params);
            foreach ($page->data as $item) {
                yield $item; // not "yield from": keys must run on across pages
            }
            $params['cursor'] = $page->nextCursor;
        } while ($page->nextCursor !== null);
    }
}
