/* db: transactions (db_begin, db_commit, db_rollback). Without a server only the refusals
 * can be seen ("core"); the "postgres" case (added when unit_database() names one: make
 * admin-test) checks each level, what commit and rollback leave, and every way a commit
 * fails, on a real server. */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "unit.h"

/* Nothing listens on port 1: a connection is refused at once. */
#define NO_SERVER "host=127.0.0.1 port=1 connect_timeout=2"

START_TEST(nothing_to_commit_or_roll_back_without_a_connection)
{
    db *d = db_open(NO_SERVER, "market-unit");
    db_fail_fast(d); /* no log line for the refused connection */
    ck_assert(!db_commit(d));
    ck_assert(!db_rollback(d));
    ck_assert_str_eq(db_error(d), "not connected");
    ck_assert(!db_begin(d, DB_READ_COMMITTED));
    ck_assert(!db_commit(d));
    ck_assert_uint_eq(db_connections(d), 0);
    db_close(d);
}
END_TEST

/* --- through PostgreSQL ---------------------------------------------------------------- */

static db *pg;

static void pg_setup(void)
{
    pg = db_open(unit_database(), "market-unit");
    ck_assert_msg(db_ready(pg), "cannot connect to MARKET_TEST_DB: %s", db_error(pg));
}

static void pg_teardown(void)
{
    db_close(pg);
}

/* The first column of the first row of sql (one parameter or none), in out. */
static void scalar(db *d, const char *sql, const char *param, char *out, size_t outsz)
{
    const char *params[] = {param};
    PGresult *res = db_exec_params(d, sql, param != NULL ? 1 : 0, params);
    ck_assert_ptr_nonnull(res);
    ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK, "%s: %s", sql, PQresultErrorMessage(res));
    ck_assert_int_eq(PQntuples(res), 1);
    snprintf(out, outsz, "%s", PQgetvalue(res, 0, 0));
    PQclear(res);
}

static void command(db *d, const char *sql)
{
    PGresult *res = db_exec_params(d, sql, 0, NULL);
    ck_assert_ptr_nonnull(res);
    ck_assert_msg(PQresultStatus(res) == PGRES_COMMAND_OK, "%s: %s", sql,
                  PQresultErrorMessage(res));
    PQclear(res);
}

static PGTransactionStatusType tx_status(db *d)
{
    return PQtransactionStatus(db_conn(d));
}

START_TEST(pg_each_level_is_the_transactions)
{
    /* Whatever the database's default, each level is the one asked for. */
    command(pg, "SET default_transaction_isolation = 'serializable'");
    static const struct {
        db_isolation level;
        const char *name;
    } levels[] = {{DB_READ_COMMITTED, "read committed"},
                  {DB_REPEATABLE_READ, "repeatable read"},
                  {DB_SERIALIZABLE, "serializable"}};
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        ck_assert(db_begin(pg, levels[i].level));
        ck_assert_int_eq(tx_status(pg), PQTRANS_INTRANS);
        char name[32];
        scalar(pg, "SELECT current_setting('transaction_isolation')", NULL, name, sizeof name);
        ck_assert_str_eq(name, levels[i].name);
        ck_assert(db_commit(pg));
        ck_assert_int_eq(tx_status(pg), PQTRANS_IDLE);
    }
}
END_TEST

START_TEST(pg_commit_keeps_and_rollback_discards)
{
    command(pg, "CREATE TEMP TABLE t (v text)");
    char xid[32], status[32], count[16];

    ck_assert(db_begin(pg, DB_READ_COMMITTED));
    scalar(pg, "SELECT txid_current()::text", NULL, xid, sizeof xid);
    command(pg, "INSERT INTO t VALUES ('kept')");
    ck_assert(db_commit(pg));
    scalar(pg, "SELECT txid_status($1::bigint)", xid, status, sizeof status);
    ck_assert_str_eq(status, "committed");

    ck_assert(db_begin(pg, DB_REPEATABLE_READ));
    scalar(pg, "SELECT txid_current()::text", NULL, xid, sizeof xid);
    command(pg, "INSERT INTO t VALUES ('discarded')");
    ck_assert(db_rollback(pg));
    ck_assert_int_eq(tx_status(pg), PQTRANS_IDLE);
    scalar(pg, "SELECT txid_status($1::bigint)", xid, status, sizeof status);
    ck_assert_str_eq(status, "aborted");

    scalar(pg, "SELECT string_agg(v, ',') FROM t", NULL, count, sizeof count);
    ck_assert_str_eq(count, "kept");
    ck_assert_uint_eq(db_connections(pg), 1);
}
END_TEST

/* COMMIT of a transaction a statement failed in completes, as ROLLBACK: not a commit. */
START_TEST(pg_commit_of_a_failed_transaction_is_refused)
{
    command(pg, "CREATE TEMP TABLE t (v text)");
    ck_assert(db_begin(pg, DB_READ_COMMITTED));
    command(pg, "INSERT INTO t VALUES ('lost')");
    PGresult *res = db_exec_params(pg, "SELECT 1 / 0", 0, NULL);
    ck_assert_int_eq(PQresultStatus(res), PGRES_FATAL_ERROR);
    PQclear(res);
    ck_assert_int_eq(tx_status(pg), PQTRANS_INERROR);
    ck_assert(!db_commit(pg));
    ck_assert_str_eq(db_error(pg), "the transaction was rolled back");
    ck_assert_int_eq(tx_status(pg), PQTRANS_IDLE);
    char count[16];
    scalar(pg, "SELECT count(*) FROM t", NULL, count, sizeof count);
    ck_assert_str_eq(count, "0");
}
END_TEST

/* A deferred constraint is checked by COMMIT itself; its message is db_error's. */
START_TEST(pg_commit_failing_at_commit_says_why)
{
    command(pg, "CREATE TEMP TABLE parent (id int PRIMARY KEY)");
    command(pg, "CREATE TEMP TABLE child (p int REFERENCES parent DEFERRABLE INITIALLY DEFERRED)");
    ck_assert(db_begin(pg, DB_READ_COMMITTED));
    command(pg, "INSERT INTO child VALUES (1)");
    ck_assert(!db_commit(pg));
    ck_assert_msg(strstr(db_error(pg), "violates foreign key constraint") != NULL, "db_error: %s",
                  db_error(pg));
    ck_assert_int_eq(tx_status(pg), PQTRANS_IDLE);
}
END_TEST

START_TEST(pg_commit_without_a_transaction_is_refused)
{
    ck_assert(!db_commit(pg));
    ck_assert_str_eq(db_error(pg), "no transaction in progress");
    ck_assert(db_rollback(pg)); /* none is left open: what a rollback is for */
    ck_assert(db_begin(pg, DB_READ_COMMITTED));
    ck_assert(db_rollback(pg));
    ck_assert(!db_commit(pg));
}
END_TEST

/* Ends pg's session from another one, as a database restart would. */
static void terminate_backend(void)
{
    char pid[16], done[8];
    scalar(pg, "SELECT pg_backend_pid()::text", NULL, pid, sizeof pid);
    db *other = db_open(unit_database(), "market-unit-killer");
    scalar(other, "SELECT pg_terminate_backend($1::int, 5000)", pid, done, sizeof done);
    ck_assert_str_eq(done, "t");
    db_close(other);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The transaction died with its session: a commit on a new one would claim a success. */
START_TEST(pg_commit_after_the_connection_died_never_reconnects)
{
    ck_assert(db_begin(pg, DB_READ_COMMITTED));
    terminate_backend();
    /* A statement of the transaction finds the connection gone, and is not run again on
     * another (db_exec renews only an idle one). */
    ck_assert_ptr_null(db_exec_params(pg, "SELECT 1", 0, NULL));
    ck_assert(db_is_down(pg));
    sleep_ms(DB_RETRY_MS + 50); /* past the delay a reconnection would wait for */
    ck_assert(!db_commit(pg));
    ck_assert_uint_eq(db_connections(pg), 1);
    ck_assert(!db_rollback(pg));
    ck_assert_uint_eq(db_connections(pg), 1);
    /* The next transaction starts on a new session. */
    ck_assert(db_begin(pg, DB_READ_COMMITTED));
    ck_assert_uint_eq(db_connections(pg), 2);
    ck_assert(db_commit(pg));
}
END_TEST

/* market-admin's mode: nothing is renewed, every later call fails. */
START_TEST(pg_fail_fast_begins_nothing_after_the_connection_died)
{
    db_fail_fast(pg);
    ck_assert(db_begin(pg, DB_REPEATABLE_READ));
    terminate_backend();
    ck_assert(!db_commit(pg));
    ck_assert_str_ne(db_error(pg), "");
    sleep_ms(DB_RETRY_MS + 50);
    ck_assert(!db_begin(pg, DB_READ_COMMITTED));
    ck_assert_uint_eq(db_connections(pg), 1);
}
END_TEST

Suite *db_suite(void)
{
    Suite *s = suite_create("db");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, nothing_to_commit_or_roll_back_without_a_connection);
    suite_add_tcase(s, tc);
    if (unit_database() != NULL) {
        TCase *pc = tcase_create("postgres");
        tcase_add_checked_fixture(pc, pg_setup, pg_teardown);
        tcase_set_timeout(pc, 30);
        tcase_add_test(pc, pg_each_level_is_the_transactions);
        tcase_add_test(pc, pg_commit_keeps_and_rollback_discards);
        tcase_add_test(pc, pg_commit_of_a_failed_transaction_is_refused);
        tcase_add_test(pc, pg_commit_failing_at_commit_says_why);
        tcase_add_test(pc, pg_commit_without_a_transaction_is_refused);
        tcase_add_test(pc, pg_commit_after_the_connection_died_never_reconnects);
        tcase_add_test(pc, pg_fail_fast_begins_nothing_after_the_connection_died);
        suite_add_tcase(s, pc);
    }
    return s;
}
