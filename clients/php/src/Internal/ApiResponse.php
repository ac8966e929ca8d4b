<?php

declare(strict_types=1);

namespace Market\Internal;

use Market\MarketException;
use Market\ResponseInfo;
use UnexpectedValueException;

/**
 * A successful answer: its body decoded by Json::decode, and what the client saw of it.
 *
 * @internal
 */
final class ApiResponse
{
    public function __construct(
        public readonly mixed $data,
        public readonly ResponseInfo $info,
    ) {
    }

    /**
     * Builds a model from the body; an answer of another shape becomes a MarketException.
     *
     * @template T
     * @param callable(array<mixed>, ResponseInfo): T $make
     * @return T
     */
    public function to(callable $make): mixed
    {
        try {
            if (!is_array($this->data)) {
                throw new UnexpectedValueException('the body is not a JSON object');
            }
            return $make($this->data, $this->info);
        } catch (UnexpectedValueException $e) {
            throw new MarketException(
                'unexpected answer from the API: ' . $e->getMessage(),
                $this->info->status,
                requestId: $this->info->requestId,
                rateLimit: $this->info->rateLimit,
                headers: $this->info->headers,
                previous: $e,
            );
        }
    }
}
