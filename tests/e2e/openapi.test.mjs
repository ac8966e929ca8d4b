// docs/openapi.json against itself and against the running service.
//
// (a) The document: JSON, OpenAPI 3.1.x, exactly the six routes, the routes of the
//     extension webhook-management (each marked "x-market-extension", the others not;
//     the suite's stack runs with it on) and the files location, a schema for every response, the scope of every route, every $ref resolvable, every
//     schema compilable by Ajv (JSON Schema 2020-12, strict: unknown keywords and formats
//     are errors), and schemas that reject what they must (a test that cannot fail proves
//     nothing).
// (b) The service: real answers of every route, successes and errors, validated against
//     the operation's documented response for that status (body schema, documented
//     headers present and well-formed, no undocumented API header); the requests made are
//     checked against the documented parameters and bodies too (an accepted request must
//     be valid per the document, a request refused with parameter_invalid/unknown/missing
//     must be invalid per the document). Webhook payloads are validated from the events
//     table and as delivered to a real HTTPS receiver.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020.js';

import { api, admin, importDoc, newKey, psql, uniqueId, DOWNLOAD_BASE_URL, FILES_ROOT } from './lib/stack.mjs';
import { startReceiver, verifyDelivery } from './fixtures/webhook_receiver.mjs';

// ---------------------------------------------------------------------------------------
// The document and a validator for its schemas.
const DOC_FILE = new URL('../../docs/openapi.json', import.meta.url);
const docText = readFileSync(DOC_FILE, 'utf8');
let doc;
let docError;
try {
  doc = JSON.parse(docText);
} catch (e) {
  docError = e;
}

const ROUTES = {
  '/v1/products': { get: 'products:read' },
  '/v1/products/{id}': { get: 'products:read' },
  '/v1/sellers/{id}': { get: 'products:read' },
  '/v1/orders': { get: 'orders:read' },
  '/v1/downloads/{id}/link': { post: 'downloads:write' },
  '/v1/webhooks': { get: 'webhooks:read', post: 'webhooks:write' },
  '/v1/webhooks/{id}': { get: 'webhooks:read', post: 'webhooks:write', delete: 'webhooks:write' },
  '/v1/webhooks/{id}/rotate_secret': { post: 'webhooks:write' },
  '/v1/webhooks/{id}/test': { post: 'webhooks:write' },
  '/v1/events': { get: 'webhooks:read' },
  '/v1/events/{id}': { get: 'webhooks:read' },
};
// The operations of the extension webhook-management (docs/contract.md section 13): the
// document marks each with "x-market-extension" and its badge, and no other.
const EXTENSION = 'webhook-management';
const EXTENSION_OPS = new Set(['GET /v1/webhooks', 'GET /v1/webhooks/{id}', 'POST /v1/webhooks/{id}',
  'DELETE /v1/webhooks/{id}', 'POST /v1/webhooks/{id}/rotate_secret', 'POST /v1/webhooks/{id}/test',
  'GET /v1/events', 'GET /v1/events/{id}']);
const FILES_PREFIX = DOWNLOAD_BASE_URL ? new URL(DOWNLOAD_BASE_URL).pathname.replace(/\/$/, '') : '/files';
const FILES = `${FILES_PREFIX}/{token}`;
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const KINDS = ['sale.completed', 'sale.refunded', 'review.created', 'payout.sent'];
// Every event type a receiver may get: the kinds a subscription asks for, and the test event.
const EVENT_TYPES = [...KINDS, 'webhook.test'];
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
// Headers of the API's own making: when an answer carries one, the document must list it.
const WATCHED = ['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset',
  'retry-after', 'www-authenticate', 'allow', 'idempotent-replayed'];
// 400 codes whose cause the document's schemas can express.
const SCHEMA_CODES = new Set(['parameter_invalid', 'parameter_unknown', 'parameter_missing', 'url_not_https']);

/** Follows a local JSON pointer ("#/a/b") in the document; throws when it leads nowhere. */
function pointer(ref) {
  assert.ok(typeof ref === 'string' && ref.startsWith('#/'), `only local references: ${ref}`);
  let node = doc;
  for (const raw of ref.slice(2).split('/')) {
    const part = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    assert.ok(node !== null && typeof node === 'object' && Object.hasOwn(node, part), `$ref ${ref} does not resolve`);
    node = node[part];
  }
  return node;
}

/** An OpenAPI object with its $ref (to a response, parameter, header, ...) followed. */
function resolve(node) {
  let n = node;
  for (let i = 0; n && typeof n === 'object' && typeof n.$ref === 'string'; i++) {
    assert.ok(i < 10, 'a $ref loop');
    n = pointer(n.$ref);
  }
  return n;
}

// Schemas go to Ajv as JSON Schema 2020-12: components/schemas become the $defs of one
// schema, and references to them are rewritten to it. Strict: an unknown keyword (a typo,
// an OpenAPI 3.0 "nullable" or "example") or an unknown format fails the compilation.
const SCHEMA_ID = 'https://market.invalid/openapi.json';
function toJsonSchema(node) {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$ref') {
      assert.ok(v.startsWith('#/components/schemas/'), `a schema may only refer to components/schemas: ${v}`);
      pointer(v);
      out.$ref = `${SCHEMA_ID}#/$defs/${v.slice('#/components/schemas/'.length)}`;
    } else {
      out[k] = toJsonSchema(v);
    }
  }
  return out;
}

let ajv;
function makeAjv() {
  const a = new Ajv2020({ strict: true, strictTypes: false, allowUnionTypes: true, allErrors: true });
  a.addFormat('date-time', { type: 'string', validate: (s) => RFC3339.test(s) && !Number.isNaN(Date.parse(s)) });
  a.addFormat('uri', {
    type: 'string',
    validate: (s) => {
      try {
        return /^[A-Za-z][A-Za-z0-9+.-]*:/.test(s) && Boolean(new URL(s));
      } catch {
        return false;
      }
    },
  });
  a.addSchema({ $id: SCHEMA_ID, $defs: toJsonSchema(doc.components.schemas) });
  return a;
}
const compiled = new WeakMap();
function validator(schema) {
  assert.ok(schema && typeof schema === 'object', 'a schema');
  ajv ??= makeAjv();
  if (!compiled.has(schema)) compiled.set(schema, ajv.compile(toJsonSchema(schema)));
  return compiled.get(schema);
}
const named = (name) => {
  assert.ok(doc.components.schemas[name], `components/schemas/${name}`);
  return validator({ $ref: `#/components/schemas/${name}` });
};
function validate(schema, value, where) {
  const v = validator(schema);
  if (!v(value)) {
    assert.fail(`${where}: ${ajv.errorsText(v.errors, { separator: '; ' })}\n  value: ${JSON.stringify(value)?.slice(0, 600)}`);
  }
}
const isValid = (schema, value) => validator(schema)(value);

/** A header or query value as the type its schema expects (integers are sent as text). */
function coerce(schema, value) {
  const s = schema.$ref ? pointer(schema.$ref) : schema;
  if ((s.type === 'integer' || s.type === 'number') && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  return value;
}

// ---------------------------------------------------------------------------------------
// Checking real requests and answers against the document.

/** What the document would refuse in a request: [] when it is valid. */
function requestProblems(opMethod, template, { params = {}, query = [], headers = {}, body, contentType } = {}) {
  const item = doc.paths[template];
  const op = item[opMethod.toLowerCase()];
  const problems = [];
  const all = [...(item.parameters ?? []), ...(op.parameters ?? [])].map(resolve);
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  for (const p of all) {
    let values;
    if (p.in === 'path') values = params[p.name] === undefined ? [] : [params[p.name]];
    else if (p.in === 'query') values = query.filter(([k]) => k === p.name).map(([, v]) => v);
    else if (p.in === 'header') values = lower[p.name.toLowerCase()] === undefined ? [] : [lower[p.name.toLowerCase()]];
    else continue;
    if (values.length === 0 && p.required) problems.push(`${p.name} is required`);
    if (values.length > 1) problems.push(`${p.name} is repeated`);
    for (const v of values) if (!isValid(p.schema, coerce(p.schema, v))) problems.push(`${p.name}=${String(v).slice(0, 40)} does not match its schema`);
  }
  for (const [k] of query) {
    if (!all.some((p) => p.in === 'query' && p.name === k)) problems.push(`${k} is not a parameter`);
  }
  const rb = resolve(op.requestBody);
  if (body === undefined) {
    if (rb?.required) problems.push('the body is required');
  } else if (!rb) {
    problems.push('no body is documented');
  } else {
    const media = rb.content[contentType ?? 'application/json'];
    if (!media) problems.push(`the media type ${contentType} is not documented`);
    else if (!isValid(media.schema, body)) problems.push('the body does not match its schema');
  }
  return problems;
}

/** Asserts that an answer is the one the document gives `opMethod template` for its status. */
function checkResponse(res, opMethod, template, sentMethod = opMethod) {
  const where = `${sentMethod} ${template} -> ${res.status}`;
  const op = doc.paths[template]?.[opMethod.toLowerCase()];
  assert.ok(op, `the document has no operation ${opMethod} ${template}`);
  const raw = op.responses[String(res.status)];
  assert.ok(raw, `${where}: the document does not list this status (body ${res.text.slice(0, 300)})`);
  const spec = resolve(raw);

  if (sentMethod === 'HEAD') {
    assert.equal(res.body.length, 0, `${where}: a HEAD answer has no body`);
  } else {
    assert.ok(spec.content, `${where}: the document gives no content`);
    const type = res.headers.get('content-type') ?? '';
    const media = type.split(';')[0].trim().toLowerCase();
    const entry = spec.content[media] ?? spec.content['*/*'];
    assert.ok(entry, `${where}: Content-Type ${type} is not documented`);
    if (media === 'application/json') {
      assert.equal(type, 'application/json; charset=utf-8', `${where}: Content-Type`);
      assert.notEqual(res.json, undefined, `${where}: the body is JSON`);
      validate(entry.schema, res.json, `${where} body`);
    } else {
      validate(entry.schema, res.text, `${where} body`);
    }
  }

  const documented = new Set();
  for (const [name, rawHeader] of Object.entries(spec.headers ?? {})) {
    const h = resolve(rawHeader);
    documented.add(name.toLowerCase());
    const value = res.headers.get(name);
    if (h.required) assert.notEqual(value, null, `${where}: the documented header ${name} is missing`);
    if (value !== null) validate(h.schema, coerce(h.schema, value), `${where} header ${name}`);
  }
  for (const name of WATCHED) {
    if (res.headers.get(name) !== null) assert.ok(documented.has(name), `${where}: the header ${name} is sent but not documented for this answer`);
  }
  if (res.json?.error) assert.equal(res.json.error.request_id, res.headers.get('x-request-id'), `${where}: request_id is X-Request-Id`);
  return res;
}

/**
 * One request to an operation of the document: `template` with `params` filled in, the
 * `query` pairs, a JSON `body`. The answer is checked with checkResponse (against `as`,
 * the documented method, when another method is sent) and the request against the
 * document's parameters. Returns the api() result.
 */
async function call(method, template, { params = {}, query = [], body, key, headers = {}, as, contentType } = {}) {
  const path = template.replace(/\{(\w+)\}/g, (_, n) => encodeURIComponent(params[n]));
  const qs = query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
  const h = { ...headers };
  if (contentType) h['Content-Type'] = contentType;
  const res = await api(qs ? `${path}?${qs}` : path, { key, method, body, headers: h });
  checkResponse(res, as ?? method, template, method);
  if (as === undefined) {
    const problems = requestProblems(method, template, { params, query, headers, body, contentType });
    if (res.status < 300) assert.deepEqual(problems, [], `${method} ${path}: accepted, so the document must accept it`);
    if (res.status === 400 && SCHEMA_CODES.has(res.json?.error?.code)) {
      assert.ok(problems.length > 0, `${method} ${path}: refused with ${res.json.error.code}, so the document must refuse it`);
    }
  }
  return res;
}

/** A request to the files location, checked against GET|HEAD /files/{token}. */
async function fileCall(method, url, headers = {}) {
  const res = await api(url, { method, headers });
  checkResponse(res, method === 'HEAD' ? 'HEAD' : 'GET', FILES, method);
  return res;
}

const expectError = (res, status, code) => {
  assert.equal(res.status, status, res.text);
  assert.equal(res.json.error.code, code, res.text);
};

// ---------------------------------------------------------------------------------------
// (a) The document.

test('docs/openapi.json is JSON, OpenAPI 3.1.x, with exactly the API\'s routes and the files location', () => {
  assert.equal(docError, undefined, `docs/openapi.json is not valid JSON: ${docError?.message}`);
  assert.match(doc.openapi, /^3\.1\.\d+$/);
  assert.equal(typeof doc.info?.title, 'string');
  assert.equal(typeof doc.info?.version, 'string');
  const expected = { ...ROUTES, [FILES]: { get: null, head: null } };
  assert.deepEqual(Object.keys(doc.paths).sort(), Object.keys(expected).sort(), 'the paths');
  for (const [path, methods] of Object.entries(expected)) {
    const have = HTTP_METHODS.filter((m) => doc.paths[path][m] !== undefined);
    assert.deepEqual(have.sort(), Object.keys(methods).sort(), `the methods of ${path}`);
  }
  assert.deepEqual(Object.keys(doc.webhooks ?? {}).sort(), [...EVENT_TYPES].sort(), 'the webhooks');
  assert.match(JSON.stringify(doc.paths[FILES]), /MARKET_DOWNLOAD_BASE_URL/, 'the files location names MARKET_DOWNLOAD_BASE_URL');
});

test('every operation: a schema for every response, the scope, the error envelopes', () => {
  const scheme = doc.components.securitySchemes.bearer;
  assert.equal(scheme.type, 'http');
  assert.equal(scheme.scheme, 'bearer');
  for (const word of ['sk_live_', 'sk_test_', 'products:read', 'orders:read', 'downloads:write', 'webhooks:read', 'webhooks:write']) {
    assert.ok(scheme.description.includes(word), `the security scheme describes ${word}`);
  }
  const ids = new Set();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of HTTP_METHODS.filter((m) => item[m])) {
      const op = item[method];
      const where = `${method.toUpperCase()} ${path}`;
      assert.ok(op.operationId && !ids.has(op.operationId), `${where}: a unique operationId`);
      ids.add(op.operationId);
      const scope = ROUTES[path]?.[method];
      if (EXTENSION_OPS.has(`${method.toUpperCase()} ${path}`)) {
        assert.equal(op['x-market-extension'], EXTENSION, `${where}: x-market-extension`);
        assert.deepEqual(op['x-badges'], [{ name: `Extension: ${EXTENSION}` }], `${where}: the extension's badge`);
        assert.match(op.description, /MARKET_API_EXTENSIONS=webhook-management/, `${where}: the description names the setting`);
        assert.match(op.description, path === '/v1/webhooks' ? /405 method_not_allowed/ : /404 route_not_found/,
          `${where}: the description says how it answers without the extension`);
      } else {
        assert.equal(op['x-market-extension'], undefined, `${where}: not an extension's`);
        assert.equal(op['x-badges'], undefined, `${where}: no badge`);
      }
      if (scope) {
        assert.deepEqual(op.security, [{ bearer: [scope] }], `${where}: security`);
        assert.ok(op.description.includes(`\`${scope}\``), `${where}: the description names the scope`);
      } else {
        assert.deepEqual(op.security, [], `${where}: no API key`);
      }
      const statuses = Object.keys(op.responses);
      const must = scope ? ['401', '405', '429', '500', '503'] : ['200', '404', '405', '410', '503'];
      for (const s of must) assert.ok(statuses.includes(s), `${where}: documents ${s}`);
      for (const [status, raw] of Object.entries(op.responses)) {
        const r = resolve(raw);
        assert.equal(typeof r.description, 'string', `${where} ${status}: a description`);
        if (method === 'head') {
          assert.equal(r.content, undefined, `${where} ${status}: HEAD has no body`);
        } else {
          const media = Object.values(r.content ?? {});
          assert.ok(media.length > 0, `${where} ${status}: content`);
          for (const m of media) assert.ok(m.schema, `${where} ${status}: a schema`);
        }
        // Every answer of the API has X-Request-Id; a file streamed by nginx does not.
        const fileBody = !scope && ['200', '206'].includes(status);
        if (!fileBody) assert.equal(resolve(r.headers?.['X-Request-Id'] ?? {}).required, true, `${where} ${status}: X-Request-Id`);
        if (Number(status) >= 400) {
          const want = `#/components/schemas/Error${['502', '504'].includes(status) ? '503' : status}`;
          for (const m of Object.values(r.content ?? {})) assert.equal(m.schema.$ref, want, `${where} ${status}: the error schema`);
        }
      }
      const has = (status, header) => Object.hasOwn(resolve(op.responses[status]).headers ?? {}, header);
      if (scope) {
        assert.ok(has('401', 'WWW-Authenticate'), `${where}: 401 documents WWW-Authenticate`);
        assert.ok(has('429', 'Retry-After'), `${where}: 429 documents Retry-After`);
        assert.ok(has('503', 'Retry-After'), `${where}: 503 documents Retry-After`);
        // Creations answer 201, a test event (queued, not yet sent) 202, the others 200.
        const success = Object.keys(op.responses).find((s) => s.startsWith('2'));
        assert.ok(['200', '201', '202'].includes(success), `${where}: a success status`);
        for (const h of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) assert.ok(has(success, h), `${where}: ${h}`);
        if (method !== 'get') assert.ok(has(success, 'Idempotent-Replayed'), `${where}: Idempotent-Replayed`);
      } else if (method === 'get') {
        assert.ok(has('200', 'Content-Disposition'), `${where}: Content-Disposition`);
        assert.match(op.description, /X-Accel-Redirect/, `${where}: the X-Accel-Redirect note`);
      }
      assert.ok(has('405', 'Allow'), `${where}: 405 documents Allow`);
    }
  }
  for (const [kind, item] of Object.entries(doc.webhooks)) {
    const names = item.post.parameters.map((p) => resolve(p).name);
    assert.deepEqual(names.sort(), ['X-Signature', 'webhook-id', 'webhook-signature', 'webhook-timestamp'].sort(), `${kind}: the signing headers`);
    assert.ok(item.post.requestBody.content['application/json'].schema, `${kind}: a payload schema`);
  }
});

test('every $ref resolves and every schema compiles (JSON Schema 2020-12, strict)', () => {
  let refs = 0;
  const schemas = [];
  const walk = (node, path, inSchema) => {
    if (Array.isArray(node)) {
      node.forEach((v, i) => walk(v, `${path}/${i}`, inSchema));
      return;
    }
    if (node === null || typeof node !== 'object') return;
    if (typeof node.$ref === 'string') {
      refs++;
      pointer(node.$ref);
    }
    for (const [k, v] of Object.entries(node)) {
      if (!inSchema && k === 'schema') schemas.push([`${path}/schema`, v]);
      walk(v, `${path}/${k}`, inSchema || k === 'schema' || (path === '#/components' && k === 'schemas'));
    }
  };
  walk(doc, '#', false);
  assert.ok(refs > 50, `${refs} references`);
  for (const name of Object.keys(doc.components.schemas)) named(name);
  for (const [where, s] of schemas) {
    try {
      validator(s);
    } catch (e) {
      assert.fail(`${where}: ${e.message}`);
    }
  }
  // Every object of an answer is closed, so that a field the service adds or renames fails.
  for (const [name, s] of Object.entries(doc.components.schemas)) {
    if (s.properties) assert.equal(s.additionalProperties, false, `${name}: additionalProperties false`);
  }
  const item = doc.components.schemas.ProductListItem;
  assert.deepEqual(Object.keys(item.properties).sort(), ['id', 'price', 'seller', 'title']);
  assert.deepEqual([...item.required].sort(), ['id', 'price', 'seller', 'title']);
  // Every example in the schemas is valid against its own schema.
  for (const [name, s] of Object.entries(doc.components.schemas)) {
    for (const ex of s.examples ?? []) assert.ok(named(name)(ex), `${name}: its example ${JSON.stringify(ex)} is valid`);
  }
});

test('the schemas refuse what they must', () => {
  const ok = (name, v) => assert.equal(named(name)(v), true, `${name} accepts ${JSON.stringify(v)}: ${ajv.errorsText(named(name).errors)}`);
  const no = (name, v) => assert.equal(named(name)(v), false, `${name} must refuse ${JSON.stringify(v)}`);
  const item = { id: 'prod_a1', title: 'T', price: 19.99, seller: 'pixelforge' };
  ok('ProductListItem', item);
  no('ProductListItem', { id: 1 });
  no('ProductListItem', { ...item, currency: 'USD' });
  no('ProductListItem', { ...item, price: '19.99' });
  no('ProductListItem', { id: item.id, title: item.title, price: item.price });
  no('ProductListItem', { ...item, id: 'ord_a1' });
  ok('ProductList', { data: [item], next_cursor: null });
  no('ProductList', { data: [item] });
  ok('Timestamp', '2026-11-21T10:04:05Z');
  for (const t of ['2026-11-21T10:04:05.123Z', '2026-11-21 10:04:05', '2026-11-21T10:04:05+00:00', 1763719445]) no('Timestamp', t);
  no('Money', '19.99');
  no('Money', -1);
  ok('Error404', { error: { type: 'invalid_request_error', code: 'resource_missing', message: 'm', param: 'id', request_id: 'r1' } });
  no('Error404', { error: { type: 'invalid_request_error', code: 'rate_limited', message: 'm', request_id: 'r1' } });
  no('Error429', { error: { type: 'invalid_request_error', code: 'rate_limited', message: 'm', request_id: 'r1' } });
  no('Error', { error: { type: 'api_error', code: 'internal_error', message: 'm', request_id: 'r1', detail: 'x' } });
  no('Error', { error: { type: 'api_error', code: 'internal_error', message: 'm' } });
  const dl = { id: 'dl_a', product: 'prod_a', filename: 'a.zip', size_bytes: 1, url: null, expires_at: null };
  const order = { id: 'ord_a', status: 'refunded', created_at: '2026-01-01T00:00:00Z', currency: 'USD', total: 1, items: [], downloads: [dl] };
  ok('Order', order);
  no('Order', { ...order, status: 'paid' });
  no('Order', { ...order, status: 'pending' });
  no('Order', { ...order, downloads: [{ ...dl, url: `${'http://h/files/'}${'a'.repeat(43)}`, expires_at: '2026-01-01T00:00:00Z' }] });
  ok('Order', { ...order, status: 'paid', downloads: [{ ...dl, url: `http://h/files/${'a'.repeat(43)}`, expires_at: '2026-01-01T00:00:00Z' }] });
  no('Download', { ...dl, sha256: 'x' });
  no('WebhookSubscription', { id: 'we_a', object: 'webhook_subscription', url: 'https://h/', events: ['sale.completed'], description: '', status: 'enabled', livemode: false, secret: 'nope', created_at: '2026-01-01T00:00:00Z' });
  no('PayoutSentEvent', { id: 'evt_a', type: 'sale.completed', created_at: '2026-01-01T00:00:00Z', livemode: false, data: { payout: 'po_a', amount: 1, currency: 'USD' } });
  no('SaleCompletedEvent', { id: 'evt_a', type: 'sale.completed', created_at: '2026-01-01T00:00:00Z', livemode: false, data: { order: 'ord_a', product: 'prod_a', tier: 'tier_a', amount: 1 } });
  no('DownloadLinkRequest', { expires_in: 59 });
  no('DownloadLinkRequest', { expires_in: 60.5 });
  no('DownloadLinkRequest', { ttl: 60 });
  no('WebhookSubscriptionRequest', { url: 'http://h/x' });
  no('WebhookSubscriptionRequest', { url: 'https://h/x', events: [] });
  no('WebhookSubscriptionRequest', { url: 'https://h/x', events: ['sale.created'] });
});

// ---------------------------------------------------------------------------------------
// (b) The service. A seller with two products (tiers, files under FILES_ROOT), a buyer
// with a paid and a refunded order, a review.
const x = uniqueId('');
const SA = `acct_oas_${x}`;
const BA = `acct_oab_${x}`;
const handle = `oa-${x}`;
const P1 = `prod_oa1_${x}`;
const P2 = `prod_oa2_${x}`;
const T = { p1a: `tier_oa1a_${x}`, p1b: `tier_oa1b_${x}`, p2: `tier_oa2_${x}` };
const O = { paid: `ord_oap_${x}`, refunded: `ord_oar_${x}`, later: `ord_oal_${x}` };
const dir = `openapi-${x}`;
const fontBytes = randomBytes(2048);
const keys = {};
const dls = {};
let rx;

function setup() {
  mkdirSync(join(FILES_ROOT, dir), { recursive: true });
  writeFileSync(join(FILES_ROOT, dir, 'font.zip'), fontBytes);
  writeFileSync(join(FILES_ROOT, dir, 'specimen.pdf'), 'specimen');
  writeFileSync(join(FILES_ROOT, dir, 'yen.zip'), 'yen');
  importDoc({
    mode: 'test',
    accounts: [{ id: SA }, { id: BA }],
    sellers: [
      { id: handle, account: SA, name: 'OpenAPI Seller', bio: 'Fonts', website: 'https://oa.example' },
      { id: `${handle}-0`, account: SA, name: 'No Website' },
    ],
    products: [
      {
        id: P1, seller: handle, title: 'Schema Sans', description: 'A validated family', category: 'fonts',
        currency: 'USD', status: 'published', created_at: '2026-01-02T00:00:00Z',
        tiers: [
          { id: T.p1a, name: 'Personal', description: 'One seat', price: 19.99, licence: { seats: 1, commercial: false } },
          { id: T.p1b, name: 'Commercial', price: 49 },
        ],
        files: [
          { id: `file_oa1_${x}`, filename: 'Schéma Sans.zip', path: `${dir}/font.zip`, size_bytes: 2048 },
          { id: `file_oa2_${x}`, filename: 'specimen.pdf', path: `${dir}/specimen.pdf`, size_bytes: 8 },
        ],
      },
      {
        id: P2, seller: handle, title: 'Yen Glyphs', category: 'fonts', currency: 'JPY', status: 'published',
        created_at: '2026-01-01T00:00:00Z',
        tiers: [{ id: T.p2, name: 'Standard', price: 1200 }],
        files: [{ id: `file_oa3_${x}`, filename: 'yen.zip', path: `${dir}/yen.zip`, size_bytes: 3 }],
      },
    ],
    orders: [
      { id: O.paid, account: BA, status: 'paid', created_at: '2026-02-01T00:00:00Z', items: [{ product: P1, tier: T.p1a }] },
      { id: O.refunded, account: BA, status: 'refunded', created_at: '2026-01-15T00:00:00Z', items: [{ product: P1, tier: T.p1b }] },
    ],
    reviews: [{ id: `rev_oa1_${x}`, product: P1, account: BA, rating: 4, body: 'Good' }],
  });
  keys.buyer = newKey({ account: BA });
  keys.buyerRO = newKey({ account: BA, access: 'read-only' });
  keys.seller = newKey({ account: SA });
  const rows = psql(`SELECT d.order_id, f.filename, d.id FROM downloads d JOIN files f ON f.id = d.file_id
                      WHERE d.order_id IN ('${O.paid}', '${O.refunded}') ORDER BY 1, 2`).split('\n').map((l) => l.split('|'));
  dls.font = rows.find(([o, f]) => o === O.paid && f.startsWith('Sch'))[2];
  dls.specimen = rows.find(([o, f]) => o === O.paid && f === 'specimen.pdf')[2];
  dls.refunded = rows.find(([o]) => o === O.refunded)[2];
}

describe('the running service against the document', () => {
  before(setup);
  after(async () => {
    await rx?.close();
  });

  test('GET /v1/products: pages, search, errors', async () => {
    const k = keys.buyer;
    const first = await call('GET', '/v1/products', { key: k, query: [['seller', handle], ['limit', '1']], headers: { 'X-Request-Id': 'oa-test.1' } });
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('x-request-id'), 'oa-test.1');
    assert.deepEqual(first.json.data, [{ id: P1, title: 'Schema Sans', price: 19.99, seller: handle }]);
    assert.equal(typeof first.json.next_cursor, 'string');
    const second = await call('GET', '/v1/products', { key: k, query: [['seller', handle], ['limit', '1'], ['cursor', first.json.next_cursor]] });
    assert.deepEqual(second.json.data.map((p) => p.id), [P2]);
    assert.equal(second.json.next_cursor, null);
    const search = await call('GET', '/v1/products', { key: k, query: [['q', 'validated'], ['category', 'fonts'], ['min_price', '0'], ['max_price', '100.5'], ['sort', 'relevance']] });
    assert.ok(search.json.data.some((p) => p.id === P1));
    await call('GET', '/v1/products', { key: k, query: [['sort', 'price_desc'], ['limit', '100']] });

    expectError(await call('GET', '/v1/products', {}), 401, 'missing_api_key');
    expectError(await call('GET', '/v1/products', { key: `sk_test_${'A'.repeat(40)}` }), 401, 'invalid_api_key');
    const limit = await call('GET', '/v1/products', { key: k, query: [['limit', '0']] });
    expectError(limit, 400, 'parameter_invalid');
    assert.equal(limit.json.error.param, 'limit');
    expectError(await call('GET', '/v1/products', { key: k, query: [['sort', 'cheapest']] }), 400, 'parameter_invalid');
    expectError(await call('GET', '/v1/products', { key: k, query: [['color', 'red']] }), 400, 'parameter_unknown');
    expectError(await call('GET', '/v1/products', { key: k, query: [['limit', '1'], ['limit', '2']] }), 400, 'parameter_duplicated');
    expectError(await call('GET', '/v1/products', { key: k, query: [['cursor', 'abc.def']] }), 400, 'cursor_invalid');
    // A request line over nginx's buffers: nginx's own JSON answer.
    expectError(await call('GET', '/v1/products', { key: k, query: [['q', 'a'.repeat(21000)]] }), 414, 'parameter_invalid');
    expectError(await call('DELETE', '/v1/products', { key: k, as: 'GET' }), 405, 'method_not_allowed');
    const head = await call('HEAD', '/v1/products', { key: k, as: 'GET' });
    assert.equal(head.status, 405);
  });

  test('GET /v1/products/{id}', async () => {
    const k = keys.buyer;
    const r = await call('GET', '/v1/products/{id}', { key: k, params: { id: P1 } });
    assert.equal(r.status, 200);
    assert.equal(r.json.price, 19.99);
    assert.deepEqual(r.json.tiers.map((t) => t.id), [T.p1a, T.p1b]);
    assert.deepEqual(r.json.tiers[0].licence, { seats: 1, commercial: false });
    assert.equal(r.json.rating.count, 1);
    const yen = await call('GET', '/v1/products/{id}', { key: k, params: { id: P2 } });
    assert.equal(yen.json.rating.average, null);
    assert.equal(yen.json.price, 1200);

    const missing = await call('GET', '/v1/products/{id}', { key: k, params: { id: `prod_nope_${x}` } });
    expectError(missing, 404, 'resource_missing');
    const long = await call('GET', '/v1/products/{id}', { key: k, params: { id: `prod_${'a'.repeat(300)}` } });
    expectError(long, 400, 'parameter_invalid');
    assert.equal(long.json.error.param, 'id');
    expectError(await call('GET', '/v1/products/{id}', { key: k, params: { id: P1 }, query: [['expand', 'tiers']] }), 400, 'parameter_unknown');
    expectError(await call('GET', '/v1/products/{id}', {}), 401, 'missing_api_key');
    expectError(await call('PUT', '/v1/products/{id}', { key: k, params: { id: P1 }, as: 'GET' }), 405, 'method_not_allowed');
  });

  test('GET /v1/sellers/{id}', async () => {
    const k = keys.buyer;
    const r = await call('GET', '/v1/sellers/{id}', { key: k, params: { id: handle }, query: [['limit', '1']] });
    assert.equal(r.status, 200);
    assert.equal(r.json.product_count, 2);
    assert.equal(r.json.website, 'https://oa.example');
    assert.equal(typeof r.json.products.next_cursor, 'string');
    const next = await call('GET', '/v1/sellers/{id}', { key: k, params: { id: handle }, query: [['cursor', r.json.products.next_cursor]] });
    assert.deepEqual(next.json.products.data.map((p) => p.id), [P2]);
    assert.equal(next.json.products.next_cursor, null);

    const bare = await call('GET', '/v1/sellers/{id}', { key: k, params: { id: `${handle}-0` } });
    assert.equal(bare.json.website, null);
    assert.deepEqual(bare.json.products, { data: [], next_cursor: null });

    expectError(await call('GET', '/v1/sellers/{id}', { key: k, params: { id: `nobody-${x}` } }), 404, 'resource_missing');
    expectError(await call('GET', '/v1/sellers/{id}', { key: k, params: { id: handle }, query: [['limit', 'abc']] }), 400, 'parameter_invalid');
    expectError(await call('GET', '/v1/sellers/{id}', { key: k, params: { id: handle }, query: [['cursor', 'x.y']] }), 400, 'cursor_invalid');
    expectError(await call('POST', '/v1/sellers/{id}', { key: k, params: { id: handle }, as: 'GET' }), 405, 'method_not_allowed');
  });

  test('GET /v1/orders: a paid and a refunded order', async () => {
    const r = await call('GET', '/v1/orders', { key: keys.buyerRO });
    assert.equal(r.status, 200);
    const paid = r.json.data.find((o) => o.id === O.paid);
    const refunded = r.json.data.find((o) => o.id === O.refunded);
    assert.equal(paid.total, 19.99);
    assert.equal(paid.downloads.length, 2);
    assert.ok(paid.downloads.every((d) => d.url.startsWith(`${DOWNLOAD_BASE_URL}/`)));
    assert.ok(refunded.downloads.every((d) => d.url === null && d.expires_at === null));
    const page = await call('GET', '/v1/orders', { key: keys.buyerRO, query: [['status', 'refunded'], ['limit', '1']] });
    assert.deepEqual(page.json.data.map((o) => o.id), [O.refunded]);

    const pending = await call('GET', '/v1/orders', { key: keys.buyerRO, query: [['status', 'pending']] });
    expectError(pending, 400, 'parameter_invalid');
    assert.equal(pending.json.error.param, 'status');
    expectError(await call('GET', '/v1/orders', { key: keys.buyerRO, query: [['cursor', 'AAAA.BBBB']] }), 400, 'cursor_invalid');
    expectError(await call('GET', '/v1/orders', { key: 'sk_live_short' }), 401, 'invalid_api_key');
    expectError(await call('PATCH', '/v1/orders', { key: keys.buyerRO, as: 'GET' }), 405, 'method_not_allowed');
  });

  test('POST /v1/downloads/{id}/link and the files location', async () => {
    const k = keys.buyer;
    const T0 = '/v1/downloads/{id}/link';
    const minted = await call('POST', T0, { key: k, params: { id: dls.font }, body: { expires_in: 120 } });
    assert.equal(minted.status, 201);
    assert.equal(minted.json.download, dls.font);
    const left = (Date.parse(minted.json.expires_at) - Date.now()) / 1000;
    assert.ok(left > 100 && left <= 120, `expires in ${left} s`);
    const bare = await call('POST', T0, { key: k, params: { id: dls.specimen } });
    assert.equal(bare.status, 201);

    const idem = { 'Idempotency-Key': `oa-${x}` };
    const a = await call('POST', T0, { key: k, params: { id: dls.font }, body: { expires_in: 600 }, headers: idem });
    const b = await call('POST', T0, { key: k, params: { id: dls.font }, body: { expires_in: 600 }, headers: idem });
    assert.equal(b.status, 201);
    assert.equal(b.headers.get('idempotent-replayed'), 'true');
    assert.equal(b.text, a.text);
    expectError(await call('POST', T0, { key: k, params: { id: dls.font }, body: { expires_in: 700 }, headers: idem }), 409, 'idempotency_conflict');

    expectError(await call('POST', T0, { key: k, params: { id: dls.refunded } }), 409, 'order_refunded');
    expectError(await call('POST', T0, { key: k, params: { id: `dl_nope_${x}` } }), 404, 'resource_missing');
    expectError(await call('POST', T0, { key: keys.buyerRO, params: { id: dls.font } }), 403, 'insufficient_scope');
    const short = await call('POST', T0, { key: k, params: { id: dls.font }, body: { expires_in: 10 } });
    expectError(short, 400, 'parameter_invalid');
    assert.equal(short.json.error.param, 'expires_in');
    expectError(await call('POST', T0, { key: k, params: { id: dls.font }, body: { ttl: 60 } }), 400, 'parameter_unknown');
    expectError(await call('POST', T0, { key: k, params: { id: dls.font }, body: '{"expires_in":', contentType: 'application/json' }), 400, 'body_invalid_json');
    expectError(await call('POST', T0, { key: k, params: { id: dls.font }, body: 'expires_in=60', contentType: 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type');
    expectError(await call('POST', T0, { key: k, params: { id: dls.font }, headers: { 'Idempotency-Key': 'é' } }), 400, 'idempotency_key_invalid');
    expectError(await call('GET', T0, { key: k, params: { id: dls.font }, as: 'POST' }), 405, 'method_not_allowed');
    expectError(await call('POST', T0, { params: { id: dls.font } }), 401, 'missing_api_key');

    // The files location.
    assert.ok(minted.json.url.startsWith(`${DOWNLOAD_BASE_URL}/`));
    const file = await fileCall('GET', minted.json.url);
    assert.equal(file.status, 200);
    assert.ok(file.body.equals(fontBytes), 'the file\'s bytes');
    assert.match(file.headers.get('content-disposition'), /^attachment; filename="Sch_ma Sans\.zip"; filename\*=UTF-8''Sch%C3%A9ma%20Sans\.zip$/);
    assert.equal(file.headers.get('x-accel-redirect'), null, 'nginx consumes X-Accel-Redirect');
    assert.equal((await fileCall('HEAD', minted.json.url)).status, 200);
    const range = await fileCall('GET', minted.json.url, { Range: 'bytes=0-9' });
    assert.equal(range.status, 206);
    assert.equal(range.body.length, 10);
    expectError(await fileCall('GET', minted.json.url, { Range: 'bytes=5000-6000' }), 416, 'range_not_satisfiable');
    expectError(await fileCall('POST', minted.json.url), 405, 'method_not_allowed');
    expectError(await fileCall('GET', `${DOWNLOAD_BASE_URL}/${'A'.repeat(43)}`), 404, 'resource_missing');
    const headMissing = await fileCall('HEAD', `${DOWNLOAD_BASE_URL}/${'A'.repeat(43)}`);
    assert.equal(headMissing.status, 404);
    psql(`UPDATE download_tokens SET expires_at = now() - interval '1 minute' WHERE download_id = '${dls.specimen}'`);
    expectError(await fileCall('GET', bare.json.url), 410, 'link_expired');
  });

  test('POST /v1/webhooks and the webhook payloads (events table and deliveries)', async () => {
    rx = await startReceiver();
    const T0 = '/v1/webhooks';
    const created = await call('POST', T0, { key: keys.seller, body: { url: rx.url('/oa'), description: 'openapi test' } });
    assert.equal(created.status, 201);
    assert.deepEqual(created.json.events, KINDS);
    const idem = { 'Idempotency-Key': `oa-wh-${x}` };
    const a = await call('POST', T0, { key: keys.buyer, body: { url: rx.url('/buyer'), events: ['payout.sent'] }, headers: idem });
    const b = await call('POST', T0, { key: keys.buyer, body: { url: rx.url('/buyer'), events: ['payout.sent'] }, headers: idem });
    assert.equal(b.headers.get('idempotent-replayed'), 'true');
    assert.equal(b.json.secret, a.json.secret);
    expectError(await call('POST', T0, { key: keys.buyer, body: { url: rx.url('/other') }, headers: idem }), 409, 'idempotency_conflict');

    expectError(await call('POST', T0, { key: keys.seller, body: { url: 'http://hooks.example.com/x' } }), 400, 'url_not_https');
    expectError(await call('POST', T0, { key: keys.seller, body: { events: ['payout.sent'] } }), 400, 'parameter_missing');
    expectError(await call('POST', T0, { key: keys.seller, body: { url: rx.url('/x'), events: [] } }), 400, 'parameter_invalid');
    expectError(await call('POST', T0, { key: keys.seller, body: { url: rx.url('/x'), secret: 'mine' } }), 400, 'parameter_unknown');
    expectError(await call('POST', T0, { key: keys.seller, body: { url: rx.url('/x'), description: 'd'.repeat(17000) } }), 413, 'body_too_large');
    expectError(await call('POST', T0, { key: keys.buyerRO, body: { url: rx.url('/x') } }), 403, 'insufficient_scope');
    expectError(await call('PUT', T0, { key: keys.seller, as: 'POST' }), 405, 'method_not_allowed');

    // Managing it (contract section 13): list, read, change, delete, each answer checked
    // against the document.
    const T1 = '/v1/webhooks/{id}';
    const id = created.json.id;
    const page = await call('GET', T0, { key: keys.seller, query: [['limit', '1']] });
    assert.equal(page.status, 200);
    assert.equal(page.json.data.length, 1);
    if (page.json.next_cursor) assert.equal((await call('GET', T0, { key: keys.seller, query: [['cursor', page.json.next_cursor]] })).status, 200);
    assert.equal((await call('GET', T1, { key: keys.seller, params: { id } })).status, 200);
    const changed = await call('POST', T1, { key: keys.seller, params: { id }, body: { description: 'changed', disabled: false } });
    assert.equal(changed.status, 200);
    assert.equal(changed.json.description, 'changed');
    expectError(await call('POST', T1, { key: keys.seller, params: { id }, body: { disabled: 'no' } }), 400, 'parameter_invalid');
    expectError(await call('POST', T1, { key: keys.seller, params: { id }, body: { secret: 'x' } }), 400, 'parameter_unknown');
    expectError(await call('GET', T1, { key: keys.buyerRO, params: { id } }), 403, 'insufficient_scope');
    expectError(await call('GET', T1, { key: keys.buyer, params: { id } }), 404, 'resource_missing');
    expectError(await call('PUT', T1, { key: keys.seller, params: { id }, as: 'GET' }), 405, 'method_not_allowed');
    const T2 = '/v1/webhooks/{id}/rotate_secret';
    const rotated = await call('POST', T2, { key: keys.seller, params: { id }, body: { expire_old_in: 0 } });
    assert.equal(rotated.status, 200);
    assert.match(rotated.json.secret, /^whsec_/);
    const again = await call('POST', T2, { key: keys.seller, params: { id } });
    assert.equal(again.status, 200);
    expectError(await call('POST', T2, { key: keys.seller, params: { id }, body: { expire_old_in: -1 } }), 400, 'parameter_invalid');
    created.json.secret = again.json.secret; // what the deliveries below are signed with
    const testEvent = await call('POST', '/v1/webhooks/{id}/test', { key: keys.seller, params: { id } });
    assert.equal(testEvent.status, 202);
    const extra = await call('POST', T0, { key: keys.seller, body: { url: rx.url('/oa-extra') } });
    const del = await call('DELETE', T1, { key: keys.seller, params: { id: extra.json.id } });
    assert.equal(del.status, 200);
    expectError(await call('DELETE', T1, { key: keys.seller, params: { id: extra.json.id } }), 404, 'resource_missing');

    // One event of each kind for the seller's account.
    admin(['payout', '--seller', handle, '--amount', '12.34', '--currency', 'USD', '--mode', 'test']);
    importDoc({
      mode: 'test',
      orders: [{ id: O.later, account: BA, status: 'paid', items: [{ product: P2, tier: T.p2 }] }],
      reviews: [{ id: `rev_oa2_${x}`, product: P2, account: BA, rating: 5, body: 'Lovely "glyphs" | ünïcode' }],
    });
    admin(['refund', O.later]);

    const bodies = psql(`SELECT body FROM events WHERE account_id = '${SA}' AND mode = 'test' ORDER BY created_at, id`)
      .split('\n').filter(Boolean);
    const schemaOf = (kind) => doc.webhooks[kind].post.requestBody.content['application/json'].schema;
    const seen = [];
    for (const body of bodies) {
      const event = JSON.parse(body);
      assert.ok(EVENT_TYPES.includes(event.type), `a known type: ${event.type}`);
      validate(schemaOf(event.type), event, `events row ${event.type}`);
      // The same event must fail the schema of another type.
      const other = EVENT_TYPES.find((k) => k !== event.type);
      assert.equal(isValid(schemaOf(other), event), false, `${event.type} is not a ${other}`);
      seen.push(event.type);
    }
    assert.deepEqual([...new Set(seen)].sort(), [...EVENT_TYPES].sort(), 'one event of each type');
    assert.ok(bodies.includes(testEvent.text), 'the answer of the test route is the events row, byte for byte');

    // Reading them back (contract section 13), checked against the document.
    const events = await call('GET', '/v1/events', { key: keys.seller, query: [['limit', '100']] });
    assert.equal(events.status, 200);
    assert.deepEqual(events.json.data.map((e) => JSON.stringify(e)).sort(), bodies.map((b) => JSON.stringify(JSON.parse(b))).sort());
    const typed = await call('GET', '/v1/events', { key: keys.seller, query: [['type', 'webhook.test'], ['created_gte', '2000-01-01T00:00:00Z']] });
    assert.equal(typed.json.data.length, 1);
    const one = await call('GET', '/v1/events/{id}', { key: keys.seller, params: { id: testEvent.json.id } });
    assert.equal(one.status, 200);
    expectError(await call('GET', '/v1/events', { key: keys.seller, query: [['type', 'sale']] }), 400, 'parameter_invalid');
    expectError(await call('GET', '/v1/events', { key: keys.seller, query: [['created_lt', 'yesterday']] }), 400, 'parameter_invalid');
    expectError(await call('GET', '/v1/events/{id}', { key: keys.buyer, params: { id: testEvent.json.id } }), 404, 'resource_missing');
    expectError(await call('GET', '/v1/events', { key: keys.buyerRO }), 403, 'insufficient_scope');

    // As delivered: the signing headers as documented, the body as in the events table.
    await rx.waitFor((reqs) => reqs.filter((r) => r.path === '/oa').length >= bodies.length, 'the deliveries of the five events');
    for (const rec of rx.requests.filter((r) => r.path === '/oa')) {
      const event = JSON.parse(rec.body);
      const op = doc.webhooks[event.type].post;
      for (const p of op.parameters.map(resolve)) {
        const v = rec.headers[p.name.toLowerCase()];
        if (p.required) assert.ok(v !== undefined, `delivery of ${event.type}: header ${p.name}`);
        validate(p.schema, v, `delivery of ${event.type}: header ${p.name}`);
      }
      validate(op.requestBody.content['application/json'].schema, event, `delivery of ${event.type}`);
      assert.ok(bodies.includes(rec.body), 'the delivered body is the events row, byte for byte');
      verifyDelivery(created.json.secret, rec);
    }
  });
});
