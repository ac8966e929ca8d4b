/* db_internal: what the files of lib/db share and its callers must not see. lib/db is
 * split by responsibility (db.c: the handle, connecting and the host race; db_statements.c:
 * prepared statements, pipelines, transactions and results; db_notify.c: LISTEN/NOTIFY;
 * db_script.c: SQL that is not a prepared statement, for a tool), but all of them work
 * on one connection: its layout, and the few steps one file takes for another, are here.
 * Only lib/db*.c include this header; nothing else ever sees a PGconn. */
#ifndef MARKET_DB_INTERNAL_H
#define MARKET_DB_INTERNAL_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "db.h"
#include "db_async.h"
#include "db_script.h"
#include "db_hosts.h"

struct db {
    char *conninfo;
    char *application_name;
    PGconn *conn;
    unsigned char *prepared; /* prepared[stmt->id]: prepared on this connection */
    size_t prepared_cap;
    long long last_attempt_ms;
    bool down;
    char *channels[DB_MAX_CHANNELS]; /* LISTENed on every new connection (NULL: none) */
    char *session_sql;               /* the program's own settings for every new session, or NULL */
    char statement_timeout[24];      /* milliseconds as text, "" for the server's default */
    PGresult *prepare_failure; /* why the last db_prepare failed, for the statement's caller */
    unsigned notified;         /* bit i: a notification on channels[i] arrived, or the
                                * connection was renewed */
    int watch_fd;              /* db_watch: whose hang-up cancels the running statement */
    bool watch_fired;          /* it hung up: the statement was cancelled */

    /* A connection being opened without blocking (db_connect_start). */
    bool connecting;
    PostgresPollingStatusType poll_state;
    long long connect_deadline_ms; /* for the host being tried */
    char connect_host[160];        /* that host, "host:port" */

    PGresult *collected; /* db_collect: the first result of the statement in flight */

    db_hosts hosts; /* the conninfo's hosts, one by one */
    bool race;      /* connect to all of them at once (connect_race) */

    char last_error[512]; /* why the last connection was dropped, one line */
    bool fail_fast;       /* a tool: no logging, no reconnecting behind its back */
    bool connected_once;
    unsigned long connections; /* sessions set up so far (db_connections) */
};

/* The connection is open and usable (not being opened without blocking). */
static inline bool db_conn_up(const db *d)
{
    return d->conn != NULL && !d->connecting && PQstatus(d->conn) == CONNECTION_OK;
}

/* db.c */

/* (Re)connects now, with the host race where it applies, and sets the session up; false
 * when that failed (last_error says why). */
bool db_connect(db *d);

/* Keeps libpq's message for db_error, folded to one line. */
void db_keep_error(db *d, const char *message);

/* db_notify.c */

/* LISTENs on the db's channel on the current connection (a new session's setup). */
bool db_listen_session(db *d);

/* db_statements.c */

/* A result as libpq gave it, checked: NULL (the db marked down) when the connection
 * failed or the node turned out to be a standby, else res, whose status may still be an
 * SQL error. */
PGresult *db_checked(db *d, PGresult *res);

#endif
