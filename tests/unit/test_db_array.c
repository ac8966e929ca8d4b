/* db_array: PostgreSQL array literals. The "core" case checks the exact text; the
 * "postgres" case (added when unit_database() names one: make admin-test) sends literals
 * to a real server as text[] and reads every element back. */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arena.h"
#include "buf.h"
#include "db.h"
#include "db_array.h"
#include "db_script.h"
#include "unit.h"

static buf b;

static void setup(void)
{
    buf_init(&b, 0);
}

static void teardown(void)
{
    buf_free(&b);
}

/* The literal of items[0..n). */
static const char *literal(const char *const *items, size_t n)
{
    buf_clear(&b);
    for (size_t i = 0; i < n; i++)
        db_array_append(&b, items[i]);
    db_array_end(&b);
    return b.data;
}

START_TEST(empty_is_braces)
{
    ck_assert_str_eq(literal(NULL, 0), "{}");
    ck_assert_uint_eq(b.len, 2);
}
END_TEST

START_TEST(every_element_is_quoted)
{
    const char *ids[] = {"prod_1", "prod_2", "tier_x"};
    ck_assert_str_eq(literal(ids, 1), "{\"prod_1\"}");
    ck_assert_str_eq(literal(ids, 3), "{\"prod_1\",\"prod_2\",\"tier_x\"}");
}
END_TEST

START_TEST(quote_and_backslash_are_escaped)
{
    const char *items[] = {"say \"hi\"", "C:\\dir\\", "\\\"", "\""};
    ck_assert_str_eq(literal(items, 4),
                     "{\"say \\\"hi\\\"\",\"C:\\\\dir\\\\\",\"\\\\\\\"\",\"\\\"\"}");
}
END_TEST

/* Inside quotes the array parser's other specials are plain characters. */
START_TEST(separators_and_braces_stay_inside_quotes)
{
    const char *items[] = {"a,b", "{x}", " pad ", "", "tab\tnew\nline", "'single'"};
    ck_assert_str_eq(literal(items, 6),
                     "{\"a,b\",\"{x}\",\" pad \",\"\",\"tab\tnew\nline\",\"'single'\"}");
}
END_TEST

START_TEST(null_is_a_bare_null_and_the_word_is_quoted)
{
    const char *items[] = {NULL, "NULL", "null", NULL};
    ck_assert_str_eq(literal(items, 4), "{NULL,\"NULL\",\"null\",NULL}");
}
END_TEST

START_TEST(utf8_passes_through)
{
    const char *items[] = {"caf\xc3\xa9", "\xe2\x82\xac 5", "\xf0\x9f\x8e\xb5"};
    ck_assert_str_eq(literal(items, 3),
                     "{\"caf\xc3\xa9\",\"\xe2\x82\xac 5\",\"\xf0\x9f\x8e\xb5\"}");
}
END_TEST

START_TEST(grows_in_an_arena_buffer)
{
    arena a;
    arena_init(&a, 64);
    buf ab;
    buf_init_arena(&ab, &a, 8);
    for (int i = 0; i < 1000; i++)
        db_array_append(&ab, i % 2 == 0 ? "dl_\"x\"" : NULL);
    db_array_end(&ab);
    /* '{', 500 times "dl_\"x\"" (10 bytes) and 500 times NULL, 999 commas, '}' */
    ck_assert_uint_eq(ab.len, 1 + 500 * 10 + 500 * 4 + 999 + 1);
    ck_assert_uint_eq(strlen(ab.data), ab.len);
    ck_assert(strncmp(ab.data, "{\"dl_\\\"x\\\"\",NULL,", 17) == 0);
    ck_assert_str_eq(ab.data + ab.len - 6, ",NULL}");
    arena_free(&a);
}
END_TEST

/* --- through PostgreSQL ---------------------------------------------------------------- */

static db *server;

static void pg_setup(void)
{
    buf_init(&b, 0);
    server = db_open(unit_database(), "market-unit");
    ck_assert_msg(db_ready(server), "cannot connect to MARKET_TEST_DB: %s", db_error(server));
}

static void pg_teardown(void)
{
    db_close(server);
    buf_free(&b);
}

/* Sends items as $1::text[] and checks that the server reads back exactly items. */
static void assert_round_trip(const char *const *items, size_t n)
{
    const char *params[] = {literal(items, n)};
    db_result *res = db_exec_params(server,
                                    "SELECT v, v IS NULL FROM unnest($1::text[]) WITH ORDINALITY"
                                    " AS t(v, i) ORDER BY i",
                                    1, params);
    ck_assert_ptr_nonnull(res);
    ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK, "%s rejected: %s", params[0],
                  db_message(res));
    ck_assert_int_eq(db_rows(res), (int)n);
    for (int i = 0; i < (int)n; i++) {
        if (items[i] == NULL) {
            ck_assert_msg(PQgetisnull(res, i, 0), "element %d is not NULL", i);
            continue;
        }
        ck_assert_msg(!PQgetisnull(res, i, 0), "element %d (%s) read as NULL", i, items[i]);
        ck_assert_str_eq(db_text(res, i, 0), items[i]);
    }
    db_clear(res);
}

START_TEST(pg_reads_back_every_awkward_element)
{
    const char *items[] = {"plain",   "",    "NULL",        "null",  NULL,     " lead",
                           "trail ",  "a,b", "{braces}",    "}",     "{",      "quote\"d",
                           "\"",      "\\",  "back\\slash", "\\\"",  "\"\\",   "tab\there",
                           "new\nln", "'q'", "caf\xc3\xa9", "[1:2]", "a b  c", "\xe2\x82\xac",
                           "x=>y",    "$1",  NULL,          "()",    ";"};
    assert_round_trip(items, sizeof items / sizeof items[0]);
}
END_TEST

START_TEST(pg_reads_empty_and_single_lists)
{
    assert_round_trip(NULL, 0);
    const char *one[] = {"we_only"};
    assert_round_trip(one, 1);
    const char *null_only[] = {NULL};
    assert_round_trip(null_only, 1);
    const char *empty_only[] = {""};
    assert_round_trip(empty_only, 1);
}
END_TEST

/* The import's largest use: every product id of a document in one parameter. */
START_TEST(pg_reads_a_long_list)
{
    enum { N = 20000 };
    char(*ids)[24] = malloc(sizeof *ids * N);
    const char **items = malloc(sizeof *items * N);
    ck_assert(ids != NULL && items != NULL);
    for (int i = 0; i < N; i++) {
        snprintf(ids[i], sizeof ids[i], i % 1000 == 7 ? "prod_\"%d\\" : "prod_%d", i);
        items[i] = ids[i];
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_round_trip(items, N);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("db_array: %d elements, a literal of %zu bytes, read back in %.1f ms\n", N, b.len,
           (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    free(items);
    free(ids);
}
END_TEST

/* The statements the programs run, shape for shape: = ANY and a multi-array unnest. */
START_TEST(pg_works_with_any_and_unnest)
{
    const char *wanted[] = {"b\"2", "c,3", "zz"};
    const char *params[] = {literal(wanted, 3)};
    db_result *res = db_exec_params(server,
                                    "SELECT count(*) FROM (VALUES ('a'), ('b\"2'), ('c,3')) v(id)"
                                    " WHERE id = ANY($1::text[])",
                                    1, params);
    ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
    ck_assert_str_eq(db_text(res, 0, 0), "2");
    db_clear(res);

    buf second;
    buf_init(&second, 0);
    const char *more[] = {"x\\", NULL, "z"};
    for (int i = 0; i < 3; i++)
        db_array_append(&second, more[i]);
    db_array_end(&second);
    const char *pair[] = {b.data, second.data};
    res = db_exec_params(server,
                         "SELECT string_agg(a || '=' || coalesce(m, '-'), ' ' ORDER BY a)"
                         " FROM unnest($1::text[], $2::text[]) AS u(a, m)",
                         2, pair);
    ck_assert_int_eq(PQresultStatus(res), PGRES_TUPLES_OK);
    ck_assert_str_eq(db_text(res, 0, 0), "b\"2=x\\ c,3=- zz=z");
    db_clear(res);
    buf_free(&second);
}
END_TEST

Suite *db_array_suite(void)
{
    Suite *s = suite_create("db_array");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, empty_is_braces);
    tcase_add_test(tc, every_element_is_quoted);
    tcase_add_test(tc, quote_and_backslash_are_escaped);
    tcase_add_test(tc, separators_and_braces_stay_inside_quotes);
    tcase_add_test(tc, null_is_a_bare_null_and_the_word_is_quoted);
    tcase_add_test(tc, utf8_passes_through);
    tcase_add_test(tc, grows_in_an_arena_buffer);
    suite_add_tcase(s, tc);
    if (unit_database() != NULL) {
        TCase *pc = tcase_create("postgres");
        tcase_add_checked_fixture(pc, pg_setup, pg_teardown);
        tcase_set_timeout(pc, 30);
        tcase_add_test(pc, pg_reads_back_every_awkward_element);
        tcase_add_test(pc, pg_reads_empty_and_single_lists);
        tcase_add_test(pc, pg_reads_a_long_list);
        tcase_add_test(pc, pg_works_with_any_and_unnest);
        suite_add_tcase(s, pc);
    }
    return s;
}
