<?php

declare(strict_types=1);

namespace Market\Tests\Unit;

use Market\Internal\RetryPolicy;
use PHPUnit\Framework\TestCase;

final class RetryPolicyTest extends TestCase
{
    private function policy(int $max = 2, float $random = 0.0): RetryPolicy
    {
        return new RetryPolicy($max, 0.5, 8.0, static fn (): float => $random);
    }

    public function testRateLimitedAndUnavailableAnswersWaitForRetryAfter(): void
    {
        $p = $this->policy();
        self::assertSame(37.0, $p->delayAfterStatus(0, 429, '37'));
        self::assertSame(1.0, $p->delayAfterStatus(1, 503, '1'));
        self::assertSame(0.0, $p->delayAfterStatus(0, 429, '0'));
        self::assertSame(60.0, $p->delayAfterStatus(0, 429, ' 60 '));
    }

    public function testOnlyMaxRetriesRetries(): void
    {
        $p = $this->policy(2);
        self::assertNotNull($p->delayAfterStatus(0, 429, '1'));
        self::assertNotNull($p->delayAfterStatus(1, 429, '1'));
        self::assertNull($p->delayAfterStatus(2, 429, '1'));
        self::assertNull($this->policy(0)->delayAfterStatus(0, 429, '1'));
        self::assertNull($this->policy(0)->delayAfterNetworkError(0, 'GET', false));
        self::assertNotNull($this->policy(5)->delayAfterStatus(4, 503, '1'));
        self::assertNull($this->policy(5)->delayAfterStatus(5, 503, '1'));
    }

    public function testOtherStatusesAreFinal(): void
    {
        $p = $this->policy();
        foreach ([200, 201, 400, 401, 403, 404, 405, 408, 409, 410, 413, 415, 500, 501] as $status) {
            self::assertNull($p->delayAfterStatus(0, $status, '1'), "status $status");
        }
        // 502 and 504 (the gateway) only when repeating is safe; 429 and 503 always.
        foreach ([502, 504] as $status) {
            self::assertSame(1.0, $p->delayAfterStatus(0, $status, '1'), "status $status");
            self::assertNull($p->delayAfterStatus(0, $status, '1', null, false), "status $status, not repeatable");
        }
        self::assertSame(1.0, $p->delayAfterStatus(0, 429, '1', null, false));
        self::assertSame(1.0, $p->delayAfterStatus(0, 503, '1', null, false));
    }

    public function testWithoutAUsableRetryAfterTheDelayIsAnExponentialBackoff(): void
    {
        $p = $this->policy(5, 0.0);
        self::assertSame(0.25, $p->delayAfterStatus(0, 503, null)); // 0.5 * 0.5
        self::assertSame(0.5, $p->delayAfterStatus(1, 503, 'soon'));
        self::assertSame(1.0, $p->delayAfterStatus(2, 429, ''));
        $hi = $this->policy(50, 0.999999);
        self::assertEqualsWithDelta(0.5, $hi->backoff(0), 0.0001);
        self::assertEqualsWithDelta(8.0, $hi->backoff(10), 0.0001, 'capped');
        self::assertEqualsWithDelta(8.0, $hi->backoff(40), 0.0001, 'no overflow');
        // Jitter stays inside [0.5, 1) of the nominal delay.
        $real = new RetryPolicy(5);
        for ($i = 0; $i < 50; $i++) {
            $d = $real->backoff(2);
            self::assertGreaterThanOrEqual(1.0, $d);
            self::assertLessThan(2.0, $d);
        }
    }

    public function testARetryAfterBeyondTheCapIsNotWaitedFor(): void
    {
        $p = $this->policy();
        self::assertSame((float) RetryPolicy::MAX_RETRY_AFTER, $p->delayAfterStatus(0, 429, (string) RetryPolicy::MAX_RETRY_AFTER));
        self::assertNull($p->delayAfterStatus(0, 429, (string) (RetryPolicy::MAX_RETRY_AFTER + 1)));
        self::assertNull($p->delayAfterStatus(0, 503, '86400'));
    }

    public function testRetryAfterAsAnHttpDate(): void
    {
        $now = 1795000000;
        $date = gmdate('D, d M Y H:i:s \G\M\T', $now + 12);
        self::assertSame(12, RetryPolicy::parseRetryAfter($date, $now));
        self::assertSame(0, RetryPolicy::parseRetryAfter(gmdate('D, d M Y H:i:s \G\M\T', $now - 5), $now));
        self::assertNull(RetryPolicy::parseRetryAfter('-3'));
        self::assertNull(RetryPolicy::parseRetryAfter('1.5'));
        self::assertNull(RetryPolicy::parseRetryAfter(null));
        self::assertSame(7, RetryPolicy::parseRetryAfter('7'));
    }

    public function testNetworkFailuresAreRetriedOnlyWhenRepeatingIsSafe(): void
    {
        $p = $this->policy(2, 0.0);
        self::assertSame(0.25, $p->delayAfterNetworkError(0, 'GET', false));
        self::assertSame(0.5, $p->delayAfterNetworkError(1, 'get', false));
        self::assertNull($p->delayAfterNetworkError(2, 'GET', false));
        self::assertNotNull($p->delayAfterNetworkError(0, 'HEAD', false));
        self::assertNull($p->delayAfterNetworkError(0, 'POST', false), 'a POST without an Idempotency-Key could act twice');
        self::assertSame(0.25, $p->delayAfterNetworkError(0, 'POST', true));
        self::assertNull($p->delayAfterNetworkError(2, 'POST', true));
    }
}
