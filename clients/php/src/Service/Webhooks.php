<?php

declare(strict_types=1);

namespace Market\Service;

use Market\Internal\Requestor;
use Market\MarketException;
use Market\Model\WebhookSubscription;

/**
 * Webhook subscriptions: POST /v1/webhooks (scope webhooks:write).
 */
final class Webhooks
{
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
     * needs it.
     *
     * @param array{url: string, events?: list<string>, description?: string, idempotency_key?: string} $params
     * @throws MarketException
     */
    public function create(array $params): WebhookSubscription
    {
        $key = $params['idempotency_key'] ?? null;
        unset($params['idempotency_key']);
        $body = array_filter($params, static fn ($v) => $v !== null);
        return $this->requestor->post('/v1/webhooks', $body, $key)
            ->to([WebhookSubscription::class, 'fromArray']);
    }
}
