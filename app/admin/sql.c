/* A thin layer over libpq for a short-lived tool: every failure is fatal and reported as
 * one line, so commands read as straight sequences of statements. Values always travel
 * as parameters or COPY data, never inside SQL text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin.h"

#define COPY_CHUNK (1 << 20)

/* Server notices (CREATE TABLE IF NOT EXISTS and the like) are not errors and would
 * break the one-line-on-stderr rule. */
static void ignore_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

PGconn *admin_connect(int needs, market_config *cfg)
{
    char err[512];
    if (!config_load(cfg, needs, err, sizeof err))
        fail("%s", err);
    /* Defaults first; keywords inside MARKET_DB (expanded from dbname) override them. */
    const char *keys[] = {"application_name", "connect_timeout", "dbname", NULL};
    const char *values[] = {"market-admin", "10", cfg->db, NULL};
    PGconn *c = PQconnectdbParams(keys, values, 1);
    if (c == NULL || PQstatus(c) != CONNECTION_OK)
        fail("cannot connect to the database: %s", c != NULL ? PQerrorMessage(c) : "no memory");
    PQsetNoticeProcessor(c, ignore_notice, NULL);
    return c;
}

static const char *primary_message(PGconn *c, const PGresult *r)
{
    const char *m = r != NULL ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    return m != NULL ? m : PQerrorMessage(c);
}

static PGresult *checked(PGconn *c, const char *what, PGresult *r)
{
    ExecStatusType st = r != NULL ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK)
        fail("%s: %s", what, primary_message(c, r));
    return r;
}

PGresult *sql_run(PGconn *c, const char *what, const char *sql, int nparams,
                  const char *const *params)
{
    return checked(c, what, PQexecParams(c, sql, nparams, NULL, params, NULL, NULL, 0));
}

void sql_do(PGconn *c, const char *what, const char *sql, int nparams, const char *const *params)
{
    PQclear(sql_run(c, what, sql, nparams, params));
}

PGresult *stmt_run(PGconn *c, admin_stmt *s, const char *const *params)
{
    if (!s->prepared) {
        PQclear(checked(c, s->name, PQprepare(c, s->name, s->sql, s->nparams, NULL)));
        s->prepared = true;
    }
    return checked(c, s->name, PQexecPrepared(c, s->name, s->nparams, params, NULL, NULL, 0));
}

void stmt_do(PGconn *c, admin_stmt *s, const char *const *params)
{
    PQclear(stmt_run(c, s, params));
}

void copy_begin(copy_stream *cs, PGconn *c, const char *what, const char *sql)
{
    cs->conn = c;
    cs->what = what;
    cs->rows = 0;
    cs->first_field = true;
    buf_init(&cs->data, COPY_CHUNK + 4096);
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_COPY_IN)
        fail("%s: %s", what, primary_message(c, r));
    PQclear(r);
}

static void copy_flush(copy_stream *cs)
{
    if (cs->data.len == 0)
        return;
    if (PQputCopyData(cs->conn, cs->data.data, (int)cs->data.len) != 1)
        fail("%s: %s", cs->what, PQerrorMessage(cs->conn));
    buf_clear(&cs->data);
}

/* COPY text format: backslash, and the row and column separators, are escaped. */
void copy_field(copy_stream *cs, const char *text)
{
    if (!cs->first_field)
        buf_putc(&cs->data, '\t');
    cs->first_field = false;
    if (text == NULL) {
        buf_puts(&cs->data, "\\N");
        return;
    }
    const char *run = text;
    for (const char *p = text; *p != '\0'; p++) {
        const char *esc = *p == '\\'   ? "\\\\"
                          : *p == '\t' ? "\\t"
                          : *p == '\n' ? "\\n"
                          : *p == '\r' ? "\\r"
                                       : NULL;
        if (esc == NULL)
            continue;
        buf_append(&cs->data, run, (size_t)(p - run));
        buf_puts(&cs->data, esc);
        run = p + 1;
    }
    buf_puts(&cs->data, run);
}

void copy_field_long(copy_stream *cs, long long v)
{
    char text[24];
    snprintf(text, sizeof text, "%lld", v);
    copy_field(cs, text);
}

void copy_row_end(copy_stream *cs)
{
    buf_putc(&cs->data, '\n');
    cs->first_field = true;
    cs->rows++;
    if (cs->data.len >= COPY_CHUNK)
        copy_flush(cs);
}

void copy_end(copy_stream *cs)
{
    copy_flush(cs);
    buf_free(&cs->data);
    if (PQputCopyEnd(cs->conn, NULL) != 1)
        fail("%s: %s", cs->what, PQerrorMessage(cs->conn));
    PGresult *r;
    while ((r = PQgetResult(cs->conn)) != NULL) {
        if (PQresultStatus(r) != PGRES_COMMAND_OK)
            fail("%s: %s", cs->what, primary_message(cs->conn, r));
        PQclear(r);
    }
}

void print_rows(const PGresult *r)
{
    for (int i = 0; i < PQntuples(r); i++) {
        for (int col = 0; col < PQnfields(r); col++)
            printf("%s%s", col > 0 ? "\t" : "", PQgetvalue(r, i, col));
        putchar('\n');
    }
}
