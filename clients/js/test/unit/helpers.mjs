// A fake fetch for the unit tests: answers from a script and records every request.
export const KEY = 'sk_test_UnitTestKeyUnitTestKeyUnitTestKey0123';

/**
 * script: an array of answers, one per request, each {status, body, headers} or an Error
 * (thrown as a network failure) or a function (url, init) -> one of those.
 */
export function fakeFetch(script) {
  const calls = [];
  const fn = async (url, init = {}) => {
    calls.push({ url, method: init.method ?? 'GET', headers: { ...init.headers }, body: init.body });
    if (calls.length > script.length) throw new Error(`unexpected request ${calls.length}: ${init.method} ${url}`);
    let a = script[calls.length - 1];
    if (typeof a === 'function') a = a(url, init);
    if (a instanceof Error) throw a;
    const body = typeof a.body === 'string' ? a.body : JSON.stringify(a.body ?? {});
    return new Response(a.status === 204 ? null : body, {
      status: a.status ?? 200,
      headers: { 'content-type': 'application/json; charset=utf-8', ...(a.headers ?? {}) },
    });
  };
  fn.calls = calls;
  return fn;
}

/** A sleep that returns at once and records the waits. */
export function fakeSleep() {
  const waits = [];
  const fn = async (ms) => {
    waits.push(ms);
  };
  fn.waits = waits;
  return fn;
}

export const errorBody = (type, code, message = 'm', param = undefined) => ({
  error: { type, code, message, ...(param ? { param } : {}), request_id: 'req_1' },
});

/** A network failure as undici's fetch reports it. */
export function networkError() {
  const e = new TypeError('fetch failed');
  e.cause = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
  return e;
}
