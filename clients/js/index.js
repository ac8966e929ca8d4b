// market: the JavaScript client of the market API. See README.md.
export { Market, VERSION } from './src/client.js';
export {
  MarketError, AuthenticationError, PermissionError, NotFoundError, InvalidRequestError,
  ConflictError, RateLimitError, ServerError, ConnectionError, WebhookVerificationError,
} from './src/errors.js';
export { verifyWebhook } from './src/webhook.js';
