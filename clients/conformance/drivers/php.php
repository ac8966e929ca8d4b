<?php
// The PHP driver of the conformance suite: php php.php <base_url> <call> <id> <api_key>
// Makes one call with the client (2 retries, 0.5 s timeout) and prints one JSON line:
// {ok, error: {kind, status, timeout} | null, hook: [...]}.
declare(strict_types=1);

require __DIR__ . '/../../php/autoload.php';

[, $baseUrl, $call, $id, $apiKey] = $argv;
$hook = [];
$market = new Market\Client($apiKey, [
    'base_url' => $baseUrl,
    'max_retries' => 2,
    'timeout' => 0.5,
    'on_response' => function (Market\RequestInfo $i) use (&$hook): void {
        $hook[] = ['method' => $i->method, 'path' => $i->path, 'status' => $i->status, 'error' => $i->error,
            'duration_ms' => $i->durationMs, 'request_id' => $i->requestId, 'attempt' => $i->attempt];
    },
]);
try {
    match ($call) {
        'get' => $market->products->get($id),
        'list' => $market->products->list(['category' => $id, 'limit' => 2]),
        'post' => $market->downloads->createLink($id),
        'delete' => $market->webhooks->delete($id),
    };
    $out = ['ok' => true, 'error' => null];
} catch (Market\MarketException $e) {
    $conn = $e instanceof Market\ConnectionException;
    $out = ['ok' => false, 'error' => [
        'kind' => $conn ? 'connection' : 'api',
        'status' => $e->getStatus(),
        'timeout' => $conn && $e->getCurlErrno() === 28,
        'class' => get_class($e),
    ]];
}
echo json_encode($out + ['hook' => $hook], JSON_UNESCAPED_SLASHES), "\n";
