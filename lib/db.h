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
 * The database layer is split by audience: this header is what a request needs (the
 * connection, prepared statements, pipelines, transactions, notifications, results);
 * db_script.h adds what a tool needs (SQL scripts, one-off queries, COPY) and db_async.h
 * what a second connection read without blocking needs (a read replica). libpq itself
 * never leaves lib/db*.c: no caller sees a PGconn, and a result (db_result) is read
 * through the accessors at the end of this file. The files: db.c (the handle,
 * connecting, the host race), db_statements.c (prepared statements, pipelines,
 * transactions), db_notify.c (LISTEN/NOTIFY), db_script.c (scripts and COPY),
 * db_result.c (reading results); db_internal.h is what they share. */
#ifndef MARKET_DB_H
#define MARKET_DB_H

#include <stdbool.h>
#include <stddef.h>

#define DB_RETRY_MS 200

/* A statement's result: libpq's own (struct pg_result), opaque outside lib/db*.c, so that
 * no caller depends on libpq's header or reads a result but through the accessors at the
 * end of this file. */
typedef struct pg_result db_result;

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

/* A statement's parameters are text, as PostgreSQL reads them; an integer or a boolean
 * becomes that text here, so that no caller converts one by hand. The text lives in the
 * caller's db_arg, which must outlive the statement's run. */
typedef struct {
    char text[24];
} db_arg;
const char *db_arg_int(db_arg *arg, long long value);
const char *db_arg_bool(bool value); /* "true" or "false" */

/* Runs a prepared statement with text parameters (NULL = SQL NULL). Returns NULL when the
 * connection failed (the caller answers 503), else a result the caller must db_clear,
 * whose status may still be an error (constraint violation and the like). */
db_result *db_exec(db *d, db_stmt *stmt, const char *const *params);

/* Runs n prepared statements in one round trip (libpq pipeline mode), each in its own
 * implicit transaction (a Sync follows each), so a row lock taken by one is released
 * before the next runs. out[i] receives each result (the caller db_clears them), or NULL
 * for a statement that did not run because an earlier one failed. Returns false when the
 * connection failed (the caller answers 503; no result is left to clear). */
bool db_exec_pipeline(db *d, int n, db_stmt *const *stmts, const char *const *const *params,
                      db_result **out);

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

/* The common settings every new connection runs first: timestamps travel as text in
 * cursors, so their form is fixed (UTC, ISO dates); notices (a search of only stop words,
 * say) are not errors; statements here are short and many run at once, so no parallel
 * workers, which also keeps a UNION ALL's branches in their written order. */
#define DB_SESSION_SETTINGS_SQL                                                                    \
    "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET client_min_messages = warning; "        \
    "SET max_parallel_workers_per_gather = 0"
/* Every statement planned once per session, whatever its values (the API's workers:
 * app/api/http/worker.c says why); it reaches the statements inside SQL functions too. */
#define DB_PLAN_ONCE_SQL "SET plan_cache_mode = force_generic_plan"

/* SQL run on every new connection after DB_SESSION_SETTINGS_SQL, such as a program's own
 * SET commands. */
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

/* The last error, one line: why the connection was dropped or failed, or why db_begin,
 * db_commit or db_rollback failed (the server's primary message). */
const char *db_error(db *d);

/* The SQLSTATE of a failed result, or "" */
const char *db_sqlstate(const db_result *res);

/* Reading a result (db_result.c; res may be NULL where it says so).
 * db_ok: res holds rows or a completed command (NULL: false). */
bool db_ok(const db_result *res);

/* How many rows res holds (0 for NULL). */
int db_rows(const db_result *res);

/* The rows a command wrote (UPDATE, DELETE, INSERT…), 0 when it says none. */
long long db_affected(db_result *res);

/* The server's whole message for a failed result ("" when it did not fail), and its
 * primary message alone (one line), or NULL. */
const char *db_message(const db_result *res);
const char *db_primary_message(const db_result *res);

/* A result's value at row and column (name the columns: an enum beside the statement):
 * its text (never NULL: "" for SQL NULL; libpq's own text, not a copy), whether it is
 * NULL, its length (without a strlen), and the value of an integer, boolean or
 * floating-point column. */
const char *db_text(const db_result *res, int row, int column);
bool db_null(const db_result *res, int row, int column);
size_t db_length(const db_result *res, int row, int column);
long long db_int(const db_result *res, int row, int column);
bool db_bool(const db_result *res, int row, int column);
double db_double(const db_result *res, int row, int column);

/* The columns of res: how many, each one's name and its type's OID (pg_type). */
int db_columns(const db_result *res);
const char *db_column_name(const db_result *res, int column);
unsigned db_column_type(const db_result *res, int column);

/* Frees a result (NULL: nothing). */
void db_clear(db_result *res);

#endif
