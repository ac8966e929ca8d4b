/* netcheck: which addresses the service may call, in one file, so that market-api's
 * check of a new subscription and market-webhookd's at every delivery can never disagree.
 * The tables follow IANA's special-purpose address registries. */
#include "netcheck.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

typedef struct {
    uint32_t net;
    int bits;
} v4_block;

/* Every IPv4 block that is not publicly routable unicast (IANA special-purpose registry,
 * plus multicast and the reserved class E). */
static const v4_block v4_refused[] = {
    {0x00000000, 8},  /* 0.0.0.0/8: "this network", the unspecified address */
    {0x0A000000, 8},  /* 10.0.0.0/8: private */
    {0x64400000, 10}, /* 100.64.0.0/10: carrier-grade NAT */
    {0x7F000000, 8},  /* 127.0.0.0/8: loopback */
    {0xA9FE0000, 16}, /* 169.254.0.0/16: link-local, cloud metadata endpoints */
    {0xAC100000, 12}, /* 172.16.0.0/12: private */
    {0xC0000000, 24}, /* 192.0.0.0/24: IETF protocol assignments */
    {0xC0000200, 24}, /* 192.0.2.0/24: documentation */
    {0xC0A80000, 16}, /* 192.168.0.0/16: private */
    {0xC6120000, 15}, /* 198.18.0.0/15: benchmarking */
    {0xC6336400, 24}, /* 198.51.100.0/24: documentation */
    {0xCB007100, 24}, /* 203.0.113.0/24: documentation */
    {0xE0000000, 4},  /* 224.0.0.0/4: multicast */
    {0xF0000000, 4},  /* 240.0.0.0/4: reserved, and 255.255.255.255 broadcast */
};

static bool v4_public(uint32_t addr) /* host byte order */
{
    for (size_t i = 0; i < sizeof v4_refused / sizeof v4_refused[0]; i++) {
        uint32_t mask = 0xFFFFFFFFu << (32 - v4_refused[i].bits);
        if ((addr & mask) == v4_refused[i].net)
            return false;
    }
    return true;
}

static uint32_t v4_at(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool v6_has_prefix(const uint8_t a[16], const uint8_t *prefix, int bits)
{
    int bytes = bits / 8, rest = bits % 8;
    if (memcmp(a, prefix, (size_t)bytes) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = (uint8_t)(0xFF << (8 - rest));
    return (a[bytes] & mask) == (prefix[bytes] & mask);
}

static bool v6_public(const uint8_t a[16])
{
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
    static const uint8_t nat64[12] = {0x00, 0x64, 0xFF, 0x9B};
    static const uint8_t six_to_four[2] = {0x20, 0x02};
    static const uint8_t ietf[3] = {0x20, 0x01, 0x00};      /* 2001::/23 */
    static const uint8_t doc[4] = {0x20, 0x01, 0x0D, 0xB8}; /* 2001:db8::/32 */
    static const uint8_t doc2[3] = {0x3F, 0xFF, 0x00};      /* 3fff::/20 */
    static const uint8_t global[1] = {0x20};                /* 2000::/3 */

    /* Addresses that carry an IPv4 address reach that address: judge it instead. */
    if (v6_has_prefix(a, mapped, 96) || v6_has_prefix(a, nat64, 96))
        return v4_public(v4_at(a + 12));
    if (v6_has_prefix(a, six_to_four, 16))
        return v4_public(v4_at(a + 2));
    /* Everything outside global unicast (::, ::1, IPv4-compatible, link-local fe80::/10,
     * unique-local fc00::/7, site-local, multicast ff00::/8, discard 100::/64, local
     * NAT64 64:ff9b:1::/48) is refused, and so are the special blocks inside it. */
    if (!v6_has_prefix(a, global, 3))
        return false;
    return !v6_has_prefix(a, ietf, 23) && !v6_has_prefix(a, doc, 32) && !v6_has_prefix(a, doc2, 20);
}

bool netcheck_addr_public(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return v4_public(ntohl(in->sin_addr.s_addr));
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        return v6_public(in6->sin6_addr.s6_addr);
    }
    return false;
}

static void remember(netcheck_result *out, const struct sockaddr *sa)
{
    if (out->count == NETCHECK_MAX_ADDRS)
        return;
    const void *raw = sa->sa_family == AF_INET
                          ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
                          : (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
    char text[INET6_ADDRSTRLEN];
    if (inet_ntop(sa->sa_family, raw, text, sizeof text) == NULL)
        return;
    for (int i = 0; i < out->count; i++) /* the resolver lists an address once per protocol */
        if (strcmp(out->addrs[i], text) == 0)
            return;
    memcpy(out->addrs[out->count], text, sizeof text);
    out->families[out->count] = sa->sa_family;
    out->count++;
}

netcheck_status netcheck_addrs(const struct sockaddr *const *addrs, size_t n, bool allow_private,
                               netcheck_result *out)
{
    memset(out, 0, sizeof *out);
    netcheck_status status = NETCHECK_OK;
    for (size_t i = 0; i < n && status == NETCHECK_OK; i++) {
        const struct sockaddr *sa = addrs[i];
        if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
            continue;
        if (!allow_private && !netcheck_addr_public(sa))
            status = NETCHECK_FORBIDDEN;
        else
            remember(out, sa);
    }
    if (status == NETCHECK_OK && out->count == 0)
        status = NETCHECK_UNRESOLVED;
    if (status != NETCHECK_OK)
        out->count = 0;
    return status;
}

netcheck_status netcheck_numeric_host(const char *host, bool allow_private, netcheck_result *out)
{
    memset(out, 0, sizeof *out);
    struct addrinfo hints = {0}, *list = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST; /* never a lookup: it cannot block */
    if (host[0] == '\0' || getaddrinfo(host, NULL, &hints, &list) != 0)
        return NETCHECK_UNRESOLVED;
    size_t n = 0;
    for (const struct addrinfo *ai = list; ai != NULL; ai = ai->ai_next)
        n++;
    /* An array of pointers: sizeof *addrs is a pointer's size, as meant.
     * NOLINTNEXTLINE(bugprone-sizeof-expression) */
    const struct sockaddr **addrs = xcalloc(n, sizeof *addrs);
    n = 0;
    for (const struct addrinfo *ai = list; ai != NULL; ai = ai->ai_next)
        addrs[n++] = ai->ai_addr;
    netcheck_status status = netcheck_addrs(addrs, n, allow_private, out);
    free(addrs);
    freeaddrinfo(list);
    return status;
}
