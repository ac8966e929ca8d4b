<?php

declare(strict_types=1);

namespace Market\Internal;

/**
 * A JSON number exactly as it was written in the document (for example "19.99"), so that
 * money is never rounded through a float.
 *
 * @internal
 */
final class JsonNumber
{
    public function __construct(public readonly string $raw)
    {
    }

    public function isInteger(): bool
    {
        return preg_match('/^-?\d+$/', $this->raw) === 1;
    }

    /** An int when the number is an integer that fits, else a float. */
    public function toNative(): int|float
    {
        if ($this->isInteger()) {
            $int = filter_var($this->raw, FILTER_VALIDATE_INT);
            if ($int !== false) {
                return $int;
            }
        }
        return (float) $this->raw;
    }
}
