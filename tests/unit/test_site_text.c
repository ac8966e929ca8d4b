/* admin/site_text: what a site's name and options may be, and the templates filled in. */
#include <stdlib.h>
#include <string.h>

#include "admin/site_text.h"
#include "unit.h"

START_TEST(good_names)
{
    static const char *const names[] = {"a", "shop1", "my-shop", "a1-b2-c3",
                                        "abcdefghijklmnopqrstuvwx"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        ck_assert_msg(site_name_problem(names[i]) == NULL, "%s refused", names[i]);
}
END_TEST

START_TEST(bad_names)
{
    static const char *const names[] = {"",
                                        "default",
                                        "Shop",
                                        "1shop",
                                        "-shop",
                                        "shop-",
                                        "my--shop",
                                        "my_shop",
                                        "../etc",
                                        "a/b",
                                        "a.b",
                                        "shop one",
                                        "shop\n",
                                        "shop;",
                                        "ShOp",
                                        "é",
                                        "abcdefghijklmnopqrstuvwxy" /* 25 */};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        ck_assert_msg(site_name_problem(names[i]) != NULL, "\"%s\" accepted", names[i]);
    ck_assert_ptr_nonnull(strstr(site_name_problem("default"), "single-instance"));
}
END_TEST

START_TEST(server_names)
{
    ck_assert_ptr_null(site_server_name_problem("shop1.example.com"));
    ck_assert_ptr_null(site_server_name_problem("shop1.example.com www.shop1.example.com"));
    ck_assert_ptr_null(site_server_name_problem("*.example.com"));
    ck_assert_ptr_null(site_server_name_problem("localhost"));
    static const char *const bad[] = {"",   " ",    "a;b",  "~^(.*)$", "a..b", ".a",
                                      "a.", "a{b}", "a\tb", "-a",      "a$b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(site_server_name_problem(bad[i]) != NULL, "\"%s\" accepted", bad[i]);
}
END_TEST

START_TEST(limits)
{
    ck_assert_ptr_null(site_cpu_quota_problem("50%"));
    ck_assert_ptr_null(site_cpu_quota_problem("200%"));
    ck_assert_ptr_nonnull(site_cpu_quota_problem("50"));
    ck_assert_ptr_nonnull(site_cpu_quota_problem("0%"));
    ck_assert_ptr_nonnull(site_cpu_quota_problem("100001%"));
    ck_assert_ptr_nonnull(site_cpu_quota_problem("%"));
    ck_assert_ptr_nonnull(site_cpu_quota_problem("5 0%"));
    ck_assert_ptr_null(site_memory_max_problem("512M"));
    ck_assert_ptr_null(site_memory_max_problem("2G"));
    ck_assert_ptr_null(site_memory_max_problem("1048576"));
    ck_assert_ptr_null(site_memory_max_problem("infinity"));
    ck_assert_ptr_nonnull(site_memory_max_problem("M"));
    ck_assert_ptr_nonnull(site_memory_max_problem("2GB"));
    ck_assert_ptr_nonnull(site_memory_max_problem("-1"));
    ck_assert_ptr_nonnull(site_memory_max_problem(""));
    ck_assert_ptr_null(site_listen_problem("80"));
    ck_assert_ptr_null(site_listen_problem("127.0.0.1:8080"));
    ck_assert_ptr_null(site_listen_problem("[::]:80"));
    ck_assert_ptr_nonnull(site_listen_problem("80; include /etc/shadow"));
    ck_assert_ptr_nonnull(site_listen_problem(""));
}
END_TEST

START_TEST(settings_values)
{
    ck_assert_ptr_null(site_setting_problem("host=/run/postgresql dbname=shop1 user=market-shop1"));
    ck_assert_ptr_null(site_setting_problem("host=db password='a b'"));
    static const char *const bad[] = {"a\"b", "a\\b", "$HOME", "`id`", "a\nb", "a\rb"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(site_setting_problem(bad[i]) != NULL, "\"%s\" accepted", bad[i]);
}
END_TEST

START_TEST(slice_names)
{
    char out[64];
    site_slice_name("shop1", out, sizeof out);
    ck_assert_str_eq(out, "market-sites-shop1.slice");
    /* A hyphen would nest my-shop's slice inside the slice of a site "my". */
    site_slice_name("my-shop", out, sizeof out);
    ck_assert_str_eq(out, "market-sites-my_shop.slice");
}
END_TEST

START_TEST(fill)
{
    static const char *const keys[] = {"SITE", "SERVER_NAME"};
    static const char *const values[] = {"shop1", "shop1.example"};
    const char *left = NULL;
    char *out = site_fill("upstream market_site_{{SITE}} { } server_name {{SERVER_NAME}}; "
                          "{{SITE}}{ x }",
                          keys, values, 2, &left);
    ck_assert_ptr_nonnull(out);
    ck_assert_str_eq(out, "upstream market_site_shop1 { } server_name shop1.example; shop1{ x }");
    free(out);
    const char *tmpl = "a {{SITE}} {{FILES_ROOT}} b";
    ck_assert_ptr_null(site_fill(tmpl, keys, values, 2, &left));
    ck_assert_str_eq(left, "{{FILES_ROOT}} b");
    /* A key is matched whole: {{SITEX}} is not {{SITE}} followed by X. */
    ck_assert_ptr_null(site_fill("{{SITEX}}", keys, values, 2, &left));
}
END_TEST

START_TEST(env_set_and_get)
{
    const char *tmpl = "# header\n"
                       "## MARKET_DB\n"
                       "MARKET_DB=\"host=/run/postgresql dbname=market\"\n"
                       "#MARKET_WORKERS=4\n"
                       "#MARKET_WORKERS=8\n"
                       "MARKET_RATE_LIMIT=600\n";
    static const char *const names[] = {"MARKET_DB", "MARKET_WORKERS", "MARKET_METRICS_FILE"};
    static const char *const values[] = {"dbname=shop1", "2", "/run/market-api-shop1/metrics"};
    char *out = site_env_set(tmpl, names, values, 3);
    ck_assert_str_eq(out, "# header\n"
                          "## MARKET_DB\n"
                          "MARKET_DB=\"dbname=shop1\"\n"
                          "MARKET_WORKERS=\"2\"\n"
                          "#MARKET_WORKERS=8\n"
                          "MARKET_RATE_LIMIT=600\n"
                          "MARKET_METRICS_FILE=\"/run/market-api-shop1/metrics\"\n");
    char v[64];
    ck_assert(site_env_get(out, "MARKET_DB", v, sizeof v));
    ck_assert_str_eq(v, "dbname=shop1");
    ck_assert(site_env_get(out, "MARKET_RATE_LIMIT", v, sizeof v));
    ck_assert_str_eq(v, "600");
    /* A commented line is a default, not a value. */
    ck_assert(!site_env_get("#MARKET_WORKERS=8\n", "MARKET_WORKERS", v, sizeof v));
    ck_assert(!site_env_get(out, "MARKET_DB_READ", v, sizeof v));
    free(out);
}
END_TEST

Suite *site_text_suite(void)
{
    Suite *s = suite_create("site_text");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, good_names);
    tcase_add_test(tc, bad_names);
    tcase_add_test(tc, server_names);
    tcase_add_test(tc, limits);
    tcase_add_test(tc, settings_values);
    tcase_add_test(tc, slice_names);
    tcase_add_test(tc, fill);
    tcase_add_test(tc, env_set_and_get);
    suite_add_tcase(s, tc);
    return s;
}
