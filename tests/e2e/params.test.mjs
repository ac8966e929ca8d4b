// Every 400 names its input (docs/contract.md section 4, issue 34): a table of every route
// of the API and every input it declares (app/api/http/routes.c: its query parameters, its path
// id, its body fields, and Idempotency-Key where the route honours it), crossed with every
// kind of bad value that applies to the input's type. Each case asserts the status, the
// code, the error envelope and `param`: the parameter or field by its name, `id` for the
// path segment, `Idempotency-Key` for the header. An id of the wrong shape names nothing
// and is 404 resource_missing by design (section 1: an id that names nothing is 404), but
// an over-long or undecodable one is a 400 with param "id" (request_path_param).
//
// Requests are written byte for byte (rawRequest of fixtures/expect.mjs): fetch would
// percent-encode raw bytes, normalise paths and refuse some header values. Every route has
// a key of its own, so that no route's cases meet the 600-a-minute limit of section 3.
//
// Runs with the extension of section 13 on (tests/e2e/run sets
// MARKET_API_EXTENSIONS=webhook-management): all 14 routes exist.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { api, importDoc, newKey, uniqueId, BASE_URL, FILES_ROOT } from './lib/stack.mjs';
import { assertError, pool, rawRequest } from './fixtures/expect.mjs';

const x = uniqueId('');
const ids = {
  account: `acct_pp_${x}`,
  seller: `pp-${x}`,
  product: `prod_pp_${x}`,
  tier: `tier_pp_${x}`,
  order: `ord_pp_${x}`,
  file: `file_pp_${x}`,
};
// A receiver address the stack accepts (MARKET_WEBHOOK_ALLOW_PRIVATE=1); nothing listens
// there, and nothing needs to: no case here waits for a delivery.
const HOOK = 'https://127.0.0.1:9/params';
const ROUTE_NAMES = [
  'products_list', 'product_get', 'seller_get', 'orders_list', 'download_link', 'webhooks_list',
  'webhooks_create', 'webhooks_get', 'webhooks_update', 'webhooks_delete', 'webhooks_rotate_secret',
  'webhooks_test', 'events_list', 'events_get',
];

const keys = {}; // a read-write key per route
const live = {}; // ids the paths name: download, subscriptions (main, del, gone), event
const results = []; // every case run: {route, name, status, code, param}

// ---------------------------------------------------------------------------------------
// Requests

const CRLF = '\r\n';
const bytes = (v) => (Buffer.isBuffer(v) ? v : Buffer.from(v, 'latin1'));
const utf8 = (s) => Buffer.from(s, 'utf8');

/**
 * One request, byte for byte: path and query are Buffers or latin1 strings (sent as they
 * are), headers an array of [name, value] (value a Buffer or latin1 string), body a
 * Buffer or a string (UTF-8), sent with Content-Type: application/json.
 */
function send(route, { method, path, query, headers = [], body }) {
  const target = query === undefined ? bytes(path) : Buffer.concat([bytes(path), bytes('?'), bytes(query)]);
  const lines = [[bytes('Authorization'), bytes(`Bearer ${keys[route]}`)]];
  for (const [name, value] of headers) lines.push([bytes(name), bytes(value)]);
  let payload = Buffer.alloc(0);
  if (body !== undefined) {
    payload = Buffer.isBuffer(body) ? body : utf8(body);
    lines.push([bytes('Content-Type'), bytes('application/json')]);
    lines.push([bytes('Content-Length'), bytes(String(payload.length))]);
  } else if (method !== 'GET') {
    lines.push([bytes('Content-Length'), bytes('0')]);
  }
  const head = Buffer.concat([
    bytes(`${method} `), target, bytes(' HTTP/1.1'),
    ...lines.flatMap(([n, v]) => [bytes(CRLF), n, bytes(': '), v]),
  ]);
  return rawRequest(BASE_URL, head, payload);
}

// ---------------------------------------------------------------------------------------
// The routes and their declared inputs (app/api/http/routes.c)

// Query parameter types, as app/api/http/input.h names them.
const LIMIT = { name: 'limit', type: 'int', min: 1, max: 100, valid: '5' };
const CURSOR = { name: 'cursor', type: 'text', valid: 'abc' };
const PRICE = (name, valid) => ({ name, type: 'decimal', valid });
const CREATED = (name) => ({ name, type: 'timestamp', valid: '2026-01-01T00:00:00Z' });

// Body field types, with a valid value of each.
const URL_FIELD = { name: 'url', type: 'url', valid: HOOK };
const EVENTS = { name: 'events', type: 'set', valid: ['payout.sent'] };
const DESCRIPTION = { name: 'description', type: 'string', max: 500, valid: 'params' };

/**
 * Each route: method, path (pathOf puts a valid id, or the case's, for :id), its query
 * parameters, its path id (a prefixed id or a seller handle, and a valid one), its body
 * fields (absent: the route reads no body; []: it reads one of no field, so that any field
 * is unknown), `base`: the fields every request must carry (url when creating), and
 * whether it honours Idempotency-Key (idem_run in app/api).
 */
const ROUTES = {
  products_list: {
    method: 'GET', path: '/v1/products',
    query: [
      { name: 'category', type: 'slug', valid: 'fonts' },
      { name: 'q', type: 'string', min: 1, max: 200, valid: 'otter' },
      { name: 'seller', type: 'handle', valid: () => ids.seller },
      PRICE('min_price', '1'),
      PRICE('max_price', '100'),
      { name: 'sort', type: 'enum', values: ['relevance', 'newest', 'price_asc', 'price_desc'], valid: 'newest' },
      LIMIT,
      CURSOR,
    ],
  },
  product_get: { method: 'GET', path: '/v1/products/:id', query: [], id: { prefix: 'prod_', valid: () => ids.product } },
  seller_get: { method: 'GET', path: '/v1/sellers/:id', query: [LIMIT, CURSOR], id: { handle: true, valid: () => ids.seller } },
  orders_list: {
    method: 'GET', path: '/v1/orders',
    query: [{ name: 'status', type: 'enum', values: ['paid', 'refunded'], valid: 'paid' }, LIMIT, CURSOR],
  },
  download_link: {
    method: 'POST', path: '/v1/downloads/:id/link', query: [], id: { prefix: 'dl_', valid: () => live.download },
    body: [{ name: 'expires_in', type: 'int', min: 60, max: 86400, valid: 600 }], base: {}, idem: true,
  },
  webhooks_list: { method: 'GET', path: '/v1/webhooks', query: [LIMIT, CURSOR] },
  webhooks_create: {
    method: 'POST', path: '/v1/webhooks', query: [],
    body: [URL_FIELD, EVENTS, DESCRIPTION], base: { url: HOOK }, idem: true,
  },
  webhooks_get: { method: 'GET', path: '/v1/webhooks/:id', query: [], id: { prefix: 'we_', valid: () => live.sub } },
  webhooks_update: {
    method: 'POST', path: '/v1/webhooks/:id', query: [], id: { prefix: 'we_', valid: () => live.sub },
    body: [URL_FIELD, EVENTS, DESCRIPTION, { name: 'disabled', type: 'bool', valid: false }], base: {}, idem: true,
  },
  webhooks_delete: {
    // Its own subscription: a case the server got wrong would delete it.
    method: 'DELETE', path: '/v1/webhooks/:id', query: [], id: { prefix: 'we_', valid: () => live.subDel },
    body: [], base: {}, idem: true,
  },
  webhooks_rotate_secret: {
    method: 'POST', path: '/v1/webhooks/:id/rotate_secret', query: [], id: { prefix: 'we_', valid: () => live.sub },
    body: [{ name: 'expire_old_in', type: 'int', min: 0, max: 604800, valid: 60 }], base: {}, idem: true,
  },
  webhooks_test: {
    method: 'POST', path: '/v1/webhooks/:id/test', query: [], id: { prefix: 'we_', valid: () => live.sub },
    body: [], base: {}, idem: true,
  },
  events_list: {
    method: 'GET', path: '/v1/events',
    query: [
      { name: 'type', type: 'enum', values: ['sale.completed', 'sale.refunded', 'review.created', 'payout.sent', 'webhook.test'], valid: 'payout.sent' },
      CREATED('created_gte'),
      CREATED('created_lt'),
      LIMIT,
      CURSOR,
    ],
  },
  events_get: { method: 'GET', path: '/v1/events/:id', query: [], id: { prefix: 'evt_', valid: () => live.event } },
};
assert.deepEqual(Object.keys(ROUTES), ROUTE_NAMES, 'the table holds the 14 routes of the API');

const value = (v) => (typeof v === 'function' ? v() : v);
const pathOf = (route, id) => ROUTES[route].path.replace(':id', id ?? value(ROUTES[route].id?.valid));

// ---------------------------------------------------------------------------------------
// Bad values

// Faults app/api/http/query finds whatever the parameter's type (a value it cannot decode, or over
// QUERY_MAX_VALUE bytes): parameter_invalid for every parameter, the cursor included.
const QUERY_UNDECODABLE = [
  ['over-long (2049 bytes)', 'a'.repeat(2049)],
  ['over-long, percent-encoded', '%61'.repeat(2049)],
  ['over-long, 2050 bytes of é', '%C3%A9'.repeat(1025)],
  ['over-long, 2052 bytes of an emoji', '%F0%9F%98%80'.repeat(513)],
  ['malformed percent-encoding: %', '%'],
  ['malformed percent-encoding: %4', '%4'],
  ['malformed percent-encoding: %zz', '%zz'],
  ['malformed percent-encoding mid-value', 'ab%g0cd'],
  ['malformed percent-encoding at the end', 'abc%'],
  ['invalid UTF-8: %FF', '%FF'],
  ['invalid UTF-8: a lone lead byte', '%C3'],
  ['invalid UTF-8: %C3%28', '%C3%28'],
  ['invalid UTF-8: an overlong form', '%C0%AF'],
  ['invalid UTF-8: an encoded surrogate', '%ED%A0%80'],
  ['invalid UTF-8: above U+10FFFF', '%F4%90%80%80'],
  ['invalid UTF-8: raw byte 0xFF', Buffer.from([0xff])],
  ['invalid UTF-8: raw bytes C3 28', Buffer.from([0xc3, 0x28])],
  ['NUL', '%00'],
  ['NUL inside', 'a%00b'],
];

// Values every type but the cursor's refuses (the cursor takes any text, and its handler
// finds it is no cursor: cursor_invalid).
const QUERY_UNREADABLE = [
  ['empty', ''],
  ['given without =', null],
  ['a control character', '%01'],
  ['a control character inside', 'a%1Fb'],
  ['a tab', '%09'],
  ['a line feed', 'x%0A'],
  ['DEL', '%7F'],
  ['a C1 control character', '%C2%85'],
];

// Values by type, refused for what they are.
const QUERY_BY_TYPE = {
  int: (p) => [
    ['below the range', String(p.min - 1)], ['above the range', String(p.max + 1)], ['negative', '-1'],
    ['a sign', '%2B5'], ['a leading zero', '05'], ['a fraction', '1.5'], ['an exponent', '1e2'],
    ['hex', '0x10'], ['a leading space', '%205'], ['a trailing + (a space)', '5+'],
    ['over 64 bits', '99999999999999999999'], ['a word', 'ten'], ['a fullwidth digit', '%EF%BC%95'],
  ],
  decimal: () => [
    ['negative', '-1'], ['negative cents', '-0.01'], ['a word', 'abc'], ['two dots', '1.2.3'],
    ['an exponent', '1e3'], ['no integer part', '.5'], ['no fraction digits', '5.'], ['a comma', '1,5'],
    ['a sign', '%2B1'], ['13 integer digits', '1234567890123'], ['13 fraction digits', '1.1234567890123'],
    ['NaN', 'NaN'], ['Infinity', 'Infinity'], ['hex', '0x1'], ['a leading space', '%201'],
  ],
  enum: (p) => [
    ['not a value', 'bogus'], ['another case', p.values[0].toUpperCase()], ['a trailing space', `${p.values[0]}%20`],
    ['a value and more', `${p.values[0]}x`], ['a value cut short', p.values[0].slice(0, -1)], ['an index', '0'],
  ],
  slug: () => [
    ['capitals', 'Fonts'], ['a leading hyphen', '-fonts'], ['an underscore', 'font_s'], ['a dot', 'a.b'],
    ['41 characters', 'a'.repeat(41)], ['a space', 'a%20b'], ['not ASCII', 'f%C3%B6nts'],
  ],
  handle: () => [
    ['capitals', 'Pixel'], ['a leading underscore', '_x'], ['a leading hyphen', '-x'], ['a dot', 'a.b'],
    ['41 characters', 'a'.repeat(41)], ['a space', 'a%20b'], ['not ASCII', 'p%C3%B6'],
  ],
  string: (p) => [
    [`${p.max + 1} characters`, 'a'.repeat(p.max + 1)],
    [`${p.max + 1} two-byte characters`, '%C3%A9'.repeat(p.max + 1)],
    [`${p.max + 1} emoji`, '%F0%9F%98%80'.repeat(p.max + 1)],
  ],
  timestamp: () => [
    ['a date', '2026-11-26'], ['no zone', '2026-11-26T10:04:05'], ['month 13', '2026-13-01T00:00:00Z'],
    ['30 February', '2026-02-30T00:00:00Z'], ['hour 24', '2026-11-26T24:00:00Z'],
    ['second 60', '2026-11-26T10:04:60Z'], ['7 fraction digits', '2026-11-26T10:04:05.1234567Z'],
    ['a space for T', '2026-11-26%2010:04:05Z'], ['a raw + (read as a space)', '2026-11-26T10:04:05+01:00'],
    ['a one-digit offset', '2026-11-26T10:04:05%2B1:00'], ['a word', 'yesterday'], ['epoch seconds', '1764151445'],
  ],
  text: () => [],
};

// Query strings that name no parameter of the route. [what, query, expected param].
function unknownQueries(route) {
  const names = ROUTES[route].query.map((p) => p.name);
  const foreign = ['limit', 'q', 'expires_in', 'status'].find((n) => !names.includes(n));
  const known = names[0] ?? 'id';
  const cased = known[0].toUpperCase() + known.slice(1);
  const unknown = (what, query, param) => ({ what, query, code: 'parameter_unknown', param });
  // A name that is not percent-encoded UTF-8 without NUL is named as it was sent, each
  // byte outside printable ASCII written %XX, cut to 64 bytes (app/api/http/query.c).
  const malformed = (what, query, param) => ({ what, query, code: 'parameter_invalid', param });
  return [
    unknown('an unknown parameter', 'x=1', 'x'),
    unknown('an unknown parameter without =', 'x', 'x'),
    unknown('an unknown parameter after a known one', names.length > 0 ? `${names[0]}=${value(ROUTES[route].query[0].valid)}&bogus=1` : 'bogus=1', 'bogus'),
    unknown('a parameter of another route', `${foreign}=1`, foreign),
    unknown('a known name in another case', `${cased}=1`, cased),
    unknown('a name with a space (+)', 'a+b=1', 'a b'),
    unknown('a name with a control character', 'a%01=1', 'a\u0001'),
    unknown('a name of 100 bytes, cut to 64', `${'n'.repeat(100)}=1`, 'n'.repeat(64)),
    unknown('a name of 30 euro signs, cut between characters', `${'%E2%82%AC'.repeat(30)}=1`, '€'.repeat(21)),
    unknown('a name of raw UTF-8', utf8('é=1'), 'é'),
    unknown('an empty name', '=1', ''),
    malformed('a malformed name: %zz', '%zz=1', '%zz'),
    malformed('a malformed name: a%', 'a%=1', 'a%'),
    malformed('an invalid UTF-8 name', '%FF=1', '%FF'),
    malformed('a NUL name', '%00=1', '%00'),
    malformed('a name with NUL', 'a%00b=1', 'a%00b'),
    malformed('a name of a raw byte 0xFF', Buffer.from('\xff=1', 'latin1'), '%FF'),
    malformed('a name with a raw byte 0xFF', Buffer.from('a\xff=1', 'latin1'), 'a%FF'),
    malformed('a malformed name of 300 bytes, cut to 64', `${'%FF'.repeat(100)}=1`, '%FF'.repeat(22).slice(0, 64)),
  ];
}

// JSON text, written by hand where JSON.stringify would not write it (a lone surrogate, a
// duplicated key): members are [key, value] pairs of raw JSON text.
const J = (v) => JSON.stringify(v);
const object = (members) => `{${members.map(([k, v]) => `${k}:${v}`).join(',')}}`;
const baseMembers = (route, without) =>
  Object.entries(ROUTES[route].base).filter(([k]) => k !== without).map(([k, v]) => [J(k), J(v)]);
/** The first letter of name as a \u escape: the same key to JSON, another text. */
const escapedKey = (name) => `"\\u${name.charCodeAt(0).toString(16).padStart(4, '0')}${name.slice(1)}"`;

// Values of the wrong JSON type, by field type.
const WRONG_TYPE = {
  int: [['a string', J('600')], ['null', 'null'], ['true', 'true'], ['an array', '[600]'], ['an object', '{}'], ['a fraction', '600.5'], ['a whole number written as a fraction', '600.0'], ['an exponent', '6e2']],
  bool: [['a string', J('true')], ['1', '1'], ['0', '0'], ['null', 'null'], ['an array', '[true]'], ['an object', '{}'], ['a word', J('yes')]],
  string: [['a number', '1'], ['null', 'null'], ['true', 'true'], ['an array', '["x"]'], ['an object', '{}']],
  url: [['a number', '1'], ['null', 'null'], ['true', 'true'], ['an array', J([HOOK])], ['an object', '{}']],
  set: [['a string', J('payout.sent')], ['null', 'null'], ['true', 'true'], ['a number', '1'], ['an object', '{"payout.sent":true}']],
};

// Values of the right type that the field refuses. [what, JSON text, code].
function refusedValues(f) {
  const invalid = (what, text) => [what, text, 'parameter_invalid'];
  switch (f.type) {
    case 'int':
      return [
        invalid('below the range', String(f.min - 1)), invalid('above the range', String(f.max + 1)),
        invalid('far below', '-99999999999999999999'), invalid('over 64 bits', '99999999999999999999'),
        invalid('a huge exponent', '1e400'),
      ];
    case 'bool':
      return [];
    case 'string':
      return [
        invalid(`${f.max + 1} characters`, J('a'.repeat(f.max + 1))),
        invalid(`${f.max + 1} characters of é`, J('é'.repeat(f.max + 1))),
        invalid(`${f.max + 1} emoji (surrogate pairs)`, J('😀'.repeat(f.max + 1))),
        invalid(`${f.max + 1} emoji, escaped`, `"${'\\ud83d\\ude00'.repeat(f.max + 1)}"`),
        invalid('a control character', J('a\u0001b')), invalid('a line feed', J('a\nb')),
        invalid('a tab', J('\t')), invalid('DEL', J('a\u007f')), invalid('a C1 control character', J('a\u0085')),
      ];
    case 'url':
      return [
        ['http', J('http://127.0.0.1:9/params'), 'url_not_https'],
        ['HTTP in capitals', J('HTTP://127.0.0.1:9/params'), 'url_not_https'],
        invalid('another scheme', J('ftp://127.0.0.1/x')),
        invalid('no scheme', J('//127.0.0.1/x')), invalid('no host', J('https://')),
        invalid('no host, a path', J('https:///x')), invalid('userinfo', J('https://u:p@127.0.0.1/x')),
        invalid('a fragment', J('https://127.0.0.1/x#f')), invalid('a space', J('https://127.0.0.1/a b')),
        invalid('a control character', J('https://127.0.0.1/\u0001')), invalid('not ASCII', J('https://127.0.0.1/é')),
        invalid('a backslash', J('https://127.0.0.1\\x')), invalid('port 0', J('https://127.0.0.1:0/')),
        invalid('port 65536', J('https://127.0.0.1:65536/')), invalid('an empty port', J('https://127.0.0.1:/')),
        invalid('a short IPv4 form', J('https://127.1/')), invalid('an IPv6 zone', J('https://[fe80::1%25eth0]/')),
        invalid('2049 bytes', J(`https://127.0.0.1/${'a'.repeat(2049 - 'https://127.0.0.1/'.length)}`)),
        invalid('a bad percent-escape', J('https://127.0.0.1/%zz')), invalid('not a URL', J('not a url')),
        ['a host that does not resolve', J('https://nosuch.invalid/x'), 'url_not_allowed'],
      ];
    case 'set':
      return [
        invalid('an empty list', '[]'), invalid('an unknown kind', J(['bogus'])),
        invalid('a kind and an unknown one', J(['payout.sent', 'bogus'])), invalid('another case', J(['PAYOUT.SENT'])),
        invalid('webhook.test (not subscribable)', J(['webhook.test'])), invalid('a number in it', '[1]'),
        invalid('null in it', '[null]'), invalid('a list in it', J([['payout.sent']])),
        invalid('a control character in a kind', J(['payout.sent\u0001'])),
        invalid('a kind of 3000 bytes', J(['p'.repeat(3000)])),
      ];
    default:
      throw new Error(`no refused values for ${f.type}`);
  }
}

// ---------------------------------------------------------------------------------------
// The cases

/** Every case of a route: {route, input, name, req, status, code, param}. */
function casesOf(route) {
  const r = ROUTES[route];
  const out = [];
  const add = (input, what, req, status, code, param) =>
    out.push({ route, input, name: `${route} ${input}: ${what}`, req: { method: r.method, path: pathOf(route), ...req }, status, code, param });
  const bodyOk = r.body ? J(r.base) : undefined; // a body the route accepts

  // Query parameters, each alone (the route's path id and body valid).
  for (const p of r.query) {
    const q = (v) => (v === null ? bytes(p.name) : Buffer.concat([bytes(`${p.name}=`), bytes(v)]));
    for (const [what, v] of QUERY_UNDECODABLE) add(p.name, what, { query: q(v), body: bodyOk }, 400, 'parameter_invalid', p.name);
    for (const [what, v] of QUERY_UNREADABLE) {
      const code = p.type === 'text' ? 'cursor_invalid' : 'parameter_invalid';
      add(p.name, what, { query: q(v), body: bodyOk }, 400, code, p.name);
    }
    for (const [what, v] of QUERY_BY_TYPE[p.type](p)) add(p.name, what, { query: q(v) }, 400, 'parameter_invalid', p.name);
    if (p.type === 'text') {
      add(p.name, 'not a cursor', { query: q('garbage') }, 400, 'cursor_invalid', p.name);
      add(p.name, '2048 bytes, not a cursor', { query: q('a'.repeat(2048)) }, 400, 'cursor_invalid', p.name);
    }
    const v = value(p.valid);
    add(p.name, 'given twice', { query: `${p.name}=${v}&${p.name}=${v}` }, 400, 'parameter_duplicated', p.name);
    add(p.name, 'given twice, another value', { query: `${p.name}=${v}&${p.name}=${v}0` }, 400, 'parameter_duplicated', p.name);
    add(p.name, 'given twice, first empty', { query: `${p.name}=&${p.name}=${v}` }, 400, 'parameter_duplicated', p.name);
    add(p.name, 'given twice, the second name percent-encoded', { query: `${p.name}=${v}&%${p.name.charCodeAt(0).toString(16)}${p.name.slice(1)}=${v}` }, 400, 'parameter_duplicated', p.name);
    add(p.name, 'given three times', { query: `${p.name}=${v}&${p.name}=${v}&${p.name}=${v}` }, 400, 'parameter_duplicated', p.name);
    add(p.name, 'given twice, once without =', { query: `${p.name}&${p.name}=${v}` }, 400, 'parameter_duplicated', p.name);
    const other = r.query.find((o) => o.name !== p.name && o.type !== 'text');
    if (other) {
      const between = `${other.name}=${encodeURIComponent(value(other.valid))}`;
      add(p.name, 'given twice, another parameter between', { query: `${p.name}=${v}&${between}&${p.name}=${v}` }, 400, 'parameter_duplicated', p.name);
    }
  }
  for (const c of unknownQueries(route)) add('(unknown query parameter)', c.what, { query: c.query, body: bodyOk }, 400, c.code, c.param);

  // The path id.
  if (r.id) {
    const [head, tail] = r.path.split(':id');
    const missing = (what, id) => add('id', what, { path: pathOf(route, id), body: bodyOk }, 404, 'resource_missing', 'id');
    const refused = (what, id) =>
      add('id', what, { path: Buffer.concat([bytes(head), bytes(id), bytes(tail)]), body: bodyOk }, 400, 'parameter_invalid', 'id');
    add('id', 'empty (no such route)', { path: `${head}${tail}`, body: bodyOk }, 404, 'route_not_found', null);
    const shaped = r.id.handle ? `nosuch-${x}` : `${r.id.prefix}nosuch${x}`;
    missing('of the right shape, naming nothing', shaped);
    missing('another prefix', r.id.prefix === 'prod_' ? `evt_${x}` : `prod_${x}`);
    missing('no prefix', 'nope');
    missing('capitals', r.id.handle ? 'Pixel' : `${r.id.prefix.toUpperCase()}${x}`);
    missing('the prefix alone', r.id.prefix ?? '_');
    missing('a dot', r.id.handle ? 'a.b' : `${r.id.prefix}a.b`);
    missing('an encoded space', `${r.id.prefix ?? 'a'}%20x`);
    missing('an encoded control character', `${r.id.prefix ?? 'a'}%01`);
    missing('an encoded slash', `${r.id.prefix ?? 'a'}%2Fx`);
    missing('encoded UTF-8', `${r.id.prefix ?? 'a'}%C3%A9`);
    missing('255 bytes', `${r.id.prefix ?? ''}${'a'.repeat(255 - (r.id.prefix ?? '').length)}`);
    missing('255 bytes, percent-encoded', '%61'.repeat(255));
    refused('256 bytes', `${r.id.prefix ?? ''}${'a'.repeat(256 - (r.id.prefix ?? '').length)}`);
    refused('256 bytes, percent-encoded', '%61'.repeat(256));
    refused('4096 bytes', 'a'.repeat(4096));
    // nginx decodes the path itself (to match a location) and answers a path it cannot
    // decode, or one that decodes to a NUL, with its own 400 before any worker sees it.
    const byNginx = (what, id) => {
      refused(what, id);
      out[out.length - 1].nginx = true;
    };
    byNginx('malformed percent-encoding: %', `${r.id.prefix ?? ''}%`);
    byNginx('malformed percent-encoding: %4', `${r.id.prefix ?? ''}%4`);
    byNginx('malformed percent-encoding: %zz', `${r.id.prefix ?? ''}%zz`);
    byNginx('NUL', `${r.id.prefix ?? ''}%00`);
    refused('invalid UTF-8: %FF', `${r.id.prefix ?? ''}%FF`);
    refused('invalid UTF-8: %C3%28', `${r.id.prefix ?? ''}%C3%28`);
    refused('invalid UTF-8: an encoded surrogate', `${r.id.prefix ?? ''}%ED%A0%80`);
    refused('invalid UTF-8: an overlong form', `${r.id.prefix ?? ''}%C0%AF`);
    refused('invalid UTF-8: raw byte 0xFF', Buffer.concat([bytes(r.id.prefix ?? ''), Buffer.from([0xff])]));
  }

  // The body fields, each alone (with the fields the route requires).
  if (r.body) {
    for (const f of r.body) {
      const base = baseMembers(route, f.name);
      const body = (...members) => object([...base, ...members]);
      const fk = J(f.name);
      const v = J(f.valid);
      const bad = (what, text, code = 'parameter_invalid', param = f.name) => add(f.name, what, { body: text }, 400, code, param);
      for (const [what, t] of WRONG_TYPE[f.type]) bad(`wrong type: ${what}`, body([fk, t]));
      if (f.type !== 'string') bad('an empty string', body([fk, J('')]));
      bad('a string of 10000 bytes', body([fk, J('a'.repeat(10000))]));
      for (const [what, t, code] of refusedValues(f)) bad(what, body([fk, t]), code);
      bad('given twice', body([fk, v], [fk, v]), 'parameter_duplicated');
      bad('given twice, the second invalid', body([fk, v], [fk, 'null']), 'parameter_duplicated');
      bad('given twice, the second key escaped', body([fk, v], [escapedKey(f.name), v]), 'parameter_duplicated');
      bad('given twice, other fields between', object([[fk, v], ...base, [fk, v]]), 'parameter_duplicated');
      bad('NUL in its value', body([fk, '"\\u0000"']));
      bad('NUL inside its value', body([fk, '"a\\u0000b"']));
      bad('NUL in a list in its value', body([fk, '["\\u0000"]']));
      bad('NUL in an object in its value', body([fk, '{"k":"\\u0000"}']));
      bad('NUL in a key inside its value', body([fk, '{"k\\u0000":1}']));
      bad('NUL at the end of its key', body([`"${f.name}\\u0000"`, v]));
      bad('NUL inside its key', body([`"${f.name}\\u0000x"`, v]));
      bad('a lone high surrogate in its value', body([fk, '"\\ud800"']));
      bad('a lone low surrogate in its value', body([fk, '"\\udc00"']));
      bad('a lone surrogate inside its value', body([fk, '"a\\uDBFFb"']));
      bad('a high surrogate then no low one', body([fk, '"\\ud800\\u0041"']));
      bad('two high surrogates', body([fk, '"\\ud800\\ud800"']));
      bad('a lone surrogate in a list in its value', body([fk, '["\\udfff"]']));
      bad('a lone surrogate in its key', body([`"${f.name}\\ud800"`, v]), 'parameter_invalid', `${f.name}\ufffd`);
      // json-c takes a raw control character in a string, which JSON does not: the field's
      // type refuses it then, and names the field.
      bad('a raw control character in its value', body([fk, '"a\u0001b"']));
      bad('a raw tab in its value', body([fk, '"a\tb"']));
    }
    // Bodies that name no field of the route, or that are not one JSON object.
    const base = baseMembers(route);
    const names = r.body.map((f) => f.name);
    const foreign = ['url', 'expires_in', 'disabled'].find((n) => !names.includes(n));
    const cased = (names[0] ?? 'id').toUpperCase();
    const unknown = (what, members, param, code = 'parameter_unknown') =>
      add('(unknown body field)', what, { body: object([...base, ...members]) }, 400, code, param);
    unknown('an unknown field', [['"bogus"', '1']], 'bogus');
    unknown('an unknown field, null', [['"bogus"', 'null']], 'bogus');
    unknown('a field of another route', [[J(foreign), '1']], foreign);
    unknown('a known name in capitals', [[J(cased), '1']], cased);
    unknown('a name of 100 bytes, cut to 64', [[J('k'.repeat(100)), '1']], 'k'.repeat(64));
    unknown('a name of 30 euro signs, cut between characters', [[J('€'.repeat(30)), '1']], '€'.repeat(21));
    unknown('a name of 40 emoji, cut between characters', [[J('😀'.repeat(40)), '1']], '😀'.repeat(16));
    unknown('a name with a control character', [['"x\\u0001"', '1']], 'x\u0001');
    unknown('an escaped name', [['"\\u0062ogus"', '1']], 'bogus');
    unknown('an empty name', [['""', '1']], '');
    unknown('an unknown field given twice', [['"bogus"', '1'], ['"bogus"', '2']], 'bogus', 'parameter_duplicated');
    unknown('a name that is a NUL', [['"\\u0000"', '1']], '', 'parameter_invalid');
    unknown('a name that is a lone surrogate', [['"\\udc00"', '1']], '\ufffd', 'parameter_invalid');
    const notObject = (what, text) => add('(the body)', what, { body: text }, 400, 'body_invalid_json', null);
    notObject('an array', '[]');
    notObject('a string', '"x"');
    notObject('null', 'null');
    notObject('a number', '1');
    notObject('unfinished', '{');
    notObject('text after the object', `${J(r.base)}x`);
    notObject('two objects', `${J(r.base)} {}`);
    notObject('single quotes', "{'bogus':1}");
    notObject('a trailing comma', '{"bogus":1,}');
    notObject('invalid UTF-8', Buffer.concat([utf8('{"bogus":"'), Buffer.from([0xff]), utf8('"}')]));
    notObject('a raw NUL byte in a string', Buffer.concat([utf8('{"bogus":"a'), Buffer.from([0]), utf8('b"}')]));
    notObject('nested deeper than 16', `{"bogus":${'['.repeat(20)}${']'.repeat(20)}}`);
    if (r.base.url) {
      add('url', 'missing', { body: '{}' }, 400, 'parameter_missing', 'url');
      add('url', 'missing, other fields given', { body: J({ events: ['payout.sent'] }) }, 400, 'parameter_missing', 'url');
      add('url', 'missing, no body', {}, 400, 'parameter_missing', 'url');
    }
  }

  // Idempotency-Key, where the route honours it.
  if (r.idem) {
    const idem = (what, values) => add('Idempotency-Key', what, {
      headers: values.map((v) => ['Idempotency-Key', v]), body: bodyOk,
    }, 400, 'idempotency_key_invalid', 'Idempotency-Key');
    idem('empty', ['']);
    idem('only spaces (nginx trims them: empty)', ['   ']);
    idem('256 characters', ['k'.repeat(256)]);
    idem('4000 characters', ['k'.repeat(4000)]);
    idem('UTF-8', [utf8(`k-é-${x}`)]);
    idem('a Latin-1 byte', [Buffer.from(`k-\xe9-${x}`, 'latin1')]);
    idem('a tab inside', [`k\t${x}`]);
    idem('a control character inside', [`k\x01${x}`]);
    idem('DEL inside', [`k\x7f${x}`]);
    idem('given twice', [`k-${x}`, `k-${x}`]);
    idem('given twice, other values', [`k1-${x}`, `k2-${x}`]);
    idem('given twice, the first empty', ['', `k-${x}`]);
  }

  // Cross-field rules of GET /v1/products (products_list.c): the input that is at fault.
  if (route === 'products_list') {
    add('sort', 'relevance without q', { query: 'sort=relevance' }, 400, 'parameter_invalid', 'sort');
    add('max_price', 'below min_price', { query: 'min_price=5&max_price=1' }, 400, 'parameter_invalid', 'max_price');
    add('max_price', 'below min_price, by a cent', { query: 'min_price=5.01&max_price=5' }, 400, 'parameter_invalid', 'max_price');
  }
  return out;
}

/** A request of the route that passes every check: its query parameters all given. */
function baselineOf(route) {
  const r = ROUTES[route];
  const query = r.query.filter((p) => p.type !== 'text').map((p) => `${p.name}=${encodeURIComponent(value(p.valid))}`).join('&');
  const body = r.body ? J(Object.fromEntries([...Object.entries(r.base), ...r.body.map((f) => [f.name, f.valid])])) : undefined;
  return { method: r.method, path: pathOf(route), query: query || undefined, body };
}

// ---------------------------------------------------------------------------------------

before(async () => {
  const dir = `pp-${x}`;
  mkdirSync(join(FILES_ROOT, dir), { recursive: true });
  writeFileSync(join(FILES_ROOT, dir, 'pack.zip'), 'params');
  importDoc({
    mode: 'test',
    accounts: [{ id: ids.account, email: `${ids.account}@example.com` }],
    sellers: [{ id: ids.seller, account: ids.account, name: 'Params Seller' }],
    products: [{
      id: ids.product, seller: ids.seller, title: 'Otter Params', category: 'fonts', currency: 'USD',
      status: 'published', tiers: [{ id: ids.tier, name: 'Personal', price: 9.5 }],
      files: [{ id: ids.file, filename: 'pack.zip', path: `${dir}/pack.zip`, size_bytes: 6 }],
    }],
    orders: [{ id: ids.order, account: ids.account, status: 'paid', created_at: '2026-01-01T00:00:00Z', items: [{ product: ids.product, tier: ids.tier }] }],
  });
  for (const route of ROUTE_NAMES) keys[route] = newKey({ account: ids.account });
  const setup = newKey({ account: ids.account });

  const orders = await api('/v1/orders', { key: setup });
  assert.equal(orders.status, 200, orders.text);
  live.download = orders.json.data.find((o) => o.id === ids.order).downloads[0].id;
  assert.match(live.download, /^dl_/);
  const subscribe = async () => {
    const s = await api('/v1/webhooks', { key: setup, method: 'POST', body: { url: HOOK, events: ['payout.sent'] } });
    assert.equal(s.status, 201, s.text);
    return s.json.id;
  };
  live.sub = await subscribe();
  live.subDel = await subscribe();
  live.subGone = await subscribe(); // deleted by the DELETE baseline
  const ev = await api(`/v1/webhooks/${live.sub}/test`, { key: setup, method: 'POST' });
  assert.equal(ev.status, 202, ev.text);
  live.event = ev.json.id;
  assert.match(live.event, /^evt_/);
});

/** Runs the cases of a route, 4 at a time; records every answer in `into`; returns the failures. */
async function run(route, cases, into) {
  const failures = [];
  await pool(cases.map((c) => async () => {
    let res;
    try {
      res = await send(route, c.req);
    } catch (err) {
      failures.push(`${c.name}: no answer (${err.message})`);
      return;
    }
    const e = res.json?.error;
    into.push({ route, name: c.name, status: res.status, code: e?.code, param: e?.param });
    try {
      assertError(res, c.status, 'invalid_request_error', c.code, c.param);
    } catch (err) {
      failures.push(`${c.name}: expected ${c.status} ${c.code} param ${J(c.param)}, ` +
        `got ${res.status} ${e?.code} param ${J(e?.param)} (${err.message.split('\n')[0].slice(0, 160)})`);
    }
  }), 4);
  return failures;
}

test('each route answers a request of valid inputs (the table is right)', async () => {
  const expected = {
    webhooks_create: 201, download_link: 201, webhooks_test: 202, // the rest: 200
  };
  for (const route of ROUTE_NAMES) {
    const req = baselineOf(route);
    if (route === 'webhooks_delete') req.path = pathOf(route, live.subGone);
    const res = await send(route, req);
    assert.equal(res.status, expected[route] ?? 200, `${route}: ${res.text}`);
  }
});

for (const route of ROUTE_NAMES) {
  test(`${ROUTES[route].method} ${ROUTES[route].path}: every declared input, every bad value`, async (t) => {
    const cases = casesOf(route).filter((c) => !c.nginx);
    const failures = await run(route, cases, results);
    t.diagnostic(`${route}: ${cases.length} cases`);
    assert.deepEqual(failures, [], `${failures.length} of ${cases.length} cases failed`);
  });
}

// nginx answers these itself, before any worker: its 400 names the path id as the workers
// would (nginx/market-http.conf.template, map $market_400_param).
const nginxResults = [];
test('a path id nginx cannot decode: 400 with param "id"', async (t) => {
  const failures = [];
  let n = 0;
  for (const route of ROUTE_NAMES) {
    const cases = casesOf(route).filter((c) => c.nginx);
    n += cases.length;
    failures.push(...await run(route, cases, nginxResults));
  }
  t.diagnostic(`${n} cases`);
  assert.deepEqual(failures, [], `${failures.length} of ${n} cases failed`);
});

test('no 400 lacks param where one input is at fault; nothing answers 5xx', (t) => {
  const by = {};
  for (const r of results) by[r.status] = (by[r.status] ?? 0) + 1;
  const summary = `${results.length + nginxResults.length} cases over ${ROUTE_NAMES.length} routes ` +
    `(${results.length} answered by the workers, by status ${J(by)}; ${nginxResults.length} by nginx)`;
  t.diagnostic(summary);
  console.log(`params.test: ${summary}`);
  assert.ok(results.length >= 500, `hundreds of cases ran (${results.length})`);
  // The codes where no single input is at fault: a body that is not one JSON object, and
  // the account's subscription limit.
  const WHOLE = ['body_invalid_json', 'subscription_limit_reached'];
  const unnamed = results.filter((r) => r.status === 400 && r.param === undefined && !WHOLE.includes(r.code));
  assert.deepEqual(unnamed.map((r) => `${r.name}: ${r.code}`), [], 'every 400 of one input names it');
  const broken = results.filter((r) => r.status >= 500 || r.status < 400);
  assert.deepEqual(broken.map((r) => `${r.name}: ${r.status}`), [], 'every case is a clean 4xx');
});
