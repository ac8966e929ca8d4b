/* api/pool_idle: when an idle pool stops (MARKET_IDLE_EXIT), without the system. */
#include "api/ops/pool_idle.h"
#include "unit.h"

START_TEST(a_pool_without_the_setting_never_stops)
{
    ck_assert_int_eq(pool_idle_decide(0, 0, "multiwatch"), POOL_IDLE_OFF);
    ck_assert_int_eq(pool_idle_decide(0, 86400000LL * 365, "multiwatch"), POOL_IDLE_OFF);
    ck_assert_int_eq(pool_idle_check_ms(0), 0);
}
END_TEST

START_TEST(a_pool_stops_once_idle_for_the_whole_period)
{
    ck_assert_int_eq(pool_idle_decide(600, 599999, "multiwatch"), POOL_IDLE_STAY);
    ck_assert_int_eq(pool_idle_decide(600, 600000, "multiwatch"), POOL_IDLE_STOP);
    ck_assert_int_eq(pool_idle_decide(2, 2500, "multiwatch"), POOL_IDLE_STOP);
    ck_assert_int_eq(pool_idle_decide(86400, 86400000LL, "multiwatch"), POOL_IDLE_STOP);
}
END_TEST

START_TEST(a_request_in_progress_keeps_the_pool)
{
    /* -1: a worker of the pool serves now (metrics_idle_ms), however quiet before. */
    ck_assert_int_eq(pool_idle_decide(2, -1, "multiwatch"), POOL_IDLE_STAY);
}
END_TEST

START_TEST(only_a_multiwatch_parent_is_stopped)
{
    /* A worker started by hand, by spawn-fcgi -F (init adopts it) or by systemd itself
     * has no pool to stop: signalling its parent would hit the wrong process. */
    ck_assert_int_eq(pool_idle_decide(2, 5000, "systemd"), POOL_IDLE_NO_POOL);
    ck_assert_int_eq(pool_idle_decide(2, 5000, "bash"), POOL_IDLE_NO_POOL);
    ck_assert_int_eq(pool_idle_decide(2, 5000, "multiwatchx"), POOL_IDLE_NO_POOL);
    ck_assert_int_eq(pool_idle_decide(2, 5000, NULL), POOL_IDLE_NO_POOL);
    /* Before the period, the parent is not even looked at. */
    ck_assert_int_eq(pool_idle_decide(2, 1000, NULL), POOL_IDLE_STAY);
}
END_TEST

START_TEST(a_worker_looks_often_enough_and_not_too_often)
{
    ck_assert_int_eq(pool_idle_check_ms(1), 500);
    ck_assert_int_eq(pool_idle_check_ms(2), 500);
    ck_assert_int_eq(pool_idle_check_ms(10), 2500);
    ck_assert_int_eq(pool_idle_check_ms(600), 5000);
    ck_assert_int_eq(pool_idle_check_ms(86400), 5000);
}
END_TEST

Suite *pool_idle_suite(void)
{
    Suite *s = suite_create("pool_idle");
    TCase *tc = tcase_create("decide");
    tcase_add_test(tc, a_pool_without_the_setting_never_stops);
    tcase_add_test(tc, a_pool_stops_once_idle_for_the_whole_period);
    tcase_add_test(tc, a_request_in_progress_keeps_the_pool);
    tcase_add_test(tc, only_a_multiwatch_parent_is_stopped);
    tcase_add_test(tc, a_worker_looks_often_enough_and_not_too_often);
    suite_add_tcase(s, tc);
    return s;
}
