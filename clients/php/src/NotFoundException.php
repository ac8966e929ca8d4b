<?php

declare(strict_types=1);

namespace Market;

/**
 * HTTP 404: no such resource for this key (resource_missing) or no such route (route_not_found).
 */
class NotFoundException extends MarketException
{
}
