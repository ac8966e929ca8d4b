<?php

declare(strict_types=1);

namespace Market\Service;

use Generator;
use Market\Internal\Query;
use Market\Internal\Listing;
use Market\Internal\Requestor;
use Market\MarketException;
use Market\Model\Product;
use Market\Model\ProductSummary;
use Market\Page;

/**
 * The catalogue: GET /v1/products and GET /v1/products/:id (scope products:read).
 */
final class Products
{
    use Listing;

    /** @internal */
    public function __construct(private readonly Requestor $requestor)
    {
    }

    /**
     * One page of published products.
     *
     * Parameters (all optional; null values are left out):
     * - category:  category slug, exact
     * - q:         full-text search of title and description (1..200 characters)
     * - seller:    seller handle, exact
     * - min_price, max_price: inclusive bounds on the lowest tier price, decimal >= 0
     *              (a string such as "19.99", or an int or float)
     * - sort:      "relevance" (default with q), "newest" (default otherwise),
     *              "price_asc", "price_desc"
     * - limit:     1..100, default 20
     * - cursor:    nextCursor of the previous page
     *
     * @param array{category?: string, q?: string, seller?: string, min_price?: string|int|float, max_price?: string|int|float, sort?: string, limit?: int, cursor?: string} $params
     * @return Page<ProductSummary>
     * @throws MarketException
     */
    public function list(array $params = []): Page
    {
        return $this->listPage('/v1/products', $params, [ProductSummary::class, 'fromArray']);
    }

    /**
     * Every product matching $params (the parameters of list(), limit being the page
     * size), page after page. Pages are fetched lazily, when the loop gets to them.
     *
     * @param array{category?: string, q?: string, seller?: string, min_price?: string|int|float, max_price?: string|int|float, sort?: string, limit?: int, cursor?: string} $params
     * @return Generator<int, ProductSummary>
     * @throws MarketException
     */
    public function all(array $params = []): Generator
    {
        return $this->listAll($params);
    }

    /**
     * One published product with its tiers; NotFoundException when the key cannot see it.
     *
     * @throws MarketException
     */
    public function get(string $id): Product
    {
        return $this->requestor->get('/v1/products/' . Query::segment('product id', $id))
            ->to([Product::class, 'fromArray']);
    }
}
