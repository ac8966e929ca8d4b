<?php

declare(strict_types=1);

namespace Market\Model;

use Market\Internal\Data;
use Market\RateLimit;
use Market\ResponseInfo;

/**
 * The answer to webhooks->delete() (DELETE /v1/webhooks/:id).
 */
final class DeletedWebhookSubscription
{
    public function __construct(
        /** we_...: the subscription deleted. */
        public readonly string $id,
        /** "webhook_subscription". */
        public readonly string $object,
        /** Always true. */
        public readonly bool $deleted,
        public readonly ?RateLimit $rateLimit = null,
        public readonly ?string $requestId = null,
        /** True when the API replayed the answer to an earlier request with the same Idempotency-Key. */
        public readonly bool $idempotentReplayed = false,
    ) {
    }

    /**
     * @internal
     * @param array<mixed> $a
     */
    public static function fromArray(array $a, ?ResponseInfo $info = null): self
    {
        return new self(
            Data::string($a, 'id'),
            Data::string($a, 'object'),
            Data::bool($a, 'deleted'),
            $info?->rateLimit,
            $info?->requestId,
            $info?->idempotentReplayed() ?? false,
        );
    }
}
