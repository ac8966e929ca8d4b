// A JSON reader that keeps every number's text, so that money can be given to the caller
// exactly as the API wrote it ("19.99", never 19.990000000000002), and a converter that
// turns the API's snake_case objects into the client's camelCase values.
//
//   decode(text, schema)  parses text and converts it with schema (see convert below)

/** A JSON number as it appeared in the text. */
export class JsonNumber {
  constructor(raw) {
    this.raw = raw;
  }
}

const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const SPACE = /[ \t\n\r]*/y;

/** Sets a property even when its name is "__proto__" (JSON may carry that name). */
function put(obj, key, value) {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

/**
 * Parses JSON text (RFC 8259) like JSON.parse, except that numbers become JsonNumber
 * objects holding their text. Throws SyntaxError on malformed input.
 */
export function parseJson(text) {
  let i = 0;
  const fail = (what) => {
    throw new SyntaxError(`invalid JSON: ${what} at position ${i}`);
  };
  const space = () => {
    SPACE.lastIndex = i;
    SPACE.test(text);
    i = SPACE.lastIndex;
  };
  const match = (re) => {
    re.lastIndex = i;
    const m = re.exec(text);
    if (!m) return null;
    i = re.lastIndex;
    return m[0];
  };
  const literal = (word, value) => {
    if (text.startsWith(word, i)) {
      i += word.length;
      return value;
    }
    return fail('unexpected character');
  };
  // Depth is bounded by the call stack; the API's documents are shallow.
  const value = () => {
    space();
    const c = text[i];
    if (c === '{') {
      i++;
      const obj = {};
      space();
      if (text[i] === '}') {
        i++;
        return obj;
      }
      for (;;) {
        space();
        const k = match(STRING);
        if (k === null) fail('expected a string key');
        space();
        if (text[i] !== ':') fail("expected ':'");
        i++;
        put(obj, JSON.parse(k), value());
        space();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return obj;
        }
        fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const arr = [];
      space();
      if (text[i] === ']') {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value());
        space();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return arr;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') {
      const s = match(STRING);
      if (s === null) fail('bad string');
      return JSON.parse(s);
    }
    if (c === 't') return literal('true', true);
    if (c === 'f') return literal('false', false);
    if (c === 'n') return literal('null', null);
    const n = match(NUMBER);
    if (n === null) fail(c === undefined ? 'unexpected end' : 'unexpected character');
    return new JsonNumber(n);
  };
  const result = value();
  space();
  if (i !== text.length) fail('trailing characters');
  return result;
}

/** Schema marks. MONEY: a decimal string of the number's exact text. VERBATIM: an object
 * the API passes through from its writer (a licence): keys kept as they are. */
export const MONEY = Symbol('money');
export const VERBATIM = Symbol('verbatim');

/** "next_cursor" -> "nextCursor" */
export const camelCase = (key) => key.replace(/(?<=[a-z0-9])_([a-z0-9])/g, (_, c) => c.toUpperCase());

/**
 * Converts a parsed document (numbers as JsonNumber) to the client's values:
 * object keys in camelCase, numbers as JS numbers, except where schema says otherwise:
 *   MONEY            the number's text as a string ("19.99"); null stays null
 *   VERBATIM         keys kept as they are (numbers still become JS numbers)
 *   [schema]         an array whose elements follow schema
 *   {key: schema}    an object; key is the API's (snake_case) name
 * Fields the schema does not name are converted generically, so fields a newer server adds
 * still come through.
 */
export function convert(node, schema, keepKeys = false) {
  if (node instanceof JsonNumber) return schema === MONEY ? node.raw : Number(node.raw);
  if (node === null || typeof node !== 'object') return node;
  if (Array.isArray(node)) {
    const item = Array.isArray(schema) ? schema[0] : undefined;
    return node.map((v) => convert(v, item, keepKeys));
  }
  const verbatim = keepKeys || schema === VERBATIM;
  const fields = schema && typeof schema === 'object' && !Array.isArray(schema) ? schema : {};
  const out = {};
  for (const key of Object.keys(node)) {
    const sub = Object.hasOwn(fields, key) ? fields[key] : undefined;
    put(out, verbatim ? key : camelCase(key), convert(node[key], verbatim ? undefined : sub, verbatim));
  }
  return out;
}

/** parseJson then convert. */
export function decode(text, schema) {
  return convert(parseJson(text), schema);
}

// Schemas of the API's objects (docs/api.md), by the API's field names.
const page = (item) => ({ data: [item] });
export const PRODUCT_ITEM = { price: MONEY };
export const PRODUCT_PAGE = page(PRODUCT_ITEM);
export const TIER = { price: MONEY, licence: VERBATIM };
export const PRODUCT = { price: MONEY, tiers: [TIER] };
export const SELLER = { products: PRODUCT_PAGE };
export const ORDER = { total: MONEY, items: [{ price: MONEY }] };
export const ORDER_PAGE = page(ORDER);
export const DOWNLOAD_LINK = {};
export const WEBHOOK_SUBSCRIPTION = {};
export const WEBHOOK_SUBSCRIPTION_PAGE = page(WEBHOOK_SUBSCRIPTION);
export const DELETED = {};
// An event, as verifyWebhook, the events calls and webhooks.test read it: amount (of the
// sale and payout kinds) exact; any other field, and the data of a type this client does
// not know, converted generically.
export const EVENT = { data: { amount: MONEY } };
export const EVENT_PAGE = page(EVENT);
// An event with its deliveries: {subscription, status, attempts, last_attempt_at,
// last_status, last_error}, nulls kept.
export const EVENT_WITH_DELIVERIES = { ...EVENT, deliveries: [{}] };
