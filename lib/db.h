/* db: one persistent PostgreSQL connection per process, with prepared statements.
 *
 * A statement is a static db_stmt declared next to the code that runs it. It is prepared
 * on its first use on a connection and executed by name afterwards, so the SQL text is
 * parsed and planned once per connection. Values are always parameters; SQL text is
 * never built from input.
 *
 * The connection may go away at any time (database restart, network). db_exec then
 * returns NULL and the caller answers 503; the next call reconnects, at most every
 * DB_RETRY_MS, so a down database costs callers almost nothing. */
#ifndef MARKET_DB_H
#define MARKET_DB_H

#include <libpq-fe.h>
#include <stdbool.h>

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

/* LISTENs on channel on every connection this db opens (now and after reconnects). */
void db_listen(db *d, const char *channel);

/* True when a notification arrived on a listened channel, or the connection was renewed
 * (notifications may have been missed in between), since the last call. It reads nothing
 * itself: a notification committed before a statement was sent arrives ahead of that
 * statement's answer, so asking after a statement tells whether it may be stale. */
bool db_notified(db *d);

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

/* Runs SQL that is not worth preparing (a migration, a one-off query), with text
 * parameters; NULL when the connection failed, else a result the caller must PQclear. */
PGresult *db_exec_params(db *d, const char *sql, int nparams, const char *const *params);

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

PGconn *db_conn(db *d);

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

/* The last error, one line: why the connection was dropped or failed, or why db_begin,
 * db_commit or db_rollback failed (the server's primary message). */
const char *db_error(db *d);

/* The SQLSTATE of a failed result, or "" */
const char *db_sqlstate(const PGresult *res);

/* A result's value at row and column (name the columns: an enum beside the statement):
 * its text (never NULL: "" for SQL NULL), whether it is NULL, and an integer column. */
const char *db_text(const PGresult *res, int row, int column);
bool db_null(const PGresult *res, int row, int column);
long long db_int(const PGresult *res, int row, int column);

#endif
