#include "routes.h"

#include <stdio.h>
#include <string.h>

#include "mem.h"
#include "params.h"

#define STR(x) #x
#define XSTR(x) STR(x)

/* Parameters more than one route takes. The cursor is checked by the handler, which
 * knows what it must be bound to. */
#define LIMIT                                                                                      \
    {                                                                                              \
        "limit", param_limit_valid, NULL, "limit must be an integer from 1 to " XSTR(PAGE_MAX)     \
    }
#define CURSOR                                                                                     \
    {                                                                                              \
        "cursor", NULL, NULL, NULL                                                                 \
    }
#define END                                                                                        \
    {                                                                                              \
        NULL, NULL, NULL, NULL                                                                     \
    }

static const char *const order_statuses[] = {"paid", "refunded", NULL};

/* In the order the handlers checked them before the table existed, which is the order a
 * request with several faults learns about them. */
static const api_param products_list_params[] = {
    {"category", param_slug_valid, NULL, "category must be a category slug such as fonts"},
    {"q", param_search_valid, NULL,
     "q must be 1 to " XSTR(SEARCH_MAX_CHARS) " characters, without control characters"},
    {"seller", param_handle_valid, NULL, "seller must be a seller handle such as pixelforge"},
    {"min_price", param_price_valid, NULL,
     "min_price must be a decimal number of at least 0, such as 19.99"},
    {"max_price", param_price_valid, NULL,
     "max_price must be a decimal number of at least 0, such as 19.99"},
    {"sort", NULL, products_sorts, "sort must be one of relevance, newest, price_asc, price_desc"},
    LIMIT,
    CURSOR,
    END,
};
static const api_param seller_get_params[] = {LIMIT, CURSOR, END};
static const api_param orders_list_params[] = {
    {"status", NULL, order_statuses, "status must be paid or refunded"},
    LIMIT,
    CURSOR,
    END,
};
static const api_param webhooks_list_params[] = {LIMIT, CURSOR, END};
static const api_param events_list_params[] = {
    {"type", NULL, event_types,
     "type must be one of sale.completed, sale.refunded, review.created, payout.sent, "
     "webhook.test"},
    {"created_gte", param_timestamp_valid, NULL,
     "created_gte must be an RFC 3339 date-time such as 2026-11-26T10:04:05Z"},
    {"created_lt", param_timestamp_valid, NULL,
     "created_lt must be an RFC 3339 date-time such as 2026-11-26T10:04:05Z"},
    LIMIT,
    CURSOR,
    END,
};
static const api_param no_params[] = {END};

static const catalogue_handler products_list = {products_list_plan, products_list_render};
static const catalogue_handler product_get = {product_get_plan, product_get_render};
static const catalogue_handler seller_get = {seller_get_plan, seller_get_render};

/* Every key has products:read: the catalogue's scope check never refuses (docs/contract.md
 * section 2), but it is declared like any other. The download location takes no key: the
 * token in its path is the credential; it reads no query string (a download URL may
 * carry a client's cache-buster). Its pattern comes from the configuration. */
static api_route routes[] = {
    {{"GET", "/v1/products"},
     "products_list",
     "products:read",
     products_list_params,
     NULL,
     &products_list},
    {{"GET", "/v1/products/:id"}, "product_get", "products:read", no_params, NULL, &product_get},
    {{"GET", "/v1/sellers/:id"},
     "seller_get",
     "products:read",
     seller_get_params,
     NULL,
     &seller_get},
    {{"GET", "/v1/orders"},
     "orders_list",
     "orders:read",
     orders_list_params,
     handle_orders_list,
     NULL},
    {{"POST", "/v1/downloads/:id/link"},
     "download_link",
     "downloads:write",
     no_params,
     handle_download_link,
     NULL},
    {{"GET", "/v1/webhooks"},
     "webhooks_list",
     "webhooks:read",
     webhooks_list_params,
     handle_webhooks_list,
     NULL},
    {{"POST", "/v1/webhooks"},
     "webhooks_create",
     "webhooks:write",
     no_params,
     handle_webhooks_create,
     NULL},
    {{"GET", "/v1/webhooks/:id"},
     "webhooks_get",
     "webhooks:read",
     no_params,
     handle_webhooks_get,
     NULL},
    {{"POST", "/v1/webhooks/:id"},
     "webhooks_update",
     "webhooks:write",
     no_params,
     handle_webhooks_update,
     NULL},
    {{"DELETE", "/v1/webhooks/:id"},
     "webhooks_delete",
     "webhooks:write",
     no_params,
     handle_webhooks_delete,
     NULL},
    {{"POST", "/v1/webhooks/:id/rotate_secret"},
     "webhooks_rotate_secret",
     "webhooks:write",
     no_params,
     handle_webhooks_rotate_secret,
     NULL},
    {{"POST", "/v1/webhooks/:id/test"},
     "webhooks_test",
     "webhooks:write",
     no_params,
     handle_webhooks_test,
     NULL},
    {{"GET", "/v1/events"},
     "events_list",
     "webhooks:read",
     events_list_params,
     handle_events_list,
     NULL},
    {{"GET", "/v1/events/:id"}, "events_get", "webhooks:read", no_params, handle_events_get, NULL},
    {{"GET, HEAD", NULL}, "file", NULL, NULL, handle_file, NULL},
};
#define N_ROUTES (sizeof routes / sizeof routes[0])
#define FILE_ROUTE (&routes[N_ROUTES - 1])
_Static_assert(N_ROUTES == ROUTES_COUNT, "ROUTES_COUNT is the number of routes");

/* Each route's label ("GET /v1/sellers/:id", request.h's route_label), made once by
 * routes_init for the life of the process. */
static const char *labels[N_ROUTES];

static const char *label_of(const api_route *route)
{
    size_t n = strlen(route->spec.methods) + strlen(route->spec.pattern) + 2;
    char *label = xmalloc(n);
    snprintf(label, n, "%s %s", route->spec.methods, route->spec.pattern);
    return label;
}

void routes_init(const char *files_prefix)
{
    if (files_prefix[0] != '\0') {
        size_t n = strlen(files_prefix) + sizeof "/:token";
        char *pattern = xmalloc(n); /* for the life of the process */
        snprintf(pattern, n, "%s/:token", files_prefix);
        FILE_ROUTE->spec.pattern = pattern;
    }
    for (size_t i = 0; i < N_ROUTES; i++)
        if (routes[i].spec.pattern != NULL)
            labels[i] = label_of(&routes[i]);
}

route_fault routes_find(request *r)
{
    /* The download location first: the API's paths must not shadow it. */
    route_fault fault =
        route_find(FILE_ROUTE, 1, sizeof routes[0], r->method, r->path, r->path_len, &r->match);
    if (fault != ROUTE_NOT_FOUND) {
        r->route = FILE_ROUTE;
        r->route_label = labels[N_ROUTES - 1];
        return fault;
    }
    fault = route_find(routes, N_ROUTES - 1, sizeof routes[0], r->method, r->path, r->path_len,
                       &r->match);
    r->route = fault != ROUTE_NOT_FOUND ? &routes[r->match.index] : NULL;
    r->route_label = r->route != NULL ? labels[r->match.index] : NULL;
    return fault;
}

static bool one_of(const char *const *allowed, const char *value)
{
    for (; *allowed != NULL; allowed++)
        if (strcmp(*allowed, value) == 0)
            return true;
    return false;
}

/* The answer to what lib/query found, in the API's words (docs/contract.md section 4). */
static bool respond_query_error(request *r, const query_error *err)
{
    switch (err->fault) {
    case QUERY_UNKNOWN: {
        bool named = err->name[0] != '\0' && strlen(err->name) <= 64;
        return respond_invalid(r, "parameter_unknown", named ? err->name : NULL,
                               "unknown query parameter%s%.64s", err->name[0] ? " " : "",
                               err->name);
    }
    case QUERY_DUPLICATED:
        return respond_invalid(r, "parameter_duplicated", err->name, "%s is given more than once",
                               err->name);
    case QUERY_TOO_LONG:
        return respond_invalid(r, "parameter_invalid", err->name, "%s is too long", err->name);
    case QUERY_MALFORMED:
        if (err->name == NULL)
            return respond_invalid(r, "parameter_invalid", NULL,
                                   "a query parameter name is not valid percent-encoded UTF-8");
        return respond_invalid(r, "parameter_invalid", err->name,
                               "%s is not valid percent-encoded UTF-8", err->name);
    }
    return respond_internal(r);
}

bool routes_read_query(request *r)
{
    const api_param *params = r->route->params;
    if (params == NULL)
        return true;
    const char *names[QUERY_MAX_PARAMS];
    size_t n = 0;
    for (; params[n].name != NULL; n++)
        names[n] = params[n].name;
    names[n] = NULL;

    query_error err;
    if (!query_parse(r->arena, r->query, names, &r->input, &err))
        return respond_query_error(r, &err);
    for (size_t i = 0; i < n; i++) {
        const api_param *p = &params[i];
        const char *value = r->input.values[i];
        if (value == NULL)
            continue;
        if ((p->valid != NULL && !p->valid(value)) ||
            (p->one_of != NULL && !one_of(p->one_of, value)))
            return respond_invalid(r, "parameter_invalid", p->name, "%s", p->expects);
    }
    return true;
}

const api_route *routes_at(size_t i)
{
    return &routes[i];
}

size_t routes_slot(const api_route *route)
{
    return route != NULL ? (size_t)(route - routes) + 1 : 0;
}
