<?php

declare(strict_types=1);

namespace Market;

/**
 * HTTP 404: no such resource for this key (resource_missing) or no such route
 * (route_not_found: a call of the extension webhook-management, Service\Webhooks but
 * create() and Service\Events, on a server without it).
 */
class NotFoundException extends MarketException
{
}
