<?php

declare(strict_types=1);

namespace Market\Tests\Integration;

use Market\AuthenticationException;
use Market\ConflictException;
use Market\ConnectionException;
use Market\InvalidRequestException;
use Market\MarketException;
use Market\NotFoundException;
use Market\PermissionException;
use Market\Tests\Support\Stack;
use PHPUnit\Framework\TestCase;

/**
 * Each error status of the real stack mapped to its exception.
 */
final class ErrorsTest extends TestCase
{
    private static string $x;
    private static string $buyer;
    private static string $toRefund;

    public static function setUpBeforeClass(): void
    {
        if (Stack::env('BASE_URL') === null) {
            return;
        }
        $x = self::$x = Stack::uid();
        self::$buyer = "acct_php_eb_$x";
        self::$toRefund = "ord_php_e_$x";
        Stack::import([
            'mode' => 'test',
            'accounts' => [['id' => "acct_php_es_$x"], ['id' => self::$buyer]],
            'sellers' => [['id' => "php-es-$x", 'account' => "acct_php_es_$x", 'name' => 'PHP Errors Seller']],
            'products' => [['id' => "prod_php_e_$x", 'seller' => "php-es-$x", 'title' => 'E', 'category' => 'fonts', 'currency' => 'EUR',
                'status' => 'published', 'tiers' => [['id' => "tier_php_e_$x", 'name' => 'P', 'price' => Stack::num('7.5')]],
                'files' => [['id' => "file_php_e_$x", 'filename' => 'e.bin', 'path' => "php-e-$x/e.bin", 'size_bytes' => 1]]]],
            'orders' => [['id' => self::$toRefund, 'account' => self::$buyer, 'status' => 'paid',
                'items' => [['product' => "prod_php_e_$x", 'tier' => "tier_php_e_$x"]]]],
        ]);
    }

    protected function setUp(): void
    {
        Stack::requireStack($this);
    }

    /** @return MarketException the exception $fn threw, after checking its class */
    private function thrown(string $class, callable $fn): MarketException
    {
        try {
            $fn();
        } catch (MarketException $e) {
            self::assertSame($class, get_class($e), $e->getMessage());
            return $e;
        }
        self::fail("no $class");
    }

    public function test401AnUnknownKey(): void
    {
        $c = Stack::client('sk_test_' . str_repeat('Z', 40));
        $e = $this->thrown(AuthenticationException::class, fn () => $c->products->list());
        self::assertSame(401, $e->getStatus());
        self::assertSame('authentication_error', $e->getType());
        self::assertSame('invalid_api_key', $e->getErrorCode());
        self::assertNotSame('', $e->getMessage());
        self::assertNotNull($e->getRequestId());
        self::assertStringContainsString('Bearer realm="market"', $e->getHeaders()['www-authenticate']);
        self::assertStringNotContainsString(str_repeat('Z', 40), $e->getMessage() . $e->getBody());

        $revoked = Stack::newKey(self::$buyer);
        Stack::admin(['key', 'revoke', $revoked]);
        $e = $this->thrown(AuthenticationException::class, fn () => Stack::client($revoked)->orders->list());
        self::assertSame('invalid_api_key', $e->getErrorCode());
    }

    public function test403AReadOnlyKeyCannotPost(): void
    {
        $c = Stack::client(Stack::newKey(self::$buyer, 'test', 'read-only'));
        $dl = $c->orders->list()->data[0]->downloads[0]->id;
        $e = $this->thrown(PermissionException::class, fn () => $c->downloads->createLink($dl));
        self::assertSame(403, $e->getStatus());
        self::assertSame('permission_error', $e->getType());
        self::assertSame('insufficient_scope', $e->getErrorCode());
        self::assertStringContainsString('downloads:write', $e->getMessage());
        self::assertNotNull($e->getRateLimit(), 'an authenticated error carries the rate-limit figures');

        $e = $this->thrown(PermissionException::class, fn () => $c->webhooks->create(['url' => 'https://127.0.0.1/x']));
        self::assertStringContainsString('webhooks:write', $e->getMessage());
    }

    public function test404UnknownProductSellerAndDownload(): void
    {
        $c = Stack::client(Stack::newKey(self::$buyer));
        $e = $this->thrown(NotFoundException::class, fn () => $c->products->get('prod_php_nosuch_' . self::$x));
        self::assertSame(404, $e->getStatus());
        self::assertSame('invalid_request_error', $e->getType());
        self::assertSame('resource_missing', $e->getErrorCode());
        self::assertNotNull($e->getRequestId());
        self::assertSame($c->lastResponse()->requestId, $e->getRequestId());
        $this->thrown(NotFoundException::class, fn () => $c->sellers->get('php-nosuch-' . self::$x));
        $this->thrown(NotFoundException::class, fn () => $c->downloads->createLink('dl_nosuch' . self::$x));
        // An id with characters that need escaping is still one path segment.
        $this->thrown(NotFoundException::class, fn () => $c->products->get('a/b?c#d'));
    }

    public function test400BadParameters(): void
    {
        $c = Stack::client(Stack::newKey(self::$buyer));
        $e = $this->thrown(InvalidRequestException::class, fn () => $c->products->list(['limit' => 0]));
        self::assertSame(400, $e->getStatus());
        self::assertSame('invalid_request_error', $e->getType());
        self::assertSame('parameter_invalid', $e->getErrorCode());
        self::assertSame('limit', $e->getParam());

        $e = $this->thrown(InvalidRequestException::class, fn () => $c->products->list(['sort' => 'relevance']));
        self::assertSame('sort', $e->getParam());
        $e = $this->thrown(InvalidRequestException::class, fn () => $c->products->list(['colour' => 'red']));
        self::assertSame('parameter_unknown', $e->getErrorCode());
        self::assertSame('colour', $e->getParam());
        $e = $this->thrown(InvalidRequestException::class, fn () => $c->orders->list(['status' => 'pending']));
        self::assertSame('status', $e->getParam());
        $e = $this->thrown(InvalidRequestException::class, fn () => $c->products->list(['cursor' => 'forged']));
        self::assertSame('cursor_invalid', $e->getErrorCode());

        $dl = $c->orders->list()->data[0]->downloads[0]->id;
        $e = $this->thrown(InvalidRequestException::class, fn () => $c->downloads->createLink($dl, ['expires_in' => 5]));
        self::assertSame('expires_in', $e->getParam());
        $e = $this->thrown(InvalidRequestException::class, fn () => $c->webhooks->create(['url' => 'http://127.0.0.1/x']));
        self::assertSame('url_not_https', $e->getErrorCode());
        self::assertSame('url', $e->getParam());
        $e = $this->thrown(InvalidRequestException::class, fn () => $c->webhooks->create(['url' => 'https://127.0.0.1/x', 'events' => []]));
        self::assertSame('events', $e->getParam());
        $e = $this->thrown(InvalidRequestException::class, fn () => $c->webhooks->create([]));
        self::assertSame('parameter_missing', $e->getErrorCode());
        self::assertSame('url', $e->getParam());
    }

    public function test409ARefundedOrder(): void
    {
        $c = Stack::client(Stack::newKey(self::$buyer));
        $order = $c->orders->list()->data[0];
        self::assertSame(self::$toRefund, $order->id);
        $dl = $order->downloads[0]->id;
        $c->downloads->createLink($dl); // works while paid
        Stack::admin(['refund', self::$toRefund]);
        $e = $this->thrown(ConflictException::class, fn () => $c->downloads->createLink($dl));
        self::assertSame(409, $e->getStatus());
        self::assertSame('invalid_request_error', $e->getType());
        self::assertSame('order_refunded', $e->getErrorCode());
        self::assertSame('refunded', $c->orders->list()->data[0]->status);

        // The same Idempotency-Key with another request: 409 idempotency_conflict.
        $key = 'php-conflict-' . self::$x;
        $e = $this->thrown(ConflictException::class, fn () => $c->downloads->createLink($dl, ['idempotency_key' => $key]));
        self::assertSame('order_refunded', $e->getErrorCode());
        $e = $this->thrown(ConflictException::class, fn () => $c->downloads->createLink($dl, ['expires_in' => 60, 'idempotency_key' => $key]));
        self::assertSame('idempotency_conflict', $e->getErrorCode());
    }

    public function testNoServerAtAll(): void
    {
        // A port nothing listens on: a ConnectionException after the retries.
        $probe = stream_socket_server('tcp://127.0.0.1:0');
        $name = stream_socket_get_name($probe, false);
        fclose($probe);
        $sleeps = [];
        $c = new \Market\Client('sk_test_' . str_repeat('a', 40), [
            'base_url' => 'http://' . $name,
            'sleep' => function (float $s) use (&$sleeps): void {
                $sleeps[] = $s;
            },
        ]);
        $e = $this->thrown(ConnectionException::class, fn () => $c->products->list());
        self::assertNull($e->getStatus());
        self::assertSame(7, $e->getCurlErrno(), 'CURLE_COULDNT_CONNECT');
        self::assertCount(2, $sleeps, 'retried max_retries times');
    }
}
