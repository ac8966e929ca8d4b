/* webhookd/target: which URLs a delivery may go to, and the addresses libcurl is pinned
 * to. Only literal addresses and answers made here: no test depends on DNS. */
#include <arpa/inet.h>
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

/* A resolver's answer made of address texts (IPv4 or IPv6, no brackets). */
typedef struct {
    struct sockaddr_storage ss[8];
    const struct sockaddr *addrs[8];
    size_t n;
} answer;

static void answer_of(answer *a, const char *const *texts, size_t n)
{
    memset(a, 0, sizeof *a);
    for (size_t i = 0; i < n; i++) {
        struct sockaddr_in *in = (struct sockaddr_in *)&a->ss[i];
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->ss[i];
        if (inet_pton(AF_INET, texts[i], &in->sin_addr) == 1) {
            in->sin_family = AF_INET;
        } else {
            ck_assert_msg(inet_pton(AF_INET6, texts[i], &in6->sin6_addr) == 1, "%s", texts[i]);
            in6->sin6_family = AF_INET6;
        }
        a->addrs[i] = (const struct sockaddr *)&a->ss[i];
    }
    a->n = n;
}

#define ANSWER(a, ...)                                                                             \
    do {                                                                                           \
        static const char *const texts_[] = {__VA_ARGS__};                                         \
        answer_of((a), texts_, sizeof texts_ / sizeof texts_[0]);                                  \
    } while (0)

/* A literal URL is refused as non-public, then accepted with allow_private. */
static void private_only(const char *url)
{
    ck_assert_msg(target_parse(url, &t, err, sizeof err), "%s: %s", url, err);
    ck_assert(t.literal);
    ck_assert_msg(!target_check_literal(&t, false, err, sizeof err), "%s", url);
    ck_assert_str_eq(err, "host is or resolves to a non-public address");
    ck_assert_msg(target_check_literal(&t, true, err, sizeof err), "%s: %s", url, err);
}

START_TEST(only_absolute_https_urls)
{
    ck_assert(!target_parse("http://8.8.8.8/hook", &t, err, sizeof err));
    ck_assert_str_eq(err, "URL is not https");
    ck_assert(!target_parse("ftp://8.8.8.8/hook", &t, err, sizeof err));
    ck_assert_str_eq(err, "URL is not https");
    static const char *const invalid[] = {"",         "8.8.8.8/hook",   "/hook",
                                          "https://", "https://[::1/x", "https://exa mple.com/"};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        err[0] = '\0';
        ck_assert_msg(!target_parse(invalid[i], &t, err, sizeof err), "%s", invalid[i]);
        ck_assert_str_eq(err, "invalid URL");
        ck_assert_ptr_null(t.url);
    }
}
END_TEST

START_TEST(public_literal_is_sent_as_is)
{
    ck_assert(target_parse("https://8.8.8.8:8443/in?x=1", &t, err, sizeof err));
    ck_assert(t.literal);
    ck_assert(target_check_literal(&t, false, err, sizeof err));
    ck_assert_str_eq(t.url, "https://8.8.8.8:8443/in?x=1");
    ck_assert_str_eq(t.host, "8.8.8.8");
    ck_assert_ptr_null(t.resolve); /* libcurl connects to a literal directly */
    target_free(&t);
    ck_assert(target_parse("https://[2001:4860:4860::8888]/in", &t, err, sizeof err));
    ck_assert(t.literal);
    ck_assert(target_check_literal(&t, false, err, sizeof err));
    ck_assert_str_eq(t.host, "[2001:4860:4860::8888]");
    ck_assert_str_eq(t.port, "443");
    ck_assert_ptr_null(t.resolve);
}
END_TEST

START_TEST(private_literals_need_allow_private)
{
    static const char *const urls[] = {"https://127.0.0.1/h", "https://[::1]:9000/h",
                                       "https://169.254.169.254/latest", "https://10.1.2.3/h",
                                       "https://[::ffff:192.168.0.1]/h"};
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
    target_free(&t);
    private_only("https://0x7f.1/h");
    ck_assert_str_eq(t.host, "127.0.0.1");
}
END_TEST

START_TEST(names_are_lowered_and_left_to_resolve)
{
    ck_assert(target_parse("https://Hooks.Example.COM:8443/in", &t, err, sizeof err));
    ck_assert(!t.literal);
    ck_assert_str_eq(t.host, "hooks.example.com");
    ck_assert_str_eq(t.port, "8443");
    ck_assert_str_eq(t.url, "https://hooks.example.com:8443/in");
    ck_assert_ptr_null(t.resolve); /* nothing pinned before the answer is checked */
    target_free(&t);
    /* Internationalised names come in their xn-- form (docs/api.md), lowered too. */
    ck_assert(target_parse("https://XN--bcher-kva.Example/in", &t, err, sizeof err));
    ck_assert_str_eq(t.host, "xn--bcher-kva.example");
    ck_assert_str_eq(t.port, "443");
}
END_TEST

START_TEST(public_answer_is_pinned_whole)
{
    answer a;
    ANSWER(&a, "93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946");
    ck_assert(target_parse("https://example.com:8443/in", &t, err, sizeof err));
    ck_assert_msg(target_pin(&t, a.addrs, a.n, false, err, sizeof err), "%s", err);
    /* CURLOPT_RESOLVE: the name, the port and exactly the addresses that were checked. */
    ck_assert_str_eq(t.resolve,
                     "example.com:8443:93.184.216.34,[2606:2800:220:1:248:1893:25c8:1946]");
}
END_TEST

START_TEST(one_private_address_refuses_the_answer)
{
    answer a;
    /* A private address hidden behind public ones: the whole answer is refused. */
    ANSWER(&a, "93.184.216.34", "1.1.1.1", "8.8.8.8", "9.9.9.9", "10.0.0.5");
    ck_assert(target_parse("https://rebind.example/in", &t, err, sizeof err));
    ck_assert(!target_pin(&t, a.addrs, a.n, false, err, sizeof err));
    ck_assert_str_eq(err, "host is or resolves to a non-public address");
    ck_assert_ptr_null(t.resolve);
    ck_assert_msg(target_pin(&t, a.addrs, a.n, true, err, sizeof err), "%s", err);
    /* Pinned: the first four, in the resolver's order. */
    ck_assert_str_eq(t.resolve, "rebind.example:443:93.184.216.34,1.1.1.1,8.8.8.8,9.9.9.9");
    ANSWER(&a, "::ffff:127.0.0.1");
    ck_assert(!target_pin(&t, a.addrs, a.n, false, err, sizeof err));
    ck_assert_str_eq(err, "host is or resolves to a non-public address");
}
END_TEST

START_TEST(empty_answer_does_not_resolve)
{
    ck_assert(target_parse("https://empty.example/in", &t, err, sizeof err));
    ck_assert(!target_pin(&t, NULL, 0, true, err, sizeof err));
    ck_assert_str_eq(err, "host does not resolve");
    ck_assert_ptr_null(t.resolve);
}
END_TEST

START_TEST(free_is_idempotent)
{
    answer a;
    ANSWER(&a, "127.0.0.1");
    ck_assert(target_parse("https://localhost/in", &t, err, sizeof err));
    ck_assert(target_pin(&t, a.addrs, a.n, true, err, sizeof err));
    ck_assert_str_eq(t.resolve, "localhost:443:127.0.0.1");
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
    tcase_add_test(tc, names_are_lowered_and_left_to_resolve);
    tcase_add_test(tc, public_answer_is_pinned_whole);
    tcase_add_test(tc, one_private_address_refuses_the_answer);
    tcase_add_test(tc, empty_answer_does_not_resolve);
    tcase_add_test(tc, free_is_idempotent);
    suite_add_tcase(s, tc);
    return s;
}
