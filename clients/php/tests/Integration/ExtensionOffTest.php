<?php

declare(strict_types=1);

namespace Market\Tests\Integration;

use Market\Client;
use Market\InvalidRequestException;
use Market\MarketException;
use Market\Model\WebhookSubscription;
use Market\NotFoundException;
use Market\Tests\Support\Stack;
use PHPUnit\Framework\TestCase;

/**
 * The calls of contract section 13 against a stack without the server's extension.
 *
 * test.sh starts a second, plain stack without MARKET_API_EXTENSIONS: the specification's
 * six routes only. There $client->webhooks->create() (POST /v1/webhooks, a route of the
 * specification) still subscribes, and every other webhooks call and every events call
 * throws the client's own exception for a route the server does not have:
 * NotFoundException, status 404, error code route_not_found; except webhooks->list() and
 * webhooks->all(), whose path /v1/webhooks exists for POST and so answers 405
 * method_not_allowed with Allow: POST (InvalidRequestException). The control: the main
 * stack, started with MARKET_API_EXTENSIONS=webhook-management, answers the same calls.
 *
 * Retries are off (max_retries 0): a 404 or a 405 is final anyway, and nothing may hide
 * behind a retry.
 */
final class ExtensionOffTest extends TestCase
{
    private const EVENT_ID = 'evt_1f2e3d4c5b6a79880716253443526170';

    private static string $account;
    private static ?WebhookSubscription $sub = null;

    protected function setUp(): void
    {
        Stack::requireStack($this);
        Stack::requirePlainStack($this);
        if (self::$sub === null) {
            self::$account = 'acct_php_ext_' . Stack::uid();
            Stack::plainAdmin(['import', '-'], json_encode(['mode' => 'test', 'accounts' => [['id' => self::$account]]], JSON_THROW_ON_ERROR));
            // The one call of the group that is a route of the specification: it works.
            self::$sub = $this->plain()->webhooks->create([
                'url' => 'https://127.0.0.1:9/market-php-ext',
                'events' => ['sale.completed'],
                'description' => 'ext off',
            ]);
        }
    }

    /** A client of the plain stack with a fresh read-write key of the test's account. */
    private function plain(): Client
    {
        $key = trim(Stack::plainAdmin(['key', 'create', '--account', self::$account, '--mode', 'test', '--access', 'read-write']));
        return Stack::plainClient($key, ['max_retries' => 0]);
    }

    /** The exception $fn threw; fails when it answered. */
    private static function thrown(string $name, callable $fn): MarketException
    {
        try {
            $got = $fn();
        } catch (MarketException $e) {
            return $e;
        }
        self::fail("$name answered " . var_export($got, true) . ': the route exists without the extension');
    }

    public function testCreateStillSubscribes(): void
    {
        $sub = self::$sub;
        self::assertNotNull($sub);
        self::assertStringStartsWith('we_', $sub->id);
        self::assertStringStartsWith('whsec_', (string) $sub->secret);
        self::assertSame('enabled', $sub->status);
        self::assertSame(['sale.completed'], $sub->events);
    }

    /** @return array<string, array{0: callable(Client, string): mixed}> */
    public static function missingRoutes(): array
    {
        return [
            'webhooks->get' => [fn (Client $c, string $id) => $c->webhooks->get($id)],
            'webhooks->update' => [fn (Client $c, string $id) => $c->webhooks->update($id, ['disabled' => true])],
            'webhooks->delete' => [fn (Client $c, string $id) => $c->webhooks->delete($id)],
            'webhooks->rotateSecret' => [fn (Client $c, string $id) => $c->webhooks->rotateSecret($id, ['expire_old_in' => 0])],
            'webhooks->test' => [fn (Client $c, string $id) => $c->webhooks->test($id)],
            'events->list' => [fn (Client $c) => $c->events->list(['type' => 'sale.completed'])],
            'events->all' => [fn (Client $c) => $c->events->all()->current()],
            'events->get' => [fn (Client $c) => $c->events->get(self::EVENT_ID)],
        ];
    }

    /**
     * A real subscription of this account: the 404 is the route's, not the row's.
     *
     * @dataProvider missingRoutes
     */
    public function testCallThrowsNotFoundRouteNotFound(callable $call): void
    {
        $name = (string) $this->dataName();
        $client = $this->plain();
        $id = self::$sub->id;
        $e = self::thrown($name, fn () => $call($client, $id));
        self::assertInstanceOf(NotFoundException::class, $e, "$name: " . get_class($e) . ' ' . $e->getMessage());
        self::assertSame(404, $e->getStatus());
        self::assertSame(404, $e->getCode());
        self::assertSame('invalid_request_error', $e->getType());
        self::assertSame('route_not_found', $e->getErrorCode(), $e->getMessage());
        self::assertNotNull($e->getRequestId());
    }

    /** @return array<string, array{0: callable(Client): mixed}> */
    public static function listingCalls(): array
    {
        return [
            'webhooks->list' => [fn (Client $c) => $c->webhooks->list(['limit' => 5])],
            'webhooks->all' => [fn (Client $c) => $c->webhooks->all()->current()],
        ];
    }

    /** @dataProvider listingCalls */
    public function testListingSubscriptionsThrows405AllowPost(callable $call): void
    {
        $name = (string) $this->dataName();
        $client = $this->plain();
        $e = self::thrown($name, fn () => $call($client));
        self::assertInstanceOf(InvalidRequestException::class, $e, "$name: " . get_class($e) . ' ' . $e->getMessage());
        self::assertNotInstanceOf(NotFoundException::class, $e);
        self::assertSame(405, $e->getStatus());
        self::assertSame('invalid_request_error', $e->getType());
        self::assertSame('method_not_allowed', $e->getErrorCode(), $e->getMessage());
        self::assertSame('POST', $e->getHeaders()['allow'] ?? null);
    }

    public function testControlTheMainStackHasTheExtension(): void
    {
        $account = 'acct_php_exton_' . Stack::uid();
        Stack::import(['mode' => 'test', 'accounts' => [['id' => $account]]]);
        $c = Stack::client(Stack::newKey($account), ['max_retries' => 0]);
        $page = $c->webhooks->list();
        self::assertSame([], $page->data);
        self::assertNull($page->nextCursor);
        self::assertSame([], $c->events->list()->data);
        $e = self::thrown('events->get', fn () => $c->events->get(self::EVENT_ID));
        self::assertInstanceOf(NotFoundException::class, $e);
        self::assertSame('resource_missing', $e->getErrorCode(), 'with the extension: a missing event, not a missing route');
    }
}
