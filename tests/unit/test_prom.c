/* prom: the Prometheus text format. */
#include <math.h>
#include <string.h>

#include "prom.h"
#include "unit.h"

START_TEST(family_and_samples)
{
    buf b;
    buf_init(&b, 16);
    prom_family(&b, "market_x_total", "counter", "Things.\nWith a \\ in it.");
    prom_u64(&b, "market_x_total",
             (const char *const[]){"route", "products_list", "status", "200", NULL},
             18446744073709551615ULL);
    prom_u64(&b, "market_x_total", NULL, 0);
    prom_f64(&b, "market_age_seconds", (const char *const[]){NULL}, 1.5);
    ck_assert_str_eq(b.data, "# HELP market_x_total Things.\\nWith a \\\\ in it.\n"
                             "# TYPE market_x_total counter\n"
                             "market_x_total{route=\"products_list\",status=\"200\"} "
                             "18446744073709551615\n"
                             "market_x_total 0\n"
                             "market_age_seconds 1.5\n");
    buf_free(&b);
}
END_TEST

START_TEST(label_values_are_escaped)
{
    buf b;
    buf_init(&b, 16);
    prom_u64(&b, "m", (const char *const[]){"host", "a\"b\\c\nd", NULL}, 1);
    ck_assert_str_eq(b.data, "m{host=\"a\\\"b\\\\c\\nd\"} 1\n");
    buf_free(&b);
}
END_TEST

START_TEST(floats_as_prometheus_reads_them)
{
    buf b;
    buf_init(&b, 16);
    prom_f64(&b, "a", NULL, 0.000123);
    prom_f64(&b, "b", NULL, 123456789.25);
    prom_f64(&b, "c", NULL, INFINITY);
    prom_f64(&b, "d", NULL, -INFINITY);
    prom_f64(&b, "e", NULL, NAN);
    prom_f64(&b, "f", NULL, 0);
    ck_assert_str_eq(b.data, "a 0.000123\nb 123456789.25\nc +Inf\nd -Inf\ne NaN\nf 0\n");
    buf_free(&b);
}
END_TEST

START_TEST(histogram_buckets_are_cumulative)
{
    buf b;
    buf_init(&b, 16);
    static const double bounds[] = {0.001, 0.5, 2};
    static const uint64_t counts[] = {3, 0, 2, 1}; /* the last: above 2 s */
    prom_histogram(&b, "market_d_seconds", (const char *const[]){"route", "none", NULL}, bounds, 3,
                   counts, 7.25);
    ck_assert_str_eq(b.data, "market_d_seconds_bucket{route=\"none\",le=\"0.001\"} 3\n"
                             "market_d_seconds_bucket{route=\"none\",le=\"0.5\"} 3\n"
                             "market_d_seconds_bucket{route=\"none\",le=\"2\"} 5\n"
                             "market_d_seconds_bucket{route=\"none\",le=\"+Inf\"} 6\n"
                             "market_d_seconds_sum{route=\"none\"} 7.25\n"
                             "market_d_seconds_count{route=\"none\"} 6\n");
    buf_clear(&b);
    prom_histogram(&b, "h", NULL, bounds, 1, counts, 0);
    ck_assert_str_eq(b.data, "h_bucket{le=\"0.001\"} 3\nh_bucket{le=\"+Inf\"} 3\nh_sum 0\n"
                             "h_count 3\n");
    buf_free(&b);
}
END_TEST

Suite *prom_suite(void)
{
    Suite *s = suite_create("prom");
    TCase *tc = tcase_create("format");
    tcase_add_test(tc, family_and_samples);
    tcase_add_test(tc, label_values_are_escaped);
    tcase_add_test(tc, floats_as_prometheus_reads_them);
    tcase_add_test(tc, histogram_buckets_are_cumulative);
    suite_add_tcase(s, tc);
    return s;
}
