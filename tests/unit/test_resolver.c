/* resolver: c-ares driven by a poll loop as the drainer drives it, and market-api's one
 * lookup that waits (resolve.h) on top of it, against a DNS server of the test's own on
 * 127.0.0.1 (a UDP socket answered here, between the waits, or by a thread while
 * resolve_host waits): names answered at once, never, with NXDOMAIN or with SERVFAIL.
 * Prints how long each lookup took. */
#include <arpa/inet.h>
#include <ares.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "resolve.h"
#include "resolver.h"
#include "unit.h"

#define FAST_ADDR "198.51.100.7" /* a documentation address: not public to netcheck */
#define PUBLIC_ADDR "8.8.8.8"
#define PRIVATE_ADDR "10.1.2.3"
#define SLOTS 8

/* The test's DNS server: what it was asked, by name and type. */
typedef struct {
    int fd;
    int port;
    int a_queries[4], aaaa_queries[4]; /* fast.test, hang.test, hang2.test, other */
} dns_server;

static dns_server srv;
static resolver *res;
static char err[256];
static char conf_path[64]; /* the resolv.conf of the test */

typedef struct {
    bool done;
    resolver_status status;
    size_t count;
    char first[INET6_ADDRSTRLEN];
    char error[RESOLVER_ERROR_MAX];
    long long at_ms; /* when the answer came, from the test's start */
} slot_result;

static slot_result results[SLOTS];
static long long t0;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int name_index(const char *name)
{
    static const char *const known[] = {"fast.test", "hang.test", "hang2.test"};
    for (int i = 0; i < 3; i++)
        if (strcmp(name, known[i]) == 0)
            return i;
    return 3;
}

/* The question's name (dotted) and type; the offset just past the question, or 0. */
static size_t parse_question(const uint8_t *q, size_t n, char *name, size_t namesz, int *qtype)
{
    size_t off = 12, used = 0;
    while (off < n && q[off] != 0) {
        size_t len = q[off++];
        if (len > 63 || off + len > n || used + len + 2 > namesz)
            return 0;
        if (used > 0)
            name[used++] = '.';
        memcpy(name + used, q + off, len);
        used += len;
        off += len;
    }
    name[used] = '\0';
    if (off + 5 > n)
        return 0;
    *qtype = q[off + 1] << 8 | q[off + 2];
    return off + 5;
}

/* The IPv4 address of a name the server knows, or NULL. */
static const char *address_of(const char *name)
{
    static const char *const known[][2] = {
        {"fast.test", FAST_ADDR}, {"public.test", PUBLIC_ADDR}, {"private.test", PRIVATE_ADDR}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(name, known[i][0]) == 0)
            return known[i][1];
    return NULL;
}

/* Answers one query: fast.test, public.test and private.test have one IPv4 address each
 * (and no IPv6 address), hang*.test never answer, fail.test is SERVFAIL, every other name
 * NXDOMAIN. */
static void answer_query(const uint8_t *q, size_t n, const struct sockaddr_in *from)
{
    char name[256];
    int qtype = 0;
    size_t qend = parse_question(q, n, name, sizeof name, &qtype);
    if (qend == 0)
        return;
    int i = name_index(name);
    if (qtype == 1)
        srv.a_queries[i]++;
    else if (qtype == 28)
        srv.aaaa_queries[i]++;
    if (strncmp(name, "hang", 4) == 0)
        return;
    uint8_t out[512];
    memcpy(out, q, qend);
    const char *addr = address_of(name);
    int rcode = addr != NULL ? 0 : strcmp(name, "fail.test") == 0 ? 2 : 3;
    bool with_answer = addr != NULL && qtype == 1;
    out[2] = (uint8_t)(0x80 | (q[2] & 0x01)); /* a response; RD as asked */
    out[3] = (uint8_t)(0x80 | rcode);         /* RA, the code */
    out[6] = 0, out[7] = with_answer ? 1 : 0; /* answers */
    out[8] = out[9] = out[10] = out[11] = 0;  /* no authority, no additional records */
    size_t len = qend;
    if (with_answer) {
        static const uint8_t rr[] = {0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4};
        memcpy(out + len, rr, sizeof rr);
        len += sizeof rr;
        inet_pton(AF_INET, addr, out + len);
        len += 4;
    }
    sendto(srv.fd, out, len, 0, (const struct sockaddr *)from, sizeof *from);
}

static void serve(void)
{
    uint8_t q[512];
    struct sockaddr_in from;
    socklen_t fromlen = sizeof from;
    ssize_t n;
    while ((n = recvfrom(srv.fd, q, sizeof q, MSG_DONTWAIT, (struct sockaddr *)&from, &fromlen)) >
           0) {
        answer_query(q, (size_t)n, &from);
        fromlen = sizeof from;
    }
}

static void collect(void)
{
    int slot;
    resolver_answer a;
    while (resolver_next_done(res, &slot, &a)) {
        ck_assert_int_ge(slot, 0);
        ck_assert_int_lt(slot, SLOTS);
        ck_assert_msg(!results[slot].done, "slot %d answered twice", slot);
        slot_result *r = &results[slot];
        r->done = true;
        r->status = a.status;
        r->count = a.count;
        r->at_ms = now_ms() - t0;
        snprintf(r->error, sizeof r->error, "%s", a.error);
        if (a.count > 0) {
            const struct sockaddr *sa = a.addrs[0];
            const void *raw = sa->sa_family == AF_INET
                                  ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
                                  : (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
            inet_ntop(sa->sa_family, raw, r->first, sizeof r->first);
        }
    }
}

/* One turn of the drainer's loop: wait on c-ares' sockets and the server's, reporting
 * only what libcurl's wait reports (POLLIN, POLLOUT, POLLPRI: not POLLERR), then
 * process. */
static void turn(int max_ms)
{
    struct pollfd pfds[17];
    unsigned n = resolver_wait_fds(res, pfds, 16);
    pfds[n] = (struct pollfd){.fd = srv.fd, .events = POLLIN};
    poll(pfds, n + 1, resolver_wait_ms(res, max_ms));
    for (unsigned i = 0; i < n; i++)
        pfds[i].revents &= POLLIN | POLLOUT | POLLPRI;
    serve();
    resolver_process(res, pfds, n);
    collect();
}

/* Turns until every slot below upto is answered, or ms pass. */
static void run_until_done(int upto, int ms)
{
    long long end = now_ms() + ms;
    for (;;) {
        bool all = true;
        for (int i = 0; i < upto; i++)
            all = all && results[i].done;
        long long left = end - now_ms();
        if (all || left <= 0)
            return;
        turn((int)left);
    }
}

static void start_server(void)
{
    memset(&srv, 0, sizeof srv);
    srv.fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(srv.fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(bind(srv.fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t alen = sizeof a;
    ck_assert_int_eq(getsockname(srv.fd, (struct sockaddr *)&a, &alen), 0);
    srv.port = ntohs(a.sin_port);
}

static void start_resolver(long deadline_ms, int port)
{
    char servers[64];
    snprintf(servers, sizeof servers, "127.0.0.1:%d", port);
    res = resolver_create(deadline_ms, conf_path, servers, err, sizeof err);
    ck_assert_msg(res != NULL, "%s", err);
    memset(results, 0, sizeof results);
    t0 = now_ms();
}

/* Rewrites the test's resolv.conf (the servers come from resolver_create's argument). */
static void write_conf(const char *text)
{
    FILE *f = fopen(conf_path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

static void setup(void)
{
    snprintf(conf_path, sizeof conf_path, "/tmp/market-unit-resolv.XXXXXX");
    int fd = mkstemp(conf_path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    write_conf("nameserver 127.0.0.1\noptions ndots:1\n");
    start_server();
    start_resolver(2000, srv.port);
}

static void teardown(void)
{
    resolver_destroy(res);
    res = NULL;
    close(srv.fd);
    unlink(conf_path);
}

START_TEST(deliveries_to_one_host_share_a_lookup)
{
    for (int slot = 0; slot < 3; slot++)
        resolver_lookup(res, "fast.test", slot);
    ck_assert_int_eq(resolver_waiting(res), 1);
    run_until_done(3, 2000);
    for (int slot = 0; slot < 3; slot++) {
        ck_assert_msg(results[slot].done, "slot %d got no answer", slot);
        ck_assert_int_eq(results[slot].status, RESOLVER_OK);
        ck_assert_uint_eq(results[slot].count, 1);
        ck_assert_str_eq(results[slot].first, FAST_ADDR);
    }
    printf("resolver: 3 deliveries to fast.test: %d A and %d AAAA query, answered in %lld ms\n",
           srv.a_queries[0], srv.aaaa_queries[0], results[2].at_ms);
    ck_assert_int_eq(srv.a_queries[0], 1);
    ck_assert_int_le(srv.aaaa_queries[0], 1);
    ck_assert_int_eq(resolver_waiting(res), 0);
    /* A later delivery asks again: answers are not kept (DNS answers change). */
    resolver_lookup(res, "fast.test", 3);
    run_until_done(4, 2000);
    ck_assert_int_eq(results[3].status, RESOLVER_OK);
    ck_assert_int_eq(srv.a_queries[0], 2);
}
END_TEST

START_TEST(a_name_that_hangs_delays_only_itself)
{
    resolver_destroy(res);
    start_resolver(300, srv.port);
    resolver_lookup(res, "hang.test", 0);
    resolver_lookup(res, "fast.test", 1);
    resolver_lookup(res, "hang.test", 2); /* shares the lookup, and its deadline */
    run_until_done(3, 2000);
    printf("resolver: fast.test answered in %lld ms while hang.test hung; hang.test given up "
           "after %lld ms (deadline 300 ms): %s\n",
           results[1].at_ms, results[0].at_ms, results[0].error);
    ck_assert_int_eq(results[1].status, RESOLVER_OK);
    ck_assert_int_lt(results[1].at_ms, 150);
    ck_assert_int_eq(results[0].status, RESOLVER_TIMED_OUT);
    ck_assert_int_eq(results[2].status, RESOLVER_TIMED_OUT);
    ck_assert_str_eq(results[0].error, "host did not resolve within 0.3 s");
    ck_assert_int_ge(results[0].at_ms, 300);
    ck_assert_int_lt(results[0].at_ms, 1000);
    ck_assert_int_eq(srv.a_queries[1], 1);
    /* Nobody waits for hang.test any more: its query is dropped, its socket closed. */
    turn(0);
    ck_assert_int_eq(resolver_queries(res), 0);
    ck_assert_uint_eq(resolver_nfds(res), 0);
}
END_TEST

START_TEST(a_query_given_up_waits_for_the_others_to_end)
{
    resolver_destroy(res);
    start_resolver(300, srv.port);
    resolver_lookup(res, "hang.test", 0);
    long long second = now_ms() + 150;
    while (now_ms() < second)
        turn((int)(second - now_ms()));
    resolver_lookup(res, "hang2.test", 1);
    run_until_done(1, 2000);
    ck_assert_int_eq(results[0].status, RESOLVER_TIMED_OUT);
    /* hang2.test is still waited for: c-ares cannot drop hang.test's query alone. */
    ck_assert_int_eq(resolver_waiting(res), 1);
    ck_assert_int_eq(resolver_queries(res), 2);
    run_until_done(2, 2000);
    printf("resolver: hang.test given up at %lld ms, hang2.test at %lld ms; queries left %d\n",
           results[0].at_ms, results[1].at_ms, resolver_queries(res));
    ck_assert_int_eq(results[1].status, RESOLVER_TIMED_OUT);
    ck_assert_int_ge(results[1].at_ms, 440);
    ck_assert_int_eq(resolver_queries(res), 0);
}
END_TEST

START_TEST(failures_say_why)
{
    resolver_lookup(res, "nx.test", 0);
    resolver_lookup(res, "fail.test", 1);
    run_until_done(2, 3000);
    printf("resolver: nx.test in %lld ms: %s; fail.test in %lld ms: %s\n", results[0].at_ms,
           results[0].error, results[1].at_ms, results[1].error);
    ck_assert_int_eq(results[0].status, RESOLVER_FAILED);
    ck_assert_str_eq(results[0].error, "host does not resolve");
    /* c-ares 1.18 takes a server that answers only SERVFAIL for one that failed, and
     * says so once it has tried them all. */
    ck_assert_int_eq(results[1].status, RESOLVER_FAILED);
    ck_assert_str_eq(results[1].error, "host does not resolve (Could not contact DNS servers)");
}
END_TEST

START_TEST(a_refusing_server_is_noticed_at_once)
{
    /* A port nobody listens on: the ICMP refusal is a POLLERR that libcurl's wait does
     * not report; the resolver reads anyway and fails at once, not after c-ares' timeout. */
    int probe = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    ck_assert_int_eq(bind(probe, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(getsockname(probe, (struct sockaddr *)&a, &alen), 0);
    close(probe);
    resolver_destroy(res);
    start_resolver(3000, ntohs(a.sin_port));
    resolver_lookup(res, "fast.test", 0);
    run_until_done(1, 3000);
    printf("resolver: a refusing server, answered in %lld ms: %s\n", results[0].at_ms,
           results[0].error);
    ck_assert_int_eq(results[0].status, RESOLVER_FAILED);
    ck_assert_str_eq(results[0].error, "host does not resolve (Could not contact DNS servers)");
    ck_assert_int_lt(results[0].at_ms, 1000);
}
END_TEST

START_TEST(hosts_file_answers_without_a_query)
{
    resolver_lookup(res, "localhost", 0);
    run_until_done(1, 2000);
    ck_assert_int_eq(results[0].status, RESOLVER_OK);
    ck_assert_uint_ge(results[0].count, 1);
    ck_assert_msg(strcmp(results[0].first, "127.0.0.1") == 0 ||
                      strcmp(results[0].first, "::1") == 0,
                  "%s", results[0].first);
    ck_assert_int_eq(srv.a_queries[3] + srv.aaaa_queries[3], 0);
}
END_TEST

START_TEST(a_changed_configuration_is_read_again)
{
    resolver_destroy(res);
    start_resolver(300, srv.port);
    resolver_lookup(res, "fast.test", 0);
    run_until_done(1, 2000);
    ck_assert_int_eq(results[0].status, RESOLVER_OK);
    ck_assert_int_eq(resolver_reloads(res), 0);
    /* Rewritten while a query runs: read again only once it ended. */
    resolver_lookup(res, "hang.test", 1);
    write_conf("nameserver 127.0.0.1\nsearch corp.test\noptions ndots:2\n");
    resolver_lookup(res, "fast.test", 2);
    ck_assert_int_eq(resolver_reloads(res), 0);
    run_until_done(3, 3000);
    ck_assert_int_eq(results[2].status, RESOLVER_OK);
    ck_assert_int_eq(results[1].status, RESOLVER_TIMED_OUT);
    ck_assert_int_eq(srv.a_queries[3], 0);
    /* The next lookup reads it: "fast.test" has fewer dots than ndots, so the search
     * domain is tried first (NXDOMAIN here), then the name itself. */
    resolver_lookup(res, "fast.test", 3);
    run_until_done(4, 2000);
    printf("resolver: resolv.conf rewritten, read again %d time(s); fast.test.corp.test asked "
           "%d time(s), fast.test answered: %s\n",
           resolver_reloads(res), srv.a_queries[3], results[3].first);
    ck_assert_int_eq(resolver_reloads(res), 1);
    ck_assert_int_eq(results[3].status, RESOLVER_OK);
    ck_assert_int_ge(srv.a_queries[3], 1);
    /* Unchanged since: not read again. */
    resolver_lookup(res, "fast.test", 4);
    run_until_done(5, 2000);
    ck_assert_int_eq(resolver_reloads(res), 1);
}
END_TEST

START_TEST(servers_and_descriptions)
{
    char text[128], want[64];
    resolver_servers(res, text, sizeof text);
    snprintf(want, sizeof want, "127.0.0.1:%d", srv.port);
    ck_assert_str_eq(text, want);
    resolver_describe(ARES_ENOTFOUND, text, sizeof text);
    ck_assert_str_eq(text, "host does not resolve");
    resolver_describe(ARES_ENODATA, text, sizeof text);
    ck_assert_str_eq(text, "host does not resolve");
    resolver_describe(ARES_ETIMEOUT, text, sizeof text);
    ck_assert_str_eq(text, "host does not resolve (Timeout while contacting DNS servers)");
    resolver_describe(ARES_EREFUSED, text, sizeof text);
    ck_assert_str_eq(text, "host does not resolve (DNS server refused query)");
}
END_TEST

/* resolve_host waits in its own loop: the test's server answers from a thread meanwhile.
 * The counters are read once the thread has ended (stop_serving). */
static atomic_bool serving;
static pthread_t server_thread;
static char srv_address[64]; /* the test's server, as resolve_host takes its servers */

static void *serve_until_stopped(void *arg)
{
    (void)arg;
    while (atomic_load(&serving)) {
        struct pollfd p = {.fd = srv.fd, .events = POLLIN};
        if (poll(&p, 1, 10) > 0)
            serve();
    }
    return NULL;
}

static void stop_serving(void)
{
    if (!atomic_exchange(&serving, false))
        return;
    ck_assert_int_eq(pthread_join(server_thread, NULL), 0);
}

static void setup_waiting(void)
{
    start_server();
    snprintf(srv_address, sizeof srv_address, "127.0.0.1:%d", srv.port);
    atomic_store(&serving, true);
    ck_assert_int_eq(pthread_create(&server_thread, NULL, serve_until_stopped, NULL), 0);
}

static void teardown_waiting(void)
{
    stop_serving();
    close(srv.fd);
}

START_TEST(a_lookup_that_waits_gets_the_answer)
{
    netcheck_result r;
    netcheck_status st;
    long long start = now_ms();
    ck_assert_int_eq(resolve_host("public.test", 2000, srv_address, false, &st, &r), RESOLVER_OK);
    long long took = now_ms() - start;
    printf("resolve_host: public.test answered in %lld ms\n", took);
    ck_assert_int_eq(st, NETCHECK_OK);
    ck_assert_int_eq(r.count, 1);
    ck_assert_str_eq(r.addrs[0], PUBLIC_ADDR);
    ck_assert_int_eq(r.families[0], AF_INET);
    ck_assert_int_lt(took, 1000);
}
END_TEST

START_TEST(a_lookup_that_waits_refuses_private_addresses)
{
    netcheck_result r;
    netcheck_status st;
    ck_assert_int_eq(resolve_host("private.test", 2000, srv_address, false, &st, &r), RESOLVER_OK);
    ck_assert_int_eq(st, NETCHECK_FORBIDDEN);
    ck_assert_int_eq(r.count, 0);
    ck_assert_int_eq(resolve_host("fast.test", 2000, srv_address, false, &st, &r), RESOLVER_OK);
    ck_assert_int_eq(st, NETCHECK_FORBIDDEN); /* a documentation address is not public */
    ck_assert_int_eq(resolve_host("private.test", 2000, srv_address, true, &st, &r), RESOLVER_OK);
    ck_assert_int_eq(st, NETCHECK_OK);
    ck_assert_int_eq(r.count, 1);
    ck_assert_str_eq(r.addrs[0], PRIVATE_ADDR);
}
END_TEST

START_TEST(a_lookup_that_waits_fails_for_no_such_name)
{
    netcheck_result r;
    netcheck_status st;
    ck_assert_int_eq(resolve_host("nx.test", 2000, srv_address, true, &st, &r), RESOLVER_FAILED);
    ck_assert_int_eq(st, NETCHECK_UNRESOLVED);
    ck_assert_int_eq(r.count, 0);
    ck_assert_int_eq(resolve_host("", 2000, srv_address, true, &st, &r), RESOLVER_FAILED);
    ck_assert_int_eq(st, NETCHECK_UNRESOLVED);
}
END_TEST

START_TEST(a_lookup_that_waits_gives_up_at_its_deadline)
{
    netcheck_result r;
    netcheck_status st;
    long long start = now_ms();
    ck_assert_int_eq(resolve_host("hang.test", 300, srv_address, false, &st, &r),
                     RESOLVER_TIMED_OUT);
    long long took = now_ms() - start;
    stop_serving();
    printf("resolve_host: hang.test given up after %lld ms (deadline 300 ms)\n", took);
    ck_assert_int_eq(st, NETCHECK_UNRESOLVED);
    ck_assert_int_eq(r.count, 0);
    ck_assert_int_ge(took, 300);
    ck_assert_int_lt(took, 1000);
    ck_assert_int_ge(srv.a_queries[1], 1);
}
END_TEST

START_TEST(a_lookup_that_waits_needs_no_query_for_addresses_or_hosts_file)
{
    netcheck_result r;
    netcheck_status st;
    /* Numeric spellings are judged at once, even with a deadline of 0. */
    ck_assert_int_eq(resolve_host(PUBLIC_ADDR, 0, srv_address, false, &st, &r), RESOLVER_OK);
    ck_assert_int_eq(st, NETCHECK_OK);
    ck_assert_str_eq(r.addrs[0], PUBLIC_ADDR);
    ck_assert_int_eq(resolve_host("127.1", 0, srv_address, false, &st, &r), RESOLVER_OK);
    ck_assert_int_eq(st, NETCHECK_FORBIDDEN);
    ck_assert_int_eq(resolve_host("::1", 0, srv_address, true, &st, &r), RESOLVER_OK);
    ck_assert_int_eq(st, NETCHECK_OK);
    ck_assert_str_eq(r.addrs[0], "::1");
    /* Names of /etc/hosts, as the system resolver reads it. */
    ck_assert_int_eq(resolve_host("localhost", 2000, srv_address, false, &st, &r), RESOLVER_OK);
    ck_assert_int_eq(st, NETCHECK_FORBIDDEN);
    ck_assert_int_eq(resolve_host("localhost", 2000, srv_address, true, &st, &r), RESOLVER_OK);
    ck_assert_int_eq(st, NETCHECK_OK);
    ck_assert_int_ge(r.count, 1);
    ck_assert_msg(strcmp(r.addrs[0], "127.0.0.1") == 0 || strcmp(r.addrs[0], "::1") == 0, "%s",
                  r.addrs[0]);
    stop_serving();
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(srv.a_queries[i] + srv.aaaa_queries[i], 0);
}
END_TEST

Suite *resolver_suite(void)
{
    Suite *s = suite_create("resolver");
    TCase *tc = tcase_create("c-ares");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, deliveries_to_one_host_share_a_lookup);
    tcase_add_test(tc, a_name_that_hangs_delays_only_itself);
    tcase_add_test(tc, a_query_given_up_waits_for_the_others_to_end);
    tcase_add_test(tc, failures_say_why);
    tcase_add_test(tc, a_refusing_server_is_noticed_at_once);
    tcase_add_test(tc, hosts_file_answers_without_a_query);
    tcase_add_test(tc, a_changed_configuration_is_read_again);
    tcase_add_test(tc, servers_and_descriptions);
    suite_add_tcase(s, tc);
    TCase *waiting = tcase_create("resolve_host");
    tcase_add_checked_fixture(waiting, setup_waiting, teardown_waiting);
    tcase_add_test(waiting, a_lookup_that_waits_gets_the_answer);
    tcase_add_test(waiting, a_lookup_that_waits_refuses_private_addresses);
    tcase_add_test(waiting, a_lookup_that_waits_fails_for_no_such_name);
    tcase_add_test(waiting, a_lookup_that_waits_gives_up_at_its_deadline);
    tcase_add_test(waiting, a_lookup_that_waits_needs_no_query_for_addresses_or_hosts_file);
    suite_add_tcase(s, waiting);
    return s;
}
