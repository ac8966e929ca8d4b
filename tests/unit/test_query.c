/* query: strict query-string parsing against a route's accepted names. */
#include <string.h>

#include "arena.h"
#include "query.h"
#include "unit.h"

static const char *const names[] = {"limit", "cursor", "q", NULL};

static arena a;
static query_params params;
static query_error err;

static void setup(void)
{
    arena_init(&a, 4096);
    memset(&err, 0, sizeof err);
}

static void teardown(void)
{
    arena_free(&a);
}

static bool parse(const char *qs)
{
    return query_parse(&a, qs, names, &params, &err);
}

/* Expects qs to fail with fault, naming name (a malformed name: as sent, printable). */
static void fails(const char *qs, query_fault fault, const char *name)
{
    ck_assert_msg(!parse(qs), "accepted \"%.80s\"", qs);
    ck_assert_int_eq(err.fault, fault);
    ck_assert_str_eq(err.name, name);
}

static char *repeat(const char *prefix, const char *unit, size_t times)
{
    size_t plen = strlen(prefix), ulen = strlen(unit);
    char *s = arena_alloc(&a, plen + ulen * times + 1);
    memcpy(s, prefix, plen);
    for (size_t i = 0; i < times; i++)
        memcpy(s + plen + i * ulen, unit, ulen);
    s[plen + ulen * times] = '\0';
    return s;
}

START_TEST(empty_query)
{
    ck_assert(parse(""));
    ck_assert_ptr_null(query_get(&params, "limit"));
    ck_assert(parse(NULL));
    ck_assert_ptr_null(query_get(&params, "q"));
}
END_TEST

START_TEST(known_names_and_values)
{
    ck_assert(parse("limit=10&q=hello+world%21&cursor=abc.def"));
    ck_assert_str_eq(query_get(&params, "limit"), "10");
    ck_assert_str_eq(query_get(&params, "q"), "hello world!");
    ck_assert_str_eq(query_get(&params, "cursor"), "abc.def");
    ck_assert_ptr_null(query_get(&params, "sort"));
}
END_TEST

START_TEST(values_keep_equals_and_may_be_empty)
{
    ck_assert(parse("q=a=b"));
    ck_assert_str_eq(query_get(&params, "q"), "a=b");
    ck_assert(parse("limit=&q"));
    ck_assert_str_eq(query_get(&params, "limit"), "");
    ck_assert_str_eq(query_get(&params, "q"), "");
    ck_assert_ptr_null(query_get(&params, "cursor"));
}
END_TEST

START_TEST(names_are_decoded)
{
    ck_assert(parse("%6C%69mit=5&q=%C3%A9t%C3%A9"));
    ck_assert_str_eq(query_get(&params, "limit"), "5");
    ck_assert_str_eq(query_get(&params, "q"), "\xc3\xa9t\xc3\xa9");
}
END_TEST

START_TEST(empty_segments_are_skipped)
{
    ck_assert(parse("&&limit=1&&q=x&"));
    ck_assert_str_eq(query_get(&params, "limit"), "1");
    ck_assert_str_eq(query_get(&params, "q"), "x");
    ck_assert(parse("&"));
    ck_assert_ptr_null(query_get(&params, "limit"));
}
END_TEST

START_TEST(unknown_names)
{
    fails("foo=1", QUERY_UNKNOWN, "foo");
    fails("limit=1&LIMIT=2", QUERY_UNKNOWN, "LIMIT");
    fails("q+x=1", QUERY_UNKNOWN, "q x");
    fails("limit[]=1", QUERY_UNKNOWN, "limit[]");
    fails("=1", QUERY_UNKNOWN, "");
    fails("foo=1&limit=%zz", QUERY_UNKNOWN, "foo");
}
END_TEST

START_TEST(long_unknown_name_is_given_whole)
{
    const char *qs = repeat("", "x", 500);
    fails(qs, QUERY_UNKNOWN, qs); /* whole: the program decides how much to echo */
}
END_TEST

START_TEST(duplicated_names)
{
    fails("limit=1&limit=2", QUERY_DUPLICATED, "limit");
    fails("q=a&limit=1&q=a", QUERY_DUPLICATED, "q");
    fails("limit=1&%6Cimit=1", QUERY_DUPLICATED, "limit");
    fails("q&q", QUERY_DUPLICATED, "q");
}
END_TEST

START_TEST(invalid_encodings)
{
    fails("q=%zz", QUERY_MALFORMED, "q");
    fails("q=%4", QUERY_MALFORMED, "q");
    fails("q=%", QUERY_MALFORMED, "q");
    fails("q=abc%", QUERY_MALFORMED, "q");
    fails("q=%00", QUERY_MALFORMED, "q");
    fails("q=a%00b", QUERY_MALFORMED, "q");
    fails("q=%C0%AF", QUERY_MALFORMED, "q");
    fails("q=%ED%A0%80", QUERY_MALFORMED, "q");
    fails("q=%F4%90%80%80", QUERY_MALFORMED, "q");
    fails("q=%FF", QUERY_MALFORMED, "q");
    fails("q=\xff", QUERY_MALFORMED, "q");
    fails("q=%C3", QUERY_MALFORMED, "q");
    fails("%zz=1", QUERY_MALFORMED, "%zz");
    ck_assert(err.name_malformed);
    fails("%00=1", QUERY_MALFORMED, "%00");
    fails("li%ED%A0%80mit=1", QUERY_MALFORMED, "li%ED%A0%80mit");
    /* Raw bytes outside printable ASCII as %XX, cut at QUERY_RAW_NAME_MAX bytes. */
    fails("\x01\x7F%zz=1", QUERY_MALFORMED, "%01%7F%zz");
    fails(repeat("", "\xFF", 40), QUERY_MALFORMED, repeat("", "%FF", 21));
    fails("limit=%zz", QUERY_MALFORMED, "limit");
    ck_assert(!err.name_malformed);
}
END_TEST

START_TEST(value_length_limits)
{
    ck_assert(parse(repeat("q=", "a", QUERY_MAX_VALUE)));
    ck_assert_uint_eq(strlen(query_get(&params, "q")), QUERY_MAX_VALUE);
    fails(repeat("q=", "a", QUERY_MAX_VALUE + 1), QUERY_TOO_LONG, "q");

    /* The limit is on decoded bytes: 2048 escaped bytes are fine, 2049 are not. */
    ck_assert(parse(repeat("q=", "%61", QUERY_MAX_VALUE)));
    ck_assert_uint_eq(strlen(query_get(&params, "q")), QUERY_MAX_VALUE);
    fails(repeat("q=", "%61", QUERY_MAX_VALUE + 1), QUERY_TOO_LONG, "q");
    ck_assert(parse(repeat("q=", "%C3%A9", QUERY_MAX_VALUE / 2)));
    fails(repeat("cursor=", "x", 100000), QUERY_TOO_LONG, "cursor");
}
END_TEST

START_TEST(query_get_unknown_name)
{
    ck_assert(parse("limit=3"));
    ck_assert_ptr_null(query_get(&params, "nope"));
    ck_assert_ptr_null(query_get(&params, ""));
}
END_TEST

Suite *query_suite(void)
{
    Suite *s = suite_create("query");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, empty_query);
    tcase_add_test(tc, known_names_and_values);
    tcase_add_test(tc, values_keep_equals_and_may_be_empty);
    tcase_add_test(tc, names_are_decoded);
    tcase_add_test(tc, empty_segments_are_skipped);
    tcase_add_test(tc, unknown_names);
    tcase_add_test(tc, long_unknown_name_is_given_whole);
    tcase_add_test(tc, duplicated_names);
    tcase_add_test(tc, invalid_encodings);
    tcase_add_test(tc, value_length_limits);
    tcase_add_test(tc, query_get_unknown_name);
    suite_add_tcase(s, tc);
    return s;
}
