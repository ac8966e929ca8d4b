<?php

declare(strict_types=1);

namespace Market\Internal;

use DateTimeImmutable;
use DateTimeInterface;
use DateTimeZone;
use InvalidArgumentException;

/**
 * Encoding of query strings and path segments.
 *
 * @internal
 */
final class Query
{
    /**
     * Builds "a=1&b=x%20y" from parameters in the order given. Null values are left
     * out. Values are strings, ints or floats (a float is written in plain decimal
     * notation with at most 15 significant digits, so 19.99 is sent as "19.99"; pass
     * money as a string to control the digits exactly), or dates (a DateTimeInterface is
     * written as RFC 3339 in UTC, see time()). Everything is percent-encoded as
     * RFC 3986 says (a space is %20, "+" is %2B), since the API reads "+" as a space.
     *
     * @param array<string, mixed> $params
     */
    public static function build(array $params): string
    {
        $pairs = [];
        foreach ($params as $name => $value) {
            if ($value === null) {
                continue;
            }
            $pairs[] = rawurlencode((string) $name) . '=' . rawurlencode(self::scalar((string) $name, $value));
        }
        return implode('&', $pairs);
    }

    /** A value as the text sent on the wire. */
    public static function scalar(string $name, mixed $value): string
    {
        if (is_string($value)) {
            return $value;
        }
        if (is_int($value)) {
            return (string) $value;
        }
        if (is_float($value)) {
            return self::decimal($name, $value);
        }
        if ($value instanceof DateTimeInterface) {
            return self::time($value);
        }
        if ($value instanceof \Stringable) {
            return (string) $value;
        }
        throw new InvalidArgumentException(sprintf(
            'parameter "%s" must be a string or a number, %s given', $name, get_debug_type($value)));
    }

    /**
     * A date-time as RFC 3339 in UTC, as the API writes its own: "2026-11-26T10:04:05Z",
     * with the fraction of a second (up to microseconds, trailing zeros dropped) only when
     * it is not zero: "2026-11-26T10:04:05.25Z". The instant is kept, whatever the zone.
     */
    public static function time(DateTimeInterface $t): string
    {
        $utc = DateTimeImmutable::createFromInterface($t)->setTimezone(new DateTimeZone('UTC'));
        $fraction = rtrim($utc->format('u'), '0');
        return $utc->format('Y-m-d\TH:i:s') . ($fraction === '' ? '' : '.' . $fraction) . 'Z';
    }

    /** A float in plain decimal notation, 15 significant digits at most. */
    public static function decimal(string $name, float $value): string
    {
        if (!is_finite($value)) {
            throw new InvalidArgumentException(sprintf('parameter "%s" must be a finite number', $name));
        }
        $text = sprintf('%.15G', $value);
        if (stripos($text, 'E') !== false) {
            // Plain notation, at most 15 significant digits.
            $exponent = (int) floor(log10(abs($value)));
            $decimals = max(0, 14 - $exponent);
            $text = sprintf('%.' . $decimals . 'F', $value);
            if (str_contains($text, '.')) {
                $text = rtrim(rtrim($text, '0'), '.');
            }
        }
        return $text === '-0' ? '0' : $text;
    }

    /** One path segment (an id), percent-encoded; an empty id is refused. */
    public static function segment(string $name, mixed $id): string
    {
        if (!is_string($id) || $id === '') {
            throw new InvalidArgumentException(sprintf('%s must be a non-empty string', $name));
        }
        return rawurlencode($id);
    }
}
