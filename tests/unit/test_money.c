/* money: minor units <-> decimal text, never through floating point. */
#include <limits.h>
#include <stdint.h>

#include "money.h"
#include "unit.h"

static const char *fmt(int64_t minor, int exponent)
{
    static char text[MONEY_TEXT_MAX];
    money_format(text, sizeof text, minor, exponent);
    return text;
}

START_TEST(format_drops_trailing_zeros)
{
    ck_assert_str_eq(fmt(1999, 2), "19.99");
    ck_assert_str_eq(fmt(500, 2), "5");
    ck_assert_str_eq(fmt(120050, 2), "1200.5");
    ck_assert_str_eq(fmt(5, 0), "5");
    ck_assert_str_eq(fmt(1, 3), "0.001");
    ck_assert_str_eq(fmt(0, 2), "0");
    ck_assert_str_eq(fmt(10, 2), "0.1");
    ck_assert_str_eq(fmt(101, 2), "1.01");
    ck_assert_str_eq(fmt(1900, 3), "1.9");
    ck_assert_str_eq(fmt(1, 9), "0.000000001");
    ck_assert_str_eq(fmt(123456789, 9), "0.123456789");
    ck_assert_str_eq(fmt(1000000000, 9), "1");
}
END_TEST

START_TEST(format_negative_and_extremes)
{
    ck_assert_str_eq(fmt(-5, 2), "-0.05");
    ck_assert_str_eq(fmt(-1999, 2), "-19.99");
    ck_assert_str_eq(fmt(-500, 2), "-5");
    ck_assert_str_eq(fmt(INT64_MAX, 0), "9223372036854775807");
    ck_assert_str_eq(fmt(INT64_MAX, 2), "92233720368547758.07");
    ck_assert_str_eq(fmt(INT64_MIN, 0), "-9223372036854775808");
    ck_assert_str_eq(fmt(INT64_MIN, 2), "-92233720368547758.08");
}
END_TEST

START_TEST(format_truncates_to_buffer)
{
    char text[4] = "xxx";
    money_format(text, sizeof text, 1999, 2);
    ck_assert_str_eq(text, "19.");
}
END_TEST

START_TEST(format_int_every_magnitude)
{
    char text[24];
    ck_assert_uint_eq(format_int(text, 0), 1);
    ck_assert_str_eq(text, "0");
    ck_assert_uint_eq(format_int(text, 7), 1);
    ck_assert_str_eq(text, "7");
    ck_assert_uint_eq(format_int(text, -42), 3);
    ck_assert_str_eq(text, "-42");
    ck_assert_uint_eq(format_int(text, 1000000), 7);
    ck_assert_str_eq(text, "1000000");
    ck_assert_uint_eq(format_int(text, LLONG_MAX), 19);
    ck_assert_str_eq(text, "9223372036854775807");
    ck_assert_uint_eq(format_int(text, LLONG_MIN), 20);
    ck_assert_str_eq(text, "-9223372036854775808");
}
END_TEST

START_TEST(format_returns_its_length)
{
    char text[MONEY_TEXT_MAX];
    ck_assert_uint_eq(money_format(text, sizeof text, 120050, 2), 6); /* "1200.5" */
    ck_assert_uint_eq(money_format(text, sizeof text, -5, 2), 5);     /* "-0.05" */
    ck_assert_uint_eq(money_format(text, 4, 1999, 2), 3);             /* cut: "19." */
}
END_TEST

static int64_t parsed(const char *text, int exponent)
{
    int64_t minor = -1;
    ck_assert_msg(money_parse(text, exponent, &minor), "money_parse(\"%s\", %d) failed", text,
                  exponent);
    return minor;
}

START_TEST(parse_accepts_decimals)
{
    ck_assert_int_eq(parsed("12", 2), 1200);
    ck_assert_int_eq(parsed("12.3", 2), 1230);
    ck_assert_int_eq(parsed("12.34", 2), 1234);
    ck_assert_int_eq(parsed("0", 2), 0);
    ck_assert_int_eq(parsed("0.01", 2), 1);
    ck_assert_int_eq(parsed("007", 2), 700);
    ck_assert_int_eq(parsed("5", 0), 5);
    ck_assert_int_eq(parsed("0.001", 3), 1);
    ck_assert_int_eq(parsed("1200.5", 2), 120050);
}
END_TEST

START_TEST(parse_limits)
{
    ck_assert_int_eq(parsed("92233720368547758.07", 2), INT64_MAX);
    ck_assert_int_eq(parsed("9223372036854775807", 0), INT64_MAX);
    ck_assert_int_eq(parsed("9223372036.854775807", 9), INT64_MAX);
    int64_t minor = 42;
    ck_assert(!money_parse("92233720368547758.08", 2, &minor));
    ck_assert(!money_parse("9223372036854775808", 0, &minor));
    ck_assert(!money_parse("92233720368547758", 3, &minor));
    ck_assert(!money_parse("99999999999999999999", 0, &minor));
    ck_assert(!money_parse("18446744073709551616", 0, &minor));
    ck_assert_int_eq(minor, 42);
}
END_TEST

START_TEST(parse_rejects_malformed)
{
    static const char *const bad[] = {
        "12.345", "",    ".",    ".5", "5.",   "1.2.3", "-1",  "+1",   "1e3",  " 1",
        "1 ",     "1,5", "0x10", "١",  "1.-1", "NaN",   "inf", "1..2", "1.2 ", "\t1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t minor;
        ck_assert_msg(!money_parse(bad[i], 2, &minor), "accepted \"%s\"", bad[i]);
    }
    int64_t minor;
    ck_assert(!money_parse("5.0", 0, &minor));
    ck_assert(!money_parse("0.0001", 3, &minor));
}
END_TEST

START_TEST(format_parse_round_trip)
{
    static const int64_t values[] = {0, 1, 9, 10, 99, 100, 101, 1999, 120050, 1000000, INT64_MAX};
    for (int e = 0; e <= 9; e++) {
        for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
            int64_t back = -1;
            ck_assert(money_parse(fmt(values[i], e), e, &back));
            ck_assert_int_eq(back, values[i]);
        }
    }
}
END_TEST

START_TEST(decimal_valid_grammar)
{
    static const char *const good[] = {"0",   "19.99", "5", "123456789012", "1.123456789012",
                                       "0.5", "000"};
    static const char *const bad[] = {"",
                                      ".5",
                                      "5.",
                                      "-1",
                                      "+1",
                                      "1e2",
                                      " 1",
                                      "1 ",
                                      "1.2.3",
                                      "1234567890123",
                                      "1.1234567890123",
                                      "NaN",
                                      "Infinity",
                                      "1,5",
                                      "0x1"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        ck_assert_msg(decimal_valid(good[i]), "rejected \"%s\"", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!decimal_valid(bad[i]), "accepted \"%s\"", bad[i]);
}
END_TEST

static int sign(int v)
{
    return (v > 0) - (v < 0);
}

START_TEST(decimal_compare_by_value)
{
    static const struct {
        const char *a, *b;
        int want;
    } cases[] = {
        {"1", "1.0", 0},
        {"01", "1", 0},
        {"000", "0", 0},
        {"0", "0.000000000000", 0},
        {"0.5", "0.50", 0},
        {"10", "9", 1},
        {"9.99", "10", -1},
        {"1.01", "1.1", -1},
        {"19.99", "19.9", 1},
        {"100", "99.999999999999", 1},
        {"123456789012", "123456789011.999999999999", 1},
        {"1.000000000001", "1", 1},
        {"0.1", "0.09", 1},
        {"007.5", "7.50", 0},
        {"2", "10", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_msg(sign(decimal_compare(cases[i].a, cases[i].b)) == cases[i].want,
                      "compare(%s, %s)", cases[i].a, cases[i].b);
        ck_assert_msg(sign(decimal_compare(cases[i].b, cases[i].a)) == -cases[i].want,
                      "compare(%s, %s)", cases[i].b, cases[i].a);
    }
}
END_TEST

Suite *money_suite(void)
{
    Suite *s = suite_create("money");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, format_drops_trailing_zeros);
    tcase_add_test(tc, format_negative_and_extremes);
    tcase_add_test(tc, format_truncates_to_buffer);
    tcase_add_test(tc, format_int_every_magnitude);
    tcase_add_test(tc, format_returns_its_length);
    tcase_add_test(tc, parse_accepts_decimals);
    tcase_add_test(tc, parse_limits);
    tcase_add_test(tc, parse_rejects_malformed);
    tcase_add_test(tc, format_parse_round_trip);
    tcase_add_test(tc, decimal_valid_grammar);
    tcase_add_test(tc, decimal_compare_by_value);
    suite_add_tcase(s, tc);
    return s;
}
