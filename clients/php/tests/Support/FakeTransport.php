<?php

declare(strict_types=1);

namespace Market\Tests\Support;

use Closure;
use Market\ConnectionException;
use Market\Http\Request;
use Market\Http\Response;
use Market\Http\Transport;

/**
 * A transport that answers from a script and records every request.
 */
final class FakeTransport implements Transport
{
    /** @var list<Request> */
    public array $requests = [];

    /** @var list<Response|ConnectionException|Closure(Request): Response> */
    private array $script;

    /**
     * @param list<Response|ConnectionException|Closure(Request): Response> $script answers in order
     */
    public function __construct(array $script)
    {
        $this->script = $script;
    }

    public function send(Request $request): Response
    {
        $this->requests[] = $request;
        if ($this->script === []) {
            throw new \LogicException('FakeTransport: no answer left for ' . $request->method . ' ' . $request->url);
        }
        $next = array_shift($this->script);
        if ($next instanceof ConnectionException) {
            throw $next;
        }
        if ($next instanceof Closure) {
            return $next($request);
        }
        return $next;
    }

    /**
     * @param array<string, string> $headers
     */
    public static function json(int $status, string $body, array $headers = []): Response
    {
        return new Response($status, array_change_key_case($headers + ['content-type' => 'application/json; charset=utf-8'], CASE_LOWER), $body);
    }

    public static function error(int $status, string $type, string $code, string $message, ?string $param = null, array $headers = []): Response
    {
        $error = ['type' => $type, 'code' => $code, 'message' => $message];
        if ($param !== null) {
            $error['param'] = $param;
        }
        $error['request_id'] = 'req_' . $status;
        return self::json($status, json_encode(['error' => $error]), $headers + [
            'x-request-id' => 'req_' . $status,
            'x-ratelimit-limit' => '600',
            'x-ratelimit-remaining' => $status === 429 ? '0' : '599',
            'x-ratelimit-reset' => '17',
        ]);
    }
}
