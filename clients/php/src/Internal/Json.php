<?php

declare(strict_types=1);

namespace Market\Internal;

use JsonException;

/**
 * JSON decoding that keeps every number as the exact text the server wrote.
 *
 * PHP's json_decode() turns 19.99 into a float (and 90071992547409.93 into
 * 90071992547409.94). Money must stay exact, so before decoding, a single regular
 * expression pass rewrites the document: every number token becomes a string tagged "n",
 * every string value gets the tag "s" (object keys are left alone). json_decode() then
 * does the real parsing (escapes, UTF-8, nesting) and a walk over the result turns the
 * tagged strings back into PHP strings and JsonNumber objects.
 *
 * @internal
 */
final class Json
{
    // A string token (possessive, so long strings do not backtrack), optionally followed
    // by the ':' that makes it an object key; or a number token as JSON defines it.
    private const TOKEN = '/"(?:[^"\\\\]++|\\\\.)*+"(\s*+:)?|-?(?:0|[1-9]\d*+)(?:\.\d++)?(?:[eE][+-]?\d++)?/s';

    /**
     * Decodes a JSON document. Objects become associative arrays, arrays lists, strings
     * strings, numbers JsonNumber, true/false/null themselves.
     *
     * @throws JsonException when the text is not one valid JSON document
     */
    public static function decode(string $json): mixed
    {
        $tagged = preg_replace_callback(self::TOKEN, static function (array $m): string {
            $token = $m[0];
            if ($token[0] !== '"') {
                return '"n' . $token . '"';
            }
            if (isset($m[1])) {
                return $token; // an object key
            }
            return '"s' . substr($token, 1);
        }, $json);
        if ($tagged === null) {
            throw new JsonException('cannot scan the JSON text: ' . preg_last_error_msg());
        }
        $value = json_decode($tagged, true, 512, JSON_THROW_ON_ERROR);
        return self::untag($value);
    }

    /** Converts JsonNumber leaves to int/float, for free-form objects such as a licence. */
    public static function toNative(mixed $value): mixed
    {
        if ($value instanceof JsonNumber) {
            return $value->toNative();
        }
        if (is_array($value)) {
            return array_map([self::class, 'toNative'], $value);
        }
        return $value;
    }

    private static function untag(mixed $value): mixed
    {
        if (is_string($value)) {
            // Every string in the tagged document starts with its tag (a bare number token
            // in the original would have been tagged too), so a missing tag cannot happen
            // for valid input; treat it as a malformed document.
            $tag = $value[0] ?? '';
            $rest = substr($value, 1);
            return match ($tag) {
                's' => $rest,
                'n' => new JsonNumber($rest),
                default => throw new JsonException('malformed JSON text'),
            };
        }
        if (is_array($value)) {
            foreach ($value as $k => $v) {
                $value[$k] = self::untag($v);
            }
        }
        return $value;
    }
}
