#include "store.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

#define RECONNECT_MS 1000
#define CHANNEL "market_webhooks"

/* The claim takes due rows nobody holds, oldest due first, skipping rows another drainer
 * is claiming at this instant (SKIP LOCKED), and leases them: until lease_until no other
 * drainer takes them, and if this process dies they become due again when it runs out.
 * The attempt is counted here, not when its outcome is recorded, so that a delivery
 * whose sending kills the drainer every time still runs out of attempts. */
static const char claim_sql[] =
    "WITH claimed AS ("
    " UPDATE webhook_deliveries d"
    "    SET lease_until = now() + $2::integer * interval '1 second',"
    "        leased_by = $1::text, attempts = d.attempts + 1"
    "  WHERE d.id IN (SELECT id FROM webhook_deliveries"
    "                  WHERE status = 'pending' AND next_attempt_at <= now()"
    "                    AND (lease_until IS NULL OR lease_until < now())"
    "                  ORDER BY next_attempt_at LIMIT $3::integer"
    "                  FOR UPDATE SKIP LOCKED)"
    " RETURNING d.id, d.event_id, d.subscription_id, d.attempts)"
    " SELECT c.id, c.event_id, c.subscription_id, c.attempts, s.status = 'enabled',"
    "        s.url, s.secret_sealed, e.body"
    "   FROM claimed c"
    "   JOIN events e ON e.id = c.event_id"
    "   JOIN webhook_subscriptions s ON s.id = c.subscription_id";

/* The attempt is inserted unless this very attempt is already there (its outcome was
 * written before the connection broke, then written again). Only the drainer holding the
 * lease records the outcome as the delivery's status; if its lease ran out and another
 * drainer took over, the attempt is still kept. */
static const char record_sql[] =
    "WITH attempt AS ("
    " INSERT INTO webhook_attempts (delivery_id, attempted_at, duration_ms, http_status, error)"
    " SELECT $1::bigint, to_timestamp($2::double precision), $3::integer, $4::integer, $5::text"
    "  WHERE NOT EXISTS (SELECT 1 FROM webhook_attempts"
    "                     WHERE delivery_id = $1::bigint"
    "                       AND attempted_at = to_timestamp($2::double precision)))"
    " UPDATE webhook_deliveries"
    "    SET status = $6::text,"
    "        next_attempt_at = CASE WHEN $6::text = 'pending'"
    "                               THEN now() + $7::bigint * interval '1 millisecond'"
    "                               ELSE next_attempt_at END,"
    "        lease_until = NULL, leased_by = NULL,"
    "        last_status = $4::integer, last_error = $5::text,"
    "        delivered_at = CASE WHEN $6::text = 'delivered' THEN now() ELSE delivered_at END"
    "  WHERE id = $1::bigint AND leased_by = $8::text AND status = 'pending'";

/* A drainer holds its leases only while it lives: it renews all of them every few seconds
 * while sends are in flight, so a drainer that dies hands its deliveries back as soon as
 * one short lease runs out, whatever the send timeout. */
static const char renew_sql[] = "UPDATE webhook_deliveries"
                                "   SET lease_until = now() + $2::integer * interval '1 second'"
                                " WHERE leased_by = $1::text AND status = 'pending'";

struct store {
    char *conninfo;
    char *worker;
    long lease_seconds;
    PGconn *conn;
    long long last_attempt_ms;
    bool down_logged;
    bool notified; /* a notification was seen and not yet reported */
};

static long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

store *store_open(const char *conninfo, const char *worker, long lease_seconds)
{
    store *s = calloc(1, sizeof *s);
    if (s == NULL || (s->conninfo = strdup(conninfo)) == NULL ||
        (s->worker = strdup(worker)) == NULL)
        abort();
    s->lease_seconds = lease_seconds;
    s->last_attempt_ms = -RECONNECT_MS;
    return s;
}

/* libpq's messages span lines; a log entry is one line. */
static void one_line(const char *in, char *out, size_t outsz)
{
    size_t n = 0;
    for (; *in != '\0' && n + 1 < outsz; in++) {
        char c = (*in == '\n' || *in == '\t' || *in == '\r') ? ' ' : *in;
        if (c == ' ' && (n == 0 || out[n - 1] == ' '))
            continue;
        out[n++] = c;
    }
    while (n > 0 && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
}

/* Server notices (such as the FATAL of a shutting-down server) go to the log as one line
 * instead of raw to stderr. */
static void log_notice(void *arg, const char *message)
{
    (void)arg;
    char line[512];
    one_line(message, line, sizeof line);
    log_info("database: %s", line);
}

static void drop_connection(store *s, const char *why)
{
    char msg[512] = "";
    if (s->conn != NULL)
        one_line(PQerrorMessage(s->conn), msg, sizeof msg);
    if (!s->down_logged)
        log_error("database connection %s: %s", why, msg);
    s->down_logged = true;
    if (s->conn != NULL)
        PQfinish(s->conn);
    s->conn = NULL;
}

void store_close(store *s)
{
    if (s == NULL)
        return;
    if (s->conn != NULL)
        PQfinish(s->conn);
    free(s->conninfo);
    free(s->worker);
    free(s);
}

static bool command_ok(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    return ok;
}

static bool prepare_ok(PGconn *c, const char *name, const char *sql)
{
    PGresult *r = PQprepare(c, name, sql, 0, NULL);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok) { /* a statement that does not prepare is a bug in this program */
        char msg[512];
        one_line(PQresultErrorMessage(r), msg, sizeof msg);
        log_error("prepare %s failed: %s", name, msg);
    }
    PQclear(r);
    return ok;
}

/* Everything a fresh connection needs before the drainer uses it. synchronous_commit is
 * off for this session only: an outcome lost in a database crash just means the
 * delivery is sent once more, which at-least-once delivery allows, and it saves a disk
 * flush per delivery. */
static bool session_setup(PGconn *c)
{
    return command_ok(c, "SET synchronous_commit = off") &&
           command_ok(c, "SET statement_timeout = '30s'") && command_ok(c, "LISTEN " CHANNEL) &&
           prepare_ok(c, "claim", claim_sql) && prepare_ok(c, "record", record_sql) &&
           prepare_ok(c, "renew", renew_sql);
}

static bool store_connect(store *s)
{
    s->last_attempt_ms = mono_ms();
    /* Defaults first: keywords of the user's conninfo (expanded from dbname) override
     * them. Keepalives notice a vanished server within ~20 s even when idle. */
    const char *keys[] = {"connect_timeout",
                          "application_name",
                          "keepalives_idle",
                          "keepalives_interval",
                          "keepalives_count",
                          "dbname",
                          NULL};
    const char *values[] = {"2", "market-webhookd", "10", "3", "3", s->conninfo, NULL};
    s->conn = PQconnectdbParams(keys, values, 1);
    PQsetNoticeProcessor(s->conn, log_notice, NULL);
    if (PQstatus(s->conn) != CONNECTION_OK || !session_setup(s->conn)) {
        drop_connection(s, "failed");
        return false;
    }
    if (s->down_logged)
        log_info("database connection restored");
    s->down_logged = false;
    /* Whatever was committed while we were away is due now. */
    s->notified = true;
    return true;
}

bool store_ready(store *s)
{
    if (s->conn != NULL && PQstatus(s->conn) == CONNECTION_OK)
        return true;
    if (s->conn != NULL)
        drop_connection(s, "lost");
    if (mono_ms() - s->last_attempt_ms < RECONNECT_MS)
        return false;
    return store_connect(s);
}

int store_socket(store *s)
{
    return s->conn != NULL ? PQsocket(s->conn) : -1;
}

bool store_notified(store *s)
{
    if (s->conn != NULL && !PQconsumeInput(s->conn))
        drop_connection(s, "lost");
    PGnotify *n;
    while (s->conn != NULL && (n = PQnotifies(s->conn)) != NULL) {
        s->notified = true;
        PQfreemem(n);
    }
    bool was = s->notified;
    s->notified = false;
    return was;
}

/* A failed result caused by the connection rather than by the SQL. */
static bool connection_failed(store *s, PGresult *r)
{
    if (PQstatus(s->conn) == CONNECTION_OK)
        return false;
    PQclear(r);
    drop_connection(s, "lost");
    return true;
}

static char *dup_value(const PGresult *r, int row, int col)
{
    char *v = strdup(PQgetvalue(r, row, col));
    if (v == NULL)
        abort();
    return v;
}

int store_claim(store *s, int max, delivery *out)
{
    if (!store_ready(s))
        return -1;
    char lease[24], limit[24];
    snprintf(lease, sizeof lease, "%ld", s->lease_seconds);
    snprintf(limit, sizeof limit, "%d", max);
    const char *params[] = {s->worker, lease, limit};
    PGresult *r = PQexecPrepared(s->conn, "claim", 3, params, NULL, NULL, 0);
    if (connection_failed(s, r))
        return -1;
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        char msg[512];
        one_line(PQresultErrorMessage(r), msg, sizeof msg);
        log_error("claim failed: %s", msg);
        PQclear(r);
        return -1;
    }
    int n = PQntuples(r);
    for (int i = 0; i < n && i < max; i++) {
        delivery *d = &out[i];
        d->id = strtoll(PQgetvalue(r, i, 0), NULL, 10);
        d->event_id = dup_value(r, i, 1);
        d->subscription_id = dup_value(r, i, 2);
        d->attempt = (int)strtol(PQgetvalue(r, i, 3), NULL, 10);
        d->enabled = PQgetvalue(r, i, 4)[0] == 't';
        d->url = dup_value(r, i, 5);
        d->secret_sealed = dup_value(r, i, 6);
        d->body = dup_value(r, i, 7);
    }
    PQclear(r);
    return n < max ? n : max;
}

bool store_renew(store *s)
{
    if (!store_ready(s))
        return false;
    char lease[24];
    snprintf(lease, sizeof lease, "%ld", s->lease_seconds);
    const char *params[] = {s->worker, lease};
    PGresult *r = PQexecPrepared(s->conn, "renew", 2, params, NULL, NULL, 0);
    if (connection_failed(s, r))
        return false;
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok) {
        char msg[512];
        one_line(PQresultErrorMessage(r), msg, sizeof msg);
        log_error("renewing leases failed: %s", msg);
    }
    PQclear(r);
    return ok;
}

/* Queues one outcome's statement and its sync point; false if the connection failed. */
static bool send_outcome(store *s, const store_outcome *o)
{
    char id[24], at[40], duration[24], http[24], retry[24];
    snprintf(id, sizeof id, "%lld", o->d->id);
    snprintf(at, sizeof at, "%.6f", o->a->started_at);
    snprintf(duration, sizeof duration, "%ld", o->a->duration_ms);
    snprintf(http, sizeof http, "%ld", o->a->http_status);
    snprintf(retry, sizeof retry, "%ld", o->retry_ms);
    const char *params[] = {id,
                            at,
                            duration,
                            o->a->http_status != 0 ? http : NULL,
                            o->a->error[0] != '\0' ? o->a->error : NULL,
                            o->status,
                            retry,
                            s->worker};
    return PQsendQueryPrepared(s->conn, "record", 8, params, NULL, NULL, 0) == 1 &&
           PQpipelineSync(s->conn) == 1;
}

/* Reads one outcome's results: the statement's, the NULL that ends it, the sync's. */
static store_record_result read_outcome(store *s, const store_outcome *o)
{
    PGresult *r = PQgetResult(s->conn);
    if (r == NULL)
        return STORE_DOWN;
    store_record_result res = STORE_RECORDED;
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        res = PQstatus(s->conn) == CONNECTION_OK ? STORE_REJECTED : STORE_DOWN;
        char msg[512];
        one_line(PQresultErrorMessage(r), msg, sizeof msg);
        if (res == STORE_REJECTED)
            log_error("recording delivery %lld failed: %s", o->d->id, msg);
    }
    PQclear(r);
    if ((r = PQgetResult(s->conn)) != NULL) { /* more than one result: not our statement */
        PQclear(r);
        return STORE_DOWN;
    }
    r = PQgetResult(s->conn);
    bool synced = r != NULL && PQresultStatus(r) == PGRES_PIPELINE_SYNC;
    PQclear(r);
    return synced ? res : STORE_DOWN;
}

void store_record_all(store *s, store_outcome *outcomes, int n)
{
    for (int i = 0; i < n; i++)
        outcomes[i].result = STORE_DOWN;
    if (n == 0 || !store_ready(s))
        return;
    if (PQenterPipelineMode(s->conn) != 1) { /* only on a connection in a bad state */
        drop_connection(s, "unusable");
        return;
    }
    int sent = 0;
    while (sent < n && send_outcome(s, &outcomes[sent]))
        sent++;
    for (int i = 0; i < sent; i++) {
        outcomes[i].result = read_outcome(s, &outcomes[i]);
        if (outcomes[i].result == STORE_DOWN)
            break;
    }
    /* Leaving the pipeline fails when results were left unread after a failure: those
     * outcomes stay STORE_DOWN and are written again after a reconnect. */
    if (PQexitPipelineMode(s->conn) != 1 || PQstatus(s->conn) != CONNECTION_OK)
        drop_connection(s, "lost");
}
