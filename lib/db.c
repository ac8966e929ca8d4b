#include "db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

struct db {
    char *conninfo;
    char *application_name;
    PGconn *conn;
    unsigned long generation; /* bumped on every new connection */
    long long last_attempt_ms;
    bool down;
    char *listen_channel; /* LISTENed on every new connection, or NULL */
    bool notified;        /* a notification arrived, or the connection was renewed */
};

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

db *db_open(const char *conninfo, const char *application_name)
{
    db *d = calloc(1, sizeof *d);
    if (d == NULL)
        abort();
    d->conninfo = strdup(conninfo);
    d->application_name = strdup(application_name);
    if (d->conninfo == NULL || d->application_name == NULL)
        abort();
    d->last_attempt_ms = -DB_RETRY_MS;
    return d;
}

void db_close(db *d)
{
    if (d == NULL)
        return;
    if (d->conn != NULL)
        PQfinish(d->conn);
    free(d->conninfo);
    free(d->application_name);
    free(d->listen_channel);
    free(d);
}

static void ignore_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

static bool db_listen_now(db *d)
{
    char *ident = PQescapeIdentifier(d->conn, d->listen_channel, strlen(d->listen_channel));
    if (ident == NULL)
        return false;
    char sql[128];
    snprintf(sql, sizeof sql, "LISTEN %s", ident);
    PQfreemem(ident);
    PGresult *r = PQexec(d->conn, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok)
        log_error("LISTEN %s failed: %s", d->listen_channel, PQerrorMessage(d->conn));
    PQclear(r);
    return ok;
}

static bool db_connect(db *d)
{
    if (d->conn != NULL) {
        PQfinish(d->conn);
        d->conn = NULL;
    }
    d->last_attempt_ms = now_ms();
    /* Defaults first: keywords inside the user's conninfo (expanded from dbname)
     * override them. */
    const char *keys[] = {"connect_timeout", "application_name", "dbname", NULL};
    const char *values[] = {"2", d->application_name, d->conninfo, NULL};
    d->conn = PQconnectdbParams(keys, values, 1);
    if (PQstatus(d->conn) != CONNECTION_OK) {
        if (!d->down) /* log the transition, not every retry */
            log_error("database connection failed: %s", PQerrorMessage(d->conn));
        d->down = true;
        return false;
    }
    /* Timestamps travel as text in cursors: fix their form for the session. Notices
     * (a search of only stop words, say) are not errors and must not reach the log.
     * Statements here are short and many run at once: no parallel workers, which also
     * keeps a UNION ALL's branches in their written order (the relevance search relies
     * on it to read its second rank only when the first runs out). */
    PQsetNoticeProcessor(d->conn, ignore_notice, NULL);
    PGresult *r = PQexec(d->conn, "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; "
                                  "SET client_min_messages = warning; "
                                  "SET max_parallel_workers_per_gather = 0");
    bool set_ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!set_ok) {
        log_error("database session setup failed: %s", PQerrorMessage(d->conn));
        PQfinish(d->conn);
        d->conn = NULL;
        d->down = true;
        return false;
    }
    if (d->listen_channel != NULL && !db_listen_now(d)) {
        PQfinish(d->conn);
        d->conn = NULL;
        d->down = true;
        return false;
    }
    if (d->down)
        log_info("database connection restored");
    d->down = false;
    d->generation++;
    d->notified = true; /* whatever was notified while we were away is unknown */
    return true;
}

bool db_ready(db *d)
{
    if (d->conn != NULL && PQstatus(d->conn) == CONNECTION_OK)
        return true;
    if (now_ms() - d->last_attempt_ms < DB_RETRY_MS)
        return false;
    return db_connect(d);
}

bool db_is_down(db *d)
{
    return d->conn == NULL || PQstatus(d->conn) != CONNECTION_OK;
}

PGconn *db_conn(db *d)
{
    return d->conn;
}

unsigned long db_connections(const db *d)
{
    return d->generation;
}

const char *db_sqlstate(const PGresult *r)
{
    const char *s = r != NULL ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    return s != NULL ? s : "";
}

/* A failed result caused by the connection (not by the SQL) marks the db down. */
static PGresult *db_checked(db *d, PGresult *r)
{
    if (PQstatus(d->conn) != CONNECTION_OK) {
        if (!d->down)
            log_error("database connection lost");
        d->down = true;
        PQclear(r);
        return NULL;
    }
    return r;
}

static bool db_prepare(db *d, db_stmt *stmt);

static PGresult *db_exec_once(db *d, db_stmt *stmt, const char *const *params)
{
    if (!db_prepare(d, stmt))
        return NULL;
    PGresult *r = PQexecPrepared(d->conn, stmt->name, stmt->nparams, params, NULL, NULL, 0);
    return db_checked(d, r);
}

PGresult *db_exec(db *d, db_stmt *stmt, const char *const *params)
{
    if (!db_ready(d))
        return NULL;
    /* A connection that broke while idle (database restarted, backend terminated) is
     * found by the first statement after it. Nothing ran on it, so reconnect at once and
     * run the statement again rather than fail a request the database could serve. */
    bool idle = PQtransactionStatus(d->conn) == PQTRANS_IDLE;
    PGresult *r = db_exec_once(d, stmt, params);
    if (r == NULL && idle && db_connect(d))
        r = db_exec_once(d, stmt, params);
    return r;
}

bool db_command(db *d, const char *sql)
{
    if (!db_ready(d))
        return false;
    PGresult *r = db_checked(d, PQexec(d->conn, sql));
    if (r == NULL)
        return false;
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    return ok;
}

void db_listen(db *d, const char *channel)
{
    free(d->listen_channel);
    d->listen_channel = strdup(channel);
    if (d->listen_channel == NULL)
        abort();
    if (d->conn != NULL && PQstatus(d->conn) == CONNECTION_OK && !db_listen_now(d))
        d->down = true;
    d->notified = true;
}

bool db_notified(db *d)
{
    /* libpq queues the notifications it meets while reading results; the server sends
     * them before the answer to any later statement, so no extra read is needed here. */
    if (d->conn != NULL) {
        PGnotify *n;
        while ((n = PQnotifies(d->conn)) != NULL) {
            d->notified = true;
            PQfreemem(n);
        }
    }
    bool was = d->notified;
    d->notified = false;
    return was;
}

/* Prepares stmt on the current connection if it is not yet; false when the connection
 * failed. A statement that does not prepare is a bug in this program's SQL: it is logged,
 * and executing it then fails with an SQL error the caller sees. */
static bool db_prepare(db *d, db_stmt *stmt)
{
    if (stmt->prepared_gen == d->generation)
        return true;
    PGresult *r = db_checked(d, PQprepare(d->conn, stmt->name, stmt->sql, stmt->nparams, NULL));
    if (r == NULL)
        return false;
    if (PQresultStatus(r) == PGRES_COMMAND_OK)
        stmt->prepared_gen = d->generation;
    else
        log_error("prepare %s failed: %s", stmt->name, PQresultErrorMessage(r));
    PQclear(r);
    return true;
}

static void clear_results(int n, PGresult **out)
{
    for (int i = 0; i < n; i++) {
        PQclear(out[i]);
        out[i] = NULL;
    }
}

/* One pipelined round trip; false when the connection failed. */
static bool db_pipeline_once(db *d, int n, db_stmt *const *stmts, const char *const *const *params,
                             PGresult **out)
{
    for (int i = 0; i < n; i++) {
        out[i] = NULL;
        if (!db_prepare(d, stmts[i]))
            return false;
    }
    PGconn *c = d->conn;
    if (!PQenterPipelineMode(c)) {
        log_error("cannot enter pipeline mode: %s", PQerrorMessage(c));
        return false;
    }
    bool sent = true;
    for (int i = 0; i < n && sent; i++)
        sent =
            PQsendQueryPrepared(c, stmts[i]->name, stmts[i]->nparams, params[i], NULL, NULL, 0) &&
            PQpipelineSync(c);
    sent = sent && PQflush(c) == 0;

    /* Each statement answers with its result, a NULL, then the Sync's own result. */
    int syncs = 0, current = 0;
    while (sent && syncs < n) {
        PGresult *r = PQgetResult(c);
        if (r == NULL) {
            if (PQstatus(c) != CONNECTION_OK)
                break;
            continue;
        }
        if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
            PQclear(r);
            syncs++;
            current = syncs;
        } else if (current < n && out[current] == NULL) {
            out[current] = r;
        } else {
            PQclear(r); /* a second result for one statement: not ours to keep */
        }
    }
    if (syncs < n || !PQexitPipelineMode(c) || PQstatus(c) != CONNECTION_OK) {
        clear_results(n, out);
        if (!d->down)
            log_error("database connection lost: %s", PQerrorMessage(c));
        d->down = true;
        PQfinish(d->conn);
        d->conn = NULL;
        return false;
    }
    return true;
}

bool db_exec_pipeline(db *d, int n, db_stmt *const *stmts, const char *const *const *params,
                      PGresult **out)
{
    if (!db_ready(d))
        return false;
    /* As in db_exec: a connection that broke while idle is renewed once at once. */
    bool idle = PQtransactionStatus(d->conn) == PQTRANS_IDLE;
    if (db_pipeline_once(d, n, stmts, params, out))
        return true;
    return idle && db_connect(d) && db_pipeline_once(d, n, stmts, params, out);
}
