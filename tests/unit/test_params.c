/* params: the validators of the route table's query parameters (app/api/params.c). */
#include <string.h>

#include "api/params.h"
#include "unit.h"

START_TEST(limit)
{
    static const char *const good[] = {"1", "9", "10", "20", "99", "100"};
    static const char *const bad[] = {"",   "0",  "00", "01", "020", "101", "999",  "1000",
                                      "-1", "+5", " 5", "5 ", "5x",  "1e2", "0x10", "½"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        ck_assert_msg(param_limit_valid(good[i]), "refused %s", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!param_limit_valid(bad[i]), "accepted \"%s\"", bad[i]);
    ck_assert_int_eq(param_limit(NULL), PAGE_DEFAULT);
    ck_assert_int_eq(param_limit("1"), 1);
    ck_assert_int_eq(param_limit("57"), 57);
    ck_assert_int_eq(param_limit("100"), PAGE_MAX);
}
END_TEST

START_TEST(search_text_counts_characters)
{
    char longest[3 * SEARCH_MAX_CHARS + 1] = {0};
    for (int i = 0; i < SEARCH_MAX_CHARS; i++) { /* 200 euro signs: 600 bytes */
        longest[3 * i] = '\xe2';
        longest[3 * i + 1] = '\x82';
        longest[3 * i + 2] = '\xac';
    }
    ck_assert(param_search_valid(longest));
    ck_assert(param_search_valid("a"));
    ck_assert(param_search_valid("serif font"));
    ck_assert(!param_search_valid(""));
    ck_assert(!param_search_valid("serif\tfont")); /* control characters: C0, DEL, C1 */
    ck_assert(!param_search_valid("serif\x7f"));
    ck_assert(!param_search_valid("serif\xc2\x85"));
    ck_assert(param_search_valid("caf\xc3\xa9 \xc2\xa0")); /* é and a no-break space */
    char too_long[SEARCH_MAX_CHARS + 2] = {0};
    memset(too_long, 'a', SEARCH_MAX_CHARS + 1);
    ck_assert(!param_search_valid(too_long));
    too_long[SEARCH_MAX_CHARS] = '\0';
    ck_assert(param_search_valid(too_long));
}
END_TEST

START_TEST(slugs_handles_prices)
{
    ck_assert(param_slug_valid("fonts"));
    ck_assert(!param_slug_valid("Fonts"));
    ck_assert(!param_slug_valid(""));
    ck_assert(param_handle_valid("pixelforge"));
    ck_assert(!param_handle_valid("pixel forge"));
    ck_assert(param_price_valid("19.99"));
    ck_assert(param_price_valid("0"));
    ck_assert(!param_price_valid("-1"));
    ck_assert(!param_price_valid("1,5"));
    ck_assert(!param_price_valid(""));
}
END_TEST

START_TEST(timestamps)
{
    static const char *const good[] = {
        "2026-11-26T10:04:05Z",        "2026-11-26t10:04:05z",      "2026-11-26T10:04:05.1Z",
        "2026-11-26T10:04:05.123456Z", "2026-11-26T10:04:05+01:00", "2026-11-26T10:04:05-23:59",
        "2024-02-29T00:00:00Z",        "2000-02-29T23:59:59Z",      "0001-01-01T00:00:00Z",
        "9999-12-31T23:59:59.999999Z",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        ck_assert_msg(param_timestamp_valid(good[i]), "%s", good[i]);
    static const char *const bad[] = {
        "",
        "2026-11-26",
        "2026-11-26T10:04:05",          /* no zone */
        "2026-11-26 10:04:05Z",         /* a space */
        "2026-11-26T10:04Z",            /* no seconds */
        "2026-11-26T10:04:05.Z",        /* an empty fraction */
        "2026-11-26T10:04:05.1234567Z", /* 7 digits */
        "2026-13-01T00:00:00Z",
        "2026-00-01T00:00:00Z",
        "2026-02-29T00:00:00Z", /* not a leap year */
        "1900-02-29T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "2026-11-00T00:00:00Z",
        "0000-01-01T00:00:00Z",
        "2026-11-26T24:00:00Z",
        "2026-11-26T23:60:00Z",
        "2026-11-26T23:59:60Z",
        "2026-11-26T10:04:05+24:00",
        "2026-11-26T10:04:05+01:60",
        "2026-11-26T10:04:05+0100",
        "2026-11-26T10:04:05+01:00x",
        "2026-11-26T10:04:05Zx",
        "+2026-11-26T10:04:05Z",
        "2026-1-26T10:04:05Z",
        "2026-11-26T10:04:05 Z",
        "２026-11-26T10:04:05Z",
        "now",
        "infinity",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!param_timestamp_valid(bad[i]), "%s", bad[i]);
}
END_TEST

Suite *params_suite(void)
{
    Suite *s = suite_create("params");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, limit);
    tcase_add_test(tc, search_text_counts_characters);
    tcase_add_test(tc, slugs_handles_prices);
    tcase_add_test(tc, timestamps);
    suite_add_tcase(s, tc);
    return s;
}
