<?php

declare(strict_types=1);

namespace Market;

use InvalidArgumentException;
use JsonException;
use Market\Internal\Json;
use Market\Model\WebhookEvent;
use SensitiveParameter;
use UnexpectedValueException;

/**
 * Verification of webhook deliveries, as the Standard Webhooks specification describes
 * (https://www.standardwebhooks.com):
 *
 *     webhook-id:        evt_...            (the event id, the same on every retry)
 *     webhook-timestamp: 1795000000         (Unix seconds of this attempt)
 *     webhook-signature: v1,<base64 HMAC-SHA256(key, id + "." + timestamp + "." + body)>
 *     X-Signature:       the same value as webhook-signature
 *
 * where key is the base64-decoded part of the subscription's secret after "whsec_".
 */
final class Webhook
{
    /** Seconds a delivery's timestamp may be away from now (5 minutes). */
    public const TOLERANCE = 300;

    /**
     * Checks a delivery and returns its event, or throws WebhookVerificationException.
     *
     *     $event = Market\Webhook::verify(file_get_contents('php://input'), getallheaders(), $secret);
     *
     * @param string $payload the raw request body, exactly as received (before any JSON parsing)
     * @param array<string, string|list<string>> $headers the request headers: any case
     *        ("Webhook-Id", "webhook-id"), values as strings or lists of strings (PSR-7
     *        getHeaders()), or $_SERVER with its HTTP_WEBHOOK_ID style names.
     *        webhook-id and webhook-timestamp are required, and webhook-signature, or
     *        X-Signature when webhook-signature is absent. A signature header may hold
     *        several space-separated "v1,..." entries (while a secret is rotated); one
     *        match is enough.
     * @param string $secret the subscription's secret, "whsec_..." (the prefix may be left out)
     * @param int $tolerance seconds the timestamp may differ from now
     * @param int|null $now the current Unix time (for tests)
     *
     * @throws WebhookVerificationException when the delivery is not authentic or not fresh
     * @throws InvalidArgumentException when the secret itself is malformed
     */
    public static function verify(
        string $payload,
        array $headers,
        #[SensitiveParameter] string $secret,
        int $tolerance = self::TOLERANCE,
        ?int $now = null,
    ): WebhookEvent {
        $h = self::normaliseHeaders($headers);
        $id = $h['webhook-id'][0] ?? null;
        $timestamp = $h['webhook-timestamp'][0] ?? null;
        $signatures = $h['webhook-signature'] ?? $h['x-signature'] ?? null;
        if ($id === null || $id === '') {
            throw new WebhookVerificationException('missing webhook-id header');
        }
        if ($timestamp === null || preg_match('/^\d{1,12}$/', $timestamp) !== 1) {
            throw new WebhookVerificationException('missing or malformed webhook-timestamp header');
        }
        if ($signatures === null) {
            throw new WebhookVerificationException('missing webhook-signature (or X-Signature) header');
        }

        $now ??= time();
        $ts = (int) $timestamp;
        if ($now - $ts > $tolerance) {
            throw new WebhookVerificationException('webhook-timestamp is too old');
        }
        if ($ts - $now > $tolerance) {
            throw new WebhookVerificationException('webhook-timestamp is too far in the future');
        }

        $expected = self::signature($id, $ts, $payload, $secret);
        $matched = false;
        foreach ($signatures as $line) {
            foreach (preg_split('/\s+/', trim($line), -1, PREG_SPLIT_NO_EMPTY) as $entry) {
                $comma = strpos($entry, ',');
                if ($comma === false || substr($entry, 0, $comma) !== 'v1') {
                    continue; // another scheme (v1a, ...) or not a signature
                }
                // Compare every entry (no early exit) in constant time.
                $matched = hash_equals($expected, substr($entry, $comma + 1)) || $matched;
            }
        }
        if (!$matched) {
            throw new WebhookVerificationException('no signature matches');
        }

        try {
            $decoded = Json::decode($payload);
            if (!is_array($decoded)) {
                throw new UnexpectedValueException('not a JSON object');
            }
            return WebhookEvent::fromArray($decoded);
        } catch (JsonException | UnexpectedValueException $e) {
            throw new WebhookVerificationException('the payload is not a market event: ' . $e->getMessage(), 0, $e);
        }
    }

    /**
     * The "v1,..." value of the webhook-signature header for a delivery (what the API
     * sends; useful to test a receiver).
     */
    public static function sign(string $id, int $timestamp, string $payload, #[SensitiveParameter] string $secret): string
    {
        return 'v1,' . self::signature($id, $timestamp, $payload, $secret);
    }

    /** base64(HMAC-SHA256(key, id.timestamp.payload)) */
    private static function signature(string $id, int $timestamp, string $payload, #[SensitiveParameter] string $secret): string
    {
        $encoded = str_starts_with($secret, 'whsec_') ? substr($secret, 6) : $secret;
        $key = base64_decode($encoded, true);
        if ($key === false || $key === '') {
            throw new InvalidArgumentException('the webhook secret must be "whsec_" followed by base64');
        }
        return base64_encode(hash_hmac('sha256', $id . '.' . $timestamp . '.' . $payload, $key, true));
    }

    /**
     * @param array<mixed> $headers
     * @return array<string, list<string>> lower-case names with dashes => values
     */
    private static function normaliseHeaders(array $headers): array
    {
        $out = [];
        foreach ($headers as $name => $value) {
            $name = strtolower((string) $name);
            if (str_starts_with($name, 'http_')) {
                $name = str_replace('_', '-', substr($name, 5));
            }
            foreach ((array) $value as $v) {
                if (is_string($v) || is_int($v)) {
                    $out[$name][] = (string) $v;
                }
            }
        }
        return $out;
    }
}
