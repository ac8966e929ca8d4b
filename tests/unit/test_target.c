/* webhookd/target: which URLs a delivery may go to (those lib/url.c accepts, and no
 * other), the URL libcurl is handed, and the addresses libcurl is pinned to. Only literal
 * addresses and answers made here: no test depends on DNS. */
#include <arpa/inet.h>
#include <stdio.h>
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

/* What libcurl reads from the handle it is given: the part, or "" when it has none. */
static void curl_part(CURLUPart what, unsigned flags, char *out, size_t outsz)
{
    char *v = NULL;
    out[0] = '\0';
    if (curl_url_get(t.url, what, &v, flags) == CURLUE_OK)
        snprintf(out, outsz, "%s", v);
    curl_free(v);
}

/* The request libcurl is handed goes to exactly the host and port that were checked:
 * the handle's scheme is https, its host t.host, its port (the scheme's if none) t.port,
 * its path the root and no more (the path goes as the request target, byte for byte);
 * written out, the handle and the target are want, the URL url_parse normalised. */
static void requests(const char *want)
{
    char scheme[16], host[TARGET_HOST_MAX], port[8], path[8], url[URL_MAX + 1];
    ck_assert_ptr_nonnull(t.url);
    ck_assert_ptr_nonnull(t.request_target);
    curl_part(CURLUPART_SCHEME, 0, scheme, sizeof scheme);
    curl_part(CURLUPART_HOST, 0, host, sizeof host);
    curl_part(CURLUPART_PORT, CURLU_DEFAULT_PORT, port, sizeof port);
    curl_part(CURLUPART_PATH, 0, path, sizeof path);
    curl_part(CURLUPART_URL, 0, url, sizeof url);
    ck_assert_str_eq(scheme, "https");
    ck_assert_str_eq(host, t.host);
    ck_assert_str_eq(port, t.port);
    ck_assert_str_eq(path, "/");
    size_t origin = strlen(url) - 1; /* the handle's URL is the origin and "/" */
    ck_assert_int_eq(url[origin], '/');
    ck_assert_int_eq(t.request_target[0], '/');
    char whole[URL_MAX + 2];
    snprintf(whole, sizeof whole, "%.*s%s", (int)origin, url, t.request_target);
    ck_assert_str_eq(whole, want);
}

/* A literal URL is refused as non-public, then accepted with allow_private. */
static void private_only(const char *url)
{
    ck_assert_msg(target_parse(url, &t, err, sizeof err), "%s: %s", url, err);
    ck_assert(t.literal);
    ck_assert_msg(!target_check_literal(&t, false, err, sizeof err), "%s", url);
    ck_assert_str_eq(err, "host is or resolves to a non-public address");
    ck_assert_msg(target_check_literal(&t, true, err, sizeof err), "%s: %s", url, err);
}

/* Refused by target_parse with reason why, and nothing to request. */
static void refused(const char *url, const char *why)
{
    err[0] = '\0';
    ck_assert_msg(!target_parse(url, &t, err, sizeof err), "%s", url);
    ck_assert_msg(strcmp(err, why) == 0, "%s: %s", url, err);
    ck_assert_ptr_null(t.url);
    ck_assert_ptr_null(t.request_target);
    ck_assert_ptr_null(t.resolve);
}

START_TEST(only_absolute_https_urls)
{
    refused("http://8.8.8.8/hook", "URL is not https");
    refused("HTTP://example.com/hook", "URL is not https");
    static const char *const invalid[] = {"",
                                          "8.8.8.8/hook",
                                          "/hook",
                                          "ftp://8.8.8.8/hook",
                                          "https://",
                                          "https://[::1/x",
                                          "https://exa mple.com/"};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
        refused(invalid[i], "invalid URL");
}
END_TEST

/* What url_parse refuses is never requested, even where libcurl's own parser would find
 * a host (and not always the one a reader sees). */
START_TEST(what_url_parse_refuses_is_not_sent)
{
    static const char *const invalid[] = {
        "https://user:pass@example.com/in",                    /* userinfo */
        "https://example.com@127.0.0.1/in",                    /* userinfo hiding the host */
        "https://8.8.8.8\\@127.0.0.1/in",                      /* a backslash */
        "https://example.com\\in",                             /* a backslash */
        "https://example.com/in#frag",                         /* a fragment */
        "https://example.com#@127.0.0.1/in",                   /* a fragment hiding userinfo */
        "https://b\xc3\xbc\x63her.example/in",                 /* outside ASCII: xn-- form only */
        "https://\xef\xbc\x91\xef\xbc\x92\xef\xbc\x97.0.0.1/", /* full-width digits */
        "https://127.1/h", /* numeric names: only dotted quads */
        "https://2130706433/h",
        "https://0x7f.1/h",
        "https://0177.0.0.1/h",
        "https://1.2.3.4.5/h",
        "https://[fe80::1%25eth0]/h", /* a zone */
        "https://example.com./h",     /* a trailing dot */
        "https://example.com:0/h",
        "https://example.com:443x/h",
        "https://example.com/a b",
    };
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
        refused(invalid[i], "invalid URL");
}
END_TEST

START_TEST(public_literal_is_sent_as_is)
{
    ck_assert(target_parse("https://8.8.8.8:8443/in?x=1", &t, err, sizeof err));
    ck_assert(t.literal);
    ck_assert(target_check_literal(&t, false, err, sizeof err));
    ck_assert_str_eq(t.host, "8.8.8.8");
    ck_assert_str_eq(t.port, "8443");
    requests("https://8.8.8.8:8443/in?x=1");
    ck_assert_ptr_null(t.resolve); /* libcurl connects to a literal directly */
    target_free(&t);
    ck_assert(target_parse("https://[2001:4860:4860::8888]/in", &t, err, sizeof err));
    ck_assert(t.literal);
    ck_assert(target_check_literal(&t, false, err, sizeof err));
    ck_assert_str_eq(t.host, "[2001:4860:4860::8888]"); /* as libcurl has it, and logs say */
    ck_assert_str_eq(t.address, "2001:4860:4860::8888");
    ck_assert_str_eq(t.port, "443");
    requests("https://[2001:4860:4860::8888]/in");
    ck_assert_ptr_null(t.resolve);
}
END_TEST

START_TEST(private_literals_need_allow_private)
{
    static const char *const urls[] = {
        "https://127.0.0.1/h", "https://[::1]:9000/h",           "https://169.254.169.254/latest",
        "https://10.1.2.3/h",  "https://[::ffff:192.168.0.1]/h", "https://[fe80::1]/h",
        "https://0.0.0.0/h"};
    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        private_only(urls[i]);
        requests(urls[i]);
        target_free(&t);
    }
}
END_TEST

START_TEST(names_are_lowered_and_left_to_resolve)
{
    ck_assert(
        target_parse("HTTPS://Hooks.Example.COM:8443/In/%7Eme?Q=1&r=%2F", &t, err, sizeof err));
    ck_assert(!t.literal);
    ck_assert_str_eq(t.host, "hooks.example.com");
    ck_assert_str_eq(t.address, "");
    ck_assert_str_eq(t.port, "8443");
    /* Only the scheme and host change (case); path and query go byte for byte. */
    requests("https://hooks.example.com:8443/In/%7Eme?Q=1&r=%2F");
    ck_assert_ptr_null(t.resolve); /* nothing pinned before the answer is checked */
    char err2[64];
    ck_assert(!target_check_literal(&t, true, err2, sizeof err2)); /* a name is not */
    target_free(&t);
    /* Internationalised names come in their xn-- form (docs/api.md), lowered too. */
    ck_assert(target_parse("https://XN--bcher-kva.Example/in", &t, err, sizeof err));
    ck_assert_str_eq(t.host, "xn--bcher-kva.example");
    ck_assert_str_eq(t.port, "443");
    requests("https://xn--bcher-kva.example/in");
    target_free(&t);
    /* No path, an empty query, every character RFC 3986 allows in a path. */
    ck_assert(target_parse("https://example.com", &t, err, sizeof err));
    requests("https://example.com/");
    target_free(&t);
    ck_assert(target_parse("https://example.com?a?b=@:/", &t, err, sizeof err));
    requests("https://example.com/?a?b=@:/");
    target_free(&t);
    ck_assert(target_parse("https://e.com/!$&'()*+,;=:@-._~/..", &t, err, sizeof err));
    requests("https://e.com/!$&'()*+,;=:@-._~/..");
}
END_TEST

START_TEST(name_is_pinned_as_libcurl_matches_it)
{
    answer a;
    ANSWER(&a, "93.184.216.34");
    ck_assert(target_parse("https://Hooks.Example.com/in", &t, err, sizeof err));
    ck_assert_msg(target_pin(&t, a.addrs, a.n, false, err, sizeof err), "%s", err);
    /* The handle's host and port (the scheme's, none being given), as libcurl looks them
     * up among the CURLOPT_RESOLVE entries. */
    requests("https://hooks.example.com/in");
    ck_assert_str_eq(t.resolve, "hooks.example.com:443:93.184.216.34");
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
    ck_assert_ptr_null(t.request_target);
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
    tcase_add_test(tc, what_url_parse_refuses_is_not_sent);
    tcase_add_test(tc, public_literal_is_sent_as_is);
    tcase_add_test(tc, private_literals_need_allow_private);
    tcase_add_test(tc, names_are_lowered_and_left_to_resolve);
    tcase_add_test(tc, name_is_pinned_as_libcurl_matches_it);
    tcase_add_test(tc, public_answer_is_pinned_whole);
    tcase_add_test(tc, one_private_address_refuses_the_answer);
    tcase_add_test(tc, empty_answer_does_not_resolve);
    tcase_add_test(tc, free_is_idempotent);
    suite_add_tcase(s, tc);
    return s;
}
