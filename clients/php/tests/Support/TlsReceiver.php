<?php

declare(strict_types=1);

namespace Market\Tests\Support;

use RuntimeException;

/**
 * A one-request-at-a-time HTTPS server on 127.0.0.1 for webhook deliveries, with the
 * test certificate signed by the throwaway CA that the stack's market-webhookd trusts
 * (MARKET_WEBHOOK_CA_FILE). It runs inside the test process: the test causes an event,
 * then calls receive(), which accepts the drainer's connection, reads one request and
 * answers 204.
 */
final class TlsReceiver
{
    /** @var resource */
    private $server;
    public readonly int $port;

    public function __construct(string $certFile, string $keyFile)
    {
        $ctx = stream_context_create(['ssl' => [
            'local_cert' => $certFile,
            'local_pk' => $keyFile,
            'verify_peer' => false,
            'allow_self_signed' => true,
        ]]);
        $server = stream_socket_server('tls://127.0.0.1:0', $errno, $errstr, STREAM_SERVER_BIND | STREAM_SERVER_LISTEN, $ctx);
        if ($server === false) {
            throw new RuntimeException("cannot listen: $errstr");
        }
        $this->server = $server;
        $name = stream_socket_get_name($server, false);
        $this->port = (int) substr($name, strrpos($name, ':') + 1);
    }

    public function url(string $path): string
    {
        return 'https://127.0.0.1:' . $this->port . $path;
    }

    /**
     * Waits for one request (TLS handshake included) and answers it.
     *
     * @return array{method: string, target: string, headers: array<string, string>, body: string}
     */
    public function receive(float $timeout = 20.0, int $status = 204): array
    {
        $deadline = microtime(true) + $timeout;
        while (true) {
            $left = $deadline - microtime(true);
            if ($left <= 0) {
                throw new RuntimeException('no webhook delivery arrived within ' . $timeout . ' s');
            }
            // A failed handshake (a scanner, a client giving up) gives false: keep waiting.
            $conn = @stream_socket_accept($this->server, $left);
            if ($conn !== false) {
                break;
            }
        }
        stream_set_timeout($conn, 10);
        $data = '';
        while (!str_contains($data, "\r\n\r\n")) {
            $chunk = fread($conn, 8192);
            if ($chunk === false || ($chunk === '' && feof($conn))) {
                throw new RuntimeException('the connection closed before the request head ended');
            }
            $data .= $chunk;
        }
        [$head, $body] = explode("\r\n\r\n", $data, 2);
        $lines = explode("\r\n", $head);
        [$method, $target] = explode(' ', array_shift($lines)) + ['', ''];
        $headers = [];
        foreach ($lines as $line) {
            $colon = strpos($line, ':');
            if ($colon !== false) {
                $headers[strtolower(trim(substr($line, 0, $colon)))] = trim(substr($line, $colon + 1));
            }
        }
        if (isset($headers['transfer-encoding'])) {
            throw new RuntimeException('chunked deliveries are not handled by this receiver');
        }
        if (strcasecmp($headers['expect'] ?? '', '100-continue') === 0) {
            fwrite($conn, "HTTP/1.1 100 Continue\r\n\r\n");
        }
        $length = (int) ($headers['content-length'] ?? 0);
        while (strlen($body) < $length) {
            $chunk = fread($conn, $length - strlen($body));
            if ($chunk === false || ($chunk === '' && feof($conn))) {
                throw new RuntimeException('the connection closed before the body ended');
            }
            $body .= $chunk;
        }
        fwrite($conn, "HTTP/1.1 $status " . ($status === 204 ? "No Content" : "OK") . "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        fclose($conn);
        return ['method' => $method, 'target' => $target, 'headers' => $headers, 'body' => $body];
    }

    public function close(): void
    {
        if (is_resource($this->server)) {
            fclose($this->server);
        }
    }
}
