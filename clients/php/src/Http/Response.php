<?php

declare(strict_types=1);

namespace Market\Http;

/**
 * One HTTP answer as a transport received it. Header names are lower case; a header
 * that came several times has its values joined with ", ".
 */
final class Response
{
    /**
     * @param array<string, string> $headers
     */
    public function __construct(
        public readonly int $status,
        public readonly array $headers,
        public readonly string $body,
    ) {
    }

    public function header(string $name): ?string
    {
        return $this->headers[strtolower($name)] ?? null;
    }
}
