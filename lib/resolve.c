/* resolve: market-api's one DNS lookup, a receiver URL's host when the API accepts one:
 * it may wait, but never long. market-webhookd needs many lookups at once inside its loop
 * and has its own (app/webhookd/resolver.c); both use c-ares, so both read the system's
 * resolver configuration alike. */
#include "resolve.h"

#include <ares.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "mem.h"

typedef struct {
    bool done;
    int status;               /* ARES_SUCCESS or why not */
    struct ares_addrinfo *ai; /* the answer (ARES_SUCCESS) */
} lookup;

static void on_answer(void *arg, int status, int timeouts, struct ares_addrinfo *ai)
{
    (void)timeouts;
    lookup *l = arg;
    l->done = true;
    l->status = status;
    l->ai = ai;
}

/* Waits on the channel's sockets and timers until the lookup is done or the deadline. */
static void drive(ares_channel channel, const lookup *l, long long deadline)
{
    while (!l->done) {
        long long left = deadline - clock_ms();
        if (left <= 0)
            return;
        ares_socket_t socks[ARES_GETSOCK_MAXNUM];
        /* Unsigned: c-ares' ARES_GETSOCK_WRITABLE shifts a signed 1 by up to 31 places. */
        unsigned bits = (unsigned)ares_getsock(channel, socks, ARES_GETSOCK_MAXNUM);
        struct pollfd fds[ARES_GETSOCK_MAXNUM];
        nfds_t n = 0;
        for (int i = 0; i < ARES_GETSOCK_MAXNUM; i++) {
            short events = (short)(((bits & (1u << i)) != 0 ? POLLIN : 0) |
                                   ((bits & (1u << (i + ARES_GETSOCK_MAXNUM))) != 0 ? POLLOUT : 0));
            if (events != 0)
                fds[n++] = (struct pollfd){.fd = socks[i], .events = events};
        }
        struct timeval most = {.tv_sec = left / 1000, .tv_usec = (left % 1000) * 1000}, tv;
        const struct timeval *next = ares_timeout(channel, &most, &tv);
        int wait_ms = (int)(next->tv_sec * 1000 + (next->tv_usec + 999) / 1000);
        int ready = poll(fds, n, wait_ms);
        if (ready < 0 && errno != EINTR)
            return;
        if (ready <= 0) { /* a retransmission or a server's timeout may be due */
            ares_process_fd(channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
            continue;
        }
        for (nfds_t i = 0; i < n; i++) {
            bool readable = (fds[i].revents & (POLLIN | POLLERR | POLLHUP)) != 0;
            bool writable = (fds[i].revents & POLLOUT) != 0;
            if (readable || writable)
                ares_process_fd(channel, readable ? fds[i].fd : ARES_SOCKET_BAD,
                                writable ? fds[i].fd : ARES_SOCKET_BAD);
        }
    }
}

/* Judges the answer's addresses (netcheck_addrs takes an array of them). */
static netcheck_status judge(const struct ares_addrinfo *ai, bool allow_private,
                             netcheck_result *out)
{
    size_t n = 0;
    for (const struct ares_addrinfo_node *node = ai->nodes; node != NULL; node = node->ai_next)
        n++;
    /* An array of pointers: sizeof *addrs is a pointer's size, as meant.
     * NOLINTNEXTLINE(bugprone-sizeof-expression) */
    const struct sockaddr **addrs = xcalloc(n > 0 ? n : 1, sizeof *addrs);
    n = 0;
    for (const struct ares_addrinfo_node *node = ai->nodes; node != NULL; node = node->ai_next)
        addrs[n++] = node->ai_addr;
    netcheck_status status = netcheck_addrs(addrs, n, allow_private, out);
    free(addrs);
    return status;
}

resolve_outcome resolve_host(const char *host, long deadline_ms, const char *servers,
                             bool allow_private, netcheck_status *status, netcheck_result *out)
{
    *status = netcheck_numeric_host(host, allow_private, out);
    if (*status != NETCHECK_UNRESOLVED) /* an address: nothing to look up */
        return RESOLVE_OK;
    long long deadline = clock_ms() + deadline_ms;
    static bool initialised;
    if (!initialised && ares_library_init(ARES_LIB_INIT_ALL) != ARES_SUCCESS)
        return RESOLVE_FAILED;
    initialised = true;

    ares_channel channel;
    struct ares_options options = {0};
    if (host[0] == '\0' || ares_init_options(&channel, &options, 0) != ARES_SUCCESS)
        return RESOLVE_FAILED;
    if (servers != NULL && ares_set_servers_ports_csv(channel, servers) != ARES_SUCCESS) {
        ares_destroy(channel);
        return RESOLVE_FAILED;
    }
    lookup l = {0};
    struct ares_addrinfo_hints hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    ares_getaddrinfo(channel, host, NULL, &hints, on_answer, &l);
    drive(channel, &l, deadline);
    ares_destroy(channel); /* a lookup still running is answered ARES_EDESTRUCTION */

    if (l.status == ARES_SUCCESS && l.ai != NULL) {
        *status = judge(l.ai, allow_private, out);
        ares_freeaddrinfo(l.ai);
        return RESOLVE_OK;
    }
    if (l.ai != NULL)
        ares_freeaddrinfo(l.ai);
    return l.status == ARES_EDESTRUCTION || l.status == ARES_ECANCELLED ? RESOLVE_TIMED_OUT
                                                                        : RESOLVE_FAILED;
}
