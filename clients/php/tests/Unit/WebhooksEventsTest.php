<?php

declare(strict_types=1);

namespace Market\Tests\Unit;

use DateTime;
use DateTimeImmutable;
use DateTimeZone;
use InvalidArgumentException;
use Market\Client;
use Market\ConnectionException;
use Market\Http\Response;
use Market\MarketException;
use Market\Model\DeletedWebhookSubscription;
use Market\Model\Event;
use Market\Model\EventDelivery;
use Market\Model\WebhookSubscription;
use Market\NotFoundException;
use Market\Page;
use Market\Tests\Support\FakeTransport;
use PHPUnit\Framework\TestCase;

/**
 * Managing webhook subscriptions and reading events, over a scripted transport: methods,
 * paths, queries, bodies, Idempotency-Keys and their reuse on retries, typed answers.
 */
final class WebhooksEventsTest extends TestCase
{
    private const KEY = 'sk_test_UnitTestKeyAbcdefghijklmnopqrstuvwxyz0123';
    private const BASE = 'https://api.example.test';
    private const UUID = '/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/';
    private const SUB = '{"id":"we_1","object":"webhook_subscription","url":"https://h.test/x","events":["sale.completed","payout.sent"],'
        . '"description":"shop","status":"disabled","livemode":false,"created_at":"2026-11-21T10:04:05Z","updated_at":"2026-11-22T11:05:06Z"}';
    private const ROTATED = '{"id":"we_1","object":"webhook_subscription","url":"https://h.test/x","events":["sale.completed"],'
        . '"description":"","status":"enabled","livemode":true,"secret":"whsec_bmV3IHNlY3JldA==","created_at":"2026-11-21T10:04:05Z","updated_at":"2026-11-26T10:04:05Z"}';
    private const DELETED = '{"id":"we_1","object":"webhook_subscription","deleted":true}';
    private const TEST_EVENT = '{"id":"evt_t1","type":"webhook.test","created_at":"2026-11-26T10:04:05Z","livemode":false,"data":{"subscription":"we_1"}}';

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

    private static function subPage(array $ids, ?string $next): string
    {
        $data = array_map(static fn ($id) => json_decode(str_replace('"we_1"', json_encode($id), self::SUB), true), $ids);
        return json_encode(['data' => $data, 'next_cursor' => $next], JSON_UNESCAPED_SLASHES);
    }

    private static function eventPage(array $ids, ?string $next): string
    {
        $data = array_map(static fn ($id) => json_decode(str_replace('"evt_t1"', json_encode($id), self::TEST_EVENT), true), $ids);
        return json_encode(['data' => $data, 'next_cursor' => $next], JSON_UNESCAPED_SLASHES);
    }

    /** @return list<string> */
    private static function urls(FakeTransport $t): array
    {
        return array_map(static fn ($r) => $r->url, $t->requests);
    }

    // ------------------------------------------------------------------ webhooks: reading

    public function testWebhooksListGivesAPageOfSubscriptionsWithoutSecrets(): void
    {
        $t = new FakeTransport([self::ok(self::subPage(['we_2', 'we_1'], 'cur1')), self::ok(self::subPage([], null))]);
        $c = $this->client($t);
        $page = $c->webhooks->list(['limit' => 2, 'cursor' => 'cur0']);
        $r = $t->requests[0];
        self::assertSame('GET', $r->method);
        self::assertSame(self::BASE . '/v1/webhooks?limit=2&cursor=cur0', $r->url);
        self::assertNull($r->body);
        self::assertNull($r->header('Idempotency-Key'));
        self::assertInstanceOf(Page::class, $page);
        self::assertSame('cur1', $page->nextCursor);
        self::assertSame(598, $page->rateLimit->remaining);
        self::assertSame(['we_2', 'we_1'], array_map(static fn ($s) => $s->id, $page->data));
        $s = $page->data[1];
        self::assertInstanceOf(WebhookSubscription::class, $s);
        self::assertSame('webhook_subscription', $s->object);
        self::assertSame('https://h.test/x', $s->url);
        self::assertSame(['sale.completed', 'payout.sent'], $s->events);
        self::assertSame('shop', $s->description);
        self::assertSame('disabled', $s->status);
        self::assertFalse($s->livemode);
        self::assertNull($s->secret, 'a listed subscription has no secret');
        self::assertSame('2026-11-21T10:04:05+00:00', $s->createdAt->format(DATE_ATOM));
        self::assertSame('2026-11-22T11:05:06+00:00', $s->updatedAt->format(DATE_ATOM));

        $c->webhooks->list();
        self::assertSame(self::BASE . '/v1/webhooks', $t->requests[1]->url);
    }

    public function testWebhooksAllWalksEveryPageLazily(): void
    {
        $t = new FakeTransport([self::ok(self::subPage(['we_3'], 'c1')), self::ok(self::subPage(['we_2'], 'c2')), self::ok(self::subPage(['we_1'], null))]);
        $gen = $this->client($t)->webhooks->all(['limit' => 1]);
        self::assertCount(0, $t->requests, 'nothing is fetched before the loop starts');
        self::assertSame(['we_3', 'we_2', 'we_1'], array_map(static fn ($s) => $s->id, iterator_to_array($gen)));
        self::assertSame([
            self::BASE . '/v1/webhooks?limit=1',
            self::BASE . '/v1/webhooks?limit=1&cursor=c1',
            self::BASE . '/v1/webhooks?limit=1&cursor=c2',
        ], self::urls($t));
    }

    public function testWebhooksGetEscapesItsIdAndRefusesAnEmptyOne(): void
    {
        $t = new FakeTransport([self::ok(self::SUB)]);
        $c = $this->client($t);
        $s = $c->webhooks->get('we_1/x y?');
        self::assertSame('GET', $t->requests[0]->method);
        self::assertSame(self::BASE . '/v1/webhooks/we_1%2Fx%20y%3F', $t->requests[0]->url);
        self::assertSame('we_1', $s->id);
        self::assertNull($s->secret);
        self::assertSame('req_ok', $s->requestId);
        self::assertSame(42, $s->rateLimit->reset);

        foreach ([
            fn () => $c->webhooks->get(''),
            fn () => $c->webhooks->update(''),
            fn () => $c->webhooks->delete(''),
            fn () => $c->webhooks->rotateSecret(''),
            fn () => $c->webhooks->test(''),
            fn () => $c->events->get(''),
        ] as $i => $call) {
            try {
                $call();
                self::fail("call $i accepted an empty id");
            } catch (InvalidArgumentException) {
                self::addToAssertionCount(1);
            }
        }
        self::assertCount(1, $t->requests, 'nothing sent for an empty id');
    }

    public function testASubscriptionWithoutUpdatedAtOrWithAMalformedOneAsTheCreateAnswerOnceWas(): void
    {
        $created = '{"id":"we_1","object":"webhook_subscription","url":"https://h.test/x","events":["sale.completed"],'
            . '"description":"","status":"enabled","livemode":false,"secret":"whsec_abc=","created_at":"2026-11-21T10:04:05Z"}';
        $s = WebhookSubscription::fromArray(\Market\Internal\Json::decode($created));
        self::assertNull($s->updatedAt);
        self::assertSame('whsec_abc=', $s->secret);

        $t = new FakeTransport([self::ok(str_replace('"updated_at":"2026-11-22T11:05:06Z"', '"updated_at":5', self::SUB))]);
        $this->expectException(MarketException::class);
        $this->client($t)->webhooks->get('we_1');
    }

    // ------------------------------------------------------------------ webhooks: changes

    public function testUpdateSendsTheGivenFieldsAndAnEmptyUpdateAsTheObjectBraces(): void
    {
        $t = new FakeTransport([self::ok(self::SUB), self::ok(self::SUB), self::ok(self::SUB), self::ok(self::SUB, 200, ['Idempotent-Replayed' => 'true'])]);
        $c = $this->client($t);
        $s = $c->webhooks->update('we_1', [
            'url' => 'https://h.test/y', 'events' => ['payout.sent'], 'description' => 'shop ü', 'disabled' => true,
        ]);
        $r = $t->requests[0];
        self::assertSame('POST', $r->method);
        self::assertSame(self::BASE . '/v1/webhooks/we_1', $r->url);
        self::assertSame('{"url":"https://h.test/y","events":["payout.sent"],"description":"shop ü","disabled":true}', $r->body);
        self::assertSame('application/json', $r->header('Content-Type'));
        self::assertMatchesRegularExpression(self::UUID, $r->header('Idempotency-Key'));
        self::assertSame('disabled', $s->status);
        self::assertSame('2026-11-22T11:05:06+00:00', $s->updatedAt->format(DATE_ATOM));
        self::assertFalse($s->idempotentReplayed);

        // No field: the JSON object {}, never PHP's empty array [].
        $c->webhooks->update('we_1');
        self::assertSame('{}', $t->requests[1]->body);
        self::assertSame('application/json', $t->requests[1]->header('Content-Type'));
        self::assertMatchesRegularExpression(self::UUID, $t->requests[1]->header('Idempotency-Key'));
        self::assertNotSame($r->header('Idempotency-Key'), $t->requests[1]->header('Idempotency-Key'), 'a new key per call');

        // null counts as absent; false is a value.
        $c->webhooks->update('we_1', ['description' => null, 'disabled' => false, 'url' => null]);
        self::assertSame('{"disabled":false}', $t->requests[2]->body);

        $replayed = $c->webhooks->update('we_1', ['description' => '', 'idempotency_key' => 'upd-1']);
        self::assertSame('{"description":""}', $t->requests[3]->body);
        self::assertSame('upd-1', $t->requests[3]->header('Idempotency-Key'));
        self::assertTrue($replayed->idempotentReplayed);
    }

    public function testDeleteIsADeleteWithAnIdempotencyKeyAndNoBody(): void
    {
        $t = new FakeTransport([self::ok(self::DELETED), self::ok(self::DELETED, 200, ['Idempotent-Replayed' => 'true']), self::ok(self::DELETED)]);
        $c = $this->client($t);
        $d = $c->webhooks->delete('we_1');
        $r = $t->requests[0];
        self::assertSame('DELETE', $r->method);
        self::assertSame(self::BASE . '/v1/webhooks/we_1', $r->url);
        self::assertNull($r->body);
        self::assertNull($r->header('Content-Type'));
        self::assertMatchesRegularExpression(self::UUID, $r->header('Idempotency-Key'));
        self::assertInstanceOf(DeletedWebhookSubscription::class, $d);
        self::assertSame('we_1', $d->id);
        self::assertSame('webhook_subscription', $d->object);
        self::assertTrue($d->deleted);
        self::assertFalse($d->idempotentReplayed);
        self::assertSame('req_ok', $d->requestId);

        $again = $c->webhooks->delete('we_1', ['idempotency_key' => 'del-we_1']);
        self::assertSame('del-we_1', $t->requests[1]->header('Idempotency-Key'));
        self::assertNull($t->requests[1]->body);
        self::assertTrue($again->idempotentReplayed);

        // An unknown option goes to the API as it is, which names it (parameter_unknown).
        $c->webhooks->delete('we_1', ['colour' => 'red']);
        self::assertSame('{"colour":"red"}', $t->requests[2]->body);
    }

    public function testRotateSecretSendsExpireOldInZeroIncludedAndGivesTheNewSecret(): void
    {
        $t = new FakeTransport([self::ok(self::ROTATED), self::ok(self::ROTATED), self::ok(self::ROTATED)]);
        $c = $this->client($t);
        $s = $c->webhooks->rotateSecret('we_1', ['expire_old_in' => 3600]);
        $r = $t->requests[0];
        self::assertSame('POST', $r->method);
        self::assertSame(self::BASE . '/v1/webhooks/we_1/rotate_secret', $r->url);
        self::assertSame('{"expire_old_in":3600}', $r->body);
        self::assertMatchesRegularExpression(self::UUID, $r->header('Idempotency-Key'));
        self::assertSame('whsec_bmV3IHNlY3JldA==', $s->secret);
        self::assertTrue($s->livemode);
        self::assertSame('2026-11-26T10:04:05+00:00', $s->updatedAt->format(DATE_ATOM));

        $c->webhooks->rotateSecret('we_1', ['expire_old_in' => 0, 'idempotency_key' => 'rot-1']);
        self::assertSame('{"expire_old_in":0}', $t->requests[1]->body, '0 is a value, not an absent one');
        self::assertSame('rot-1', $t->requests[1]->header('Idempotency-Key'));

        $c->webhooks->rotateSecret('we_1');
        self::assertNull($t->requests[2]->body, 'no option: no body, the server keeps its default grace');
        self::assertNull($t->requests[2]->header('Content-Type'));
        self::assertMatchesRegularExpression(self::UUID, $t->requests[2]->header('Idempotency-Key'));
    }

    public function testTestQueuesAnEventAndGivesIt(): void
    {
        $t = new FakeTransport([self::ok(self::TEST_EVENT, 202), self::ok(self::TEST_EVENT, 202, ['Idempotent-Replayed' => 'true'])]);
        $c = $this->client($t);
        $e = $c->webhooks->test('we_1');
        $r = $t->requests[0];
        self::assertSame('POST', $r->method);
        self::assertSame(self::BASE . '/v1/webhooks/we_1/test', $r->url);
        self::assertNull($r->body);
        self::assertNull($r->header('Content-Type'));
        self::assertMatchesRegularExpression(self::UUID, $r->header('Idempotency-Key'));
        self::assertInstanceOf(Event::class, $e);
        self::assertSame('evt_t1', $e->id);
        self::assertSame(Event::WEBHOOK_TEST, $e->type);
        self::assertSame(['subscription' => 'we_1'], $e->data);
        self::assertFalse($e->livemode);
        self::assertSame('2026-11-26T10:04:05+00:00', $e->createdAt->format(DATE_ATOM));
        self::assertNull($e->deliveries, 'the answer of test() carries no deliveries');
        self::assertSame(598, $e->rateLimit->remaining);
        self::assertFalse($e->idempotentReplayed);
        self::assertSame(202, $c->lastResponse()->status);

        $replayed = $c->webhooks->test('we_1', ['idempotency_key' => 'test-1']);
        self::assertSame('test-1', $t->requests[1]->header('Idempotency-Key'));
        self::assertTrue($replayed->idempotentReplayed);
    }

    public function testEveryChangeKeepsItsIdempotencyKeyAndBodyAcrossRetries(): void
    {
        $calls = [
            'update' => [fn (Client $c) => $c->webhooks->update('we_1', ['disabled' => true]), self::SUB, 'POST', '/v1/webhooks/we_1', '{"disabled":true}'],
            'update {}' => [fn (Client $c) => $c->webhooks->update('we_1'), self::SUB, 'POST', '/v1/webhooks/we_1', '{}'],
            'delete' => [fn (Client $c) => $c->webhooks->delete('we_1'), self::DELETED, 'DELETE', '/v1/webhooks/we_1', null],
            'rotateSecret' => [fn (Client $c) => $c->webhooks->rotateSecret('we_1', ['expire_old_in' => 60]), self::ROTATED, 'POST', '/v1/webhooks/we_1/rotate_secret', '{"expire_old_in":60}'],
            'test' => [fn (Client $c) => $c->webhooks->test('we_1'), self::TEST_EVENT, 'POST', '/v1/webhooks/we_1/test', null],
        ];
        foreach ($calls as $name => [$call, $answer, $method, $path, $body]) {
            $this->sleeps = [];
            $t = new FakeTransport([
                FakeTransport::error(503, 'api_error', 'service_unavailable', 'try again', null, ['Retry-After' => '1']),
                new ConnectionException('connection reset', 56),
                self::ok($answer, $name === 'test' ? 202 : 200),
            ]);
            $c = $this->client($t);
            $call($c);
            self::assertCount(3, $t->requests, $name);
            self::assertCount(2, $this->sleeps, $name);
            $keys = array_unique(array_map(static fn ($r) => $r->header('Idempotency-Key'), $t->requests));
            self::assertCount(1, $keys, "$name: one Idempotency-Key for every attempt");
            self::assertMatchesRegularExpression(self::UUID, (string) reset($keys), $name);
            foreach ($t->requests as $r) {
                self::assertSame($method, $r->method, $name);
                self::assertSame(self::BASE . $path, $r->url, $name);
                self::assertSame($body, $r->body, $name);
            }
            self::assertSame(3, $c->lastResponse()->attempts, $name);
        }
    }

    public function testAChangeWithAKeyThatCouldInjectAHeaderIsRefusedBeforeSending(): void
    {
        $t = new FakeTransport([]);
        $c = $this->client($t);
        foreach ([
            fn () => $c->webhooks->update('we_1', ['idempotency_key' => "k\r\nX-Evil: 1"]),
            fn () => $c->webhooks->delete('we_1', ['idempotency_key' => '']),
            fn () => $c->webhooks->rotateSecret('we_1', ['idempotency_key' => str_repeat('k', 256)]),
            fn () => $c->webhooks->test('we_1', ['idempotency_key' => "tab\tkey"]),
        ] as $i => $call) {
            try {
                $call();
                self::fail("call $i accepted a bad key");
            } catch (InvalidArgumentException) {
                self::addToAssertionCount(1);
            }
        }
        self::assertSame([], $t->requests);
    }

    // ------------------------------------------------------------------ events

    public function testEventsListEncodesItsFiltersWithDatesInUtc(): void
    {
        $t = new FakeTransport(array_fill(0, 5, self::ok(self::eventPage(['evt_2', 'evt_1'], 'n1'))));
        $c = $this->client($t);
        $page = $c->events->list([
            'type' => Event::WEBHOOK_TEST,
            'created_gte' => new DateTimeImmutable('2026-11-26T12:04:05', new DateTimeZone('+02:00')),
            'created_lt' => new DateTimeImmutable('2026-11-27T10:04:05.250000Z'),
            'limit' => 2,
            'cursor' => 'c0',
        ]);
        self::assertSame('GET', $t->requests[0]->method);
        self::assertSame(
            self::BASE . '/v1/events?type=webhook.test&created_gte=2026-11-26T10%3A04%3A05Z&created_lt=2026-11-27T10%3A04%3A05.25Z&limit=2&cursor=c0',
            $t->requests[0]->url,
        );
        self::assertNull($t->requests[0]->body);
        self::assertSame(['evt_2', 'evt_1'], array_map(static fn ($e) => $e->id, $page->data));
        self::assertContainsOnlyInstancesOf(Event::class, $page->data);
        self::assertNull($page->data[0]->deliveries);
        self::assertSame('n1', $page->nextCursor);

        // A string is sent as it is (offset and fraction included); a mutable DateTime
        // in another zone is converted to UTC; microseconds keep their digits.
        $c->events->list(['created_gte' => '2026-11-26T10:04:05.5+01:00']);
        self::assertSame(self::BASE . '/v1/events?created_gte=2026-11-26T10%3A04%3A05.5%2B01%3A00', $t->requests[1]->url);
        $c->events->list(['created_lt' => new DateTime('2026-11-26 05:04:05.000123', new DateTimeZone('America/New_York'))]);
        self::assertSame(self::BASE . '/v1/events?created_lt=2026-11-26T10%3A04%3A05.000123Z', $t->requests[2]->url);
        $c->events->list(['type' => 'sale.refunded', 'created_gte' => null]);
        self::assertSame(self::BASE . '/v1/events?type=sale.refunded', $t->requests[3]->url);
        $c->events->list();
        self::assertSame(self::BASE . '/v1/events', $t->requests[4]->url);
    }

    public function testEventsAllKeepsTheFiltersOnEveryPage(): void
    {
        $t = new FakeTransport([self::ok(self::eventPage(['evt_3', 'evt_2'], 'c1')), self::ok(self::eventPage(['evt_1'], null))]);
        $gen = $this->client($t)->events->all(['created_gte' => new DateTimeImmutable('2026-11-26T10:04:05Z'), 'limit' => 2]);
        self::assertCount(0, $t->requests, 'nothing is fetched before the loop starts');
        self::assertSame(['evt_3', 'evt_2', 'evt_1'], array_map(static fn ($e) => $e->id, iterator_to_array($gen)));
        self::assertSame([
            self::BASE . '/v1/events?created_gte=2026-11-26T10%3A04%3A05Z&limit=2',
            self::BASE . '/v1/events?created_gte=2026-11-26T10%3A04%3A05Z&limit=2&cursor=c1',
        ], self::urls($t));
    }

    public function testEventsGetParsesDeliveriesWithTheirNulls(): void
    {
        $body = '{"id":"evt_1","type":"sale.completed","created_at":"2026-11-21T10:04:05Z","livemode":true,'
            . '"data":{"order":"ord_1","product":"prod_1","tier":"tier_1","amount":90071992547409.93,"currency":"USD"},'
            . '"deliveries":['
            . '{"subscription":"we_1","status":"delivered","attempts":2,"last_attempt_at":"2026-11-21T10:04:11Z","last_status":204,"last_error":null},'
            . '{"subscription":"we_2","status":"pending","attempts":0,"last_attempt_at":null,"last_status":null,"last_error":null},'
            . '{"subscription":"we_3","status":"failed","attempts":1,"last_attempt_at":"2026-11-21T10:04:06Z","last_status":null,"last_error":"subscription disabled"}]}';
        $t = new FakeTransport([self::ok($body)]);
        $e = $this->client($t)->events->get('evt_1/?');
        self::assertSame('GET', $t->requests[0]->method);
        self::assertSame(self::BASE . '/v1/events/evt_1%2F%3F', $t->requests[0]->url);
        self::assertSame('evt_1', $e->id);
        self::assertSame(Event::SALE_COMPLETED, $e->type);
        self::assertTrue($e->livemode);
        self::assertSame('90071992547409.93', $e->data['amount'], 'money exact, as a string');
        self::assertSame(['order' => 'ord_1', 'product' => 'prod_1', 'tier' => 'tier_1', 'amount' => '90071992547409.93', 'currency' => 'USD'], $e->data);
        self::assertSame('req_ok', $e->requestId);
        self::assertCount(3, $e->deliveries);
        self::assertContainsOnlyInstancesOf(EventDelivery::class, $e->deliveries);

        [$d1, $d2, $d3] = $e->deliveries;
        self::assertSame('we_1', $d1->subscription);
        self::assertSame(EventDelivery::DELIVERED, $d1->status);
        self::assertSame(2, $d1->attempts);
        self::assertSame('2026-11-21T10:04:11+00:00', $d1->lastAttemptAt->format(DATE_ATOM));
        self::assertSame(204, $d1->lastStatus);
        self::assertNull($d1->lastError);

        self::assertSame('we_2', $d2->subscription);
        self::assertSame('pending', $d2->status);
        self::assertSame(0, $d2->attempts);
        self::assertNull($d2->lastAttemptAt);
        self::assertNull($d2->lastStatus);
        self::assertNull($d2->lastError);

        self::assertSame('failed', $d3->status);
        self::assertNull($d3->lastStatus);
        self::assertSame('subscription disabled', $d3->lastError);
    }

    public function testEventDataOfEveryTypeAndOfAnUnknownOne(): void
    {
        $event = static fn (string $type, string $data, string $extra = '') => \Market\Internal\Json::decode(
            '{"id":"evt_x","type":"' . $type . '","created_at":"2026-11-21T10:04:05Z","livemode":false,"data":' . $data . $extra . '}');
        $review = Event::fromArray($event('review.created', '{"review":"rev_1","product":"prod_1","rating":5,"body":"Lovely"}'));
        self::assertSame(['review' => 'rev_1', 'product' => 'prod_1', 'rating' => 5, 'body' => 'Lovely'], $review->data);
        $payout = Event::fromArray($event('payout.sent', '{"payout":"po_1","amount":1200,"currency":"JPY"}'));
        self::assertSame('1200', $payout->data['amount']);

        // A type this client does not know: its data kept as a generic array.
        $future = Event::fromArray($event('invoice.paid', '{"invoice":"in_1","lines":[{"n":1.5}],"meta":{"a":null}}', ',"deliveries":[]'));
        self::assertSame('invoice.paid', $future->type);
        self::assertSame(['invoice' => 'in_1', 'lines' => [['n' => 1.5]], 'meta' => ['a' => null]], $future->data);
        self::assertSame([], $future->deliveries);
        self::assertSame([], Event::fromArray($event('x.y', '{}'))->data);
    }

    public function testAnEventOfAnotherShapeIsAMarketException(): void
    {
        $good = '{"subscription":"we_1","status":"pending","attempts":0,"last_attempt_at":null,"last_status":null,"last_error":null}';
        foreach ([
            '{"id":"evt_1","type":"webhook.test","created_at":"2026-11-21T10:04:05Z","livemode":false,"data":{},"deliveries":null}',
            '{"id":"evt_1","type":"webhook.test","created_at":"2026-11-21T10:04:05Z","livemode":false,"data":{},"deliveries":[' . str_replace('"attempts":0', '"attempts":"0"', $good) . ']}',
            '{"id":"evt_1","type":"webhook.test","created_at":"2026-11-21T10:04:05Z","livemode":false,"data":{},"deliveries":[' . str_replace('"last_status":null', '"last_status":"204"', $good) . ']}',
            '{"id":"evt_1","type":"webhook.test","created_at":"2026-11-21T10:04:05Z","livemode":false,"data":{},"deliveries":[' . str_replace('"last_attempt_at":null', '"last_attempt_at":"soon"', $good) . ']}',
            '{"id":"evt_1","type":"webhook.test","created_at":"2026-11-21T10:04:05Z","livemode":false,"data":[1]}',
        ] as $body) {
            $t = new FakeTransport([self::ok($body)]);
            try {
                $this->client($t)->events->get('evt_1');
                self::fail('accepted ' . $body);
            } catch (MarketException $e) {
                self::assertSame(MarketException::class, get_class($e));
            }
        }
    }

    public function testANotFoundEventOrSubscriptionIsNotFoundException(): void
    {
        $t = new FakeTransport([
            FakeTransport::error(404, 'invalid_request_error', 'resource_missing', 'no such event', 'id'),
            FakeTransport::error(404, 'invalid_request_error', 'resource_missing', 'no such subscription', 'id'),
        ]);
        $c = $this->client($t);
        foreach ([fn () => $c->events->get('evt_nope'), fn () => $c->webhooks->delete('we_nope')] as $call) {
            try {
                $call();
                self::fail('no exception');
            } catch (NotFoundException $e) {
                self::assertSame('resource_missing', $e->getErrorCode());
                self::assertSame('id', $e->getParam());
            }
        }
        self::assertCount(2, $t->requests, '404 is not retried');
    }
}
