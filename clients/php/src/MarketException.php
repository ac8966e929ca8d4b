<?php

declare(strict_types=1);

namespace Market;

use RuntimeException;
use Throwable;

/**
 * An error answer of the API (or no answer at all, see ConnectionException).
 *
 * The API's error body is {"error": {"type", "code", "message", "param", "request_id"}};
 * each part has its getter here. Branch on getErrorCode() (a string such as
 * "resource_missing"); getMessage() is for people. getCode() is PHP's integer code and
 * holds the HTTP status (0 when there is none).
 *
 * Subclasses by status: AuthenticationException (401), PermissionException (403),
 * NotFoundException (404), ConflictException (409), RateLimitException (429),
 * InvalidRequestException (other 4xx: 400, 405, 408, 410, 413, 414, 415, 416),
 * ServerException (5xx) and ConnectionException (no answer).
 */
class MarketException extends RuntimeException
{
    /**
     * @param array<string, string> $headers the answer's headers, names in lower case
     */
    public function __construct(
        string $message,
        private readonly ?int $status = null,
        private readonly ?string $type = null,
        private readonly ?string $errorCode = null,
        private readonly ?string $param = null,
        private readonly ?string $requestId = null,
        private readonly ?RateLimit $rateLimit = null,
        private readonly ?int $retryAfter = null,
        private readonly array $headers = [],
        private readonly ?string $body = null,
        ?Throwable $previous = null,
    ) {
        parent::__construct($message, $status ?? 0, $previous);
    }

    /** HTTP status of the answer; null when no answer arrived. */
    public function getStatus(): ?int
    {
        return $this->status;
    }

    /** error.type: invalid_request_error, authentication_error, permission_error, rate_limit_error, api_error. */
    public function getType(): ?string
    {
        return $this->type;
    }

    /** error.code, e.g. parameter_invalid, resource_missing, order_refunded, rate_limited. */
    public function getErrorCode(): ?string
    {
        return $this->errorCode;
    }

    /** error.param: the input at fault (a query parameter, body field or "id"), when one is. */
    public function getParam(): ?string
    {
        return $this->param;
    }

    /** error.request_id (or the X-Request-Id header): quote it when you report a problem. */
    public function getRequestId(): ?string
    {
        return $this->requestId;
    }

    /** The answer's X-RateLimit-* figures (null when it had none, as a 401 has none). */
    public function getRateLimit(): ?RateLimit
    {
        return $this->rateLimit;
    }

    /** X-RateLimit-Limit of the answer. */
    public function getRateLimitLimit(): ?int
    {
        return $this->rateLimit?->limit;
    }

    /** X-RateLimit-Remaining of the answer. */
    public function getRateLimitRemaining(): ?int
    {
        return $this->rateLimit?->remaining;
    }

    /** X-RateLimit-Reset of the answer: seconds until the window ends. */
    public function getRateLimitReset(): ?int
    {
        return $this->rateLimit?->reset;
    }

    /** Retry-After of the answer in seconds (429 and 503 carry it). */
    public function getRetryAfter(): ?int
    {
        return $this->retryAfter;
    }

    /** @return array<string, string> the answer's headers, names in lower case */
    public function getHeaders(): array
    {
        return $this->headers;
    }

    /** The answer's raw body. */
    public function getBody(): ?string
    {
        return $this->body;
    }
}
