#include "auth.h"

#include <stdio.h>
#include <string.h>

#include "crypto.h"
#include "ops.h"
#include "text.h"

#define KEY_MIN_RANDOM 32
#define KEY_MAX_LEN 200

/* Looks the key up by its hash and, only if it is usable and $3 is true, counts this
 * request in the current one-minute window. The counter only moves while under the
 * limit, so a rejected request does not count, and the row lock of the upsert serialises
 * every worker on every host: a burst gets exactly `limit` successes. count is NULL when
 * over the limit. With $3 false (a request refused for the key's requests in flight,
 * which must not count) nothing is written, and `seen` is the window's count so far. */
DB_STMT(auth_and_count,
        "WITH k AS ("
        "  SELECT id, account_id, mode, access,"
        "         revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()) AS usable,"
        "         revoked_at IS NOT NULL AS revoked"
        "    FROM api_keys WHERE key_hash = decode($1, 'hex')),"
        " w AS (SELECT floor(extract(epoch FROM now()) / 60)::bigint AS win,"
        "              60 - floor(extract(epoch FROM now()))::bigint % 60 AS reset),"
        " c AS ("
        "  INSERT INTO rate_counters (key_id, window_start, count)"
        "  SELECT k.id, w.win, 1 FROM k, w WHERE k.usable AND $3::boolean"
        "  ON CONFLICT (key_id, window_start) DO UPDATE SET count = rate_counters.count + 1"
        "   WHERE rate_counters.count < $2::integer"
        "  RETURNING count)"
        "SELECT k.id, k.account_id, k.mode, k.access, k.usable, k.revoked,"
        "       (SELECT count FROM c), w.reset,"
        "       CASE WHEN NOT $3::boolean THEN (SELECT r.count FROM rate_counters r"
        "         WHERE r.key_id = k.id AND r.window_start = w.win) END"
        "  FROM k, w",
        3);

/* The columns of auth_and_count. */
enum { C_KEY_ID, C_ACCOUNT, C_MODE, C_ACCESS, C_USABLE, C_REVOKED, C_COUNT, C_RESET, C_SEEN };

DB_STMT(prune_windows,
        "DELETE FROM rate_counters WHERE window_start < floor(extract(epoch FROM now()) / 60) - 1",
        0);

static bool unauthorized(request *r, const char *code, const char *message, bool presented)
{
    response_header(r, "WWW-Authenticate",
                    presented ? "Bearer realm=\"market\", error=\"invalid_token\""
                              : "Bearer realm=\"market\"");
    return respond_error(r, 401, "authentication_error", code, NULL, "%s", message);
}

/* Checks the key's shape before any database work: a prefix and enough random letters. */
static bool key_well_formed(const char *key)
{
    const char *rest;
    if (strncmp(key, "sk_live_", 8) == 0 || strncmp(key, "sk_test_", 8) == 0)
        rest = key + 8;
    else
        return false;
    size_t n = strlen(rest);
    return n >= KEY_MIN_RANDOM && n <= KEY_MAX_LEN && token_valid(rest, KEY_MAX_LEN, NULL);
}

static void set_rate_headers(request *r)
{
    char text[32];
    snprintf(text, sizeof text, "%ld", r->rate_limit);
    response_header(r, "X-RateLimit-Limit", text);
    snprintf(text, sizeof text, "%ld", r->rate_remaining);
    response_header(r, "X-RateLimit-Remaining", text);
    snprintf(text, sizeof text, "%ld", r->rate_reset);
    response_header(r, "X-RateLimit-Reset", text);
}

bool auth_begin(request *r, auth_query *q)
{
    const char *h = r->authorization;
    if (h == NULL || *h == '\0')
        return unauthorized(r, "missing_api_key", "no API key: send Authorization: Bearer <key>",
                            false);
    if (strncasecmp(h, "Bearer ", 7) != 0)
        return unauthorized(r, "invalid_api_key",
                            "the Authorization header must use the Bearer scheme", true);
    const char *key = h + 7;
    while (*key == ' ')
        key++;
    if (!key_well_formed(key))
        return unauthorized(r, "invalid_api_key", "the API key is not valid", true);

    uint8_t hash[SHA256_LEN];
    crypto_sha256(key, strlen(key), hash);
    hex_write(q->hash_hex, hash, sizeof hash);
    snprintf(q->limit, sizeof q->limit, "%ld", r->w->cfg.rate_limit);
    /* Taken on before the key is checked, so that two requests of one key see each
     * other; a key that turns out unknown is answered 401 all the same (auth_finish). */
    r->over_in_flight = !ops_key_enter(hash, r->w->cfg.key_inflight);
    q->params[0] = q->hash_hex;
    q->params[1] = q->limit;
    q->params[2] = r->over_in_flight ? "false" : "true";
    /* The prefix names the mode; auth_finish checks that the key's row agrees. */
    r->caller.mode = key[3] == 'l' ? "live" : "test";
    return true;
}

db_stmt *auth_statement(void)
{
    return &auth_and_count;
}

bool auth_finish(request *r, PGresult *res)
{
    if (db_rows(res) == 0)
        return unauthorized(r, "invalid_api_key", "the API key is not valid", true);
    if (db_text(res, 0, C_USABLE)[0] != 't') {
        if (db_text(res, 0, C_REVOKED)[0] == 't')
            return unauthorized(r, "invalid_api_key", "the API key was revoked", true);
        return unauthorized(r, "api_key_expired",
                            "the API key expired after its rotation; use the new key", true);
    }

    /* Key and mode must agree; a mismatch would be a corrupt row, not a client error. */
    if (strcmp(r->caller.mode, db_text(res, 0, C_MODE)) != 0)
        return unauthorized(r, "invalid_api_key", "the API key is not valid", true);

    r->caller.key_id = db_text(res, 0, C_KEY_ID);
    r->caller.account_id = db_text(res, 0, C_ACCOUNT);
    r->caller.read_write = strcmp(db_text(res, 0, C_ACCESS), "read-write") == 0;
    r->rate_known = true;
    r->rate_limit = r->w->cfg.rate_limit;
    r->rate_reset = db_int(res, 0, C_RESET);
    if (r->rate_reset < 1)
        r->rate_reset = 1;

    if (r->over_in_flight) { /* docs/contract.md section 3, "In flight": not counted */
        long seen = (long)db_int(res, 0, C_SEEN);
        r->rate_remaining = seen >= r->rate_limit ? 0 : r->rate_limit - seen;
        set_rate_headers(r);
        response_header(r, "Retry-After", "1");
        return respond_error(r, 429, "rate_limit_error", "too_many_in_flight", NULL,
                             "this API key already has %ld requests in progress on this host;"
                             " retry in 1 s",
                             r->w->cfg.key_inflight);
    }

    if (db_null(res, 0, C_COUNT)) {
        r->rate_remaining = 0;
        set_rate_headers(r);
        char retry[24];
        snprintf(retry, sizeof retry, "%ld", r->rate_reset);
        response_header(r, "Retry-After", retry);
        return respond_error(r, 429, "rate_limit_error", "rate_limited", NULL,
                             "over %ld requests in this minute; retry in %ld s", r->rate_limit,
                             r->rate_reset);
    }
    long count = (long)db_int(res, 0, C_COUNT);
    r->rate_remaining = count >= r->rate_limit ? 0 : r->rate_limit - count;
    set_rate_headers(r);
    return true;
}

bool auth_check(request *r)
{
    auth_query q;
    if (!auth_begin(r, &q))
        return false;
    PGresult *res = request_query(r, &auth_and_count, q.params);
    return res != NULL && auth_finish(r, res);
}

bool auth_has_scope(const request *r, const char *scope)
{
    if (r->caller.read_write)
        return true;
    return strcmp(scope, "products:read") == 0 || strcmp(scope, "orders:read") == 0;
}

void auth_prune_windows(worker *w)
{
    PGresult *res = db_exec(w->db, &prune_windows, NULL);
    if (res != NULL)
        db_clear(res);
}
