<?php

declare(strict_types=1);

namespace Market\Tests\Integration;

use Market\RequestInfo;
use Market\Tests\Support\RecordingTransport;
use Market\Tests\Support\Stack;
use PHPUnit\Framework\TestCase;

/**
 * Whole pages (contract section 5, decided 2026-11-27) through products->all(): a page
 * holds `limit` items whenever at least that many matches remain after its cursor; only
 * the last holds fewer, and its next_cursor is null. So a walk of a search of N results
 * takes max(1, ceil(N / limit)) requests, and a search that matches nothing one.
 *
 * Requests are counted through the client's own on_response hook (one call per HTTP
 * attempt, retries included); a recording transport keeps each answer's body, to see each
 * page's size and next_cursor. Each walk uses a fresh key, so the stack's low rate limit
 * (20 a minute) never adds a retry.
 */
final class WholePagesTest extends TestCase
{
    // created_at hours and prices (cents) chosen so that each sort gives another order;
    // two prices tie (120) so that price_asc needs its id tie-break.
    private const HOURS = [3, 7, 0, 9, 5, 1, 10, 4, 8, 2, 6, 11];
    private const CENTS = [500, 120, 999, 350, 120, 780, 50, 610, 40, 30, 20, 10];

    private static string $x;
    private static string $word;
    private static string $account;

    public static function setUpBeforeClass(): void
    {
        if (Stack::env('BASE_URL') === null) {
            return;
        }
        self::$x = Stack::uid();
        self::$word = 'pagewalk' . self::$x; // in 5 titles and 3 descriptions, nowhere else
        self::$account = 'acct_phppw_' . self::$x;
        $seller = 'phppw-' . self::$x;
        // 0..4: the word in the title (rank 1); 5..7: in the description only (rank 0);
        // 8..10: elsewhere in the catalogue (no match); 11: a draft with the word (never shown).
        $products = [];
        foreach (self::HOURS as $i => $hour) {
            $cents = self::CENTS[$i];
            $products[] = [
                'id' => self::pid($i), 'seller' => $seller,
                'title' => $i < 5 || $i === 11 ? self::$word . " poster $i" : "Plain print $i",
                'description' => $i >= 5 && $i < 8 ? 'A print that mentions ' . self::$word . ' in its description' : 'A print for the page walk',
                'category' => 'phppw-' . self::$x, 'currency' => 'USD', 'status' => $i === 11 ? 'draft' : 'published',
                'created_at' => sprintf('2026-02-01T%02d:00:00Z', $hour),
                'tiers' => [[
                    'id' => sprintf('tier_phppw_%s_%02d', self::$x, $i), 'name' => 'Personal', 'description' => '',
                    'price' => Stack::num(sprintf('%d.%02d', intdiv($cents, 100), $cents % 100)), 'licence' => (object) [],
                ]],
            ];
        }
        Stack::import([
            'mode' => 'test',
            'accounts' => [['id' => self::$account]],
            'sellers' => [['id' => $seller, 'account' => self::$account, 'name' => 'PHP Page Walk', 'bio' => '']],
            'products' => $products,
        ]);
    }

    private static function pid(int $i): string
    {
        return sprintf('prod_phppw_%s_%02d', self::$x, $i);
    }

    protected function setUp(): void
    {
        Stack::requireStack($this);
    }

    /**
     * products->all($params) walked with a fresh key.
     *
     * @param array<string, mixed> $params
     * @return array{ids: list<string>, attempts: list<RequestInfo>, pages: list<array{status: int, size: int, next: ?string}>}
     */
    private function walk(array $params): array
    {
        $attempts = [];
        $t = new RecordingTransport();
        $c = Stack::client(Stack::newKey(self::$account, 'test', 'read-only'), [
            'transport' => $t,
            'on_response' => static function (RequestInfo $info) use (&$attempts): void {
                $attempts[] = $info;
            },
        ]);
        $ids = [];
        foreach ($c->products->all($params) as $p) {
            $ids[] = $p->id;
        }
        $pages = [];
        foreach ($t->exchanges as $x) {
            self::assertNotNull($x['response'], 'every request was answered');
            $body = json_decode($x['response']->body, true, 512, JSON_THROW_ON_ERROR);
            $pages[] = ['status' => $x['response']->status, 'size' => count($body['data'] ?? []), 'next' => $body['next_cursor'] ?? null];
        }
        return ['ids' => $ids, 'attempts' => $attempts, 'pages' => $pages];
    }

    /** @param array{ids: list<string>, attempts: list<RequestInfo>, pages: list<array{status: int, size: int, next: ?string}>} $w */
    private static function assertWholePages(array $w, int $limit): void
    {
        $n = count($w['ids']);
        $want = max(1, (int) ceil($n / $limit));
        $sizes = implode(', ', array_column($w['pages'], 'size'));
        foreach ($w['attempts'] as $a) {
            self::assertSame([200, 1], [$a->status, $a->attempt], "no retry: {$a->path}");
        }
        self::assertCount(count($w['attempts']), $w['pages'], 'the hook saw every request the wire carried');
        self::assertCount($want, $w['attempts'], "$n results in pages of $limit take $want request(s) (page sizes $sizes)");
        $last = count($w['pages']) - 1;
        foreach ($w['pages'] as $k => $page) {
            if ($k < $last) {
                self::assertSame($limit, $page['size'], sprintf('page %d of %d is full (page sizes %s)', $k + 1, $last + 1, $sizes));
                self::assertIsString($page['next'], sprintf('page %d has a next_cursor', $k + 1));
            } else {
                self::assertTrue($page['size'] <= $limit && ($page['size'] > 0 || $n === 0), "the last page holds 1..$limit items, or none when nothing matched ($sizes)");
                self::assertNull($page['next'], 'the last page has next_cursor null');
            }
        }
        self::assertSame($n, array_sum(array_column($w['pages'], 'size')), 'the walk yielded what the pages held');
    }

    /** @param list<int> $order */
    private static function ids(array $order): array
    {
        return array_map(self::pid(...), $order);
    }

    public function testASearchWalkedThreeAtATimeByRelevanceHasWholePages(): void
    {
        $w = $this->walk(['q' => self::$word, 'limit' => 3]);
        // Titles first (rank 1), then descriptions (rank 0), id descending within a rank.
        self::assertSame(self::ids([4, 3, 2, 1, 0, 7, 6, 5]), $w['ids']);
        self::assertWholePages($w, 3); // 8 matches: 3 + 3 + 2
    }

    public function testASearchWalkedTwoAtATimeNewestEndsOnAFullPage(): void
    {
        $w = $this->walk(['q' => self::$word, 'sort' => 'newest', 'limit' => 2]);
        $order = range(0, 7);
        usort($order, static fn (int $a, int $b): int => [self::HOURS[$b], $b] <=> [self::HOURS[$a], $a]);
        self::assertSame(self::ids($order), $w['ids'], 'newest first');
        self::assertWholePages($w, 2); // 8 matches: 2 + 2 + 2 + 2, no empty fifth page
    }

    public function testASearchWalkedThreeAtATimeByPriceHasWholePages(): void
    {
        $w = $this->walk(['q' => self::$word, 'sort' => 'price_asc', 'limit' => 3]);
        $order = range(0, 7);
        usort($order, static fn (int $a, int $b): int => [self::CENTS[$a], $a] <=> [self::CENTS[$b], $b]);
        self::assertSame(self::ids($order), $w['ids'], 'cheapest first, ties by id');
        self::assertWholePages($w, 3);
    }

    public function testASearchMatchingNothingIsOneRequest(): void
    {
        $w = $this->walk(['q' => self::$word . 'nothing', 'limit' => 2]);
        self::assertSame([], $w['ids']);
        self::assertWholePages($w, 2);
        self::assertCount(1, $w['attempts']);
    }
}
