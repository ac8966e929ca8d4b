<?php

declare(strict_types=1);

namespace Market\Internal;

use Market\AuthenticationException;
use Market\ConflictException;
use Market\Http\Response;
use Market\InvalidRequestException;
use Market\MarketException;
use Market\NotFoundException;
use Market\PermissionException;
use Market\RateLimit;
use Market\RateLimitException;
use Market\ServerException;

/**
 * Turns an error answer into the matching MarketException subclass.
 *
 * @internal
 */
final class ErrorFactory
{
    /** The exception class for an HTTP status. */
    public static function classFor(int $status): string
    {
        return match (true) {
            $status === 401 => AuthenticationException::class,
            $status === 403 => PermissionException::class,
            $status === 404 => NotFoundException::class,
            $status === 409 => ConflictException::class,
            $status === 429 => RateLimitException::class,
            $status >= 500 => ServerException::class,
            $status >= 400 => InvalidRequestException::class,
            default => MarketException::class,
        };
    }

    public static function fromResponse(Response $response): MarketException
    {
        $error = null;
        $decoded = json_decode($response->body, true);
        if (is_array($decoded) && isset($decoded['error']) && is_array($decoded['error'])) {
            $error = $decoded['error'];
        }
        $str = static fn (string $k): ?string => isset($error[$k]) && is_string($error[$k]) ? $error[$k] : null;

        $message = $str('message');
        if ($message === null) {
            $message = sprintf('the API answered HTTP %d without an error body', $response->status);
        }
        $class = self::classFor($response->status);
        return new $class(
            $message,
            $response->status,
            $str('type'),
            $str('code'),
            $str('param'),
            $str('request_id') ?? $response->header('x-request-id'),
            RateLimit::fromHeaders($response->headers),
            RetryPolicy::parseRetryAfter($response->header('retry-after')),
            $response->headers,
            $response->body,
        );
    }
}
