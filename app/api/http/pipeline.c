/* pipeline: see pipeline.h. This file is the contract's section 2 written as code: read
 * pipeline_run top to bottom to know which refusal a request gets first. */
#include "pipeline.h"

#include "routes.h"

static void answer_not_found(request *r)
{
    respond_error(r, 404, "invalid_request_error", "route_not_found", NULL, "no route %s %.*s",
                  r->method, (int)(r->path_len > 200 ? 200 : r->path_len), r->path);
}

static void answer_method_not_allowed(request *r)
{
    const char *allow = r->match.allow;
    response_header(r, "Allow", allow);
    respond_error(r, 405, "invalid_request_error", "method_not_allowed", NULL,
                  "%s is not allowed here; allowed: %s", r->method, allow);
}

void pipeline_run(request *r, const pipeline_steps *steps)
{
    route_fault fault = steps->find(r);
    const api_route *route = r->route;
    /* The download location (its token is the credential) and the operational routes take
     * no key; an unknown path does, so that it tells nothing to a caller without one. */
    bool keyed = route == NULL || route->scope != NULL;
    const catalogue_handler *page_kind =
        fault == ROUTE_FOUND && route != NULL ? route->catalogue : NULL;
    bool catalogue = page_kind != NULL;
    serve_page page;
    serve_page_init(&page, page_kind);

    /* 401, 429: the key, its rate limit and its share of the workers. A catalogue route
     * reads its inputs and plans its page in between (its mode is known then), so that
     * the page goes to PostgreSQL with the key's statement: one round trip. A refused
     * input is answered there and replaced by any answer below (serve.h). */
    auth_query q;
    if (keyed && !steps->key_begin(r, &q))
        return;
    if (catalogue && !r->over_in_flight)
        steps->plan_page(r, &page);
    if (keyed && !steps->key_finish(r, &q, catalogue ? &page : NULL))
        return;

    /* 404, 405: asked only of a caller with a valid key. (No route is ROUTE_NOT_FOUND.) */
    if (route == NULL) {
        answer_not_found(r);
        return;
    }
    if (fault == ROUTE_METHOD_NOT_ALLOWED) {
        answer_method_not_allowed(r);
        return;
    }

    /* 403: the route table's scope, for every kind of route. */
    if (keyed && !steps->require_scope(r, route->scope))
        return;

    /* 400, 413, 415: the route's declared inputs (a catalogue route's were read above;
     * their refusal is its answer). Then the handler. */
    if (catalogue) {
        if (page.planned)
            steps->answer_page(r, &page);
        return;
    }
    if (steps->read_input(r))
        route->handle(r);
}
