/* fastcgi_conns: the FastCGI connections one worker holds, and the next request among
 * them.
 *
 * nginx keeps FastCGI connections open between requests (`keepalive` in the upstream,
 * `fastcgi_keep_conn on`: nginx/market-fastcgi.conf). That saves a connect, an accept and
 * a close on both sides of every request, and the wake-ups that go with them: the
 * published mix runs about 40 % faster with it on this two-core machine (README).
 *
 * libfcgi serves one connection at a time and, left to accept by itself, would sit on an
 * idle kept connection while requests wait on others (or in the listen queue). So the
 * worker accepts for libfcgi, keeps every connection it accepted, and waits on all of
 * them and on the listening socket together: it serves whichever has a request, one
 * request at a time, taking the connections in turn. A connection nginx does not keep
 * (its request lacks FCGI_KEEP_CONN) is closed after its request, as before.
 *
 * The worker never closes a kept connection that nginx may reuse: only nginx does (its
 * upstream keepalive_timeout, or too many idle ones), so a request nginx sends on a kept
 * connection always finds the worker listening. The worker drops a connection only when
 * nginx closed it, or when what came on it is no FastCGI request. */
#ifndef MARKET_FASTCGI_CONNS_H
#define MARKET_FASTCGI_CONNS_H

#include <fcgiapp.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/uio.h>

/* Beyond this many connections a worker stops accepting and leaves new ones to the other
 * workers of the pool (nginx keeps at most `keepalive` idle ones per nginx process). */
#define FASTCGI_CONNS_MAX 128

/* What a worker does while it waits for a request: when fd(arg) (-1: nothing) is
 * readable, wake(arg) reads it. */
typedef struct {
    int (*fd)(void *arg);
    void (*wake)(void *arg);
    void *arg;
} fastcgi_idle;

typedef struct {
    int listener;          /* the pool's listening socket (standard input) */
    int read_seconds;      /* bound on each read and write of a connection */
    bool plain_close;      /* a Unix socket: close at once (see fastcgi_conns_finish) */
    int count;             /* connections held: requests[0 .. count-1] */
    int next;              /* where the turn continues among the last poll's answers */
    bool polled;           /* the last poll's answers are not all served yet: */
    short listener_events; /* the listener's */
    bool idle_ready;       /* the idle descriptor is readable */
    FCGX_Request requests[FASTCGI_CONNS_MAX];
    /* One per connection (their revents: the last poll's answers), then the listener,
     * then the idle descriptor. */
    struct pollfd fds[FASTCGI_CONNS_MAX + 2];
} fastcgi_conns;

/* Starts with no connection; the listener is made non-blocking (every worker of the pool
 * is woken for one connection, and those that lose the race must not wait in accept). */
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

#endif
