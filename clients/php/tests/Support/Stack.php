<?php

declare(strict_types=1);

namespace Market\Tests\Support;

use Market\Client;
use PHPUnit\Framework\TestCase;
use RuntimeException;

/**
 * The stack the integration tests run against, as clients/php/test.sh started it
 * (tools/stack up) and exported its variables: BASE_URL, DOWNLOAD_BASE_URL, MARKET_DB,
 * MARKET_SECRET_FILE, FILES_ROOT, MARKET_ADMIN, and from test.sh MARKET_RATE_LIMIT and
 * the test TLS files PHP_IT_TLS_CA, PHP_IT_TLS_CERT, PHP_IT_TLS_KEY.
 *
 * Without BASE_URL the integration tests are skipped (test.sh runs PHPUnit with
 * --fail-on-skipped, so there a missing stack is a failure).
 *
 * That stack has the extension webhook-management (MARKET_API_EXTENSIONS), which the
 * tests of subscription management and events need. test.sh starts a second, plain stack
 * without any extension and exports its variables with the prefix PLAIN_ (PLAIN_BASE_URL,
 * PLAIN_MARKET_DB, PLAIN_MARKET_SECRET_FILE, PLAIN_MARKET_ADMIN, ...): the plain*()
 * methods below (ExtensionOffTest).
 */
final class Stack
{
    public static function requireStack(TestCase $test): void
    {
        foreach (['BASE_URL', 'MARKET_ADMIN', 'MARKET_DB', 'FILES_ROOT', 'DOWNLOAD_BASE_URL'] as $name) {
            if (self::env($name) === null) {
                $test->markTestSkipped("$name is not set: run clients/php/test.sh, which starts a stack");
            }
        }
    }

    public static function env(string $name): ?string
    {
        $v = getenv($name);
        return $v === false || $v === '' ? null : $v;
    }

    public static function need(string $name): string
    {
        return self::env($name) ?? throw new RuntimeException("$name is not set");
    }

    public static function baseUrl(): string
    {
        return self::need('BASE_URL');
    }

    /** A fresh identifier: prefix + 10 random lowercase letters and digits. */
    public static function uid(string $prefix = ''): string
    {
        $alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
        $s = '';
        for ($i = 0; $i < 10; $i++) {
            $s .= $alphabet[random_int(0, 35)];
        }
        return $prefix . $s;
    }

    /**
     * Runs a program with stdin, returns [exit status, stdout, stderr].
     *
     * @param list<string> $cmd
     * @param array<string, string>|null $env
     * @return array{0: int, 1: string, 2: string}
     */
    public static function run(array $cmd, string $stdin = '', ?array $env = null): array
    {
        $p = proc_open($cmd, [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env);
        if (!is_resource($p)) {
            throw new RuntimeException('cannot run ' . $cmd[0]);
        }
        fwrite($pipes[0], $stdin);
        fclose($pipes[0]);
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        return [proc_close($p), (string) $out, (string) $err];
    }

    /**
     * market-admin with the stack's database, secret, files root and download base.
     *
     * @param list<string> $args
     */
    public static function admin(array $args, string $stdin = ''): string
    {
        $env = getenv();
        $env['MARKET_FILES_ROOT'] = self::need('FILES_ROOT');
        $env['MARKET_DOWNLOAD_BASE_URL'] = self::need('DOWNLOAD_BASE_URL');
        [$status, $out, $err] = self::run([self::need('MARKET_ADMIN'), ...$args], $stdin, $env);
        if ($status !== 0) {
            throw new RuntimeException(sprintf('market-admin %s exited with %d: %s', implode(' ', $args), $status, trim($err)));
        }
        return $out;
    }

    /**
     * A number written into an import document exactly as given (no PHP float on the
     * way): Stack::num('90071992547409.93').
     */
    public static function num(string $decimal): string
    {
        return '#num:' . $decimal;
    }

    /** market-admin import of a document (docs/contract.md section 9); see num() for exact numbers. */
    public static function import(array $doc): void
    {
        $json = json_encode($doc, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_PRESERVE_ZERO_FRACTION);
        $json = preg_replace('/"#num:(-?[0-9]+(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"/', '$1', $json);
        self::admin(['import', '-'], $json);
    }

    public static function newKey(string $account, string $mode = 'test', string $access = 'read-write'): string
    {
        return trim(self::admin(['key', 'create', '--account', $account, '--mode', $mode, '--access', $access]));
    }

    /** Runs SQL with psql on the stack's database: unaligned, tuples only, trimmed. */
    public static function psql(string $sql): string
    {
        [$status, $out, $err] = self::run(['psql', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', self::need('MARKET_DB'), '-f', '-'], $sql);
        if ($status !== 0) {
            throw new RuntimeException('psql failed: ' . trim($err));
        }
        return trim($out);
    }

    /** Writes a file under the stack's files root. */
    public static function writeFile(string $relative, string $bytes): void
    {
        $path = self::need('FILES_ROOT') . '/' . $relative;
        if (!is_dir(dirname($path))) {
            mkdir(dirname($path), 0777, true);
        }
        file_put_contents($path, $bytes);
    }

    /**
     * A client of the stack.
     *
     * @param array<string, mixed> $options
     */
    public static function client(string $key, array $options = []): Client
    {
        return new Client($key, $options + ['base_url' => self::baseUrl()]);
    }

    public static function requirePlainStack(TestCase $test): void
    {
        foreach (['PLAIN_BASE_URL', 'PLAIN_MARKET_ADMIN', 'PLAIN_MARKET_DB', 'PLAIN_MARKET_SECRET_FILE'] as $name) {
            if (self::env($name) === null) {
                $test->markTestSkipped("$name is not set: run clients/php/test.sh, which starts a stack without extensions");
            }
        }
    }

    /**
     * market-admin on the plain stack (no extension): its database, secret, files root
     * and download base.
     *
     * @param list<string> $args
     */
    public static function plainAdmin(array $args, string $stdin = ''): string
    {
        $env = getenv();
        unset($env['MARKET_API_EXTENSIONS']);
        $env['MARKET_DB'] = self::need('PLAIN_MARKET_DB');
        $env['MARKET_SECRET_FILE'] = self::need('PLAIN_MARKET_SECRET_FILE');
        foreach (['FILES_ROOT', 'DOWNLOAD_BASE_URL'] as $name) {
            if (self::env('PLAIN_' . $name) !== null) {
                $env['MARKET_' . $name] = self::need('PLAIN_' . $name);
            }
        }
        [$status, $out, $err] = self::run([self::need('PLAIN_MARKET_ADMIN'), ...$args], $stdin, $env);
        if ($status !== 0) {
            throw new RuntimeException(sprintf('market-admin %s (plain stack) exited with %d: %s', implode(' ', $args), $status, trim($err)));
        }
        return $out;
    }

    /**
     * A client of the plain stack (no extension).
     *
     * @param array<string, mixed> $options
     */
    public static function plainClient(string $key, array $options = []): Client
    {
        return new Client($key, $options + ['base_url' => self::need('PLAIN_BASE_URL')]);
    }

    /** Forgets the rate-limit counts of every key of an account (as if its window had ended). */
    public static function resetRateLimit(string $account): void
    {
        self::psql(sprintf(
            "DELETE FROM rate_counters WHERE key_id IN (SELECT id FROM api_keys WHERE account_id = '%s')",
            str_replace("'", "''", $account),
        ));
    }

    /** A plain GET without the client (to fetch a download link). @return array{0: int, 1: string} */
    public static function httpGet(string $url): array
    {
        $ch = curl_init($url);
        curl_setopt_array($ch, [CURLOPT_RETURNTRANSFER => true, CURLOPT_TIMEOUT => 20]);
        $body = curl_exec($ch);
        return [(int) curl_getinfo($ch, CURLINFO_RESPONSE_CODE), (string) $body];
    }
}
