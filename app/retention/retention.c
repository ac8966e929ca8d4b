/* retention: the pruning pass as steps the drainer's loop drives, so that pruning never
 * makes the drainer wait: one statement in flight at a time, on a connection of its own,
 * its answer taken when the socket has it. The order of the steps and the pass's figures
 * are prune_pass.c's; the statements and the lock are here. */
#include "retention.h"
#include "db_async.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "db.h"
#include "idem_window.h"
#include "log.h"
#include "mem.h"
#include "prune_pass.h"

/* Any constant works; it only has to be the same for every drainer (and differ from
 * market-admin migrate's). */
#define RETENTION_LOCK "7013620266"
#define CONNECT_POLL_MS 50 /* how often a connection being opened is looked at */
/* Passes further apart than this (MARKET_RETENTION above 10 minutes: a minute apart by
 * default) each open a connection and close it when they end, so that an idle drainer
 * holds one connection, its LISTEN (docs/operations.md, "Idle sites"). A pass pays for it
 * with a connect and its statements' preparing, a few milliseconds a minute. */
#define KEEP_BETWEEN_PASSES_MS 10000

/* The statements' own limits: a batch takes milliseconds. A batch that waits for a lock
 * longer than lock_timeout fails and the next pass tries again, rather than holding up
 * whoever waits behind it. A batch lost in a database crash is simply done again. */
#define SESSION_SQL                                                                                \
    "SET synchronous_commit = off; SET statement_timeout = '30s'; SET lock_timeout = '2s'"

DB_STMT(retention_lock, "SELECT pg_try_advisory_lock(" RETENTION_LOCK ")", 0);
DB_STMT(retention_unlock, "SELECT pg_advisory_unlock(" RETENTION_LOCK ")", 0);

/* See retention_prune_events in sql/migrations/008_retention.sql. */
DB_STMT(retention_events,
        "SELECT batch, events, deliveries, attempts"
        "  FROM retention_prune_events(now() - $1::bigint * interval '1 second', $2::integer)",
        2);
enum { EV_BATCH, EV_EVENTS, EV_DELIVERIES, EV_ATTEMPTS }; /* its columns */

/* Oldest first, through download_tokens_expires. SKIP LOCKED: a refund revoking the same
 * links is not waited for (its rows come next time), and never waits for us long. */
DB_STMT(retention_tokens,
        "DELETE FROM download_tokens WHERE id = ANY (ARRAY("
        "  SELECT id FROM download_tokens"
        "   WHERE expires_at < now() - $1::bigint * interval '1 second'"
        "   ORDER BY expires_at LIMIT $2::integer FOR UPDATE SKIP LOCKED))",
        2);

/* A dead key goes once no key still in use (working, or waiting out its grace) names it
 * as its replacement: market-admin key rotate reads replaced_by to refuse rotating a key
 * twice. Dead keys that name it go too, sooner or later; the foreign key then sets their
 * replaced_by to NULL (008). Through api_keys_dead and api_keys_replaced_by. */
DB_STMT(retention_keys,
        "DELETE FROM api_keys WHERE id = ANY (ARRAY("
        "  SELECT k.id FROM api_keys k"
        "   WHERE (k.expires_at IS NOT NULL OR k.revoked_at IS NOT NULL)"
        "     AND least(k.expires_at, k.revoked_at) < now() - $1::bigint * interval '1 second'"
        "     AND NOT EXISTS (SELECT 1 FROM api_keys o WHERE o.replaced_by = k.id"
        "           AND coalesce(least(o.expires_at, o.revoked_at)"
        "                        >= now() - $1::bigint * interval '1 second', true))"
        "   ORDER BY least(k.expires_at, k.revoked_at) LIMIT $2::integer"
        "     FOR UPDATE OF k SKIP LOCKED))",
        2);

/* The window of the contract, not MARKET_RETENTION: an older record is never replayed
 * (market-api claims the key afresh). A worker claiming a key whose old row is being
 * deleted waits for this one short statement. */
DB_STMT(retention_idempotency,
        "DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY("
        "  SELECT ctid FROM idempotency_keys WHERE created_at <= now() - " IDEM_WINDOW_SQL
        "   ORDER BY created_at LIMIT $1::integer FOR UPDATE SKIP LOCKED))",
        1);

/* The pass's totals. */
DB_STMT(retention_record,
        "INSERT INTO retention_totals AS t (relation, pruned, last_pass_at)"
        " SELECT u.relation, u.pruned, now()"
        "   FROM unnest($1::text[], $2::bigint[]) AS u (relation, pruned)"
        " ON CONFLICT (relation) DO UPDATE"
        "   SET pruned = t.pruned + EXCLUDED.pruned, last_pass_at = EXCLUDED.last_pass_at",
        2);

typedef enum {
    R_IDLE,       /* until due_ms: the next pass */
    R_CONNECTING, /* a connection is being opened; looked at again at due_ms */
    R_BUSY,       /* a statement is in flight: its answer comes on the socket */
    R_PAUSED      /* between two batches, until due_ms */
} phase;

typedef enum { Q_LOCK, Q_BATCH, Q_RECORD, Q_UNLOCK } query;

struct retention {
    db *db;
    long seconds;          /* MARKET_RETENTION */
    long long interval_ms; /* between the starts of two passes */
    phase phase;
    query query;      /* the statement in flight while R_BUSY */
    long long due_ms; /* see phase */
    long long pass_start_ms;
    bool pass_failed; /* a statement failed: the pass ends after its totals */
    bool down_logged; /* the connection failure was logged (log transitions only) */
    prune_pass pass;
};

retention *retention_open(const char *conninfo, long retention_seconds)
{
    retention *rt = xcalloc(1, sizeof *rt);
    rt->db = db_open(conninfo, "market-webhookd-retention");
    db_set_session(rt->db, SESSION_SQL);
    rt->seconds = retention_seconds;
    rt->interval_ms = prune_interval_ms(retention_seconds);
    rt->phase = R_IDLE;
    rt->due_ms = clock_ms();
    return rt;
}

void retention_close(retention *rt)
{
    if (rt == NULL)
        return;
    /* Stopping must not wait for a batch: cancelled, it rolls back and is done again by
     * the next pass of whichever drainer. */
    char err[256];
    if (rt->phase == R_BUSY && !db_cancel(rt->db, err, sizeof err))
        log_error("retention: cancelling the batch in flight failed: %s", err);
    db_close(rt->db);
    free(rt);
}

/* The pass is over (or was never begun): idle until the next one, without the
 * connection when that is far (KEEP_BETWEEN_PASSES_MS); the lock went with the pass. */
static void idle(retention *rt)
{
    long long now = clock_ms();
    long long next = rt->pass_start_ms + rt->interval_ms;
    rt->phase = R_IDLE;
    rt->due_ms = next > now + PRUNE_PAUSE_MS ? next : now + PRUNE_PAUSE_MS;
    if (rt->due_ms - now > KEEP_BETWEEN_PASSES_MS && !db_is_down(rt->db))
        db_disconnect(rt->db);
}

/* The connection broke: whatever it held (the lock, a batch's transaction) went with it
 * on the server's side. The next pass reconnects. */
static void connection_lost(retention *rt, const char *when)
{
    if (!rt->down_logged)
        log_error("retention: database connection lost %s: %s; the next pass reconnects", when,
                  db_error(rt->db));
    rt->down_logged = true;
    db_disconnect(rt->db);
    idle(rt);
}

static void send_query(retention *rt, query q, db_stmt *stmt, const char *const *params)
{
    if (!db_send(rt->db, stmt, params)) {
        connection_lost(rt, "sending a statement");
        return;
    }
    rt->query = q;
    rt->phase = R_BUSY;
}

static void send_batch(retention *rt)
{
    char seconds[24], limit[24];
    snprintf(seconds, sizeof seconds, "%ld", rt->seconds);
    snprintf(limit, sizeof limit, "%d", PRUNE_BATCH);
    const char *with_cutoff[] = {seconds, limit};
    const char *limit_only[] = {limit};
    switch (rt->pass.step) {
    case PRUNE_STEP_EVENTS:
        send_query(rt, Q_BATCH, &retention_events, with_cutoff);
        break;
    case PRUNE_STEP_DOWNLOAD_TOKENS:
        send_query(rt, Q_BATCH, &retention_tokens, with_cutoff);
        break;
    case PRUNE_STEP_API_KEYS:
        send_query(rt, Q_BATCH, &retention_keys, with_cutoff);
        break;
    case PRUNE_STEP_IDEMPOTENCY_KEYS:
        send_query(rt, Q_BATCH, &retention_idempotency, limit_only);
        break;
    case PRUNE_STEPS:
        break;
    }
}

static void send_record(retention *rt)
{
    char names[256], counts[256];
    if (!prune_pass_arrays(&rt->pass, names, sizeof names, counts, sizeof counts)) {
        log_error("retention: the pass's figures do not fit their buffers");
        rt->pass_failed = true;
        send_query(rt, Q_UNLOCK, &retention_unlock, NULL);
        return;
    }
    const char *params[] = {names, counts};
    send_query(rt, Q_RECORD, &retention_record, params);
}

static void begin_pass(retention *rt)
{
    rt->pass_start_ms = clock_ms();
    rt->pass_failed = false;
    prune_pass_start(&rt->pass);
    send_query(rt, Q_LOCK, &retention_lock, NULL);
}

static void connected(retention *rt)
{
    if (rt->down_logged)
        log_info("retention: database connection restored");
    rt->down_logged = false;
    begin_pass(rt);
}

static void start(retention *rt)
{
    if (!db_is_down(rt->db) && db_socket(rt->db) >= 0) {
        begin_pass(rt);
        return;
    }
    db_connect_start(rt->db);
    rt->phase = R_CONNECTING;
    rt->due_ms = clock_ms();
}

static void poll_connect(retention *rt)
{
    char err[256];
    switch (db_connect_poll(rt->db, err, sizeof err)) {
    case DB_CONNECT_PENDING:
        rt->due_ms = clock_ms() + CONNECT_POLL_MS;
        break;
    case DB_CONNECT_OK:
        connected(rt);
        break;
    case DB_CONNECT_FAILED:
        if (!rt->down_logged)
            log_error("retention: cannot connect to the database: %s; trying again at the "
                      "next pass",
                      err);
        rt->down_logged = true;
        rt->pass_start_ms = clock_ms();
        idle(rt);
        break;
    }
}

static long long count_column(const db_result *res, int col)
{
    return db_int(res, 0, col);
}

/* A batch's answer: count it, then the same step again after a pause, the next step at
 * once, or the totals when the pass is done. */
static void batch_done(retention *rt, db_result *res)
{
    int found;
    long long deleted;
    if (rt->pass.step == PRUNE_STEP_EVENTS) {
        found = (int)count_column(res, EV_BATCH);
        deleted = count_column(res, EV_EVENTS);
        rt->pass.pruned[PRUNE_EVENTS] += deleted;
        rt->pass.pruned[PRUNE_DELIVERIES] += count_column(res, EV_DELIVERIES);
        rt->pass.pruned[PRUNE_ATTEMPTS] += count_column(res, EV_ATTEMPTS);
    } else {
        deleted = db_affected(res);
        found = (int)deleted;
        static const prune_table table_of[PRUNE_STEPS] = {
            [PRUNE_STEP_DOWNLOAD_TOKENS] = PRUNE_DOWNLOAD_TOKENS,
            [PRUNE_STEP_API_KEYS] = PRUNE_API_KEYS,
            [PRUNE_STEP_IDEMPOTENCY_KEYS] = PRUNE_IDEMPOTENCY_KEYS};
        rt->pass.pruned[table_of[rt->pass.step]] += deleted;
    }
    if (prune_pass_next(&rt->pass, found, deleted)) {
        rt->phase = R_PAUSED;
        rt->due_ms = clock_ms() + PRUNE_PAUSE_MS;
    } else if (prune_pass_done(&rt->pass)) {
        send_record(rt);
    } else {
        send_batch(rt);
    }
}

static void pass_logged(retention *rt)
{
    char line[512];
    prune_pass_summary(&rt->pass, rt->seconds, clock_ms() - rt->pass_start_ms, line, sizeof line);
    if (rt->pass_failed)
        log_error("retention: %s (ended early by the error above)", line);
    else
        log_info("retention: %s", line);
}

/* What a statement that answered without error leads to. */
static void answered(retention *rt, db_result *res)
{
    switch (rt->query) {
    case Q_LOCK:
        if (db_bool(res, 0, 0)) {
            send_batch(rt);
        } else {
            log_info("retention: pass skipped, another market-webhookd is pruning");
            idle(rt);
        }
        break;
    case Q_BATCH:
        batch_done(rt, res);
        break;
    case Q_RECORD:
        pass_logged(rt);
        send_query(rt, Q_UNLOCK, &retention_unlock, NULL);
        break;
    case Q_UNLOCK:
        idle(rt);
        break;
    }
}

/* A statement failed in SQL (a lock or statement timeout): the pass ends there, and the
 * batches done so far are counted all the same. The lock is released on the same
 * session; if even that fails, the session goes, since an advisory lock that the same
 * session takes again only stacks up. */
static void failed(retention *rt, const db_result *res)
{
    static const char *const what[] = {[Q_LOCK] = "taking the lock",
                                       [Q_BATCH] = "a batch",
                                       [Q_RECORD] = "recording the totals",
                                       [Q_UNLOCK] = "releasing the lock"};
    log_error("retention: %s failed: %s", what[rt->query], db_message(res));
    switch (rt->query) {
    case Q_BATCH:
        rt->pass_failed = true;
        send_record(rt);
        break;
    case Q_RECORD:
        rt->pass_failed = true;
        pass_logged(rt);
        send_query(rt, Q_UNLOCK, &retention_unlock, NULL);
        break;
    case Q_LOCK:
    case Q_UNLOCK:
        db_disconnect(rt->db);
        idle(rt);
        break;
    }
}

/* Reads what arrived; once the statement's answer is whole, acts on it. */
static void collect(retention *rt)
{
    db_result *res;
    switch (db_collect(rt->db, &res)) {
    case DB_ANSWER_PENDING:
        break;
    case DB_ANSWER_LOST:
        connection_lost(rt, "awaiting an answer");
        break;
    case DB_ANSWERED:
        if (db_ok(res))
            answered(rt, res);
        else
            failed(rt, res);
        db_clear(res);
        break;
    }
}

void retention_step(retention *rt)
{
    switch (rt->phase) {
    case R_IDLE:
        if (clock_ms() >= rt->due_ms)
            start(rt);
        break;
    case R_CONNECTING:
        if (clock_ms() >= rt->due_ms)
            poll_connect(rt);
        break;
    case R_BUSY:
        collect(rt);
        break;
    case R_PAUSED:
        if (clock_ms() >= rt->due_ms)
            send_batch(rt);
        break;
    }
}

int retention_socket(const retention *rt)
{
    return rt->phase == R_BUSY ? db_socket(rt->db) : -1;
}

long long retention_wait_ms(const retention *rt)
{
    if (rt->phase == R_BUSY)
        return -1;
    long long left = rt->due_ms - clock_ms();
    return left > 0 ? left : 0;
}
