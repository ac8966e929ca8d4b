/* resolver: name lookups with c-ares that never block the caller's loop; the one home of
 * c-ares in the project.
 *
 * getaddrinfo blocks the thread that calls it for as long as the DNS server takes.
 * market-webhookd has one thread: one receiver whose name resolves slowly would hold up
 * every other delivery. Here each lookup is a c-ares query whose sockets and timers the
 * caller waits on with its own (the drainer: in the same curl_multi_poll as libcurl's and
 * the database's), so a slow name delays only what waits for it. market-api's one lookup
 * that waits (resolve.h) is this resolver with a single lookup, waited on with poll().
 *
 * c-ares reads /etc/resolv.conf (servers, search domains, ndots, timeout and attempts)
 * when the resolver is created and again after the file changed (looked for at every new
 * lookup), and /etc/hosts at every lookup, as the system resolver does. Slots that ask
 * for one host share its lookup while it runs. Each lookup has a deadline: when it has no
 * answer by then its slots get RESOLVER_TIMED_OUT (the query is dropped once no other
 * lookup shares c-ares with it). */
#ifndef MARKET_RESOLVER_H
#define MARKET_RESOLVER_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define RESOLVER_ERROR_MAX 96
#define RESOLVER_CONF "/etc/resolv.conf"

typedef struct resolver resolver;

typedef enum {
    RESOLVER_OK,        /* addrs holds the answer, in c-ares' preference order */
    RESOLVER_FAILED,    /* no such name, no address, or the DNS servers failed */
    RESOLVER_TIMED_OUT, /* no answer before the lookup's deadline */
} resolver_status;

typedef struct {
    resolver_status status;
    const struct sockaddr *const *addrs; /* every address of the answer (OK only) */
    size_t count;
    char error[RESOLVER_ERROR_MAX]; /* why not, for the attempt's record (not OK) */
} resolver_answer;

/* deadline_ms: how long one lookup may take. conf_path: the resolver configuration to
 * read (RESOLVER_CONF), and read again when it changes. servers: NULL for those of that file, or
 * "host:port,..." in their place (the unit tests' own server). NULL, with the reason in
 * err, when c-ares cannot start. */
resolver *resolver_create(long deadline_ms, const char *conf_path, const char *servers, char *err,
                          size_t errlen);
/* The DNS servers in use, "addr:port, ..." (for the start's log line). */
void resolver_servers(const resolver *rs, char *out, size_t outlen);
/* Drops the lookups still running; their slots get no answer. */
void resolver_destroy(resolver *rs);

/* Resolves host (a name, lower case) for the caller's slot (the drainer's: a delivery):
 * joins the running lookup of the same host, if any. The answer comes from
 * resolver_next_done, possibly at once (/etc/hosts). */
void resolver_lookup(resolver *rs, const char *host, int slot);

/* The sockets to wait on, as poll() takes them (POLLIN, POLLOUT; revents 0): fills fds (at
 * most max of them) and returns how many there are; resolver_nfds says how many that will
 * be. A caller whose wait takes another type (libcurl's) converts them. */
unsigned resolver_nfds(const resolver *rs);
unsigned resolver_wait_fds(const resolver *rs, struct pollfd *fds, unsigned max);

/* How long the wait may last, at most max_ms: until c-ares' next retransmission or the
 * nearest deadline; 0 when an answer is ready. */
int resolver_wait_ms(const resolver *rs, int max_ms);

/* After the wait: reads what arrived on the sockets that resolver_wait_fds gave (fds with
 * their revents filled by the wait), retransmits what is due and expires the lookups past
 * their deadline. */
void resolver_process(resolver *rs, const struct pollfd *fds, unsigned n);

/* The finished lookups, one waiting slot at a time: true with *slot and *out filled
 * (out->addrs valid until the next call), until false. */
bool resolver_next_done(resolver *rs, int *slot, resolver_answer *out);

/* How many times the configuration was read again after conf_path changed. */
int resolver_reloads(const resolver *rs);

/* Lookups that slots still wait for. */
int resolver_waiting(const resolver *rs);
/* Queries c-ares still runs, those whose slots gave up on them included. */
int resolver_queries(const resolver *rs);

/* The attempt's error for a lookup that c-ares ended with status (an ARES_ code). */
void resolver_describe(int status, char *out, size_t outlen);

#endif
