/* routes: the route table of market-api (routes.h) and the two things done with it: find
 * a request's route, and read the inputs that route declares. Adding a route is one
 * entry here and its handler. */
#include "routes.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids.h"
#include "links.h"
#include "log.h"
#include "mem.h"
#include "query.h"
#include "subscription.h"

#define STR(x) #x
#define XSTR(x) STR(x)

#define PAGE_DEFAULT 20
#define PAGE_MAX 100
#define SEARCH_MAX_CHARS 200
#define DESCRIPTION_MAX 500   /* characters */
#define EXPIRE_OLD_MAX 604800 /* seconds: 7 days */
#define ID_MAX 255            /* bytes of a path parameter */
#define ALL_KINDS ((1L << SUBSCRIPTION_KINDS) - 1)

/* Where an input's typed value goes in r->in, checked to be a T: a field of another type
 * does not compile (comparison of distinct pointer types). */
#define AT(field, T) (offsetof(api_input, field) + 0 * sizeof(&((api_input *)0)->field == (T *)0))

/* Inputs more than one route takes. */
#define LIMIT                                                                                      \
    {                                                                                              \
        .name = "limit", .type = INPUT_INT, .offset = AT(limit, long), .min = 1, .max = PAGE_MAX,  \
        .def = PAGE_DEFAULT, .expects = "limit must be an integer from 1 to " XSTR(PAGE_MAX)       \
    }
/* The cursor is checked by the handler, which knows what it must be bound to. */
#define CURSOR                                                                                     \
    {                                                                                              \
        .name = "cursor", .type = INPUT_TEXT, .offset = AT(cursor, const char *)                   \
    }
#define PRICE(field)                                                                               \
    {                                                                                              \
        .name = #field, .type = INPUT_DECIMAL, .offset = AT(field, input_decimal),                 \
        .expects = #field " must be a decimal number of at least 0, such as 19.99"                 \
    }
#define CREATED(field)                                                                             \
    {                                                                                              \
        .name = #field, .type = INPUT_TIMESTAMP, .offset = AT(field, input_time),                  \
        .expects = #field " must be an RFC 3339 date-time such as 2026-11-26T10:04:05Z"            \
    }
/* The fields of a subscription (docs/contract.md sections 6 and 13): the url's host is
 * checked by the handler, after every field, before a DNS lookup is paid for. */
#define URL(is_required)                                                                           \
    {                                                                                              \
        .name = "url", .type = INPUT_URL, .offset = AT(url, const url_parts *),                    \
        .required = (is_required)                                                                  \
    }
#define EVENTS(default_kinds)                                                                      \
    {                                                                                              \
        .name = "events", .type = INPUT_ENUM_SET, .offset = AT(events, unsigned),                  \
        .values = subscription_kinds, .def = (default_kinds),                                      \
        .expects = "events must be a non-empty array of event kinds: sale.completed, "             \
                   "sale.refunded, review.created, payout.sent",                                   \
        .detail = "is not an event kind: use sale.completed, sale.refunded, review.created or "    \
                  "payout.sent"                                                                    \
    }
#define DESCRIPTION                                                                                \
    {                                                                                              \
        .name = "description", .type = INPUT_STRING, .offset = AT(description, const char *),      \
        .min = 0, .max = DESCRIPTION_MAX,                                                          \
        .expects = "description must be a string of at most " XSTR(DESCRIPTION_MAX) " characters", \
        .detail = "description must not contain control characters"                                \
    }
#define END                                                                                        \
    {                                                                                              \
        .name = NULL                                                                               \
    }

/* In the order the handlers checked them before the table existed, which is the order a
 * request with several faults learns about them. */
static const input_spec products_list_query[] = {
    {.name = "category",
     .type = INPUT_SLUG,
     .offset = AT(category, const char *),
     .expects = "category must be a category slug such as fonts"},
    {.name = "q",
     .type = INPUT_STRING,
     .offset = AT(q, const char *),
     .min = 1,
     .max = SEARCH_MAX_CHARS,
     .expects = "q must be 1 to " XSTR(SEARCH_MAX_CHARS) " characters, without control characters"},
    {.name = "seller",
     .type = INPUT_HANDLE,
     .offset = AT(seller, const char *),
     .expects = "seller must be a seller handle such as pixelforge"},
    PRICE(min_price),
    PRICE(max_price),
    {.name = "sort",
     .type = INPUT_ENUM,
     .offset = AT(sort, int),
     .values = products_sorts,
     .def = -1, /* relevance with q, else newest: the handler's rule */
     .expects = "sort must be one of relevance, newest, price_asc, price_desc"},
    LIMIT,
    CURSOR,
    END,
};
static const input_spec page_query[] = {LIMIT, CURSOR, END};
static const input_spec orders_list_query[] = {
    {.name = "status",
     .type = INPUT_ENUM,
     .offset = AT(status, int),
     .values = orders_statuses,
     .def = -1,
     .expects = "status must be paid or refunded"},
    LIMIT,
    CURSOR,
    END,
};
static const input_spec events_list_query[] = {
    {.name = "type",
     .type = INPUT_ENUM,
     .offset = AT(type, int),
     .values = event_types,
     .def = -1,
     .expects = "type must be one of sale.completed, sale.refunded, review.created, "
                "payout.sent, webhook.test"},
    CREATED(created_gte),
    CREATED(created_lt),
    LIMIT,
    CURSOR,
    END,
};
static const input_spec none[] = {END};

/* The defaults that are settings are filled in by routes_init. */
static input_spec download_link_body[] = {
    {.name = "expires_in",
     .type = INPUT_INT,
     .offset = AT(expires_in, long),
     .min = LINK_TTL_MIN,
     .max = LINK_TTL_MAX,
     .expects = "expires_in must be an integer number of seconds from " XSTR(
         LINK_TTL_MIN) " to " XSTR(LINK_TTL_MAX)},
    END,
};
static const input_spec subscription_create_body[] = {URL(true), EVENTS(ALL_KINDS), DESCRIPTION,
                                                      END};
static const input_spec subscription_update_body[] = {
    URL(false),
    EVENTS(0),
    DESCRIPTION,
    {.name = "disabled",
     .type = INPUT_BOOL,
     .offset = AT(disabled, int),
     .expects = "disabled must be true or false"},
    END,
};
static input_spec subscription_rotate_secret_body[] = {
    {.name = "expire_old_in",
     .type = INPUT_INT,
     .offset = AT(expire_old_in, long),
     .min = 0,
     .max = EXPIRE_OLD_MAX,
     .expects = "expire_old_in must be a whole number of seconds from 0 to " XSTR(EXPIRE_OLD_MAX)},
    END,
};

static bool product_id(const char *id)
{
    return ids_prefixed_valid(id, "prod_");
}
static bool subscription_id(const char *id)
{
    return ids_prefixed_valid(id, "we_");
}
static bool event_id(const char *id)
{
    return ids_prefixed_valid(id, "evt_");
}

/* Every id of another shape names nothing the caller may see: 404, never 403. A
 * download's id is the mint's to look up (download_link.c), after its body. */
static const api_path product = {ID_MAX, product_id, "product"};
static const api_path seller = {ID_MAX, ids_handle_valid, "seller"};
static const api_path download = {ID_MAX, NULL, NULL};
static const api_path subscription = {ID_MAX, subscription_id, "webhook subscription"};
static const api_path event = {ID_MAX, event_id, "event"};

static const catalogue_handler products_list = {products_list_plan, products_list_render};
static const catalogue_handler product_get = {product_get_plan, product_get_render};
static const catalogue_handler seller_get = {seller_get_plan, seller_get_render};

/* Every key has products:read: the catalogue's scope check never refuses (docs/contract.md
 * section 2), but it is declared like any other. The routes of docs/contract.md section 13
 * belong to the extension webhook-management: unless MARKET_API_EXTENSIONS turns it on,
 * routes_init switches them off and their paths are any other path's (404, or 405 with
 * Allow: POST on /v1/webhooks). The operational routes and the download
 * location take no key; they read no query string (a download URL may carry a client's
 * cache-buster). The download location's pattern comes from the configuration; it stays
 * last. A body table of no field ("none") still reads the body: any field is unknown. */
static api_route routes[] = {
    {.spec = {"GET", "/v1/products"},
     .name = "products_list",
     .scope = "products:read",
     .query = products_list_query,
     .catalogue = &products_list},
    {.spec = {"GET", "/v1/products/:id"},
     .name = "product_get",
     .scope = "products:read",
     .query = none,
     .path = &product,
     .catalogue = &product_get},
    {.spec = {"GET", "/v1/sellers/:id"},
     .name = "seller_get",
     .scope = "products:read",
     .query = page_query,
     .path = &seller,
     .catalogue = &seller_get},
    {.spec = {"GET", "/v1/orders"},
     .name = "orders_list",
     .scope = "orders:read",
     .query = orders_list_query,
     .handle = handle_orders_list},
    {.spec = {"POST", "/v1/downloads/:id/link"},
     .name = "download_link",
     .scope = "downloads:write",
     .query = none,
     .path = &download,
     .body = download_link_body,
     .handle = handle_download_link},
    {.spec = {"GET", "/v1/webhooks"},
     .name = "webhooks_list",
     .extension = CONFIG_EXT_WEBHOOK_MANAGEMENT,
     .scope = "webhooks:read",
     .query = page_query,
     .handle = handle_subscriptions_list},
    {.spec = {"POST", "/v1/webhooks"},
     .name = "webhooks_create",
     .scope = "webhooks:write",
     .query = none,
     .body = subscription_create_body,
     .handle = handle_subscription_create},
    {.spec = {"GET", "/v1/webhooks/:id"},
     .name = "webhooks_get",
     .extension = CONFIG_EXT_WEBHOOK_MANAGEMENT,
     .scope = "webhooks:read",
     .query = none,
     .path = &subscription,
     .handle = handle_subscription_get},
    {.spec = {"POST", "/v1/webhooks/:id"},
     .name = "webhooks_update",
     .extension = CONFIG_EXT_WEBHOOK_MANAGEMENT,
     .scope = "webhooks:write",
     .query = none,
     .path = &subscription,
     .body = subscription_update_body,
     .handle = handle_subscription_update},
    {.spec = {"DELETE", "/v1/webhooks/:id"},
     .name = "webhooks_delete",
     .extension = CONFIG_EXT_WEBHOOK_MANAGEMENT,
     .scope = "webhooks:write",
     .query = none,
     .path = &subscription,
     .body = none,
     .handle = handle_subscription_delete},
    {.spec = {"POST", "/v1/webhooks/:id/rotate_secret"},
     .name = "webhooks_rotate_secret",
     .extension = CONFIG_EXT_WEBHOOK_MANAGEMENT,
     .scope = "webhooks:write",
     .query = none,
     .path = &subscription,
     .body = subscription_rotate_secret_body,
     .handle = handle_subscription_rotate_secret},
    {.spec = {"POST", "/v1/webhooks/:id/test"},
     .name = "webhooks_test",
     .extension = CONFIG_EXT_WEBHOOK_MANAGEMENT,
     .scope = "webhooks:write",
     .query = none,
     .path = &subscription,
     .body = none,
     .handle = handle_subscription_test},
    {.spec = {"GET", "/v1/events"},
     .name = "events_list",
     .extension = CONFIG_EXT_WEBHOOK_MANAGEMENT,
     .scope = "webhooks:read",
     .query = events_list_query,
     .handle = handle_events_list},
    {.spec = {"GET", "/v1/events/:id"},
     .name = "events_get",
     .extension = CONFIG_EXT_WEBHOOK_MANAGEMENT,
     .scope = "webhooks:read",
     .query = none,
     .path = &event,
     .handle = handle_events_get},
    {.spec = {"GET, HEAD", "/healthz"},
     .name = "healthz",
     .ops = "healthz",
     .handle = handle_healthz},
    {.spec = {"GET, HEAD", "/metrics"},
     .name = "metrics",
     .ops = "metrics",
     .handle = handle_metrics},
    {.spec = {"GET, HEAD", NULL}, .name = "file", .handle = handle_file},
};
#define N_ROUTES (sizeof routes / sizeof routes[0])
#define FILE_ROUTE (&routes[N_ROUTES - 1])
#define N_OPS 2
#define OPS_FIRST (N_ROUTES - 1 - N_OPS)
#define N_API OPS_FIRST
_Static_assert(N_ROUTES == ROUTES_COUNT, "ROUTES_COUNT is the number of routes");

/* Each route's label ("GET /v1/sellers/:id", request.h's route_label), made by
 * routes_init for the life of the process. */
static char *labels[N_ROUTES];

/* The patterns as declared, which routes_init switches off or fills in, and the download
 * location's pattern it made: kept so that another call (the unit tests make several)
 * starts again from the table as written. */
static const char *declared[N_ROUTES];
static char *file_pattern;

static char *label_of(const api_route *route)
{
    size_t n = strlen(route->spec.methods) + strlen(route->spec.pattern) + 2;
    char *label = xmalloc(n);
    snprintf(label, n, "%s %s", route->spec.methods, route->spec.pattern);
    return label;
}

/* Puts back the patterns as declared, and frees what a previous routes_init made. */
static void reset_table(void)
{
    static bool saved;
    for (size_t i = 0; i < N_ROUTES; i++) {
        if (!saved)
            declared[i] = routes[i].spec.pattern;
        routes[i].spec.pattern = declared[i];
        free(labels[i]);
        labels[i] = NULL;
    }
    saved = true;
    free(file_pattern);
    file_pattern = NULL;
}

void routes_init(const char *files_prefix, const market_config *cfg)
{
    reset_table();
    for (size_t i = 0; i < N_API; i++)
        if ((routes[i].extension & ~cfg->api_extensions) != 0)
            routes[i].spec.pattern = NULL; /* switched off: route_table_find matches it never */
    download_link_body[0].def = cfg->download_ttl;
    subscription_rotate_secret_body[0].def = cfg->webhook_secret_grace;
    if (files_prefix[0] != '\0') {
        size_t n = strlen(files_prefix) + sizeof "/:token";
        file_pattern = xmalloc(n);
        snprintf(file_pattern, n, "%s/:token", files_prefix);
        FILE_ROUTE->spec.pattern = file_pattern;
    }
    for (size_t i = 0; i < N_ROUTES; i++)
        if (routes[i].spec.pattern != NULL)
            labels[i] = label_of(&routes[i]);
}

/* Looks the path up in count entries from first; sets r's route on a match. */
static route_fault find_in(request *r, size_t first, size_t count)
{
    route_fault fault = route_table_find(&routes[first], count, sizeof routes[0], r->method,
                                         r->path, r->path_len, &r->match);
    if (fault == ROUTE_NOT_FOUND)
        return fault;
    r->match.index += first;
    r->route = &routes[r->match.index];
    r->route_label = labels[r->match.index];
    return fault;
}

/* An operational route, for a request nginx marked: the one its mark names, when the
 * path is that route's. */
static route_fault find_ops(request *r)
{
    for (size_t i = OPS_FIRST; i < OPS_FIRST + N_OPS; i++) {
        if (strcmp(routes[i].ops, r->ops_mark) == 0) {
            route_fault fault = find_in(r, i, 1);
            if (fault != ROUTE_NOT_FOUND)
                return fault;
        }
    }
    log_error("the FastCGI parameter MARKET_OPS is %.40s on a path of no operational route "
              "with that name (nginx configuration)",
              r->ops_mark);
    return ROUTE_NOT_FOUND;
}

route_fault routes_find(request *r)
{
    r->route = NULL;
    r->route_label = NULL;
    route_fault fault = r->ops_mark != NULL ? find_ops(r) : ROUTE_NOT_FOUND;
    /* The download location next: the API's paths must not shadow it. */
    if (fault == ROUTE_NOT_FOUND)
        fault = find_in(r, N_ROUTES - 1, 1);
    if (fault == ROUTE_NOT_FOUND)
        fault = find_in(r, 0, N_API);
    return fault;
}

/* The path parameter, decoded into r->in.id, and of the route's shape. */
static bool read_path(request *r, const api_path *path)
{
    r->in.id = request_path_param(r, path->max);
    if (r->in.id == NULL)
        return false;
    if (path->valid != NULL && !path->valid(r->in.id))
        return respond_missing(r, path->what);
    return true;
}

/* The body, a JSON object of the declared fields (request_json_body answers 413, 415 and
 * what app/api/http/json_body refuses), then each field by its type. */
static bool read_body_fields(request *r, const input_spec *body, input_error *err)
{
    const char *names[QUERY_MAX_PARAMS];
    size_t n = 0;
    for (; body[n].name != NULL; n++)
        names[n] = body[n].name;
    names[n] = NULL;
    json_object *obj;
    if (!request_json_body(r, names, &obj))
        return false;
    if (input_read_body(r->arena, obj, body, &r->in, err))
        return true;
    return respond_invalid(r, err->code, err->param, "%s", err->message);
}

bool routes_read_input(request *r)
{
    const api_route *route = r->route;
    input_error err;
    if (route->query != NULL && !input_read_query(r->arena, r->query, route->query, &r->in, &err))
        return respond_invalid(r, err.code, err.param, "%s", err.message);
    if (route->path != NULL && !read_path(r, route->path))
        return false;
    return route->body == NULL || read_body_fields(r, route->body, &err);
}

const api_route *routes_at(size_t i)
{
    return &routes[i];
}

size_t routes_slot(const api_route *route)
{
    return route != NULL ? (size_t)(route - routes) + 1 : 0;
}
