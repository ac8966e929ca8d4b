// The JavaScript driver of the conformance suite: node js.mjs <baseUrl> <call> <id> <apiKey>
// Makes one call with the client (2 retries, 500 ms timeout) and prints one JSON line:
// {ok, error: {kind, status, timeout} | null, hook: [...]}.
import { Market, ConnectionError, MarketError } from '../../js/index.js';

const [baseUrl, call, id, apiKey] = process.argv.slice(2);
const hook = [];
const market = new Market({
  apiKey,
  baseUrl,
  maxRetries: 2,
  timeout: 500,
  onResponse: (i) => hook.push({
    method: i.method, path: i.path, status: i.status, error: i.error, duration_ms: i.durationMs, request_id: i.requestId, attempt: i.attempt,
  }),
});
let out;
try {
  if (call === 'get') await market.products.get(id);
  else if (call === 'list') await market.products.list({ category: id, limit: 2 });
  else if (call === 'post') await market.downloads.createLink(id);
  else if (call === 'delete') await market.webhooks.delete(id);
  else throw new Error(`unknown call ${call}`);
  out = { ok: true, error: null };
} catch (e) {
  if (!(e instanceof MarketError)) throw e;
  const connection = e instanceof ConnectionError;
  out = {
    ok: false,
    error: {
      kind: connection ? 'connection' : 'api', status: e.status ?? null, timeout: connection && /within/.test(e.message), class: e.constructor.name,
    },
  };
}
console.log(JSON.stringify({ ...out, hook }));
