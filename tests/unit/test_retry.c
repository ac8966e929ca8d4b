/* webhookd/retry: what becomes of a delivery after an attempt. */
#include <string.h>

#include "unit.h"
#include "webhookd/retry.h"

static const long delays[] = {60, 300, 1800}; /* seconds after attempts 1, 2 and 3 */
#define NDELAYS ((int)(sizeof delays / sizeof delays[0]))

START_TEST(success_is_delivered_whatever_the_attempt)
{
    for (int attempt = 1; attempt <= NDELAYS + 2; attempt++) {
        retry_outcome out = retry_decide(true, false, attempt, delays, NDELAYS, 0.5);
        ck_assert_str_eq(out.status, "delivered");
        ck_assert_int_eq(out.delay_ms, 0);
    }
    /* A 2xx counts even when the subscription was disabled meanwhile. */
    ck_assert_str_eq(retry_decide(true, true, 1, delays, NDELAYS, 0.5).status, "delivered");
}
END_TEST

START_TEST(failures_wait_the_configured_delay)
{
    for (int attempt = 1; attempt <= NDELAYS; attempt++) {
        retry_outcome out = retry_decide(false, false, attempt, delays, NDELAYS, 0.5);
        ck_assert_str_eq(out.status, "pending");
        ck_assert_int_eq(out.delay_ms, delays[attempt - 1] * 1000);
    }
}
END_TEST

START_TEST(one_attempt_more_than_delays)
{
    /* ndelays delays make ndelays + 1 attempts: the last failure is final. */
    retry_outcome out = retry_decide(false, false, NDELAYS + 1, delays, NDELAYS, 0.5);
    ck_assert_str_eq(out.status, "failed");
    ck_assert_int_eq(out.delay_ms, 0);
    ck_assert_str_eq(retry_decide(false, false, NDELAYS + 5, delays, NDELAYS, 0.5).status,
                     "failed");
    /* No delays at all: the first failure is the last. */
    ck_assert_str_eq(retry_decide(false, false, 1, delays, 0, 0.5).status, "failed");
}
END_TEST

START_TEST(final_failures_are_never_retried)
{
    retry_outcome out = retry_decide(false, true, 1, delays, NDELAYS, 0.5);
    ck_assert_str_eq(out.status, "failed");
    ck_assert_int_eq(out.delay_ms, 0);
}
END_TEST

START_TEST(attempt_numbers_below_one_fail)
{
    /* Attempts count from 1; anything else is a bug elsewhere and must not index
     * delays[-1]. */
    ck_assert_str_eq(retry_decide(false, false, 0, delays, NDELAYS, 0.5).status, "failed");
    ck_assert_str_eq(retry_decide(false, false, -3, delays, NDELAYS, 0.5).status, "failed");
}
END_TEST

START_TEST(jitter_spreads_ten_percent_either_way)
{
    /* 60 s after the first attempt: 54 s at the low end, just under 66 s at the high end. */
    ck_assert_int_eq(retry_decide(false, false, 1, delays, NDELAYS, 0.0).delay_ms, 54000);
    long high = retry_decide(false, false, 1, delays, NDELAYS, 0.999999).delay_ms;
    ck_assert_int_lt(high, 66000);
    ck_assert_int_ge(high, 65999);
    long prev = 0;
    for (int i = 0; i < 100; i++) {
        long d = retry_decide(false, false, 2, delays, NDELAYS, i / 100.0).delay_ms;
        ck_assert_int_ge(d, 270000);
        ck_assert_int_lt(d, 330000);
        ck_assert_int_ge(d, prev); /* more jitter, never a shorter wait */
        prev = d;
    }
}
END_TEST

Suite *retry_suite(void)
{
    Suite *s = suite_create("retry");
    TCase *t = tcase_create("decide");
    tcase_add_test(t, success_is_delivered_whatever_the_attempt);
    tcase_add_test(t, failures_wait_the_configured_delay);
    tcase_add_test(t, one_attempt_more_than_delays);
    tcase_add_test(t, final_failures_are_never_retried);
    tcase_add_test(t, attempt_numbers_below_one_fail);
    tcase_add_test(t, jitter_spreads_ten_percent_either_way);
    suite_add_tcase(s, t);
    return s;
}
