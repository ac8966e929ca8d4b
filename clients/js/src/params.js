// Encoding of the caller's parameters into the API's query strings, paths and bodies.

/** "minPrice" -> "min_price" (names already in snake_case stay as they are). */
export const snakeCase = (name) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * A Date as the API's date-time parameters take it: RFC 3339 in UTC, with the
 * milliseconds only when they are not zero ("2026-11-26T10:04:05Z",
 * "2026-11-26T10:04:05.250Z"). An invalid Date is a TypeError.
 */
export function dateTime(name, date) {
  if (!Number.isFinite(date.getTime())) throw new TypeError(`${name} is an invalid Date`);
  return date.toISOString().replace(/\.000Z$/, 'Z');
}

/** One scalar parameter value as text; undefined for undefined and null (left out). A
 * Date becomes an RFC 3339 date-time (dateTime); a string is sent as it is. */
function scalar(name, value) {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (value instanceof Date) return dateTime(name, value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`${name} must be a finite number`);
    return String(value);
  }
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  throw new TypeError(`${name} must be a string, a number or a Date, not ${Array.isArray(value) ? 'an array' : typeof value}`);
}

/**
 * The query string ("?a=1&b=2", or "" when empty) of a parameters object: names from
 * camelCase to the API's snake_case, undefined and null values left out, numbers written
 * as JavaScript writes them (19.99 -> "19.99"; pass a string for an exact decimal), Dates
 * as RFC 3339 UTC date-times.
 */
export function encodeQuery(params) {
  if (params === undefined || params === null) return '';
  if (typeof params !== 'object' || Array.isArray(params)) throw new TypeError('parameters must be an object');
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    const text = scalar(name, value);
    if (text !== undefined) q.append(snakeCase(name), text);
  }
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

/** A path identifier, percent-encoded; it must be a non-empty string. */
export function pathId(what, id) {
  if (typeof id !== 'string' || id === '') throw new TypeError(`${what} must be a non-empty string`);
  return encodeURIComponent(id);
}

/**
 * A JSON body from the caller's fields: names to snake_case, undefined values left out.
 * Returns undefined when no field is left.
 */
export function encodeBody(fields) {
  const out = {};
  let any = false;
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    out[snakeCase(name)] = value;
    any = true;
  }
  return any ? out : undefined;
}

/** The idempotencyKey of options that may hold nothing else (calls without a body). */
export function onlyIdempotencyKey(call, options) {
  const [key, rest] = takeIdempotencyKey(options);
  const other = Object.keys(rest).filter((k) => rest[k] !== undefined);
  if (other.length > 0) throw new TypeError(`${call} takes only idempotencyKey, not ${other.join(', ')}`);
  return key;
}

/** Splits idempotencyKey off the caller's options: [key or undefined, other fields]. */
export function takeIdempotencyKey(options) {
  if (options === undefined || options === null) return [undefined, {}];
  if (typeof options !== 'object' || Array.isArray(options)) throw new TypeError('options must be an object');
  const { idempotencyKey, ...rest } = options;
  if (idempotencyKey !== undefined && idempotencyKey !== null && (typeof idempotencyKey !== 'string' || idempotencyKey === '')) {
    throw new TypeError('idempotencyKey must be a non-empty string');
  }
  return [idempotencyKey ?? undefined, rest];
}
