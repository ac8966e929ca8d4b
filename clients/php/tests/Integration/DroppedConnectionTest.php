<?php

declare(strict_types=1);

namespace Market\Tests\Integration;

use Market\ConnectionException;
use Market\Tests\Support\RecordingTransport;
use Market\Tests\Support\Stack;
use PHPUnit\Framework\TestCase;
use RuntimeException;

/**
 * A POST whose answer is lost (the connection drops after the API acted) is retried with
 * the same Idempotency-Key, and the API mints one link only. Between the client and nginx
 * runs tests/Support/drop_proxy.php, which forwards the first POST, reads nginx's answer
 * and closes the client's connection without passing it on.
 */
final class DroppedConnectionTest extends TestCase
{
    /** @var resource|null */
    private $proxy = null;
    private int $proxyPort = 0;
    private string $log = '';

    protected function setUp(): void
    {
        Stack::requireStack($this);
    }

    protected function tearDown(): void
    {
        if (is_resource($this->proxy)) {
            proc_terminate($this->proxy);
            proc_close($this->proxy);
        }
        if ($this->log !== '' && is_file($this->log)) {
            unlink($this->log);
        }
    }

    private function startProxy(int $dropPosts): void
    {
        $upstream = parse_url(Stack::baseUrl());
        $this->log = tempnam(sys_get_temp_dir(), 'market-php-proxy-');
        $this->proxy = proc_open(
            [PHP_BINARY, dirname(__DIR__) . '/Support/drop_proxy.php', $upstream['host'], (string) $upstream['port'], (string) $dropPosts, $this->log],
            [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => STDERR],
            $pipes,
        );
        if (!is_resource($this->proxy)) {
            throw new RuntimeException('cannot start the proxy');
        }
        $line = fgets($pipes[1]);
        if ($line === false || preg_match('/^PORT (\d+)$/', trim($line), $m) !== 1) {
            throw new RuntimeException('the proxy did not start: ' . var_export($line, true));
        }
        $this->proxyPort = (int) $m[1];
    }

    /** @return list<array{method: string, target: string, idempotency_key: ?string, status: int, dropped: bool}> */
    private function proxyLog(): array
    {
        $lines = array_filter(explode("\n", (string) file_get_contents($this->log)));
        return array_values(array_map(static fn ($l) => json_decode($l, true, 512, JSON_THROW_ON_ERROR), $lines));
    }

    private function buyerWithADownload(): array
    {
        $x = Stack::uid();
        $buyer = "acct_php_db_$x";
        Stack::writeFile("php-drop-$x/f.bin", "dropped connection test $x");
        Stack::import([
            'mode' => 'test',
            'accounts' => [['id' => "acct_php_ds_$x"], ['id' => $buyer]],
            'sellers' => [['id' => "php-ds-$x", 'account' => "acct_php_ds_$x", 'name' => 'PHP Drop Seller']],
            'products' => [['id' => "prod_php_d_$x", 'seller' => "php-ds-$x", 'title' => 'D', 'category' => 'audio', 'currency' => 'USD',
                'status' => 'published', 'tiers' => [['id' => "tier_php_d_$x", 'name' => 'P', 'price' => Stack::num('3')]],
                'files' => [['id' => "file_php_d_$x", 'filename' => 'f.bin', 'path' => "php-drop-$x/f.bin", 'size_bytes' => 30]]]],
            'orders' => [['id' => "ord_php_d_$x", 'account' => $buyer, 'status' => 'paid',
                'items' => [['product' => "prod_php_d_$x", 'tier' => "tier_php_d_$x"]]]],
        ]);
        $key = Stack::newKey($buyer);
        // Listing the orders mints the download's first link (GET /v1/orders shows one).
        $dl = Stack::client($key)->orders->list()->data[0]->downloads[0]->id;
        return [$key, $dl, "dropped connection test $x"];
    }

    private static function tokens(string $download): int
    {
        return (int) Stack::psql("SELECT count(*) FROM download_tokens WHERE download_id = '$download'");
    }

    public function testAPostRetriedAfterADroppedConnectionMintsOneLink(): void
    {
        [$key, $dl, $content] = $this->buyerWithADownload();
        $before = self::tokens($dl);
        $this->startProxy(1);

        $sleeps = [];
        $t = new RecordingTransport();
        $c = Stack::client($key, [
            'base_url' => 'http://127.0.0.1:' . $this->proxyPort,
            'transport' => $t,
            'sleep' => function (float $s) use (&$sleeps): void {
                $sleeps[] = $s;
            },
        ]);
        $link = $c->downloads->createLink($dl, ['expires_in' => 900]);

        // The client saw a failure, waited, and sent the same request again.
        self::assertNull($t->statuses()[0]);
        self::assertInstanceOf(ConnectionException::class, $t->exchanges[0]['error']);
        self::assertSame([null, 201], $t->statuses());
        self::assertCount(1, $sleeps);
        // The API acted on both copies' key once: the first copy got 201 (dropped on the
        // way back), the second its replay.
        $log = $this->proxyLog();
        self::assertCount(2, $log);
        self::assertSame(['POST', 'POST'], array_column($log, 'method'));
        self::assertSame([201, 201], array_column($log, 'status'));
        self::assertSame([true, false], array_column($log, 'dropped'));
        self::assertNotNull($log[0]['idempotency_key']);
        self::assertSame($log[0]['idempotency_key'], $log[1]['idempotency_key'], 'the retry carries the same Idempotency-Key');
        self::assertSame($t->exchanges[0]['request']->body, $t->exchanges[1]['request']->body);
        self::assertTrue($link->idempotentReplayed);

        self::assertSame($before + 1, self::tokens($dl), 'one download_tokens row for the two requests');
        [$status, $body] = Stack::httpGet($link->url);
        self::assertSame(200, $status);
        self::assertSame($content, $body);
    }

    public function testWithoutRetriesTheFailureSurfaces(): void
    {
        [$key, $dl] = $this->buyerWithADownload();
        $this->startProxy(1);
        $c = Stack::client($key, ['base_url' => 'http://127.0.0.1:' . $this->proxyPort, 'max_retries' => 0]);
        try {
            $c->downloads->createLink($dl);
            self::fail('no ConnectionException');
        } catch (ConnectionException $e) {
            self::assertNull($e->getStatus());
            self::assertContains($e->getCurlErrno(), [52, 56], 'empty reply or connection reset');
        }
        // GETs pass through the proxy untouched.
        self::assertCount(1, $c->orders->list()->data);
    }
}
