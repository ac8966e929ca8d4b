/* netcheck: which addresses a webhook may be sent to, and numeric hosts judged without a
 * lookup (the lookups themselves, resolve_host's included, are test_resolver.c's). */
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "netcheck.h"
#include "unit.h"

/* Parses text as an IPv4 or IPv6 address and asks netcheck_addr_public. */
static bool is_public(const char *text)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *in = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, text, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
    } else {
        ck_assert_msg(inet_pton(AF_INET6, text, &in6->sin6_addr) == 1, "bad test address %s", text);
        in6->sin6_family = AF_INET6;
    }
    return netcheck_addr_public((struct sockaddr *)&ss);
}

static void expect_all(const char *const *addrs, size_t n, bool want)
{
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(is_public(addrs[i]) == want, "%s should be %s", addrs[i],
                      want ? "public" : "refused");
}

#define EXPECT_ALL(list, want) expect_all((list), sizeof(list) / sizeof((list)[0]), (want))

START_TEST(ipv4_refused)
{
    static const char *const refused[] = {
        "0.0.0.0",         "0.1.2.3",         "10.0.0.1",        "10.255.255.255",  "100.64.0.1",
        "100.127.255.254", "127.0.0.1",       "127.255.255.254", "169.254.169.254", "169.254.0.1",
        "172.16.0.1",      "172.31.255.255",  "192.0.0.8",       "192.0.2.1",       "192.168.0.1",
        "192.168.255.255", "198.18.0.1",      "198.19.255.255",  "198.51.100.7",    "203.0.113.9",
        "224.0.0.1",       "239.255.255.250", "240.0.0.1",       "255.255.255.255",
    };
    EXPECT_ALL(refused, false);
}
END_TEST

START_TEST(ipv4_public)
{
    static const char *const allowed[] = {
        "1.1.1.1",     "8.8.8.8",         "9.255.255.255",   "11.0.0.1",    "100.63.255.255",
        "100.128.0.1", "126.255.255.255", "128.0.0.1",       "169.253.1.1", "172.15.255.255",
        "172.32.0.1",  "192.0.3.1",       "192.167.1.1",     "192.169.0.1", "198.17.255.255",
        "198.20.0.1",  "203.0.114.1",     "223.255.255.255",
    };
    EXPECT_ALL(allowed, true);
}
END_TEST

START_TEST(ipv6_refused)
{
    static const char *const refused[] = {
        "::",           /* unspecified */
        "::1",          /* loopback */
        "::127.0.0.1",  /* IPv4-compatible (deprecated) */
        "::8.8.8.8",    /* IPv4-compatible, even of a public address */
        "fe80::1",      /* link-local */
        "febf:ffff::1", /* link-local, end of fe80::/10 */
        "fec0::1",      /* site-local (deprecated) */
        "fc00::1",
        "fd12:3456::1", /* unique-local fc00::/7 */
        "ff02::1",
        "ff0e::1",          /* multicast */
        "100::1",           /* discard */
        "2001:db8::1",      /* documentation */
        "3fff::1",          /* documentation (RFC 9637) */
        "2001::1",          /* Teredo, inside 2001::/23 */
        "2001:2::1",        /* benchmarking */
        "::ffff:127.0.0.1", /* IPv4-mapped loopback */
        "::ffff:10.1.2.3",  /* IPv4-mapped private */
        "::ffff:169.254.169.254",
        "::ffff:0.0.0.0",
        "64:ff9b::7f00:1",    /* NAT64 of 127.0.0.1 */
        "64:ff9b::a9fe:a9fe", /* NAT64 of 169.254.169.254 */
        "64:ff9b:1::1",       /* local-use NAT64 */
        "2002:7f00:1::1",     /* 6to4 of 127.0.0.1 */
        "2002:c0a8:101::1",   /* 6to4 of 192.168.1.1 */
        "4000::1",
        "e000::1", /* outside global unicast 2000::/3 */
    };
    EXPECT_ALL(refused, false);
}
END_TEST

START_TEST(ipv6_public)
{
    static const char *const allowed[] = {
        "2001:4860:4860::8888",
        "2606:4700:4700::1111",
        "2a00:1450:4001:82a::200e",
        "2001:200::1",
        "3ffe::1",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::1",
        "2c0f:fb50:4003::1",
    };
    EXPECT_ALL(allowed, true);
}
END_TEST

START_TEST(other_families_refused)
{
    struct sockaddr sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_family = AF_UNIX;
    ck_assert(!netcheck_addr_public(&sa));
}
END_TEST

START_TEST(host_numeric)
{
    netcheck_result r;
    ck_assert_int_eq(netcheck_numeric_host("8.8.8.8", false, &r), NETCHECK_OK);
    ck_assert_int_eq(r.count, 1);
    ck_assert_str_eq(r.addrs[0], "8.8.8.8");
    ck_assert_int_eq(r.families[0], AF_INET);
    ck_assert_int_eq(netcheck_numeric_host("2001:4860:4860::8888", false, &r), NETCHECK_OK);
    ck_assert_str_eq(r.addrs[0], "2001:4860:4860::8888");
    ck_assert_int_eq(r.families[0], AF_INET6);
    ck_assert_int_eq(netcheck_numeric_host("127.0.0.1", false, &r), NETCHECK_FORBIDDEN);
    ck_assert_int_eq(r.count, 0);
    ck_assert_int_eq(netcheck_numeric_host("::1", false, &r), NETCHECK_FORBIDDEN);
    ck_assert_int_eq(netcheck_numeric_host("169.254.169.254", false, &r), NETCHECK_FORBIDDEN);
    ck_assert_int_eq(netcheck_numeric_host("::ffff:192.168.0.1", false, &r), NETCHECK_FORBIDDEN);
}
END_TEST

START_TEST(host_odd_ipv4_spellings)
{
    /* The resolver accepts the old inet_aton forms; they are judged by what they mean. */
    netcheck_result r;
    ck_assert_int_eq(netcheck_numeric_host("2130706433", false, &r), NETCHECK_FORBIDDEN);
    ck_assert_int_eq(netcheck_numeric_host("0x7f.1", false, &r), NETCHECK_FORBIDDEN);
    ck_assert_int_eq(netcheck_numeric_host("127.1", false, &r), NETCHECK_FORBIDDEN);
    ck_assert_int_eq(netcheck_numeric_host("0", false, &r), NETCHECK_FORBIDDEN);
}
END_TEST

/* An answer made of address texts, and one AF_UNIX entry that is skipped. */
static size_t make_answer(struct sockaddr_storage *ss, const struct sockaddr **addrs,
                          const char *const *texts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        memset(&ss[i], 0, sizeof ss[i]);
        struct sockaddr_in *in = (struct sockaddr_in *)&ss[i];
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss[i];
        if (texts[i] == NULL) {
            ss[i].ss_family = AF_UNIX;
        } else if (inet_pton(AF_INET, texts[i], &in->sin_addr) == 1) {
            in->sin_family = AF_INET;
        } else {
            ck_assert_msg(inet_pton(AF_INET6, texts[i], &in6->sin6_addr) == 1, "%s", texts[i]);
            in6->sin6_family = AF_INET6;
        }
        addrs[i] = (const struct sockaddr *)&ss[i];
    }
    return n;
}

START_TEST(addrs_judged_whole)
{
    struct sockaddr_storage ss[6];
    const struct sockaddr *addrs[6];
    netcheck_result r;
    static const char *const good[] = {NULL,      "8.8.8.8", "2001:4860:4860::8888",
                                       "8.8.8.8", "1.1.1.1", "9.9.9.9"};
    size_t n = make_answer(ss, addrs, good, 6);
    ck_assert_int_eq(netcheck_addrs(addrs, n, false, &r), NETCHECK_OK);
    /* The AF_UNIX entry skipped, the repeated address kept once, at most four kept. */
    ck_assert_int_eq(r.count, 4);
    ck_assert_str_eq(r.addrs[0], "8.8.8.8");
    ck_assert_int_eq(r.families[1], AF_INET6);
    ck_assert_str_eq(r.addrs[3], "9.9.9.9");
    static const char *const hidden[] = {"8.8.8.8", "1.1.1.1", "9.9.9.9", "4.4.4.4", "fd00::1"};
    n = make_answer(ss, addrs, hidden, 5);
    ck_assert_int_eq(netcheck_addrs(addrs, n, false, &r), NETCHECK_FORBIDDEN);
    ck_assert_int_eq(r.count, 0);
    ck_assert_int_eq(netcheck_addrs(addrs, n, true, &r), NETCHECK_OK);
    static const char *const none[] = {NULL};
    n = make_answer(ss, addrs, none, 1);
    ck_assert_int_eq(netcheck_addrs(addrs, n, true, &r), NETCHECK_UNRESOLVED);
    ck_assert_int_eq(netcheck_addrs(addrs, 0, true, &r), NETCHECK_UNRESOLVED);
}
END_TEST

START_TEST(host_unresolvable)
{
    netcheck_result r;
    ck_assert_int_eq(netcheck_numeric_host("", false, &r), NETCHECK_UNRESOLVED);
    ck_assert_int_eq(netcheck_numeric_host("example.com", true, &r), NETCHECK_UNRESOLVED);
    ck_assert_int_eq(r.count, 0);
}
END_TEST

Suite *netcheck_suite(void)
{
    Suite *s = suite_create("netcheck");
    TCase *addr = tcase_create("address");
    tcase_add_test(addr, ipv4_refused);
    tcase_add_test(addr, ipv4_public);
    tcase_add_test(addr, ipv6_refused);
    tcase_add_test(addr, ipv6_public);
    tcase_add_test(addr, other_families_refused);
    tcase_add_test(addr, addrs_judged_whole);
    suite_add_tcase(s, addr);
    TCase *host = tcase_create("host");
    tcase_add_test(host, host_numeric);
    tcase_add_test(host, host_odd_ipv4_spellings);
    tcase_add_test(host, host_unresolvable);
    suite_add_tcase(s, host);
    return s;
}
