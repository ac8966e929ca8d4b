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
    unsigned long prepared_gen; /* connection generation it was prepared on; 0 = never */
} db_stmt;

#define DB_STMT(ident, text, n) static db_stmt ident = {#ident, text, n, 0}

typedef struct db db;

/* Opens (lazily) a connection; application_name is shown in pg_stat_activity. */
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

/* Runs a parameterless command (BEGIN, COMMIT, ROLLBACK); true on success. */
bool db_command(db *d, const char *sql);

/* True when the last failed result was a lost connection rather than an SQL error. */
bool db_is_down(db *d);

PGconn *db_conn(db *d);

/* How many connections this db has opened so far (1 after the first; every reconnect
 * adds one). */
unsigned long db_connections(const db *d);

/* The SQLSTATE of a failed result, or "" */
const char *db_sqlstate(const PGresult *r);

#endif
