<?php

declare(strict_types=1);

namespace Market\Http;

use CurlHandle;
use Market\ConnectionException;

/**
 * The default transport: ext-curl, one handle reused across requests (keep-alive).
 * Redirects are not followed.
 */
final class CurlTransport implements Transport
{
    private ?CurlHandle $handle = null;

    public function __construct(
        private readonly float $timeout = 30.0,
        private readonly float $connectTimeout = 10.0,
    ) {
    }

    public function send(Request $request): Response
    {
        $this->handle ??= curl_init();
        $ch = $this->handle;
        curl_reset($ch);

        $headers = [];
        foreach ($request->headers() as $name => $value) {
            $headers[] = $name . ': ' . $value;
        }
        // curl adds these on its own unless told not to.
        $headers[] = 'Expect:';
        if ($request->body === null && $request->header('Content-Type') === null) {
            $headers[] = 'Content-Type:';
        }

        $responseHeaders = [];
        $status = 0;
        curl_setopt_array($ch, [
            CURLOPT_URL => $request->url,
            CURLOPT_CUSTOMREQUEST => $request->method,
            CURLOPT_HTTPHEADER => $headers,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_FOLLOWLOCATION => false,
            CURLOPT_HTTP_VERSION => CURL_HTTP_VERSION_1_1,
            CURLOPT_PROTOCOLS => CURLPROTO_HTTP | CURLPROTO_HTTPS,
            CURLOPT_TIMEOUT_MS => (int) round($this->timeout * 1000),
            CURLOPT_CONNECTTIMEOUT_MS => (int) round($this->connectTimeout * 1000),
            CURLOPT_ENCODING => '',
            CURLOPT_HEADERFUNCTION => static function ($ch, string $line) use (&$responseHeaders, &$status): int {
                $trimmed = rtrim($line, "\r\n");
                if (preg_match('#^HTTP/\S+\s+(\d{3})#', $trimmed, $m) === 1) {
                    // A new status line (after a 100 Continue, say): start over.
                    $status = (int) $m[1];
                    $responseHeaders = [];
                } elseif (($colon = strpos($trimmed, ':')) !== false) {
                    $name = strtolower(trim(substr($trimmed, 0, $colon)));
                    $value = trim(substr($trimmed, $colon + 1));
                    $responseHeaders[$name] = isset($responseHeaders[$name])
                        ? $responseHeaders[$name] . ', ' . $value
                        : $value;
                }
                return strlen($line);
            },
        ]);
        if ($request->method === 'POST' || $request->body !== null) {
            curl_setopt($ch, CURLOPT_POSTFIELDS, $request->body ?? '');
        }
        if ($request->method === 'HEAD') {
            curl_setopt($ch, CURLOPT_NOBODY, true);
        }

        $body = curl_exec($ch);
        if ($body === false) {
            $errno = curl_errno($ch);
            $error = curl_error($ch);
            // Drop the handle: its connection may be in any state.
            curl_close($ch);
            $this->handle = null;
            throw new ConnectionException(
                sprintf('could not reach the API (%s %s): %s (curl error %d)', $request->method,
                    self::withoutQuery($request->url), $error, $errno),
                $errno,
            );
        }
        return new Response($status ?: (int) curl_getinfo($ch, CURLINFO_RESPONSE_CODE), $responseHeaders, (string) $body);
    }

    private static function withoutQuery(string $url): string
    {
        $q = strpos($url, '?');
        return $q === false ? $url : substr($url, 0, $q);
    }
}
