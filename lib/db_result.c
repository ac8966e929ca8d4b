/* db_result: a statement's values both ways: its parameters written as PostgreSQL reads
 * them, and its result read, the one place outside the connection's code that touches
 * libpq's PGresult, so that callers see db_result as an opaque type (db.h).
 * A cell is libpq's own text, never copied; integers are read by hand because a
 * catalogue page reads hundreds of them and strtoll's generality is not needed. */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>

#include "db.h"

bool db_ok(const db_result *res)
{
    ExecStatusType st = PQresultStatus(res); /* PGRES_FATAL_ERROR for NULL */
    return st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK;
}

int db_rows(const db_result *res)
{
    return PQntuples(res);
}

long long db_affected(db_result *res)
{
    return strtoll(PQcmdTuples(res), NULL, 10);
}

const char *db_message(const db_result *res)
{
    return PQresultErrorMessage(res);
}

const char *db_primary_message(const db_result *res)
{
    return res != NULL ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
}

const char *db_text(const db_result *res, int row, int column)
{
    return PQgetvalue(res, row, column);
}

bool db_null(const db_result *res, int row, int column)
{
    return PQgetisnull(res, row, column);
}

size_t db_length(const db_result *res, int row, int column)
{
    return (size_t)PQgetlength(res, row, column);
}

/* As PostgreSQL writes integers ("-12"); SQL NULL reads as 0. */
long long db_int(const db_result *res, int row, int column)
{
    const char *s = PQgetvalue(res, row, column);
    bool negative = *s == '-';
    unsigned long long magnitude = 0;
    for (s += negative; *s >= '0' && *s <= '9'; s++)
        magnitude = magnitude * 10 + (unsigned long long)(*s - '0');
    return negative ? (long long)(0 - magnitude) : (long long)magnitude;
}

/* PostgreSQL writes a boolean as "t" or "f"; SQL NULL reads as false. */
bool db_bool(const db_result *res, int row, int column)
{
    return PQgetvalue(res, row, column)[0] == 't';
}

/* SQL NULL reads as 0. */
double db_double(const db_result *res, int row, int column)
{
    return strtod(PQgetvalue(res, row, column), NULL);
}

int db_columns(const db_result *res)
{
    return PQnfields(res);
}

const char *db_column_name(const db_result *res, int column)
{
    return PQfname(res, column);
}

unsigned db_column_type(const db_result *res, int column)
{
    return PQftype(res, column);
}

bool db_copy_started(const db_result *res)
{
    return PQresultStatus(res) == PGRES_COPY_IN;
}

void db_clear(db_result *res)
{
    PQclear(res);
}

const char *db_arg_int(db_arg *arg, long long value)
{
    snprintf(arg->text, sizeof arg->text, "%lld", value);
    return arg->text;
}

const char *db_arg_bool(bool value)
{
    return value ? "true" : "false";
}
