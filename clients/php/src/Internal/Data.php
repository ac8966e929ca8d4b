<?php

declare(strict_types=1);

namespace Market\Internal;

use DateTimeImmutable;
use DateTimeZone;
use UnexpectedValueException;

/**
 * Typed reads of fields of a decoded answer (see Json::decode), with a clear error when
 * the answer does not have the expected shape.
 *
 * @internal
 */
final class Data
{
    /** @param array<mixed> $a */
    public static function string(array $a, string $key): string
    {
        $v = $a[$key] ?? null;
        if (!is_string($v)) {
            throw self::bad($key, 'a string', $v);
        }
        return $v;
    }

    /** @param array<mixed> $a */
    public static function nullableString(array $a, string $key): ?string
    {
        return ($a[$key] ?? null) === null ? null : self::string($a, $key);
    }

    /** @param array<mixed> $a */
    public static function int(array $a, string $key): int
    {
        $v = $a[$key] ?? null;
        if (!$v instanceof JsonNumber || !$v->isInteger() || !is_int($v->toNative())) {
            throw self::bad($key, 'an integer', $v);
        }
        return (int) $v->raw;
    }

    /** @param array<mixed> $a */
    public static function nullableInt(array $a, string $key): ?int
    {
        return ($a[$key] ?? null) === null ? null : self::int($a, $key);
    }

    /** @param array<mixed> $a */
    public static function nullableFloat(array $a, string $key): ?float
    {
        $v = $a[$key] ?? null;
        if ($v === null) {
            return null;
        }
        if (!$v instanceof JsonNumber) {
            throw self::bad($key, 'a number', $v);
        }
        return (float) $v->raw;
    }

    /**
     * Money: the number exactly as the API wrote it, as a decimal string ("19.99", "5",
     * "1200.5").
     *
     * @param array<mixed> $a
     */
    public static function money(array $a, string $key): string
    {
        $v = $a[$key] ?? null;
        if (!$v instanceof JsonNumber) {
            throw self::bad($key, 'a number', $v);
        }
        return $v->raw;
    }

    /** @param array<mixed> $a */
    public static function bool(array $a, string $key): bool
    {
        $v = $a[$key] ?? null;
        if (!is_bool($v)) {
            throw self::bad($key, 'a boolean', $v);
        }
        return $v;
    }

    /** @param array<mixed> $a */
    public static function time(array $a, string $key): DateTimeImmutable
    {
        $v = self::string($a, $key);
        $t = DateTimeImmutable::createFromFormat('!Y-m-d\TH:i:s\Z', $v, new DateTimeZone('UTC'));
        if ($t === false) {
            try {
                $t = new DateTimeImmutable($v);
            } catch (\Exception) {
                throw self::bad($key, 'an RFC 3339 time', $v);
            }
        }
        return $t;
    }

    /** @param array<mixed> $a */
    public static function nullableTime(array $a, string $key): ?DateTimeImmutable
    {
        return ($a[$key] ?? null) === null ? null : self::time($a, $key);
    }

    /**
     * @param array<mixed> $a
     * @return array<mixed>
     */
    public static function object(array $a, string $key): array
    {
        $v = $a[$key] ?? null;
        if (!is_array($v) || ($v !== [] && array_is_list($v))) {
            throw self::bad($key, 'an object', $v);
        }
        return $v;
    }

    /**
     * @param array<mixed> $a
     * @return list<mixed>
     */
    public static function list(array $a, string $key): array
    {
        $v = $a[$key] ?? null;
        if (!is_array($v) || !array_is_list($v)) {
            throw self::bad($key, 'an array', $v);
        }
        return $v;
    }

    /**
     * @param array<mixed> $a
     * @return list<string>
     */
    public static function stringList(array $a, string $key): array
    {
        $list = self::list($a, $key);
        foreach ($list as $i => $v) {
            if (!is_string($v)) {
                throw self::bad("$key[$i]", 'a string', $v);
            }
        }
        return $list;
    }

    /**
     * The "data" of an event, whatever its type (an unknown type included): a generic
     * array in which "amount" is money, a decimal string exactly as sent ("19.99",
     * "1200"), and every other number an int or a float.
     *
     * @param array<mixed> $a the event
     * @return array<string, mixed>
     */
    public static function eventData(array $a): array
    {
        $data = [];
        foreach (self::object($a, 'data') as $key => $value) {
            $data[$key] = ($key === 'amount' && $value instanceof JsonNumber) ? $value->raw : Json::toNative($value);
        }
        return $data;
    }

    /**
     * Builds one model per element of a list.
     *
     * @template T
     * @param array<mixed> $a
     * @param callable(array<mixed>): T $make
     * @return list<T>
     */
    public static function listOf(array $a, string $key, callable $make): array
    {
        $out = [];
        foreach (self::list($a, $key) as $i => $item) {
            if (!is_array($item)) {
                throw self::bad("$key[$i]", 'an object', $item);
            }
            $out[] = $make($item);
        }
        return $out;
    }

    private static function bad(string $key, string $expected, mixed $got): UnexpectedValueException
    {
        $what = $got instanceof JsonNumber ? 'number ' . $got->raw : get_debug_type($got);
        return new UnexpectedValueException(sprintf('field "%s" should be %s, got %s', $key, $expected, $what));
    }
}
