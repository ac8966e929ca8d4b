<?php

declare(strict_types=1);

namespace Market\Tests\Integration;

use Market\Model\WebhookSubscription;
use Market\Tests\Support\Stack;
use Market\Tests\Support\TlsReceiver;
use Market\Webhook;
use Market\WebhookVerificationException;
use PHPUnit\Framework\TestCase;

/**
 * webhooks->create, then a real delivery from the stack's market-webhookd to an HTTPS
 * receiver on 127.0.0.1 (certificate signed by the throwaway CA that test.sh made and
 * gave the stack as MARKET_WEBHOOK_CA_FILE), verified with Webhook::verify; tampered
 * copies are refused.
 */
final class WebhookDeliveryTest extends TestCase
{
    private ?TlsReceiver $rx = null;

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

    public function testASubscriptionAndARealDeliveryVerified(): void
    {
        $x = Stack::uid();
        $account = "acct_php_wh_$x";
        $handle = "php-wh-$x";
        Stack::import([
            'mode' => 'test',
            'accounts' => [['id' => $account]],
            'sellers' => [['id' => $handle, 'account' => $account, 'name' => 'PHP Webhook Seller']],
        ]);
        $c = Stack::client(Stack::newKey($account));

        $url = $this->rx->url("/hooks/php?seller=$handle");
        $ikey = "php-wh-$x";
        $sub = $c->webhooks->create([
            'url' => $url,
            'events' => ['payout.sent', 'sale.completed', 'payout.sent'],
            'description' => 'PHP client test ü',
            'idempotency_key' => $ikey,
        ]);
        self::assertInstanceOf(WebhookSubscription::class, $sub);
        self::assertMatchesRegularExpression('/^we_[A-Za-z0-9_]+$/', $sub->id);
        self::assertSame('webhook_subscription', $sub->object);
        self::assertSame($url, $sub->url);
        self::assertSame(['sale.completed', 'payout.sent'], $sub->events, 'duplicates dropped, canonical order');
        self::assertSame('PHP client test ü', $sub->description);
        self::assertSame('enabled', $sub->status);
        self::assertFalse($sub->livemode);
        self::assertMatchesRegularExpression('#^whsec_[A-Za-z0-9+/]{43}=$#', $sub->secret);
        self::assertEqualsWithDelta(time(), $sub->createdAt->getTimestamp(), 10);
        self::assertNotNull($sub->rateLimit);

        // The same Idempotency-Key and body: the same subscription, secret included.
        $replay = $c->webhooks->create([
            'url' => $url,
            'events' => ['payout.sent', 'sale.completed', 'payout.sent'],
            'description' => 'PHP client test ü',
            'idempotency_key' => $ikey,
        ]);
        self::assertTrue($replay->idempotentReplayed);
        self::assertSame($sub->id, $replay->id);
        self::assertSame($sub->secret, $replay->secret);
        self::assertSame('1', Stack::psql("SELECT count(*) FROM webhook_subscriptions WHERE account_id = '$account'"));

        // An event: a payout to this seller.
        Stack::admin(['payout', '--seller', $handle, '--amount', '12.34', '--currency', 'USD', '--mode', 'test']);
        $req = $this->rx->receive(30.0);
        self::assertSame('POST', $req['method']);
        self::assertSame("/hooks/php?seller=$handle", $req['target']);
        self::assertStringStartsWith('application/json', $req['headers']['content-type']);
        $h = $req['headers'];
        self::assertSame($h['webhook-signature'], $h['x-signature']);

        $event = Webhook::verify($req['body'], $h, $sub->secret);
        self::assertSame('payout.sent', $event->type);
        self::assertSame($h['webhook-id'], $event->id);
        self::assertStringStartsWith('evt_', $event->id);
        self::assertFalse($event->livemode);
        self::assertSame('12.34', $event->data['amount'], 'money exact, as a string');
        self::assertSame('USD', $event->data['currency']);
        self::assertStringStartsWith('po_', $event->data['payout']);
        self::assertEqualsWithDelta(time(), $event->createdAt->getTimestamp(), 60);
        self::assertSame(
            $event->data['payout'],
            Stack::psql("SELECT id FROM payouts WHERE seller_id = '$handle'"),
        );

        // X-Signature alone (no webhook-signature) is enough.
        $xOnly = $h;
        unset($xOnly['webhook-signature']);
        self::assertSame($event->id, Webhook::verify($req['body'], $xOnly, $sub->secret)->id);

        // Tampered copies are refused.
        $refuse = function (string $body, array $headers, string $secret, string $why): void {
            try {
                Webhook::verify($body, $headers, $secret);
                self::fail("accepted: $why");
            } catch (WebhookVerificationException) {
                self::addToAssertionCount(1);
            }
        };
        $refuse(str_replace('12.34', '99.34', $req['body']), $h, $sub->secret, 'another amount');
        $refuse($req['body'] . "\n", $h, $sub->secret, 'a trailing newline');
        $refuse($req['body'], ['webhook-id' => 'evt_forged'] + $h, $sub->secret, 'another id');
        $refuse($req['body'], ['webhook-timestamp' => (string) ((int) $h['webhook-timestamp'] - 400)] + $h, $sub->secret, 'an old timestamp');
        $other = $c->webhooks->create(['url' => $this->rx->url('/other'), 'events' => ['review.created']]);
        $refuse($req['body'], $h, $other->secret, "another subscription's secret");
        $old = $h;
        $old['webhook-timestamp'] = (string) ((int) $h['webhook-timestamp'] - 301);
        $old['webhook-signature'] = $old['x-signature'] = Webhook::sign($h['webhook-id'], (int) $old['webhook-timestamp'], $req['body'], $sub->secret);
        $refuse($req['body'], $old, $sub->secret, 'a correctly signed but stale delivery');

        // The drainer recorded the 204 as delivered.
        $deadline = microtime(true) + 10;
        do {
            $state = Stack::psql("SELECT d.status FROM webhook_deliveries d WHERE d.event_id = '{$event->id}' AND d.subscription_id = '{$sub->id}'");
            if ($state === 'delivered') {
                break;
            }
            usleep(100_000);
        } while (microtime(true) < $deadline);
        self::assertSame('delivered', $state);
    }
}
