<?php

declare(strict_types=1);

namespace Market;

/**
 * HTTP 400 and the other 4xx (405, 408, 410, 413, 414, 415, 416): the request itself is wrong; getParam() names the input at fault.
 */
class InvalidRequestException extends MarketException
{
}
