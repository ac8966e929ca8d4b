/* webhookd/prune_pass: the steps of a retention pass, its interval and its figures. */
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "retention/prune_pass.h"

START_TEST(steps_run_in_order_and_once_when_short)
{
    prune_pass p;
    prune_pass_start(&p);
    ck_assert_int_eq(p.step, PRUNE_STEP_EVENTS);
    for (int step = PRUNE_STEP_EVENTS; step < PRUNE_STEPS; step++) {
        ck_assert(!prune_pass_done(&p));
        ck_assert_int_eq(p.step, step);
        ck_assert(!prune_pass_next(&p, 3, 3)); /* short: the step is over */
    }
    ck_assert(prune_pass_done(&p));
    ck_assert_int_eq(p.batches, PRUNE_STEPS);
    ck_assert(!prune_pass_next(&p, PRUNE_BATCH, 5)); /* nothing after the end */
    ck_assert_int_eq(p.batches, PRUNE_STEPS);
}
END_TEST

START_TEST(a_full_batch_runs_its_step_again)
{
    prune_pass p;
    prune_pass_start(&p);
    /* 2,500 rows to go: two full batches and a short one, all on the first step. */
    ck_assert(prune_pass_next(&p, PRUNE_BATCH, PRUNE_BATCH));
    ck_assert(prune_pass_next(&p, PRUNE_BATCH, PRUNE_BATCH));
    ck_assert_int_eq(p.step, PRUNE_STEP_EVENTS);
    ck_assert(!prune_pass_next(&p, 500, 500));
    ck_assert_int_eq(p.step, PRUNE_STEP_DOWNLOAD_TOKENS);
    ck_assert_int_eq(p.batches, 3);
    /* Events found but all kept after the second look: no progress, so no repeat. */
    prune_pass_start(&p);
    ck_assert(!prune_pass_next(&p, PRUNE_BATCH, 0));
    ck_assert_int_eq(p.step, PRUNE_STEP_DOWNLOAD_TOKENS);
    /* Some of a full batch kept: there was progress, the step goes on. */
    ck_assert(prune_pass_next(&p, PRUNE_BATCH, 1));
}
END_TEST

START_TEST(interval_is_a_sixtieth_from_one_second_to_a_minute)
{
    ck_assert_int_eq(prune_interval_ms(30L * 86400), 60000);
    ck_assert_int_eq(prune_interval_ms(3600), 60000);
    ck_assert_int_eq(prune_interval_ms(1800), 30000);
    ck_assert_int_eq(prune_interval_ms(120), 2000);
    ck_assert_int_eq(prune_interval_ms(90), 1500);
    ck_assert_int_eq(prune_interval_ms(20), 1000);
    ck_assert_int_eq(prune_interval_ms(1), 1000);
}
END_TEST

START_TEST(durations_take_the_largest_unit)
{
    static const struct {
        long seconds;
        const char *text;
    } cases[] = {{30L * 86400, "30d"}, {36 * 3600, "36h"}, {86400, "1d"}, {120, "2m"},
                 {90, "90s"},          {1, "1s"},          {0, "0s"},     {7200, "2h"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[24];
        prune_format_duration(cases[i].seconds, out, sizeof out);
        ck_assert_str_eq(out, cases[i].text);
    }
}
END_TEST

START_TEST(arrays_list_every_table_with_its_count)
{
    prune_pass p;
    prune_pass_start(&p);
    long long n[PRUNE_TABLES] = {12, 24, 31, 0, 2, 9000000000LL};
    memcpy(p.pruned, n, sizeof n);
    char names[256], counts[256];
    ck_assert(prune_pass_arrays(&p, names, sizeof names, counts, sizeof counts));
    ck_assert_str_eq(names, "{events,webhook_deliveries,webhook_attempts,download_tokens,"
                            "api_keys,idempotency_keys}");
    ck_assert_str_eq(counts, "{12,24,31,0,2,9000000000}");
    /* Too small a buffer is refused, never cut. */
    char tiny[16];
    ck_assert(!prune_pass_arrays(&p, tiny, sizeof tiny, counts, sizeof counts));
    ck_assert(!prune_pass_arrays(&p, names, sizeof names, tiny, sizeof tiny));
}
END_TEST

START_TEST(summary_is_one_line_of_figures)
{
    prune_pass p;
    prune_pass_start(&p);
    p.pruned[PRUNE_EVENTS] = 120;
    p.pruned[PRUNE_DELIVERIES] = 240;
    p.pruned[PRUNE_ATTEMPTS] = 300;
    p.pruned[PRUNE_DOWNLOAD_TOKENS] = 40;
    p.pruned[PRUNE_IDEMPOTENCY_KEYS] = 1000;
    p.batches = 6;
    char line[512];
    prune_pass_summary(&p, 30L * 86400, 41, line, sizeof line);
    printf("prune_pass summary: %s\n", line);
    ck_assert_str_eq(line, "pruned events=120 webhook_deliveries=240 webhook_attempts=300 "
                           "download_tokens=40 api_keys=0 idempotency_keys=1000 batches=6 "
                           "duration_ms=41 retention=30d");
    char short_line[40];
    prune_pass_summary(&p, 20, 3, short_line, sizeof short_line);
    ck_assert_ptr_null(strchr(short_line, '\n'));
    ck_assert_uint_lt(strlen(short_line), sizeof short_line);
}
END_TEST

Suite *prune_pass_suite(void)
{
    Suite *s = suite_create("prune_pass");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, steps_run_in_order_and_once_when_short);
    tcase_add_test(tc, a_full_batch_runs_its_step_again);
    tcase_add_test(tc, interval_is_a_sixtieth_from_one_second_to_a_minute);
    tcase_add_test(tc, durations_take_the_largest_unit);
    tcase_add_test(tc, arrays_list_every_table_with_its_count);
    tcase_add_test(tc, summary_is_one_line_of_figures);
    suite_add_tcase(s, tc);
    return s;
}
