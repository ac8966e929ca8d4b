<?php

declare(strict_types=1);

namespace Market\Tests\Unit;

use InvalidArgumentException;
use Market\Model\WebhookEvent;
use Market\Webhook;
use Market\WebhookVerificationException;
use PHPUnit\Framework\TestCase;

final class WebhookTest extends TestCase
{
    private const SECRET = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';
    private const OTHER_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    private const ID = 'evt_5b0f8a2c9d3e4f1a8b7c6d5e4f3a2b1c';
    private const NOW = 1795000000;
    private const BODY = '{"id":"evt_5b0f8a2c9d3e4f1a8b7c6d5e4f3a2b1c","type":"sale.completed","created_at":"2026-11-21T10:04:05Z","livemode":false,'
        . '"data":{"order":"ord_1","product":"prod_font1","tier":"tier_font1_p","amount":90071992547409.93,"currency":"USD"}}';

    /** @return array<string, string> */
    private function headers(string $body = self::BODY, int $ts = self::NOW, string $secret = self::SECRET): array
    {
        $sig = Webhook::sign(self::ID, $ts, $body, $secret);
        return ['webhook-id' => self::ID, 'webhook-timestamp' => (string) $ts, 'webhook-signature' => $sig, 'X-Signature' => $sig];
    }

    private function refused(string $body, array $headers, string $expectMessage, string $secret = self::SECRET): void
    {
        try {
            Webhook::verify($body, $headers, $secret, now: self::NOW);
            self::fail('the delivery was accepted');
        } catch (WebhookVerificationException $e) {
            self::assertStringContainsString($expectMessage, $e->getMessage());
        }
    }

    public function testTheStandardWebhooksSpecificationVector(): void
    {
        // The example of the Standard Webhooks specification (and of the C unit tests).
        self::assertSame(
            'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
            Webhook::sign('msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'),
        );
        // Computed independently: base64(HMAC-SHA256(base64-decoded key, "id.ts.body")).
        $key = base64_decode('AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=');
        self::assertSame(
            'v1,' . base64_encode(hash_hmac('sha256', self::ID . '.' . self::NOW . '.' . self::BODY, $key, true)),
            Webhook::sign(self::ID, self::NOW, self::BODY, self::SECRET),
        );
    }

    public function testAValidDeliveryGivesTheParsedEventWithExactMoney(): void
    {
        $event = Webhook::verify(self::BODY, $this->headers(), self::SECRET, now: self::NOW);
        self::assertInstanceOf(WebhookEvent::class, $event);
        self::assertSame(self::ID, $event->id);
        self::assertSame('sale.completed', $event->type);
        self::assertFalse($event->livemode);
        self::assertSame('2026-11-21T10:04:05+00:00', $event->createdAt->format(DATE_ATOM));
        self::assertSame(
            ['order' => 'ord_1', 'product' => 'prod_font1', 'tier' => 'tier_font1_p', 'amount' => '90071992547409.93', 'currency' => 'USD'],
            $event->data,
        );
    }

    public function testTheSecretWithoutItsPrefixAlsoWorks(): void
    {
        $event = Webhook::verify(self::BODY, $this->headers(), substr(self::SECRET, 6), now: self::NOW);
        self::assertSame(self::ID, $event->id);
    }

    public function testATamperedBodyIsRefused(): void
    {
        $tampered = str_replace('90071992547409.93', '90071992547409.94', self::BODY);
        self::assertNotSame(self::BODY, $tampered);
        $this->refused($tampered, $this->headers(), 'no signature matches');
        $this->refused(self::BODY . ' ', $this->headers(), 'no signature matches');
    }

    public function testTamperedHeadersAreRefused(): void
    {
        $h = $this->headers();
        $this->refused(self::BODY, ['webhook-id' => 'evt_other'] + $h, 'no signature matches');
        $h2 = $h;
        $h2['webhook-timestamp'] = (string) (self::NOW + 1);
        $this->refused(self::BODY, $h2, 'no signature matches');
        $h3 = $h;
        $sig = substr($h['webhook-signature'], 3);
        $sig[5] = $sig[5] === 'A' ? 'B' : 'A';
        $h3['webhook-signature'] = 'v1,' . $sig;
        $this->refused(self::BODY, $h3, 'no signature matches');
    }

    public function testAnotherSecretIsRefused(): void
    {
        $this->refused(self::BODY, $this->headers(), 'no signature matches', self::OTHER_SECRET);
    }

    public function testTheTimestampToleranceIsFiveMinutesEitherWay(): void
    {
        foreach ([self::NOW - 300, self::NOW + 300, self::NOW - 299, self::NOW] as $ts) {
            self::assertSame(self::ID, Webhook::verify(self::BODY, $this->headers(ts: $ts), self::SECRET, now: self::NOW)->id, "ts $ts");
        }
        $this->refused(self::BODY, $this->headers(ts: self::NOW - 301), 'too old');
        $this->refused(self::BODY, $this->headers(ts: self::NOW - 86400), 'too old');
        $this->refused(self::BODY, $this->headers(ts: self::NOW + 301), 'future');
        // A custom tolerance.
        Webhook::verify(self::BODY, $this->headers(ts: self::NOW - 1000), self::SECRET, 1000, self::NOW);
        // The default clock is the real one: a delivery signed now passes, one from an hour ago does not.
        $fresh = $this->headers(ts: time());
        self::assertSame(self::ID, Webhook::verify(self::BODY, $fresh, self::SECRET)->id);
        $this->expectException(WebhookVerificationException::class);
        Webhook::verify(self::BODY, $this->headers(ts: time() - 3600), self::SECRET);
    }

    public function testSeveralSignaturesInOneHeaderOneMatchIsEnough(): void
    {
        $good = $this->headers()['webhook-signature'];
        $old = Webhook::sign(self::ID, self::NOW, self::BODY, self::OTHER_SECRET);
        foreach (["$old $good", "$good $old", "v1a,AAAA $good", "  $old   $good  ", "v1,garbage $good v2,xyz"] as $value) {
            $h = ['webhook-id' => self::ID, 'webhook-timestamp' => (string) self::NOW, 'webhook-signature' => $value];
            self::assertSame(self::ID, Webhook::verify(self::BODY, $h, self::SECRET, now: self::NOW)->id, $value);
        }
        // None matching, or the right digest under another version tag: refused.
        $h = ['webhook-id' => self::ID, 'webhook-timestamp' => (string) self::NOW];
        $this->refused(self::BODY, $h + ['webhook-signature' => "$old v1,AAAA"], 'no signature matches');
        $this->refused(self::BODY, $h + ['webhook-signature' => 'v2,' . substr($good, 3)], 'no signature matches');
        $this->refused(self::BODY, $h + ['webhook-signature' => substr($good, 3)], 'no signature matches');
        // Several header lines (a PSR-7 list of values).
        self::assertSame(self::ID, Webhook::verify(self::BODY, $h + ['webhook-signature' => [$old, $good]], self::SECRET, now: self::NOW)->id);
    }

    public function testXSignatureAloneIsEnough(): void
    {
        $sig = $this->headers()['webhook-signature'];
        $h = ['Webhook-Id' => self::ID, 'Webhook-Timestamp' => (string) self::NOW, 'X-Signature' => $sig];
        self::assertSame(self::ID, Webhook::verify(self::BODY, $h, self::SECRET, now: self::NOW)->id);
        $h['X-Signature'] = Webhook::sign(self::ID, self::NOW, self::BODY, self::OTHER_SECRET);
        $this->refused(self::BODY, $h, 'no signature matches');
    }

    public function testHeaderNamesInAnyCaseAndServerStyle(): void
    {
        $sig = $this->headers()['webhook-signature'];
        $server = ['HTTP_WEBHOOK_ID' => self::ID, 'HTTP_WEBHOOK_TIMESTAMP' => (string) self::NOW, 'HTTP_WEBHOOK_SIGNATURE' => $sig, 'REQUEST_METHOD' => 'POST'];
        self::assertSame(self::ID, Webhook::verify(self::BODY, $server, self::SECRET, now: self::NOW)->id);
        $psr7 = ['WEBHOOK-ID' => [self::ID], 'webhook-timestamp' => [(string) self::NOW], 'Webhook-Signature' => [$sig]];
        self::assertSame(self::ID, Webhook::verify(self::BODY, $psr7, self::SECRET, now: self::NOW)->id);
    }

    public function testMissingOrMalformedHeadersAreRefused(): void
    {
        $h = $this->headers();
        $without = static function (array $h, string ...$names): array {
            foreach ($names as $n) {
                unset($h[$n]);
            }
            return $h;
        };
        $this->refused(self::BODY, $without($h, 'webhook-id'), 'webhook-id');
        $this->refused(self::BODY, $without($h, 'webhook-timestamp'), 'webhook-timestamp');
        $this->refused(self::BODY, $without($h, 'webhook-signature', 'X-Signature'), 'signature');
        $this->refused(self::BODY, ['webhook-timestamp' => '17950000.5'] + $h, 'webhook-timestamp');
        $this->refused(self::BODY, ['webhook-timestamp' => ''] + $h, 'webhook-timestamp');
        $this->refused(self::BODY, [], 'webhook-id');
    }

    public function testAValidSignatureOverSomethingThatIsNotAnEventIsRefused(): void
    {
        foreach (['not json', '[1,2]', '{"id":"evt_1"}'] as $body) {
            $this->refused($body, $this->headers($body), 'not a market event');
        }
    }

    public function testAMalformedSecretIsAProgrammingError(): void
    {
        $this->expectException(InvalidArgumentException::class);
        Webhook::verify(self::BODY, $this->headers(), 'whsec_not base64!', now: self::NOW);
    }

    public function testOtherEventKinds(): void
    {
        $body = '{"id":"evt_2","type":"review.created","created_at":"2026-11-21T10:04:05Z","livemode":true,'
            . '"data":{"review":"rev_1","product":"prod_font1","rating":5,"body":"Lovely"}}';
        $h = ['webhook-id' => 'evt_2', 'webhook-timestamp' => (string) self::NOW, 'webhook-signature' => Webhook::sign('evt_2', self::NOW, $body, self::SECRET)];
        $event = Webhook::verify($body, $h, self::SECRET, now: self::NOW);
        self::assertTrue($event->livemode);
        self::assertSame(['review' => 'rev_1', 'product' => 'prod_font1', 'rating' => 5, 'body' => 'Lovely'], $event->data);

        $body = '{"id":"evt_3","type":"payout.sent","created_at":"2026-11-21T10:04:05Z","livemode":false,"data":{"payout":"po_1","amount":1200,"currency":"JPY"}}';
        $h = ['webhook-id' => 'evt_3', 'webhook-timestamp' => (string) self::NOW, 'webhook-signature' => Webhook::sign('evt_3', self::NOW, $body, self::SECRET)];
        self::assertSame(['payout' => 'po_1', 'amount' => '1200', 'currency' => 'JPY'], Webhook::verify($body, $h, self::SECRET, now: self::NOW)->data);
    }
}
