<?php

declare(strict_types=1);

namespace Market;

/**
 * HTTP 403 permission_error: the key lacks the scope the route needs (insufficient_scope); read-only keys cannot POST.
 */
class PermissionException extends MarketException
{
}
