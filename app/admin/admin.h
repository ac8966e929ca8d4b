/* market-admin: the command-line tool that stands in for the seller dashboard and the
 * payment system (docs/contract.md section 9). One file per command group; this header holds
 * what they share: failing with one line, options, and a thin fail-fast layer over lib/db. */
#ifndef MARKET_ADMIN_H
#define MARKET_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdnoreturn.h>

#include "buf.h"
#include "config.h"
#include "db.h"
#include "db_script.h"

#define EXIT_USAGE 2

/* Prints "market-admin: <message>" on stderr and exits 1 (the transaction, if any, dies
 * with the connection, so a failed command changes nothing). */
noreturn void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The same for a malformed command line: exit status 2. */
noreturn void usage_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --- command line --------------------------------------------------------------------- */

typedef struct {
    const char *name;  /* "--mode" */
    bool flag;         /* takes no value */
    const char *value; /* the value given ("1" for a flag), NULL if absent */
} option;

/* Parses argv[0..argc) into opts ("--name value" or "--name=value") and the remaining
 * positional arguments into pos (at most maxpos). Unknown or repeated options, a missing
 * value and too many positionals are usage errors. Returns the number of positionals. */
int parse_options(const char *command, int argc, char **argv, option *opts, size_t nopts,
                  const char **pos, int maxpos);

/* The value of a required option, or a usage error naming it. */
const char *option_required(const char *command, const option *opt);

/* "test" or "live", else a usage error. */
const char *parse_mode(const char *command, const char *text);

/* A decimal integer from min to max, else a usage error naming the option. */
long parse_count(const char *command, const char *name, const char *text, long min, long max);

/* --- database ------------------------------------------------------------------------- */

/* Loads the MARKET_* configuration (needs: CONFIG_NEED_* flags) and connects to
 * MARKET_DB through lib/db (its defaults, session settings and one-line notices). Fails
 * with one line if either is impossible. db_close ends the session. */
db *admin_connect(int needs, market_config *cfg);

/* Runs parameterised SQL; any result but rows or a completed command is fatal, reported
 * as "<what>: <the server's primary message>". The caller db_clears the result. */
db_result *sql_run(db *d, const char *what, const char *sql, int nparams,
                   const char *const *params);

/* sql_run for statements whose result is not needed. */
void sql_do(db *d, const char *what, const char *sql, int nparams, const char *const *params);

/* Transactions (lib/db): a failure is fatal, reported as "<what>: <why>", as for sql_run.
 * A command that fails before sql_commit changes nothing: its transaction dies with the
 * connection when the tool exits. */
void sql_begin(db *d, const char *what, db_isolation level);
void sql_commit(db *d, const char *what);

/* SQL for a timestamptz column as RFC 3339 text in UTC with Z (NULL stays NULL). */
#define SQL_RFC3339(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

/* The output of every list command (table.c), on stdout. As text: a header row of the
 * column names, then a row per line, columns separated by tabs, NULL as "-", a json
 * column holding an array of strings as its items joined by commas. With --json
 * (as_json): one JSON array of objects keyed by the column names, each value typed by its
 * SQL type (integers, booleans, json as itself, NULL as null, the rest strings). */
void print_table(const db_result *res, bool as_json);

/* The same for the first nrows rows of res only. */
void print_table_rows(const db_result *res, bool as_json, int nrows);

/* A statement run many times is a db_stmt (DB_STMT, lib/db.h), prepared on first use on
 * the connection; any result but rows or a completed command is fatal, as for sql_run. */
db_result *stmt_run(db *d, db_stmt *s, const char *const *params);
void stmt_do(db *d, db_stmt *s, const char *const *params);

/* COPY ... FROM STDIN in text format. Rows are appended to a buffer with copy_field /
 * copy_row_end and sent in large chunks, so the server parses while we generate. */
typedef struct {
    db *db;
    const char *what;
    buf data;
    long rows;
    bool first_field; /* no field yet in the current row */
} copy_stream;

void copy_begin(copy_stream *cs, db *d, const char *what, const char *sql);
void copy_field(copy_stream *cs, const char *text); /* NULL writes \N */
void copy_field_long(copy_stream *cs, long long v);
void copy_row_end(copy_stream *cs);
void copy_end(copy_stream *cs); /* sends the rest and checks the server's verdict */

/* --- commands ------------------------------------------------------------------------- */

int cmd_migrate(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_seed(int argc, char **argv);
int cmd_key(int argc, char **argv);
int cmd_webhooks(int argc, char **argv); /* subscriptions.c */
int cmd_refund(int argc, char **argv);
int cmd_payout(int argc, char **argv);
int cmd_deliveries(int argc, char **argv);
int cmd_redeliver(int argc, char **argv);
int cmd_site(int argc, char **argv); /* site.c */

#endif
