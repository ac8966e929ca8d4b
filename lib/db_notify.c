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
    for (int i = 0; i < DB_MAX_CHANNELS && d->channels[i] != NULL; i++) {
        char *ident = PQescapeIdentifier(d->conn, d->channels[i], strlen(d->channels[i]));
        if (ident == NULL)
            return false;
        char sql[128];
        snprintf(sql, sizeof sql, "LISTEN %s", ident);
        PQfreemem(ident);
        PGresult *res = PQexec(d->conn, sql);
        bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
        if (!ok)
            log_error("LISTEN %s failed: %s", d->channels[i], PQerrorMessage(d->conn));
        PQclear(res);
        if (!ok)
            return false;
    }
    return true;
}

/* The index of channel among those listened on, or -1. */
static int channel_index(const db *d, const char *channel)
{
    for (int i = 0; i < DB_MAX_CHANNELS && d->channels[i] != NULL; i++)
        if (strcmp(d->channels[i], channel) == 0)
            return i;
    return -1;
}

void db_listen(db *d, const char *channel)
{
    if (channel_index(d, channel) >= 0)
        return;
    int i = 0;
    while (i < DB_MAX_CHANNELS && d->channels[i] != NULL)
        i++;
    if (i == DB_MAX_CHANNELS) { /* a programming error: the programs listen on constants */
        log_error("db_listen %s: more than %d channels", channel, DB_MAX_CHANNELS);
        abort();
    }
    d->channels[i] = xstrdup(channel);
    /* A session open already listens from its next connection on: start it again now. */
    if (d->conn != NULL && PQstatus(d->conn) == CONNECTION_OK && !db_listen_session(d))
        d->down = true;
    d->notified |= 1u << i;
}

bool db_notified(db *d, const char *channel)
{
    /* libpq queues the notifications it meets while reading results; the server sends
     * them before the answer to any later statement, so no extra read is needed here. */
    if (d->conn != NULL) {
        PGnotify *n;
        while ((n = PQnotifies(d->conn)) != NULL) {
            int i = channel_index(d, n->relname);
            if (i >= 0)
                d->notified |= 1u << i;
            PQfreemem(n);
        }
    }
    int i = channel_index(d, channel);
    if (i < 0)
        return false;
    bool was = (d->notified >> i) & 1u;
    d->notified &= ~(1u << i);
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
    /* It broke while idle, as db_exec finds a connection that did: nothing ran on it, so
     * the next statement connects at once instead of waiting out DB_RETRY_MS. */
    d->last_attempt_ms = 0;
    return false;
}