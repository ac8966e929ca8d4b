/* resolve: market-api's one DNS lookup, a receiver URL's host when the API accepts one:
 * it may wait, but never long. It is one lookup of the resolver that market-webhookd runs
 * many of at once (resolver.c, the one file that calls c-ares), waited on here with
 * poll(), so both programs read the system's resolver configuration alike. */
#include "resolve.h"

#include <poll.h>
#include <stdlib.h>

#include "mem.h"
#include "resolver.h"

/* The longest single wait: the resolver shortens it to its next timer or the deadline. */
#define TURN_MS 1000

/* Waits on the resolver's sockets and timers until its one lookup ended: answered, failed
 * or past its deadline (resolver_process expires it), into *out. */
static void wait_answer(resolver *rs, resolver_answer *out)
{
    struct pollfd *fds = NULL;
    unsigned cap = 0;
    int slot;
    while (!resolver_next_done(rs, &slot, out)) {
        unsigned want = resolver_nfds(rs);
        if (want > cap) {
            cap = want;
            fds = xrealloc(fds, cap * sizeof *fds);
        }
        unsigned n = resolver_wait_fds(rs, fds, cap);
        /* A failed wait (EINTR) only ends this turn early: the deadline still holds. */
        (void)poll(fds, n, resolver_wait_ms(rs, TURN_MS));
        resolver_process(rs, fds, n);
    }
    free(fds);
}

resolver_status resolve_host(const char *host, long deadline_ms, const char *servers,
                             bool allow_private, netcheck_status *status, netcheck_result *out)
{
    *status = netcheck_numeric_host(host, allow_private, out);
    if (*status != NETCHECK_UNRESOLVED) /* an address: nothing to look up */
        return RESOLVER_OK;
    if (host[0] == '\0')
        return RESOLVER_FAILED;
    char err[256]; /* not shown: the API answers "does not resolve" whatever the reason */
    resolver *rs = resolver_create(deadline_ms, RESOLVER_CONF, servers, err, sizeof err);
    if (rs == NULL)
        return RESOLVER_FAILED;
    resolver_lookup(rs, host, 0);
    resolver_answer answer;
    wait_answer(rs, &answer);
    resolver_status outcome = answer.status;
    if (outcome == RESOLVER_OK) /* the addresses live until the resolver is destroyed */
        *status = netcheck_addrs(answer.addrs, answer.count, allow_private, out);
    resolver_destroy(rs);
    return outcome;
}
