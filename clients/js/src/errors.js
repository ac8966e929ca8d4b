// The errors the client throws. Every failed API call throws a MarketError (or one of its
// subclasses, chosen by the HTTP status); a request that got no answer throws a
// ConnectionError; a webhook that does not verify throws a WebhookVerificationError.

export class MarketError extends Error {
  /**
   * @param {string} message
   * @param {object} [fields] status, type, code, param, requestId, rateLimit, retryAfter,
   *                          headers, cause
   */
  constructor(message, fields = {}) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = new.target.name;
    /** HTTP status, or null when no answer arrived. */
    this.status = fields.status ?? null;
    /** The API's error type ("invalid_request_error", ...), or null. */
    this.type = fields.type ?? null;
    /** The API's error code ("parameter_invalid", ...), or null. Branch on this. */
    this.code = fields.code ?? null;
    /** The input at fault ("limit", "url", ...), or null. */
    this.param = fields.param ?? null;
    /** The request id (body's request_id, else the X-Request-Id header), or null. */
    this.requestId = fields.requestId ?? null;
    /** {limit, remaining, reset} from the X-RateLimit-* headers, or null. */
    this.rateLimit = fields.rateLimit ?? null;
    /** Seconds of Retry-After, or null. */
    this.retryAfter = fields.retryAfter ?? null;
    /** The response headers (a Headers object), or null. */
    this.headers = fields.headers ?? null;
  }
}

/** 401: no key, an unknown, revoked or expired key. */
export class AuthenticationError extends MarketError {}
/** 403: the key lacks the scope the route needs. */
export class PermissionError extends MarketError {}
/** 404: no such resource (resource_missing) or route (route_not_found: a call of the
 * extension webhook-management on a server without it). */
export class NotFoundError extends MarketError {}
/** 400, 405, 408, 410, 413, 414, 415, 416 and other 4xx: the request is not acceptable. */
export class InvalidRequestError extends MarketError {}
/** 409: order_refunded, idempotency_conflict. Also an InvalidRequestError. */
export class ConflictError extends InvalidRequestError {}
/** 429: over the rate limit; retryAfter says when to come back. */
export class RateLimitError extends MarketError {}
/** 5xx: the service failed or is unavailable. */
export class ServerError extends MarketError {}
/** No answer: the connection failed, was dropped or timed out. status is null. */
export class ConnectionError extends MarketError {}

/** The MarketError subclass for an HTTP status. */
export function errorClassFor(status) {
  if (status === 401) return AuthenticationError;
  if (status === 403) return PermissionError;
  if (status === 404) return NotFoundError;
  if (status === 409) return ConflictError;
  if (status === 429) return RateLimitError;
  if (status >= 500 && status <= 599) return ServerError;
  if (status >= 400 && status <= 499) return InvalidRequestError;
  return MarketError;
}

/** A webhook delivery that must not be trusted. code says why (see README). */
export class WebhookVerificationError extends Error {
  constructor(message, code) {
    super(message);
    this.name = 'WebhookVerificationError';
    /** missing_header, invalid_timestamp, timestamp_too_old, timestamp_too_new,
     * no_matching_signature or invalid_payload */
    this.code = code;
  }
}
