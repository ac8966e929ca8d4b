<?php

declare(strict_types=1);

namespace Market;

use Closure;
use InvalidArgumentException;
use JsonSerializable;
use LogicException;
use Market\Http\CurlTransport;
use Market\Http\Transport;
use Market\Internal\Requestor;
use Market\Internal\RetryPolicy;
use Market\Internal\Secret;
use Market\Service\Downloads;
use Market\Service\Events;
use Market\Service\Orders;
use Market\Service\Products;
use Market\Service\Sellers;
use Market\Service\Webhooks;
use SensitiveParameter;
use Stringable;

/**
 * The market API client.
 *
 *     $market = new Market\Client('sk_test_...', ['base_url' => 'https://api.example.com']);
 *     $page = $market->products->list(['category' => 'fonts', 'limit' => 10]);
 *
 * Options:
 * - base_url:        the API's base URL; default: the environment variable MARKET_BASE_URL
 *                    (one of the two is required)
 * - max_retries:     retries after 429/502/503/504 answers and network failures (default 2)
 * - timeout:         seconds for a whole request (default 30)
 * - connect_timeout: seconds to connect (default 10)
 * - sleep:           callable(float $seconds): void used to wait between retries
 *                    (default: usleep); tests pass one that records instead of sleeping
 * - transport:       a Market\Http\Transport to send requests (default: ext-curl)
 * - on_response:     callable(Market\RequestInfo $info): void, called after every HTTP
 *                    attempt, retries included (method, path with query, status or error,
 *                    duration in ms, request id, attempt); never given the API key. What
 *                    it throws is ignored. Retries and timeouts: docs/clients.md.
 *
 * The API key is never stored in a property: var_dump(), print_r(), var_export(),
 * json_encode(), serialize() and string conversion of the client never show it.
 */
final class Client implements JsonSerializable, Stringable
{
    public const VERSION = '0.2.0';
    public const DEFAULT_MAX_RETRIES = 2;

    private const OPTIONS = ['base_url', 'max_retries', 'timeout', 'connect_timeout', 'sleep', 'transport', 'on_response'];

    public readonly Products $products;
    public readonly Sellers $sellers;
    public readonly Orders $orders;
    public readonly Downloads $downloads;
    public readonly Webhooks $webhooks;
    public readonly Events $events;

    private readonly Requestor $requestor;
    private readonly string $keyLabel;

    /**
     * @param string $apiKey an sk_live_... or sk_test_... key
     * @param array{base_url?: string, max_retries?: int, timeout?: int|float, connect_timeout?: int|float, sleep?: callable(float): void, transport?: Transport, on_response?: callable(RequestInfo): void} $options
     */
    public function __construct(#[SensitiveParameter] string $apiKey, array $options = [])
    {
        $unknown = array_diff(array_keys($options), self::OPTIONS);
        if ($unknown !== []) {
            throw new InvalidArgumentException(sprintf(
                'unknown option(s) %s; known: %s', implode(', ', $unknown), implode(', ', self::OPTIONS)));
        }
        if ($apiKey === '' || preg_match('/^[\x21-\x7e]+$/', $apiKey) !== 1) {
            throw new InvalidArgumentException('the API key must be a non-empty string of printable characters without spaces');
        }

        $baseUrl = $options['base_url'] ?? null;
        if ($baseUrl === null || $baseUrl === '') {
            $env = getenv('MARKET_BASE_URL');
            $baseUrl = is_string($env) && $env !== '' ? $env : null;
        }
        if (!is_string($baseUrl)) {
            throw new InvalidArgumentException('no base URL: pass the "base_url" option or set MARKET_BASE_URL');
        }
        if (preg_match('#^https?://[^/?\#\s]+(/[^?\#\s]*)?$#i', $baseUrl) !== 1) {
            throw new InvalidArgumentException(sprintf('base_url must be an http:// or https:// URL without query or fragment, got "%s"', $baseUrl));
        }
        $baseUrl = rtrim($baseUrl, '/');

        $maxRetries = $options['max_retries'] ?? self::DEFAULT_MAX_RETRIES;
        if (!is_int($maxRetries) || $maxRetries < 0) {
            throw new InvalidArgumentException('max_retries must be an int >= 0');
        }
        $sleep = $options['sleep'] ?? null;
        if ($sleep === null) {
            $sleep = static function (float $seconds): void {
                if ($seconds > 0) {
                    usleep((int) round($seconds * 1_000_000));
                }
            };
        } elseif (!is_callable($sleep)) {
            throw new InvalidArgumentException('sleep must be a callable(float $seconds): void');
        }
        $transport = $options['transport'] ?? null;
        if ($transport === null) {
            $timeout = $options['timeout'] ?? 30;
            $connectTimeout = $options['connect_timeout'] ?? 10;
            if (!is_int($timeout) && !is_float($timeout) || $timeout <= 0 || !is_int($connectTimeout) && !is_float($connectTimeout) || $connectTimeout <= 0) {
                throw new InvalidArgumentException('timeout and connect_timeout must be numbers of seconds > 0');
            }
            $transport = new CurlTransport((float) $timeout, (float) $connectTimeout);
        } elseif (!$transport instanceof Transport) {
            throw new InvalidArgumentException('transport must implement ' . Transport::class);
        }

        $onResponse = $options['on_response'] ?? null;
        if ($onResponse !== null && !is_callable($onResponse)) {
            throw new InvalidArgumentException('on_response must be a callable(Market\RequestInfo $info): void');
        }

        $this->keyLabel = (preg_match('/^(sk_(?:live|test)_)/', $apiKey, $m) === 1 ? $m[1] : '') . '[redacted]';
        $this->requestor = new Requestor(
            new Secret($apiKey),
            $baseUrl,
            $transport,
            new RetryPolicy($maxRetries),
            Closure::fromCallable($sleep),
            $onResponse === null ? null : Closure::fromCallable($onResponse),
        );
        $this->products = new Products($this->requestor);
        $this->sellers = new Sellers($this->requestor);
        $this->orders = new Orders($this->requestor);
        $this->downloads = new Downloads($this->requestor);
        $this->webhooks = new Webhooks($this->requestor);
        $this->events = new Events($this->requestor);
    }

    public function baseUrl(): string
    {
        return $this->requestor->baseUrl();
    }

    public function maxRetries(): int
    {
        return $this->requestor->maxRetries();
    }

    /**
     * The last HTTP answer the client received (status, request id, rate-limit figures,
     * every header), successful or not; null before the first call or after a network
     * failure.
     */
    public function lastResponse(): ?ResponseInfo
    {
        return $this->requestor->last();
    }

    /** @return array<string, mixed> */
    public function __debugInfo(): array
    {
        return ['baseUrl' => $this->baseUrl(), 'maxRetries' => $this->maxRetries(), 'apiKey' => $this->keyLabel];
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->__debugInfo();
    }

    public function __toString(): string
    {
        return sprintf('%s(base_url=%s, api_key=%s)', self::class, $this->baseUrl(), $this->keyLabel);
    }

    public function __serialize(): array
    {
        throw new LogicException('a Market\\Client cannot be serialized (it holds an API key); make a new one instead');
    }

    public function __unserialize(array $data): void
    {
        throw new LogicException('a Market\\Client cannot be unserialized');
    }
}
