<?php

declare(strict_types=1);

namespace Market\Service;

use Generator;
use Market\Internal\Listing;
use Market\Internal\Requestor;
use Market\MarketException;
use Market\Model\Order;
use Market\Page;

/**
 * The caller's own orders: GET /v1/orders (scope orders:read).
 */
final class Orders
{
    use Listing;

    /** @internal */
    public function __construct(private readonly Requestor $requestor)
    {
    }

    /**
     * One page of the orders the key's account bought, newest first, with their
     * download links.
     *
     * Parameters (optional): status ("paid" or "refunded"; both when absent), limit
     * (1..100, default 20), cursor (nextCursor of the previous page).
     *
     * @param array{status?: string, limit?: int, cursor?: string} $params
     * @return Page<Order>
     * @throws MarketException
     */
    public function list(array $params = []): Page
    {
        return $this->listPage('/v1/orders', $params, [Order::class, 'fromArray']);
    }

    /**
     * Every order matching $params, page after page, fetched lazily.
     *
     * @param array{status?: string, limit?: int, cursor?: string} $params
     * @return Generator<int, Order>
     * @throws MarketException
     */
    public function all(array $params = []): Generator
    {
        return $this->listAll($params);
    }
}
