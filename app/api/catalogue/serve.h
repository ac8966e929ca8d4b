/* serve: the catalogue kind of route (GET /v1/products, /v1/products/:id,
 * /v1/sellers/:id): how its page is planned, cached, read and answered. pipeline.c runs
 * these steps in the order of checks every route shares.
 *
 * A catalogue answer depends on nothing but its statement and parameters, so a worker
 * keeps recent ones (the page cache, MARKET_PAGE_CACHE_MS) and reads the rest on the
 * replica when one is fit (MARKET_DB_READ), else pipelined with the key check on the
 * primary: one round trip. Whatever the source, the key is checked first (401, 429 win)
 * and its answer decides whether the page is used. */
#ifndef MARKET_SERVE_H
#define MARKET_SERVE_H

#include "auth.h"
#include "request.h"
#include "routes.h"

/* At the worker's start: the page cache, the replica if configured, and LISTEN on the
 * channel market-admin's catalogue writes notify (sql/migrations/006_search.sql). */
void serve_init(worker *w);

/* What serve_init leaves until the worker has answered its first request (the page
 * cache's memory faulted in: ring_cache_touch). */
void serve_after_first_answer(worker *w);

/* Where a catalogue page comes from: none yet (not planned, or the key has its share of
 * the workers), the worker's cache, the replica, or the primary with the key's statement. */
typedef enum { PAGE_NONE, PAGE_CACHED, PAGE_REPLICA, PAGE_PRIMARY } page_source;

/* One catalogue request's page, from its plan to its answer (pipeline.c runs the steps).
 * Its results belong to the request (request_keep). */
typedef struct {
    const catalogue_handler *route;
    bool planned;        /* the inputs passed and the statement is named in read */
    catalogue_read read; /* the statement and its parameters */
    page_source source;  /* where the page comes from */
    const char *cached;  /* PAGE_CACHED: the cached answer, cached_len bytes */
    size_t cached_len;
    db *reader;             /* PAGE_REPLICA: the replica it was sent to */
    db_result *res;         /* the primary's page, read with the key's statement */
    db_result *replica_res; /* the replica's page; NULL when the replica failed */
    long long now;          /* clock_ms() at the plan: the cache's clock */
} serve_page;

void serve_page_init(serve_page *page, const catalogue_handler *route);

/* Reads the route's declared inputs and plans its statement (answering a refusal: 400,
 * 404), then picks the page's source and sends it to the replica when that is the one.
 * Runs between the key's two halves (r->caller.mode is known). */
void serve_page_plan(request *r, serve_page *page);

/* The key's second half (auth_finish: 401, 429, 503), its statement carrying the page
 * when the primary reads it (page NULL for the other routes); the replica's page is read
 * here too, whatever the key's verdict, since its answer must be read. */
bool serve_key_finish(request *r, auth_query *q, serve_page *page);

/* Answers a planned page whose key and scope passed: from the cache unless a catalogue
 * write was notified, else the page read, rendered and cached. */
void serve_page_answer(request *r, serve_page *page);

#endif
