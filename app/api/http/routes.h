/* routes: the worker's route table, the one place a route and its inputs are declared.
 *
 * In the spirit of Redis's command table and kcgi's declared inputs, each entry says
 * everything the worker checks before a handler runs, in the order a request reads top to
 * bottom: the method and path pattern (the router, 404 and 405 with its Allow header, one
 * place for every route), the MARKET_OPS mark of the operational routes, the scope (403),
 * then its inputs (400, 413, 415): its query parameters, its path parameter and its JSON
 * body fields, each declared once with its type (app/api/http/input.h) and converted into r->in.
 * The handler then reads typed values only, and checks what only it can: a path
 * parameter that must name a row, a cursor, the rules that tie two inputs together.
 * Route names (metrics, logs), cursor contexts and idempotency scopes come from here too. */
#ifndef MARKET_ROUTES_H
#define MARKET_ROUTES_H

#include "handlers.h"
#include "request.h"
#include "route.h"

/* A route's path parameter (":id"): decoded into r->in.id, at most max bytes (400
 * parameter_invalid); a value `valid` refuses names nothing: 404 resource_missing "no such
 * <what>". valid NULL: the handler looks the row up by whatever id it is given. */
typedef struct {
    size_t max;
    bool (*valid)(const char *value);
    const char *what;
} api_path;

/* The two halves of a catalogue route (handlers.h): planned before the key is known. */
typedef struct {
    bool (*plan)(request *r, catalogue_read *read);
    void (*render)(request *r, const catalogue_read *read, db_result *res);
} catalogue_handler;

struct api_route {
    route_spec spec;  /* methods and path pattern (app/api/http/route.h); must stay first */
    const char *name; /* the route in metrics and logs: "products_list" */
    /* An operational route (/healthz, /metrics): found only for a request nginx marked
     * with this MARKET_OPS value; no key, not counted, not logged (ops.h). */
    const char *ops;
    /* The extension it belongs to (CONFIG_EXT_*, docs/contract.md section 13), 0 for the
     * specification's routes: off unless MARKET_API_EXTENSIONS names it. */
    unsigned extension;
    const char *scope;          /* the scope it needs; NULL: no API key */
    const input_spec *query;    /* query parameters, up to {NULL}; NULL: query not read */
    const api_path *path;       /* NULL: the path parameter is not read (the download token) */
    const input_spec *body;     /* JSON body fields, up to {NULL}; NULL: body not read */
    void (*handle)(request *r); /* a route that runs its own statements, or */
    const catalogue_handler *catalogue; /* a catalogue route: one statement, cacheable */
};

/* Switches off the routes of every extension cfg does not turn on, fills in the pattern
 * of the download location, the path of MARKET_DOWNLOAD_BASE_URL
 * ("/files": "/files/:token"; without a path there is no download location), the
 * defaults that are settings (expires_in, expire_old_in) and every route's label. Each
 * call starts again from the table as declared (the unit tests try several settings). */
void routes_init(const char *files_prefix, const market_config *cfg);

/* Finds the route of r's method and path: sets r->route, r->route_label and r->match on
 * ROUTE_FOUND and ROUTE_METHOD_NOT_ALLOWED (r->route stays NULL on ROUTE_NOT_FOUND). The
 * operational routes are looked at only when r->ops_mark is set, and only the one it
 * names. */
route_fault routes_find(request *r);

/* Reads r->route's declared inputs into r->in: the query, then the path parameter, then
 * the body. Answers the first fault (400, 404 for a path parameter that names nothing,
 * 413, 415) and returns false. */
bool routes_read_input(request *r);

/* The routes, for metrics: routes_slot gives 0 for no route, i + 1 for the i-th. */
#define ROUTES_COUNT 17
const api_route *routes_at(size_t i);
size_t routes_slot(const api_route *route);

#endif
