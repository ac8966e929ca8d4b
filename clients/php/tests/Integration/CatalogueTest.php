<?php

declare(strict_types=1);

namespace Market\Tests\Integration;

use Market\Model\Product;
use Market\Model\ProductSummary;
use Market\Model\Seller;
use Market\Page;
use Market\Tests\Support\RecordingTransport;
use Market\Tests\Support\Stack;
use PHPUnit\Framework\TestCase;

/**
 * products->list / all / get and sellers->get against the real stack.
 */
final class CatalogueTest extends TestCase
{
    private const COUNT = 45;

    private static string $x;
    private static string $category;
    private static string $seller;
    private static string $account;
    /** @var array<string, string> product id => price as imported */
    private static array $prices = [];

    public static function setUpBeforeClass(): void
    {
        if (Stack::env('BASE_URL') === null) {
            return;
        }
        self::$x = Stack::uid();
        self::$category = 'php-walk-' . self::$x;
        self::$seller = 'php-' . self::$x;
        self::$account = 'acct_php_cat_' . self::$x;
        // Prices with cents, whole numbers and one a float cannot hold.
        $products = [];
        for ($i = 0; $i < self::COUNT; $i++) {
            $id = sprintf('prod_phpw_%s_%02d', self::$x, $i);
            $price = match ($i) {
                0 => '90071992547409.93',
                1 => '0.1',
                2 => '1200.5',
                3 => '5',
                default => self::cents(100 + $i * 137),
            };
            self::$prices[$id] = $price;
            $products[] = [
                'id' => $id, 'seller' => self::$seller, 'title' => "PHP walk product $i", 'description' => "Item number $i of the walk",
                'category' => self::$category, 'currency' => 'USD', 'status' => 'published',
                // Several products share a created_at: the order must still be total.
                'created_at' => sprintf('2026-01-%02dT00:00:00Z', 1 + intdiv($i, 3)),
                'tiers' => [
                    ['id' => sprintf('tier_phpw_%s_%02d', self::$x, $i), 'name' => 'Personal', 'price' => Stack::num($price), 'licence' => ['seats' => 1, 'commercial' => false]],
                    ['id' => sprintf('tier_phpwc_%s_%02d', self::$x, $i), 'name' => 'Commercial', 'price' => Stack::num('100000000000000'), 'licence' => ['seats' => 10, 'commercial' => true, 'ratio' => 0.5]],
                ],
            ];
        }
        // A draft that must never show.
        $products[] = ['id' => 'prod_phpw_draft_' . self::$x, 'seller' => self::$seller, 'title' => 'Draft', 'category' => self::$category,
            'currency' => 'USD', 'status' => 'draft', 'tiers' => [['id' => 'tier_phpw_draft_' . self::$x, 'name' => 'P', 'price' => 1]]];
        Stack::import([
            'mode' => 'test',
            'accounts' => [['id' => self::$account]],
            'sellers' => [['id' => self::$seller, 'account' => self::$account, 'name' => 'PHP Walk Seller', 'bio' => 'Fonts for the PHP tests']],
            'products' => $products,
        ]);
    }

    /** 1234 -> "12.34", 500 -> "5", 650 -> "6.5": how the API writes money. */
    private static function cents(int $cents): string
    {
        $s = sprintf('%d.%02d', intdiv($cents, 100), $cents % 100);
        return rtrim(rtrim($s, '0'), '.');
    }

    protected function setUp(): void
    {
        Stack::requireStack($this);
    }

    private function key(): string
    {
        $account = 'acct_php_cr_' . Stack::uid();
        Stack::import(['mode' => 'test', 'accounts' => [['id' => $account]]]);
        return Stack::newKey($account, 'test', 'read-only');
    }

    public function testTheWholeCategoryThroughTheGeneratorEveryProductExactlyOnce(): void
    {
        $t = new RecordingTransport();
        $c = Stack::client($this->key(), ['transport' => $t]);
        $gen = $c->products->all(['category' => self::$category, 'limit' => 10]);
        self::assertSame([], $t->exchanges, 'lazy: nothing fetched yet');

        $seen = [];
        foreach ($gen as $i => $p) {
            self::assertInstanceOf(ProductSummary::class, $p);
            $seen[] = $p->id;
            self::assertSame(self::$prices[$p->id] ?? null, $p->price, "price of {$p->id}");
            self::assertSame(self::$seller, $p->seller);
            if ($i === 0) {
                self::assertCount(1, $t->exchanges, 'only the first page is fetched for the first item');
            }
        }
        self::assertCount(self::COUNT, $seen);
        self::assertSame(self::COUNT, count(array_unique($seen)), 'no product twice');
        $expected = array_keys(self::$prices);
        sort($expected);
        $sorted = $seen;
        sort($sorted);
        self::assertSame($expected, $sorted, 'every product of the category');
        self::assertSame([200, 200, 200, 200, 200], $t->statuses(), '45 products in pages of 10: five requests');
        self::assertStringContainsString('cursor=', $t->exchanges[4]['request']->url);
        // Newest first: created_at descending (ties by id descending).
        self::assertSame(sprintf('prod_phpw_%s_44', self::$x), $seen[0]);
        self::assertSame(sprintf('prod_phpw_%s_00', self::$x), $seen[self::COUNT - 1]);
    }

    public function testOnePageWithItsCursorAndRateLimitFigures(): void
    {
        $c = Stack::client($this->key());
        $page = $c->products->list(['category' => self::$category, 'limit' => 7]);
        self::assertInstanceOf(Page::class, $page);
        self::assertCount(7, $page->data);
        self::assertNotNull($page->nextCursor);
        self::assertTrue($page->hasMore());
        $limit = (int) (Stack::env('MARKET_RATE_LIMIT') ?? 600);
        self::assertSame($limit, $page->rateLimit->limit);
        self::assertSame($limit - 1, $page->rateLimit->remaining);
        self::assertGreaterThanOrEqual(1, $page->rateLimit->reset);
        self::assertLessThanOrEqual(60, $page->rateLimit->reset);
        self::assertMatchesRegularExpression('/^[A-Za-z0-9._-]{1,64}$/', $page->requestId);

        $next = $c->products->list(['category' => self::$category, 'limit' => 7, 'cursor' => $page->nextCursor]);
        self::assertSame($limit - 2, $next->rateLimit->remaining);
        self::assertSame($limit - 2, $c->lastResponse()->rateLimit->remaining);
        self::assertSame([], array_intersect(
            array_map(static fn ($p) => $p->id, $page->data),
            array_map(static fn ($p) => $p->id, $next->data),
        ));
    }

    public function testFiltersAndSorts(): void
    {
        $c = Stack::client($this->key());
        $ids = static fn (Page $p): array => array_map(static fn ($x) => $x->id, $p->data);

        $cheap = $c->products->list(['category' => self::$category, 'sort' => 'price_asc', 'limit' => 3]);
        self::assertSame(['0.1', '5'], [$cheap->data[0]->price, $cheap->data[1]->price]);

        $dear = $c->products->list(['category' => self::$category, 'sort' => 'price_desc', 'limit' => 1]);
        self::assertSame('90071992547409.93', $dear->data[0]->price);

        $range = $c->products->list(['category' => self::$category, 'min_price' => '5', 'max_price' => 7.85, 'sort' => 'price_asc', 'limit' => 100]);
        $prices = array_map(static fn ($p) => $p->price, $range->data);
        self::assertSame('5', $prices[0]);
        foreach ($prices as $p) {
            self::assertTrue(bccomp_like($p, '5') >= 0 && bccomp_like($p, '7.85') <= 0, "$p in [5, 7.85]");
        }
        self::assertContains('7.85', $prices, 'max_price is inclusive (1 + 5 * 1.37)');
        self::assertNull($range->nextCursor);

        $bySeller = $c->products->list(['seller' => self::$seller, 'limit' => 100]);
        self::assertCount(self::COUNT, $bySeller->data);

        $search = $c->products->list(['q' => 'walk product 17', 'category' => self::$category, 'limit' => 5]);
        self::assertContains(sprintf('prod_phpw_%s_17', self::$x), $ids($search));
        self::assertNotContains('prod_phpw_draft_' . self::$x, $ids($bySeller));
    }

    public function testOneProductWithTiersAndExactMoney(): void
    {
        $c = Stack::client($this->key());
        $p = $c->products->get(sprintf('prod_phpw_%s_00', self::$x));
        self::assertInstanceOf(Product::class, $p);
        self::assertSame('PHP walk product 0', $p->title);
        self::assertSame('Item number 0 of the walk', $p->description);
        self::assertSame(self::$category, $p->category);
        self::assertSame('USD', $p->currency);
        self::assertSame('90071992547409.93', $p->price, 'json_decode would have made this 90071992547409.94');
        self::assertCount(2, $p->tiers);
        self::assertSame('90071992547409.93', $p->tiers[0]->price);
        self::assertSame('Personal', $p->tiers[0]->name);
        self::assertSame(['seats' => 1, 'commercial' => false], $p->tiers[0]->licence);
        self::assertSame('100000000000000', $p->tiers[1]->price);
        $licence = $p->tiers[1]->licence;
        ksort($licence);
        self::assertSame(['commercial' => true, 'ratio' => 0.5, 'seats' => 10], $licence, 'licence numbers keep their JSON types');
        self::assertNull($p->rating->average);
        self::assertSame(0, $p->rating->count);
        self::assertSame('2026-01-01T00:00:00+00:00', $p->createdAt->format(DATE_ATOM));
        self::assertNotNull($p->rateLimit);
        self::assertNotNull($p->requestId);
    }

    public function testASellerAndItsCataloguePageByPage(): void
    {
        $c = Stack::client($this->key());
        $s = $c->sellers->get(self::$seller, ['limit' => 20]);
        self::assertInstanceOf(Seller::class, $s);
        self::assertSame(self::$seller, $s->id);
        self::assertSame('PHP Walk Seller', $s->name);
        self::assertSame('Fonts for the PHP tests', $s->bio);
        self::assertNull($s->website);
        self::assertSame(self::COUNT, $s->productCount);
        self::assertCount(20, $s->products->data);
        $all = array_map(static fn ($p) => $p->id, $s->products->data);
        $cursor = $s->products->nextCursor;
        while ($cursor !== null) {
            $more = $c->sellers->get(self::$seller, ['limit' => 20, 'cursor' => $cursor]);
            $all = [...$all, ...array_map(static fn ($p) => $p->id, $more->products->data)];
            $cursor = $more->products->nextCursor;
        }
        self::assertCount(self::COUNT, array_unique($all));
    }
}

/** Compares two non-negative decimal strings without floats. */
function bccomp_like(string $a, string $b): int
{
    [$ai, $af] = explode('.', $a . '.');
    [$bi, $bf] = explode('.', $b . '.');
    $len = max(strlen($af), strlen($bf));
    $an = ltrim($ai, '0') . str_pad($af, $len, '0');
    $bn = ltrim($bi, '0') . str_pad($bf, $len, '0');
    $an = ltrim($an, '0');
    $bn = ltrim($bn, '0');
    return strlen($an) <=> strlen($bn) ?: strcmp($an, $bn) <=> 0;
}
