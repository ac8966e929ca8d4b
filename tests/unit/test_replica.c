/* The replica's lag bound (app/api/catalogue/replica.c): pg_lsn parsing and the two bounds. */
#include <stdint.h>

#include "replica.h"
#include "unit.h"

START_TEST(parses_lsn)
{
    uint64_t v = 0;
    ck_assert(lsn_parse("0/0", &v));
    ck_assert_uint_eq(v, 0);
    ck_assert(lsn_parse("16/B374D848", &v));
    ck_assert_uint_eq(v, ((uint64_t)0x16 << 32) | 0xB374D848u);
    ck_assert(lsn_parse("FFFFFFFF/FFFFFFFF", &v));
    ck_assert_uint_eq(v, UINT64_MAX);
}
END_TEST

START_TEST(rejects_bad_lsn)
{
    uint64_t v = 7;
    const char *bad[] = {"",       "16",  "16/",         "/B3",         "16/B3 ",
                         "16/B3x", "x/1", "100000000/0", "0/100000000", NULL};
    for (int i = 0; bad[i] != NULL; i++)
        ck_assert_msg(!lsn_parse(bad[i], &v), "accepted \"%s\"", bad[i]);
    ck_assert(!lsn_parse(NULL, &v));
    ck_assert_uint_eq(v, 7);
}
END_TEST

START_TEST(caught_up_is_no_lag)
{
    lsn_samples s = {0};
    lsn_samples_add(&s, 100, 1000);
    lsn_samples_add(&s, 200, 2000);
    /* Replayed past the newest sample, taken 30 ms ago: 30 ms at most, even though the
     * last replayed transaction is an hour old (an idle primary). */
    ck_assert_int_eq(replica_lag_ms(&s, 200, 3600 * 1000LL, 2030), 30);
    ck_assert_int_eq(replica_lag_ms(&s, 250, -1, 2030), 30);
}
END_TEST

START_TEST(behind_is_bounded_by_the_newest_sample_reached)
{
    lsn_samples s = {0};
    for (int i = 1; i <= 10; i++)
        lsn_samples_add(&s, (uint64_t)i * 100, i * 1000LL);
    /* It has replayed 450: it has everything of the sample at 4000 ms (LSN 400). */
    ck_assert_int_eq(replica_lag_ms(&s, 450, -1, 10000), 6000);
    /* The replayed transaction's age is the tighter bound here. */
    ck_assert_int_eq(replica_lag_ms(&s, 450, 2500, 10000), 2500);
}
END_TEST

START_TEST(unknown_without_any_bound)
{
    lsn_samples s = {0};
    ck_assert_int_eq(replica_lag_ms(&s, 5, -1, 1000), -1);
    lsn_samples_add(&s, 100, 500);
    /* Behind every sample and no transaction replayed: nothing bounds it. */
    ck_assert_int_eq(replica_lag_ms(&s, 50, -1, 1000), -1);
    ck_assert_int_eq(replica_lag_ms(&s, 50, 700, 1000), 700);
}
END_TEST

START_TEST(ring_keeps_the_newest_samples)
{
    lsn_samples s = {0};
    for (int i = 1; i <= REPLICA_SAMPLES + 10; i++)
        lsn_samples_add(&s, (uint64_t)i * 10, i * 1000LL);
    ck_assert_int_eq(s.count, REPLICA_SAMPLES);
    long long now = (REPLICA_SAMPLES + 10) * 1000LL;
    /* The oldest samples were overwritten: a replica behind all kept ones is unbounded. */
    ck_assert_int_eq(replica_lag_ms(&s, 10 * 10, -1, now), -1);
    /* One that reached the oldest kept sample (number 11) is bounded by it. */
    ck_assert_int_eq(replica_lag_ms(&s, 11 * 10, -1, now), now - 11 * 1000LL);
    /* Clock steps backwards never make a negative lag. */
    ck_assert_int_eq(replica_lag_ms(&s, UINT64_MAX, -1, 0), 0);
}
END_TEST

Suite *replica_suite(void)
{
    Suite *s = suite_create("replica");
    TCase *t = tcase_create("lag");
    tcase_add_test(t, parses_lsn);
    tcase_add_test(t, rejects_bad_lsn);
    tcase_add_test(t, caught_up_is_no_lag);
    tcase_add_test(t, behind_is_bounded_by_the_newest_sample_reached);
    tcase_add_test(t, unknown_without_any_bound);
    tcase_add_test(t, ring_keeps_the_newest_samples);
    suite_add_tcase(s, t);
    return s;
}
