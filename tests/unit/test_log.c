/* log: one event, one line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Runs the logging below with stderr sent to a scratch file; returns what was written so
 * far (static, up to 16 KiB). */
static int saved_stderr = -1;
static char scratch_path[64];

static void capture_begin(void)
{
    snprintf(scratch_path, sizeof scratch_path, "/tmp/market-unit-log-XXXXXX");
    int fd = mkstemp(scratch_path);
    ck_assert_int_ge(fd, 0);
    fflush(stderr);
    saved_stderr = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
}

static const char *captured(void)
{
    static char text[16384];
    FILE *f = fopen(scratch_path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

static void capture_end(void)
{
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    unlink(scratch_path);
}

START_TEST(batch_collects_until_flushed)
{
    capture_begin();
    log_batch(true);
    log_info("first %d", 1);
    log_info("second");
    ck_assert(log_pending());
    ck_assert_str_eq(captured(), "");
    log_flush();
    ck_assert(!log_pending());
    const char *out = captured();
    const char *first = strstr(out, "info: first 1\n");
    const char *second = strstr(out, "info: second\n");
    ck_assert_ptr_nonnull(first);
    ck_assert_ptr_nonnull(second);
    ck_assert(first < second);
    log_batch(false);
    capture_end();
}
END_TEST

START_TEST(batch_writes_an_error_at_once_after_what_it_holds)
{
    capture_begin();
    log_batch(true);
    log_info("before");
    log_error("broken\nin two");
    ck_assert(!log_pending());
    const char *out = captured();
    const char *before = strstr(out, "info: before\n");
    const char *error = strstr(out, "error: broken in two\n");
    ck_assert_ptr_nonnull(before);
    ck_assert_ptr_nonnull(error);
    ck_assert(before < error);
    log_batch(false);
    capture_end();
}
END_TEST

START_TEST(batch_writes_when_full)
{
    capture_begin();
    log_batch(true);
    char filler[200];
    memset(filler, 'x', sizeof filler - 1);
    filler[sizeof filler - 1] = '\0';
    for (int i = 0; i < 40; i++) /* about 9 KiB: more than one batch */
        log_info("%02d %s", i, filler);
    ck_assert(strstr(captured(), "info: 00 xxx") != NULL);
    log_batch(false); /* turning it off flushes the rest */
    ck_assert(strstr(captured(), "info: 39 xxx") != NULL);
    capture_end();
}
END_TEST

START_TEST(a_request_names_every_line_while_it_runs)
{
    capture_begin();
    log_set_request("req_7Fq2");
    log_error("database connection lost:\nserver closed the connection");
    log_set_request(NULL);
    log_error("after the request");
    const char *out = captured();
    ck_assert_ptr_nonnull(
        strstr(out, "error: request req_7Fq2: database connection lost: server closed the "
                    "connection\n"));
    ck_assert_ptr_nonnull(strstr(out, "error: after the request\n"));
    ck_assert_ptr_null(strstr(out, "request req_7Fq2: after"));
    capture_end();
}
END_TEST

Suite *log_suite(void)
{
    Suite *s = suite_create("log");
    TCase *tc = tcase_create("fold");
    tcase_add_test(tc, fold_makes_one_line);
    tcase_add_test(tc, a_request_names_every_line_while_it_runs);
    suite_add_tcase(s, tc);
    TCase *batch = tcase_create("batch");
    tcase_add_test(batch, batch_collects_until_flushed);
    tcase_add_test(batch, batch_writes_an_error_at_once_after_what_it_holds);
    tcase_add_test(batch, batch_writes_when_full);
    suite_add_tcase(s, batch);
    return s;
}
