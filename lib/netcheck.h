/* netcheck: may the service send a request to this host?
 *
 * Webhook URLs are chosen by API clients, so without a check a client could make the
 * service call its own database, a cloud metadata endpoint or anything else on the
 * private network (server-side request forgery). Only public unicast addresses pass.
 * POST /v1/webhooks checks the host when a subscription is created, and market-webhookd
 * checks it again at every delivery and then connects to exactly the addresses it
 * checked, so that a DNS answer that changes in between (DNS rebinding) cannot redirect
 * a delivery. */
#ifndef MARKET_NETCHECK_H
#define MARKET_NETCHECK_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define NETCHECK_MAX_ADDRS 4

/* True when sa is a public unicast IPv4 or IPv6 address. Refused: unspecified,
 * "this network" 0/8, loopback, private 10/8 172.16/12 192.168/16, CGNAT 100.64/10,
 * link-local, IETF and documentation ranges, benchmarking 198.18/15, multicast,
 * reserved 240/4 and broadcast; for IPv6 everything outside global unicast 2000::/3 and
 * the special and documentation blocks inside it; IPv4-mapped, NAT64 and 6to4 addresses
 * are judged by the IPv4 address they carry. */
bool netcheck_addr_public(const struct sockaddr *sa);

typedef enum {
    NETCHECK_OK,
    NETCHECK_UNRESOLVED, /* the name does not resolve (or the resolver failed) */
    NETCHECK_FORBIDDEN,  /* it is, or resolves to, a non-public address */
} netcheck_status;

typedef struct {
    int count;                                        /* 1..NETCHECK_MAX_ADDRS after OK */
    char addrs[NETCHECK_MAX_ADDRS][INET6_ADDRSTRLEN]; /* numeric text, no brackets */
    int families[NETCHECK_MAX_ADDRS];                 /* AF_INET or AF_INET6 */
} netcheck_result;

/* Checks every address of one resolver's answer (addrs[0..n), in its preference order;
 * other families than IPv4 and IPv6 are skipped): one non-public address refuses the
 * host, because a client could otherwise hide a private address among public ones.
 * allow_private (MARKET_WEBHOOK_ALLOW_PRIVATE=1) skips the address check. On NETCHECK_OK,
 * out holds the first addresses, the ones to connect to; an answer without an IPv4 or
 * IPv6 address is NETCHECK_UNRESOLVED. No I/O: both programs resolve with c-ares
 * (lib/resolver.h; market-api through lib/resolve.h) and judge the answer here. */
netcheck_status netcheck_addrs(const struct sockaddr *const *addrs, size_t n, bool allow_private,
                               netcheck_result *out);

/* Judges host when it is a numeric address (IPv6 without brackets; IPv4 in any of the
 * old inet_aton spellings, "127.1" or "2130706433", judged by what they mean) with
 * netcheck_addrs; NETCHECK_UNRESOLVED for a name, which lib/resolve.h looks up. No I/O. */
netcheck_status netcheck_numeric_host(const char *host, bool allow_private, netcheck_result *out);

#endif
