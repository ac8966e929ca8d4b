<?php

declare(strict_types=1);

namespace Market\Http;

use Market\ConnectionException;

/**
 * Sends one HTTP request. The client's retries, errors and decoding sit above it; pass
 * your own in the client's "transport" option (to record requests in tests, or to route
 * them through another HTTP stack).
 */
interface Transport
{
    /**
     * Returns the answer, whatever its status. Throws ConnectionException when no
     * complete answer arrived (connection refused or dropped, timeout, TLS failure).
     *
     * @throws ConnectionException
     */
    public function send(Request $request): Response;
}
