/* db_notify: LISTEN/NOTIFY. A process that caches what the database holds (the API's
 * pages) or waits for work (the drainer's outbox) listens on a channel on every session
 * the db opens, and asks whether anything was notified since it last looked; the drainer
 * also waits on the connection's socket between statements. Kept apart from statements
 * because it is about what arrives unasked, and from connecting because a renewed
 * session counts as a notification (what was sent meanwhile is lost). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_internal.h"
#include "log.h"
#include "mem.h"

bool db_listen_session(db *d)
{
    char *ident = PQescapeIdentifier(d->conn, d->listen_channel, strlen(d->listen_channel));
    if (ident == NULL)
        return false;
    char sql[128];
    snprintf(sql, sizeof sql, "LISTEN %s", ident);
    PQfreemem(ident);
    PGresult *res = PQexec(d->conn, sql);
    bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    if (!ok)
        log_error("LISTEN %s failed: %s", d->listen_channel, PQerrorMessage(d->conn));
    PQclear(res);
    return ok;
}

void db_listen(db *d, const char *channel)
{
    free(d->listen_channel);
    d->listen_channel = xstrdup(channel);
    if (d->conn != NULL && PQstatus(d->conn) == CONNECTION_OK && !db_listen_session(d))
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

int db_socket(db *d)
{
    return d->conn != NULL && !d->connecting ? PQsocket(d->conn) : -1;
}

bool db_consume(db *d)
{
    if (d->conn == NULL || d->connecting)
        return false;
    if (PQconsumeInput(d->conn) && PQstatus(d->conn) == CONNECTION_OK)
        return true;
    if (!d->down && !d->fail_fast)
        log_error("database connection lost: %s", PQerrorMessage(d->conn));
    d->down = true;
    db_disconnect(d);
    return false;
}