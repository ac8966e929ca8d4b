/* resolve: one host name lookup with a deadline, for a program that may wait on DNS but
 * never for long.
 *
 * getaddrinfo blocks for as long as the DNS servers take (resolv.conf's timeout times its
 * attempts times its servers, or more), and market-api's workers are few: a webhook URL
 * whose name answers slowly would hold one for all that time. This lookup uses c-ares
 * (as market-webhookd does), reads /etc/resolv.conf and /etc/hosts like the system
 * resolver, and gives up at its deadline. The answer is judged by netcheck_addrs. */
#ifndef MARKET_RESOLVE_H
#define MARKET_RESOLVE_H

#include <stdbool.h>

#include "netcheck.h"

typedef enum {
    RESOLVE_OK,        /* the answer, judged: see status */
    RESOLVE_FAILED,    /* no such name, no address, or the DNS servers failed */
    RESOLVE_TIMED_OUT, /* no answer within the deadline */
} resolve_outcome;

/* Resolves host (a name or a numeric address, IPv6 without brackets: netcheck_numeric_host
 * judges that without a lookup) within deadline_ms and judges the answer (netcheck_addrs
 * with allow_private) into *status and *out.
 * servers: NULL for those of /etc/resolv.conf, or "host:port,..." in their place (the
 * tests' own DNS server). */
resolve_outcome resolve_host(const char *host, long deadline_ms, const char *servers,
                             bool allow_private, netcheck_status *status, netcheck_result *out);

#endif
