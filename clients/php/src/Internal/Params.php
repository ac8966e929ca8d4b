<?php

declare(strict_types=1);

namespace Market\Internal;

/**
 * The parameters of a changing request (POST, DELETE).
 *
 * @internal
 */
final class Params
{
    /**
     * Splits $params into the JSON body (the parameters but idempotency_key, null values
     * left out) and the Idempotency-Key (null when absent: the client then makes one).
     *
     * @param array<string, mixed> $params
     * @return array{0: array<string, mixed>, 1: ?string}
     */
    public static function change(array $params): array
    {
        $key = $params['idempotency_key'] ?? null;
        unset($params['idempotency_key']);
        return [array_filter($params, static fn ($v) => $v !== null), $key];
    }
}
