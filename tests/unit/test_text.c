/* text: UTF-8 validation, percent-decoding, token checks. */
#include <string.h>

#include "text.h"
#include "unit.h"

static bool valid(const char *s)
{
    return utf8_valid(s, strlen(s));
}

START_TEST(utf8_accepts_well_formed)
{
    static const char *const good[] = {
        "",
        "plain ascii ~\x7f",
        "\xc3\xa9",         /* U+00E9 */
        "\xc2\x80",         /* U+0080, smallest two-byte */
        "\xdf\xbf",         /* U+07FF */
        "\xe0\xa0\x80",     /* U+0800, smallest three-byte */
        "\xe2\x82\xac",     /* U+20AC */
        "\xed\x9f\xbf",     /* U+D7FF, just below the surrogates */
        "\xee\x80\x80",     /* U+E000, just above them */
        "\xef\xbf\xbf",     /* U+FFFF */
        "\xf0\x90\x80\x80", /* U+10000, smallest four-byte */
        "\xf0\x9d\x84\x9e", /* U+1D11E */
        "\xf4\x8f\xbf\xbf", /* U+10FFFF, the last code point */
        "a\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9ez",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        ck_assert_msg(valid(good[i]), "rejected case %zu", i);
}
END_TEST

START_TEST(utf8_rejects_overlongs)
{
    static const char *const bad[] = {
        "\xc0\x80",     "\xc0\xaf",         "\xc1\xbf",         "\xe0\x80\x80",     "\xe0\x80\xaf",
        "\xe0\x9f\xbf", "\xf0\x80\x80\x80", "\xf0\x80\x80\xaf", "\xf0\x8f\xbf\xbf",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!valid(bad[i]), "accepted overlong case %zu", i);
}
END_TEST

START_TEST(utf8_rejects_surrogates_and_beyond)
{
    static const char *const bad[] = {
        "\xed\xa0\x80",             /* U+D800 */
        "\xed\xaf\xbf",             /* U+DBFF */
        "\xed\xb0\x80",             /* U+DC00 */
        "\xed\xbf\xbf",             /* U+DFFF */
        "\xed\xa0\xbd\xed\xb8\x80", /* a CESU-8 surrogate pair */
        "\xf4\x90\x80\x80",         /* U+110000 */
        "\xf4\xbf\xbf\xbf",
        "\xf5\x80\x80\x80",
        "\xf7\xbf\xbf\xbf",
        "\xf8\x88\x80\x80\x80",
        "\xfc\x84\x80\x80\x80\x80",
        "\xfe",
        "\xff",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!valid(bad[i]), "accepted case %zu", i);
}
END_TEST

START_TEST(utf8_rejects_broken_sequences)
{
    static const char *const bad[] = {
        "\x80",
        "\xbf",
        "a\x80z",
        "\xc3",
        "\xe2\x82",
        "\xf0\x9d\x84",
        "\xc3\x28",
        "\xe2\x28\xac",
        "\xe2\x82\x28",
        "\xf0\x28\x84\x9e",
        "\xf0\x9d\x84\x28",
        "\xc3\xa9\xa9",
        "\xc3\xc3\xa9",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!valid(bad[i]), "accepted case %zu", i);
}
END_TEST

START_TEST(utf8_rejects_nul_and_respects_length)
{
    ck_assert(!utf8_valid("a\0b", 3));
    ck_assert(!utf8_valid("\0", 1));
    ck_assert(utf8_valid("a\0b", 1));
    /* Only n bytes are read: a sequence cut by n is truncated, not completed. */
    ck_assert(!utf8_valid("\xc3\xa9", 1));
    ck_assert(utf8_valid("\xc3\xa9\xff", 2));
    ck_assert(utf8_valid(NULL, 0));
}
END_TEST

START_TEST(utf8_length_counts_code_points)
{
    const char *s = "a\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e";
    ck_assert_uint_eq(utf8_length(s, strlen(s)), 4);
    ck_assert_uint_eq(utf8_length("", 0), 0);
    ck_assert_uint_eq(utf8_length("abc", 3), 3);
}
END_TEST

/* Decodes s, expecting success and the given result. */
static void decodes_to(const char *s, bool plus, const char *want, size_t want_len)
{
    char out[64];
    size_t len = 999;
    ck_assert_msg(percent_decode(s, strlen(s), plus, out, &len), "failed on \"%s\"", s);
    ck_assert_uint_eq(len, want_len);
    ck_assert_mem_eq(out, want, want_len);
    ck_assert_int_eq(out[len], '\0');
}

static bool decodes(const char *s, size_t n, bool plus)
{
    char out[64];
    size_t len;
    return percent_decode(s, n, plus, out, &len);
}

START_TEST(percent_decodes_escapes)
{
    decodes_to("", true, "", 0);
    decodes_to("abc", true, "abc", 3);
    decodes_to("a%20b", true, "a b", 3);
    decodes_to("%41%42", false, "AB", 2);
    decodes_to("%c3%a9", false, "\xc3\xa9", 2);
    decodes_to("%C3%A9", false, "\xc3\xa9", 2);
    decodes_to("%25", false, "%", 1);
    decodes_to("%2B", true, "+", 1);
    decodes_to("a=b&c", false, "a=b&c", 5);
    decodes_to("\xc3\xa9", false, "\xc3\xa9", 2);
}
END_TEST

START_TEST(percent_plus_is_space_only_in_queries)
{
    decodes_to("a+b", true, "a b", 3);
    decodes_to("++", true, "  ", 2);
    decodes_to("a+b", false, "a+b", 3);
}
END_TEST

START_TEST(percent_rejects_bad_escapes)
{
    static const char *const bad[] = {"%",    "%4",  "abc%", "abc%4", "%4g",   "%g4",
                                      "%%41", "%-1", "% 41", "%+4",   "%0x41", "%\xc3\xa9"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!decodes(bad[i], strlen(bad[i]), true), "accepted \"%s\"", bad[i]);
    /* n bounds the input: an escape cut by n is truncated. */
    ck_assert(!decodes("%41", 2, false));
    ck_assert(decodes("a%41", 1, false));
}
END_TEST

START_TEST(percent_rejects_nul_and_bad_utf8)
{
    ck_assert(!decodes("%00", 3, false));
    ck_assert(!decodes("a%00b", 5, false));
    ck_assert(!decodes("a\0b", 3, false));
    ck_assert(!decodes("%C3", 3, false));
    ck_assert(!decodes("%C0%80", 6, false));
    ck_assert(!decodes("%C0%AF", 6, false));
    ck_assert(!decodes("%ED%A0%80", 9, false));
    ck_assert(!decodes("%F4%90%80%80", 12, false));
    ck_assert(!decodes("%FF", 3, false));
    ck_assert(!decodes("\xff", 1, false));
    ck_assert(!decodes("%C3%28", 6, false));
}
END_TEST

START_TEST(token_valid_checks_set_and_length)
{
    ck_assert(token_valid("abcXYZ019", 64, NULL));
    ck_assert(!token_valid("", 64, NULL));
    ck_assert(token_valid("abcd", 4, NULL));
    ck_assert(!token_valid("abcde", 4, NULL));
    ck_assert(!token_valid("a-b", 64, NULL));
    ck_assert(token_valid("a-b", 64, "-"));
    ck_assert(token_valid("req.1_2-3", 64, "._-"));
    ck_assert(!token_valid("req 1", 64, "._-"));
    ck_assert(!token_valid("r\xc3\xa9q", 64, "._-"));
    ck_assert(!token_valid("a/b", 64, "._-"));
}
END_TEST

/* The API's rules (6 digits, no leap second) are tested through INPUT_TIMESTAMP in
 * test_input.c; these are the knobs import's looser rules use. */
START_TEST(rfc3339_fraction_and_leap_second_are_the_callers)
{
    ck_assert(rfc3339_valid("2026-11-26T10:04:05.123456789Z", 9, true));
    ck_assert(!rfc3339_valid("2026-11-26T10:04:05.123456789Z", 6, false));
    ck_assert(!rfc3339_valid("2026-11-26T10:04:05.1234567890Z", 9, true));
    ck_assert(rfc3339_valid("2016-12-31T23:59:60Z", 9, true));
    ck_assert(!rfc3339_valid("2016-12-31T23:59:60Z", 6, false));
    ck_assert(!rfc3339_valid("2016-12-31T23:59:61Z", 9, true));
    ck_assert(!rfc3339_valid("2026-02-29T00:00:00Z", 9, true));
    ck_assert(rfc3339_valid("2028-02-29T00:00:00+05:30", 0, false));
    ck_assert(!rfc3339_valid("2028-02-29T00:00:00.5Z", 0, false));
}
END_TEST

Suite *text_suite(void)
{
    Suite *s = suite_create("text");
    TCase *utf8 = tcase_create("utf8");
    tcase_add_test(utf8, utf8_accepts_well_formed);
    tcase_add_test(utf8, utf8_rejects_overlongs);
    tcase_add_test(utf8, utf8_rejects_surrogates_and_beyond);
    tcase_add_test(utf8, utf8_rejects_broken_sequences);
    tcase_add_test(utf8, utf8_rejects_nul_and_respects_length);
    tcase_add_test(utf8, utf8_length_counts_code_points);
    suite_add_tcase(s, utf8);
    TCase *percent = tcase_create("percent");
    tcase_add_test(percent, percent_decodes_escapes);
    tcase_add_test(percent, percent_plus_is_space_only_in_queries);
    tcase_add_test(percent, percent_rejects_bad_escapes);
    tcase_add_test(percent, percent_rejects_nul_and_bad_utf8);
    suite_add_tcase(s, percent);
    TCase *token = tcase_create("token");
    tcase_add_test(token, token_valid_checks_set_and_length);
    suite_add_tcase(s, token);
    TCase *rfc3339 = tcase_create("rfc3339");
    tcase_add_test(rfc3339, rfc3339_fraction_and_leap_second_are_the_callers);
    suite_add_tcase(s, rfc3339);
    return s;
}
