/* db: one persistent PostgreSQL connection per process, with prepared statements.
 *
 * A statement is a static db_stmt declared next to the code that runs it. It is prepared
 * on its first use on a connection and executed by name afterwards, so the SQL text is
 * parsed and planned once per connection. Values are always parameters; SQL text is
 * never built from input.
 *
 * The connection may go away at any time (database restart, network). db_exec then
 * returns NULL and the caller answers 503; the next call reconnects, at most every
 * DB_RETRY_MS, so a down database costs callers almost nothing.
 *
 * This header is the whole of the database layer that callers see: the connection itself
 * (libpq's PGconn) never leaves lib/db*.c, and results are read through the accessors at
 * the end (inline: a cell is read where libpq keeps it, without a copy). The layer is
 * split by responsibility: db.c (the handle, connecting, the host race), db_statements.c
 * (prepared statements, pipelines, transactions), db_notify.c (LISTEN/NOTIFY) and
 * db_script.c (a tool's scripts and COPY); db_internal.h is what they share. */
#ifndef MARKET_DB_H
#define MARKET_DB_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#define DB_RETRY_MS 200

typedef struct {
    const char *name;
    const char *sql;
    int nparams;
    unsigned id; /* 0 until first run; then its index in each connection's prepared set */
} db_stmt;

#define DB_STMT(ident, text, n) static db_stmt ident = {#ident, text, n, 0}

typedef struct db db;

/* Opens (lazily) a connection; application_name is shown in pg_stat_activity. A
 * statement may run on several db: each connection remembers which it has prepared. */
db *db_open(const char *conninfo, const char *application_name);
void db_close(db *d);

/* Ensures the connection is up; false if it is down (after a throttled reconnect try). */
bool db_ready(db *d);

/* Runs a prepared statement with text parameters (NULL = SQL NULL). Returns NULL when the
 * connection failed (the caller answers 503), else a result the caller must PQclear,
 * whose status may still be an error (constraint violation and the like). */
PGresult *db_exec(db *d, db_stmt *stmt, const char *const *params);

/* Runs n prepared statements in one round trip (libpq pipeline mode), each in its own
 * implicit transaction (a Sync follows each), so a row lock taken by one is released
 * before the next runs. out[i] receives each result (the caller PQclears them), or NULL
 * for a statement that did not run because an earlier one failed. Returns false when the
 * connection failed (the caller answers 503; no result is left to clear). */
bool db_exec_pipeline(db *d, int n, db_stmt *const *stmts, const char *const *const *params,
                      PGresult **out);

/* LISTENs on channel, besides those listened on already (at most DB_MAX_CHANNELS), on
 * every connection this db opens (now and after reconnects). */
#define DB_MAX_CHANNELS 4
void db_listen(db *d, const char *channel);

/* True when a notification arrived on channel, or the connection was renewed
 * (notifications may have been missed in between), since the last call for channel. It
 * reads nothing itself: a notification committed before a statement was sent arrives
 * ahead of that statement's answer, so asking after a statement tells whether it may be
 * stale; db_consume reads what arrived without a statement. */
bool db_notified(db *d, const char *channel);

/* SQL run on every new connection after the common settings (UTC, ISO dates, warnings
 * only, no parallel workers), such as a program's own SET commands. */
void db_set_session(db *d, const char *sql);
/* `to` gets the statement timeout and session settings of `from`, for its next session. */
void db_copy_session(db *to, const db *from);

/* Bounds every statement of every session this db opens to ms milliseconds
 * (statement_timeout), and a transaction left idle to as long
 * (idle_in_transaction_session_timeout). A statement past it fails with SQLSTATE 57014
 * (DB_STATEMENT_TIMEOUT). */
#define DB_STATEMENT_TIMEOUT "57014"
void db_set_statement_timeout(db *d, long ms);
/* While a statement runs, fd (a client's connection, -1: none) is watched too: when its
 * peer hangs up, the statement is cancelled (its result is an error with SQLSTATE
 * DB_STATEMENT_TIMEOUT), so that no work goes on for a client that has gone.
 * db_watch_fired tells whether that happened since db_watch. */
void db_watch(db *d, int fd);
bool db_watch_fired(const db *d);
/* The connection's socket to wait on (notifications), or -1 while there is none. */
int db_socket(db *d);

/* Reads what arrived on the socket without waiting (notifications for db_notified);
 * false when the connection broke (it is dropped). */
bool db_consume(db *d);

/* SQL that is not a prepared statement (db_script.c). db_exec_params runs SQL not worth
 * preparing (a one-off query), with text parameters; NULL when the connection failed,
 * else a result the caller must PQclear. */
PGresult *db_exec_params(db *d, const char *sql, int nparams, const char *const *params);

/* Runs trusted SQL of this repository that may hold several statements (a migration), in
 * the simple query protocol; the result of the last statement, or NULL as above. */
PGresult *db_exec_script(db *d, const char *sql);

/* Sends such SQL without waiting for it on an open connection (another connection can
 * work meanwhile); db_receive waits for its result. False when the connection failed. */
bool db_send_script(db *d, const char *sql);

/* COPY ... FROM STDIN: db_exec_script runs the COPY statement, whose result is
 * db_copy_started when the server waits for rows; db_copy_put sends rows (text format,
 * any number of bytes; false when the connection failed) and db_copy_end ends them: the
 * COPY's result (the first failure if any), or NULL when the connection failed. */
bool db_copy_put(db *d, const char *data, size_t len);
PGresult *db_copy_end(db *d);

/* For a command-line tool: db logs nothing (the tool reports failures itself) and never
 * reconnects once connected, since a new session would silently lose what the old one
 * held (an advisory lock, a transaction); a lost connection fails every later call. */
void db_fail_fast(db *d);

/* Transactions. The level is what the code between begin and commit relies on, and it is
 * always sent to the server, so that a default_transaction_isolation set for the role or
 * the database cannot change it. */
typedef enum { DB_READ_COMMITTED, DB_REPEATABLE_READ, DB_SERIALIZABLE } db_isolation;

/* Starts a transaction (connecting first if the connection is down, as db_exec does);
 * false when the connection failed or the server refused. */
bool db_begin(db *d, db_isolation level);

/* Commits the open transaction; true only when it did. False when the connection is gone
 * (never renewed here: a new session has nothing to commit), when no transaction is open,
 * when the server rolled it back instead (a statement in it had failed) and when COMMIT
 * itself failed (a deferred constraint, a serialization failure). db_error says why. */
bool db_commit(db *d);

/* Rolls the open transaction back; true when none is left open (also when none was).
 * False when the connection failed, which ends the transaction as surely; it is not
 * renewed here but by the next statement. */
bool db_rollback(db *d);

/* True when the last failed result was a lost connection rather than an SQL error. */
bool db_is_down(db *d);

/* Whether a connection is held at all, even a broken one not dropped yet (dropped: the
 * next db_connect_start is the way back). */
bool db_has_connection(const db *d);

/* Where the current session stands: no usable session (or a statement in progress), idle,
 * inside a transaction, or inside a failed one (only a rollback ends it). */
typedef enum { DB_TX_NONE, DB_TX_IDLE, DB_TX_OPEN, DB_TX_FAILED } db_tx_state;
db_tx_state db_transaction(const db *d);

/* A setting the server reports on its own (ParameterStatus: is_superuser,
 * server_version…) for the current session, or NULL. */
const char *db_server_param(const db *d, const char *name);

/* How many connections this db has opened so far (1 after the first; every reconnect
 * adds one). */
unsigned long db_connections(const db *d);

/* Connecting without blocking, for a connection the caller may do without (a read
 * replica): db_connect_start begins a connection (dropping any current one), and
 * db_connect_poll advances it as far as it can without waiting. The statement calls
 * below never reconnect such a db on their own. */
typedef enum { DB_CONNECT_PENDING, DB_CONNECT_OK, DB_CONNECT_FAILED } db_connect_state;
void db_connect_start(db *d);
db_connect_state db_connect_poll(db *d, char *err, size_t errlen);

/* Drops the connection (the next db_ready, db_exec or db_connect_start opens another). */
void db_disconnect(db *d);

/* A statement in two halves on an open connection, without reconnecting: db_send sends
 * it (preparing it first if this connection has not), db_receive waits for its result.
 * In between the caller may use another connection, so that two databases work at
 * once. db_send is false, and db_receive NULL, when the connection failed or gave no
 * answer within timeout_ms (then it is dropped: db_error says why); db_receive's result
 * may still be an SQL error. */
bool db_send(db *d, db_stmt *stmt, const char *const *params);
PGresult *db_receive(db *d, int timeout_ms); /* timeout_ms < 0: as long as it takes */

/* The answer to db_send without ever waiting, for a loop that polls db_socket along with
 * other work: reads what arrived, and once the answer is whole gives its result in *res
 * (DB_ANSWERED; the caller PQclears it, and it may be an SQL error). DB_ANSWER_PENDING:
 * not whole yet, look again when the socket is readable. DB_ANSWER_LOST: the connection
 * failed (db_error says why; the caller drops it with db_disconnect). */
typedef enum { DB_ANSWER_PENDING, DB_ANSWERED, DB_ANSWER_LOST } db_answer;
db_answer db_collect(db *d, PGresult **res);

/* Asks the server to cancel the statement in flight, without waiting (a statement
 * cancelled this way rolls back). True when it was asked, or there was nothing to ask;
 * false with err set when the request could not be sent. */
bool db_cancel(db *d, char *err, size_t errlen);

/* The last error, one line: why the connection was dropped or failed, or why db_begin,
 * db_commit or db_rollback failed (the server's primary message). */
const char *db_error(db *d);

/* The SQLSTATE of a failed result, or "" */
const char *db_sqlstate(const PGresult *res);

/* Reading a result (res may be NULL where it says so). Inline, since the catalogue's rows
 * are read cell by cell: each cell is libpq's own text, never copied.
 * db_ok: res holds rows or a completed command (NULL: false). */
static inline bool db_ok(const PGresult *res)
{
    ExecStatusType st = PQresultStatus(res); /* PGRES_FATAL_ERROR for NULL */
    return st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK;
}

/* COPY FROM STDIN began: the server waits for rows (db_copy_put). */
static inline bool db_copy_started(const PGresult *res)
{
    return PQresultStatus(res) == PGRES_COPY_IN;
}

/* How many rows res holds (0 for NULL). */
static inline int db_rows(const PGresult *res)
{
    return PQntuples(res);
}

/* The rows a command wrote (UPDATE, DELETE, INSERT…), 0 when it says none. */
static inline long long db_affected(PGresult *res)
{
    return strtoll(PQcmdTuples(res), NULL, 10);
}

/* The server's whole message for a failed result ("" when it did not fail). */
static inline const char *db_message(const PGresult *res)
{
    return PQresultErrorMessage(res);
}

/* A result's value at row and column (name the columns: an enum beside the statement):
 * its text (never NULL: "" for SQL NULL), whether it is NULL, and an integer column. */
static inline const char *db_text(const PGresult *res, int row, int column)
{
    return PQgetvalue(res, row, column);
}

static inline bool db_null(const PGresult *res, int row, int column)
{
    return PQgetisnull(res, row, column);
}

/* The length of db_text's value, without a strlen. */
static inline size_t db_length(const PGresult *res, int row, int column)
{
    return (size_t)PQgetlength(res, row, column);
}

/* An integer column's value, read as PostgreSQL writes integers ("-12"), by hand: a page
 * of 100 items reads 200 of them, and strtoll's generality showed in a worker's profile. */
static inline long long db_int(const PGresult *res, int row, int column)
{
    const char *s = PQgetvalue(res, row, column);
    bool negative = *s == '-';
    unsigned long long magnitude = 0;
    for (s += negative; *s >= '0' && *s <= '9'; s++)
        magnitude = magnitude * 10 + (unsigned long long)(*s - '0');
    return negative ? (long long)(0 - magnitude) : (long long)magnitude;
}

/* The columns of res: how many, each one's name and its type's OID (pg_type). */
static inline int db_columns(const PGresult *res)
{
    return PQnfields(res);
}

static inline const char *db_column_name(const PGresult *res, int column)
{
    return PQfname(res, column);
}

static inline unsigned db_column_type(const PGresult *res, int column)
{
    return PQftype(res, column);
}

/* The server's primary message for a failed result (one line), or NULL. */
static inline const char *db_primary_message(const PGresult *res)
{
    return res != NULL ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
}

/* Frees a result (NULL: nothing). */
static inline void db_clear(PGresult *res)
{
    PQclear(res);
}

#endif
