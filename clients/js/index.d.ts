// Type declarations of the market client (handwritten; see README.md).
// They need no other type package: only the ECMAScript library is assumed.

/** A money amount exactly as the API wrote it, in the currency's major units: "19.99", "5", "1200.5". */
export type Decimal = string;

/** An RFC 3339 UTC timestamp with seconds: "2026-11-21T10:04:05Z". */
export type Timestamp = string;

/** A date-time parameter: a Date (sent as RFC 3339 UTC, "2026-11-26T10:04:05Z", with the
 * milliseconds when not zero) or a string sent as it is ("2026-11-26T11:04:05+01:00"). */
export type DateTimeInput = Date | string;

/** Response headers (a fetch Headers object). */
export interface HeadersLike {
  get(name: string): string | null;
}

/** The X-RateLimit-* figures of an answer. */
export interface RateLimit {
  /** Requests allowed per window (X-RateLimit-Limit). */
  limit: number | null;
  /** Requests left in this window after this one (X-RateLimit-Remaining). */
  remaining: number | null;
  /** Whole seconds until the window ends (X-RateLimit-Reset). */
  reset: number | null;
}

/** Details of the answer a value came from (a non-enumerable property of every returned value). */
export interface ResponseInfo {
  status: number;
  requestId: string | null;
  rateLimit: RateLimit | null;
  /** True when the API replayed an earlier answer for the same Idempotency-Key. */
  idempotentReplayed: boolean;
  /** The Idempotency-Key sent (POST and DELETE; generated when the caller gave none), else null. */
  idempotencyKey: string | null;
  /** How many times the request was sent again before this answer (0: first attempt). */
  retries: number;
  headers: HeadersLike;
}

/** Present on every value a call resolves to (pages and objects); not enumerable. */
export interface WithResponse {
  readonly lastResponse: ResponseInfo;
  readonly rateLimit: RateLimit | null;
}

/** One page of a list. */
export interface Page<T> extends WithResponse {
  data: T[];
  /** Pass as `cursor` to read the next page; null on the last page. */
  nextCursor: string | null;
}

export type ProductSort = 'relevance' | 'newest' | 'price_asc' | 'price_desc';
export type OrderStatus = 'paid' | 'refunded';
/** The event kinds a subscription asks for. */
export type EventType = 'sale.completed' | 'sale.refunded' | 'review.created' | 'payout.sent';
/** Every event type: the four kinds and the test event of webhooks.test. */
export type AnyEventType = EventType | 'webhook.test';
export type WebhookStatus = 'enabled' | 'disabled';
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'endpoint_deleted';

/** A product as it appears in a list. */
export interface ProductListItem {
  id: string;
  title: string;
  /** The lowest tier price, in the product's currency (not given in lists). */
  price: Decimal;
  /** The seller's handle. */
  seller: string;
}

export interface Tier {
  id: string;
  name: string;
  description: string;
  price: Decimal;
  currency: string;
  /** The licence terms as the seller recorded them; keys as recorded. */
  licence: Record<string, unknown>;
}

export interface Product {
  id: string;
  title: string;
  description: string;
  category: string;
  /** The lowest tier price. */
  price: Decimal;
  currency: string;
  seller: string;
  /** Ordered by price, then id. */
  tiers: Tier[];
  rating: { average: number | null; count: number };
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface Seller {
  /** The seller's handle. */
  id: string;
  name: string;
  bio: string;
  website: string | null;
  createdAt: Timestamp;
  productCount: number;
  /** The seller's published products, newest first (paged by limit and cursor). */
  products: { data: ProductListItem[]; nextCursor: string | null };
}

export interface OrderItem {
  product: string;
  title: string;
  tier: string;
  tierName: string;
  /** What was paid for the tier at purchase, in the order's currency. */
  price: Decimal;
}

export interface Download {
  id: string;
  product: string;
  filename: string;
  sizeBytes: number;
  /** A working download link; null for a refunded order. */
  url: string | null;
  expiresAt: Timestamp | null;
}

export interface Order {
  id: string;
  status: OrderStatus;
  createdAt: Timestamp;
  currency: string;
  total: Decimal;
  items: OrderItem[];
  downloads: Download[];
}

export interface DownloadLink {
  object: 'download_link';
  download: string;
  url: string;
  expiresAt: Timestamp;
}

/** A subscription as webhooks.list, get and update show it (never its secret). */
export interface WebhookSubscription {
  id: string;
  object: 'webhook_subscription';
  url: string;
  /** In the canonical order sale.completed, sale.refunded, review.created, payout.sent. */
  events: EventType[];
  description: string;
  /** A disabled subscription receives nothing. */
  status: WebhookStatus;
  livemode: boolean;
  /** "whsec_..." — only in the answers of create and rotateSecret (and their idempotent replays). */
  secret?: string;
  createdAt: Timestamp;
  /** The time of the last change. */
  updatedAt: Timestamp;
}

/** The answer of webhooks.create: the new subscription with its secret (no updatedAt yet). */
export interface NewWebhookSubscription extends Omit<WebhookSubscription, 'secret'> {
  status: 'enabled';
  /** "whsec_..." — shown only in this answer (and its idempotent replay): store it. */
  secret: string;
}

/** The answer of webhooks.rotateSecret: the subscription with its new secret. */
export interface RotatedWebhookSubscription extends WebhookSubscription {
  /** The new "whsec_..." — shown only in this answer (and its idempotent replay): store it. */
  secret: string;
}

/** The answer of webhooks.delete. */
export interface DeletedWebhookSubscription {
  id: string;
  object: 'webhook_subscription';
  deleted: true;
}

export interface SaleEventData {
  order: string;
  product: string;
  tier: string;
  amount: Decimal;
  currency: string;
}
export interface ReviewEventData {
  review: string;
  product: string;
  rating: number;
  body: string;
}
export interface PayoutEventData {
  payout: string;
  amount: Decimal;
  currency: string;
}
export interface TestEventData {
  /** The subscription tested. */
  subscription: string;
}

interface EventBase<K extends AnyEventType, D> {
  id: string;
  type: K;
  createdAt: Timestamp;
  livemode: boolean;
  data: D;
}

/**
 * An event: what verifyWebhook returns, what events.list and events.all give, what
 * webhooks.test answers. Narrow on `type`. (A type newer than this client still comes
 * through at run time, its `data` converted generically: camelCase keys.)
 */
export type Event =
  | EventBase<'sale.completed', SaleEventData>
  | EventBase<'sale.refunded', SaleEventData>
  | EventBase<'review.created', ReviewEventData>
  | EventBase<'payout.sent', PayoutEventData>
  | EventBase<'webhook.test', TestEventData>;

/** A verified webhook event (the same as Event). */
export type WebhookEvent = Event;

/** The test event webhooks.test queues. */
export type TestEvent = Extract<Event, { type: 'webhook.test' }>;

/** One delivery of an event: to one subscription. */
export interface EventDelivery {
  subscription: string;
  status: DeliveryStatus;
  attempts: number;
  /** When the last attempt began; null before the first. */
  lastAttemptAt: Timestamp | null;
  /** The HTTP status of the last attempt; null when none came or before the first. */
  lastStatus: number | null;
  /** Why the last attempt failed when no status says it ("subscription disabled", a timeout...); else null. */
  lastError: string | null;
}

/** An event with its deliveries, oldest first (events.get). */
export type EventWithDeliveries = Event & { deliveries: EventDelivery[] };

/** A money parameter: a decimal string ("19.99", exact) or a number. */
export type DecimalInput = string | number;

export interface ProductListParams {
  /** Category slug, exact. */
  category?: string | undefined;
  /** Full-text search, 1..200 characters. */
  q?: string | undefined;
  /** Seller handle. */
  seller?: string | undefined;
  minPrice?: DecimalInput | undefined;
  maxPrice?: DecimalInput | undefined;
  /** Default: relevance with q, else newest. */
  sort?: ProductSort | undefined;
  /** 1..100, default 20. */
  limit?: number | undefined;
  cursor?: string | undefined;
}

export interface SellerGetParams {
  limit?: number | undefined;
  cursor?: string | undefined;
}

export interface OrderListParams {
  status?: OrderStatus | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

export interface CreateLinkParams {
  /** Link lifetime in seconds, 60..86400 (default: the server's, 3600). */
  expiresIn?: number | undefined;
  /** Default: one generated per call, reused by the call's retries. */
  idempotencyKey?: string | undefined;
}

export interface WebhookCreateParams {
  /** An https:// URL. */
  url: string;
  /** Default: all four kinds. */
  events?: EventType[] | undefined;
  description?: string | undefined;
  idempotencyKey?: string | undefined;
}

export interface WebhookListParams {
  /** 1..100, default 20. */
  limit?: number | undefined;
  cursor?: string | undefined;
}

export interface WebhookUpdateParams {
  /** An https:// URL (checked again). */
  url?: string | undefined;
  events?: EventType[] | undefined;
  description?: string | undefined;
  /** true disables the subscription, false enables it. */
  disabled?: boolean | undefined;
  idempotencyKey?: string | undefined;
}

export interface RotateSecretParams {
  /** Seconds the replaced secret keeps signing beside the new one, 0..604800 (default: the server's, 24 h). */
  expireOldIn?: number | undefined;
  idempotencyKey?: string | undefined;
}

export interface IdempotencyParams {
  /** Default: one generated per call, reused by the call's retries. */
  idempotencyKey?: string | undefined;
}

export interface EventListParams {
  type?: AnyEventType | undefined;
  /** Events created at or after this time. */
  createdGte?: DateTimeInput | undefined;
  /** Events created before this time. */
  createdLt?: DateTimeInput | undefined;
  /** 1..100, default 20. */
  limit?: number | undefined;
  cursor?: string | undefined;
}

export interface MarketOptions {
  /** sk_test_... or sk_live_... */
  apiKey: string;
  /** Default: the MARKET_BASE_URL environment variable; one of the two is required. */
  baseUrl?: string | undefined;
  /** Retries after a 429/502/503/504 or a network failure (docs/clients.md). Default 2. */
  maxRetries?: number | undefined;
  /** Milliseconds per attempt. Default 30000. */
  timeout?: number | undefined;
  /** A fetch function to use instead of globalThis.fetch. */
  fetch?: ((input: string, init?: any) => Promise<any>) | undefined;
  /** Waits between attempts (default: setTimeout); for tests. */
  sleep?: ((ms: number) => Promise<void>) | undefined;
  /** Called once per HTTP attempt, retries included; never sees the API key. What it throws is ignored. */
  onResponse?: ((info: RequestInfo) => void) | null | undefined;
}

/** What the onResponse hook is told about one HTTP attempt. */
export interface RequestInfo {
  readonly method: string;
  /** The route's path with its query, e.g. "/v1/products?limit=2" (without the base URL). */
  readonly path: string;
  /** The HTTP status, or null when no complete answer came (see error). */
  readonly status: number | null;
  /** Why no answer came: "timeout", or the connection error's message; null with a status. */
  readonly error: string | null;
  readonly durationMs: number;
  /** The X-Request-Id response header, or null. */
  readonly requestId: string | null;
  /** 1 for the first attempt of a call, 2 for its first retry... */
  readonly attempt: number;
}

/** {@link Market}.products (made by the client only). */
export interface Products {
  list(params?: ProductListParams): Promise<Page<ProductListItem>>;
  all(params?: ProductListParams): AsyncGenerator<ProductListItem, void, undefined>;
  get(id: string): Promise<Product & WithResponse>;
}

/** {@link Market}.sellers (made by the client only). */
export interface Sellers {
  get(id: string, params?: SellerGetParams): Promise<Seller & WithResponse>;
}

/** {@link Market}.orders (made by the client only). */
export interface Orders {
  list(params?: OrderListParams): Promise<Page<Order>>;
  all(params?: OrderListParams): AsyncGenerator<Order, void, undefined>;
}

/** {@link Market}.downloads (made by the client only). */
export interface Downloads {
  createLink(id: string, params?: CreateLinkParams): Promise<DownloadLink & WithResponse>;
}

/**
 * {@link Market}.webhooks (made by the client only).
 *
 * `create` (POST /v1/webhooks) is a route of the specification and works on every server.
 * Every other call here needs the server's extension `webhook-management`
 * (`MARKET_API_EXTENSIONS=webhook-management`; off by default). Without it, `get`,
 * `update`, `delete`, `rotateSecret` and `test` reject with {@link NotFoundError}
 * (status 404, code `route_not_found`), and `list` and `all` with
 * {@link InvalidRequestError} (status 405, code `method_not_allowed`, `Allow: POST`).
 */
export interface Webhooks {
  /** POST /v1/webhooks: works with or without the extension `webhook-management`. */
  create(params: WebhookCreateParams): Promise<NewWebhookSubscription & WithResponse>;
  /** Newest first. Needs the extension `webhook-management` (else InvalidRequestError 405 `method_not_allowed`). */
  list(params?: WebhookListParams): Promise<Page<WebhookSubscription>>;
  /** Needs the extension `webhook-management` (else InvalidRequestError 405 `method_not_allowed` at the first page). */
  all(params?: WebhookListParams): AsyncGenerator<WebhookSubscription, void, undefined>;
  /** Needs the extension `webhook-management` (else NotFoundError 404 `route_not_found`). */
  get(id: string): Promise<WebhookSubscription & WithResponse>;
  /** Fields not given keep their value. Needs the extension `webhook-management` (else NotFoundError 404 `route_not_found`). */
  update(id: string, params?: WebhookUpdateParams): Promise<WebhookSubscription & WithResponse>;
  /** Needs the extension `webhook-management` (else NotFoundError 404 `route_not_found`). */
  delete(id: string, params?: IdempotencyParams): Promise<DeletedWebhookSubscription & WithResponse>;
  /** Needs the extension `webhook-management` (else NotFoundError 404 `route_not_found`). */
  rotateSecret(id: string, params?: RotateSecretParams): Promise<RotatedWebhookSubscription & WithResponse>;
  /**
   * Queues a webhook.test event for this subscription alone and resolves to it.
   * Needs the extension `webhook-management` (else NotFoundError 404 `route_not_found`).
   */
  test(id: string, params?: IdempotencyParams): Promise<TestEvent & WithResponse>;
}

/**
 * {@link Market}.events (made by the client only). Every call needs the server's extension
 * `webhook-management` (`MARKET_API_EXTENSIONS=webhook-management`; off by default);
 * without it they reject with {@link NotFoundError} (status 404, code `route_not_found`).
 */
export interface Events {
  /** Newest first. Needs the extension `webhook-management` (else NotFoundError 404 `route_not_found`). */
  list(params?: EventListParams): Promise<Page<Event>>;
  /** Needs the extension `webhook-management` (else NotFoundError 404 `route_not_found` at the first page). */
  all(params?: EventListParams): AsyncGenerator<Event, void, undefined>;
  /** Needs the extension `webhook-management` (else NotFoundError 404 `route_not_found`). */
  get(id: string): Promise<EventWithDeliveries & WithResponse>;
}

export declare class Market {
  constructor(options: MarketOptions);
  readonly products: Products;
  readonly sellers: Sellers;
  readonly orders: Orders;
  readonly downloads: Downloads;
  readonly webhooks: Webhooks;
  readonly events: Events;
  readonly baseUrl: string;
  readonly maxRetries: number;
  /** Shows the base URL and the key's mode prefix only, never the key. */
  toString(): string;
  toJSON(): { baseUrl: string; maxRetries: number; apiKey: string };
}

export declare const VERSION: string;

export interface MarketErrorFields {
  status?: number | null;
  type?: string | null;
  code?: string | null;
  param?: string | null;
  requestId?: string | null;
  rateLimit?: RateLimit | null;
  retryAfter?: number | null;
  headers?: HeadersLike | null;
  cause?: unknown;
}

/** Every failed call throws a MarketError (a subclass chosen by status). */
export declare class MarketError extends Error {
  constructor(message: string, fields?: MarketErrorFields);
  /** HTTP status; null when no answer arrived (ConnectionError). */
  readonly status: number | null;
  /** "invalid_request_error", "authentication_error", "permission_error", "rate_limit_error", "api_error", or null. */
  readonly type: string | null;
  /** "parameter_invalid", "resource_missing", "order_refunded", ... Branch on this. */
  readonly code: string | null;
  readonly param: string | null;
  readonly requestId: string | null;
  readonly rateLimit: RateLimit | null;
  /** Seconds of Retry-After (429, 503), else null. */
  readonly retryAfter: number | null;
  readonly headers: HeadersLike | null;
}
/** 401 */
export declare class AuthenticationError extends MarketError {}
/** 403 */
export declare class PermissionError extends MarketError {}
/**
 * 404: `resource_missing` (no such resource for this key), or `route_not_found` (no such
 * route: a call of the extension `webhook-management` on a server without it).
 */
export declare class NotFoundError extends MarketError {}
/** 400, 405, 408, 410, 413, 414, 415, 416 and 409 (ConflictError) */
export declare class InvalidRequestError extends MarketError {}
/** 409 */
export declare class ConflictError extends InvalidRequestError {}
/** 429 */
export declare class RateLimitError extends MarketError {}
/** 5xx */
export declare class ServerError extends MarketError {}
/** No answer: connection refused, dropped, timed out. */
export declare class ConnectionError extends MarketError {}

export type WebhookVerificationErrorCode =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'no_matching_signature'
  | 'invalid_payload';

export declare class WebhookVerificationError extends Error {
  constructor(message: string, code: WebhookVerificationErrorCode);
  readonly code: WebhookVerificationErrorCode;
}

/** Headers as node:http gives them, a fetch Headers object, or a Map. */
export type WebhookHeaders =
  | HeadersLike
  | Map<string, string | string[]>
  | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Seconds between webhook-timestamp and now that are accepted (default 300). */
  tolerance?: number | undefined;
  /** The current time (a Date or milliseconds since the epoch); for tests. */
  now?: Date | number | undefined;
}

/**
 * Verifies a delivery (Standard Webhooks) and returns its event; throws
 * WebhookVerificationError when it must not be trusted.
 * @param payload the raw body exactly as received (not parsed JSON)
 * @param headers the request's headers
 * @param secret the subscription's "whsec_..." secret
 */
export declare function verifyWebhook(
  payload: string | Uint8Array | ArrayBuffer,
  headers: WebhookHeaders,
  secret: string,
  options?: VerifyOptions,
): WebhookEvent;
