/* db_async: a connection used without blocking beside db.h's, for a second database
 * read while the first works (the read replica, app/api/catalogue/replica.h) or a statement a loop
 * polls for (market-webhookd's retention pass). Implemented in db.c and
 * db_statements.c. */
#ifndef MARKET_DB_ASYNC_H
#define MARKET_DB_ASYNC_H

#include <stddef.h>

#include "db.h"

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
db_result *db_receive(db *d, int timeout_ms); /* timeout_ms < 0: as long as it takes */

/* The answer to db_send without ever waiting, for a loop that polls db_socket along with
 * other work: reads what arrived, and once the answer is whole gives its result in *res
 * (DB_ANSWERED; the caller db_clears it, and it may be an SQL error). DB_ANSWER_PENDING:
 * not whole yet, look again when the socket is readable. DB_ANSWER_LOST: the connection
 * failed (db_error says why; the caller drops it with db_disconnect). */
typedef enum { DB_ANSWER_PENDING, DB_ANSWERED, DB_ANSWER_LOST } db_answer;
db_answer db_collect(db *d, db_result **res);

/* Asks the server to cancel the statement in flight, without waiting (a statement
 * cancelled this way rolls back). True when it was asked, or there was nothing to ask;
 * false with err set when the request could not be sent. */
bool db_cancel(db *d, char *err, size_t errlen);

#endif
