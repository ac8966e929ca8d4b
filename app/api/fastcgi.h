/* fastcgi: the worker's side of FastCGI (libfcgi), so that main.c reads as the loop.
 *
 * A worker takes one connection from the pool's listening socket (standard input, as
 * spawn-fcgi and systemd hand it over), reads the request's parameters into a request,
 * writes the response back and closes. Every read and write is bounded in time: only a
 * stalled or hostile peer ever waits, and never for long. */
#ifndef MARKET_FASTCGI_H
#define MARKET_FASTCGI_H

#include <fcgiapp.h>
#include <stdbool.h>

#include "buf.h"
#include "request.h"

typedef struct {
    FCGX_Request fcgi;
    bool plain_close; /* a Unix socket: close at once once the input is read */
} fastcgi_conn;

/* libfcgi started on standard input; false (logged) when it cannot be. */
bool fastcgi_init(fastcgi_conn *c);

/* True when a connection is already waiting on the listening socket. */
bool fastcgi_waiting(void);

/* What a worker does while it waits for a connection: when fd(arg) (-1: nothing) is
 * readable, wake(arg) reads it. */
typedef struct {
    int (*fd)(void *arg);
    void (*wake)(void *arg);
    void *arg;
} fastcgi_idle;

/* Waits for the next connection (running idle's wake meanwhile, idle may be NULL) and
 * reads its parameters; false when the listening socket failed (the worker ends). */
bool fastcgi_accept(fastcgi_conn *c, const fastcgi_idle *idle);

/* The connection's descriptor: its hang-up cancels the request's statement (db_watch). */
int fastcgi_fd(const fastcgi_conn *c);

/* Fills r from the FastCGI parameters: method, path, query, headers, request id. */
void fastcgi_read_request(fastcgi_conn *c, request *r);

/* Writes r's status, headers and body (none for HEAD). head is the caller's buffer,
 * reused by every request. */
void fastcgi_write_response(fastcgi_conn *c, const request *r, buf *head);

/* Ends the request and its connection. */
void fastcgi_finish(fastcgi_conn *c);

#endif
