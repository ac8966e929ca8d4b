<?php

declare(strict_types=1);

namespace Market\Internal;

use LogicException;
use SensitiveParameter;
use WeakMap;

/**
 * Holds a secret (the API key) outside of any object property, so that var_dump(),
 * print_r(), var_export(), json_encode(), serialize() and debuggers that walk object
 * properties never see it. The value lives in a static WeakMap keyed by this object.
 *
 * @internal
 */
final class Secret
{
    /** @var WeakMap<Secret, string>|null */
    private static ?WeakMap $values = null;

    public function __construct(#[SensitiveParameter] string $value)
    {
        self::$values ??= new WeakMap();
        self::$values[$this] = $value;
    }

    public function reveal(): string
    {
        if (self::$values === null || !isset(self::$values[$this])) {
            throw new LogicException('this secret holds no value (was it unserialized?)');
        }
        return self::$values[$this];
    }

    public function __debugInfo(): array
    {
        return ['value' => '[redacted]'];
    }

    public function __serialize(): array
    {
        throw new LogicException('a secret cannot be serialized');
    }

    public function __unserialize(array $data): void
    {
        throw new LogicException('a secret cannot be unserialized');
    }

    private function __clone()
    {
    }
}
