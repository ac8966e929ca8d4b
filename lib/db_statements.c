/* db_statements: what runs on a connection. Prepared statements (prepared once per
 * session, run by name), alone, pipelined in one round trip, or in two halves on a
 * connection that must not block the other (a replica); transactions with their
 * isolation level always sent; a client's hang-up cancelling its statement; and the
 * checks that turn a lost connection or a standby into "the database is down" for the
 * caller. Connecting is db.c's; this file only asks it to reconnect. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "db_internal.h"
#include "log.h"
#include "mem.h"

/* Statement ids, process-wide, so that one statement has one slot in every
 * connection's prepared set. */
static unsigned last_stmt_id;
/* Pipelines of up to this many statements need no allocation (db_pipeline_once). */
#define PIPELINE_FEW 8

const char *db_sqlstate(const PGresult *res)
{
    const char *s = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    return s != NULL ? s : "";
}

/* SQLSTATE 25006: a write on a session whose node does not take writes, a standby. The
 * session reached one through a conninfo without target_session_attrs=read-write (a DNS
 * name or a virtual address that moved in a failover, a pooler in front of both nodes):
 * it can never write, and a new connection may reach the node that takes writes now. */
static bool read_only_node(const PGresult *res)
{
    return strcmp(db_sqlstate(res), "25006") == 0;
}

/* The session is no good for this db any more: dropped, and the caller sees a lost
 * connection (503, and a reconnect). */
static void drop_read_only(db *d)
{
    if (!d->down && !d->fail_fast)
        log_error("database is read-only now (a standby): reconnecting");
    d->down = true;
    db_disconnect(d);
}

/* A failed result caused by the connection (not by the SQL) marks the db down. */
PGresult *db_checked(db *d, PGresult *res)
{
    if (PQstatus(d->conn) != CONNECTION_OK) {
        if (!d->down && !d->fail_fast)
            log_error("database connection lost");
        d->down = true;
        PQclear(res);
        return NULL;
    }
    if (read_only_node(res)) {
        PQclear(res);
        drop_read_only(d);
        return NULL;
    }
    return res;
}

static bool db_prepare(db *d, db_stmt *stmt);
static PGresult *take_prepare_failure(db *d);

/* Asks the server to cancel what pg runs (a new short connection of libpq's); false with
 * err set when it could not be asked, and *none when there was no connection to ask. */
static bool send_cancel(PGconn *pg, char *err, size_t errlen, bool *none)
{
    PGcancel *cancel = PQgetCancel(pg);
    *none = cancel == NULL;
    bool ok = cancel != NULL && PQcancel(cancel, err, (int)errlen);
    PQfreeCancel(cancel);
    return ok;
}

static void cancel_statement(db *d)
{
    char err[256];
    bool none;
    if (!send_cancel(d->conn, err, sizeof err, &none))
        log_error("could not cancel a statement: %s", none ? "no connection" : err);
}

bool db_cancel(db *d, char *err, size_t errlen)
{
    bool none;
    return d->conn == NULL || send_cancel(d->conn, err, errlen, &none) || none;
}

/* Waits until libpq can hand a result over without blocking. Meanwhile, when the watched
 * descriptor (db_watch) reports that its peer hung up, the statement is cancelled, once:
 * its result is then an error with SQLSTATE 57014. False when the connection failed. */
static bool await_result(db *d)
{
    PGconn *pg = d->conn;
    while (PQisBusy(pg)) {
        bool watching = d->watch_fd >= 0 && !d->watch_fired;
        struct pollfd p[2] = {{.fd = PQsocket(pg), .events = POLLIN},
                              {.fd = d->watch_fd, .events = POLLRDHUP}};
        if (poll(p, watching ? 2 : 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        if (watching && (p[1].revents & (POLLRDHUP | POLLHUP | POLLERR))) {
            d->watch_fired = true;
            cancel_statement(d);
        }
        if (p[0].revents != 0 && !PQconsumeInput(pg))
            return false;
    }
    return true;
}

static PGresult *collect_watched(db *d);

/* The statement's result, as PQexecPrepared gives it, but waited for by await_result. */
static PGresult *exec_watched(db *d, db_stmt *stmt, const char *const *params)
{
    PGconn *pg = d->conn;
    if (!PQsendQueryPrepared(pg, stmt->name, stmt->nparams, params, NULL, NULL, 0))
        return PQmakeEmptyPGresult(pg, PGRES_FATAL_ERROR); /* db_checked sees the connection */
    return collect_watched(d);
}

/* The one result of what was sent, every result read (await_result watches meanwhile). */
static PGresult *collect_watched(db *d)
{
    PGconn *pg = d->conn;
    PGresult *kept = NULL, *res;
    while (await_result(d) && (res = PQgetResult(pg)) != NULL) {
        if (kept == NULL)
            kept = res;
        else
            PQclear(res); /* one statement, one result: PQexec too keeps one */
    }
    return kept != NULL ? kept : PQmakeEmptyPGresult(pg, PGRES_FATAL_ERROR);
}

/* PQprepare, waited for by await_result: a prepare waits on locks as a statement does
 * (one that reads products waits on a lock of the table), and a client that goes away
 * cancels it the same way. */
static PGresult *prepare_watched(db *d, db_stmt *stmt)
{
    PGconn *pg = d->conn;
    if (!PQsendPrepare(pg, stmt->name, stmt->sql, stmt->nparams, NULL))
        return PQmakeEmptyPGresult(pg, PGRES_FATAL_ERROR); /* db_checked sees the connection */
    return collect_watched(d);
}

static PGresult *db_exec_once(db *d, db_stmt *stmt, const char *const *params)
{
    if (!db_prepare(d, stmt))
        return NULL;
    PGresult *failed = take_prepare_failure(d);
    if (failed != NULL)
        return failed;
    return db_checked(d, exec_watched(d, stmt, params));
}

PGresult *db_exec(db *d, db_stmt *stmt, const char *const *params)
{
    if (!db_ready(d))
        return NULL;
    /* A connection that broke while idle (database restarted, backend terminated) is
     * found by the first statement after it. Nothing ran on it, so reconnect at once and
     * run the statement again rather than fail a request the database could serve. */
    bool idle = PQtransactionStatus(d->conn) == PQTRANS_IDLE;
    PGresult *res = db_exec_once(d, stmt, params);
    if (res == NULL && idle && !d->fail_fast && db_connect(d))
        res = db_exec_once(d, stmt, params);
    return res;
}

/* Runs a transaction command; true when the server answered with the tag expected (a
 * COMMIT of a failed transaction completes, but as ROLLBACK). A failure is kept for
 * db_error; a lost connection is the connection's own error (db_checked logs it). */
static bool tx_command(db *d, const char *sql, const char *tag)
{
    PGresult *res = db_checked(d, PQexec(d->conn, sql));
    if (res == NULL)
        return false;
    bool ok = PQresultStatus(res) == PGRES_COMMAND_OK && strcmp(PQcmdStatus(res), tag) == 0;
    if (!ok) {
        const char *message = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
        db_keep_error(d, message != NULL ? message : "the transaction was rolled back");
        if (!d->fail_fast)
            log_error("database: %s failed: %s", sql, d->last_error);
    }
    PQclear(res);
    return ok;
}

bool db_begin(db *d, db_isolation level)
{
    static const char *const begin_sql[] = {
        [DB_READ_COMMITTED] = "BEGIN ISOLATION LEVEL READ COMMITTED",
        [DB_REPEATABLE_READ] = "BEGIN ISOLATION LEVEL REPEATABLE READ",
        [DB_SERIALIZABLE] = "BEGIN ISOLATION LEVEL SERIALIZABLE",
    };
    return db_ready(d) && tx_command(d, begin_sql[level], "BEGIN");
}

/* Commit and rollback act on the current connection only (db_conn_up), never connecting:
 * a fresh session holds no transaction of ours. Inside a transaction, failed or not. */
static bool tx_open(const db *d)
{
    PGTransactionStatusType st = PQtransactionStatus(d->conn);
    return st == PQTRANS_INTRANS || st == PQTRANS_INERROR;
}

bool db_commit(db *d)
{
    if (!db_conn_up(d))
        return false;
    if (!tx_open(d)) {
        db_keep_error(d, "no transaction in progress");
        if (!d->fail_fast)
            log_error("database: COMMIT failed: %s", d->last_error);
        return false;
    }
    return tx_command(d, "COMMIT", "COMMIT");
}

bool db_rollback(db *d)
{
    if (!db_conn_up(d))
        return false;
    return !tx_open(d) || tx_command(d, "ROLLBACK", "ROLLBACK");
}

static bool is_prepared(const db *d, const db_stmt *stmt)
{
    return stmt->id != 0 && stmt->id < d->prepared_cap && d->prepared[stmt->id];
}

static void mark_prepared(db *d, db_stmt *stmt)
{
    if (stmt->id >= d->prepared_cap) {
        size_t cap = d->prepared_cap == 0 ? 64 : d->prepared_cap;
        while (cap <= stmt->id)
            cap *= 2;
        unsigned char *grown = xrealloc(d->prepared, cap);
        memset(grown + d->prepared_cap, 0, cap - d->prepared_cap);
        d->prepared = grown;
        d->prepared_cap = cap;
    }
    d->prepared[stmt->id] = 1;
}

/* Prepares stmt on the current connection if it is not yet; false when the connection
 * failed. A statement that does not prepare is a bug in this program's SQL: it is logged,
 * and executing it then fails with an SQL error the caller sees. */
static bool db_prepare(db *d, db_stmt *stmt)
{
    if (stmt->id == 0)
        stmt->id = ++last_stmt_id;
    if (is_prepared(d, stmt))
        return true;
    PGresult *res = db_checked(d, prepare_watched(d, stmt));
    if (res == NULL)
        return false;
    if (PQresultStatus(res) == PGRES_COMMAND_OK) {
        mark_prepared(d, stmt);
        PQclear(res);
        return true;
    }
    /* The statement's caller gets this failure as the statement's own result (a prepare
     * cancelled by statement_timeout, say, is then answered like a statement that was). */
    log_error("prepare %s failed: %s", stmt->name, PQresultErrorMessage(res));
    PQclear(d->prepare_failure);
    d->prepare_failure = res;
    return true;
}

/* The failure of the prepare just tried, if it failed (the caller owns it), else NULL. */
static PGresult *take_prepare_failure(db *d)
{
    PGresult *res = d->prepare_failure;
    d->prepare_failure = NULL;
    return res;
}

static void clear_results(int n, PGresult **out)
{
    for (int i = 0; i < n; i++) {
        PQclear(out[i]);
        out[i] = NULL;
    }
}

/* One pipelined round trip; false when the connection failed. sent_index has room for n:
 * the statements sent, by index (a statement whose prepare failed is not sent: its
 * result is that failure). */
static bool db_pipeline_run(db *d, int n, db_stmt *const *stmts, const char *const *const *params,
                            PGresult **out, int *sent_index)
{
    int nsent = 0;
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    for (int i = 0; i < n; i++) {
        if (!db_prepare(d, stmts[i])) {
            clear_results(n, out);
            return false;
        }
        out[i] = take_prepare_failure(d);
        if (out[i] == NULL)
            sent_index[nsent++] = i;
    }
    PGconn *pg = d->conn;
    if (!PQenterPipelineMode(pg)) {
        log_error("cannot enter pipeline mode: %s", PQerrorMessage(pg));
        return false;
    }
    bool sent = true;
    for (int k = 0; k < nsent && sent; k++) {
        int i = sent_index[k];
        sent =
            PQsendQueryPrepared(pg, stmts[i]->name, stmts[i]->nparams, params[i], NULL, NULL, 0) &&
            PQpipelineSync(pg);
    }
    sent = sent && PQflush(pg) == 0;

    /* Each statement answers with its result, a NULL, then the Sync's own result. */
    int syncs = 0;
    while (sent && syncs < nsent && await_result(d)) {
        PGresult *res = PQgetResult(pg);
        if (res == NULL) {
            if (PQstatus(pg) != CONNECTION_OK)
                break;
            continue;
        }
        if (PQresultStatus(res) == PGRES_PIPELINE_SYNC) {
            PQclear(res);
            syncs++;
        } else if (out[sent_index[syncs]] == NULL) {
            out[sent_index[syncs]] = res;
        } else {
            PQclear(res); /* a second result for one statement: not ours to keep */
        }
    }
    bool read_only = false;
    for (int i = 0; i < n; i++)
        read_only = read_only || (out[i] != NULL && read_only_node(out[i]));
    if (read_only && syncs == nsent && PQexitPipelineMode(pg)) {
        clear_results(n, out);
        drop_read_only(d);
        return false;
    }
    if (syncs < nsent || !PQexitPipelineMode(pg) || PQstatus(pg) != CONNECTION_OK) {
        clear_results(n, out);
        if (!d->down && !d->fail_fast)
            log_error("database connection lost: %s", PQerrorMessage(pg));
        d->down = true;
        db_disconnect(d);
        return false;
    }
    return true;
}

static bool db_pipeline_once(db *d, int n, db_stmt *const *stmts, const char *const *const *params,
                             PGresult **out)
{
    /* A request pipelines two statements: no allocation for so few. */
    int few[PIPELINE_FEW];
    int *sent_index = n <= PIPELINE_FEW ? few : xmalloc((size_t)n * sizeof *sent_index);
    bool ok = db_pipeline_run(d, n, stmts, params, out, sent_index);
    if (sent_index != few)
        free(sent_index);
    return ok;
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
    return idle && !d->fail_fast && db_connect(d) && db_pipeline_once(d, n, stmts, params, out);
}

bool db_send(db *d, db_stmt *stmt, const char *const *params)
{
    if (d->conn == NULL || d->connecting || PQstatus(d->conn) != CONNECTION_OK)
        return false;
    if (!db_prepare(d, stmt)) {
        d->down = true;
        db_disconnect(d);
        return false;
    }
    /* A failed prepare is sent anyway: its answer is then an error the caller reads. */
    PQclear(take_prepare_failure(d));
    if (PQsendQueryPrepared(d->conn, stmt->name, stmt->nparams, params, NULL, NULL, 0))
        return true;
    d->down = true;
    db_disconnect(d);
    return false;
}

typedef enum { WAIT_READY, WAIT_TIMEOUT, WAIT_FAILED } wait_outcome;

/* Waits until libpq has a whole result to give, for at most timeout_ms (< 0: no limit). */
static wait_outcome wait_result(PGconn *pg, int timeout_ms)
{
    long long deadline = clock_ms() + timeout_ms;
    while (PQisBusy(pg)) {
        int wait = -1;
        if (timeout_ms >= 0) {
            long long left = deadline - clock_ms();
            if (left <= 0)
                return WAIT_TIMEOUT;
            wait = (int)left;
        }
        struct pollfd p = {.fd = PQsocket(pg), .events = POLLIN};
        if (p.fd < 0 || (poll(&p, 1, wait) < 0 && errno != EINTR) || !PQconsumeInput(pg))
            return WAIT_FAILED;
    }
    return WAIT_READY;
}

PGresult *db_receive(db *d, int timeout_ms)
{
    if (d->conn == NULL)
        return NULL;
    PGresult *kept = NULL, *res = NULL;
    wait_outcome waited;
    while ((waited = wait_result(d->conn, timeout_ms)) == WAIT_READY &&
           (res = PQgetResult(d->conn)) != NULL) {
        if (kept == NULL)
            kept = res;
        else
            PQclear(res);
    }
    if (waited == WAIT_READY && PQstatus(d->conn) == CONNECTION_OK)
        return kept;
    PQclear(kept);
    d->down = true;
    /* A statement that did not answer in time cannot be awaited any longer on this
     * connection: it is dropped, and the server cancels the statement when it notices. */
    db_disconnect(d);
    if (waited == WAIT_TIMEOUT)
        db_keep_error(d, "no answer in time");
    return NULL;
}

void db_watch(db *d, int fd)
{
    d->watch_fd = fd;
    d->watch_fired = false;
}

bool db_watch_fired(const db *d)
{
    return d->watch_fired;
}
db_answer db_collect(db *d, PGresult **res)
{
    *res = NULL;
    PGconn *pg = d->conn;
    if (pg == NULL || !PQconsumeInput(pg))
        return DB_ANSWER_LOST;
    while (!PQisBusy(pg)) {
        PGresult *one = PQgetResult(pg);
        if (one != NULL) {
            if (d->collected == NULL)
                d->collected = one;
            else
                PQclear(one); /* a single statement has a single result */
            continue;
        }
        PGresult *whole = d->collected;
        d->collected = NULL;
        if (PQstatus(pg) != CONNECTION_OK || whole == NULL) {
            PQclear(whole);
            return DB_ANSWER_LOST;
        }
        *res = whole;
        return DB_ANSWERED;
    }
    return DB_ANSWER_PENDING;
}
