/* resolve: one host name lookup with a deadline, for a program that may wait on DNS but
 * never for long.
 *
 * getaddrinfo blocks for as long as the DNS servers take (resolv.conf's timeout times its
 * attempts times its servers, or more), and market-api's workers are few: a webhook URL
 * whose name answers slowly would hold one for all that time. This lookup is one of
 * resolver.h's (c-ares, as market-webhookd's), reads /etc/resolv.conf and /etc/hosts like
 * the system resolver, and gives up at its deadline. The answer is judged by
 * netcheck_addrs. */
#ifndef MARKET_RESOLVE_H
#define MARKET_RESOLVE_H

#include <stdbool.h>

#include "netcheck.h"
#include "resolver.h"

/* Resolves host (a name or a numeric address, IPv6 without brackets: netcheck_numeric_host
 * judges that without a lookup) within deadline_ms. RESOLVER_OK: the answer, judged
 * (netcheck_addrs with allow_private) into *status and *out; RESOLVER_FAILED (no such
 * name, no address, or the DNS servers failed) and RESOLVER_TIMED_OUT as resolver.h's.
 * servers: NULL for those of /etc/resolv.conf, or "host:port,..." in their place (the
 * tests' own DNS server). */
resolver_status resolve_host(const char *host, long deadline_ms, const char *servers,
                             bool allow_private, netcheck_status *status, netcheck_result *out);

#endif
