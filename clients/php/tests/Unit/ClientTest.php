<?php

declare(strict_types=1);

namespace Market\Tests\Unit;

use InvalidArgumentException;
use LogicException;
use Market\AuthenticationException;
use Market\Client;
use Market\ConflictException;
use Market\ConnectionException;
use Market\Http\Response;
use Market\InvalidRequestException;
use Market\MarketException;
use Market\Model\Product;
use Market\NotFoundException;
use Market\Page;
use Market\PermissionException;
use Market\RateLimitException;
use Market\RequestInfo;
use Market\ServerException;
use Market\Tests\Support\FakeTransport;
use PHPUnit\Framework\TestCase;

/**
 * The client over a scripted transport: URLs, headers, bodies, retries, errors, paging.
 */
final class ClientTest extends TestCase
{
    private const KEY = 'sk_test_UnitTestKeyAbcdefghijklmnopqrstuvwxyz0123';
    private const BASE = 'https://api.example.test';
    private const PRODUCT = '{"id":"prod_1","title":"Grotesk","description":"d","category":"fonts","price":19.99,"currency":"USD","seller":"pf",'
        . '"tiers":[{"id":"tier_1","name":"Personal","description":"","price":19.99,"currency":"USD","licence":{"seats":1,"commercial":false}},'
        . '{"id":"tier_2","name":"Empire","description":"","price":90071992547409.93,"currency":"USD","licence":{}}],'
        . '"rating":{"average":4.5,"count":2},"created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:06Z"}';
    private const LINK = '{"object":"download_link","download":"dl_1","url":"https://x.test/files/tok","expires_at":"2026-11-21T11:04:05Z"}';

    /** @var list<float> */
    private array $sleeps = [];

    private function client(FakeTransport $t, array $options = []): Client
    {
        return new Client(self::KEY, $options + [
            'base_url' => self::BASE,
            'transport' => $t,
            'sleep' => function (float $s): void {
                $this->sleeps[] = $s;
            },
        ]);
    }

    private static function ok(string $body, int $status = 200, array $headers = []): Response
    {
        return FakeTransport::json($status, $body, $headers + [
            'X-Request-Id' => 'req_ok', 'X-RateLimit-Limit' => '600', 'X-RateLimit-Remaining' => '598', 'X-RateLimit-Reset' => '42',
        ]);
    }

    private static function page(array $ids, ?string $next): string
    {
        $data = array_map(static fn ($id) => ['id' => $id, 'title' => "T $id", 'price' => 1, 'seller' => 's'], $ids);
        return json_encode(['data' => $data, 'next_cursor' => $next]);
    }

    // ------------------------------------------------------------------ construction

    public function testTheBaseUrlComesFromTheOptionElseTheEnvironmentElseAnError(): void
    {
        $old = getenv('MARKET_BASE_URL');
        try {
            putenv('MARKET_BASE_URL=http://from-env.test:8080/');
            self::assertSame('http://from-env.test:8080', (new Client(self::KEY))->baseUrl());
            self::assertSame('https://opt.test/api', (new Client(self::KEY, ['base_url' => 'https://opt.test/api/']))->baseUrl());
            putenv('MARKET_BASE_URL');
            try {
                new Client(self::KEY);
                self::fail('no base URL accepted');
            } catch (InvalidArgumentException $e) {
                self::assertStringContainsString('MARKET_BASE_URL', $e->getMessage());
            }
        } finally {
            putenv($old === false ? 'MARKET_BASE_URL' : "MARKET_BASE_URL=$old");
        }
    }

    public function testBadOptionsAreRefused(): void
    {
        foreach ([
            ['base_url' => 'ftp://x.test'],
            ['base_url' => 'https://x.test?a=1'],
            ['base_url' => self::BASE, 'max_retries' => -1],
            ['base_url' => self::BASE, 'max_retries' => '2'],
            ['base_url' => self::BASE, 'maxRetries' => 2],
            ['base_url' => self::BASE, 'timeout' => 0],
            ['base_url' => self::BASE, 'sleep' => 'not a function'],
        ] as $options) {
            try {
                new Client(self::KEY, $options);
                self::fail('accepted ' . json_encode($options));
            } catch (InvalidArgumentException) {
                self::addToAssertionCount(1);
            }
        }
        $this->expectException(InvalidArgumentException::class);
        new Client('', ['base_url' => self::BASE]);
    }

    public function testTheKeyNeverShowsInAnyRepresentationOfTheClient(): void
    {
        $t = new FakeTransport([self::ok(self::PRODUCT)]);
        $c = $this->client($t);
        $c->products->get('prod_1'); // so that the client has sent it once
        $secretPart = substr(self::KEY, 8);

        ob_start();
        var_dump($c);
        debug_zval_dump($c);
        $dumps = ob_get_clean();
        $dumps .= print_r($c, true) . var_export($c, true) . json_encode($c) . (string) $c . "$c" . json_encode((array) $c)
            . var_export((array) $c, true) . print_r($c->lastResponse(), true);
        foreach ([$secretPart, substr($secretPart, 0, 12), substr($secretPart, -12)] as $needle) {
            self::assertStringNotContainsString($needle, $dumps);
        }
        self::assertStringContainsString('sk_test_[redacted]', (string) $c);
        self::assertStringContainsString(self::BASE, print_r($c, true));

        // The key did go out, in the Authorization header.
        self::assertSame('Bearer ' . self::KEY, $t->requests[0]->header('Authorization'));
        // A request (kept in exception traces) does not show it either.
        $r = $t->requests[0];
        ob_start();
        var_dump($r);
        $rd = ob_get_clean() . print_r($r, true) . var_export($r, true) . json_encode($r);
        self::assertStringNotContainsString($secretPart, $rd);

        try {
            serialize($c);
            self::fail('a client was serialized');
        } catch (LogicException) {
            self::addToAssertionCount(1);
        }
    }

    public function testTheKeyIsNotInTheTraceOfAnErrorFromTheConstructor(): void
    {
        $old = ini_set('zend.exception_ignore_args', '0');
        try {
            new Client(self::KEY, ['base_url' => 'nope']);
            self::fail('accepted');
        } catch (InvalidArgumentException $e) {
            self::assertStringNotContainsString(substr(self::KEY, 8), print_r($e, true) . var_export($e->getTrace(), true) . $e->getTraceAsString());
        } finally {
            ini_set('zend.exception_ignore_args', (string) $old);
        }
    }

    // ------------------------------------------------------------------ requests

    public function testAGetCarriesTheKeyAndNoBodyAndGivesTypedValues(): void
    {
        $t = new FakeTransport([self::ok(self::PRODUCT)]);
        $p = $this->client($t)->products->get('prod_1/x y');
        $r = $t->requests[0];
        self::assertSame('GET', $r->method);
        self::assertSame(self::BASE . '/v1/products/prod_1%2Fx%20y', $r->url);
        self::assertSame('Bearer ' . self::KEY, $r->header('authorization'));
        self::assertSame('application/json', $r->header('Accept'));
        self::assertStringStartsWith('market-php/', $r->header('User-Agent'));
        self::assertNull($r->body);
        self::assertNull($r->header('Idempotency-Key'));
        self::assertNull($r->header('Content-Type'));

        self::assertInstanceOf(Product::class, $p);
        self::assertSame('19.99', $p->price);
        self::assertSame('19.99', $p->tiers[0]->price);
        self::assertSame(['seats' => 1, 'commercial' => false], $p->tiers[0]->licence);
        self::assertSame('90071992547409.93', $p->tiers[1]->price, 'exact, where a float would give ...409.94');
        self::assertSame([], $p->tiers[1]->licence);
        self::assertSame(4.5, $p->rating->average);
        self::assertSame(2, $p->rating->count);
        self::assertSame('2026-01-02T03:04:06+00:00', $p->updatedAt->format(DATE_ATOM));
        self::assertSame(600, $p->rateLimit->limit);
        self::assertSame(598, $p->rateLimit->remaining);
        self::assertSame(42, $p->rateLimit->reset);
        self::assertSame('req_ok', $p->requestId);
    }

    public function testListParametersAreEncodedInTheQuery(): void
    {
        $t = new FakeTransport([self::ok(self::page(['prod_a'], null)), self::ok(self::page([], null)), self::ok('{"data":[],"next_cursor":null}')]);
        $c = $this->client($t);
        $page = $c->products->list(['category' => 'fonts', 'q' => 'retro font+', 'seller' => 'pf', 'min_price' => '1.50', 'max_price' => 19.99,
            'sort' => 'price_asc', 'limit' => 10, 'cursor' => null]);
        self::assertSame(self::BASE . '/v1/products?category=fonts&q=retro%20font%2B&seller=pf&min_price=1.50&max_price=19.99&sort=price_asc&limit=10', $t->requests[0]->url);
        self::assertInstanceOf(Page::class, $page);
        self::assertSame(['prod_a'], array_map(static fn ($p) => $p->id, $page->data));
        self::assertSame('1', $page->data[0]->price);
        self::assertNull($page->nextCursor);
        self::assertFalse($page->hasMore());
        self::assertCount(1, $page);

        $c->orders->list(['status' => 'refunded', 'limit' => 3, 'cursor' => 'c_1']);
        self::assertSame(self::BASE . '/v1/orders?status=refunded&limit=3&cursor=c_1', $t->requests[1]->url);
        $c->orders->list();
        self::assertSame(self::BASE . '/v1/orders', $t->requests[2]->url);
    }

    public function testSellerGetPagesItsCatalogue(): void
    {
        $seller = '{"id":"pf","name":"Pixel Forge","bio":"Fonts","website":null,"created_at":"2026-01-01T00:00:00Z","product_count":42,'
            . '"products":{"data":[{"id":"prod_1","title":"G","price":19,"seller":"pf"}],"next_cursor":"cur2"}}';
        $t = new FakeTransport([self::ok($seller)]);
        $s = $this->client($t)->sellers->get('pf', ['limit' => 1, 'cursor' => 'cur1']);
        self::assertSame(self::BASE . '/v1/sellers/pf?limit=1&cursor=cur1', $t->requests[0]->url);
        self::assertSame(42, $s->productCount);
        self::assertNull($s->website);
        self::assertSame('cur2', $s->products->nextCursor);
        self::assertSame('19', $s->products->data[0]->price);
        self::assertSame(598, $s->products->rateLimit->remaining);
    }

    public function testAllWalksEveryPageLazily(): void
    {
        $t = new FakeTransport([
            self::ok(self::page(['p1', 'p2'], 'c1')),
            self::ok(self::page(['p3', 'p4'], 'c2')),
            self::ok(self::page(['p5'], null)),
        ]);
        $gen = $this->client($t)->products->all(['category' => 'fonts', 'limit' => 2]);
        self::assertInstanceOf(\Generator::class, $gen);
        self::assertCount(0, $t->requests, 'nothing is fetched before the loop starts');
        self::assertSame('p1', $gen->current()->id);
        self::assertCount(1, $t->requests);
        $ids = [];
        foreach ($gen as $p) {
            $ids[] = $p->id;
        }
        self::assertSame(['p1', 'p2', 'p3', 'p4', 'p5'], $ids);
        self::assertSame([
            self::BASE . '/v1/products?category=fonts&limit=2',
            self::BASE . '/v1/products?category=fonts&limit=2&cursor=c1',
            self::BASE . '/v1/products?category=fonts&limit=2&cursor=c2',
        ], array_map(static fn ($r) => $r->url, $t->requests));

        // iterator_to_array keeps every item (keys do not restart per page).
        $t2 = new FakeTransport([self::ok(self::page(['a', 'b'], 'x')), self::ok(self::page(['c'], null))]);
        self::assertSame(['a', 'b', 'c'], array_map(static fn ($p) => $p->id, iterator_to_array($this->client($t2)->products->all())));
    }

    public function testCreateLinkSendsNoBodyOrOnlyTheGivenFieldsWithAnIdempotencyKey(): void
    {
        $t = new FakeTransport([self::ok(self::LINK, 201), self::ok(self::LINK, 201), self::ok(self::LINK, 201, ['Idempotent-Replayed' => 'true'])]);
        $c = $this->client($t);
        $link = $c->downloads->createLink('dl_1');
        $r = $t->requests[0];
        self::assertSame('POST', $r->method);
        self::assertSame(self::BASE . '/v1/downloads/dl_1/link', $r->url);
        self::assertNull($r->body);
        self::assertNull($r->header('Content-Type'));
        self::assertMatchesRegularExpression('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $r->header('Idempotency-Key'));
        self::assertSame('https://x.test/files/tok', $link->url);
        self::assertSame('dl_1', $link->download);
        self::assertFalse($link->idempotentReplayed);

        $c->downloads->createLink('dl_1', ['expires_in' => 120]);
        $r2 = $t->requests[1];
        self::assertSame('{"expires_in":120}', $r2->body);
        self::assertSame('application/json', $r2->header('Content-Type'));
        self::assertNotSame($r->header('Idempotency-Key'), $r2->header('Idempotency-Key'), 'a new key per call');

        $replayed = $c->downloads->createLink('dl_1', ['expires_in' => 60, 'idempotency_key' => 'order-42/link']);
        self::assertSame('{"expires_in":60}', $t->requests[2]->body);
        self::assertSame('order-42/link', $t->requests[2]->header('Idempotency-Key'));
        self::assertTrue($replayed->idempotentReplayed);
        self::assertTrue($c->lastResponse()->idempotentReplayed());
    }

    public function testAnIdempotencyKeyThatCouldInjectAHeaderIsRefusedBeforeSending(): void
    {
        $t = new FakeTransport([]);
        $c = $this->client($t);
        foreach (["k\r\nX-Evil: 1", '', str_repeat('k', 256), "tab\tkey", 'ключ'] as $bad) {
            try {
                $c->downloads->createLink('dl_1', ['idempotency_key' => $bad]);
                self::fail('accepted ' . json_encode($bad));
            } catch (InvalidArgumentException) {
                self::addToAssertionCount(1);
            }
        }
        self::assertSame([], $t->requests);
    }

    public function testWebhookCreateSendsItsFieldsAsJson(): void
    {
        $sub = '{"id":"we_1","object":"webhook_subscription","url":"https://h.test/x","events":["sale.completed","payout.sent"],'
            . '"description":"shop ü","status":"enabled","livemode":false,"secret":"whsec_abc=","created_at":"2026-11-21T10:04:05Z"}';
        $t = new FakeTransport([self::ok($sub, 201), self::ok($sub, 201)]);
        $c = $this->client($t);
        $s = $c->webhooks->create(['url' => 'https://h.test/x', 'events' => ['payout.sent', 'sale.completed'], 'description' => 'shop ü', 'idempotency_key' => 'abc']);
        $r = $t->requests[0];
        self::assertSame(self::BASE . '/v1/webhooks', $r->url);
        self::assertSame('{"url":"https://h.test/x","events":["payout.sent","sale.completed"],"description":"shop ü"}', $r->body);
        self::assertSame('abc', $r->header('Idempotency-Key'));
        self::assertSame('application/json', $r->header('Content-Type'));
        self::assertSame(['sale.completed', 'payout.sent'], $s->events);
        self::assertSame('whsec_abc=', $s->secret);
        self::assertFalse($s->livemode);

        $c->webhooks->create(['url' => 'https://h.test/x', 'events' => null, 'description' => null]);
        self::assertSame('{"url":"https://h.test/x"}', $t->requests[1]->body);
        self::assertNotNull($t->requests[1]->header('Idempotency-Key'));
    }

    // ------------------------------------------------------------------ retries

    public function testA429IsRetriedAfterItsRetryAfter(): void
    {
        $t = new FakeTransport([
            FakeTransport::error(429, 'rate_limit_error', 'rate_limited', 'slow down', null, ['Retry-After' => '37']),
            self::ok(self::PRODUCT),
        ]);
        $c = $this->client($t);
        $p = $c->products->get('prod_1');
        self::assertSame('prod_1', $p->id);
        self::assertSame([37.0], $this->sleeps);
        self::assertCount(2, $t->requests);
        self::assertSame($t->requests[0]->url, $t->requests[1]->url);
        self::assertSame(2, $c->lastResponse()->attempts);
    }

    public function testRetriesStopAtMaxRetries(): void
    {
        $limited = fn () => FakeTransport::error(429, 'rate_limit_error', 'rate_limited', 'slow down', null, ['Retry-After' => '5']);
        $t = new FakeTransport([$limited(), $limited(), $limited(), $limited()]);
        try {
            $this->client($t)->products->list();
            self::fail('no exception');
        } catch (RateLimitException $e) {
            self::assertSame(429, $e->getStatus());
            self::assertSame('rate_limit_error', $e->getType());
            self::assertSame('rate_limited', $e->getErrorCode());
            self::assertSame(5, $e->getRetryAfter());
            self::assertSame(0, $e->getRateLimitRemaining());
            self::assertSame(600, $e->getRateLimitLimit());
            self::assertSame(17, $e->getRateLimitReset());
            self::assertSame('req_429', $e->getRequestId());
        }
        self::assertCount(3, $t->requests, 'default max_retries is 2: three requests');
        self::assertSame([5.0, 5.0], $this->sleeps);

        $this->sleeps = [];
        $t0 = new FakeTransport([$limited()]);
        $this->expectException(RateLimitException::class);
        try {
            $this->client($t0, ['max_retries' => 0])->products->list();
        } finally {
            self::assertSame([], $this->sleeps);
        }
    }

    public function testA503IsRetriedAndAPostKeepsItsIdempotencyKey(): void
    {
        $t = new FakeTransport([
            FakeTransport::error(503, 'api_error', 'service_unavailable', 'try again', null, ['Retry-After' => '1']),
            self::ok(self::LINK, 201),
        ]);
        $this->client($t)->downloads->createLink('dl_1', ['expires_in' => 600]);
        self::assertSame([1.0], $this->sleeps);
        self::assertCount(2, $t->requests);
        self::assertSame($t->requests[0]->header('Idempotency-Key'), $t->requests[1]->header('Idempotency-Key'));
        self::assertSame($t->requests[0]->body, $t->requests[1]->body);
    }

    public function testNetworkFailuresAreRetriedForGetsAndForPostsWithTheSameKey(): void
    {
        $drop = static fn () => new ConnectionException('connection reset', 56);
        $t = new FakeTransport([$drop(), self::ok(self::PRODUCT)]);
        self::assertSame('prod_1', $this->client($t)->products->get('prod_1')->id);
        self::assertCount(2, $t->requests);
        self::assertCount(1, $this->sleeps);

        $t2 = new FakeTransport([$drop(), $drop(), self::ok(self::LINK, 201)]);
        $this->client($t2)->downloads->createLink('dl_1');
        self::assertCount(3, $t2->requests);
        $keys = array_map(static fn ($r) => $r->header('Idempotency-Key'), $t2->requests);
        self::assertCount(1, array_unique($keys), 'one Idempotency-Key for every attempt');
        self::assertNotNull($keys[0]);

        $t3 = new FakeTransport([$drop(), $drop(), $drop()]);
        try {
            $this->client($t3)->orders->list();
            self::fail('no exception');
        } catch (ConnectionException $e) {
            self::assertNull($e->getStatus());
            self::assertSame(56, $e->getCurlErrno());
        }
        self::assertCount(3, $t3->requests);
    }

    public function testOtherErrorsAreNotRetried(): void
    {
        foreach ([400, 401, 403, 404, 409, 500] as $status) {
            $t = new FakeTransport([FakeTransport::error($status, 'x', 'y', 'z')]);
            try {
                $this->client($t)->products->list();
                self::fail("no exception for $status");
            } catch (MarketException $e) {
                self::assertSame($status, $e->getStatus());
            }
            self::assertCount(1, $t->requests, "status $status");
        }
        self::assertSame([], $this->sleeps);
    }

    // ------------------------------------------------------------------ errors

    public function testEachStatusMapsToItsKind(): void
    {
        $cases = [
            [400, 'invalid_request_error', 'parameter_invalid', 'limit', InvalidRequestException::class],
            [401, 'authentication_error', 'invalid_api_key', null, AuthenticationException::class],
            [403, 'permission_error', 'insufficient_scope', null, PermissionException::class],
            [404, 'invalid_request_error', 'resource_missing', 'id', NotFoundException::class],
            [405, 'invalid_request_error', 'method_not_allowed', null, InvalidRequestException::class],
            [409, 'invalid_request_error', 'order_refunded', null, ConflictException::class],
            [413, 'invalid_request_error', 'body_too_large', null, InvalidRequestException::class],
            [415, 'invalid_request_error', 'unsupported_media_type', null, InvalidRequestException::class],
            [500, 'api_error', 'internal_error', null, ServerException::class],
            [502, 'api_error', 'service_unavailable', null, ServerException::class],
        ];
        foreach ($cases as [$status, $type, $code, $param, $class]) {
            $t = new FakeTransport([FakeTransport::error($status, $type, $code, "message $status", $param)]);
            try {
                $this->client($t, ['max_retries' => 0])->products->get('prod_1');
                self::fail("no exception for $status");
            } catch (MarketException $e) {
                self::assertSame($class, get_class($e), "status $status");
                self::assertSame($status, $e->getStatus());
                self::assertSame($status, $e->getCode());
                self::assertSame($type, $e->getType());
                self::assertSame($code, $e->getErrorCode());
                self::assertSame("message $status", $e->getMessage());
                self::assertSame($param, $e->getParam());
                self::assertSame("req_$status", $e->getRequestId());
                self::assertSame(599, $e->getRateLimit()->remaining);
            }
        }
    }

    public function testAnErrorWithoutTheApiEnvelope(): void
    {
        $t = new FakeTransport([new Response(502, ['content-type' => 'text/html', 'x-request-id' => 'gw1'], '<html>Bad Gateway</html>')]);
        try {
            $this->client($t, ['max_retries' => 0])->products->list();
            self::fail('no exception');
        } catch (ServerException $e) {
            self::assertSame(502, $e->getStatus());
            self::assertNull($e->getErrorCode());
            self::assertStringContainsString('502', $e->getMessage());
            self::assertSame('gw1', $e->getRequestId());
            self::assertNull($e->getRateLimit());
            self::assertSame('<html>Bad Gateway</html>', $e->getBody());
        }
    }

    public function testASuccessThatIsNotTheExpectedJson(): void
    {
        foreach (['not json', '[]', '{"data":[{"id":1}],"next_cursor":null}', '{"data":[]}'] as $body) {
            $t = new FakeTransport([self::ok($body)]);
            try {
                $this->client($t)->products->list();
                self::fail('accepted ' . $body);
            } catch (MarketException $e) {
                self::assertSame(MarketException::class, get_class($e));
                self::assertSame(200, $e->getStatus());
            }
        }
    }

    public function testTheHookSeesEveryAttemptAndNeverTheKey(): void
    {
        $t = new FakeTransport([
            new Response(502, ['content-type' => 'text/html', 'x-request-id' => 'gw1'], '<html>Bad Gateway</html>'),
            new ConnectionException('could not reach the API: Connection reset by peer (curl error 56)', 56),
            new ConnectionException('timed out (curl error 28)', 28),
            self::ok(self::page(['prod_1'], null)),
        ]);
        $seen = [];
        $c = $this->client($t, ['max_retries' => 3, 'on_response' => function (RequestInfo $i) use (&$seen): void {
            $seen[] = $i;
        }]);
        $c->products->list(['limit' => 2]);
        self::assertSame([
            ['GET', '/v1/products?limit=2', 502, null, 'gw1', 1],
            ['GET', '/v1/products?limit=2', null, 'could not reach the API: Connection reset by peer (curl error 56)', null, 2],
            ['GET', '/v1/products?limit=2', null, 'timeout', null, 3],
            ['GET', '/v1/products?limit=2', 200, null, 'req_ok', 4],
        ], array_map(static fn (RequestInfo $i): array => [$i->method, $i->path, $i->status, $i->error, $i->requestId, $i->attempt], $seen));
        foreach ($seen as $i) {
            self::assertGreaterThanOrEqual(0.0, $i->durationMs);
        }
        $shown = print_r($seen, true) . var_export($seen, true) . serialize($seen) . json_encode($seen);
        self::assertStringNotContainsString(self::KEY, $shown);
        self::assertStringNotContainsString(substr(self::KEY, 8), $shown);
        self::assertStringNotContainsStringIgnoringCase('bearer', $shown);
        self::assertStringNotContainsStringIgnoringCase('authorization', $shown);
    }

    public function testAHookThatThrowsChangesNothingAndMustBeCallable(): void
    {
        $t = new FakeTransport([self::ok(self::page(['prod_1'], null))]);
        $c = $this->client($t, ['on_response' => static function (): void {
            throw new \RuntimeException('hook');
        }]);
        self::assertCount(1, $c->products->list()->data);
        $this->expectException(InvalidArgumentException::class);
        new Client(self::KEY, ['base_url' => self::BASE, 'on_response' => 'not a function at all']);
    }
}
