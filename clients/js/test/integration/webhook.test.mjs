// A real delivery: market-webhookd sends a payout.sent event to an HTTPS receiver of this
// test (a certificate of the throwaway CA the stack's drainer trusts); verifyWebhook
// accepts it and refuses tampered copies.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Market, verifyWebhook, WebhookVerificationError } from '@markethq/market';
import { main, uniqueId, startReceiver, waitFor } from './lib.mjs';

const st = main();
const x = uniqueId();
const handle = `jswh-${x}`;
let rx;
let sub;
let delivery;

before(async () => {
  st.importDoc({
    mode: 'test',
    accounts: [{ id: `acct_jswh_${x}` }],
    sellers: [{ id: handle, account: `acct_jswh_${x}`, name: 'Webhook seller' }],
  });
  rx = await startReceiver();
  const market = new Market({ apiKey: st.newKey(`acct_jswh_${x}`), baseUrl: st.baseUrl });
  sub = await market.webhooks.create({ url: rx.url('/market'), events: ['payout.sent'], description: 'js client' });
  const payout = st.admin(['payout', '--seller', handle, '--amount', '12.34', '--currency', 'USD', '--mode', 'test']).trim();
  delivery = await waitFor(() => rx.requests.find((r) => r.path === '/market'), { timeout: 30000, message: 'the delivery' });
  delivery.payout = payout;
});

after(() => rx?.close());

const refused = (code) => (e) => {
  assert.ok(e instanceof WebhookVerificationError, `${e}`);
  assert.equal(e.code, code);
  return true;
};

test('the delivery verifies and gives the event, amount exact', () => {
  const event = verifyWebhook(delivery.body, delivery.headers, sub.secret);
  assert.equal(event.type, 'payout.sent');
  assert.equal(event.id, delivery.headers['webhook-id']);
  assert.match(event.id, /^evt_/);
  assert.equal(event.livemode, false);
  assert.match(event.createdAt, /Z$/);
  assert.deepEqual(event.data, { payout: delivery.payout, amount: '12.34', currency: 'USD' });
  // The raw body as a string verifies too; so do fetch-style headers.
  assert.equal(verifyWebhook(delivery.body.toString('utf8'), new Headers(delivery.headers), sub.secret).id, event.id);
});

test('a tampered copy is refused', () => {
  const body = Buffer.from(delivery.body.toString('utf8').replace('12.34', '99.99'));
  assert.notDeepEqual(body, delivery.body);
  assert.throws(() => verifyWebhook(body, delivery.headers, sub.secret), refused('no_matching_signature'));
  const ts = String(Number(delivery.headers['webhook-timestamp']) + 1);
  assert.throws(() => verifyWebhook(delivery.body, { ...delivery.headers, 'webhook-timestamp': ts }, sub.secret), refused('no_matching_signature'));
  assert.throws(() => verifyWebhook(delivery.body, { ...delivery.headers, 'webhook-id': 'evt_other' }, sub.secret), refused('no_matching_signature'));
  const other = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  assert.throws(() => verifyWebhook(delivery.body, delivery.headers, other), refused('no_matching_signature'));
});

test('X-Signature alone verifies the real delivery', () => {
  const { 'webhook-signature': sig, ...rest } = delivery.headers;
  assert.equal(rest['x-signature'], sig, 'the drainer sends both');
  assert.equal(verifyWebhook(delivery.body, rest, sub.secret).type, 'payout.sent');
});

test('the same delivery replayed after the tolerance is refused', () => {
  const later = (Number(delivery.headers['webhook-timestamp']) + 301) * 1000;
  assert.throws(() => verifyWebhook(delivery.body, delivery.headers, sub.secret, { now: later }), refused('timestamp_too_old'));
});
