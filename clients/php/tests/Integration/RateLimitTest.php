<?php

declare(strict_types=1);

namespace Market\Tests\Integration;

use Market\RateLimitException;
use Market\Tests\Support\RecordingTransport;
use Market\Tests\Support\Stack;
use PHPUnit\Framework\TestCase;

/**
 * A real 429 from the stack (test.sh starts it with a low MARKET_RATE_LIMIT), retried
 * after its Retry-After. The window is the Unix minute, so Retry-After can be up to 60 s:
 * the client gets a "sleep" option that records the wait instead of sleeping, and (in the
 * first test) ends the window early by clearing the key's counter, as the passing minute
 * would.
 */
final class RateLimitTest extends TestCase
{
    private int $limit;
    private string $account;

    protected function setUp(): void
    {
        Stack::requireStack($this);
        $this->limit = (int) (Stack::env('MARKET_RATE_LIMIT') ?? 0);
        if ($this->limit < 1 || $this->limit > 50) {
            self::fail('run with a low MARKET_RATE_LIMIT (test.sh sets 20)');
        }
        $this->account = 'acct_php_rl_' . Stack::uid();
        Stack::import(['mode' => 'test', 'accounts' => [['id' => $this->account]]]);
    }

    /** Spends the whole window of $key; returns the figures of the last allowed answer. */
    private function exhaust(string $key): void
    {
        $c = Stack::client($key, ['max_retries' => 0]);
        $first = $c->products->list(['limit' => 1]);
        // Too close to the end of the window: wait for the next one, so that the 429
        // below comes from the same window as the requests that spent it.
        if ($first->rateLimit->reset < 5) {
            sleep($first->rateLimit->reset + 1);
            Stack::resetRateLimit($this->account);
            $first = $c->products->list(['limit' => 1]);
        }
        self::assertSame($this->limit, $first->rateLimit->limit);
        self::assertSame($this->limit - 1, $first->rateLimit->remaining);
        for ($i = 2; $i <= $this->limit; $i++) {
            $page = $c->products->list(['limit' => 1]);
            self::assertSame($this->limit - $i, $page->rateLimit->remaining);
        }
    }

    public function testA429IsRetriedAfterTheServersRetryAfter(): void
    {
        $key = Stack::newKey($this->account);
        $this->exhaust($key);

        $sleeps = [];
        $t = new RecordingTransport();
        $c = Stack::client($key, [
            'transport' => $t,
            'sleep' => function (float $seconds) use (&$sleeps): void {
                $sleeps[] = $seconds;
                Stack::resetRateLimit($this->account); // the window "ends"
            },
        ]);
        $page = $c->products->list(['limit' => 2]);

        self::assertSame([429, 200], $t->statuses(), 'a 429, then the retry that was sent after the wait');
        $limited = $t->exchanges[0]['response'];
        $retryAfter = $limited->header('retry-after');
        self::assertMatchesRegularExpression('/^\d+$/', $retryAfter);
        self::assertGreaterThanOrEqual(1, (int) $retryAfter);
        self::assertLessThanOrEqual(60, (int) $retryAfter);
        self::assertSame('0', $limited->header('x-ratelimit-remaining'));
        self::assertSame([(float) $retryAfter], $sleeps, "waited the server's Retry-After");
        self::assertSame($t->exchanges[0]['request']->url, $t->exchanges[1]['request']->url);
        self::assertCount(2, $page->data);
        self::assertSame($this->limit - 1, $page->rateLimit->remaining, 'the retry opened the new window');
        self::assertSame(2, $c->lastResponse()->attempts);
    }

    public function testAPostIsRetriedAfterA429WithTheSameIdempotencyKey(): void
    {
        $key = Stack::newKey($this->account);
        $this->exhaust($key);
        $t = new RecordingTransport();
        $sleeps = [];
        $c = Stack::client($key, [
            'transport' => $t,
            'sleep' => function (float $seconds) use (&$sleeps): void {
                $sleeps[] = $seconds;
                Stack::resetRateLimit($this->account);
            },
        ]);
        $receiverUrl = 'https://127.0.0.1:9/php-rl';
        $sub = $c->webhooks->create(['url' => $receiverUrl, 'events' => ['payout.sent'], 'description' => 'rate limit test']);
        self::assertSame([429, 201], $t->statuses());
        self::assertCount(1, $sleeps);
        self::assertSame(
            $t->exchanges[0]['request']->header('Idempotency-Key'),
            $t->exchanges[1]['request']->header('Idempotency-Key'),
        );
        self::assertSame('1', Stack::psql("SELECT count(*) FROM webhook_subscriptions WHERE url = '$receiverUrl' AND id = '{$sub->id}'"));
    }

    public function testWhenTheRetriesAreSpentTheRateLimitExceptionCarriesTheFigures(): void
    {
        $key = Stack::newKey($this->account);
        $this->exhaust($key);
        $sleeps = [];
        $t = new RecordingTransport();
        $c = Stack::client($key, [
            'transport' => $t,
            'max_retries' => 2,
            'sleep' => function (float $seconds) use (&$sleeps): void {
                $sleeps[] = $seconds; // no waiting: the window stays spent
            },
        ]);
        try {
            $c->orders->list();
            self::fail('no RateLimitException');
        } catch (RateLimitException $e) {
            self::assertSame(429, $e->getStatus());
            self::assertSame('rate_limit_error', $e->getType());
            self::assertSame('rate_limited', $e->getErrorCode());
            self::assertSame($this->limit, $e->getRateLimitLimit());
            self::assertSame(0, $e->getRateLimitRemaining());
            self::assertGreaterThanOrEqual(1, $e->getRetryAfter());
            self::assertLessThanOrEqual(60, $e->getRetryAfter());
            self::assertNotNull($e->getRequestId());
        }
        self::assertSame([429, 429, 429], $t->statuses(), 'max_retries 2: three requests');
        $retryAfters = array_map(static fn ($x) => (float) $x['response']->header('retry-after'), $t->exchanges);
        self::assertSame(array_slice($retryAfters, 0, 2), $sleeps);
    }
}
