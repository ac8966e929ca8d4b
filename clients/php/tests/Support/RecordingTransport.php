<?php

declare(strict_types=1);

namespace Market\Tests\Support;

use Market\ConnectionException;
use Market\Http\CurlTransport;
use Market\Http\Request;
use Market\Http\Response;
use Market\Http\Transport;

/**
 * The real curl transport, recording each request and what came back (a Response or
 * the ConnectionException).
 */
final class RecordingTransport implements Transport
{
    /** @var list<array{request: Request, response: ?Response, error: ?ConnectionException}> */
    public array $exchanges = [];

    private Transport $inner;

    public function __construct(?Transport $inner = null)
    {
        $this->inner = $inner ?? new CurlTransport(20.0, 5.0);
    }

    public function send(Request $request): Response
    {
        try {
            $response = $this->inner->send($request);
        } catch (ConnectionException $e) {
            $this->exchanges[] = ['request' => $request, 'response' => null, 'error' => $e];
            throw $e;
        }
        $this->exchanges[] = ['request' => $request, 'response' => $response, 'error' => null];
        return $response;
    }

    /** @return list<int|null> the status of each exchange (null: no answer) */
    public function statuses(): array
    {
        return array_map(static fn (array $x): ?int => $x['response']?->status, $this->exchanges);
    }
}
