<?php

declare(strict_types=1);

namespace Market\Tests\Integration;

use Market\Model\DownloadLink;
use Market\Model\Order;
use Market\Model\OrderDownload;
use Market\Tests\Support\RecordingTransport;
use Market\Tests\Support\Stack;
use PHPUnit\Framework\TestCase;

/**
 * orders->list / all and downloads->createLink against the real stack.
 */
final class OrdersDownloadsTest extends TestCase
{
    private static string $x;
    private static string $buyer;
    /** @var array<string, string> */
    private static array $ids = [];
    private static string $zip;

    public static function setUpBeforeClass(): void
    {
        if (Stack::env('BASE_URL') === null) {
            return;
        }
        $x = self::$x = Stack::uid();
        self::$buyer = "acct_php_ob_$x";
        self::$ids = [
            'seller' => "acct_php_os_$x", 'handle' => "php-os-$x", 'product' => "prod_php_o_$x", 'tier' => "tier_php_o_$x",
            'product2' => "prod_php_o2_$x", 'tier2' => "tier_php_o2_$x",
        ];
        self::$zip = random_bytes(4096) . 'end';
        Stack::writeFile("php-$x/pack.zip", self::$zip);
        Stack::writeFile("php-$x/readme.txt", "hello\n");
        $ids = self::$ids;
        $orders = [];
        for ($i = 1; $i <= 5; $i++) {
            $orders[] = ['id' => "ord_php_{$x}_$i", 'account' => self::$buyer, 'status' => 'paid', 'created_at' => "2026-02-0{$i}T00:00:00Z",
                'items' => [['product' => $ids['product'], 'tier' => $ids['tier']]]];
        }
        $orders[] = ['id' => "ord_php_{$x}_two", 'account' => self::$buyer, 'status' => 'paid', 'created_at' => '2026-03-01T00:00:00Z',
            'items' => [['product' => $ids['product'], 'tier' => $ids['tier']], ['product' => $ids['product2'], 'tier' => $ids['tier2']]]];
        $orders[] = ['id' => "ord_php_{$x}_ref", 'account' => self::$buyer, 'status' => 'refunded', 'created_at' => '2026-01-15T00:00:00Z',
            'items' => [['product' => $ids['product'], 'tier' => $ids['tier']]]];
        $orders[] = ['id' => "ord_php_{$x}_pend", 'account' => self::$buyer, 'status' => 'pending', 'created_at' => '2026-03-02T00:00:00Z',
            'items' => [['product' => $ids['product'], 'tier' => $ids['tier']]]];
        Stack::import([
            'mode' => 'test',
            'accounts' => [['id' => $ids['seller']], ['id' => self::$buyer]],
            'sellers' => [['id' => $ids['handle'], 'account' => $ids['seller'], 'name' => 'PHP Orders Seller']],
            'products' => [
                ['id' => $ids['product'], 'seller' => $ids['handle'], 'title' => 'Font Pack', 'category' => 'fonts', 'currency' => 'USD',
                    'status' => 'published', 'tiers' => [['id' => $ids['tier'], 'name' => 'Personal', 'price' => Stack::num('19.99')]],
                    'files' => [
                        ['id' => "file_php_a_$x", 'filename' => 'pack.zip', 'path' => "php-$x/pack.zip", 'size_bytes' => strlen(self::$zip)],
                        ['id' => "file_php_b_$x", 'filename' => 'readme.txt', 'path' => "php-$x/readme.txt", 'size_bytes' => 6],
                    ]],
                ['id' => $ids['product2'], 'seller' => $ids['handle'], 'title' => 'Icons', 'category' => 'icons', 'currency' => 'USD',
                    'status' => 'published', 'tiers' => [['id' => $ids['tier2'], 'name' => 'Team', 'price' => Stack::num('1200.5')]],
                    'files' => [['id' => "file_php_c_$x", 'filename' => 'icons.zip', 'path' => "php-$x/readme.txt", 'size_bytes' => 6]]],
            ],
            'orders' => $orders,
        ]);
    }

    protected function setUp(): void
    {
        Stack::requireStack($this);
    }

    private function order(string $suffix): string
    {
        return 'ord_php_' . self::$x . '_' . $suffix;
    }

    public function testOrdersNewestFirstWithItemsDownloadsAndExactMoney(): void
    {
        $c = Stack::client(Stack::newKey(self::$buyer));
        $page = $c->orders->list(['limit' => 100]);
        self::assertNull($page->nextCursor);
        $ids = array_map(static fn (Order $o) => $o->id, $page->data);
        self::assertSame([$this->order('two'), $this->order('5'), $this->order('4'), $this->order('3'), $this->order('2'), $this->order('1'), $this->order('ref')], $ids,
            'newest first, pending never shown');

        $two = $page->data[0];
        self::assertSame('paid', $two->status);
        self::assertSame('USD', $two->currency);
        self::assertSame('1220.49', $two->total);
        self::assertSame(['19.99', '1200.5'], array_map(static fn ($i) => $i->price, $two->items));
        self::assertSame('Font Pack', $two->items[0]->title);
        self::assertSame('Personal', $two->items[0]->tierName);
        self::assertSame(self::$ids['tier2'], $two->items[1]->tier);
        self::assertSame(['pack.zip', 'readme.txt', 'icons.zip'], array_map(static fn (OrderDownload $d) => $d->filename, $two->downloads));
        $zip = $two->downloads[0];
        self::assertStringStartsWith('dl_', $zip->id);
        self::assertSame(strlen(self::$zip), $zip->sizeBytes);
        self::assertStringStartsWith(Stack::need('DOWNLOAD_BASE_URL') . '/', $zip->url);
        self::assertGreaterThan(time() + 3000, $zip->expiresAt->getTimestamp());
        [$status, $bytes] = Stack::httpGet($zip->url);
        self::assertSame(200, $status);
        self::assertSame(self::$zip, $bytes, 'the listed link downloads the file');

        $refunded = $page->data[6];
        self::assertSame('refunded', $refunded->status);
        self::assertNull($refunded->downloads[0]->url);
        self::assertNull($refunded->downloads[0]->expiresAt);

        $onlyRefunded = $c->orders->list(['status' => 'refunded']);
        self::assertSame([$this->order('ref')], array_map(static fn ($o) => $o->id, $onlyRefunded->data));
    }

    public function testAllOrdersThroughTheGenerator(): void
    {
        $t = new RecordingTransport();
        $c = Stack::client(Stack::newKey(self::$buyer), ['transport' => $t]);
        $ids = [];
        foreach ($c->orders->all(['status' => 'paid', 'limit' => 2]) as $o) {
            $ids[] = $o->id;
        }
        self::assertSame([$this->order('two'), $this->order('5'), $this->order('4'), $this->order('3'), $this->order('2'), $this->order('1')], $ids);
        self::assertCount(3, $t->exchanges);
    }

    public function testCreateLinkMintsAFreshWorkingLink(): void
    {
        $c = Stack::client(Stack::newKey(self::$buyer));
        $dl = $c->orders->list(['limit' => 1])->data[0]->downloads[0];
        $before = time();
        $link = $c->downloads->createLink($dl->id, ['expires_in' => 120]);
        self::assertInstanceOf(DownloadLink::class, $link);
        self::assertSame('download_link', $link->object);
        self::assertSame($dl->id, $link->download);
        self::assertNotSame($dl->url, $link->url);
        self::assertStringStartsWith(Stack::need('DOWNLOAD_BASE_URL') . '/', $link->url);
        self::assertEqualsWithDelta($before + 120, $link->expiresAt->getTimestamp(), 3);
        self::assertFalse($link->idempotentReplayed);
        self::assertNotNull($link->rateLimit);
        [$status, $bytes] = Stack::httpGet($link->url);
        self::assertSame(200, $status);
        self::assertSame(self::$zip, $bytes);

        // The default lifetime (3600 s) without a body.
        $default = $c->downloads->createLink($dl->id);
        self::assertEqualsWithDelta(time() + 3600, $default->expiresAt->getTimestamp(), 3);
        self::assertNotSame($link->url, $default->url, 'each call without a caller key mints a new link');
    }

    public function testTheCallersIdempotencyKeyReplaysTheFirstLink(): void
    {
        $c = Stack::client(Stack::newKey(self::$buyer));
        $dl = $c->orders->list(['limit' => 1])->data[0]->downloads[1];
        $count = static fn (): int => (int) Stack::psql("SELECT count(*) FROM download_tokens WHERE download_id = '{$dl->id}'");
        $n = $count();
        $key = 'php-' . Stack::uid();
        $first = $c->downloads->createLink($dl->id, ['expires_in' => 300, 'idempotency_key' => $key]);
        $again = $c->downloads->createLink($dl->id, ['expires_in' => 300, 'idempotency_key' => $key]);
        self::assertSame($first->url, $again->url);
        self::assertFalse($first->idempotentReplayed);
        self::assertTrue($again->idempotentReplayed);
        self::assertSame($n + 1, $count(), 'one link minted');
    }
}
