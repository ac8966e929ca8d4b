<?php

declare(strict_types=1);

namespace Market\Internal;

use Closure;
use InvalidArgumentException;
use JsonException;
use Market\Client;
use Market\ConnectionException;
use Market\Http\Request;
use Market\Http\Response;
use Market\Http\Transport;
use Market\MarketException;
use Market\RateLimit;
use Market\RequestInfo;
use Market\ResponseInfo;

/**
 * Sends the client's requests: headers, Idempotency-Key, retries, error mapping, decoding.
 *
 * @internal
 */
final class Requestor
{
    private ?ResponseInfo $last = null;

    /**
     * @param Closure(float): void $sleep
     * @param (Closure(RequestInfo): void)|null $onResponse called after every attempt
     */
    public function __construct(
        private readonly Secret $apiKey,
        private readonly string $baseUrl,
        private readonly Transport $transport,
        private readonly RetryPolicy $policy,
        private readonly Closure $sleep,
        private readonly ?Closure $onResponse = null,
    ) {
    }

    /** Tells the hook about one attempt; what the hook throws is ignored. */
    private function report(string $method, string $path, ?int $status, ?string $error, int $started, ?string $requestId, int $retries): void
    {
        if ($this->onResponse === null) {
            return;
        }
        $info = new RequestInfo($method, $path, $status, $error, (hrtime(true) - $started) / 1e6, $requestId, $retries + 1);
        try {
            ($this->onResponse)($info);
        } catch (\Throwable) {
            // A failing hook must not change the call's outcome.
        }
    }

    public function baseUrl(): string
    {
        return $this->baseUrl;
    }

    public function maxRetries(): int
    {
        return $this->policy->maxRetries;
    }

    public function last(): ?ResponseInfo
    {
        return $this->last;
    }

    /**
     * A new Idempotency-Key: a random (version 4) UUID from random_bytes().
     */
    public static function newIdempotencyKey(): string
    {
        $b = random_bytes(16);
        $b[6] = chr((ord($b[6]) & 0x0f) | 0x40);
        $b[8] = chr((ord($b[8]) & 0x3f) | 0x80);
        return vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($b), 4));
    }

    /** Checks an Idempotency-Key as the API does: 1..255 printable ASCII characters. */
    public static function checkIdempotencyKey(mixed $key): string
    {
        if (!is_string($key) || preg_match('/^[\x20-\x7e]{1,255}$/', $key) !== 1) {
            throw new InvalidArgumentException('idempotency_key must be 1 to 255 printable ASCII characters');
        }
        return $key;
    }

    /**
     * GET a path with a query; returns the decoded answer.
     *
     * @param array<string, mixed> $query
     */
    public function get(string $path, array $query = []): ApiResponse
    {
        $qs = Query::build($query);
        return $this->send('GET', $path . ($qs === '' ? '' : '?' . $qs), null, null);
    }

    /**
     * POST a JSON body (null: no body; an empty array: the JSON object {}). Every POST
     * carries an Idempotency-Key, the caller's or a new one, the same on every retry.
     *
     * @param array<string, mixed>|null $body
     */
    public function post(string $path, ?array $body, ?string $idempotencyKey): ApiResponse
    {
        return $this->change('POST', $path, $body, $idempotencyKey);
    }

    /**
     * DELETE, with an Idempotency-Key like a POST (the caller's or a new one, the same on
     * every retry), so that a retried DELETE replays its first answer instead of a 404.
     * A body only when given (the API refuses any field, naming it).
     *
     * @param array<string, mixed>|null $body
     */
    public function delete(string $path, ?array $body, ?string $idempotencyKey): ApiResponse
    {
        return $this->change('DELETE', $path, $body, $idempotencyKey);
    }

    /**
     * @param array<string, mixed>|null $body
     */
    private function change(string $method, string $path, ?array $body, ?string $idempotencyKey): ApiResponse
    {
        $key = $idempotencyKey === null ? self::newIdempotencyKey() : self::checkIdempotencyKey($idempotencyKey);
        $json = null;
        if ($body !== null) {
            try {
                $json = json_encode($body === [] ? new \stdClass() : $body, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION | JSON_THROW_ON_ERROR);
            } catch (JsonException $e) {
                throw new InvalidArgumentException('the request body cannot be encoded as JSON: ' . $e->getMessage(), 0, $e);
            }
        }
        return $this->send($method, $path, $json, $key);
    }

    private function send(string $method, string $pathAndQuery, ?string $body, ?string $idempotencyKey): ApiResponse
    {
        $headers = [
            'Authorization' => 'Bearer ' . $this->apiKey->reveal(),
            'Accept' => 'application/json',
            'User-Agent' => 'market-php/' . Client::VERSION . ' PHP/' . PHP_VERSION,
        ];
        if ($body !== null) {
            $headers['Content-Type'] = 'application/json';
        }
        if ($idempotencyKey !== null) {
            $headers['Idempotency-Key'] = $idempotencyKey;
        }
        $request = new Request($method, $this->baseUrl . $pathAndQuery, $headers, $body);

        $repeatable = $method === 'GET' || $method === 'HEAD' || $idempotencyKey !== null;
        for ($retries = 0; ; $retries++) {
            $started = hrtime(true);
            try {
                $response = $this->transport->send($request);
            } catch (ConnectionException $e) {
                $this->last = null;
                // curl error 28: the timeout.
                $this->report($method, $pathAndQuery, null, $e->getCurlErrno() === 28 ? 'timeout' : $e->getMessage(), $started, null, $retries);
                $delay = $this->policy->delayAfterNetworkError($retries, $method, $idempotencyKey !== null);
                if ($delay === null) {
                    throw $e;
                }
                ($this->sleep)($delay);
                continue;
            }

            $info = new ResponseInfo(
                $response->status,
                $response->header('x-request-id'),
                RateLimit::fromHeaders($response->headers),
                $response->headers,
                $retries + 1,
            );
            $this->last = $info;
            $this->report($method, $pathAndQuery, $response->status, null, $started, $info->requestId, $retries);
            if ($response->status >= 200 && $response->status < 300) {
                return new ApiResponse($this->decode($response, $info), $info);
            }
            $delay = $this->policy->delayAfterStatus($retries, $response->status, $response->header('retry-after'), null, $repeatable);
            if ($delay === null) {
                throw ErrorFactory::fromResponse($response);
            }
            ($this->sleep)($delay);
        }
    }

    private function decode(Response $response, ResponseInfo $info): mixed
    {
        try {
            return Json::decode($response->body);
        } catch (JsonException $e) {
            throw new MarketException(
                'the API answered HTTP ' . $response->status . ' with a body that is not JSON',
                $response->status,
                requestId: $info->requestId,
                rateLimit: $info->rateLimit,
                headers: $response->headers,
                body: $response->body,
                previous: $e,
            );
        }
    }
}
