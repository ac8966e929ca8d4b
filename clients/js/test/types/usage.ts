// Compiled (never run) by test.sh with tsc --noEmit: the README's usage must type-check
// against index.d.ts, with no other type package (no @types/node, no DOM library), and the
// lines marked @ts-expect-error must be refused, so the declarations are not too loose.
import {
  Market, MarketError, verifyWebhook, AuthenticationError, PermissionError, NotFoundError,
  InvalidRequestError, ConflictError, RateLimitError, ServerError, ConnectionError,
  WebhookVerificationError,
} from '@markethq/market';
import type {
  Page, ProductListItem, Product, Seller, Order, DownloadLink, WebhookSubscription, WebhookEvent,
  RateLimit, ResponseInfo, Decimal, Products, NewWebhookSubscription, RotatedWebhookSubscription,
  DeletedWebhookSubscription, Event, TestEvent, EventWithDeliveries, EventDelivery, AnyEventType,
  WebhookStatus, DeliveryStatus, Events,
} from '@markethq/market';

declare const rawBody: Uint8Array;
declare const headers: Record<string, string | string[] | undefined>;

async function usage(): Promise<void> {
  const market = new Market({ apiKey: 'sk_test_...', baseUrl: 'http://127.0.0.1:8080', maxRetries: 3 });
  new Market({ apiKey: 'sk_test_...' });

  const page: Page<ProductListItem> = await market.products.list({
    category: 'fonts', q: 'retro', seller: 'pixelforge', minPrice: '10.00', maxPrice: 50, sort: 'price_asc', limit: 10, cursor: 'x',
  });
  const price: Decimal = page.data[0]!.price;
  const next: string | null = page.nextCursor;
  const rl: RateLimit | null = page.rateLimit;
  const remaining: number | null | undefined = page.lastResponse.rateLimit?.remaining;
  const info: ResponseInfo = page.lastResponse;
  const replayed: boolean = info.idempotentReplayed;

  await market.products.list({ cursor: undefined, limit: undefined });
  for await (const p of market.products.all({ category: 'fonts', limit: 10 })) {
    const id: string = p.id;
  }

  const product = await market.products.get('prod_1');
  const asProduct: Product = product;
  const tierPrice: string = product.tiers[0]!.price;
  const average: number | null = product.rating.average;
  const seats: unknown = product.tiers[0]!.licence['seats'];
  const status: number = product.lastResponse.status;

  const seller: Seller = await market.sellers.get('pixelforge', { limit: 5 });
  const count: number = seller.productCount;
  const more: string | null = seller.products.nextCursor;

  const orders: Page<Order> = await market.orders.list({ status: 'paid', limit: 5 });
  const url: string | null = orders.data[0]!.downloads[0]!.url;
  const total: Decimal = orders.data[0]!.total;
  for await (const o of market.orders.all({ status: 'refunded' })) {
    const tierName: string = o.items[0]!.tierName;
  }

  const link: DownloadLink = await market.downloads.createLink('dl_1', { expiresIn: 600, idempotencyKey: 'k' });
  await market.downloads.createLink('dl_1');
  const expires: string = link.expiresAt;

  const sub: NewWebhookSubscription = await market.webhooks.create({
    url: 'https://example.com/hook', events: ['sale.completed', 'payout.sent'], description: 'd', idempotencyKey: 'k',
  });
  const secret: string = sub.secret;
  const createdUpdated: string = sub.updatedAt;

  const subs: Page<WebhookSubscription> = await market.webhooks.list({ limit: 10, cursor: undefined });
  await market.webhooks.list();
  for await (const w of market.webhooks.all({ limit: 1 })) {
    const st: WebhookStatus = w.status;
    const updated: string = w.updatedAt;
  }
  const got: WebhookSubscription = await market.webhooks.get(subs.data[0]!.id);
  const maybeSecret: string | undefined = got.secret;
  const off = await market.webhooks.update(got.id, { url: 'https://example.com/h2', events: ['payout.sent'], description: 'x', disabled: true, idempotencyKey: 'k' });
  await market.webhooks.update(got.id);
  await market.webhooks.update(got.id, {});
  const offStatus: 'enabled' | 'disabled' = off.status;
  const rotated: RotatedWebhookSubscription = await market.webhooks.rotateSecret(got.id, { expireOldIn: 3600, idempotencyKey: 'k' });
  await market.webhooks.rotateSecret(got.id);
  const newSecret: string = rotated.secret;
  const testEvent: TestEvent = await market.webhooks.test(got.id, { idempotencyKey: 'k' });
  const tested: string = testEvent.data.subscription;
  const testStatus: number = (await market.webhooks.test(got.id)).lastResponse.status;
  const deleted: DeletedWebhookSubscription = await market.webhooks.delete(got.id, { idempotencyKey: 'k' });
  const wasDeleted: true = (await market.webhooks.delete(got.id)).deleted;

  const events: Page<Event> = await market.events.list({
    type: 'webhook.test', createdGte: new Date(), createdLt: '2026-11-26T10:04:05Z', limit: 100, cursor: undefined,
  });
  await market.events.list();
  const anyType: AnyEventType = events.data[0]!.type;
  for await (const ev of market.events.all({ type: 'sale.completed', createdGte: '2026-11-25T00:00:00Z', limit: 100 })) {
    if (ev.type === 'sale.completed') {
      const paid: Decimal = ev.data.amount;
    } else if (ev.type === 'webhook.test') {
      const s: string = ev.data.subscription;
    }
  }
  const detail: EventWithDeliveries = await market.events.get('evt_1');
  const d: EventDelivery = detail.deliveries[0]!;
  const dStatus: DeliveryStatus = d.status;
  const fields: [string, number, string | null, number | null, string | null] = [d.subscription, d.attempts, d.lastAttemptAt, d.lastStatus, d.lastError];
  const detailStatus: number = (await market.events.get('evt_1')).lastResponse.status;

  const event: WebhookEvent = verifyWebhook(rawBody, headers, secret);
  const asEvent: Event = event;
  verifyWebhook('{}', { 'webhook-id': 'a' }, secret, { tolerance: 60, now: Date.now() });
  if (event.type === 'payout.sent') {
    const amount: Decimal = event.data.amount;
  } else if (event.type === 'review.created') {
    const rating: number = event.data.rating;
  }

  try {
    await market.products.get('prod_x');
  } catch (e) {
    if (e instanceof NotFoundError || e instanceof AuthenticationError || e instanceof PermissionError) {
      const code: string | null = e.code;
    }
    if (e instanceof RateLimitError) {
      const wait: number | null = e.retryAfter;
    }
    if (e instanceof ConflictError) {
      const asInvalid: InvalidRequestError = e;
    }
    if (e instanceof ServerError || e instanceof ConnectionError) {
      const s: number | null = e.status;
    }
    if (e instanceof MarketError) {
      const fields: [number | null, string | null, string | null, string | null, string | null, RateLimit | null] =
        [e.status, e.type, e.code, e.param, e.requestId, e.rateLimit];
    }
    if (e instanceof WebhookVerificationError) {
      const why: 'missing_header' | 'invalid_timestamp' | 'timestamp_too_old' | 'timestamp_too_new' | 'no_matching_signature' | 'invalid_payload' = e.code;
    }
  }

  // What must not type-check:
  // @ts-expect-error apiKey is required
  new Market({ baseUrl: 'http://x' });
  // @ts-expect-error parameters are camelCase
  await market.products.list({ min_price: 1 });
  // @ts-expect-error sort is one of four values
  await market.products.list({ sort: 'cheapest' });
  // @ts-expect-error order status is paid or refunded
  await market.orders.list({ status: 'pending' });
  // @ts-expect-error url is required
  await market.webhooks.create({ events: ['sale.completed'] });
  // @ts-expect-error unknown event kind
  await market.webhooks.create({ url: 'https://x', events: ['sale.created'] });
  // @ts-expect-error money is a decimal string, not a number
  const n: number = page.data[0]!.price;
  // @ts-expect-error the payload is the raw body, not a parsed object
  verifyWebhook({ id: 'evt' }, headers, secret);
  // @ts-expect-error resources are types only, not classes to construct
  new Products();
  // @ts-expect-error resources are types only, not classes to construct
  new Events();
  // @ts-expect-error a subscription as get shows it may have no secret
  const noSecret: string = got.secret;
  // @ts-expect-error update's fields are camelCase and known: disabled, not disable
  await market.webhooks.update('we_1', { disable: true });
  // @ts-expect-error disabled is a boolean
  await market.webhooks.update('we_1', { disabled: 'yes' });
  // @ts-expect-error webhook.test is not a kind to subscribe to
  await market.webhooks.update('we_1', { events: ['webhook.test'] });
  // @ts-expect-error delete takes only idempotencyKey
  await market.webhooks.delete('we_1', { expireOldIn: 0 });
  // @ts-expect-error the id is required
  await market.webhooks.test();
  // @ts-expect-error expireOldIn is a number of seconds
  await market.webhooks.rotateSecret('we_1', { expireOldIn: '1h' });
  // @ts-expect-error an unknown event type
  await market.events.list({ type: 'sale.created' });
  // @ts-expect-error createdGte is a Date or a string, not a number
  await market.events.list({ createdGte: Date.now() });
  // @ts-expect-error lastError may be null
  const lastError: string = detail.deliveries[0]!.lastError;
  // @ts-expect-error deleted is always true
  const notDeleted: false = deleted.deleted;
}

void usage;
