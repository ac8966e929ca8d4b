<?php

declare(strict_types=1);

namespace Market\Tests\Unit;

use JsonException;
use Market\Internal\Json;
use Market\Internal\JsonNumber;
use PHPUnit\Framework\TestCase;

final class JsonTest extends TestCase
{
    public function testNumbersKeepTheirExactText(): void
    {
        $doc = Json::decode('{"a": 19.99, "b": 90071992547409.93, "c": 5, "d": -0.5e3, "e": 1200.50, "f": 0.1}');
        foreach (['a' => '19.99', 'b' => '90071992547409.93', 'c' => '5', 'd' => '-0.5e3', 'e' => '1200.50', 'f' => '0.1'] as $k => $raw) {
            self::assertInstanceOf(JsonNumber::class, $doc[$k]);
            self::assertSame($raw, $doc[$k]->raw);
        }
        // What plain json_decode would have made of it.
        self::assertNotSame('90071992547409.93', (string) json_decode('90071992547409.93'));
    }

    public function testStringsKeysAndLiteralsAreUntouched(): void
    {
        $text = '{"s": "19.99", "k:ey": "v\"al: 12", "u": "\u00fc\ud83d\ude00", "t": true, "f": false, "n": null, '
            . '"list": [1, "2", [3.5]], "empty": "", "obj": {}, "arr": [], "12": "twelve"}';
        $doc = Json::decode($text);
        self::assertSame('19.99', $doc['s']);
        self::assertSame('v"al: 12', $doc['k:ey']);
        self::assertSame("ü\u{1F600}", $doc['u']);
        self::assertTrue($doc['t']);
        self::assertFalse($doc['f']);
        self::assertNull($doc['n']);
        self::assertSame('', $doc['empty']);
        self::assertSame([], $doc['obj']);
        self::assertSame([], $doc['arr']);
        self::assertSame('twelve', $doc[12]);
        self::assertSame([1, '2', [3.5]], Json::toNative($doc['list']));
        self::assertSame(['seats' => 1, 'ratio' => 0.5, 'big' => 1.0E+30], Json::toNative(Json::decode('{"seats":1,"ratio":0.5,"big":1e30}')));
        self::assertIsFloat(Json::toNative(Json::decode('99999999999999999999')));
    }

    public function testALongStringDoesNotBreakTheScanner(): void
    {
        $long = str_repeat('ab\\"c', 200000);
        $doc = Json::decode('{"x":"' . $long . '","y":1.10}');
        self::assertSame(str_repeat('ab"c', 200000), $doc['x']);
        self::assertSame('1.10', $doc['y']->raw);
    }

    public function testInvalidDocumentsAreRefused(): void
    {
        foreach (['', 'nope', '{"a":1.2.3}', '{"a":01}', '{"a":"b"', '{"a":.5}', '{"a":1,}', "{\"a\":\"\x00\"}"] as $bad) {
            try {
                Json::decode($bad);
                self::fail('accepted ' . var_export($bad, true));
            } catch (JsonException) {
                self::addToAssertionCount(1);
            }
        }
    }
}
