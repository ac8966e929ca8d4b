<?php

declare(strict_types=1);

namespace Market\Service;

use DateTimeInterface;
use Generator;
use Market\Internal\Query;
use Market\Internal\Listing;
use Market\Internal\Requestor;
use Market\MarketException;
use Market\Model\Event;
use Market\Page;

/**
 * The account's events, as delivered: GET /v1/events and GET /v1/events/:id (scope
 * webhooks:read), for the retention period (30 days by default). To catch up on
 * deliveries missed, and to see how an event's deliveries went.
 *
 * Both routes belong to the API's extension webhook-management, which a server has only
 * when its operator sets MARKET_API_EXTENSIONS=webhook-management (off by default).
 * Without it every call here throws NotFoundException (getStatus() 404, getErrorCode()
 * "route_not_found"), never retried.
 */
final class Events
{
    use Listing;

    /** @internal */
    public function __construct(private readonly Requestor $requestor)
    {
    }

    /**
     * One page of events in the key's mode, newest first.
     *
     * Parameters (all optional; null values are left out):
     * - type:        one event type: "sale.completed", "sale.refunded", "review.created",
     *                "payout.sent", "webhook.test" (the Event::* constants)
     * - created_gte: events created at or after it: a DateTimeInterface (sent as RFC 3339
     *                in UTC, "2026-11-26T10:04:05Z", with a fraction of a second only when
     *                it has one) or an RFC 3339 string, sent as it is
     * - created_lt:  events created before it, the same way
     * - limit:       1..100, default 20
     * - cursor:      nextCursor of the previous page (valid with the same filters only)
     *
     * Needs the server's extension webhook-management (MARKET_API_EXTENSIONS); without
     * it NotFoundException (404, error code route_not_found).
     *
     * @param array{type?: string, created_gte?: DateTimeInterface|string, created_lt?: DateTimeInterface|string, limit?: int, cursor?: string} $params
     * @return Page<Event>
     * @throws MarketException
     */
    public function list(array $params = []): Page
    {
        return $this->listPage('/v1/events', $params, [Event::class, 'fromArray']);
    }

    /**
     * Every event matching $params (the parameters of list(), limit being the page size),
     * newest first, page after page, fetched lazily. Needs the extension
     * webhook-management; without it the first page throws NotFoundException
     * (route_not_found).
     *
     * @param array{type?: string, created_gte?: DateTimeInterface|string, created_lt?: DateTimeInterface|string, limit?: int, cursor?: string} $params
     * @return Generator<int, Event>
     * @throws MarketException
     */
    public function all(array $params = []): Generator
    {
        return $this->listAll($params);
    }

    /**
     * One event with its deliveries ($event->deliveries, a list of EventDelivery, oldest
     * first); NotFoundException when the key cannot see it (or it was pruned):
     * resource_missing.
     *
     * Needs the server's extension webhook-management (MARKET_API_EXTENSIONS); without
     * it NotFoundException (404, error code route_not_found).
     *
     * @throws MarketException
     */
    public function get(string $id): Event
    {
        return $this->requestor->get('/v1/events/' . Query::segment('event id', $id))
            ->to([Event::class, 'fromArray']);
    }
}
