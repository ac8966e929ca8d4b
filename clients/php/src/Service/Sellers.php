<?php

declare(strict_types=1);

namespace Market\Service;

use Market\Internal\Query;
use Market\Internal\Requestor;
use Market\MarketException;
use Market\Model\Seller;

/**
 * Seller profiles: GET /v1/sellers/:id (scope products:read).
 */
final class Sellers
{
    /** @internal */
    public function __construct(private readonly Requestor $requestor)
    {
    }

    /**
     * A seller's profile and one page of its published catalogue, newest first.
     *
     * Parameters (optional): limit (1..100, default 20) and cursor (the nextCursor of
     * $seller->products) page the catalogue.
     *
     * @param string $id the seller's handle
     * @param array{limit?: int, cursor?: string} $params
     * @throws MarketException
     */
    public function get(string $id, array $params = []): Seller
    {
        return $this->requestor->get('/v1/sellers/' . Query::segment('seller id', $id), $params)
            ->to([Seller::class, 'fromArray']);
    }
}
