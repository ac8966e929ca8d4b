/* store: every statement market-webhookd runs for deliveries, in one file, so that the
 * rules they rely on (leases, claims that skip locked rows, an outcome recorded once)
 * read beside their SQL. The retention pass has its own connection and statements
 * (retention.c). */
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "mem.h"

#define CHANNEL "market_webhooks"

/* The claim takes due rows nobody holds, oldest due first, skipping rows another drainer
 * is claiming at this instant (SKIP LOCKED), and leases them: until lease_until no other
 * drainer takes them, and if this process dies they become due again when it runs out.
 * The attempt is counted here, not when its outcome is recorded, so that a delivery
 * whose sending kills the drainer every time still runs out of attempts. */
DB_STMT(claim,
        "WITH claimed AS ("
        " UPDATE webhook_deliveries d"
        "    SET lease_until = now() + $2::integer * interval '1 second',"
        "        leased_by = $1::text, attempts = d.attempts + 1, send_started_at = NULL"
        "  WHERE d.id IN (SELECT id FROM webhook_deliveries"
        "                  WHERE status = 'pending' AND next_attempt_at <= now()"
        "                    AND (lease_until IS NULL OR lease_until < now())"
        "                  ORDER BY next_attempt_at LIMIT $3::integer"
        "                  FOR UPDATE SKIP LOCKED)"
        " RETURNING d.id, d.event_id, d.subscription_id, d.attempts)"
        " SELECT c.id, c.event_id, c.subscription_id, c.attempts, s.status = 'enabled',"
        "        s.url, s.secret_sealed, e.body,"
        "        CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret_sealed END"
        "   FROM claimed c"
        "   JOIN events e ON e.id = c.event_id"
        "   JOIN webhook_subscriptions s ON s.id = c.subscription_id",
        3);

/* The attempt is inserted unless this very attempt is already there (its outcome was
 * written before the connection broke, then written again). Only the drainer holding the
 * lease records the outcome as the delivery's status; if its lease ran out and another
 * drainer took over, the attempt is still kept. A retry of a delivery whose subscription
 * was deleted while this attempt was in flight ends it as endpoint_deleted instead. */
DB_STMT(record,
        "WITH attempt AS ("
        " INSERT INTO webhook_attempts (delivery_id, attempted_at, duration_ms, http_status, error)"
        " SELECT $1::bigint, to_timestamp($2::double precision), $3::integer, $4::integer, $5::text"
        "  WHERE NOT EXISTS (SELECT 1 FROM webhook_attempts"
        "                     WHERE delivery_id = $1::bigint"
        "                       AND attempted_at = to_timestamp($2::double precision)))"
        " UPDATE webhook_deliveries"
        "    SET status = CASE WHEN $6::text = 'pending' AND EXISTS (SELECT 1"
        "                        FROM webhook_subscriptions s WHERE s.id = subscription_id"
        "                         AND s.status = 'deleted') THEN 'endpoint_deleted'"
        "                      ELSE $6::text END,"
        "        send_started_at = NULL,"
        "        next_attempt_at = CASE WHEN $6::text = 'pending'"
        "                               THEN now() + $7::bigint * interval '1 millisecond'"
        "                               ELSE next_attempt_at END,"
        "        lease_until = NULL, leased_by = NULL,"
        "        last_status = $4::integer, last_error = $5::text,"
        "        delivered_at = CASE WHEN $6::text = 'delivered' THEN now() ELSE delivered_at END"
        "  WHERE id = $1::bigint AND leased_by = $8::text AND status = 'pending'",
        8);

/* Right before an attempt is sent (011_webhook_endpoints.sql): the delivery must still be
 * pending and leased by this drainer, and is locked while its subscription's status is
 * read. Enabled: send_started_at is set, and from then on DELETE and disable leave the
 * delivery to this send. Deleted: the delivery ends as endpoint_deleted here, unsent.
 * Disabled: the caller fails the attempt. No row: the delivery was ended meanwhile
 * (DELETE came first), nothing to send or record. */
DB_STMT(begin_send,
        "WITH c AS ("
        " SELECT d.id, s.status FROM webhook_deliveries d"
        "   JOIN webhook_subscriptions s ON s.id = d.subscription_id"
        "  WHERE d.id = $1::bigint AND d.leased_by = $2::text AND d.status = 'pending'"
        "    FOR UPDATE OF d),"
        " go AS (UPDATE webhook_deliveries d SET send_started_at = now()"
        "         FROM c WHERE d.id = c.id AND c.status = 'enabled'),"
        " gone AS (UPDATE webhook_deliveries d"
        "             SET status = 'endpoint_deleted', lease_until = NULL, leased_by = NULL"
        "           FROM c WHERE d.id = c.id AND c.status = 'deleted')"
        " SELECT status FROM c",
        2);

/* A drainer holds its leases only while it lives: it renews all of them every few seconds
 * while sends are in flight, so a drainer that dies hands its deliveries back as soon as
 * one short lease runs out, whatever the send timeout. */
DB_STMT(renew,
        "UPDATE webhook_deliveries"
        "   SET lease_until = now() + $2::integer * interval '1 second'"
        " WHERE leased_by = $1::text AND status = 'pending'",
        2);

struct store {
    db *db;
    char *name;
    long lease_seconds;
    /* Scratch for store_record_all's pipeline, grown to the largest batch seen. */
    int cap;
    db_stmt **stmts;
    const char *const **params;
    db_result **results;
    char (*texts)[5][40]; /* id, started at, duration, HTTP status, retry delay */
    const char *(*values)[8];
};

/* synchronous_commit is off for the drainer's sessions only: an outcome lost in a
 * database crash just means the delivery is sent once more, which at-least-once delivery
 * allows, and it saves a disk flush per delivery. */
#define SESSION_SQL "SET synchronous_commit = off; SET statement_timeout = '30s'"

store *store_open(const char *conninfo, const char *name, long lease_seconds)
{
    store *s = xcalloc(1, sizeof *s);
    s->name = xstrdup(name);
    s->db = db_open(conninfo, "market-webhookd");
    db_set_session(s->db, SESSION_SQL);
    db_listen(s->db, CHANNEL);
    s->lease_seconds = lease_seconds;
    return s;
}

void store_close(store *s)
{
    if (s == NULL)
        return;
    db_close(s->db);
    free(s->stmts);
    free(s->params);
    free(s->results);
    free(s->texts);
    free(s->values);
    free(s->name);
    free(s);
}

bool store_ready(store *s)
{
    return db_ready(s->db);
}

int store_socket(store *s)
{
    return db_socket(s->db);
}

bool store_notified(store *s)
{
    db_consume(s->db);
    /* A new connection counts as notified too: whatever was committed while we were
     * away is due now. */
    return db_notified(s->db, CHANNEL);
}

static char *dup_value(const db_result *res, int row, int col)
{
    return xstrdup(db_text(res, row, col));
}

/* The claim's columns, in its SELECT's order. */
enum {
    CLAIM_ID,
    CLAIM_EVENT,
    CLAIM_SUBSCRIPTION,
    CLAIM_ATTEMPTS,
    CLAIM_ENABLED,
    CLAIM_URL,
    CLAIM_SECRET,
    CLAIM_BODY,
    CLAIM_PREVIOUS_SECRET
};

int store_claim(store *s, int max, delivery *out)
{
    char lease[24], limit[24];
    snprintf(lease, sizeof lease, "%ld", s->lease_seconds);
    snprintf(limit, sizeof limit, "%d", max);
    const char *params[] = {s->name, lease, limit};
    db_result *res = db_exec(s->db, &claim, params);
    if (res == NULL)
        return -1;
    if (!db_ok(res)) {
        log_error("claim failed: %s", db_message(res));
        db_clear(res);
        return -1;
    }
    int n = db_rows(res);
    for (int i = 0; i < n && i < max; i++) {
        delivery *d = &out[i];
        d->id = db_int(res, i, CLAIM_ID);
        d->event_id = dup_value(res, i, CLAIM_EVENT);
        d->subscription_id = dup_value(res, i, CLAIM_SUBSCRIPTION);
        d->attempt = (int)db_int(res, i, CLAIM_ATTEMPTS);
        d->enabled = db_bool(res, i, CLAIM_ENABLED);
        d->url = dup_value(res, i, CLAIM_URL);
        d->secret_sealed = dup_value(res, i, CLAIM_SECRET);
        d->body = dup_value(res, i, CLAIM_BODY);
        d->previous_secret_sealed = db_null(res, i, CLAIM_PREVIOUS_SECRET)
                                        ? NULL
                                        : dup_value(res, i, CLAIM_PREVIOUS_SECRET);
    }
    db_clear(res);
    return n < max ? n : max;
}

store_send store_begin_send(store *s, long long delivery_id)
{
    char id[24];
    snprintf(id, sizeof id, "%lld", delivery_id);
    const char *params[] = {id, s->name};
    db_result *res = db_exec(s->db, &begin_send, params);
    if (res == NULL)
        return STORE_SEND_DOWN;
    store_send verdict = STORE_SEND_DOWN;
    if (!db_ok(res))
        log_error("delivery %lld: checking before the send failed: %s", delivery_id,
                  db_message(res));
    else if (db_rows(res) == 0)
        verdict = STORE_SEND_ENDED;
    else if (strcmp(db_text(res, 0, 0), "enabled") == 0)
        verdict = STORE_SEND_GO;
    else if (strcmp(db_text(res, 0, 0), "deleted") == 0)
        verdict = STORE_SEND_DELETED;
    else
        verdict = STORE_SEND_DISABLED;
    db_clear(res);
    return verdict;
}

bool store_renew(store *s)
{
    char lease[24];
    snprintf(lease, sizeof lease, "%ld", s->lease_seconds);
    const char *params[] = {s->name, lease};
    db_result *res = db_exec(s->db, &renew, params);
    if (res == NULL)
        return false;
    bool ok = db_ok(res);
    if (!ok)
        log_error("renewing leases failed: %s", db_message(res));
    db_clear(res);
    return ok;
}

static void grow_scratch(store *s, int n)
{
    if (n <= s->cap)
        return;
    size_t cap = (size_t)n;
    /* Arrays of pointers: sizeof *p is a pointer's size, as meant (clang-tidy 14 has no
     * option to say so to its pointer-to-aggregate warning).
     * NOLINTBEGIN(bugprone-sizeof-expression) */
    s->stmts = xrealloc(s->stmts, cap * sizeof *s->stmts);
    s->params = xrealloc(s->params, cap * sizeof *s->params);
    s->results = xrealloc(s->results, cap * sizeof *s->results);
    /* NOLINTEND(bugprone-sizeof-expression) */
    s->texts = xrealloc(s->texts, cap * sizeof *s->texts);
    s->values = xrealloc(s->values, cap * sizeof *s->values);
    s->cap = n;
}

/* The record statement's parameters for one outcome, in s's scratch slot i. */
static void outcome_params(store *s, int i, const store_outcome *o)
{
    char(*t)[40] = s->texts[i];
    snprintf(t[0], sizeof t[0], "%lld", o->d->id);
    snprintf(t[1], sizeof t[1], "%.6f", o->a->started_at);
    snprintf(t[2], sizeof t[2], "%ld", o->a->duration_ms);
    snprintf(t[3], sizeof t[3], "%ld", o->a->http_status);
    snprintf(t[4], sizeof t[4], "%ld", o->retry_ms);
    const char **v = s->values[i];
    v[0] = t[0];
    v[1] = t[1];
    v[2] = t[2];
    v[3] = o->a->http_status != 0 ? t[3] : NULL;
    v[4] = o->a->error[0] != '\0' ? o->a->error : NULL;
    v[5] = o->status;
    v[6] = t[4];
    v[7] = s->name;
    s->stmts[i] = &record;
    s->params[i] = v;
}

void store_record_all(store *s, store_outcome *outcomes, int n)
{
    for (int i = 0; i < n; i++)
        outcomes[i].result = STORE_DOWN;
    if (n == 0)
        return;
    grow_scratch(s, n);
    for (int i = 0; i < n; i++)
        outcome_params(s, i, &outcomes[i]);
    /* Outcomes left STORE_DOWN (the connection failed) are written again after a
     * reconnect: recording is idempotent. */
    if (!db_exec_pipeline(s->db, n, s->stmts, s->params, s->results))
        return;
    for (int i = 0; i < n; i++) {
        db_result *res = s->results[i];
        if (res == NULL)
            continue;
        if (db_ok(res)) {
            outcomes[i].result = STORE_RECORDED;
        } else {
            outcomes[i].result = STORE_REJECTED;
            log_error("recording delivery %lld failed: %s", outcomes[i].d->id, db_message(res));
        }
        db_clear(res);
    }
}
