/* A thin layer over lib/db for a short-lived tool: every failure is fatal and reported as
 * one line, so commands read as straight sequences of statements. Values always travel
 * as parameters or COPY data, never inside SQL text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin.h"

#define COPY_CHUNK (1 << 20)

db *admin_connect(int needs, market_config *cfg)
{
    char err[512];
    if (!config_load(cfg, needs, err, sizeof err))
        fail("%s", err);
    db *d = db_open(cfg->db, "market-admin");
    db_fail_fast(d); /* a failure is reported once, by fail(), and ends the command */
    if (!db_ready(d))
        fail("cannot connect to the database: %s", db_error(d));
    return d;
}

static const char *primary_message(db *d, const db_result *res)
{
    const char *m = db_primary_message(res);
    return m != NULL ? m : db_error(d);
}

static db_result *checked(db *d, const char *what, db_result *res)
{
    if (!db_ok(res))
        fail("%s: %s", what, primary_message(d, res));
    return res;
}

db_result *sql_run(db *d, const char *what, const char *sql, int nparams, const char *const *params)
{
    return checked(d, what, db_exec_params(d, sql, nparams, params));
}

void sql_do(db *d, const char *what, const char *sql, int nparams, const char *const *params)
{
    db_clear(sql_run(d, what, sql, nparams, params));
}

void sql_begin(db *d, const char *what, db_isolation level)
{
    if (!db_begin(d, level))
        fail("%s: %s", what, db_error(d));
}

void sql_commit(db *d, const char *what)
{
    if (!db_commit(d))
        fail("%s: %s", what, db_error(d));
}

db_result *stmt_run(db *d, db_stmt *s, const char *const *params)
{
    return checked(d, s->name, db_exec(d, s, params));
}

void stmt_do(db *d, db_stmt *s, const char *const *params)
{
    db_clear(stmt_run(d, s, params));
}

void copy_begin(copy_stream *cs, db *d, const char *what, const char *sql)
{
    cs->db = d;
    cs->what = what;
    cs->rows = 0;
    cs->first_field = true;
    buf_init(&cs->data, COPY_CHUNK + 4096);
    db_result *res = db_exec_script(d, sql);
    if (!db_copy_started(res))
        fail("%s: %s", what, primary_message(d, res));
    db_clear(res);
}

static void copy_flush(copy_stream *cs)
{
    if (cs->data.len == 0)
        return;
    if (!db_copy_put(cs->db, cs->data.data, cs->data.len))
        fail("%s: %s", cs->what, db_error(cs->db));
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
    db_result *res = db_copy_end(cs->db);
    if (res == NULL)
        fail("%s: %s", cs->what, db_error(cs->db));
    if (!db_ok(res))
        fail("%s: %s", cs->what, primary_message(cs->db, res));
    db_clear(res);
}
