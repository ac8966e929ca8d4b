/* resolver: the project's one wrapper of c-ares, for lookups that must not block a loop:
 * market-webhookd's many at once inside its event loop, and market-api's single one
 * (resolve.c, which waits on it with poll()). Beside c-ares' own work it keeps a deadline
 * per lookup, one lookup per host shared by its slots, and follows a rewritten
 * resolv.conf, which c-ares 1.18 reads only once. */
#include "resolver.h"

#include <ares.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "clock.h"
#include "mem.h"

typedef struct lookup lookup;

/* One name being resolved, and the slots (the drainer's deliveries) that wait for it. It
 * lives until c-ares is done with it (its callback ran), its answer is known and every
 * waiting slot got it. */
struct lookup {
    lookup *next;
    char *host;
    long long deadline_ms;
    bool querying; /* c-ares holds it: the callback has not run yet */
    bool finished; /* the answer is known, or the deadline passed */
    resolver_status status;
    char error[RESOLVER_ERROR_MAX];
    struct ares_addrinfo *ai; /* the answer (OK) */
    const struct sockaddr **addrs;
    size_t naddrs;
    int *slots; /* the callers' slots (deliveries) that wait for the answer */
    size_t nslots, capslots;
    size_t handed; /* slots[0..handed) got the answer */
};

typedef struct {
    ares_socket_t fd;
    bool readable, writable; /* what c-ares waits for on it */
} watched;

/* Which version of the resolver configuration the channel read: a rewrite (DHCP,
 * resolvconf) changes the inode, the size or the time. */
typedef struct {
    bool exists;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
} file_id;

struct resolver {
    ares_channel channel;
    long deadline_ms;
    char *conf_path; /* the file whose change makes the channel be made again */
    char *servers;   /* fixed servers (tests), set again on every new channel; or NULL */
    file_id conf;    /* the version the channel read */
    bool reload;     /* it changed: a new channel once no query runs */
    int reloads;
    lookup *lookups;
    watched *socks;
    size_t nsocks, capsocks;
};

/* c-ares opens, changes and closes its sockets through this: the set the caller waits on. */
static void on_socket_state(void *data, ares_socket_t fd, int readable, int writable)
{
    resolver *rs = data;
    size_t i = 0;
    while (i < rs->nsocks && rs->socks[i].fd != fd)
        i++;
    if (!readable && !writable) { /* closed */
        if (i < rs->nsocks)
            rs->socks[i] = rs->socks[--rs->nsocks];
        return;
    }
    if (i == rs->nsocks) {
        if (rs->nsocks == rs->capsocks) {
            rs->capsocks = rs->capsocks ? rs->capsocks * 2 : 4;
            rs->socks = xrealloc(rs->socks, rs->capsocks * sizeof *rs->socks);
        }
        rs->nsocks++;
    }
    rs->socks[i] = (watched){fd, readable != 0, writable != 0};
}

void resolver_describe(int status, char *out, size_t outlen)
{
    if (status == ARES_ENOTFOUND || status == ARES_ENODATA || status == ARES_ENONAME)
        snprintf(out, outlen, "host does not resolve");
    else
        snprintf(out, outlen, "host does not resolve (%s)", ares_strerror(status));
}

static void keep_answer(lookup *l, struct ares_addrinfo *res)
{
    size_t n = 0;
    for (const struct ares_addrinfo_node *node = res->nodes; node != NULL; node = node->ai_next)
        n++;
    /* An array of pointers: sizeof *l->addrs is a pointer's size, as meant.
     * NOLINTNEXTLINE(bugprone-sizeof-expression) */
    l->addrs = xcalloc(n, sizeof *l->addrs);
    for (const struct ares_addrinfo_node *node = res->nodes; node != NULL; node = node->ai_next)
        l->addrs[l->naddrs++] = node->ai_addr;
    l->ai = res;
    l->status = RESOLVER_OK;
}

/* c-ares' answer: the addresses, a failure, or ARES_ECANCELLED / ARES_EDESTRUCTION for a
 * query dropped by resolver_process or resolver_destroy. */
static void on_answer(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
    (void)timeouts;
    lookup *l = arg;
    l->querying = false;
    if (l->finished) { /* past its deadline: nobody waits for it any more */
        if (res != NULL)
            ares_freeaddrinfo(res);
        return;
    }
    l->finished = true;
    if (status == ARES_SUCCESS && res != NULL && res->nodes != NULL) {
        keep_answer(l, res);
        return;
    }
    if (res != NULL)
        ares_freeaddrinfo(res);
    l->status = RESOLVER_FAILED;
    resolver_describe(status == ARES_SUCCESS ? ARES_ENODATA : status, l->error, sizeof l->error);
}

static file_id identify(const char *path)
{
    file_id id;
    memset(&id, 0, sizeof id);
    struct stat st;
    if (stat(path, &st) != 0)
        return id;
    id.exists = true;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    id.size = st.st_size;
    id.mtime = st.st_mtim;
    return id;
}

static bool same_file(const file_id *a, const file_id *b)
{
    return a->exists == b->exists && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* A channel as conf_path (and RES_OPTIONS, LOCALDOMAIN) say, reporting its sockets to
 * r; ARES_SUCCESS or the reason it could not be made. */
static int open_channel(resolver *rs, ares_channel *out)
{
    struct ares_options o;
    memset(&o, 0, sizeof o);
    o.sock_state_cb = on_socket_state;
    o.sock_state_cb_data = rs;
    o.resolvconf_path = rs->conf_path;
    *out = NULL;
    rs->conf = identify(rs->conf_path); /* before reading: a change meanwhile is seen later */
    int rc = ares_init_options(out, &o, ARES_OPT_SOCK_STATE_CB | ARES_OPT_RESOLVCONF);
    if (rc == ARES_SUCCESS && rs->servers != NULL)
        rc = ares_set_servers_ports_csv(*out, rs->servers);
    if (rc != ARES_SUCCESS && *out != NULL) {
        ares_destroy(*out);
        *out = NULL;
    }
    return rc;
}

resolver *resolver_create(long deadline_ms, const char *conf_path, const char *servers, char *err,
                          size_t errlen)
{
    int rc = ares_library_init(ARES_LIB_INIT_ALL);
    if (rc != ARES_SUCCESS) {
        snprintf(err, errlen, "cannot start c-ares: %s", ares_strerror(rc));
        return NULL;
    }
    resolver *rs = xcalloc(1, sizeof *rs);
    rs->deadline_ms = deadline_ms;
    rs->conf_path = xstrdup(conf_path);
    rs->servers = servers != NULL ? xstrdup(servers) : NULL;
    rc = open_channel(rs, &rs->channel);
    if (rc == ARES_SUCCESS)
        return rs;
    snprintf(err, errlen, "cannot start the resolver (c-ares, %s): %s", conf_path,
             ares_strerror(rc));
    free(rs->servers);
    free(rs->conf_path);
    free(rs);
    ares_library_cleanup();
    return NULL;
}

/* c-ares 1.18 reads the configuration once, when a channel is made; the system resolver
 * notices a rewritten /etc/resolv.conf (DHCP, resolvconf). So a change is looked for at
 * every new lookup (one stat), and the channel is made again as soon as no query runs
 * on the old one (at once, mostly: lookups take milliseconds). A new channel that cannot
 * be made leaves the old one in use until the file changes again. */
static void follow_configuration(resolver *rs)
{
    file_id now = identify(rs->conf_path);
    if (!same_file(&now, &rs->conf))
        rs->reload = true;
    if (!rs->reload || resolver_queries(rs) > 0)
        return;
    rs->reload = false;
    ares_channel fresh;
    if (open_channel(rs, &fresh) != ARES_SUCCESS)
        return;
    ares_destroy(rs->channel); /* no query runs on it: no callback, its sockets closed */
    rs->channel = fresh;
    rs->reloads++;
}

int resolver_reloads(const resolver *rs)
{
    return rs->reloads;
}

void resolver_servers(const resolver *rs, char *out, size_t outlen)
{
    struct ares_addr_port_node *list = NULL;
    out[0] = '\0';
    if (ares_get_servers_ports(rs->channel, &list) == ARES_SUCCESS) {
        size_t used = 0;
        for (const struct ares_addr_port_node *s = list; s != NULL && used < outlen; s = s->next) {
            char text[INET6_ADDRSTRLEN] = "?";
            inet_ntop(s->family, &s->addr, text, sizeof text);
            int n =
                snprintf(out + used, outlen - used, s->family == AF_INET6 ? "%s[%s]:%d" : "%s%s:%d",
                         used > 0 ? ", " : "", text, s->udp_port ? s->udp_port : 53);
            used += n > 0 ? (size_t)n : 0;
        }
        ares_free_data(list);
    }
    if (out[0] == '\0')
        snprintf(out, outlen, "none");
}

static void lookup_free(lookup *l)
{
    if (l->ai != NULL)
        ares_freeaddrinfo(l->ai);
    free(l->addrs);
    free(l->slots);
    free(l->host);
    free(l);
}

void resolver_destroy(resolver *rs)
{
    if (rs == NULL)
        return;
    ares_destroy(rs->channel); /* runs every pending callback with ARES_EDESTRUCTION */
    while (rs->lookups != NULL) {
        lookup *l = rs->lookups;
        rs->lookups = l->next;
        lookup_free(l);
    }
    free(rs->socks);
    free(rs->servers);
    free(rs->conf_path);
    free(rs);
    ares_library_cleanup();
}

static void add_slot(lookup *l, int slot)
{
    if (l->nslots == l->capslots) {
        l->capslots = l->capslots ? l->capslots * 2 : 4;
        l->slots = xrealloc(l->slots, l->capslots * sizeof *l->slots);
    }
    l->slots[l->nslots++] = slot;
}

void resolver_lookup(resolver *rs, const char *host, int slot)
{
    for (lookup *l = rs->lookups; l != NULL; l = l->next) {
        if (!l->finished && strcmp(l->host, host) == 0) {
            add_slot(l, slot);
            return;
        }
    }
    follow_configuration(rs);
    lookup *l = xcalloc(1, sizeof *l);
    l->host = xstrdup(host);
    l->deadline_ms = clock_ms() + rs->deadline_ms;
    l->querying = true;
    add_slot(l, slot);
    l->next = rs->lookups;
    rs->lookups = l;
    struct ares_addrinfo_hints hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM; /* one entry per address, not one per protocol */
    /* May answer before it returns (/etc/hosts): l is ready for that. */
    ares_getaddrinfo(rs->channel, host, NULL, &hints, on_answer, l);
}

unsigned resolver_nfds(const resolver *rs)
{
    return (unsigned)rs->nsocks;
}

unsigned resolver_wait_fds(const resolver *rs, struct pollfd *fds, unsigned max)
{
    unsigned n = 0;
    for (size_t i = 0; i < rs->nsocks && n < max; i++) {
        short events =
            (short)((rs->socks[i].readable ? POLLIN : 0) | (rs->socks[i].writable ? POLLOUT : 0));
        fds[n++] = (struct pollfd){.fd = rs->socks[i].fd, .events = events};
    }
    return n;
}

static bool answer_ready(const resolver *rs)
{
    for (const lookup *l = rs->lookups; l != NULL; l = l->next)
        if (l->finished && l->handed < l->nslots)
            return true;
    return false;
}

int resolver_wait_ms(const resolver *rs, int max_ms)
{
    if (answer_ready(rs))
        return 0;
    struct timeval maxtv = {max_ms / 1000, (max_ms % 1000) * 1000}, tv;
    const struct timeval *next = ares_timeout(rs->channel, &maxtv, &tv);
    /* Rounded up: waking a little early would only spin until the timer is due. */
    long long ms = (long long)next->tv_sec * 1000 + (next->tv_usec + 999) / 1000;
    long long now = clock_ms();
    for (const lookup *l = rs->lookups; l != NULL; l = l->next)
        if (!l->finished && l->deadline_ms - now < ms)
            ms = l->deadline_ms > now ? l->deadline_ms - now : 0;
    return ms > max_ms ? max_ms : (int)ms;
}

/* Lookups whose deadline passed are answered RESOLVER_TIMED_OUT; their queries go on in
 * c-ares. c-ares 1.18 cannot drop one query, only all of them, so they are dropped once
 * no lookup that slots wait for runs beside them (at once, in the usual case of one
 * name that hangs). */
static void expire(resolver *rs)
{
    long long now = clock_ms();
    bool waited_for = false, given_up = false;
    for (lookup *l = rs->lookups; l != NULL; l = l->next) {
        if (!l->finished && now >= l->deadline_ms) {
            l->finished = true;
            l->status = RESOLVER_TIMED_OUT;
            snprintf(l->error, sizeof l->error, "host did not resolve within %g s",
                     (double)rs->deadline_ms / 1000.0);
        }
        waited_for = waited_for || (l->querying && !l->finished);
        given_up = given_up || (l->querying && l->finished);
    }
    if (given_up && !waited_for)
        ares_cancel(rs->channel);
}

/* Frees the lookups nobody needs any more: c-ares is done with them and every slot got
 * its answer (the last one, at the previous resolver_next_done: its addresses were
 * valid until this call). */
static void sweep(resolver *rs)
{
    lookup **p = &rs->lookups;
    while (*p != NULL) {
        lookup *l = *p;
        if (!l->querying && l->finished && l->handed == l->nslots) {
            *p = l->next;
            lookup_free(l);
        } else {
            p = &l->next;
        }
    }
}

void resolver_process(resolver *rs, const struct pollfd *fds, unsigned n)
{
    sweep(rs);
    for (unsigned i = 0; i < n; i++) {
        /* Read whenever c-ares waits to read, whatever the wait said: libcurl's wait
         * reports only POLLIN/POLLOUT/POLLPRI, not the POLLERR of a UDP socket whose
         * server refused (ICMP), which c-ares learns by reading (EAGAIN is harmless). */
        bool wants_read = false;
        for (size_t k = 0; k < rs->nsocks; k++)
            if (rs->socks[k].fd == fds[i].fd)
                wants_read = rs->socks[k].readable;
        ares_socket_t rd = wants_read ? fds[i].fd : ARES_SOCKET_BAD;
        ares_socket_t wr = (fds[i].revents & POLLOUT) ? fds[i].fd : ARES_SOCKET_BAD;
        if (rd != ARES_SOCKET_BAD || wr != ARES_SOCKET_BAD)
            ares_process_fd(rs->channel, rd, wr);
    }
    ares_process_fd(rs->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD); /* retransmissions due */
    expire(rs);
}

bool resolver_next_done(resolver *rs, int *slot, resolver_answer *out)
{
    sweep(rs);
    for (lookup *l = rs->lookups; l != NULL; l = l->next) {
        if (!l->finished || l->handed == l->nslots)
            continue;
        *slot = l->slots[l->handed++];
        memset(out, 0, sizeof *out);
        out->status = l->status;
        out->addrs = l->addrs;
        out->count = l->naddrs;
        snprintf(out->error, sizeof out->error, "%s", l->error);
        return true;
    }
    return false;
}

int resolver_waiting(const resolver *rs)
{
    int n = 0;
    for (const lookup *l = rs->lookups; l != NULL; l = l->next)
        n += !l->finished;
    return n;
}

int resolver_queries(const resolver *rs)
{
    int n = 0;
    for (const lookup *l = rs->lookups; l != NULL; l = l->next)
        n += l->querying;
    return n;
}
