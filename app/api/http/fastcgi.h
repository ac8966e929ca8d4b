/* fastcgi: the worker's side of FastCGI (libfcgi), so that main.c reads as the loop.
 *
 * A worker takes the next request from a new connection on the pool's listening socket
 * (standard input, as spawn-fcgi and systemd hand it over), or from a connection the web
 * server kept (fastcgi_conns.h), reads the request's parameters into a request and writes
 * the response back. Every read and write is bounded in time: only a stalled or hostile
 * peer ever waits, and never for long. */
#ifndef MARKET_FASTCGI_H
#define MARKET_FASTCGI_H

#include <fcgiapp.h>
#include <stdbool.h>

#include "buf.h"
#include "fastcgi_conns.h"
#include "request.h"

typedef struct {
    fastcgi_conns conns;
    FCGX_Request *fcgi; /* the request being served, on one of conns */
} fastcgi_server;

/* libfcgi started on standard input; false (logged) when it cannot be. */
bool fastcgi_init(fastcgi_server *c);

/* True when a request may already be waiting (on a held connection or a new one). */
bool fastcgi_waiting(fastcgi_server *c);

/* Waits for the next request (running idle's wake meanwhile, idle may be NULL) and reads
 * its parameters; false when the listening socket failed or the worker stops (it ends). */
bool fastcgi_accept(fastcgi_server *c, const fastcgi_idle *idle);

/* The connection's descriptor: its hang-up cancels the request's statement (db_watch). */
int fastcgi_fd(const fastcgi_server *c);

/* Fills r from the FastCGI parameters: method, path, query, headers, request id. */
void fastcgi_read_request(fastcgi_server *c, request *r);

/* Writes r's status, headers and body (none for HEAD). head is the caller's buffer,
 * reused by every request. */
void fastcgi_write_response(fastcgi_server *c, const request *r, buf *head);

/* Ends the request; its connection stays for the next one when nginx keeps it. */
void fastcgi_finish(fastcgi_server *c);

/* SIGTERM, SIGQUIT or SIGUSR1 then stops the worker once what it holds is served
 * (fastcgi_conns_catch_stop, fastcgi_conns_stop): fastcgi_accept returns false. */
void fastcgi_catch_stop(void);

/* True once a stop signal has come, served or not yet (fastcgi_conns_stop_pending). */
bool fastcgi_stop_pending(void);

/* Runs tick(arg) every every_ms while the worker waits for a request (0: never). */
void fastcgi_tick(fastcgi_server *c, int every_ms, void (*tick)(void *arg), void *arg);

#endif
