/* webhookd/target: which URLs a delivery may go to, and the address libcurl is pinned to.
 * Only literal addresses and localhost: no test depends on outside DNS. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "webhookd/target.h"

static target t;
static char err[128];

static void setup(void)
{
    memset(&t, 0, sizeof t);
    err[0] = '\0';
}

static void teardown(void)
{
    target_free(&t);
}

/* url is refused as non-public, then accepted with allow_private (t holds it then). */
static void private_only(const char *url)
{
    ck_assert_msg(!target_prepare(url, false, &t, err, sizeof err), "%s", url);
    ck_assert_str_eq(err, "host is or resolves to a non-public address");
    ck_assert_ptr_null(t.url);
    ck_assert_msg(target_prepare(url, true, &t, err, sizeof err), "%s: %s", url, err);
}

START_TEST(only_absolute_https_urls)
{
    ck_assert(!target_prepare("http://8.8.8.8/hook", false, &t, err, sizeof err));
    ck_assert_str_eq(err, "URL is not https");
    ck_assert(!target_prepare("ftp://8.8.8.8/hook", true, &t, err, sizeof err));
    ck_assert_str_eq(err, "URL is not https");
    static const char *const invalid[] = {"",         "8.8.8.8/hook",   "/hook",
                                          "https://", "https://[::1/x", "https://exa mple.com/"};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        err[0] = '\0';
        ck_assert_msg(!target_prepare(invalid[i], true, &t, err, sizeof err), "%s", invalid[i]);
        ck_assert_str_eq(err, "invalid URL");
        ck_assert_ptr_null(t.url);
    }
}
END_TEST

START_TEST(public_literal_is_sent_as_is)
{
    ck_assert(target_prepare("https://8.8.8.8:8443/in?x=1", false, &t, err, sizeof err));
    ck_assert_str_eq(t.url, "https://8.8.8.8:8443/in?x=1");
    ck_assert_str_eq(t.host, "8.8.8.8");
    ck_assert_ptr_null(t.resolve); /* libcurl connects to a literal directly */
    target_free(&t);
    ck_assert(target_prepare("https://[2001:4860:4860::8888]/in", false, &t, err, sizeof err));
    ck_assert_str_eq(t.host, "[2001:4860:4860::8888]");
    ck_assert_ptr_null(t.resolve);
}
END_TEST

START_TEST(private_literals_need_allow_private)
{
    static const char *const urls[] = {"https://127.0.0.1/h", "https://[::1]:9000/h",
                                       "https://169.254.169.254/latest", "https://10.1.2.3/h"};
    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        private_only(urls[i]);
        ck_assert_str_eq(t.url, urls[i]);
        target_free(&t);
    }
}
END_TEST

START_TEST(other_ipv4_spellings_are_what_they_mean)
{
    /* 2130706433 is 127.0.0.1: checked, and sent, as the dotted address. */
    private_only("https://2130706433/h");
    ck_assert_str_eq(t.host, "127.0.0.1");
    ck_assert_str_eq(t.url, "https://127.0.0.1/h");
}
END_TEST

START_TEST(names_are_lowered_and_pinned)
{
    private_only("https://LocalHost:8443/in");
    ck_assert_str_eq(t.host, "localhost");
    ck_assert_str_eq(t.url, "https://localhost:8443/in");
    /* CURLOPT_RESOLVE: the name, the port and exactly the addresses that were checked. */
    ck_assert_ptr_nonnull(t.resolve);
    ck_assert_msg(strncmp(t.resolve, "localhost:8443:", 15) == 0, "%s", t.resolve);
    ck_assert_msg(strstr(t.resolve, "127.0.0.1") != NULL || strstr(t.resolve, "[::1]") != NULL,
                  "%s", t.resolve);
    target_free(&t);
    /* Without a port, the scheme's. */
    ck_assert(target_prepare("https://localhost/in", true, &t, err, sizeof err));
    ck_assert_msg(strncmp(t.resolve, "localhost:443:", 14) == 0, "%s", t.resolve);
}
END_TEST

START_TEST(free_is_idempotent)
{
    ck_assert(target_prepare("https://localhost/in", true, &t, err, sizeof err));
    target_free(&t);
    ck_assert_ptr_null(t.url);
    ck_assert_ptr_null(t.resolve);
    target_free(&t);
}
END_TEST

Suite *target_suite(void)
{
    Suite *s = suite_create("target");
    TCase *tc = tcase_create("prepare");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, only_absolute_https_urls);
    tcase_add_test(tc, public_literal_is_sent_as_is);
    tcase_add_test(tc, private_literals_need_allow_private);
    tcase_add_test(tc, other_ipv4_spellings_are_what_they_mean);
    tcase_add_test(tc, names_are_lowered_and_pinned);
    tcase_add_test(tc, free_is_idempotent);
    suite_add_tcase(s, tc);
    return s;
}
