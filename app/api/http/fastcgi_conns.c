/* fastcgi_conns: the worker's own accept and wait over its kept FastCGI connections
 * (fastcgi_conns.h), apart from fastcgi.c's libfcgi reading and writing, so that the
 * waiting and the stop signals are unit tested without nginx. */
#include "fastcgi_conns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

/* libfcgi closes a connection gracefully: shutdown, then it waits for the web server to
 * close its side and reads until then, so that unread input cannot turn the close into a
 * reset that cuts the response short. On a Unix socket, once the request's input is read
 * to its end, a plain close loses nothing, so the worker closes at once and takes the
 * next request without waiting for nginx (FCGX_Detach makes libfcgi's close plain). */
static bool listens_on_unix_socket(int listener)
{
    struct sockaddr_storage addr = {0};
    socklen_t len = sizeof addr;
    return getsockname(listener, (struct sockaddr *)&addr, &len) == 0 && addr.ss_family == AF_UNIX;
}

/* The bounce runs on a thread of its own (a SIGEV_THREAD timer), never as a signal in the
 * worker's thread: a signal would cut short the worker's waits, sleeps and socket reads
 * with a timeout, which are not restarted (signal(7)). bounce_lock guards what the two
 * share: the set whose request is out (between fastcgi_conns_next and
 * fastcgi_conns_finish, while the worker's thread leaves the set alone), that request's
 * index, and the sent_back marks. */
static pthread_mutex_t bounce_lock = PTHREAD_MUTEX_INITIALIZER;
static fastcgi_conns *serving_set;
static int serving_index;
static timer_t bounce_timer;
static bool bounce_timer_made;

/* Every FASTCGI_BOUNCE_MS while a request is out: each other connection that carried a
 * request before (only GET and HEAD come on those) and has input waiting is shut down,
 * unread; the worker forgets it once the request is done. A connection never read yet may
 * bring a POST, which nginx would not send again: it waits its turn. */
static void bounce_waiting(union sigval unused)
{
    (void)unused;
    pthread_mutex_lock(&bounce_lock);
    fastcgi_conns *set = serving_set;
    for (int i = 0; set != NULL && i < set->count; i++) {
        int fd = set->requests[i].ipcFd;
        if (i == serving_index || fd < 0 || set->fresh[i] || set->sent_back[i])
            continue;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0) {
            shutdown(fd, SHUT_RDWR);
            set->sent_back[i] = true;
        }
    }
    pthread_mutex_unlock(&bounce_lock);
}

/* True when a connection other than index has carried a request: one that nginx may
 * reuse, and so one a request may wait on. */
static bool others_reused(const fastcgi_conns *set, int index)
{
    for (int i = 0; i < set->count; i++)
        if (i != index && !set->fresh[i])
            return true;
    return false;
}

/* Arms the bounce while the request at index is out, when there is anything to bounce;
 * disarms it with index -1. */
static void bounce_while_serving(fastcgi_conns *set, int index)
{
    bool arm = bounce_timer_made && index >= 0 && others_reused(set, index);
    if (!arm && !set->bounce_armed)
        return;
    long ns = FASTCGI_BOUNCE_MS * 1000000L;
    struct itimerspec every = {.it_interval = {.tv_nsec = ns}, .it_value = {.tv_nsec = ns}};
    struct itimerspec off = {0};
    if (!arm)
        timer_settime(bounce_timer, 0, &off, NULL);
    pthread_mutex_lock(&bounce_lock);
    serving_set = arm ? set : NULL;
    serving_index = index;
    pthread_mutex_unlock(&bounce_lock);
    if (arm)
        timer_settime(bounce_timer, 0, &every, NULL);
    set->bounce_armed = arm;
}

/* A stop signal (SIGTERM, SIGQUIT, SIGUSR1): set by the handler, seen by the worker's
 * thread after its wait. The signals are blocked outside the waits, which unblock them with
 * wait_mask (epoll_pwait, ppoll): no request is cut short, and a signal that comes just before a
 * wait ends that wait at once rather than after it. */
static volatile sig_atomic_t stop_arrived;
static sigset_t wait_mask;
static bool wait_mask_set;

static void on_stop(int sig)
{
    (void)sig;
    stop_arrived = 1;
}

static const int stop_signals[] = {SIGTERM, SIGQUIT, SIGUSR1};
#define STOP_SIGNALS (sizeof stop_signals / sizeof stop_signals[0])

void fastcgi_conns_catch_stop(void)
{
    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    sigset_t stop;
    sigemptyset(&stop);
    for (size_t i = 0; i < STOP_SIGNALS; i++)
        sigaddset(&stop, stop_signals[i]);
    bool ok = sigprocmask(SIG_BLOCK, &stop, &wait_mask) == 0;
    for (size_t i = 0; ok && i < STOP_SIGNALS; i++)
        ok = sigaction(stop_signals[i], &sa, NULL) == 0;
    if (!ok) {
        log_error("cannot catch the stop signals: %s; a stop cuts the request in progress short",
                  strerror(errno));
        return;
    }
    for (size_t i = 0; i < STOP_SIGNALS; i++)
        sigdelset(&wait_mask, stop_signals[i]);
    wait_mask_set = true;
}

bool fastcgi_conns_stop_pending(void)
{
    if (stop_arrived)
        return true;
    sigset_t pending;
    if (sigpending(&pending) != 0)
        return false;
    for (size_t i = 0; i < STOP_SIGNALS; i++)
        if (sigismember(&pending, stop_signals[i]) == 1)
            return true;
    return false;
}

void fastcgi_conns_stop(fastcgi_conns *set)
{
    set->stopping = true;
}

void fastcgi_conns_tick(fastcgi_conns *set, int every_ms, void (*tick)(void *arg), void *arg)
{
    set->tick = every_ms > 0 ? tick : NULL;
    set->tick_arg = arg;
    set->tick_ms = every_ms;
    set->next_tick_ms = clock_ms() + every_ms;
}

void fastcgi_conns_init(fastcgi_conns *set, int listener, int read_seconds)
{
    if (!bounce_timer_made) {
        struct sigevent on_expiry = {.sigev_notify = SIGEV_THREAD,
                                     .sigev_notify_function = bounce_waiting};
        bounce_timer_made = timer_create(CLOCK_MONOTONIC, &on_expiry, &bounce_timer) == 0;
        if (!bounce_timer_made)
            log_error("timer_create failed: %s; requests may wait behind slow ones",
                      strerror(errno));
    }
    memset(set, 0, sizeof *set);
    set->listener = listener;
    set->idle_in_epoll = -1;
    set->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (set->epoll_fd < 0)
        log_error("epoll_create1 failed: %s; every idle worker wakes for each connection",
                  strerror(errno));
    set->read_seconds = read_seconds;
    set->plain_close = listens_on_unix_socket(listener);
    int flags = fcntl(listener, F_GETFL);
    if (flags >= 0)
        fcntl(listener, F_SETFL, flags | O_NONBLOCK);
}

/* libfcgi's peer check for TCP pools, which its own accept made: when
 * FCGI_WEB_SERVER_ADDRS is set, only the addresses it lists (comma-separated) may talk to
 * the pool; the others are closed unanswered. */
static bool peer_allowed(const struct sockaddr_storage *peer)
{
    const char *allowed = getenv("FCGI_WEB_SERVER_ADDRS");
    if (allowed == NULL || (peer->ss_family != AF_INET && peer->ss_family != AF_INET6))
        return true;
    char text[INET6_ADDRSTRLEN];
    const void *addr = peer->ss_family == AF_INET
                           ? (const void *)&((const struct sockaddr_in *)peer)->sin_addr
                           : (const void *)&((const struct sockaddr_in6 *)peer)->sin6_addr;
    if (inet_ntop(peer->ss_family, addr, text, sizeof text) == NULL)
        return false;
    size_t len = strlen(text);
    for (const char *p = allowed; *p != '\0';) {
        size_t item = strcspn(p, ",");
        if (item == len && memcmp(p, text, len) == 0)
            return true;
        p += item + (p[item] == ',');
    }
    return false;
}

/* A connection the worker accepted: its reads and writes bounded (nginx writes a request
 * at once, so only a stalled or hostile peer waits that long), and a request of its own
 * for libfcgi. Its listen_sock is -1, so that libfcgi, when it drops the connection
 * after a bad record, cannot accept one by itself: it returns to the worker instead. */
static void conn_add(fastcgi_conns *set, int fd, int family)
{
    struct timeval bound = {.tv_sec = set->read_seconds};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound);
    if (family == AF_INET || family == AF_INET6) {
        int on = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    }
    FCGX_Request *fcgi = &set->requests[set->count];
    FCGX_InitRequest(fcgi, -1, 0);
    set->sent_back[set->count] = false;
    set->fresh[set->count] = true;
    fcgi->ipcFd = fd;
    /* Not closed by the FCGX_Finish_r that FCGX_Accept_r begins with; the request's
     * FCGI_BEGIN_REQUEST record then says whether nginx keeps the connection. */
    fcgi->keepConnection = 1;
    /* nginx writes the request as soon as it has connected: worth a read at once. */
    set->fds[set->count] = (struct pollfd){.fd = fd, .events = POLLIN, .revents = POLLIN};
    set->count++;
    if (set->epoll_fd >= 0) {
        struct epoll_event in = {.events = EPOLLIN, .data.fd = fd};
        epoll_ctl(set->epoll_fd, EPOLL_CTL_ADD, fd, &in);
    }
}

/* Takes one waiting connection off the listening socket, if this worker wins it; false
 * only when the listening socket itself failed. */
static bool accept_one(fastcgi_conns *set)
{
    struct sockaddr_storage peer = {0};
    socklen_t len = sizeof peer;
    int fd = accept4(set->listener, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC);
    if (fd < 0) {
        switch (errno) {
        case EBADF:
        case EINVAL:
        case ENOTSOCK:
        case EOPNOTSUPP:
            log_error("the FastCGI listening socket failed: %s", strerror(errno));
            return false;
        default: /* another worker took it, the peer left, or no file left for now */
            return true;
        }
    }
    if (!peer_allowed(&peer)) {
        close(fd);
        return true;
    }
    conn_add(set, fd, peer.ss_family);
    return true;
}

/* Forgets connection i, closing it unless libfcgi closed it already. fds[] and
 * requests[] stay side by side: the last one moves into its place (no request is in
 * progress on either, so libfcgi holds no pointer to them). */
static void conn_drop(fastcgi_conns *set, int i)
{
    FCGX_Request *fcgi = &set->requests[i];
    if (fcgi->ipcFd >= 0) {
        FCGX_Free(fcgi, 0);
        if (set->epoll_fd >= 0)
            epoll_ctl(set->epoll_fd, EPOLL_CTL_DEL, fcgi->ipcFd, NULL);
        close(fcgi->ipcFd);
    } /* else libfcgi closed it, which took it out of epoll_fd */
    int last = set->count - 1;
    if (i != last) {
        set->requests[i] = set->requests[last];
        set->fds[i] = set->fds[last];
        set->sent_back[i] = set->sent_back[last];
        set->fresh[i] = set->fresh[last];
    }
    set->count--;
    if (set->next > set->count)
        set->next = 0;
}

/* The listener is in epoll_fd while the worker may take another connection. It is added
 * with EPOLLEXCLUSIVE, which a change cannot keep (EPOLL_CTL_MOD refuses it): taken out
 * and put back instead. */
static void epoll_sync_listener(fastcgi_conns *set)
{
    bool wanted = set->count < FASTCGI_CONNS_MAX;
    if (wanted == set->listener_in_epoll)
        return;
    struct epoll_event in = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.fd = set->listener};
    if (epoll_ctl(set->epoll_fd, wanted ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, set->listener, &in) == 0)
        set->listener_in_epoll = wanted;
}

/* The idle descriptor may change, or be closed and its number given to a new one (a
 * database reconnect), which takes it out of epoll_fd unseen: modified each time, and
 * added again when it is not there. */
static void epoll_sync_idle(fastcgi_conns *set, int idle_fd)
{
    if (set->idle_in_epoll >= 0 && set->idle_in_epoll != idle_fd)
        epoll_ctl(set->epoll_fd, EPOLL_CTL_DEL, set->idle_in_epoll, NULL);
    set->idle_in_epoll = -1;
    if (idle_fd < 0)
        return;
    struct epoll_event in = {.events = EPOLLIN, .data.fd = idle_fd};
    if (epoll_ctl(set->epoll_fd, EPOLL_CTL_MOD, idle_fd, &in) == 0 ||
        (errno == ENOENT && epoll_ctl(set->epoll_fd, EPOLL_CTL_ADD, idle_fd, &in) == 0))
        set->idle_in_epoll = idle_fd;
}

/* poll_all's sleep. poll(2) on the listening socket wakes every worker of the pool that
 * waits on it for one new connection; all but one then find nothing to accept. On a
 * virtual machine each such wake-up interrupts a halted CPU, a cost paid for every new
 * connection by every idle worker (README, performance). epoll with EPOLLEXCLUSIVE wakes
 * one. */
static void wait_all(fastcgi_conns *set, int idle_fd, int timeout_ms)
{
    epoll_sync_listener(set);
    epoll_sync_idle(set, idle_fd);
    struct epoll_event events[FASTCGI_CONNS_MAX + 2];
    int ready = epoll_pwait(set->epoll_fd, events, FASTCGI_CONNS_MAX + 2, timeout_ms,
                            wait_mask_set ? &wait_mask : NULL);
    for (int i = 0; i < set->count; i++)
        set->fds[i] = (struct pollfd){.fd = set->requests[i].ipcFd, .events = POLLIN};
    set->polled = ready > 0;
    set->listener_events = 0;
    set->idle_ready = false;
    for (int k = 0; k < ready; k++) {
        int fd = events[k].data.fd;
        /* EPOLLIN, EPOLLERR and EPOLLHUP are POLLIN, POLLERR and POLLHUP. */
        short revents = (short)(events[k].events & (EPOLLIN | EPOLLERR | EPOLLHUP));
        if (fd == set->listener)
            set->listener_events = revents;
        else if (fd == idle_fd)
            set->idle_ready = true;
        else
            for (int i = 0; i < set->count; i++)
                if (set->fds[i].fd == fd)
                    set->fds[i].revents = revents;
    }
}

/* poll(2), with the stop signals let through while it waits (see wait_mask). */
static int poll_masked(struct pollfd *fds, nfds_t n, int timeout_ms)
{
    if (timeout_ms == 0 || !wait_mask_set)
        return poll(fds, n, timeout_ms);
    struct timespec t = {.tv_sec = timeout_ms / 1000, .tv_nsec = (timeout_ms % 1000) * 1000000L};
    return ppoll(fds, n, timeout_ms < 0 ? NULL : &t, &wait_mask);
}

/* Waits (timeout as poll(2) takes it) on every connection, on the listener unless the
 * worker holds all the connections it may, and on idle_fd when it is not -1. What the
 * listener and idle_fd answered is kept apart from the connections' answers, which
 * take_ready serves in turn. A look without waiting (timeout 0) polls, which wakes no
 * one and sees the listener as it is, whichever worker epoll would have woken. */
static void poll_all(fastcgi_conns *set, int idle_fd, int timeout_ms)
{
    if (timeout_ms != 0 && set->epoll_fd >= 0) {
        wait_all(set, idle_fd, timeout_ms);
        return;
    }
    for (int i = 0; i < set->count; i++)
        set->fds[i] = (struct pollfd){.fd = set->requests[i].ipcFd, .events = POLLIN};
    struct pollfd *listener = &set->fds[set->count];
    struct pollfd *idle = &set->fds[set->count + 1];
    *listener =
        (struct pollfd){.fd = set->listener, .events = set->count < FASTCGI_CONNS_MAX ? POLLIN : 0};
    *idle = (struct pollfd){.fd = idle_fd, .events = POLLIN};
    int ready = poll_masked(set->fds, (nfds_t)set->count + (idle_fd >= 0 ? 2 : 1), timeout_ms);
    set->polled = ready > 0;
    set->listener_events = ready > 0 ? listener->revents : 0;
    set->idle_ready = ready > 0 && idle_fd >= 0 && idle->revents != 0;
}

/* The next connection with something to read, in turn after the last one served; -1
 * when the last poll's answers are used up. */
static int take_ready(fastcgi_conns *set)
{
    for (int k = 0; k < set->count; k++) {
        int i = (set->next + k) % set->count;
        if (set->fds[i].revents != 0) {
            set->fds[i].revents = 0;
            set->next = i + 1;
            return i;
        }
    }
    return -1;
}

/* Reads the request waiting on connection i: the request, or NULL when there was none
 * (nothing to read yet; or nginx closed the connection, or sent something libfcgi
 * refused, and the connection is gone). */
static FCGX_Request *conn_read(fastcgi_conns *set, int i)
{
    FCGX_Request *fcgi = &set->requests[i];
    char byte;
    ssize_t n = recv(fcgi->ipcFd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return NULL; /* woken for nothing: it stays */
    if (n <= 0) {    /* closed by nginx (its keepalive_timeout, or too many idle) */
        conn_drop(set, i);
        return NULL;
    }
    if (FCGX_Accept_r(fcgi) < 0) {
        conn_drop(set, i); /* libfcgi closed it already */
        return NULL;
    }
    return fcgi;
}

/* The request read on connection i is out: the bounce watches the others meanwhile. */
static FCGX_Request *hand_out(fastcgi_conns *set, FCGX_Request *fcgi)
{
    int index = (int)(fcgi - set->requests);
    bounce_while_serving(set, index);
    set->fresh[index] = false; /* what comes next on it is a reuse */
    return fcgi;
}

/* How long the next wait may last: until the tick is due, or for good. */
static int wait_timeout(const fastcgi_conns *set)
{
    if (set->tick == NULL)
        return -1;
    long long left = set->next_tick_ms - clock_ms();
    return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

static void tick_if_due(fastcgi_conns *set)
{
    if (set->tick == NULL)
        return; /* no clock read before a wait when there is nothing to tick */
    long long now = clock_ms();
    if (now < set->next_tick_ms)
        return;
    set->next_tick_ms = now + set->tick_ms;
    set->tick(set->tick_arg);
}

/* One look at the connections while stopping, waiting up to timeout_ms: the first that
 * has a request, else NULL after closing the kept connections that have none (a fresh
 * one too once the deadline has passed). */
static FCGX_Request *stopping_look(fastcgi_conns *set, int timeout_ms, bool past_deadline)
{
    for (int i = 0; i < set->count; i++)
        set->fds[i] = (struct pollfd){.fd = set->requests[i].ipcFd, .events = POLLIN};
    if (poll(set->fds, (nfds_t)set->count, timeout_ms) < 0)
        return NULL; /* a signal: look again */
    for (int i = set->count - 1; i >= 0; i--) {
        FCGX_Request *fcgi = set->fds[i].revents != 0 ? conn_read(set, i) : NULL;
        if (fcgi != NULL)
            return hand_out(set, fcgi);
    }
    for (int i = set->count - 1; i >= 0; i--)
        if (set->fds[i].revents == 0 && (!set->fresh[i] || past_deadline))
            conn_drop(set, i);
    return NULL;
}

/* fastcgi_conns_next while stopping (fastcgi_conns_stop). */
static FCGX_Request *next_while_stopping(fastcgi_conns *set)
{
    if (set->listener_in_epoll && epoll_ctl(set->epoll_fd, EPOLL_CTL_DEL, set->listener, NULL) == 0)
        set->listener_in_epoll = false;
    set->polled = false;
    set->listener_events = 0;
    if (set->stop_deadline_ms == 0)
        set->stop_deadline_ms = clock_ms() + set->read_seconds * 1000LL;
    while (set->count > 0) {
        long long left = set->stop_deadline_ms - clock_ms();
        bool fresh = false;
        for (int i = 0; i < set->count && !fresh; i++)
            fresh = set->fresh[i];
        int timeout = fresh && left > 0 ? (int)left : 0;
        FCGX_Request *fcgi = stopping_look(set, timeout, left <= 0);
        if (fcgi != NULL)
            return fcgi;
    }
    return NULL;
}

FCGX_Request *fastcgi_conns_next(fastcgi_conns *set, const fastcgi_idle *idle)
{
    for (;;) {
        if (stop_arrived)
            set->stopping = true;
        if (set->stopping)
            return next_while_stopping(set);
        if (!set->polled) {
            tick_if_due(set);
            if (set->stopping)
                continue;
            poll_all(set, idle != NULL ? idle->fd(idle->arg) : -1, wait_timeout(set));
        }
        if (!set->polled)
            continue; /* interrupted by a signal, or the tick is due */
        if (set->idle_ready && idle != NULL) {
            set->idle_ready = false;
            idle->wake(idle->arg);
        }
        short listener = set->listener_events;
        set->listener_events = 0;
        if ((listener & (POLLERR | POLLNVAL)) != 0) {
            log_error("the FastCGI listening socket failed");
            return NULL;
        }
        if (listener != 0 && !accept_one(set))
            return NULL;
        int i = take_ready(set);
        if (i < 0) {
            set->polled = false;
            continue;
        }
        FCGX_Request *fcgi = conn_read(set, i);
        if (fcgi != NULL)
            return hand_out(set, fcgi);
    }
}

/* FastCGI records (the specification, section 3.3): an 8-byte header before each. */
enum { FCGI_VERSION_1 = 1, FCGI_END_REQUEST = 3, FCGI_STDOUT = 6 };
#define RECORD_MAX 65535 /* the content length is 16 bits */
#define REPLY_IOVS 64    /* 8 records of 64 KiB per writev, about 3 pieces each */

static void record_header(unsigned char h[8], int type, int request_id, size_t len)
{
    h[0] = FCGI_VERSION_1;
    h[1] = (unsigned char)type;
    h[2] = (unsigned char)(request_id >> 8);
    h[3] = (unsigned char)request_id;
    h[4] = (unsigned char)(len >> 8);
    h[5] = (unsigned char)len;
    h[6] = 0; /* no padding: it is optional */
    h[7] = 0;
}

/* Writes all of iov[0..n-1], a partial write continued where it stopped. */
static bool write_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t done = writev(fd, iov, n);
        if (done < 0 && errno == EINTR)
            continue;
        if (done <= 0)
            return false;
        while (n > 0 && (size_t)done >= iov->iov_len) {
            done -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + done;
            iov->iov_len -= (size_t)done;
        }
    }
    return true;
}

bool fastcgi_conns_reply(FCGX_Request *fcgi, const struct iovec *pieces, int n)
{
    /* Standard output in records of at most RECORD_MAX bytes, each a header and the
     * slices of the pieces it holds; then an empty record (the end of standard output)
     * and FCGI_END_REQUEST, status 0 and FCGI_REQUEST_COMPLETE (0). */
    static unsigned char headers[REPLY_IOVS][8];
    struct iovec iov[REPLY_IOVS + 2];
    int used = 0, nheaders = 0;
    bool ok = true;
    size_t offset = 0; /* into pieces[piece] */
    int piece = 0;
    while (piece < n && pieces[piece].iov_len == 0)
        piece++;
    while (ok && piece < n) {
        /* Room for a header and at least one slice, else out with what is gathered. */
        if (used + 2 > REPLY_IOVS) {
            ok = write_all(fcgi->ipcFd, iov, used);
            used = nheaders = 0;
            continue;
        }
        int at_header = used++;
        size_t len = 0;
        while (piece < n && len < RECORD_MAX && used < REPLY_IOVS) {
            size_t take = pieces[piece].iov_len - offset;
            if (take > RECORD_MAX - len)
                take = RECORD_MAX - len;
            iov[used++] = (struct iovec){(char *)pieces[piece].iov_base + offset, take};
            len += take;
            offset += take;
            if (offset == pieces[piece].iov_len) {
                offset = 0;
                piece++;
                while (piece < n && pieces[piece].iov_len == 0)
                    piece++;
            }
        }
        record_header(headers[nheaders], FCGI_STDOUT, fcgi->requestId, len);
        iov[at_header] = (struct iovec){headers[nheaders++], 8};
    }
    /* The last two headers, then FCGI_END_REQUEST's body: appStatus 0 (4 bytes),
     * FCGI_REQUEST_COMPLETE (0) and 3 reserved bytes. */
    static unsigned char end[24];
    record_header(end, FCGI_STDOUT, fcgi->requestId, 0);
    record_header(end + 8, FCGI_END_REQUEST, fcgi->requestId, 8);
    iov[used++] = (struct iovec){end, sizeof end};
    ok = ok && write_all(fcgi->ipcFd, iov, used);
    /* libfcgi must write nothing more on this request: its closing of standard output
     * (FCGX_Finish_r) is done already. */
    fcgi->out->wasFCloseCalled = 1;
    fcgi->out->isClosed = 1;
    if (!ok)
        fcgi->keepConnection = 0;
    return ok;
}

/* Reads what is left of the request body (nginx bounds it), so that nothing is unread
 * when the connection closes or carries the next request; false if it did not end. */
static bool drain_input(FCGX_Request *fcgi)
{
    char scratch[4096];
    for (int i = 0; i < 64; i++) {
        if (FCGX_GetStr(scratch, sizeof scratch, fcgi->in) < (int)sizeof scratch)
            return FCGX_GetError(fcgi->in) == 0;
    }
    return false;
}

void fastcgi_conns_finish(fastcgi_conns *set, FCGX_Request *fcgi)
{
    bounce_while_serving(set, -1);
    if (!drain_input(fcgi))
        fcgi->keepConnection = 0; /* what is left of it cannot be told from a request */
    else if (set->plain_close && !fcgi->keepConnection)
        FCGX_Detach(fcgi);
    FCGX_Finish_r(fcgi);
    if (fcgi->ipcFd < 0)
        conn_drop(set, (int)(fcgi - set->requests));
    /* What was sent back while it was out: nginx has given up those connections. */
    for (int i = set->count - 1; i >= 0; i--)
        if (set->sent_back[i])
            conn_drop(set, i);
}

bool fastcgi_conns_busy(fastcgi_conns *set)
{
    if (set->polled) {
        if (set->listener_events != 0)
            return true;
        for (int i = 0; i < set->count; i++)
            if (set->fds[i].revents != 0)
                return true;
    }
    poll_all(set, -1, 0);
    return set->polled;
}
