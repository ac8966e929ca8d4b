#include "db.h"

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
    free(d);
}

static void ignore_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
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
     * (a search of only stop words, say) are not errors and must not reach the log. */
    PQsetNoticeProcessor(d->conn, ignore_notice, NULL);
    PGresult *r = PQexec(d->conn, "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; "
                                  "SET client_min_messages = warning");
    bool set_ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!set_ok) {
        log_error("database session setup failed: %s", PQerrorMessage(d->conn));
        PQfinish(d->conn);
        d->conn = NULL;
        d->down = true;
        return false;
    }
    if (d->down)
        log_info("database connection restored");
    d->down = false;
    d->generation++;
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

static PGresult *db_exec_once(db *d, db_stmt *stmt, const char *const *params)
{
    if (stmt->prepared_gen != d->generation) {
        PGresult *r = db_checked(d, PQprepare(d->conn, stmt->name, stmt->sql, stmt->nparams, NULL));
        if (r == NULL)
            return NULL;
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            /* A statement that does not prepare is a bug in this program's SQL. */
            log_error("prepare %s failed: %s", stmt->name, PQresultErrorMessage(r));
            return r;
        }
        PQclear(r);
        stmt->prepared_gen = d->generation;
    }
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
