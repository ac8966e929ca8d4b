/* api/fastcgi_conns: a worker's FastCGI connections, over a real Unix socket. The test
 * plays nginx: it writes FastCGI records by hand (protocol version 1), with and without
 * FCGI_KEEP_CONN, and reads the worker's records back. Everything a case sends is
 * written before the worker reads, so the worker's waits end at once. */
#include <errno.h>
#include <fcgiapp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/http/fastcgi_conns.h"
#include "unit.h"

enum { BEGIN_REQUEST = 1, END_REQUEST = 3, PARAMS = 4, STDIN = 5, STDOUT = 6 };

static char socket_dir[64];
static char socket_path[100]; /* fits sun_path (108 bytes) */
static int listener = -1;
static fastcgi_conns set;

static void setup(void)
{
    snprintf(socket_dir, sizeof socket_dir, "%s", "/tmp/market-fcgi-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(socket_dir));
    snprintf(socket_path, sizeof socket_path, "%s/api.sock", socket_dir);
    listener = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path);
    ck_assert_int_eq(bind(listener, (struct sockaddr *)&addr, sizeof addr), 0);
    ck_assert_int_eq(listen(listener, 16), 0);
    ck_assert_int_eq(FCGX_Init(), 0);
    fastcgi_conns_init(&set, listener, 1);
}

static void teardown(void)
{
    for (int i = 0; i < set.count; i++)
        close(set.requests[i].ipcFd);
    close(set.epoll_fd);
    close(listener);
    unlink(socket_path);
    rmdir(socket_dir);
}

static int nginx_connect(void)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    return fd;
}

static void write_all(int fd, const void *data, size_t len)
{
    ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
}

static void write_record(int fd, int type, const void *content, size_t len)
{
    unsigned char head[8] = {
        1, (unsigned char)type, 0, 1, (unsigned char)(len >> 8), (unsigned char)len, 0, 0};
    write_all(fd, head, sizeof head);
    if (len > 0)
        write_all(fd, content, len);
}

/* A whole request for uri: begin (keeping the connection or not), one parameter, and a
 * body of body_len bytes of 'x' (no reader of it needed). */
static void send_request(int fd, const char *uri, bool keep, size_t body_len)
{
    unsigned char begin[8] = {0, 1, keep ? 1 : 0, 0, 0, 0, 0, 0};
    write_record(fd, BEGIN_REQUEST, begin, sizeof begin);
    /* One name-value pair, both lengths under 128: a byte each. */
    char params[300];
    int len = snprintf(params, sizeof params, "%c%c%s%s", (char)strlen("REQUEST_URI"),
                       (char)strlen(uri), "REQUEST_URI", uri);
    write_record(fd, PARAMS, params, (size_t)len);
    write_record(fd, PARAMS, NULL, 0);
    char chunk[4096];
    memset(chunk, 'x', sizeof chunk);
    for (size_t sent = 0; sent < body_len;) {
        size_t n = body_len - sent < sizeof chunk ? body_len - sent : sizeof chunk;
        write_record(fd, STDIN, chunk, n);
        sent += n;
    }
    write_record(fd, STDIN, NULL, 0);
}

static void read_all(int fd, void *data, size_t len)
{
    for (size_t got = 0; got < len;) {
        ssize_t n = read(fd, (char *)data + got, len - got);
        ck_assert_int_gt(n, 0);
        got += (size_t)n;
    }
}

/* The worker's answer: its standard output up to the END_REQUEST record. */
static void read_response(int fd, char *out, size_t outsz)
{
    size_t used = 0;
    for (;;) {
        unsigned char head[8];
        read_all(fd, head, sizeof head);
        size_t len = ((size_t)head[4] << 8) | head[5], padding = head[6];
        char content[65536 + 256];
        read_all(fd, content, len + padding);
        if (head[1] == END_REQUEST)
            break;
        if (head[1] == STDOUT) {
            ck_assert_uint_lt(used + len, outsz);
            memcpy(out + used, content, len);
            used += len;
        }
    }
    out[used] = '\0';
}

/* The worker's side of one request: the next one must be for uri; it answers its uri. */
static void serve(const char *uri)
{
    FCGX_Request *fcgi = fastcgi_conns_next(&set, NULL);
    ck_assert_ptr_nonnull(fcgi);
    ck_assert_str_eq(FCGX_GetParam("REQUEST_URI", fcgi->envp), uri);
    FCGX_FPrintF(fcgi->out, "Status: 200 OK\r\n\r\nanswer for %s", uri);
    fastcgi_conns_finish(&set, fcgi);
}

/* The peer reads the answer of a large reply while the worker writes it. */
typedef struct {
    int fd;
    char *out;
    size_t size;
} reader;

static void *read_in_background(void *arg)
{
    reader *rd = arg;
    read_response(rd->fd, rd->out, rd->size);
    return NULL;
}

/* Serves uri with fastcgi_conns_reply: a head, then the body in pieces. */
static void serve_reply(const char *uri, const char *body, size_t body_len, int body_pieces)
{
    FCGX_Request *fcgi = fastcgi_conns_next(&set, NULL);
    ck_assert_ptr_nonnull(fcgi);
    ck_assert_str_eq(FCGX_GetParam("REQUEST_URI", fcgi->envp), uri);
    static const char head[] = "Status: 200 OK\r\n\r\n";
    struct iovec pieces[8] = {{(void *)head, sizeof head - 1}};
    size_t at = 0;
    for (int i = 1; i <= body_pieces; i++) {
        size_t len = i == body_pieces ? body_len - at : body_len / (size_t)body_pieces;
        pieces[i] = (struct iovec){(void *)(body + at), len};
        at += len;
    }
    ck_assert(fastcgi_conns_reply(fcgi, pieces, 1 + body_pieces));
    fastcgi_conns_finish(&set, fcgi);
}

static void expect_answer(int fd, const char *uri)
{
    char body[1024], expected[256];
    read_response(fd, body, sizeof body);
    snprintf(expected, sizeof expected, "Status: 200 OK\r\n\r\nanswer for %s", uri);
    ck_assert_str_eq(body, expected);
}

/* One request on a kept connection fd, served by the worker and answered. */
static void round_trip(int fd, const char *uri)
{
    send_request(fd, uri, true, 0);
    serve(uri);
    expect_answer(fd, uri);
}

/* The peer's end of a connection the worker closed: nothing more, then the end. */
static void expect_closed(int fd)
{
    char byte;
    ssize_t n;
    do
        n = read(fd, &byte, 1);
    while (n < 0 && errno == EINTR);
    ck_assert(n == 0 || (n < 0 && errno == ECONNRESET));
}

/* Two workers of one pool, each a thread with its own set on the same listener, each
 * serving one request; which thread has served, and each thread's id for /proc. */
typedef struct {
    fastcgi_conns *conns;
    _Atomic pid_t tid;
    atomic_bool served;
} pool_worker;

static void *serve_one(void *arg)
{
    pool_worker *w = arg;
    atomic_store(&w->tid, gettid());
    FCGX_Request *fcgi = fastcgi_conns_next(w->conns, NULL);
    ck_assert_ptr_nonnull(fcgi);
    FCGX_FPrintF(fcgi->out, "Status: 200 OK\r\n\r\nanswer for %s",
                 FCGX_GetParam("REQUEST_URI", fcgi->envp));
    atomic_store(&w->served, true);
    fastcgi_conns_finish(w->conns, fcgi);
    return NULL;
}

/* A thread's state letter and its voluntary context switches (how often it slept). */
static char thread_state(pid_t tid, long *slept)
{
    char path[64], line[256], state = '?';
    snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    static const char switches[] = "voluntary_ctxt_switches:";
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "State:", 6) == 0)
            state = line[6 + strspn(line + 6, " \t")];
        else if (strncmp(line, switches, sizeof switches - 1) == 0)
            *slept = strtol(line + sizeof switches - 1, NULL, 10);
    }
    fclose(f);
    return state;
}

START_TEST(a_new_connection_wakes_one_sleeping_worker)
{
    static fastcgi_conns other;
    fastcgi_conns_init(&other, listener, 1);
    pool_worker workers[2] = {{.conns = &set}, {.conns = &other}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&threads[i], NULL, serve_one, &workers[i]), 0);
    /* Both asleep on the listener, and settled there. */
    long slept[2] = {0, 0};
    for (int tries = 0;; tries++) {
        ck_assert_int_lt(tries, 500);
        struct timespec pause = {.tv_nsec = 10 * 1000000L};
        nanosleep(&pause, NULL);
        pid_t a = atomic_load(&workers[0].tid), b = atomic_load(&workers[1].tid);
        if (a != 0 && b != 0 && thread_state(a, &slept[0]) == 'S' &&
            thread_state(b, &slept[1]) == 'S')
            break;
    }
    int fd = nginx_connect();
    send_request(fd, "/v1/first", false, 0);
    expect_answer(fd, "/v1/first");
    close(fd);
    int waiting = atomic_load(&workers[0].served) ? 1 : 0;
    ck_assert(atomic_load(&workers[1 - waiting].served));
    ck_assert(!atomic_load(&workers[waiting].served));
    /* The other worker slept through it: poll(2) on the listener would have woken it
     * too, to find nothing to accept and sleep again. */
    struct timespec pause = {.tv_nsec = 50 * 1000000L};
    nanosleep(&pause, NULL);
    long slept_now = 0;
    ck_assert_int_eq(thread_state(atomic_load(&workers[waiting].tid), &slept_now), 'S');
    ck_assert_int_eq(slept_now, slept[waiting]);
    /* The next connection is its. */
    fd = nginx_connect();
    send_request(fd, "/v1/second", false, 0);
    expect_answer(fd, "/v1/second");
    close(fd);
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    ck_assert(atomic_load(&workers[waiting].served));
    close(other.epoll_fd);
}
END_TEST

START_TEST(a_kept_connection_carries_request_after_request)
{
    int a = nginx_connect();
    for (int i = 0; i < 3; i++) {
        char uri[32];
        snprintf(uri, sizeof uri, "/v1/a/%d", i);
        round_trip(a, uri);
        ck_assert_int_eq(set.count, 1);
    }
    close(a);
}
END_TEST

START_TEST(an_idle_kept_connection_does_not_hold_the_worker)
{
    int a = nginx_connect();
    round_trip(a, "/v1/a");
    /* a stays open and sends nothing: b's request is served all the same. */
    int b = nginx_connect();
    round_trip(b, "/v1/b");
    ck_assert_int_eq(set.count, 2);
    /* Both have a request waiting: both are served, in turn. */
    send_request(a, "/v1/a2", true, 0);
    send_request(b, "/v1/b2", true, 0);
    FCGX_Request *first = fastcgi_conns_next(&set, NULL);
    const char *uri = FCGX_GetParam("REQUEST_URI", first->envp);
    bool a_first = strcmp(uri, "/v1/a2") == 0;
    ck_assert(a_first || strcmp(uri, "/v1/b2") == 0);
    FCGX_FPrintF(first->out, "Status: 200 OK\r\n\r\nanswer for %s", uri);
    fastcgi_conns_finish(&set, first);
    serve(a_first ? "/v1/b2" : "/v1/a2");
    expect_answer(a, "/v1/a2");
    expect_answer(b, "/v1/b2");
    close(a);
    close(b);
}
END_TEST

START_TEST(a_connection_not_kept_is_closed_after_its_request)
{
    int a = nginx_connect();
    send_request(a, "/v1/once", false, 0);
    serve("/v1/once");
    expect_answer(a, "/v1/once");
    expect_closed(a);
    ck_assert_int_eq(set.count, 0);
    close(a);
}
END_TEST

START_TEST(a_connection_nginx_closed_is_dropped)
{
    int a = nginx_connect();
    round_trip(a, "/v1/a");
    close(a);
    int b = nginx_connect();
    send_request(b, "/v1/b", true, 0);
    serve("/v1/b"); /* a's end is read on the way, or at the next wait */
    expect_answer(b, "/v1/b");
    round_trip(b, "/v1/b2");
    ck_assert_int_eq(set.count, 1);
    close(b);
}
END_TEST

START_TEST(an_unread_body_is_drained_before_the_next_request)
{
    int a = nginx_connect();
    send_request(a, "/v1/post", true, 20000); /* the handler reads none of it */
    serve("/v1/post");
    expect_answer(a, "/v1/post");
    round_trip(a, "/v1/after");
    close(a);
}
END_TEST

START_TEST(what_is_no_fastcgi_request_loses_its_connection_only)
{
    int junk = nginx_connect();
    write_all(junk, "GET / HTTP/1.1\r\n\r\n", 18);
    int b = nginx_connect();
    round_trip(b, "/v1/b");
    expect_closed(junk);
    ck_assert_int_eq(set.count, 1);
    close(junk);
    close(b);
}
END_TEST

START_TEST(a_reply_is_whole_records_whatever_its_size)
{
    /* 0 bytes, one record, several records (64 KiB each at most), and more records
     * than one writev takes (3 MiB: 48 records), read while they are written. */
    static const size_t sizes[] = {0, 10000, 65535 - 18, 200000, 3 * 1024 * 1024};
    int a = nginx_connect();
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t len = sizes[k];
        char *body = malloc(len + 1), *answer = malloc(len + 64);
        for (size_t i = 0; i < len; i++)
            body[i] = (char)('a' + i % 26);
        body[len] = '\0';
        char uri[32];
        snprintf(uri, sizeof uri, "/v1/big/%zu", len);
        send_request(a, uri, true, 0);
        reader rd = {a, answer, len + 64};
        pthread_t thread;
        ck_assert_int_eq(pthread_create(&thread, NULL, read_in_background, &rd), 0);
        serve_reply(uri, body, len, k % 2 == 0 ? 1 : 3);
        ck_assert_int_eq(pthread_join(thread, NULL), 0);
        ck_assert_uint_eq(strlen(answer), 18 + len);
        ck_assert_int_eq(memcmp(answer, "Status: 200 OK\r\n\r\n", 18), 0);
        ck_assert_int_eq(memcmp(answer + 18, body, len), 0);
        ck_assert_int_eq(set.count, 1); /* kept for the next */
        free(body);
        free(answer);
    }
    close(a);
}
END_TEST

START_TEST(a_reply_nobody_reads_closes_the_connection)
{
    int a = nginx_connect();
    send_request(a, "/v1/gone", true, 0);
    FCGX_Request *fcgi = fastcgi_conns_next(&set, NULL);
    ck_assert_ptr_nonnull(fcgi);
    close(a); /* nginx's client left */
    static const char head[] = "Status: 200 OK\r\n\r\n";
    struct iovec piece = {(void *)head, sizeof head - 1};
    ck_assert(!fastcgi_conns_reply(fcgi, &piece, 1));
    fastcgi_conns_finish(&set, fcgi);
    ck_assert_int_eq(set.count, 0);
}
END_TEST

/* Waits ms, across the worker's SIGALRM (which cuts a sleep short). */
static void wait_ms(long ms)
{
    struct timespec left = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR)
        ;
}

START_TEST(a_request_waiting_behind_a_slow_one_is_sent_back)
{
    int a = nginx_connect();
    round_trip(a, "/v1/a");
    int b = nginx_connect();
    round_trip(b, "/v1/b");
    ck_assert_int_eq(set.count, 2);

    /* a's request is slow; b's arrives meanwhile and waits past FASTCGI_BOUNCE_MS. */
    send_request(a, "/v1/slow", true, 0);
    FCGX_Request *slow = fastcgi_conns_next(&set, NULL);
    ck_assert_str_eq(FCGX_GetParam("REQUEST_URI", slow->envp), "/v1/slow");
    send_request(b, "/v1/b2", true, 0);
    wait_ms(5 * FASTCGI_BOUNCE_MS);
    expect_closed(b); /* sent back unread: nginx sends it again on another connection */
    FCGX_FPrintF(slow->out, "Status: 200 OK\r\n\r\nanswer for %s", "/v1/slow");
    fastcgi_conns_finish(&set, slow);
    expect_answer(a, "/v1/slow");

    /* b is forgotten; a goes on. */
    round_trip(a, "/v1/a3");
    ck_assert_int_eq(set.count, 1);
    close(a);
    close(b);
}
END_TEST

START_TEST(a_quick_request_sends_nothing_back)
{
    int a = nginx_connect();
    round_trip(a, "/v1/a");
    int b = nginx_connect();
    round_trip(b, "/v1/b");
    /* The timer is off between requests: an idle while is no reason to send back. */
    wait_ms(5 * FASTCGI_BOUNCE_MS);
    round_trip(a, "/v1/a2");
    round_trip(b, "/v1/b2");
    ck_assert_int_eq(set.count, 2);
    close(a);
    close(b);
}
END_TEST

static int wakes;
static int wake_pipe[2];

static int idle_fd(void *arg)
{
    (void)arg;
    return wake_pipe[0];
}

static void idle_wake(void *arg)
{
    (void)arg;
    char byte;
    ck_assert_int_eq(read(wake_pipe[0], &byte, 1), 1);
    wakes++;
}

START_TEST(the_idle_descriptor_is_heard_while_waiting)
{
    ck_assert_int_eq(pipe(wake_pipe), 0);
    wakes = 0;
    write_all(wake_pipe[1], "!", 1);
    int a = nginx_connect();
    send_request(a, "/v1/a", true, 0);
    const fastcgi_idle idle = {idle_fd, idle_wake, NULL};
    FCGX_Request *fcgi = fastcgi_conns_next(&set, &idle);
    ck_assert_ptr_nonnull(fcgi);
    ck_assert_int_eq(wakes, 1);
    fastcgi_conns_finish(&set, fcgi);
    close(a);
    close(wake_pipe[0]);
    close(wake_pipe[1]);
}
END_TEST

START_TEST(busy_tells_whether_a_request_may_be_waiting)
{
    ck_assert(!fastcgi_conns_busy(&set));
    int a = nginx_connect();
    ck_assert(fastcgi_conns_busy(&set)); /* on the listener */
    round_trip(a, "/v1/a");
    ck_assert(!fastcgi_conns_busy(&set));
    send_request(a, "/v1/a2", true, 0);
    ck_assert(fastcgi_conns_busy(&set)); /* on the kept connection */
    serve("/v1/a2");
    expect_answer(a, "/v1/a2");
    close(a);
}
END_TEST

/* The peer's end of a connection the listener holds unaccepted: the worker can take it. */
static bool waits_in_backlog(void)
{
    struct pollfd p = {.fd = listener, .events = POLLIN};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

START_TEST(a_stopping_worker_serves_what_it_holds_and_takes_no_more)
{
    int kept = nginx_connect();
    round_trip(kept, "/v1/a");
    int idle = nginx_connect();
    round_trip(idle, "/v1/b");
    ck_assert_int_eq(set.count, 2);
    /* A request already sent on a kept connection, and a new connection not taken yet. */
    send_request(kept, "/v1/a2", true, 0);
    int later = nginx_connect();
    send_request(later, "/v1/next-pool", false, 0);
    fastcgi_conns_stop(&set);
    serve("/v1/a2");
    expect_answer(kept, "/v1/a2");
    /* Nothing more: the connections it held are closed, the new one is left to the
     * listening socket (the pool's next start takes it). */
    ck_assert_ptr_null(fastcgi_conns_next(&set, NULL));
    ck_assert_int_eq(set.count, 0);
    expect_closed(kept);
    expect_closed(idle);
    ck_assert(waits_in_backlog());
    close(kept);
    close(idle);
    close(later);
}
END_TEST

static int ticks;
static atomic_bool stopped_by_tick;

/* Stops the worker once it holds a connection (taken off the listener, not read yet). */
static void stop_on_tick(void *arg)
{
    fastcgi_conns *conns = arg;
    ticks++;
    if (conns->count > 0) {
        fastcgi_conns_stop(conns);
        atomic_store(&stopped_by_tick, true);
    }
}

/* The test's side of a connection whose request comes once the worker is stopping. */
static void *send_late(void *arg)
{
    for (int i = 0; i < 2000 && !atomic_load(&stopped_by_tick); i++) {
        struct timespec pause = {.tv_nsec = 1000000L};
        nanosleep(&pause, NULL);
    }
    send_request(*(int *)arg, "/v1/late", false, 0);
    return NULL;
}

START_TEST(a_connection_taken_before_the_stop_has_its_request_served)
{
    /* The worker takes the connection before its request arrives, then the tick stops it:
     * the request that follows is served all the same (it may be a POST, which nginx
     * never sends twice). */
    ticks = 0;
    atomic_store(&stopped_by_tick, false);
    fastcgi_conns_tick(&set, 1, stop_on_tick, &set);
    int fd = nginx_connect();
    pthread_t thread;
    ck_assert_int_eq(pthread_create(&thread, NULL, send_late, &fd), 0);
    serve("/v1/late");
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    ck_assert(atomic_load(&stopped_by_tick));
    expect_answer(fd, "/v1/late");
    ck_assert_ptr_null(fastcgi_conns_next(&set, NULL));
    expect_closed(fd);
    close(fd);
}
END_TEST

START_TEST(a_connection_that_sends_nothing_does_not_hold_the_stop)
{
    ticks = 0;
    atomic_store(&stopped_by_tick, false);
    fastcgi_conns_tick(&set, 1, stop_on_tick, &set);
    int fd = nginx_connect();
    ck_assert_ptr_null(fastcgi_conns_next(&set, NULL)); /* after read_seconds (1 s) */
    ck_assert(atomic_load(&stopped_by_tick));
    expect_closed(fd);
    close(fd);
}
END_TEST

static bool pending_seen_by_tick;

/* A stop signal that comes while a tick runs (multiwatch passing on the stop an idle
 * leader asked for): the tick sees it pending. */
static void stop_signal_on_tick(void *arg)
{
    (void)arg;
    kill(getpid(), SIGQUIT);
    pending_seen_by_tick = fastcgi_conns_stop_pending();
    fastcgi_conns_tick(&set, 0, NULL, NULL);
}

/* In a child of its own: the stop signal it catches stays caught for the process. */
static int stop_during_tick_child(void)
{
    if (fastcgi_conns_stop_pending())
        return 10; /* nothing has come yet */
    fastcgi_conns_catch_stop();
    fastcgi_conns_tick(&set, 1, stop_signal_on_tick, NULL);
    if (fastcgi_conns_next(&set, NULL) != NULL)
        return 11; /* the wait after the tick lets the signal through: the worker stops */
    if (!pending_seen_by_tick)
        return 12;
    return fastcgi_conns_stop_pending() ? 0 : 13;
}

START_TEST(a_stop_signal_during_a_tick_is_seen_there_and_stops_the_worker)
{
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0)
        _exit(stop_during_tick_child());
    int status = 0;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

Suite *fastcgi_conns_suite(void)
{
    Suite *s = suite_create("fastcgi_conns");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, a_kept_connection_carries_request_after_request);
    tcase_add_test(tc, a_new_connection_wakes_one_sleeping_worker);
    tcase_add_test(tc, an_idle_kept_connection_does_not_hold_the_worker);
    tcase_add_test(tc, a_connection_not_kept_is_closed_after_its_request);
    tcase_add_test(tc, a_connection_nginx_closed_is_dropped);
    tcase_add_test(tc, an_unread_body_is_drained_before_the_next_request);
    tcase_add_test(tc, what_is_no_fastcgi_request_loses_its_connection_only);
    tcase_add_test(tc, the_idle_descriptor_is_heard_while_waiting);
    tcase_add_test(tc, busy_tells_whether_a_request_may_be_waiting);
    tcase_add_test(tc, a_reply_is_whole_records_whatever_its_size);
    tcase_add_test(tc, a_reply_nobody_reads_closes_the_connection);
    tcase_add_test(tc, a_request_waiting_behind_a_slow_one_is_sent_back);
    tcase_add_test(tc, a_quick_request_sends_nothing_back);
    tcase_add_test(tc, a_stopping_worker_serves_what_it_holds_and_takes_no_more);
    tcase_add_test(tc, a_connection_taken_before_the_stop_has_its_request_served);
    tcase_add_test(tc, a_connection_that_sends_nothing_does_not_hold_the_stop);
    tcase_add_test(tc, a_stop_signal_during_a_tick_is_seen_there_and_stops_the_worker);
    suite_add_tcase(s, tc);
    return s;
}
