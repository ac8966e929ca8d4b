<?php

/*
 * A small HTTP/1.1 proxy for the tests: it sits between the client and nginx, forwards
 * requests one at a time, and for the first N POST requests it forwards the request,
 * reads nginx's whole answer (so the API did act) and then closes the client's
 * connection without sending that answer, as a network failure after the fact would.
 *
 *   php drop_proxy.php UPSTREAM_HOST UPSTREAM_PORT DROP_POSTS LOG_FILE
 *
 * Listens on 127.0.0.1 on a free port and prints "PORT <n>" on stdout once it listens.
 * Each request is logged as one JSON line: method, target, idempotency_key, status
 * (nginx's), dropped. Runs until killed.
 */

declare(strict_types=1);

[, $upHost, $upPort, $drops, $logFile] = $argv + [null, null, null, null, null];
if ($logFile === null) {
    fwrite(STDERR, "usage: drop_proxy.php UPSTREAM_HOST UPSTREAM_PORT DROP_POSTS LOG_FILE\n");
    exit(2);
}
$drops = (int) $drops;

$server = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
if ($server === false) {
    fwrite(STDERR, "drop_proxy: cannot listen: $errstr\n");
    exit(1);
}
$name = stream_socket_get_name($server, false);
echo 'PORT ', substr($name, strrpos($name, ':') + 1), "\n";
fflush(STDOUT);

/** Reads one HTTP message head (up to the blank line) and its Content-Length body. */
function read_message($conn, bool $isResponse): ?array
{
    $head = '';
    while (!str_contains($head, "\r\n\r\n")) {
        $chunk = fread($conn, 8192);
        if ($chunk === false || $chunk === '') {
            if (feof($conn) || $chunk === false) {
                return null;
            }
            continue;
        }
        $head .= $chunk;
    }
    [$head, $rest] = explode("\r\n\r\n", $head, 2);
    $length = 0;
    $chunked = false;
    foreach (explode("\r\n", $head) as $line) {
        if (preg_match('/^content-length:\s*(\d+)/i', $line, $m)) {
            $length = (int) $m[1];
        }
        if (preg_match('/^transfer-encoding:\s*chunked/i', $line)) {
            $chunked = true;
        }
    }
    $body = $rest;
    if ($chunked) {
        // Read until the final zero-length chunk.
        while (!preg_match('/(^|\r\n)0\r\n\r\n$/', $body)) {
            $chunk = fread($conn, 8192);
            if ($chunk === false || ($chunk === '' && feof($conn))) {
                return null;
            }
            $body .= $chunk;
        }
    } else {
        while (strlen($body) < $length) {
            $chunk = fread($conn, $length - strlen($body));
            if ($chunk === false || ($chunk === '' && feof($conn))) {
                return null;
            }
            $body .= $chunk;
        }
    }
    return ['head' => $head, 'body' => $body];
}

function header_value(string $head, string $name): ?string
{
    foreach (explode("\r\n", $head) as $line) {
        if (stripos($line, $name . ':') === 0) {
            return trim(substr($line, strlen($name) + 1));
        }
    }
    return null;
}

$upstream = null;
while (true) {
    $client = @stream_socket_accept($server, -1);
    if ($client === false) {
        continue;
    }
    stream_set_timeout($client, 30);
    // Keep-alive on the client side: serve requests until the client closes.
    while (($req = read_message($client, false)) !== null) {
        [$requestLine] = explode("\r\n", $req['head'], 2);
        [$method, $target] = explode(' ', $requestLine) + [null, null];
        $upstream ??= @stream_socket_client("tcp://$upHost:$upPort", $e, $es, 10);
        if ($upstream === false) {
            $upstream = null;
            fwrite(STDERR, "drop_proxy: cannot reach upstream: $es\n");
            break;
        }
        stream_set_timeout($upstream, 30);
        fwrite($upstream, $req['head'] . "\r\n\r\n" . $req['body']);
        $res = read_message($upstream, true);
        if ($res === null) {
            fclose($upstream);
            $upstream = null;
            break;
        }
        if (strcasecmp((string) header_value($res['head'], 'Connection'), 'close') === 0) {
            fclose($upstream);
            $upstream = null;
        }
        preg_match('#^HTTP/\S+ (\d{3})#', $res['head'], $m);
        $drop = $method === 'POST' && $drops > 0;
        file_put_contents($logFile, json_encode([
            'method' => $method,
            'target' => $target,
            'idempotency_key' => header_value($req['head'], 'Idempotency-Key'),
            'status' => (int) ($m[1] ?? 0),
            'dropped' => $drop,
        ]) . "\n", FILE_APPEND | LOCK_EX);
        if ($drop) {
            $drops--;
            break; // close the client's connection without an answer
        }
        fwrite($client, $res['head'] . "\r\n\r\n" . $res['body']);
    }
    fclose($client);
}
