/* webhookd/duetimes: the min-heap of this drainer's own retry times. */
#include <stdlib.h>

#include "unit.h"
#include "webhookd/duetimes.h"

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

START_TEST(empty_has_nothing_due)
{
    duetimes d;
    duetimes_init(&d);
    ck_assert_int_eq(duetimes_next(&d), -1);
    ck_assert(!duetimes_pop_due(&d, 1LL << 60));
    duetimes_free(&d);
}
END_TEST

START_TEST(next_is_the_earliest)
{
    duetimes d;
    duetimes_init(&d);
    duetimes_add(&d, 5000);
    ck_assert_int_eq(duetimes_next(&d), 5000);
    duetimes_add(&d, 9000);
    ck_assert_int_eq(duetimes_next(&d), 5000);
    duetimes_add(&d, 1000);
    ck_assert_int_eq(duetimes_next(&d), 1000);
    duetimes_free(&d);
    ck_assert_int_eq(duetimes_next(&d), -1);
}
END_TEST

START_TEST(pop_due_forgets_what_is_due_only)
{
    duetimes d;
    duetimes_init(&d);
    duetimes_add(&d, 3000);
    duetimes_add(&d, 1000);
    duetimes_add(&d, 2000);
    duetimes_add(&d, 2000);
    ck_assert(!duetimes_pop_due(&d, 999));
    ck_assert_int_eq(d.len, 4);
    ck_assert(duetimes_pop_due(&d, 2000)); /* a time equal to now is due */
    ck_assert_int_eq(d.len, 1);
    ck_assert_int_eq(duetimes_next(&d), 3000);
    ck_assert(!duetimes_pop_due(&d, 2999));
    ck_assert(duetimes_pop_due(&d, 5000));
    ck_assert_int_eq(duetimes_next(&d), -1);
    duetimes_free(&d);
}
END_TEST

START_TEST(many_times_come_out_in_order)
{
    enum { N = 5000 };
    static long long want[N];
    duetimes d;
    duetimes_init(&d);
    unsigned long long x = 88172645463325252ULL; /* xorshift: the same sequence every run */
    for (int i = 0; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        want[i] = (long long)(x % 100000);
        duetimes_add(&d, want[i]);
    }
    qsort(want, N, sizeof want[0], cmp_ll);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(duetimes_next(&d), want[i]);
        /* Pop exactly the times equal to want[i]: one step of now at a time. */
        if (i + 1 == N || want[i + 1] != want[i])
            ck_assert(duetimes_pop_due(&d, want[i]));
    }
    ck_assert_int_eq(d.len, 0);
    duetimes_free(&d);
}
END_TEST

START_TEST(full_heap_ignores_more)
{
    /* A hint only: past DUETIMES_MAX the one-second poll finds the rest. */
    duetimes d;
    duetimes_init(&d);
    for (long long i = 0; i < DUETIMES_MAX; i++)
        duetimes_add(&d, 1000 + i);
    duetimes_add(&d, 1);
    ck_assert_int_eq(d.len, DUETIMES_MAX);
    ck_assert_int_eq(duetimes_next(&d), 1000);
    duetimes_free(&d);
}
END_TEST

Suite *duetimes_suite(void)
{
    Suite *s = suite_create("duetimes");
    TCase *t = tcase_create("heap");
    tcase_add_test(t, empty_has_nothing_due);
    tcase_add_test(t, next_is_the_earliest);
    tcase_add_test(t, pop_due_forgets_what_is_due_only);
    tcase_add_test(t, many_times_come_out_in_order);
    tcase_add_test(t, full_heap_ignores_more);
    suite_add_tcase(s, t);
    return s;
}
