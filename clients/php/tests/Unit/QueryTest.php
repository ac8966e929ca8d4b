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
