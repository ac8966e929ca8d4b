<?php

declare(strict_types=1);

namespace Market\Tests\Unit;

use Market\Client;
use PHPUnit\Framework\TestCase;

/**
 * The examples of README.md and SNIPPETS.md: every PHP block parses (php -l), every
 * $market->resource->method( they call exists, README shows every call, and SNIPPETS.md
 * has the sections docs/api.md takes its PHP examples from.
 */
final class DocsTest extends TestCase
{
    private const CALLS = [
        'products->list', 'products->all', 'products->get', 'sellers->get', 'orders->list', 'orders->all',
        'downloads->createLink', 'webhooks->create', 'webhooks->list', 'webhooks->all', 'webhooks->get',
        'webhooks->update', 'webhooks->delete', 'webhooks->rotateSecret', 'webhooks->test',
        'events->list', 'events->all', 'events->get',
    ];
    private const SNIPPETS = [
        'products.list', 'products.get', 'sellers.get', 'orders.list', 'downloads.createLink', 'webhooks.create', 'verify',
        'webhooks.manage', 'events.all',
    ];

    private static function read(string $name): string
    {
        return (string) file_get_contents(__DIR__ . '/../../' . $name);
    }

    /** @return list<string> */
    private static function blocks(string $md): array
    {
        preg_match_all('/```php\n(.*?)```/s', $md, $m);
        return $m[1];
    }

    private function parses(string $code): void
    {
        $file = tempnam(sys_get_temp_dir(), 'market-php-doc-');
        try {
            file_put_contents($file, "<?php\n" . $code);
            exec(escapeshellarg(PHP_BINARY) . ' -n -l ' . escapeshellarg($file) . ' 2>&1', $out, $status);
            self::assertSame(0, $status, "does not parse:\n$code\n" . implode("\n", $out));
        } finally {
            unlink($file);
        }
    }

    private function callsExist(string $code): void
    {
        $market = new Client('sk_test_x', ['base_url' => 'http://127.0.0.1:1']);
        preg_match_all('/\$market->(\w+)->(\w+)\(/', $code, $m, PREG_SET_ORDER);
        foreach ($m as [, $resource, $method]) {
            self::assertTrue(property_exists($market, $resource), "\$market->$resource does not exist");
            self::assertTrue(method_exists($market->$resource, $method), "\$market->$resource->$method() does not exist");
        }
    }

    public function testReadmeBlocksParseAndShowEveryCall(): void
    {
        $all = self::blocks(self::read('README.md'));
        self::assertGreaterThanOrEqual(10, count($all));
        foreach ($all as $code) {
            $this->parses($code);
            $this->callsExist($code);
        }
        $text = implode("\n", $all);
        foreach (self::CALLS as $call) {
            self::assertStringContainsString("\$market->$call(", $text, "README shows $call");
        }
        self::assertStringContainsString('Webhook::verify(', $text);
        self::assertStringContainsString('## Catching up on missed events', self::read('README.md'));
    }

    public function testSnippetsHaveTheirSectionsEachOneBlockThatParses(): void
    {
        $md = self::read('SNIPPETS.md');
        preg_match_all('/^## (.+)$/m', $md, $m);
        self::assertSame(self::SNIPPETS, $m[1]);
        foreach (array_slice(preg_split('/^## /m', $md), 1) as $section) {
            $name = strtok($section, "\n");
            $codes = self::blocks($section);
            self::assertCount(1, $codes, "one block under $name");
            self::assertLessThanOrEqual(20, substr_count($codes[0], "\n"), "$name is short");
            $this->parses($codes[0]);
            $this->callsExist($codes[0]);
            if ($name === 'verify') {
                self::assertStringContainsString('Webhook::verify(', $codes[0]);
            } elseif ($name === 'webhooks.manage') {
                foreach (['list', 'get', 'update', 'rotateSecret', 'test', 'delete'] as $method) {
                    self::assertStringContainsString("\$market->webhooks->$method(", $codes[0]);
                }
                self::assertStringContainsString("'disabled' => true", $codes[0]);
                self::assertStringContainsString("'expire_old_in'", $codes[0]);
            } elseif ($name === 'events.all') {
                self::assertStringContainsString('$market->events->all(', $codes[0]);
                self::assertStringContainsString("'created_gte'", $codes[0]);
                self::assertStringContainsString('$market->events->get(', $codes[0]);
                self::assertStringContainsString('->deliveries', $codes[0]);
            } else {
                [$resource, $method] = explode('.', $name);
                self::assertStringContainsString("\$market->$resource->$method(", $codes[0]);
            }
        }
    }
}
