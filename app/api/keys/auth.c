/* auth: the key check of every request that needs one (docs/contract.md sections 2 and 3):
 * the header's form, the key's row and its rate window, taken from the host's memory
 * (app/api/keys/key_budget.h) or from PostgreSQL in one statement, and the windows the hosts share.
 * What each fact means for the request is auth_rules.c's; this file gathers the facts
 * and writes the answers. */
#include "auth.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "auth_rules.h"
#include "clock.h"
#include "crypto.h"
#include "log.h"
#include "ops.h"

/* Rate counters (docs/contract.md section 3) are counted by hosts in blocks
 * (sql/migrations/016_host_budgets.sql): what one take grants. A window that one host
 * alone holds grants it the block it asks for ($4); a shared window grants one request;
 * never past the limit ($2). */
#define GRANT                                                                                      \
    "least(CASE WHEN r.holder = excluded.holder AND NOT r.shared THEN excluded.last_grant"         \
    " ELSE 1 END, $2::integer - r.count)"

/* Looks the key up by its hash and, only if it is usable and $3 is true, takes requests
 * of the current one-minute window for this host ($5): at most $4, this request's
 * included. The counter only moves while under the limit, so a rejected request does
 * not count, and the row lock of the upsert serialises every worker on every host: a
 * burst gets exactly `limit` successes. With $3 false (a request refused for the key's
 * requests in flight, which must not count) nothing is written. When nothing was taken,
 * the window's row as it stands (s) tells whether a refusal must wait for another host
 * to give back what it holds. */
DB_STMT(auth_take,
        "WITH k AS ("
        "  SELECT id, account_id, mode, access,"
        "         revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()) AS usable,"
        "         revoked_at IS NOT NULL AS revoked,"
        "         coalesce((extract(epoch FROM expires_at) * 1000)::bigint, 0) AS expires_ms"
        "    FROM api_keys WHERE key_hash = decode($1, 'hex')),"
        " w AS (SELECT floor(extract(epoch FROM now()) / 60)::bigint AS win,"
        "              60 - floor(extract(epoch FROM now()))::bigint % 60 AS reset),"
        " c AS ("
        "  INSERT INTO rate_counters AS r (key_id, window_start, count, holder, last_grant, lent)"
        "  SELECT k.id, w.win, least($4::integer, $2::integer), $5::bigint,"
        "         least($4::integer, $2::integer), (least($4::integer, $2::integer) > 1)::integer"
        "    FROM k, w WHERE k.usable AND $3::boolean"
        "  ON CONFLICT (key_id, window_start) DO UPDATE SET"
        "   count = r.count + " GRANT ","
        "   last_grant = " GRANT ","
        "   lent = r.lent + (" GRANT " > 1)::integer,"
        "   shared = r.shared OR r.holder <> excluded.holder"
        "   WHERE r.count < $2::integer"
        "  RETURNING count, last_grant, shared, incarnation)"
        "SELECT k.id, k.account_id, k.mode, k.access, k.usable, k.revoked, w.reset, w.win,"
        "       k.expires_ms, c.count, c.last_grant, c.shared, s.count, s.shared, s.lent,"
        "       coalesce(c.incarnation, s.incarnation, 0)"
        "  FROM k CROSS JOIN w LEFT JOIN c ON true"
        "  LEFT JOIN LATERAL (SELECT r.count, r.shared, r.lent, r.incarnation FROM rate_counters r"
        "    WHERE c.count IS NULL AND r.key_id = k.id AND r.window_start = w.win) s ON true",
        5);

/* The columns of auth_take. */
enum {
    C_KEY_ID,
    C_ACCOUNT,
    C_MODE,
    C_ACCESS,
    C_USABLE,
    C_REVOKED,
    C_RESET,
    C_WINDOW,
    C_EXPIRES_MS,
    C_COUNT,   /* the window's count after the take; NULL: nothing taken */
    C_GRANTED, /* requests taken, this one included */
    C_SHARED,  /* the window is shared (after the take) */
    C_SEEN,    /* when nothing was taken: the window's count, shared and lent */
    C_SEEN_SHARED,
    C_SEEN_LENT,
    C_INCARNATION, /* of the window's row (0: none) */
};

/* What a host gives back of a window it no longer holds alone: its unused requests and
 * the blocks they came from. */
DB_STMT(give_back,
        "UPDATE rate_counters SET count = greatest(count - $3::integer, 0),"
        "       lent = greatest(lent - $4::integer, 0)"
        " WHERE key_id = $1::bigint AND window_start = $2::bigint",
        4);

/* The windows this host ($2) took blocks of that became shared (a notification). */
DB_STMT(shared_windows,
        "SELECT key_id, window_start FROM rate_counters"
        " WHERE window_start >= $1::bigint - 1 AND holder = $2::bigint AND shared AND lent > 0",
        2);

/* A holder that did not give back in time (its host is gone): its blocks are written off,
 * used or not, so that later refusals need not wait for it. */
DB_STMT(write_off,
        "UPDATE rate_counters SET lent = 0"
        " WHERE key_id = $1::bigint AND window_start = $2::bigint AND lent = $3::integer",
        3);

/* A refusal in a shared window waits this long in all for its holder to give back. */
static const int give_back_waits_ms[] = {2, 5, 10, 20, 40, 80, 150};
#define GIVE_BACK_TRIES ((int)(sizeof give_back_waits_ms / sizeof give_back_waits_ms[0]))

DB_STMT(prune_windows,
        "DELETE FROM rate_counters WHERE window_start < floor(extract(epoch FROM now()) / 60) - 1",
        0);

/* Answers a 401 verdict (auth_rules.h), with the header that says how to authenticate. */
static bool unauthorized(request *r, auth_verdict verdict)
{
    const auth_refusal *refusal = auth_refusal_of(verdict);
    response_header(r, "WWW-Authenticate",
                    refusal->presented ? "Bearer realm=\"market\", error=\"invalid_token\""
                                       : "Bearer realm=\"market\"");
    return respond_error(r, refusal->status, refusal->type, refusal->code, NULL, "%s",
                         refusal->message);
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

#define AUTH_CHANNEL "market_auth"

/* Returns a window's unused requests to PostgreSQL; a failure is logged (the requests are
 * then lost to the window: its later requests may be refused early, never served past
 * the limit). */
static void give_back_window(worker *w, const char *key_id, const char *window, long unused,
                             long blocks)
{
    db_arg unused_arg, blocks_arg;
    const char *params[] = {key_id, window, db_arg_int(&unused_arg, unused),
                            db_arg_int(&blocks_arg, blocks)};
    db_result *res = db_exec(w->db, &give_back, params);
    if (res == NULL || !db_ok(res))
        log_error("giving back %ld requests of key %s's window %s failed: %s", unused, key_id,
                  window, res != NULL ? db_message(res) : "no connection");
    if (res != NULL)
        db_clear(res);
}

/* Writes off the blocks of a holder that did not give them back in time. */
static void write_off_window(worker *w, const char *key_id, const char *window, long lent)
{
    db_arg lent_arg;
    const char *params[] = {key_id, window, db_arg_int(&lent_arg, lent)};
    log_error("key %s's window %s: %ld blocks of another host were not given back in time;"
              " written off",
              key_id, window, lent);
    db_result *res = db_exec(w->db, &write_off, params);
    if (res != NULL)
        db_clear(res);
}

void auth_init(worker *w)
{
    db_listen(w->db, AUTH_CHANNEL);
}

bool auth_hear(worker *w)
{
    if (!db_consume(w->db))
        return false;
    if (!db_notified(w->db, AUTH_CHANNEL))
        return true;
    key_budget_invalidate(w->keys);
    /* Of the windows shared meanwhile, those this host took blocks of: give them back. */
    db_arg window, host;
    const char *params[] = {db_arg_int(&window, time(NULL) / 60),
                            db_arg_int(&host, (long long)key_budget_host(w->keys))};
    db_result *res = db_exec(w->db, &shared_windows, params);
    if (res == NULL)
        return false;
    for (int i = 0; db_ok(res) && i < db_rows(res); i++) {
        long unused, blocks;
        if (key_budget_settle(w->keys, db_int(res, i, 0), db_int(res, i, 1), &unused, &blocks))
            give_back_window(w, db_text(res, i, 0), db_text(res, i, 1), unused, blocks);
    }
    db_clear(res);
    return true;
}

bool auth_begin(request *r, auth_query *q)
{
    q->memory = KB_ASK;
    const char *key;
    auth_verdict form = auth_header_verdict(r->authorization, &key);
    if (form != AUTH_ACCEPTED)
        return unauthorized(r, form);

    worker *w = r->w;
    crypto_sha256(key, strlen(key), q->hash);
    hex_write(q->hash_hex, q->hash, sizeof q->hash);
    /* Taken on before the key is checked, so that two requests of one key see each
     * other; a key that turns out unknown is answered 401 all the same (auth_finish). */
    r->over_in_flight = !ops_key_enter(q->hash, w->cfg.key_inflight);
    /* The prefix names the mode; auth_finish checks that the key's row agrees. */
    r->caller.mode = auth_prefix_mode(key);

    /* The host's memory answers while the connection that would tell of a changed key is
     * up; else the database does (and says 503 when it cannot). */
    memset(&q->answer, 0, sizeof q->answer);
    q->answer.want = 1;
    bool heard = auth_hear(w);
    q->generation = key_budget_generation(w->keys); /* before the statement reads the row */
    long long now_ms = clock_ms_real();
    int64_t window = now_ms / 60000; /* floor(Unix seconds / 60) on this host's clock */
    if (heard)
        q->memory = key_budget_take(w->keys, q->hash, window, w->cfg.rate_limit, now_ms,
                                    !r->over_in_flight, &q->answer);

    q->params[0] = q->hash_hex;
    q->params[1] = db_arg_int(&q->limit, w->cfg.rate_limit);
    q->params[2] = db_arg_bool(!r->over_in_flight); /* counted */
    q->params[3] = db_arg_int(&q->want, q->answer.want);
    q->params[4] = db_arg_int(&q->host, (long long)key_budget_host(w->keys));
    return true;
}

db_stmt *auth_statement(void)
{
    return &auth_take;
}

/* The request's caller from a key row. */
static void set_caller(request *r, const key_row *row)
{
    r->caller.key_id = arena_printf(r->arena, "%lld", (long long)row->key_id);
    r->caller.account_id = arena_strdup(r->arena, row->account_id);
    r->caller.read_write = row->read_write;
}

/* The rate headers and, over the limit or the key's requests in flight, the 429. */
static bool rate_answer(request *r, bool admitted, long remaining)
{
    r->rate_known = true;
    r->rate_limit = r->w->cfg.rate_limit;
    r->rate_remaining = remaining;
    r->rate_reset = 60 - (clock_ms_real() / 1000) % 60;
    set_rate_headers(r);
    auth_verdict verdict = auth_rate_verdict(r->over_in_flight, admitted);
    if (verdict == AUTH_ACCEPTED)
        return true;
    const auth_refusal *refusal = auth_refusal_of(verdict);
    if (verdict == AUTH_TOO_MANY_IN_FLIGHT) {
        response_header(r, "Retry-After", "1");
        return respond_error(r, refusal->status, refusal->type, refusal->code, NULL,
                             "this API key already has %ld requests in progress on this host;"
                             " retry in 1 s",
                             r->w->cfg.key_inflight);
    }
    char retry[24];
    snprintf(retry, sizeof retry, "%ld", r->rate_reset);
    response_header(r, "Retry-After", retry);
    return respond_error(r, refusal->status, refusal->type, refusal->code, NULL,
                         "over %ld requests in this minute; retry in %ld s", r->rate_limit,
                         r->rate_reset);
}

/* The key's row as the statement read it; false (answered 401) when it is not usable. */
static bool read_key_row(request *r, db_result *res, key_row *row)
{
    memset(row, 0, sizeof *row);
    bool found = db_rows(res) > 0;
    const auth_key_row seen = {
        .found = found,
        .usable = found && db_bool(res, 0, C_USABLE),
        .revoked = found && db_bool(res, 0, C_REVOKED),
        .mode = found ? db_text(res, 0, C_MODE) : "",
    };
    auth_verdict verdict = auth_row_verdict(&seen, r->caller.mode);
    if (verdict != AUTH_ACCEPTED)
        return unauthorized(r, verdict);
    row->key_id = db_int(res, 0, C_KEY_ID);
    snprintf(row->account_id, sizeof row->account_id, "%s", db_text(res, 0, C_ACCOUNT));
    row->live = strcmp(db_text(res, 0, C_MODE), "live") == 0;
    row->read_write = strcmp(db_text(res, 0, C_ACCESS), "read-write") == 0;
    row->expires_ms = db_int(res, 0, C_EXPIRES_MS);
    return true;
}

bool auth_finish(request *r, auth_query *q, db_result *res)
{
    if (q->memory == KB_ADMIT) { /* the host's memory answered */
        set_caller(r, &q->answer.row);
        return rate_answer(r, true, q->answer.remaining);
    }
    worker *w = r->w;
    long limit = w->cfg.rate_limit;
    bool counted = !r->over_in_flight;
    for (int attempt = 0;; attempt++) {
        key_row row;
        if (!read_key_row(r, res, &row))
            return false;
        /* An account id too long to keep: the host keeps no row of the key, and every
         * request of it asks the database. */
        uint64_t generation = strlen(db_text(res, 0, C_ACCOUNT)) < sizeof row.account_id
                                  ? q->generation
                                  : KEY_BUDGET_NEVER;
        bool taken = !db_null(res, 0, C_COUNT);
        long granted = taken ? (long)db_int(res, 0, C_GRANTED) : 0;
        long count = taken ? (long)db_int(res, 0, C_COUNT)
                           : (db_null(res, 0, C_SEEN) ? 0 : (long)db_int(res, 0, C_SEEN));
        bool shared = taken ? db_bool(res, 0, C_SHARED)
                            : !db_null(res, 0, C_SEEN_SHARED) && db_bool(res, 0, C_SEEN_SHARED);
        long lent = taken || db_null(res, 0, C_SEEN_LENT) ? 0 : (long)db_int(res, 0, C_SEEN_LENT);
        int64_t window = db_int(res, 0, C_WINDOW);
        kb_stored stored =
            key_budget_store(w->keys, q->hash, generation, &row, window,
                             db_int(res, 0, C_INCARNATION), limit, counted, granted, count, shared);
        if (stored.give_back > 0 || stored.blocks > 0)
            give_back_window(w, db_text(res, 0, C_KEY_ID), db_text(res, 0, C_WINDOW),
                             stored.give_back, stored.blocks);
        set_caller(r, &row);
        if (stored.verdict == KB_ADMIT || !counted || !shared)
            return rate_answer(r, stored.verdict == KB_ADMIT, stored.remaining);

        /* Refused in a shared window. Another host may still hold blocks of it: it was
         * notified (016_host_budgets.sql) and gives them back within milliseconds, so
         * wait for that, so that the limit's every request can still be served. When
         * this host gave its own back just now, ask again at once. */
        lent -= stored.blocks;
        bool gave_back = stored.blocks > 0 || stored.give_back > 0;
        if (lent > 0 && attempt >= GIVE_BACK_TRIES) {
            write_off_window(w, db_text(res, 0, C_KEY_ID), db_text(res, 0, C_WINDOW), lent);
            lent = 0;
        }
        if (lent <= 0 && (!gave_back || attempt >= GIVE_BACK_TRIES))
            return rate_answer(r, false, 0); /* no host holds any of the window */
        if (lent > 0) {
            struct timespec pause = {0, give_back_waits_ms[attempt] * 1000000L};
            nanosleep(&pause, NULL);
        }
        q->params[3] = db_arg_int(&q->want, 1);
        res = request_query(r, &auth_take, q->params);
        if (res == NULL)
            return false;
    }
}

bool auth_has_scope(const request *r, const char *scope)
{
    if (r->caller.read_write)
        return true;
    return strcmp(scope, "products:read") == 0 || strcmp(scope, "orders:read") == 0;
}

bool auth_require_scope(request *r, const char *scope)
{
    if (auth_has_scope(r, scope))
        return true;
    respond_error(r, 403, "permission_error", "insufficient_scope", NULL,
                  "this API key lacks the scope %s", scope);
    return false;
}

void auth_prune_windows(worker *w)
{
    db_result *res = db_exec(w->db, &prune_windows, NULL);
    if (res != NULL)
        db_clear(res);
}
