<?php

declare(strict_types=1);

namespace Market\Http;

use Market\Internal\Secret;
use SensitiveParameter;

/**
 * One HTTP request as a transport sends it.
 *
 * The Authorization header is kept apart, outside of any property, so that dumping a
 * request (or an exception whose trace holds one) never shows the API key; headers()
 * gives every header, Authorization included, for sending.
 */
final class Request
{
    /** @var array<string, string> */
    private array $otherHeaders = [];
    private ?Secret $authorization = null;
    private string $authorizationName = 'Authorization';

    /**
     * @param array<string, string> $headers header name => value
     */
    public function __construct(
        public readonly string $method,
        public readonly string $url,
        #[SensitiveParameter] array $headers,
        public readonly ?string $body = null,
    ) {
        foreach ($headers as $name => $value) {
            if (strcasecmp($name, 'Authorization') === 0) {
                $this->authorization = new Secret($value);
                $this->authorizationName = $name;
            } else {
                $this->otherHeaders[$name] = $value;
            }
        }
    }

    /** @return array<string, string> every header, Authorization included */
    public function headers(): array
    {
        return $this->authorization === null
            ? $this->otherHeaders
            : [$this->authorizationName => $this->authorization->reveal()] + $this->otherHeaders;
    }

    public function header(string $name): ?string
    {
        foreach ($this->headers() as $k => $v) {
            if (strcasecmp($k, $name) === 0) {
                return $v;
            }
        }
        return null;
    }

    /** @return array<string, mixed> */
    public function __debugInfo(): array
    {
        $headers = $this->otherHeaders;
        if ($this->authorization !== null) {
            $headers = [$this->authorizationName => '[redacted]'] + $headers;
        }
        return ['method' => $this->method, 'url' => $this->url, 'headers' => $headers, 'body' => $this->body];
    }
}
