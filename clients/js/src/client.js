// The Market client: one method per route of the API (docs/api.md), retries, errors.
import { randomUUID } from 'node:crypto';

import {
  ConnectionError, MarketError, errorClassFor,
} from './errors.js';
import {
  decode, DELETED, DOWNLOAD_LINK, EVENT, EVENT_PAGE, EVENT_WITH_DELIVERIES, ORDER_PAGE, PRODUCT, PRODUCT_PAGE,
  SELLER, WEBHOOK_SUBSCRIPTION, WEBHOOK_SUBSCRIPTION_PAGE,
} from './json.js';
import {
  encodeBody, encodeQuery, onlyIdempotencyKey, pathId, takeIdempotencyKey,
} from './params.js';
import { parseRetryAfter, retryDelay, shouldRetry } from './retry.js';

export const VERSION = '0.2.0';
const DEFAULT_TIMEOUT_MS = 30000;
const INSPECT = Symbol.for('nodejs.util.inspect.custom');

const defaultSleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** An integer header value, or null. */
function intHeader(headers, name) {
  const v = headers.get(name);
  return v !== null && /^[0-9]+$/.test(v.trim()) ? Number(v) : null;
}

/** {limit, remaining, reset} from the X-RateLimit-* headers, or null when absent. */
export function rateLimitOf(headers) {
  const limit = intHeader(headers, 'x-ratelimit-limit');
  const remaining = intHeader(headers, 'x-ratelimit-remaining');
  const reset = intHeader(headers, 'x-ratelimit-reset');
  if (limit === null && remaining === null && reset === null) return null;
  return { limit, remaining, reset };
}

/** Attaches the answer's details to a returned value, out of sight of JSON and equality. */
function attach(value, info) {
  Object.defineProperty(value, 'lastResponse', { value: info, enumerable: false, configurable: true });
  Object.defineProperty(value, 'rateLimit', { value: info.rateLimit, enumerable: false, configurable: true });
  return value;
}

/** The key as it may be shown: its mode prefix only. */
function redact(key) {
  const m = /^sk_(live|test)_/.exec(key);
  return m ? `${m[0]}****` : '****';
}

/** The error of a non-2xx answer. */
function apiError(status, text, info, retryAfter) {
  let body = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  const e = body !== null && typeof body === 'object' && body.error && typeof body.error === 'object' ? body.error : null;
  const str = (v) => (typeof v === 'string' ? v : null);
  const message = str(e?.message) ?? `HTTP ${status} with ${e ? 'an error body without a message' : 'no API error body'}`;
  const Cls = errorClassFor(status);
  return new Cls(message, {
    status,
    type: str(e?.type),
    code: str(e?.code),
    param: str(e?.param),
    requestId: str(e?.request_id) ?? info.requestId,
    rateLimit: info.rateLimit,
    retryAfter,
    headers: info.headers,
  });
}

export class Market {
  #apiKey;
  #baseUrl;
  #maxRetries;
  #timeout;
  #fetch;
  #sleep;
  #onResponse;

  /**
   * @param {object} options
   *   apiKey      the API key (sk_test_... or sk_live_...); required
   *   baseUrl     e.g. "http://127.0.0.1:8080"; default: the MARKET_BASE_URL environment variable
   *   maxRetries  retries after a 429/503 or a network failure (default 2)
   *   timeout     milliseconds per attempt (default 30000)
   *   fetch       a fetch function to use instead of the global one
   *   sleep       async (ms) => void used to wait between attempts (for tests)
   *   onResponse  (info) => void called once per HTTP attempt, retries included, with
   *               {method, path, status, error, durationMs, requestId, attempt}; never
   *               given the API key nor the Authorization header (docs/clients.md)
   */
  constructor({
    apiKey, baseUrl, maxRetries = 2, timeout = DEFAULT_TIMEOUT_MS, fetch: fetchFn, sleep, onResponse,
  } = {}) {
    if (typeof apiKey !== 'string' || apiKey === '') throw new TypeError('apiKey is required');
    if (/[\s\u0000-\u001f\u007f]/.test(apiKey)) throw new TypeError('apiKey must not contain spaces or control characters');
    const base = baseUrl ?? globalThis.process?.env?.MARKET_BASE_URL;
    if (typeof base !== 'string' || base === '') {
      throw new TypeError('baseUrl is required: pass it, or set MARKET_BASE_URL');
    }
    let url;
    try {
      url = new URL(base);
    } catch {
      throw new TypeError(`baseUrl is not a URL: ${base}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('baseUrl must be an http:// or https:// URL');
    if (url.search || url.hash || url.username || url.password) throw new TypeError('baseUrl must not have a query, fragment or user info');
    if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new TypeError('maxRetries must be an integer >= 0');
    if (!(Number.isFinite(timeout) && timeout > 0)) throw new TypeError('timeout must be a positive number of milliseconds');
    const f = fetchFn ?? globalThis.fetch;
    if (typeof f !== 'function') throw new TypeError('no fetch function: use Node.js 18 or later, or pass fetch');
    if (onResponse !== undefined && onResponse !== null && typeof onResponse !== 'function') {
      throw new TypeError('onResponse must be a function');
    }
    this.#apiKey = apiKey;
    this.#baseUrl = url.href.replace(/\/+$/, '');
    this.#maxRetries = maxRetries;
    this.#timeout = timeout;
    this.#fetch = f;
    this.#sleep = sleep ?? defaultSleep;
    this.#onResponse = onResponse ?? null;

    const request = (method, path, opts) => this.#request(method, path, opts);
    this.products = new Products(request);
    this.sellers = new Sellers(request);
    this.orders = new Orders(request);
    this.downloads = new Downloads(request);
    this.webhooks = new Webhooks(request);
    this.events = new Events(request);
    Object.freeze(this);
  }

  /** The base URL in use, without a trailing slash. */
  get baseUrl() {
    return this.#baseUrl;
  }

  get maxRetries() {
    return this.#maxRetries;
  }

  toString() {
    return `Market(baseUrl=${this.#baseUrl}, apiKey=${redact(this.#apiKey)})`;
  }

  toJSON() {
    return { baseUrl: this.#baseUrl, maxRetries: this.#maxRetries, apiKey: redact(this.#apiKey) };
  }

  [INSPECT]() {
    return `Market { baseUrl: '${this.#baseUrl}', maxRetries: ${this.#maxRetries}, apiKey: '${redact(this.#apiKey)}' }`;
  }

  /** Tells the onResponse hook about one attempt; what the hook throws is ignored. */
  #report(info) {
    if (this.#onResponse === null) return;
    try {
      this.#onResponse(Object.freeze(info));
    } catch {
      // A hook that fails must not change the call's outcome.
    }
  }

  /** One API call with its retries; resolves to the decoded body with lastResponse. */
  async #request(method, path, { query, body, idempotencyKey, schema } = {}) {
    const pathAndQuery = path + encodeQuery(query);
    const url = this.#baseUrl + pathAndQuery;
    const headers = {
      Authorization: `Bearer ${this.#apiKey}`,
      Accept: 'application/json',
      'User-Agent': `market-js/${VERSION} node/${globalThis.process?.version ?? 'unknown'}`,
    };
    let key = null;
    let payload;
    if (method === 'POST' || method === 'DELETE') {
      // Every POST and DELETE carries a key, so that a retry after a lost answer replays
      // the first answer instead of acting twice (or, for a DELETE, answering 404).
      key = idempotencyKey ?? `market-js-${randomUUID()}`;
      headers['Idempotency-Key'] = key;
      if (body !== undefined) {
        headers['Content-Type'] = 'application/json';
        payload = JSON.stringify(body);
      }
    }

    for (let attempt = 0; ; attempt++) {
      let res;
      let text;
      const started = performance.now();
      try {
        res = await this.#fetch(url, {
          method, headers, body: payload, redirect: 'manual', signal: AbortSignal.timeout(this.#timeout),
        });
        text = await res.text();
      } catch (cause) {
        const timedOut = cause?.name === 'TimeoutError';
        const error = new ConnectionError(
          timedOut ? `no answer from ${this.#baseUrl} within ${this.#timeout} ms` : `could not reach ${this.#baseUrl}: ${cause?.cause?.code ?? cause?.message ?? cause}`,
          { cause },
        );
        this.#report({
          method,
          path: pathAndQuery,
          status: null,
          error: timedOut ? 'timeout' : error.message,
          durationMs: performance.now() - started,
          requestId: res?.headers?.get('x-request-id') ?? null,
          attempt: attempt + 1,
        });
        if (shouldRetry({ attempt, maxRetries: this.#maxRetries, method, status: null, idempotencyKey: key })) {
          await this.#sleep(retryDelay({ attempt }));
          continue;
        }
        throw error;
      }

      const info = {
        status: res.status,
        requestId: res.headers.get('x-request-id'),
        rateLimit: rateLimitOf(res.headers),
        idempotentReplayed: res.headers.get('idempotent-replayed') === 'true',
        idempotencyKey: key,
        retries: attempt,
        headers: res.headers,
      };
      this.#report({
        method,
        path: pathAndQuery,
        status: res.status,
        error: null,
        durationMs: performance.now() - started,
        requestId: info.requestId,
        attempt: attempt + 1,
      });
      if (res.status >= 200 && res.status <= 299) {
        let value;
        try {
          value = decode(text, schema);
        } catch (cause) {
          throw new MarketError(`the answer to ${method} ${path} is not JSON`, {
            status: res.status, requestId: info.requestId, rateLimit: info.rateLimit, headers: res.headers, cause,
          });
        }
        if (value === null || typeof value !== 'object') {
          throw new MarketError(`the answer to ${method} ${path} is not a JSON object`, {
            status: res.status, requestId: info.requestId, rateLimit: info.rateLimit, headers: res.headers,
          });
        }
        return attach(value, info);
      }

      const retryAfter = parseRetryAfter(res.headers.get('retry-after'));
      const error = apiError(res.status, text, info, retryAfter);
      if (shouldRetry({ attempt, maxRetries: this.#maxRetries, method, status: res.status, idempotencyKey: key, retryAfter })) {
        await this.#sleep(retryDelay({ attempt, retryAfter }));
        continue;
      }
      throw error;
    }
  }
}

/** Walks every page of a list lazily: a page is fetched when the previous one is used up. */
async function* walk(fetchPage, params) {
  let page = await fetchPage(params);
  for (;;) {
    yield* page.data;
    if (page.nextCursor === null || page.nextCursor === undefined) return;
    page = await fetchPage({ ...params, cursor: page.nextCursor });
  }
}

function listParams(params) {
  if (params === undefined || params === null) return {};
  if (typeof params !== 'object' || Array.isArray(params)) throw new TypeError('parameters must be an object');
  return params;
}

// Each resource's way to make requests, kept out of sight (no key, no client reachable
// from a resource object).
const requesters = new WeakMap();
const call = (resource, method, path, opts) => requesters.get(resource)(method, path, opts);

class Resource {
  constructor(request) {
    requesters.set(this, request);
    Object.freeze(this);
  }

  [INSPECT]() {
    return `${this.constructor.name} {}`;
  }
}

class Products extends Resource {
  /** GET /v1/products: one page. params: category, q, seller, minPrice, maxPrice, sort, limit, cursor. */
  list(params) {
    return call(this, 'GET', '/v1/products', { query: listParams(params), schema: PRODUCT_PAGE });
  }

  /** Every product of every page, fetched page by page as the loop goes on. */
  all(params) {
    const p = listParams(params);
    return walk((q) => this.list(q), p);
  }

  /** GET /v1/products/:id */
  get(id) {
    return call(this, 'GET', `/v1/products/${pathId('id', id)}`, { schema: PRODUCT });
  }
}

class Sellers extends Resource {
  /** GET /v1/sellers/:id; params: limit, cursor (they page the seller's products). */
  get(id, params) {
    return call(this, 'GET', `/v1/sellers/${pathId('id', id)}`, { query: listParams(params), schema: SELLER });
  }
}

class Orders extends Resource {
  /** GET /v1/orders: one page. params: status, limit, cursor. */
  list(params) {
    return call(this, 'GET', '/v1/orders', { query: listParams(params), schema: ORDER_PAGE });
  }

  /** Every order of every page, fetched lazily. */
  all(params) {
    const p = listParams(params);
    return walk((q) => this.list(q), p);
  }
}

class Downloads extends Resource {
  /** POST /v1/downloads/:id/link; options: expiresIn (seconds), idempotencyKey. */
  createLink(id, options) {
    const path = `/v1/downloads/${pathId('id', id)}/link`;
    const [idempotencyKey, fields] = takeIdempotencyKey(options);
    return call(this, 'POST', path, { body: encodeBody(fields), idempotencyKey, schema: DOWNLOAD_LINK });
  }
}

// Every call of Webhooks but create, and every call of Events, uses a route of the API's
// extension webhook-management, which a server has only with
// MARKET_API_EXTENSIONS=webhook-management (off by default). Without it the server answers
// as for any path it does not have and the call rejects with the usual errors: a
// NotFoundError (404 route_not_found), or for list and all, whose path /v1/webhooks exists
// for create, an InvalidRequestError (405 method_not_allowed, Allow: POST).
class Webhooks extends Resource {
  /** POST /v1/webhooks; params: url, events, description, idempotencyKey. A route of the
   * specification: works with or without the extension webhook-management. */
  create(params) {
    if (params === undefined || params === null) throw new TypeError('webhooks.create needs { url }');
    const [idempotencyKey, fields] = takeIdempotencyKey(params);
    return call(this, 'POST', '/v1/webhooks', { body: encodeBody(fields) ?? {}, idempotencyKey, schema: WEBHOOK_SUBSCRIPTION });
  }

  /** GET /v1/webhooks: one page, newest first. params: limit, cursor. Extension
   * webhook-management (without it: InvalidRequestError 405 method_not_allowed). */
  list(params) {
    return call(this, 'GET', '/v1/webhooks', { query: listParams(params), schema: WEBHOOK_SUBSCRIPTION_PAGE });
  }

  /** Every subscription of every page, fetched lazily. params: limit. Extension
   * webhook-management (without it: InvalidRequestError 405 at the first page). */
  all(params) {
    const p = listParams(params);
    return walk((q) => this.list(q), p);
  }

  /** GET /v1/webhooks/:id. Extension webhook-management (without it: NotFoundError
   * 404 route_not_found, as for the calls below). */
  get(id) {
    return call(this, 'GET', `/v1/webhooks/${pathId('id', id)}`, { schema: WEBHOOK_SUBSCRIPTION });
  }

  /** POST /v1/webhooks/:id; params: url, events, description, disabled, idempotencyKey.
   * Fields not given keep their value; no field at all sends {} (changes nothing).
   * Extension webhook-management. */
  update(id, params) {
    const path = `/v1/webhooks/${pathId('id', id)}`;
    const [idempotencyKey, fields] = takeIdempotencyKey(params);
    return call(this, 'POST', path, { body: encodeBody(fields) ?? {}, idempotencyKey, schema: WEBHOOK_SUBSCRIPTION });
  }

  /** DELETE /v1/webhooks/:id; options: idempotencyKey. Resolves to {id, object, deleted: true}.
   * Extension webhook-management. */
  delete(id, options) {
    const path = `/v1/webhooks/${pathId('id', id)}`;
    const idempotencyKey = onlyIdempotencyKey('webhooks.delete', options);
    return call(this, 'DELETE', path, { idempotencyKey, schema: DELETED });
  }

  /** POST /v1/webhooks/:id/rotate_secret; options: expireOldIn (seconds the replaced
   * secret keeps signing, 0..604800), idempotencyKey. The answer has the new secret.
   * Extension webhook-management. */
  rotateSecret(id, options) {
    const path = `/v1/webhooks/${pathId('id', id)}/rotate_secret`;
    const [idempotencyKey, fields] = takeIdempotencyKey(options);
    return call(this, 'POST', path, { body: encodeBody(fields), idempotencyKey, schema: WEBHOOK_SUBSCRIPTION });
  }

  /** POST /v1/webhooks/:id/test; options: idempotencyKey. Resolves to the webhook.test
   * event queued for this subscription (answered 202). Extension webhook-management. */
  test(id, options) {
    const path = `/v1/webhooks/${pathId('id', id)}/test`;
    const idempotencyKey = onlyIdempotencyKey('webhooks.test', options);
    return call(this, 'POST', path, { idempotencyKey, schema: EVENT });
  }
}

// The routes of Events all belong to the extension webhook-management (see Webhooks): without
// it every call rejects with a NotFoundError (404 route_not_found).
class Events extends Resource {
  /** GET /v1/events: one page, newest first. params: type, createdGte, createdLt (a Date,
   * sent as RFC 3339 UTC, or a string sent as it is), limit, cursor. Extension
   * webhook-management. */
  list(params) {
    return call(this, 'GET', '/v1/events', { query: listParams(params), schema: EVENT_PAGE });
  }

  /** Every event of every page, fetched lazily; the same filters on every page. Extension
   * webhook-management. */
  all(params) {
    const p = listParams(params);
    return walk((q) => this.list(q), p);
  }

  /** GET /v1/events/:id: the event with its deliveries. Extension webhook-management. */
  get(id) {
    return call(this, 'GET', `/v1/events/${pathId('id', id)}`, { schema: EVENT_WITH_DELIVERIES });
  }
}
