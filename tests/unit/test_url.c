/* url: the strict https URL parser of POST /v1/webhooks and of market-webhookd. */
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "url.h"

static url_status parse(const char *s, url_parts *u)
{
    return url_parse(s, strlen(s), u);
}

static void expect_invalid(const char *const *urls, size_t n)
{
    url_parts u;
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(parse(urls[i], &u) == URL_INVALID, "%s should be invalid", urls[i]);
        ck_assert_msg(u.error != NULL && u.error[0] != '\0', "%s: a reason", urls[i]);
    }
}

#define EXPECT_INVALID(list) expect_invalid((list), sizeof(list) / sizeof((list)[0]))

START_TEST(accepts_https)
{
    static const struct {
        const char *in, *text, *host;
        url_host_kind kind;
        unsigned port;
    } cases[] = {
        {"https://example.com", "https://example.com", "example.com", URL_HOST_NAME, 0},
        {"https://example.com/", "https://example.com/", "example.com", URL_HOST_NAME, 0},
        {"HTTPS://Hooks.Example.COM/Path/A?Q=B", "https://hooks.example.com/Path/A?Q=B",
         "hooks.example.com", URL_HOST_NAME, 0},
        {"https://localhost:8443/hook", "https://localhost:8443/hook", "localhost", URL_HOST_NAME,
         8443},
        {"https://a-b.c1.xn--p1ai:1/x", "https://a-b.c1.xn--p1ai:1/x", "a-b.c1.xn--p1ai",
         URL_HOST_NAME, 1},
        {"https://1.2.3.4:65535", "https://1.2.3.4:65535", "1.2.3.4", URL_HOST_IPV4, 65535},
        {"https://0.0.0.0/", "https://0.0.0.0/", "0.0.0.0", URL_HOST_IPV4, 0},
        {"https://255.255.255.255/", "https://255.255.255.255/", "255.255.255.255", URL_HOST_IPV4,
         0},
        {"https://[::1]/x", "https://[::1]/x", "::1", URL_HOST_IPV6, 0},
        {"https://[2001:DB8::A]:443/", "https://[2001:db8::a]:443/", "2001:db8::a", URL_HOST_IPV6,
         443},
        {"https://[::ffff:127.0.0.1]/", "https://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1",
         URL_HOST_IPV6, 0},
        {"https://example.com?x=1", "https://example.com?x=1", "example.com", URL_HOST_NAME, 0},
        {"https://e.com/a%2Fb/~user/;p=1?q=a@b:c/d?e&f=%20",
         "https://e.com/a%2Fb/~user/;p=1?q=a@b:c/d?e&f=%20", "e.com", URL_HOST_NAME, 0},
        {"https://e.com/!$&'()*+,;=:@-._~", "https://e.com/!$&'()*+,;=:@-._~", "e.com",
         URL_HOST_NAME, 0},
        {"https://1a.2b/", "https://1a.2b/", "1a.2b", URL_HOST_NAME, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        url_parts u;
        ck_assert_msg(parse(cases[i].in, &u) == URL_OK, "%s: %s", cases[i].in,
                      u.error ? u.error : "");
        ck_assert_str_eq(u.text, cases[i].text);
        ck_assert_uint_eq(u.len, strlen(cases[i].in));
        ck_assert_str_eq(u.host, cases[i].host);
        ck_assert_int_eq(u.host_kind, cases[i].kind);
        ck_assert_uint_eq(u.port, cases[i].port);
    }
}
END_TEST

/* Where the path (and query) begins: what market-webhookd asks the receiver for. */
START_TEST(path_follows_the_authority)
{
    static const struct {
        const char *in, *path;
    } cases[] = {
        {"https://example.com", ""},
        {"https://example.com/", "/"},
        {"https://Example.com:8443/A/%7E?x=1", "/A/%7E?x=1"},
        {"https://example.com?x=/y", "?x=/y"},
        {"https://[::1]:9000/v6", "/v6"},
        {"https://1.2.3.4/a/../b?c?d", "/a/../b?c?d"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        url_parts u;
        ck_assert_msg(parse(cases[i].in, &u) == URL_OK, "%s", cases[i].in);
        ck_assert_uint_le(u.path, u.len);
        ck_assert_str_eq(u.text + u.path, cases[i].path);
    }
}
END_TEST

START_TEST(http_is_told_apart)
{
    url_parts u;
    ck_assert_int_eq(parse("http://example.com/hook", &u), URL_NOT_HTTPS);
    ck_assert_int_eq(parse("HTTP://example.com", &u), URL_NOT_HTTPS);
    ck_assert_int_eq(parse("http:", &u), URL_NOT_HTTPS);
    ck_assert_ptr_nonnull(u.error);
    /* Other schemes and near misses are plainly invalid. */
    static const char *const others[] = {
        "ftp://example.com/",
        "https:example.com",
        "https:/example.com",
        "httpss://e.com",
        "//example.com/hook",
        "example.com/hook",
        "https//example.com",
        ":https://e.com",
        "ws://example.com",
        "1https://e.com",
        "",
    };
    EXPECT_INVALID(others);
}
END_TEST

START_TEST(authority_refused)
{
    static const char *const bad[] = {
        "https://",
        "https:///x",
        "https://?q",
        "https://#f",
        "https://:443/",
        "https://u:p@example.com/",
        "https://user@example.com",
        "https://@example.com",
        "https://example.com@evil.com/",
        "https://example.com:",
        "https://example.com:0",
        "https://example.com:65536",
        "https://example.com:0443",
        "https://example.com:44a",
        "https://example.com:123456",
        "https://example.com:443:443",
        "https://example.com:-1",
        "https://exa_mple.com/",
        "https://-example.com/",
        "https://example-.com/",
        "https://example..com/",
        "https://.example.com/",
        "https://example.com./",
        "https://exa%41mple.com/",
        "https://example.com!/",
        "https://127.1/",
        "https://127.0.0.01/",
        "https://256.0.0.1/",
        "https://1.2.3.4.5/",
        "https://1.2.3/",
        "https://0x7f.0.0.1/",
        "https://0x7f000001/",
        "https://2130706433/",
        "https://example.123/",
        "https://example.0x1f/",
        "https://[::1/",
        "https://[]/",
        "https://[::1]x/",
        "https://[::1]:/",
        "https://[fe80::1%25eth0]/",
        "https://[v1.abc]/",
        "https://[1:2:3:4:5:6:7:8:9]/",
        "https://[::g]/",
        "https://::1/",
        "https://[12345::]/",
    };
    EXPECT_INVALID(bad);
}
END_TEST

START_TEST(characters_refused)
{
    static const char *const bad[] = {
        "https://example.com/a b",         "https://example.com/a\tb",
        "https://example.com/\x01",        "https://example.com/a\\b",
        "https://example.com\\@evil.com/", "https://example.com/\x7f",
        "https://example.com/caf\xc3\xa9", "https://ex\xc3\xa4mple.com/",
        "https://example.com/a\"b",        "https://example.com/<x>",
        "https://example.com/{x}",         "https://example.com/a|b",
        "https://example.com/a^b",         "https://example.com/a`b",
        "https://example.com/[x]",         "https://example.com/%",
        "https://example.com/%4",          "https://example.com/%zz",
        "https://example.com/%4g",         "https://example.com/#x",
        "https://example.com#x",           "https://example.com/?q#",
        " https://example.com/",           "https://example.com/ ",
    };
    EXPECT_INVALID(bad);
}
END_TEST

START_TEST(nul_and_length)
{
    url_parts u;
    ck_assert_int_eq(url_parse("https://example.com/a\0b", 23, &u), URL_INVALID);
    ck_assert_int_eq(url_parse("https://example.com\0", 20, &u), URL_INVALID);

    /* Exactly URL_MAX bytes pass, one more does not. */
    static char big[URL_MAX + 2];
    memcpy(big, "https://example.com/", 20);
    memset(big + 20, 'a', URL_MAX - 20);
    big[URL_MAX] = '\0';
    ck_assert_int_eq(parse(big, &u), URL_OK);
    ck_assert_uint_eq(u.len, URL_MAX);
    big[URL_MAX] = 'a';
    big[URL_MAX + 1] = '\0';
    ck_assert_int_eq(parse(big, &u), URL_INVALID);

    /* Not NUL-terminated: only n bytes are read. */
    ck_assert_int_eq(url_parse("https://example.com/xyz!!", 23, &u), URL_OK);
    ck_assert_str_eq(u.text, "https://example.com/xyz");
}
END_TEST

START_TEST(host_length)
{
    url_parts u;
    char url[400];
    /* A 63-byte label passes, 64 does not. */
    memcpy(url, "https://", sizeof "https://");
    memset(url + 8, 'a', 63);
    memcpy(url + 71, ".com/", sizeof ".com/");
    ck_assert_int_eq(parse(url, &u), URL_OK);
    memset(url + 8, 'a', 64);
    memcpy(url + 72, ".com/", sizeof ".com/");
    ck_assert_int_eq(parse(url, &u), URL_INVALID);

    /* 253 bytes of name pass, 254 do not: labels of 50 joined by dots. */
    char host[300] = "";
    while (strlen(host) < 253) {
        strncat(host, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 253 - strlen(host));
        if (strlen(host) < 253)
            strncat(host, ".", 1);
    }
    ck_assert_uint_eq(strlen(host), 253);
    snprintf(url, sizeof url, "https://%s/", host);
    ck_assert_int_eq(parse(url, &u), URL_OK);
    ck_assert_str_eq(u.host, host);
    snprintf(url, sizeof url, "https://%sb/", host);
    ck_assert_int_eq(parse(url, &u), URL_INVALID);
}
END_TEST

Suite *url_suite(void)
{
    Suite *s = suite_create("url");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, accepts_https);
    tcase_add_test(tc, path_follows_the_authority);
    tcase_add_test(tc, http_is_told_apart);
    tcase_add_test(tc, authority_refused);
    tcase_add_test(tc, characters_refused);
    tcase_add_test(tc, nul_and_length);
    tcase_add_test(tc, host_length);
    suite_add_tcase(s, tc);
    return s;
}
