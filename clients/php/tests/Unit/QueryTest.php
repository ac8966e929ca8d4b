<?php

declare(strict_types=1);

namespace Market\Tests\Unit;

use InvalidArgumentException;
use Market\Internal\Query;
use PHPUnit\Framework\TestCase;

final class QueryTest extends TestCase
{
    public function testParametersInOrderPercentEncodedAsRfc3986(): void
    {
        self::assertSame('', Query::build([]));
        self::assertSame(
            'category=fonts&q=retro%20font%20%2B%20%22bold%22&limit=10&cursor=abc-_~.',
            Query::build(['category' => 'fonts', 'q' => 'retro font + "bold"', 'limit' => 10, 'cursor' => 'abc-_~.']),
        );
        // "+" must be %2B: the API reads a literal "+" as a space.
        self::assertSame('q=c%2B%2B', Query::build(['q' => 'c++']));
        self::assertSame('q=%C3%BCml%C3%A4ut%20%26%20x%3Dy%23z%2F%3F', Query::build(['q' => 'ümläut & x=y#z/?']));
    }

    public function testNullValuesAreLeftOut(): void
    {
        self::assertSame('limit=5', Query::build(['cursor' => null, 'limit' => 5, 'q' => null]));
    }

    public function testMoneyBoundsAreSentAsPlainDecimals(): void
    {
        self::assertSame('min_price=19.99&max_price=1200.50', Query::build(['min_price' => '19.99', 'max_price' => '1200.50']));
        self::assertSame('min_price=19.99&max_price=5', Query::build(['min_price' => 19.99, 'max_price' => 5.0]));
        self::assertSame('min_price=0.3', Query::build(['min_price' => 0.1 + 0.2]), 'no float artefacts');
        self::assertSame('max_price=100000000000', Query::build(['max_price' => 1e11]), 'no exponent');
        self::assertSame('min_price=0.00000015', Query::build(['min_price' => 1.5e-7]));
        self::assertSame('min_price=0', Query::build(['min_price' => -0.0]));
        self::assertSame('limit=100', Query::build(['limit' => 100]));
    }

    public function testDatesAreRfc3339InUtcWithAFractionOnlyWhenThereIsOne(): void
    {
        $utc = new \DateTimeZone('UTC');
        self::assertSame('2026-11-26T10:04:05Z', Query::time(new \DateTimeImmutable('2026-11-26 10:04:05', $utc)));
        self::assertSame('2026-11-26T10:04:05Z', Query::time(new \DateTimeImmutable('2026-11-26T11:04:05+01:00')), 'converted to UTC');
        self::assertSame('2026-11-26T10:04:05Z', Query::time(new \DateTime('2026-11-26 05:04:05', new \DateTimeZone('America/New_York'))));
        self::assertSame('2026-11-26T10:04:05.5Z', Query::time(new \DateTimeImmutable('2026-11-26 10:04:05.5', $utc)));
        self::assertSame('2026-11-26T10:04:05.000001Z', Query::time(new \DateTimeImmutable('2026-11-26 10:04:05.000001', $utc)));
        self::assertSame('2026-11-26T10:04:05.12345Z', Query::time(new \DateTimeImmutable('2026-11-26 10:04:05.123450', $utc)));
        self::assertSame('2027-01-01T00:00:00Z', Query::time(new \DateTimeImmutable('2026-12-31T19:00:00-05:00')), 'across a year');
        $t = new \DateTime('2026-11-26T11:04:05+01:00');
        Query::time($t);
        self::assertSame('+01:00', $t->format('P'), 'the caller\'s date is not changed');
        // In a query: percent-encoded; a string goes as it is.
        self::assertSame(
            'created_gte=2026-11-26T10%3A04%3A05.25Z&created_lt=2026-11-26T10%3A04%3A05%2B01%3A00',
            Query::build(['created_gte' => new \DateTimeImmutable('2026-11-26 10:04:05.25', $utc), 'created_lt' => '2026-11-26T10:04:05+01:00']),
        );
    }

    public function testValuesThatAreNotScalarsAreRefused(): void
    {
        foreach ([['a', 'b'], true, new \stdClass(), NAN, INF] as $bad) {
            try {
                Query::build(['category' => $bad]);
                self::fail('accepted ' . get_debug_type($bad));
            } catch (InvalidArgumentException $e) {
                self::assertStringContainsString('category', $e->getMessage());
            }
        }
    }

    public function testPathSegments(): void
    {
        self::assertSame('prod_font1', Query::segment('id', 'prod_font1'));
        self::assertSame('a%2Fb%20c%3F%23', Query::segment('id', 'a/b c?#'));
        self::assertSame('..', Query::segment('id', '..'));
        $this->expectException(InvalidArgumentException::class);
        Query::segment('id', '');
    }
}
