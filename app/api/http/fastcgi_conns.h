/* fastcgi_conns: the FastCGI connections one worker holds, and the next request among
 * them.
 *
 * The worker accepts connections itself rather than through libfcgi's FCGX_Accept_r:
 * libfcgi's accept needed a timer around it (a peer that connects and stalls would hold
 * its blocking reads for good), two setitimer calls per request, and it polls each new
 * connection before reading it. Here a connection gets socket timeouts once, when it is
 * accepted, and libfcgi only reads the request on it.
 *
 * nginx keeps connections for further requests (FCGI_KEEP_CONN: `fastcgi_keep_conn on`
 * with `keepalive` in the upstream, for GET and HEAD: nginx/market-http.conf.template),
 * which spares a connect, an accept and a close on both sides of most requests (README,
 * "Kept connections after all"). libfcgi serves one
 * connection at a time and, left to itself, would sit on an idle kept connection while
 * requests wait on others. So the worker keeps every connection it accepted that asked
 * to be kept, and waits on all of them and on the listening socket together: it serves
 * whichever has a request, in turn. It never closes an idle kept connection, which nginx
 * may be reusing at that very moment. A connection that did not ask to be kept is closed
 * after its request. Workers sleep on the shared listening socket exclusively
 * (EPOLLEXCLUSIVE), so that a new connection wakes one of them, not every idle one.
 *
 * nginx picks a kept connection without knowing whether its worker is busy, so a request
 * may arrive on one while its worker serves another, slow one (a search, a statement
 * waiting on a lock), although another worker is idle. After FASTCGI_BOUNCE_MS of
 * serving, and as often again until the request ends, the worker shuts down every other
 * connection that carried a request before and has one waiting, unread. nginx sees a kept
 * connection fail before any answer and sends the request again on another connection (for a kept
 * connection it adds a try of its own; `fastcgi_next_upstream error` allows it), which an
 * idle worker takes. Only GET and HEAD travel on kept connections, since nginx never
 * sends a POST twice: other methods go to an upstream without `keepalive`, on
 * connections of their own. */
#ifndef MARKET_FASTCGI_CONNS_H
#define MARKET_FASTCGI_CONNS_H

#include <fcgiapp.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/uio.h>

/* Beyond this many connections a worker stops accepting and leaves new ones to the other
 * workers of the pool (nginx keeps at most `keepalive` idle ones per nginx process). */
#define FASTCGI_CONNS_MAX 128

/* How long a request waits behind another of the same worker before it is sent back to
 * nginx (longer than almost every request takes: see README, performance). */
#define FASTCGI_BOUNCE_MS 5

/* What a worker does while it waits for a request: when fd(arg) (-1: nothing) is
 * readable, wake(arg) reads it. */
typedef struct {
    int (*fd)(void *arg);
    void (*wake)(void *arg);
    void *arg;
} fastcgi_idle;

typedef struct {
    int listener; /* the pool's listening socket (standard input) */
    int epoll_fd; /* what the worker sleeps on (-1: poll instead, see wait_all) */
    bool listener_in_epoll;
    int idle_in_epoll;          /* the idle descriptor registered in epoll_fd, or -1 */
    int read_seconds;           /* bound on each read and write of a connection */
    bool plain_close;           /* a Unix socket: close at once (see fastcgi_conns_finish) */
    int count;                  /* connections held: requests[0 .. count-1] */
    int next;                   /* where the turn continues among the last poll's answers */
    bool polled;                /* the last poll's answers are not all served yet: */
    short listener_events;      /* the listener's */
    bool idle_ready;            /* the idle descriptor is readable */
    bool bounce_armed;          /* the bounce's timer runs */
    bool stopping;              /* see fastcgi_conns_stop */
    long long stop_deadline_ms; /* while stopping: the last moment to wait for a request */
    void (*tick)(void *arg);    /* see fastcgi_conns_tick */
    void *tick_arg;
    int tick_ms;
    long long next_tick_ms;
    FCGX_Request requests[FASTCGI_CONNS_MAX];
    /* Shut down by the bounce while a request was out: dropped once it is done. */
    bool sent_back[FASTCGI_CONNS_MAX];
    /* No request read on it yet (it may bring any method): never bounced. */
    bool fresh[FASTCGI_CONNS_MAX];
    /* One per connection (their revents: the last poll's answers), then the listener,
     * then the idle descriptor. */
    struct pollfd fds[FASTCGI_CONNS_MAX + 2];
} fastcgi_conns;

/* Starts with no connection. The listener is made non-blocking: a worker that was woken
 * for a connection another worker took must not wait in accept. Workers sleep on it
 * exclusively (EPOLLEXCLUSIVE), so a new connection wakes one sleeping worker, not all. */
void fastcgi_conns_init(fastcgi_conns *set, int listener, int read_seconds);

/* Waits until a connection has a request (running idle's wake meanwhile; idle may be
 * NULL) and reads its parameters (libfcgi's FCGX_Accept_r): the request to serve, or NULL
 * when the listening socket failed and the worker must end. */
FCGX_Request *fastcgi_conns_next(fastcgi_conns *set, const fastcgi_idle *idle);

/* Writes the whole answer of the request on fcgi, the n pieces of its standard output
 * one after another, and the end of the request, in one write where the socket takes it
 * (libfcgi would write its 8 KiB buffer at a time, so a page of 100 items took two
 * writes and often two wake-ups of nginx). Nothing else may be written on fcgi's
 * streams. False when the connection failed: it is then closed, not kept. */
bool fastcgi_conns_reply(FCGX_Request *fcgi, const struct iovec *pieces, int n);

/* Ends the request answered on fcgi: what is left of its body is read, its streams are
 * freed, and its connection is kept for the next request when nginx asked to keep it. */
void fastcgi_conns_finish(fastcgi_conns *set, FCGX_Request *fcgi);

/* True when a request may be waiting: a connection or the listener is readable now. */
bool fastcgi_conns_busy(fastcgi_conns *set);

/* Makes SIGTERM (systemd's), SIGQUIT and SIGUSR1 (multiwatch's: its default is SIGUSR1,
 * libfcgi's "stop after this request", and Debian's multiwatch 1.0.0 sends SIGQUIT for
 * --signal=TERM, the signal whose number is TERM's place in its table of names) a request
 * to stop that cuts nothing short: the signals stay blocked but during the worker's waits
 * for a request (epoll_pwait), so a request in progress is served to its end and a
 * waiting worker wakes at once. */
void fastcgi_conns_catch_stop(void);

/* True once a stop signal has arrived or waits to be let through (it is blocked outside
 * the waits): a tick that runs meanwhile must not act as if the pool went on. */
bool fastcgi_conns_stop_pending(void);

/* Stopping, after a stop signal or this call: fastcgi_conns_next takes no new connection from
 * the listening socket (they wait in its backlog for the pool's next start: systemd's
 * socket, or tools/stack's supervisor, holds it), serves the requests already sent on
 * the connections the worker holds, waits up to read_seconds for the request of a
 * connection accepted but not read yet (nginx writes it as it connects; it may be a
 * POST, which nginx never sends twice), closes every other connection (a kept one that
 * fails before any answer makes nginx send its GET or HEAD again on a new connection)
 * and then returns NULL: the worker ends. */
void fastcgi_conns_stop(fastcgi_conns *set);

/* While the worker waits for a request, tick(arg) runs every every_ms (as close as the
 * waits allow; never during a request): where the worker looks whether its pool is idle
 * (pool_idle.h). every_ms 0: never. */
void fastcgi_conns_tick(fastcgi_conns *set, int every_ms, void (*tick)(void *arg), void *arg);

#endif
