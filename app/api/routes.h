/* routes: the API's route table, the one place a route is declared.
 *
 * In the spirit of Redis's command table and kcgi's declared inputs, each entry says
 * everything the worker checks before a handler runs: the method and path pattern (the
 * router, 404 and 405 with its Allow header), the scope (403), and the query parameters
 * the route accepts with a validator for each (400 parameter_unknown, _duplicated and
 * _invalid). The handler then reads valid input only, and checks what only it can: path
 * parameters that name a row, cursors, rules that tie two parameters together, bodies.
 * Route names (metrics, logs), cursor contexts and idempotency scopes come from here too. */
#ifndef MARKET_ROUTES_H
#define MARKET_ROUTES_H

#include "handlers.h"
#include "request.h"
#include "route.h"

/* A query parameter a route accepts. */
typedef struct {
    const char *name;
    bool (*valid)(const char *value); /* NULL: any value (the handler checks it) */
    const char *const *one_of;        /* or: the values allowed, NULL-terminated */
    const char *expects;              /* the 400's message when the value is refused */
} api_param;

/* The two halves of a catalogue route (handlers.h): planned before the key is known. */
typedef struct {
    bool (*plan)(request *r, catalogue_read *read);
    void (*render)(request *r, const catalogue_read *read, PGresult *res);
} catalogue_handler;

struct api_route {
    route_spec spec;            /* methods and path pattern (lib/route.h); must stay first */
    const char *name;           /* the route in metrics and logs: "products_list" */
    const char *scope;          /* the scope it needs; NULL: no API key (the download location) */
    const api_param *params;    /* accepted query parameters up to {NULL}; NULL: query not read */
    void (*handle)(request *r); /* a route that runs its own statements, or */
    const catalogue_handler *catalogue; /* a catalogue route: one statement, cacheable */
};

/* Fills in the pattern of the download location, the path of MARKET_DOWNLOAD_BASE_URL
 * ("/files": "/files/:token"; without a path there is no download location), and every
 * route's label. */
void routes_init(const char *files_prefix);

/* Finds the route of r's method and path: sets r->route, r->route_label and r->match on
 * ROUTE_FOUND and ROUTE_METHOD_NOT_ALLOWED (r->route stays NULL on ROUTE_NOT_FOUND). */
route_fault routes_find(request *r);

/* Reads the query string against r->route's declared parameters into r->input; answers
 * 400 and returns false on the first parameter that is unknown, given twice, malformed
 * or refused by its validator, in the order the table declares them. */
bool routes_read_query(request *r);

/* The routes, for metrics: routes_slot gives 0 for no route, i + 1 for the i-th. */
#define ROUTES_COUNT 15
const api_route *routes_at(size_t i);
size_t routes_slot(const api_route *route);

#endif
