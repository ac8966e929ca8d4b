/* db: transactions (db_begin, db_commit, db_rollback) and the race between the hosts of a
 * multi-host conninfo. Without a server only the refusals and the hosts that never answer
 * can be seen ("core"); the "postgres" case (added when unit_database() names one: make
 * admin-test) checks each level, what commit and rollback leave, every way a commit
 * fails, a race won by a real server, a statement collected by polling and one cancelled,
 * a tool's scripts and COPY, on a real server. */
#include <arpa/inet.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "db_async.h"
#include "db_script.h"
#include "db_hosts.h"
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

/* The calls that act on the current connection only do nothing without one. */
START_TEST(nothing_to_collect_cancel_or_copy_without_a_connection)
{
    db *d = db_open(NO_SERVER, "market-unit");
    db_fail_fast(d);
    ck_assert(!db_has_connection(d));
    ck_assert_int_eq(db_transaction(d), DB_TX_NONE);
    ck_assert_ptr_null(db_server_param(d, "is_superuser"));
    char err[64];
    ck_assert(db_cancel(d, err, sizeof err)); /* nothing to cancel */
    db_result *res;
    ck_assert_int_eq(db_collect(d, &res), DB_ANSWER_LOST);
    ck_assert_ptr_null(res);
    ck_assert(!db_send_script(d, "SELECT 1"));
    ck_assert(!db_copy_put(d, "x\n", 2));
    ck_assert_ptr_null(db_copy_end(d));
    ck_assert_uint_eq(db_connections(d), 0);
    db_close(d);
}
END_TEST

static long long elapsed_ms(const struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000LL + (now.tv_nsec - since->tv_nsec) / 1000000;
}

/* A host that never answers, as one cut off from the network looks to libpq: the kernel
 * completes the TCP handshake on a listening socket that nobody accepts from, and the
 * startup message then waits for an answer that never comes. Returns the socket; its
 * port in *port. */
static int silent_host(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(fd, 8), 0);
    socklen_t len = sizeof a;
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

/* How many times needle occurs in haystack. */
static int occurrences(const char *haystack, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(haystack, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Opens conninfo (no log lines: fail_fast), whose connection must fail; how long the
 * attempt took in *ms. */
static db *fail_to_connect(const char *conninfo, long long *ms)
{
    db *d = db_open(conninfo, "market-unit");
    db_fail_fast(d);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert(!db_ready(d));
    *ms = elapsed_ms(&t0);
    return d;
}

/* libpq would wait out each silent host's connect_timeout in turn (4 s here); the race
 * waits for both at once, and says of each why it gave up. */
START_TEST(silent_hosts_are_waited_for_together_not_in_turn)
{
    int p1, p2;
    int s1 = silent_host(&p1), s2 = silent_host(&p2);
    char conninfo[200];
    snprintf(conninfo, sizeof conninfo,
             "host=127.0.0.1,127.0.0.1 port=%d,%d connect_timeout=2 "
             "target_session_attrs=read-write",
             p1, p2);
    long long ms;
    db *d = fail_to_connect(conninfo, &ms);
    ck_assert_msg(ms >= 1900 && ms < 3500, "gave up after %lld ms", ms);
    ck_assert_int_eq(occurrences(db_error(d), "timeout expired"), 2);
    ck_assert_uint_eq(db_connections(d), 0);
    db_close(d);
    close(s1);
    close(s2);
}
END_TEST

/* Hosts that refuse leave nothing to wait for: the race is lost at once. */
START_TEST(refusing_hosts_lose_the_race_at_once)
{
    long long ms;
    db *d = fail_to_connect("host=127.0.0.1,127.0.0.1 port=1,1 connect_timeout=10 "
                            "target_session_attrs=read-write",
                            &ms);
    ck_assert_msg(ms < 1000, "gave up after %lld ms", ms);
    ck_assert_int_eq(occurrences(db_error(d), "Connection refused"), 2);
    db_close(d);
}
END_TEST

/* A refusing host is tried again while a silent one is waited for (a standby may be
 * promoted meanwhile); the error names both, each with its own reason. */
START_TEST(silent_and_refusing_hosts_are_each_reported)
{
    int p;
    int s = silent_host(&p);
    char conninfo[200];
    snprintf(conninfo, sizeof conninfo,
             "host=127.0.0.1,127.0.0.1 port=%d,1 connect_timeout=2 "
             "target_session_attrs=primary",
             p);
    long long ms;
    db *d = fail_to_connect(conninfo, &ms);
    ck_assert_msg(ms >= 1900 && ms < 3500, "gave up after %lld ms", ms);
    const char *why = db_error(d);
    char silent[64];
    snprintf(silent, sizeof silent, "port %d failed: timeout expired", p);
    ck_assert_msg(strstr(why, silent) != NULL, "%s", why);
    ck_assert_msg(strstr(why, "port 1 failed: Connection refused") != NULL, "%s", why);
    db_close(d);
    close(s);
}
END_TEST

/* --- through PostgreSQL ---------------------------------------------------------------- */

static db *server;

static void pg_setup(void)
{
    server = db_open(unit_database(), "market-unit");
    ck_assert_msg(db_ready(server), "cannot connect to MARKET_TEST_DB: %s", db_error(server));
}

static void pg_teardown(void)
{
    db_close(server);
}

/* The first column of the first row of sql (one parameter or none), in out. */
static void scalar(db *d, const char *sql, const char *param, char *out, size_t outsz)
{
    const char *params[] = {param};
    db_result *res = db_exec_params(d, sql, param != NULL ? 1 : 0, params);
    ck_assert_ptr_nonnull(res);
    ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK, "%s: %s", sql, db_message(res));
    ck_assert_int_eq(db_rows(res), 1);
    snprintf(out, outsz, "%s", db_text(res, 0, 0));
    db_clear(res);
}

static void command(db *d, const char *sql)
{
    db_result *res = db_exec_params(d, sql, 0, NULL);
    ck_assert_ptr_nonnull(res);
    ck_assert_msg(PQresultStatus(res) == PGRES_COMMAND_OK, "%s: %s", sql, db_message(res));
    db_clear(res);
}

START_TEST(pg_each_level_is_the_transactions)
{
    /* Whatever the database's default, each level is the one asked for. */
    command(server, "SET default_transaction_isolation = 'serializable'");
    static const struct {
        db_isolation level;
        const char *name;
    } levels[] = {{DB_READ_COMMITTED, "read committed"},
                  {DB_REPEATABLE_READ, "repeatable read"},
                  {DB_SERIALIZABLE, "serializable"}};
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        ck_assert(db_begin(server, levels[i].level));
        ck_assert_int_eq(db_transaction(server), DB_TX_OPEN);
        char name[32];
        scalar(server, "SELECT current_setting('transaction_isolation')", NULL, name, sizeof name);
        ck_assert_str_eq(name, levels[i].name);
        ck_assert(db_commit(server));
        ck_assert_int_eq(db_transaction(server), DB_TX_IDLE);
    }
}
END_TEST

START_TEST(pg_commit_keeps_and_rollback_discards)
{
    command(server, "CREATE TEMP TABLE t (v text)");
    char xid[32], status[32], count[16];

    ck_assert(db_begin(server, DB_READ_COMMITTED));
    scalar(server, "SELECT txid_current()::text", NULL, xid, sizeof xid);
    command(server, "INSERT INTO t VALUES ('kept')");
    ck_assert(db_commit(server));
    scalar(server, "SELECT txid_status($1::bigint)", xid, status, sizeof status);
    ck_assert_str_eq(status, "committed");

    ck_assert(db_begin(server, DB_REPEATABLE_READ));
    scalar(server, "SELECT txid_current()::text", NULL, xid, sizeof xid);
    command(server, "INSERT INTO t VALUES ('discarded')");
    ck_assert(db_rollback(server));
    ck_assert_int_eq(db_transaction(server), DB_TX_IDLE);
    scalar(server, "SELECT txid_status($1::bigint)", xid, status, sizeof status);
    ck_assert_str_eq(status, "aborted");

    scalar(server, "SELECT string_agg(v, ',') FROM t", NULL, count, sizeof count);
    ck_assert_str_eq(count, "kept");
    ck_assert_uint_eq(db_connections(server), 1);
}
END_TEST

/* COMMIT of a transaction a statement failed in completes, as ROLLBACK: not a commit. */
START_TEST(pg_commit_of_a_failed_transaction_is_refused)
{
    command(server, "CREATE TEMP TABLE t (v text)");
    ck_assert(db_begin(server, DB_READ_COMMITTED));
    command(server, "INSERT INTO t VALUES ('lost')");
    db_result *res = db_exec_params(server, "SELECT 1 / 0", 0, NULL);
    ck_assert_int_eq(PQresultStatus(res), PGRES_FATAL_ERROR);
    db_clear(res);
    ck_assert_int_eq(db_transaction(server), DB_TX_FAILED);
    ck_assert(!db_commit(server));
    ck_assert_str_eq(db_error(server), "the transaction was rolled back");
    ck_assert_int_eq(db_transaction(server), DB_TX_IDLE);
    char count[16];
    scalar(server, "SELECT count(*) FROM t", NULL, count, sizeof count);
    ck_assert_str_eq(count, "0");
}
END_TEST

/* A deferred constraint is checked by COMMIT itself; its message is db_error's. */
START_TEST(pg_commit_failing_at_commit_says_why)
{
    command(server, "CREATE TEMP TABLE parent (id int PRIMARY KEY)");
    command(server,
            "CREATE TEMP TABLE child (p int REFERENCES parent DEFERRABLE INITIALLY DEFERRED)");
    ck_assert(db_begin(server, DB_READ_COMMITTED));
    command(server, "INSERT INTO child VALUES (1)");
    ck_assert(!db_commit(server));
    ck_assert_msg(strstr(db_error(server), "violates foreign key constraint") != NULL,
                  "db_error: %s", db_error(server));
    ck_assert_int_eq(db_transaction(server), DB_TX_IDLE);
}
END_TEST

START_TEST(pg_commit_without_a_transaction_is_refused)
{
    ck_assert(!db_commit(server));
    ck_assert_str_eq(db_error(server), "no transaction in progress");
    ck_assert(db_rollback(server)); /* none is left open: what a rollback is for */
    ck_assert(db_begin(server, DB_READ_COMMITTED));
    ck_assert(db_rollback(server));
    ck_assert(!db_commit(server));
}
END_TEST

/* Ends server's session from another one, as a database restart would. */
static void terminate_backend(void)
{
    char pid[16], done[8];
    scalar(server, "SELECT pg_backend_pid()::text", NULL, pid, sizeof pid);
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
    ck_assert(db_begin(server, DB_READ_COMMITTED));
    terminate_backend();
    /* A statement of the transaction finds the connection gone, and is not run again on
     * another (db_exec renews only an idle one). */
    ck_assert_ptr_null(db_exec_params(server, "SELECT 1", 0, NULL));
    ck_assert(db_is_down(server));
    sleep_ms(DB_RETRY_MS + 50); /* past the delay a reconnection would wait for */
    ck_assert(!db_commit(server));
    ck_assert_uint_eq(db_connections(server), 1);
    ck_assert(!db_rollback(server));
    ck_assert_uint_eq(db_connections(server), 1);
    /* The next transaction starts on a new session. */
    ck_assert(db_begin(server, DB_READ_COMMITTED));
    ck_assert_uint_eq(db_connections(server), 2);
    ck_assert(db_commit(server));
}
END_TEST

/* market-admin's mode: nothing is renewed, every later call fails. */
START_TEST(pg_fail_fast_begins_nothing_after_the_connection_died)
{
    db_fail_fast(server);
    ck_assert(db_begin(server, DB_REPEATABLE_READ));
    terminate_backend();
    ck_assert(!db_commit(server));
    ck_assert_str_ne(db_error(server), "");
    sleep_ms(DB_RETRY_MS + 50);
    ck_assert(!db_begin(server, DB_READ_COMMITTED));
    ck_assert_uint_eq(db_connections(server), 1);
}
END_TEST

/* Connects to unit_database() with a silent host listed before its own, under target
 * (target_session_attrs); returns the connection, how long it took in *ms, and the silent
 * host's socket in *silent (to close when done). */
static db *connect_behind_a_silent_host(const char *target, long long *ms, int *silent)
{
    db_hosts h;
    ck_assert(db_hosts_parse(unit_database(), &h));
    ck_assert_int_eq(h.n, 1);
    ck_assert_str_ne(h.host[0].host, "");
    ck_assert_str_ne(h.host[0].port, "");
    int port;
    *silent = silent_host(&port);
    char conninfo[512];
    snprintf(conninfo, sizeof conninfo,
             "%s host=127.0.0.1,%s port=%d,%s connect_timeout=2 target_session_attrs=%s",
             unit_database(), h.host[0].host, port, h.host[0].port, target);
    db *d = db_open(conninfo, "market-unit");
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_msg(db_ready(d), "%s", db_error(d));
    *ms = elapsed_ms(&t0);
    return d;
}

/* A primary cut off from the network costs a new connection nothing: the other host
 * answers while the first is still being waited for. */
START_TEST(pg_a_host_that_never_answers_holds_the_race_back_by_nothing)
{
    long long ms;
    int silent;
    db *d = connect_behind_a_silent_host("read-write", &ms, &silent);
    ck_assert_msg(ms < 1000, "connected after %lld ms", ms);
    char x[16];
    scalar(d, "SELECT 6 * 7", NULL, x, sizeof x);
    ck_assert_str_eq(x, "42");
    ck_assert_uint_eq(db_connections(d), 1);
    db_close(d);
    close(silent);
}
END_TEST

/* Where the order of the list means something (any: the first host that answers), libpq
 * keeps it: the silent host's timeout is waited out before the next is tried. */
START_TEST(pg_without_a_write_target_the_list_is_tried_in_order)
{
    long long ms;
    int silent;
    db *d = connect_behind_a_silent_host("any", &ms, &silent);
    ck_assert_msg(ms >= 1900, "connected after %lld ms", ms);
    db_close(d);
    close(silent);
}
END_TEST

/* A pipeline of more statements than db keeps room for on the stack, one of which cannot
 * be prepared: that one's result is the prepare's failure, the others run. */
static db_stmt pipe_ok = {"pipe_ok", "SELECT $1::int + 1", 1, 0};
static db_stmt pipe_bad = {"pipe_bad", "SELECT x FROM no_such_table_here", 0, 0};

START_TEST(pg_a_pipeline_of_many_with_a_statement_that_cannot_be_prepared)
{
    enum { N = 12, BAD = 5 };
    db_stmt *stmts[N];
    const char *values[N][1];
    char text[N][8];
    const char *const *params[N];
    for (int i = 0; i < N; i++) {
        stmts[i] = i == BAD ? &pipe_bad : &pipe_ok;
        snprintf(text[i], sizeof text[i], "%d", i);
        values[i][0] = text[i];
        params[i] = i == BAD ? NULL : values[i];
    }
    db_result *out[N];
    ck_assert(db_exec_pipeline(server, N, stmts, params, out));
    for (int i = 0; i < N; i++) {
        ck_assert_ptr_nonnull(out[i]);
        if (i == BAD) {
            ck_assert_int_eq(PQresultStatus(out[i]), PGRES_FATAL_ERROR);
            ck_assert_str_eq(db_sqlstate(out[i]), "42P01"); /* undefined_table */
        } else {
            ck_assert_int_eq(PQresultStatus(out[i]), PGRES_TUPLES_OK);
            ck_assert_int_eq(strtol(db_text(out[i], 0, 0), NULL, 10), i + 1);
        }
        db_clear(out[i]);
    }
    /* The connection is fine afterwards, and so is the statement alone. */
    db_result *res = db_exec(server, &pipe_bad, NULL);
    ck_assert_ptr_nonnull(res);
    ck_assert_str_eq(db_sqlstate(res), "42P01");
    db_clear(res);
    const char *one[1] = {"41"};
    res = db_exec(server, &pipe_ok, one);
    ck_assert_int_eq(strtol(db_text(res, 0, 0), NULL, 10), 42);
    db_clear(res);
}
END_TEST

/* A statement past the session's statement_timeout fails with DB_STATEMENT_TIMEOUT. */
static db_stmt slow_stmt = {"slow_stmt", "SELECT pg_sleep(1)", 0, 0};

START_TEST(pg_a_statement_past_the_timeout_fails_with_its_sqlstate)
{
    db *d = db_open(unit_database(), "market-unit-timeout");
    db_set_statement_timeout(d, 100);
    db_result *res = db_exec(d, &slow_stmt, NULL);
    ck_assert_ptr_nonnull(res);
    ck_assert_str_eq(db_sqlstate(res), DB_STATEMENT_TIMEOUT);
    db_clear(res);
    char value[32];
    scalar(d, "SELECT current_setting('idle_in_transaction_session_timeout')", NULL, value,
           sizeof value);
    ck_assert_str_eq(value, "100ms");
    db_close(d);
}
END_TEST

/* A connection set up like another (the replica reader's, like the primary's) gets its
 * statement timeout and its session settings. */
START_TEST(pg_a_copied_session_has_the_same_timeout_and_settings)
{
    db *primary = db_open(unit_database(), "market-unit-primary");
    db_set_statement_timeout(primary, 250);
    db_set_session(primary, "SET plan_cache_mode = force_generic_plan");
    db *copy = db_open(unit_database(), "market-unit-copy");
    db_copy_session(copy, primary);
    char value[32];
    scalar(copy, "SELECT current_setting('statement_timeout')", NULL, value, sizeof value);
    ck_assert_str_eq(value, "250ms");
    scalar(copy, "SELECT current_setting('plan_cache_mode')", NULL, value, sizeof value);
    ck_assert_str_eq(value, "force_generic_plan");
    db_close(copy);
    db_close(primary);
}
END_TEST

/* A statement sent, then collected by polling (retention's way), and one cancelled while
 * it runs: its answer is the cancellation, and the session goes on. */
static db_stmt poll_long = {"poll_long", "SELECT pg_sleep(30)", 0, 0};
static db_stmt poll_short = {"poll_short", "SELECT 40 + 2", 0, 0};

static db_result *collect_all(db *d)
{
    db_result *res = NULL;
    db_answer a;
    while ((a = db_collect(d, &res)) == DB_ANSWER_PENDING) {
        struct pollfd p = {.fd = db_socket(d), .events = POLLIN};
        ck_assert_int_ge(poll(&p, 1, 5000), 1);
    }
    ck_assert_int_eq(a, DB_ANSWERED);
    return res;
}

START_TEST(pg_a_polled_statement_is_collected_and_can_be_cancelled)
{
    ck_assert(db_send(server, &poll_short, NULL));
    db_result *res = collect_all(server);
    ck_assert(db_ok(res));
    ck_assert_int_eq(db_int(res, 0, 0), 42);
    db_clear(res);

    ck_assert(db_send(server, &poll_long, NULL));
    ck_assert_int_eq(db_collect(server, &res), DB_ANSWER_PENDING);
    char err[256];
    ck_assert_msg(db_cancel(server, err, sizeof err), "%s", err);
    res = collect_all(server);
    ck_assert(!db_ok(res));
    ck_assert_str_eq(db_sqlstate(res), "57014"); /* query_canceled */
    db_clear(res);
    ck_assert_int_eq(db_transaction(server), DB_TX_IDLE);
    ck_assert_uint_eq(db_connections(server), 1);
}
END_TEST

/* A tool's SQL: a script of several statements, one sent while another connection works,
 * and COPY FROM STDIN, its rows counted and a bad row's failure reported. */
START_TEST(pg_scripts_and_copy_run_as_a_tool_needs)
{
    db_result *res = db_exec_script(server, "CREATE TEMP TABLE c (n int); SELECT 7");
    ck_assert_msg(db_ok(res), "%s", db_message(res));
    ck_assert_int_eq(db_int(res, 0, 0), 7); /* the last statement's result */
    db_clear(res);

    res = db_exec_script(server, "COPY c FROM STDIN");
    ck_assert(db_copy_started(res));
    db_clear(res);
    ck_assert(db_copy_put(server, "1\n2\n", 4));
    ck_assert(db_copy_put(server, "3\n", 2));
    res = db_copy_end(server);
    ck_assert_msg(db_ok(res), "%s", db_message(res));
    ck_assert_int_eq(db_affected(res), 3);
    db_clear(res);

    res = db_exec_script(server, "COPY c FROM STDIN");
    ck_assert(db_copy_started(res));
    db_clear(res);
    ck_assert(db_copy_put(server, "four\n", 5));
    res = db_copy_end(server);
    ck_assert(!db_ok(res));
    ck_assert_ptr_nonnull(strstr(db_primary_message(res), "invalid input syntax"));
    db_clear(res);

    ck_assert(db_send_script(server, "SELECT count(*) FROM c"));
    res = db_receive(server, -1);
    ck_assert(db_ok(res));
    ck_assert_str_eq(db_text(res, 0, 0), "3");
    ck_assert_str_eq(db_column_name(res, 0), "count");
    db_clear(res);
    const char *superuser = db_server_param(server, "is_superuser");
    ck_assert(superuser != NULL && (strcmp(superuser, "on") == 0 || strcmp(superuser, "off") == 0));
}
END_TEST

Suite *db_suite(void)
{
    Suite *s = suite_create("db");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 20); /* the races wait for silent hosts (2 s each) */
    tcase_add_test(tc, nothing_to_commit_or_roll_back_without_a_connection);
    tcase_add_test(tc, nothing_to_collect_cancel_or_copy_without_a_connection);
    tcase_add_test(tc, silent_hosts_are_waited_for_together_not_in_turn);
    tcase_add_test(tc, refusing_hosts_lose_the_race_at_once);
    tcase_add_test(tc, silent_and_refusing_hosts_are_each_reported);
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
        tcase_add_test(pc, pg_a_host_that_never_answers_holds_the_race_back_by_nothing);
        tcase_add_test(pc, pg_without_a_write_target_the_list_is_tried_in_order);
        tcase_add_test(pc, pg_a_pipeline_of_many_with_a_statement_that_cannot_be_prepared);
        tcase_add_test(pc, pg_a_statement_past_the_timeout_fails_with_its_sqlstate);
        tcase_add_test(pc, pg_a_copied_session_has_the_same_timeout_and_settings);
        tcase_add_test(pc, pg_a_polled_statement_is_collected_and_can_be_cancelled);
        tcase_add_test(pc, pg_scripts_and_copy_run_as_a_tool_needs);
        suite_add_tcase(s, pc);
    }
    return s;
}
