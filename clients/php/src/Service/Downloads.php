<?php

declare(strict_types=1);

namespace Market\Service;

use Market\Internal\Params;
use Market\Internal\Query;
use Market\Internal\Requestor;
use Market\MarketException;
use Market\Model\DownloadLink;

/**
 * Download links: POST /v1/downloads/:id/link (scope downloads:write).
 */
final class Downloads
{
    /** @internal */
    public function __construct(private readonly Requestor $requestor)
    {
    }

    /**
     * Mints a fresh download link for one of the caller's downloads (an id from
     * $order->downloads).
     *
     * Options:
     * - expires_in:      lifetime in seconds, an int 60..86400 (default: the server's, 3600)
     * - idempotency_key: sent as Idempotency-Key; when absent the client makes one, so
     *                    that a retry after a dropped connection cannot mint two links
     *
     * NotFoundException when the download is not the caller's; ConflictException
     * (order_refunded) when its order was refunded.
     *
     * @param array{expires_in?: int, idempotency_key?: string} $params
     * @throws MarketException
     */
    public function createLink(string $id, array $params = []): DownloadLink
    {
        [$body, $key] = Params::change($params);
        return $this->requestor->post('/v1/downloads/' . Query::segment('download id', $id) . '/link', $body === [] ? null : $body, $key)
            ->to([DownloadLink::class, 'fromArray']);
    }
}
