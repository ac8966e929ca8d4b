<?php

declare(strict_types=1);

namespace Market\Tests\Integration;

use DateTimeImmutable;
use Market\Client;
use Market\InvalidRequestException;
use Market\MarketException;
use Market\Model\DeletedWebhookSubscription;
use Market\Model\Event;
use Market\Model\EventDelivery;
use Market\Model\WebhookSubscription;
use Market\NotFoundException;
use Market\PermissionException;
use Market\Tests\Support\RecordingTransport;
use Market\Tests\Support\Stack;
use Market\Tests\Support\TlsReceiver;
use Market\Webhook;
use Market\WebhookVerificationException;
use PHPUnit\Framework\TestCase;

/**
 * Managing subscriptions (list, all, get, update, delete, rotateSecret, test) and reading
 * events (list, all, get) against the real stack; test events delivered by
 * market-webhookd to an HTTPS receiver on 127.0.0.1 (certificate of the throwaway CA
 * test.sh made) and verified with Webhook::verify under the secrets a rotation leaves.
 *
 * The stack allows 20 requests per key and minute (MARKET_RATE_LIMIT=20), so the tests
 * forget their account's counts between steps (Stack::resetRateLimit).
 */
final class WebhookManagementTest extends TestCase
{
    private ?TlsReceiver $rx = null;
    private string $account = '';

    protected function setUp(): void
    {
        Stack::requireStack($this);
        foreach (['PHP_IT_TLS_CERT', 'PHP_IT_TLS_KEY'] as $name) {
            if (Stack::env($name) === null) {
                $this->markTestSkipped("$name is not set: run clients/php/test.sh");
            }
        }
        $this->rx = new TlsReceiver(Stack::need('PHP_IT_TLS_CERT'), Stack::need('PHP_IT_TLS_KEY'));
    }

    protected function tearDown(): void
    {
        $this->rx?->close();
    }

    /** A new account with a read-write key: its client. */
    private function newAccount(string $tag, array $options = []): Client
    {
        $x = Stack::uid();
        $this->account = "acct_php_{$tag}_$x";
        Stack::import(['mode' => 'test', 'accounts' => [['id' => $this->account]]]);
        return Stack::client(Stack::newKey($this->account), $options);
    }

    /** Forgets the account's rate-limit counts, so that the next steps have a fresh window. */
    private function fresh(): void
    {
        Stack::resetRateLimit($this->account);
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

    /**
     * The delivery of one event, read from the receiver before a deadline (another
     * delivery arriving first, a redelivery say, is answered and passed over).
     *
     * @return array{method: string, target: string, headers: array<string, string>, body: string}
     */
    private function receiveEvent(string $eventId, float $seconds = 30.0): array
    {
        $deadline = microtime(true) + $seconds;
        while (($left = $deadline - microtime(true)) > 0) {
            $req = $this->rx->receive($left);
            if (($req['headers']['webhook-id'] ?? null) === $eventId) {
                return $req;
            }
        }
        self::fail("the delivery of $eventId did not arrive within $seconds s");
    }

    private function refused(string $body, array $headers, string $secret, string $why): void
    {
        try {
            Webhook::verify($body, $headers, $secret);
            self::fail("verified: $why");
        } catch (WebhookVerificationException) {
            self::addToAssertionCount(1);
        }
    }

    public function testListGetUpdateDeleteAndScopes(): void
    {
        $rec = new RecordingTransport();
        $c = $this->newAccount('wm', ['transport' => $rec]);
        $a = $c->webhooks->create(['url' => $this->rx->url('/a'), 'description' => 'first']);
        $b = $c->webhooks->create(['url' => $this->rx->url('/b'), 'events' => ['payout.sent'], 'description' => 'second']);

        // list: both, newest first, never a secret.
        $page = $c->webhooks->list();
        self::assertSame([$b->id, $a->id], array_map(static fn ($s) => $s->id, $page->data));
        self::assertNull($page->nextCursor);
        self::assertContainsOnlyInstancesOf(WebhookSubscription::class, $page->data);
        self::assertNull($page->data[0]->secret);
        self::assertSame(['payout.sent'], $page->data[0]->events);
        self::assertSame('second', $page->data[0]->description);
        self::assertSame('enabled', $page->data[1]->status);
        self::assertNotNull($page->data[1]->updatedAt);
        self::assertEquals($a->createdAt, $page->data[1]->createdAt);

        // all with limit=1: one page per subscription, both walked, newest first.
        $before = count($rec->exchanges);
        self::assertSame([$b->id, $a->id], array_map(static fn ($s) => $s->id, iterator_to_array($c->webhooks->all(['limit' => 1]))));
        $urls = array_map(static fn ($x) => $x['request']->url, array_slice($rec->exchanges, $before));
        self::assertGreaterThanOrEqual(2, count($urls));
        self::assertStringEndsWith('/v1/webhooks?limit=1', $urls[0]);
        self::assertStringContainsString('/v1/webhooks?limit=1&cursor=', $urls[1]);
        $p1 = $c->webhooks->list(['limit' => 1]);
        self::assertSame([$b->id], array_map(static fn ($s) => $s->id, $p1->data));
        self::assertTrue($p1->hasMore());
        self::assertSame([$a->id], array_map(static fn ($s) => $s->id, $c->webhooks->list(['limit' => 1, 'cursor' => $p1->nextCursor])->data));

        // get
        $this->fresh();
        $got = $c->webhooks->get($a->id);
        self::assertSame($a->id, $got->id);
        self::assertSame('webhook_subscription', $got->object);
        self::assertSame($a->url, $got->url);
        self::assertSame(['sale.completed', 'sale.refunded', 'review.created', 'payout.sent'], $got->events);
        self::assertSame('first', $got->description);
        self::assertSame('enabled', $got->status);
        self::assertFalse($got->livemode);
        self::assertNull($got->secret);
        self::assertNotNull($got->rateLimit);

        // update: description and disabled=true
        $t0 = time();
        $upd = $c->webhooks->update($a->id, ['description' => 'first, paused', 'disabled' => true]);
        self::assertSame($a->id, $upd->id);
        self::assertSame('disabled', $upd->status);
        self::assertSame('first, paused', $upd->description);
        self::assertSame($a->url, $upd->url);
        self::assertNull($upd->secret);
        self::assertNotNull($upd->updatedAt);
        self::assertGreaterThanOrEqual($upd->createdAt->getTimestamp(), $upd->updatedAt->getTimestamp());
        self::assertGreaterThanOrEqual($t0 - 2, $upd->updatedAt->getTimestamp());
        self::assertEqualsWithDelta(time(), $upd->updatedAt->getTimestamp(), 10);
        $seen = $c->webhooks->get($a->id);
        self::assertSame('disabled', $seen->status);
        self::assertSame('first, paused', $seen->description);
        self::assertEquals($upd->updatedAt, $seen->updatedAt);

        // No field: the body {} (PHP's [] would be refused), nothing changes.
        $same = $c->webhooks->update($a->id);
        self::assertSame('{}', end($rec->exchanges)['request']->body);
        self::assertSame('disabled', $same->status);
        self::assertSame('first, paused', $same->description);
        self::assertSame($a->events, $same->events);
        // Enabled again, with new kinds.
        $again = $c->webhooks->update($a->id, ['disabled' => false, 'events' => ['review.created', 'sale.completed']]);
        self::assertSame('enabled', $again->status);
        self::assertSame(['sale.completed', 'review.created'], $again->events);

        // Unknown names go to the API, which refuses them, naming them.
        $this->fresh();
        $e = $this->thrown(InvalidRequestException::class, fn () => $c->webhooks->update($a->id, ['colour' => 'red']));
        self::assertSame('parameter_unknown', $e->getErrorCode());
        self::assertSame('colour', $e->getParam());
        $e = $this->thrown(InvalidRequestException::class, fn () => $c->webhooks->delete($a->id, ['colour' => 'red']));
        self::assertSame('parameter_unknown', $e->getErrorCode());
        $e = $this->thrown(InvalidRequestException::class, fn () => $c->webhooks->list(['colour' => 'red']));
        self::assertSame('colour', $e->getParam());
        $e = $this->thrown(InvalidRequestException::class, fn () => $c->webhooks->update($a->id, ['disabled' => 'yes']));
        self::assertSame('disabled', $e->getParam());
        $e = $this->thrown(InvalidRequestException::class, fn () => $c->webhooks->rotateSecret($a->id, ['expire_old_in' => 604801]));
        self::assertSame('expire_old_in', $e->getParam());
        self::assertSame('enabled', $c->webhooks->get($a->id)->status, 'nothing changed by refused calls');

        // delete, with its Idempotency-Key: a retry with the key replays the answer.
        $this->fresh();
        $key = 'php-del-' . Stack::uid();
        $del = $c->webhooks->delete($b->id, ['idempotency_key' => $key]);
        self::assertInstanceOf(DeletedWebhookSubscription::class, $del);
        self::assertSame($b->id, $del->id);
        self::assertSame('webhook_subscription', $del->object);
        self::assertTrue($del->deleted);
        self::assertFalse($del->idempotentReplayed);
        $delRequest = end($rec->exchanges)['request'];
        self::assertSame('DELETE', $delRequest->method);
        self::assertSame($key, $delRequest->header('Idempotency-Key'));
        $replay = $c->webhooks->delete($b->id, ['idempotency_key' => $key]);
        self::assertTrue($replay->idempotentReplayed);
        self::assertSame($b->id, $replay->id);
        // Gone: get and a delete without the key are 404 resource_missing.
        $e = $this->thrown(NotFoundException::class, fn () => $c->webhooks->get($b->id));
        self::assertSame(404, $e->getStatus());
        self::assertSame('resource_missing', $e->getErrorCode());
        self::assertSame('id', $e->getParam());
        $e = $this->thrown(NotFoundException::class, fn () => $c->webhooks->delete($b->id));
        self::assertSame('resource_missing', $e->getErrorCode());
        $this->thrown(NotFoundException::class, fn () => $c->webhooks->update($b->id, ['description' => 'x']));
        $this->thrown(NotFoundException::class, fn () => $c->webhooks->test($b->id));
        $this->thrown(NotFoundException::class, fn () => $c->webhooks->rotateSecret($b->id));
        self::assertSame([$a->id], array_map(static fn ($s) => $s->id, $c->webhooks->list()->data));
        $this->thrown(NotFoundException::class, fn () => $c->webhooks->get('we_php_nosuch'));
        $this->thrown(NotFoundException::class, fn () => $c->events->get('evt_php_nosuch'));

        // A read-only key may not read (webhooks:read) nor change (webhooks:write) them.
        $this->fresh();
        $ro = Stack::client(Stack::newKey($this->account, 'test', 'read-only'));
        $e = $this->thrown(PermissionException::class, fn () => $ro->webhooks->list());
        self::assertSame(403, $e->getStatus());
        self::assertSame('permission_error', $e->getType());
        self::assertSame('insufficient_scope', $e->getErrorCode());
        self::assertStringContainsString('webhooks:read', $e->getMessage());
        $this->thrown(PermissionException::class, fn () => $ro->webhooks->get($a->id));
        $this->thrown(PermissionException::class, fn () => $ro->events->list());
        $e = $this->thrown(PermissionException::class, fn () => $ro->webhooks->update($a->id, ['disabled' => true]));
        self::assertStringContainsString('webhooks:write', $e->getMessage());
        $this->thrown(PermissionException::class, fn () => $ro->webhooks->delete($a->id));
        self::assertSame('enabled', $c->webhooks->get($a->id)->status);
    }

    public function testRotatedSecretsTestEventsAndTheEventsApi(): void
    {
        $c = $this->newAccount('wr');
        $sub = $c->webhooks->create(['url' => $this->rx->url('/rotate'), 'events' => ['sale.completed']]);
        $other = $c->webhooks->create(['url' => $this->rx->url('/other'), 'events' => ['payout.sent']]);
        $secret0 = $sub->secret;

        // Rotation with a grace: a new secret; deliveries carry both signatures.
        $rot = $c->webhooks->rotateSecret($sub->id, ['expire_old_in' => 3600]);
        self::assertSame($sub->id, $rot->id);
        self::assertMatchesRegularExpression('#^whsec_[A-Za-z0-9+/]{43}=$#', $rot->secret);
        self::assertNotSame($secret0, $rot->secret);
        self::assertSame('enabled', $rot->status);
        self::assertNotNull($rot->updatedAt);
        $secret1 = $rot->secret;
        self::assertNull($c->webhooks->get($sub->id)->secret, 'shown only in the answer of the rotation');

        $e1 = $c->webhooks->test($sub->id);
        self::assertInstanceOf(Event::class, $e1);
        self::assertStringStartsWith('evt_', $e1->id);
        self::assertSame('webhook.test', $e1->type);
        self::assertSame(['subscription' => $sub->id], $e1->data);
        self::assertFalse($e1->livemode);
        self::assertNull($e1->deliveries);
        self::assertSame(202, $c->lastResponse()->status);
        $req = $this->receiveEvent($e1->id);
        self::assertSame('/rotate', $req['target']);
        $h = $req['headers'];
        self::assertCount(2, explode(' ', $h['webhook-signature']), 'two signatures during the grace: ' . $h['webhook-signature']);
        $v1 = Webhook::verify($req['body'], $h, $secret1);
        self::assertSame($e1->id, $v1->id);
        self::assertSame('webhook.test', $v1->type);
        self::assertSame(['subscription' => $sub->id], $v1->data);
        self::assertSame($e1->id, Webhook::verify($req['body'], $h, $secret0)->id, 'the old secret still verifies');
        $this->refused($req['body'], $h, $other->secret, "another subscription's secret");

        // Rotation with expire_old_in=0: only the newest secret signs.
        $this->fresh();
        $rot2 = $c->webhooks->rotateSecret($sub->id, ['expire_old_in' => 0]);
        $secret2 = $rot2->secret;
        self::assertNotContains($secret2, [$secret0, $secret1]);
        $e2 = $c->webhooks->test($sub->id);
        $req = $this->receiveEvent($e2->id);
        $h = $req['headers'];
        self::assertCount(1, explode(' ', $h['webhook-signature']), 'one signature: ' . $h['webhook-signature']);
        self::assertSame($e2->id, Webhook::verify($req['body'], $h, $secret2)->id);
        $this->refused($req['body'], $h, $secret1, 'the secret replaced with expire_old_in=0');
        $this->refused($req['body'], $h, $secret0, 'the first secret');

        // A test event found through the events API.
        $this->fresh();
        $before = new DateTimeImmutable(); // microseconds: sent with its fraction
        $e3 = $c->webhooks->test($sub->id, ['idempotency_key' => 'php-test-' . Stack::uid()]);
        $this->receiveEvent($e3->id);

        $page = $c->events->list(['type' => 'webhook.test']);
        self::assertContainsOnlyInstancesOf(Event::class, $page->data);
        self::assertSame([$e3->id, $e2->id, $e1->id], array_map(static fn ($e) => $e->id, $page->data), 'newest first');
        self::assertSame(['subscription' => $sub->id], $page->data[0]->data);
        self::assertNull($page->data[0]->deliveries);
        self::assertEquals($e3->createdAt, $page->data[0]->createdAt);
        self::assertSame([], $c->events->list(['type' => 'sale.completed'])->data, 'the type filters');

        $since = array_map(static fn ($e) => $e->id, iterator_to_array($c->events->all(['created_gte' => $before, 'limit' => 1])));
        self::assertSame([$e3->id], $since, 'created_gte: only the event sent after it');
        $until = array_map(static fn ($e) => $e->id, iterator_to_array($c->events->all(['type' => Event::WEBHOOK_TEST, 'created_lt' => $before, 'limit' => 1])));
        self::assertSame([$e2->id, $e1->id], $until, 'created_lt: the events before it, newest first, one page each');
        $asText = $c->events->list(['created_gte' => $before->format('Y-m-d\TH:i:s.uP')]);
        self::assertSame([$e3->id], array_map(static fn ($e) => $e->id, $asText->data), 'a string passed as it is');

        $this->fresh();
        $e = $this->thrown(InvalidRequestException::class, fn () => $c->events->list(['type' => 'sale.exploded']));
        self::assertSame('type', $e->getParam());
        $e = $this->thrown(InvalidRequestException::class, fn () => $c->events->list(['created_gte' => '2026-02-30T00:00:00Z']));
        self::assertSame('created_gte', $e->getParam());
        $e = $this->thrown(InvalidRequestException::class, fn () => $c->events->list(['type' => 'webhook.test', 'cursor' => $c->events->list(['limit' => 1])->nextCursor]));
        self::assertSame('cursor_invalid', $e->getErrorCode(), 'a cursor is bound to its filters');

        // events->get: the event and its delivery, polled until the drainer recorded it.
        $deadline = microtime(true) + 20;
        do {
            $this->fresh();
            $got = $c->events->get($e3->id);
            if ($got->deliveries !== [] && $got->deliveries[0]->status !== EventDelivery::PENDING) {
                break;
            }
            usleep(200_000);
        } while (microtime(true) < $deadline);
        self::assertSame($e3->id, $got->id);
        self::assertSame('webhook.test', $got->type);
        self::assertEquals($e3->createdAt, $got->createdAt);
        self::assertSame(['subscription' => $sub->id], $got->data);
        self::assertCount(1, $got->deliveries);
        $d = $got->deliveries[0];
        self::assertInstanceOf(EventDelivery::class, $d);
        self::assertSame($sub->id, $d->subscription);
        self::assertSame('delivered', $d->status);
        self::assertSame(1, $d->attempts);
        self::assertSame(204, $d->lastStatus);
        self::assertNull($d->lastError);
        self::assertNotNull($d->lastAttemptAt);
        self::assertEqualsWithDelta(time(), $d->lastAttemptAt->getTimestamp(), 60);

        // A disabled subscription's test event is recorded, its delivery ended unsent.
        $c->webhooks->update($sub->id, ['disabled' => true]);
        $e4 = $c->webhooks->test($sub->id);
        $deadline = microtime(true) + 20;
        do {
            $this->fresh();
            $d4 = $c->events->get($e4->id)->deliveries[0];
            if ($d4->status !== EventDelivery::PENDING) {
                break;
            }
            usleep(200_000);
        } while (microtime(true) < $deadline);
        self::assertSame('failed', $d4->status);
        self::assertSame('subscription disabled', $d4->lastError);
        self::assertNull($d4->lastStatus);

        // After a delete, the event keeps its delivery record.
        $this->fresh();
        self::assertTrue($c->webhooks->delete($sub->id)->deleted);
        self::assertSame($sub->id, $c->events->get($e3->id)->deliveries[0]->subscription);
    }
}
