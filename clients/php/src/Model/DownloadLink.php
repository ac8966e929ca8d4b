<?php

declare(strict_types=1);

namespace Market\Model;

use DateTimeImmutable;
use Market\Internal\Data;
use Market\RateLimit;
use Market\ResponseInfo;

/**
 * A freshly minted download link (POST /v1/downloads/:id/link).
 */
final class DownloadLink
{
    public function __construct(
        /** "download_link". */
        public readonly string $object,
        /** The download id. */
        public readonly string $download,
        /** The link; it needs no API key (the token in it is the credential). */
        public readonly string $url,
        public readonly DateTimeImmutable $expiresAt,
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
            Data::string($a, 'object'),
            Data::string($a, 'download'),
            Data::string($a, 'url'),
            Data::time($a, 'expires_at'),
            $info?->rateLimit,
            $info?->requestId,
            $info?->idempotentReplayed() ?? false,
        );
    }
}
