/* serve: the catalogue routes' way through a request (GET /v1/products, /v1/products/:id,
 * /v1/sellers/:id), beside main.c's dispatch of every other route.
 *
 * A catalogue answer depends on nothing but its statement and parameters, so a worker
 * keeps recent ones (the page cache, MARKET_PAGE_CACHE_MS) and reads the rest on the
 * replica when one is fit (MARKET_DB_READ), else pipelined with the key check on the
 * primary: one round trip. Whatever the source, the key is checked first (401, 429 win)
 * and its answer decides whether the page is used. */
#ifndef MARKET_SERVE_H
#define MARKET_SERVE_H

#include "request.h"
#include "routes.h"

/* At the worker's start: the page cache, the replica if configured, and LISTEN on the
 * channel market-admin's catalogue writes notify (sql/migrations/006_search.sql). */
void serve_init(worker *w);

/* What serve_init leaves until the worker has answered its first request (the page
 * cache's memory faulted in: ring_cache_touch). */
void serve_after_first_answer(worker *w);

/* Answers a request for a catalogue route (r->route->catalogue == route). */
void serve_catalogue(request *r, const catalogue_handler *route);

#endif
