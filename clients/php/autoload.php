<?php

declare(strict_types=1);

/*
 * PSR-4 autoloader for projects that do not use Composer:
 *
 *     require '/path/to/clients/php/autoload.php';
 *     $market = new Market\Client('sk_test_...', ['base_url' => 'https://api.example.com']);
 *
 * With Composer, use its autoloader instead (composer.json maps Market\ to src/).
 */
spl_autoload_register(static function (string $class): void {
    $prefix = 'Market\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
