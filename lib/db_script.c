/* db_script: SQL that is not a prepared statement, for a command-line tool (market-admin)
 * and one-off queries: a statement with parameters run once, a trusted script of several
 * statements (a migration) in the simple query protocol, a long statement sent on a
 * second connection while the first works (an index build), and COPY FROM STDIN for bulk
 * writes. The programs that serve requests use prepared statements (db_statements.c). */
#include <stdio.h>
#include <string.h>

#include "db_internal.h"

PGresult *db_exec_params(db *d, const char *sql, int nparams, const char *const *params)
{
    if (!db_ready(d))
        return NULL;
    return db_checked(d, PQexecParams(d->conn, sql, nparams, NULL, params, NULL, NULL, 0));
}
PGresult *db_exec_script(db *d, const char *sql)
{
    if (!db_ready(d))
        return NULL;
    return db_checked(d, PQexec(d->conn, sql));
}

bool db_send_script(db *d, const char *sql)
{
    if (!db_conn_up(d))
        return false;
    if (PQsendQuery(d->conn, sql))
        return true;
    d->down = true;
    db_disconnect(d);
    return false;
}

bool db_copy_put(db *d, const char *data, size_t len)
{
    /* libpq takes an int: larger buffers go in parts. */
    while (len > 0) {
        int part = len > (size_t)1 << 30 ? 1 << 30 : (int)len;
        if (d->conn == NULL || PQputCopyData(d->conn, data, part) != 1)
            return false;
        data += part;
        len -= (size_t)part;
    }
    return true;
}

PGresult *db_copy_end(db *d)
{
    if (d->conn == NULL || PQputCopyEnd(d->conn, NULL) != 1)
        return NULL;
    PGresult *kept = NULL, *res;
    while ((res = PQgetResult(d->conn)) != NULL) {
        if (kept == NULL || (db_ok(kept) && !db_ok(res))) {
            PQclear(kept);
            kept = res;
        } else {
            PQclear(res);
        }
    }
    return kept;
}
