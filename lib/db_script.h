/* db_script: what a command-line tool needs of the database beside db.h (market-admin:
 * migrations, one-off queries, bulk loads), kept apart so that the API's code does not
 * reach for SQL text or COPY by accident. Implemented in db_script.c. */
#ifndef MARKET_DB_SCRIPT_H
#define MARKET_DB_SCRIPT_H

#include "db.h"

/* SQL that is not a prepared statement (db_script.c). db_exec_params runs SQL not worth
 * preparing (a one-off query), with text parameters; NULL when the connection failed,
 * else a result the caller must db_clear. */
db_result *db_exec_params(db *d, const char *sql, int nparams, const char *const *params);

/* Runs trusted SQL of this repository that may hold several statements (a migration), in
 * the simple query protocol; the result of the last statement, or NULL as above. */
db_result *db_exec_script(db *d, const char *sql);

/* Sends such SQL without waiting for it on an open connection (another connection can
 * work meanwhile); db_receive waits for its result. False when the connection failed. */
bool db_send_script(db *d, const char *sql);

/* COPY ... FROM STDIN: db_exec_script runs the COPY statement, whose result is
 * db_copy_started when the server waits for rows; db_copy_put sends rows (text format,
 * any number of bytes; false when the connection failed) and db_copy_end ends them: the
 * COPY's result (the first failure if any), or NULL when the connection failed. */
bool db_copy_put(db *d, const char *data, size_t len);
db_result *db_copy_end(db *d);

/* For a command-line tool: db logs nothing (the tool reports failures itself) and never
 * reconnects once connected, since a new session would silently lose what the old one
 * held (an advisory lock, a transaction); a lost connection fails every later call. */
void db_fail_fast(db *d);

/* COPY FROM STDIN began: the server waits for rows (db_copy_put). */
bool db_copy_started(const db_result *res);

#endif
