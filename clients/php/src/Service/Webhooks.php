<?php

declare(strict_types=1);

namespace Market\Service;

use Generator;
use Market\Internal\Listing;
use Market\Internal\Params;
use Market\Internal\Query;
use Market\Internal\Requestor;
use Market\MarketException;
use Market\Model\DeletedWebhookSubscription;
use Market\Model\Event;
use Market\Model\WebhookSubscription;
use Market\Page;

/**
 * Webhook subscriptions: POST /v1/webhooks, GET /v1/webhooks, GET, POST and DELETE
 * /v1/webhooks/:id, POST /v1/webhooks/:id/rotate_secret and POST /v1/webhooks/:id/test.
 * Reading needs the scope webhooks:read, the rest webhooks:write. Every call sees only the
 * key's account and mode: another subscription is NotFoundException (404
 * resource_missing).
 *
 * create() (POST /v1/webhooks) is a route of the specification and works on every
 * server. The other calls use routes of the API's extension webhook-management, which a
 * server has only when its operator sets MARKET_API_EXTENSIONS=webhook-management (off by
 * default). Without it they throw the client's usual exceptions, never retried:
 * NotFoundException (getStatus() 404, getErrorCode() "route_not_found") for get(),
 * update(), delete(), rotateSecret() and test(); InvalidRequestException (405,
 * "method_not_allowed", header Allow: POST) for list() and all(), whose path exists for
 * create().
 */
final class Webhooks
{
    use Listing;

    /** @internal */
    public function __construct(private readonly Requestor $requestor)
    {
    }

    /**
     * Subscribes an HTTPS endpoint to events.
     *
     * Parameters:
     * - url:             required, an absolute https:// URL
     * - events:          optional list of kinds ("sale.completed", "sale.refunded",
     *                    "review.created", "payout.sent"); default all four
     * - description:     optional, up to 500 characters
     * - idempotency_key: sent as Idempotency-Key; when absent the client makes one, so
     *                    that a retry cannot create two subscriptions
     *
     * The answer's $secret (whsec_...) is shown only now: store it, Webhook::verify()
     * needs it. Works with or without the server's extension webhook-management.
     *
     * @param array{url: string, events?: list<string>, description?: string, idempotency_key?: string} $params
     * @throws MarketException
     */
    public function create(array $params): WebhookSubscription
    {
        [$body, $key] = Params::change($params);
        return $this->requestor->post('/v1/webhooks', $body, $key)
            ->to([WebhookSubscription::class, 'fromArray']);
    }

    /**
     * One page of the account's subscriptions in the key's mode, newest first (never a
     * deleted one; never a secret).
     *
     * Parameters (optional): limit (1..100, default 20), cursor (nextCursor of the
     * previous page).
     *
     * Needs the server's extension webhook-management (MARKET_API_EXTENSIONS); without
     * it InvalidRequestException (405, error code method_not_allowed, Allow: POST).
     *
     * @param array{limit?: int, cursor?: string} $params
     * @return Page<WebhookSubscription>
     * @throws MarketException
     */
    public function list(array $params = []): Page
    {
        return $this->listPage('/v1/webhooks', $params, [WebhookSubscription::class, 'fromArray']);
    }

    /**
     * Every subscription, page after page (limit being the page size), fetched lazily.
     * Needs the extension webhook-management; without it the first page throws
     * InvalidRequestException (405, method_not_allowed).
     *
     * @param array{limit?: int, cursor?: string} $params
     * @return Generator<int, WebhookSubscription>
     * @throws MarketException
     */
    public function all(array $params = []): Generator
    {
        return $this->listAll($params);
    }

    /**
     * One subscription (without its secret); NotFoundException when the key cannot see it
     * (resource_missing).
     *
     * Needs the server's extension webhook-management (MARKET_API_EXTENSIONS); without
     * it NotFoundException (404, error code route_not_found).
     *
     * @throws MarketException
     */
    public function get(string $id): WebhookSubscription
    {
        return $this->requestor->get('/v1/webhooks/' . Query::segment('webhook subscription id', $id))
            ->to([WebhookSubscription::class, 'fromArray']);
    }

    /**
     * Changes a subscription; a field not given (or null) keeps its value, and no field
     * at all changes nothing (the body is then {}).
     *
     * Parameters (all optional):
     * - url:             a new https:// URL (checked again as at creation)
     * - events:          a new non-empty list of kinds
     * - description:     up to 500 characters
     * - disabled:        true disables it (it then receives nothing), false enables it
     * - idempotency_key: sent as Idempotency-Key; when absent the client makes one, the
     *                    same on every retry of this call
     *
     * Needs the server's extension webhook-management (MARKET_API_EXTENSIONS); without
     * it NotFoundException (404, error code route_not_found).
     *
     * @param array{url?: string, events?: list<string>, description?: string, disabled?: bool, idempotency_key?: string} $params
     * @throws MarketException
     */
    public function update(string $id, array $params = []): WebhookSubscription
    {
        $path = '/v1/webhooks/' . Query::segment('webhook subscription id', $id);
        [$body, $key] = Params::change($params);
        return $this->requestor->post($path, $body, $key)
            ->to([WebhookSubscription::class, 'fromArray']);
    }

    /**
     * Deletes a subscription: nothing is sent to it any more, and its pending deliveries
     * end as "endpoint_deleted". A second delete is NotFoundException, but a retry of
     * this call (the same Idempotency-Key) gets the first answer again.
     *
     * Options:
     * - idempotency_key: sent as Idempotency-Key; when absent the client makes one
     *
     * Needs the server's extension webhook-management (MARKET_API_EXTENSIONS); without
     * it NotFoundException (404, error code route_not_found).
     *
     * @param array{idempotency_key?: string} $params
     * @throws MarketException
     */
    public function delete(string $id, array $params = []): DeletedWebhookSubscription
    {
        $path = '/v1/webhooks/' . Query::segment('webhook subscription id', $id);
        [$body, $key] = Params::change($params);
        return $this->requestor->delete($path, $body === [] ? null : $body, $key)
            ->to([DeletedWebhookSubscription::class, 'fromArray']);
    }

    /**
     * A new signing secret, shown only in this answer ($secret, whsec_...). The secret
     * it replaces keeps signing beside it for expire_old_in seconds, so that every
     * delivery meanwhile verifies with either.
     *
     * Options:
     * - expire_old_in:   seconds, an int 0..604800 (default: the server's, 24 h); 0 ends
     *                    the old secret at once (a leaked secret)
     * - idempotency_key: sent as Idempotency-Key; when absent the client makes one, so a
     *                    retry shows the same new secret instead of making another
     *
     * Needs the server's extension webhook-management (MARKET_API_EXTENSIONS); without
     * it NotFoundException (404, error code route_not_found).
     *
     * @param array{expire_old_in?: int, idempotency_key?: string} $params
     * @throws MarketException
     */
    public function rotateSecret(string $id, array $params = []): WebhookSubscription
    {
        $path = '/v1/webhooks/' . Query::segment('webhook subscription id', $id) . '/rotate_secret';
        [$body, $key] = Params::change($params);
        return $this->requestor->post($path, $body === [] ? null : $body, $key)
            ->to([WebhookSubscription::class, 'fromArray']);
    }

    /**
     * Queues a webhook.test event for this subscription alone (whatever kinds it asked
     * for) and gives that event, exactly the payload that will be delivered; its data is
     * ['subscription' => $id].
     *
     * Options:
     * - idempotency_key: sent as Idempotency-Key; when absent the client makes one, so a
     *                    retry queues nothing more
     *
     * Needs the server's extension webhook-management (MARKET_API_EXTENSIONS); without
     * it NotFoundException (404, error code route_not_found).
     *
     * @param array{idempotency_key?: string} $params
     * @throws MarketException
     */
    public function test(string $id, array $params = []): Event
    {
        $path = '/v1/webhooks/' . Query::segment('webhook subscription id', $id) . '/test';
        [$body, $key] = Params::change($params);
        return $this->requestor->post($path, $body === [] ? null : $body, $key)
            ->to([Event::class, 'fromArray']);
    }
}
