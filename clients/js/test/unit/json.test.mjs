// The money-exact JSON reader and the conversion to the client's values.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  parseJson, convert, decode, JsonNumber, camelCase, PRODUCT, PRODUCT_PAGE, ORDER_PAGE, SELLER, EVENT,
} from '../../src/json.js';

/** parseJson's tree with numbers made plain, to compare with JSON.parse. */
const plain = (v) => {
  if (v instanceof JsonNumber) return Number(v.raw);
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
};

test('parseJson reads what JSON.parse reads', () => {
  const samples = [
    '0', '-0', '1', '-12.5e3', '1E+2', '0.1', 'true', 'false', 'null', '""', '"a\\"b\\\\c\\/\\b\\f\\n\\r\\t"',
    '"\\u00e9\\ud83d\\ude00 é 😀"', '[]', '{}', ' [ 1 , 2 ,[ {} ] ] ', '{"a":{"b":[null,{"c":"d"}]},"e":1}',
    '\n\t{"k" : "v"}\r\n', '[1.5,-2,3e-4]',
  ];
  for (const s of samples) assert.deepEqual(plain(parseJson(s)), JSON.parse(s), s);
});

test('parseJson refuses what JSON.parse refuses', () => {
  const bad = [
    '', ' ', '{', '[1,]', '{"a":1,}', '{a:1}', "'a'", '01', '1.', '.5', '+1', '--1', 'tru', 'nul', '[1 2]',
    '{"a" 1}', '"\u0001"', '"\\x41"', '"abc', '1 2', 'NaN', 'Infinity', '{"a":1}}', '[',
  ];
  for (const s of bad) {
    assert.throws(() => JSON.parse(s), SyntaxError, `JSON.parse accepts ${JSON.stringify(s)}`);
    assert.throws(() => parseJson(s), SyntaxError, JSON.stringify(s));
  }
});

test('numbers keep their text', () => {
  const v = parseJson('{"price": 19.99, "big": 12345678901234567890.123456789}');
  assert.ok(v.price instanceof JsonNumber);
  assert.equal(v.price.raw, '19.99');
  assert.equal(v.big.raw, '12345678901234567890.123456789');
});

test('a "__proto__" key is data, never the prototype', () => {
  const v = decode('{"__proto__": {"polluted": 1}, "a": 1}');
  assert.equal(Object.getPrototypeOf(v), Object.prototype);
  assert.equal({}.polluted, undefined);
  assert.deepEqual(Object.keys(v), ['__proto__', 'a']);
  assert.equal(v.polluted, undefined);
});

test('camelCase', () => {
  assert.equal(camelCase('next_cursor'), 'nextCursor');
  assert.equal(camelCase('size_bytes'), 'sizeBytes');
  assert.equal(camelCase('tier_name'), 'tierName');
  assert.equal(camelCase('id'), 'id');
});

test('a product page: money as exact decimal strings, nextCursor', () => {
  const v = decode('{"data":[{"id":"prod_1","title":"T","price":19.99,"seller":"s"},{"id":"prod_2","title":"U","price":0.1,"seller":"s"}],"next_cursor":null}', PRODUCT_PAGE);
  assert.deepEqual(v, {
    data: [{ id: 'prod_1', title: 'T', price: '19.99', seller: 's' }, { id: 'prod_2', title: 'U', price: '0.1', seller: 's' }],
    nextCursor: null,
  });
});

test('a product: tiers priced exactly; licence keys kept as recorded; rating stays a number', () => {
  const text = '{"id":"prod_1","title":"T","description":"D","category":"fonts","price":1200.5,"currency":"USD","seller":"s",'
    + '"tiers":[{"id":"tier_1","name":"P","description":"","price":1200.5,"currency":"USD","licence":{"max_seats":3,"price":9.5,"nested_key":{"a_b":1}}}],'
    + '"rating":{"average":4.25,"count":2},"created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z"}';
  const v = decode(text, PRODUCT);
  assert.equal(v.price, '1200.5');
  assert.equal(v.tiers[0].price, '1200.5');
  assert.deepEqual(v.tiers[0].licence, { max_seats: 3, price: 9.5, nested_key: { a_b: 1 } });
  assert.deepEqual(v.rating, { average: 4.25, count: 2 });
  assert.equal(v.createdAt, '2026-01-02T03:04:05Z');
  assert.equal(v.updatedAt, '2026-01-02T03:04:05Z');
});

test('a seller: product_count a number, its products a page', () => {
  const v = decode('{"id":"s","name":"S","bio":"","website":null,"created_at":"x","product_count":42,"products":{"data":[{"id":"p","title":"t","price":5,"seller":"s"}],"next_cursor":"abc"}}', SELLER);
  assert.equal(v.productCount, 42);
  assert.deepEqual(v.products, { data: [{ id: 'p', title: 't', price: '5', seller: 's' }], nextCursor: 'abc' });
});

test('an order page: total and item prices exact, downloads camelCased', () => {
  const v = decode('{"data":[{"id":"ord_1","status":"paid","created_at":"c","currency":"JPY","total":1200,"items":[{"product":"p","title":"t","tier":"tr","tier_name":"Personal","price":1200}],'
    + '"downloads":[{"id":"dl_1","product":"p","filename":"f.zip","size_bytes":1048576,"url":null,"expires_at":null}]}],"next_cursor":null}', ORDER_PAGE);
  const o = v.data[0];
  assert.equal(o.total, '1200');
  assert.equal(o.items[0].price, '1200');
  assert.equal(o.items[0].tierName, 'Personal');
  assert.deepEqual(o.downloads[0], { id: 'dl_1', product: 'p', filename: 'f.zip', sizeBytes: 1048576, url: null, expiresAt: null });
});

test('an event: amount exact, other numbers numbers', () => {
  const sale = decode('{"id":"evt_1","type":"sale.completed","created_at":"c","livemode":false,"data":{"order":"o","product":"p","tier":"t","amount":19.99,"currency":"USD"}}', EVENT);
  assert.equal(sale.data.amount, '19.99');
  assert.equal(sale.createdAt, 'c');
  const review = decode('{"id":"evt_2","type":"review.created","created_at":"c","livemode":true,"data":{"review":"r","product":"p","rating":5,"body":"b"}}', EVENT);
  assert.equal(review.data.rating, 5);
});

test('fields the schema does not know still come through, camelCased', () => {
  const v = convert(parseJson('{"new_field":{"inner_value":1.5}}'), PRODUCT);
  assert.deepEqual(v, { newField: { innerValue: 1.5 } });
});
