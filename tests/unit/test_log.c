/* log: one event, one line. */
#include <stdio.h>

#include "log.h"
#include "unit.h"

static void check_fold(const char *in, const char *want)
{
    char s[128];
    snprintf(s, sizeof s, "%s", in);
    log_fold(s);
    ck_assert_str_eq(s, want);
}

START_TEST(fold_makes_one_line)
{
    check_fold("plain", "plain");
    check_fold("", "");
    check_fold("ERROR:  relation \"x\" does not exist\nLINE 1: SELECT\n", /* libpq */
               "ERROR: relation \"x\" does not exist LINE 1: SELECT");
    check_fold("a\r\nb\tc\x1b[31md\x7f", "a b c [31md");
    check_fold("  lead   and   runs ", " lead and runs");
    check_fold("trailing \n \n", "trailing");
    check_fold("\n\n", "");
    check_fold("caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac"); /* UTF-8 stays */
}
END_TEST

Suite *log_suite(void)
{
    Suite *s = suite_create("log");
    TCase *tc = tcase_create("fold");
    tcase_add_test(tc, fold_makes_one_line);
    suite_add_tcase(s, tc);
    return s;
}
