// The specification's interface by default (docs/contract.md sections 1, 2 and 13): a stack
// started without MARKET_API_EXTENSIONS answers exactly the six routes of the
// specification. The paths of section 13 answer as any other path does (404
// route_not_found; 405 with Allow: POST for another method on /v1/webhooks), whatever the
// key's access, so no key reaches a route that needs webhooks:read. The operator's side
// (market-admin webhooks) works either way. An unknown extension stops every program at
// start with one line naming it. The rest of the suite runs with the extension on
// (tests/e2e/run), which is how webhooks_manage and events test section 13 itself.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { api, startStack, uniqueId, MARKET_ADMIN, STACK_DIR } from './lib/stack.mjs';
import { assertError, assertList } from './fixtures/expect.mjs';

let s;
const run = uniqueId('');
const account = `acct_iface_${run}`;
const seller = `iface-${run}`;
const product = `prod_iface_${run}`;
let readWrite;
let readOnly;

before(async () => {
  s = await startStack({ settings: { MARKET_API_EXTENSIONS: null }, workers: 1 });
  s.admin(['import', '-'], JSON.stringify({
    mode: 'test',
    accounts: [{ id: account, email: `${account}@example.com` }],
    sellers: [{ id: seller, account, name: 'Interface Shop' }],
    products: [{
      id: product, seller, title: 'Plain Serif', description: 'a font', category: 'fonts',
      currency: 'USD', status: 'published',
      tiers: [{ id: `tier_iface_${run}`, name: 'Personal', price: 9, licence: {} }],
    }],
  }));
  readWrite = s.admin(['key', 'create', '--account', account, '--mode', 'test', '--access', 'read-write']);
  readOnly = s.admin(['key', 'create', '--account', account, '--mode', 'test', '--access', 'read-only']);
});
after(() => s?.down());

const call = (path, { key = readWrite, method = 'GET', body } = {}) =>
  api(`${s.base}${path}`, { key, method, body });

test('the six routes of the specification answer', async () => {
  assertList(await call('/v1/products?q=serif'));
  const detail = await call(`/v1/products/${product}`);
  assert.equal(detail.status, 200);
  assert.equal(detail.json.id, product);
  const profile = await call(`/v1/sellers/${seller}`);
  assert.equal(profile.status, 200);
  assert.equal(profile.json.id, seller);
  assertList(await call('/v1/orders'));
  assertError(await call('/v1/downloads/dl_nothing/link', { method: 'POST' }), 404,
    'invalid_request_error', 'resource_missing');
  const created = await call('/v1/webhooks', {
    method: 'POST', body: { url: 'https://127.0.0.1:9/market', events: ['sale.completed'] },
  });
  assert.equal(created.status, 201, created.text);
  assert.match(created.json.id, /^we_/);
  assert.match(created.json.secret, /^whsec_/);
});

test('the paths of section 13 are any other path: 404 route_not_found, 405 Allow: POST on /v1/webhooks', async () => {
  const id = 'we_0000000000000000000000';
  const absent = [
    ['GET', `/v1/webhooks/${id}`], ['POST', `/v1/webhooks/${id}`], ['DELETE', `/v1/webhooks/${id}`],
    ['POST', `/v1/webhooks/${id}/rotate_secret`], ['POST', `/v1/webhooks/${id}/test`],
    ['GET', '/v1/events'], ['GET', '/v1/events/evt_0000000000000000000000'], ['GET', '/v1/events?type=sale.completed'],
  ];
  for (const key of [readWrite, readOnly]) {
    for (const [method, path] of absent) {
      const res = await call(path, { key, method });
      // Never 403: a route that does not exist needs no scope (404 comes before 403).
      assertError(res, 404, 'invalid_request_error', 'route_not_found');
    }
    for (const method of ['GET', 'DELETE', 'PUT', 'PATCH']) {
      const res = await call('/v1/webhooks', { key, method });
      assertError(res, 405, 'invalid_request_error', 'method_not_allowed');
      assert.equal(res.headers.get('allow'), 'POST', `${method} /v1/webhooks: Allow`);
    }
  }
});

test('the operator side works without the extension: market-admin webhooks list|disable|enable|delete', async () => {
  const created = await call('/v1/webhooks', {
    method: 'POST', body: { url: 'https://127.0.0.1:9/ops', events: ['payout.sent'] },
  });
  assert.equal(created.status, 201);
  const id = created.json.id;
  assert.match(s.admin(['webhooks', 'list', '--account', account]), new RegExp(id));
  s.admin(['webhooks', 'disable', id]);
  assert.match(s.admin(['webhooks', 'list', '--account', account]), new RegExp(`${id}.*disabled`));
  s.admin(['webhooks', 'enable', id]);
  assert.match(s.admin(['webhooks', 'list', '--account', account]), new RegExp(`${id}.*enabled`));
  s.admin(['webhooks', 'delete', id]);
  assert.doesNotMatch(s.admin(['webhooks', 'list', '--account', account]), new RegExp(id));
});

test('an unknown extension stops each program at start, naming it', () => {
  const bin = dirname(MARKET_ADMIN);
  const env = {
    PATH: process.env.PATH,
    MARKET_DB: 'host=/nonexistent',
    MARKET_SECRET_FILE: join(STACK_DIR, 'secret'),
    MARKET_DOWNLOAD_BASE_URL: 'http://127.0.0.1:1/files',
    MARKET_FILES_ROOT: '/nonexistent',
    MARKET_API_EXTENSIONS: 'webhook-management,graphql',
  };
  for (const [program, args] of [['market-api', []], ['market-webhookd', []], ['market-admin', ['key', 'list', '--account', account]]]) {
    const r = spawnSync(join(bin, program), args, { env, encoding: 'utf8', timeout: 10000 });
    assert.notEqual(r.status, 0, `${program} refused to start`);
    assert.match(r.stderr, /MARKET_API_EXTENSIONS names an unknown extension "graphql"/, `${program}: ${r.stderr}`);
  }
});
