<?php

declare(strict_types=1);

namespace Market;

use UnexpectedValueException;

/**
 * Webhook::verify() refused a delivery: a header is missing or malformed, the timestamp
 * is outside the tolerance, no signature matches, or the payload is not a JSON event.
 * Answer such a request with 400 and do not act on it.
 */
class WebhookVerificationException extends UnexpectedValueException
{
}
