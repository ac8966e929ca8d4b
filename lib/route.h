/* route: maps a method and a raw request path to one of the API's routes.
 *
 * Pure and allocation-free so it can be unit-tested and fuzzed. The path is matched as
 * the client sent it (before nginx normalises anything): no trailing slashes, no empty
 * segments, no dot segments, no redirects. A path parameter is returned raw (still
 * percent-encoded); the handler decodes and validates it. */
#ifndef MARKET_ROUTE_H
#define MARKET_ROUTE_H

#include <stddef.h>

typedef enum {
    ROUTE_NONE = 0,
    ROUTE_PRODUCTS_LIST,   /* GET  /v1/products */
    ROUTE_PRODUCT_GET,     /* GET  /v1/products/:id */
    ROUTE_SELLER_GET,      /* GET  /v1/sellers/:id */
    ROUTE_ORDERS_LIST,     /* GET  /v1/orders */
    ROUTE_DOWNLOAD_LINK,   /* POST /v1/downloads/:id/link */
    ROUTE_WEBHOOKS_CREATE, /* POST /v1/webhooks */
    ROUTE_FILE,            /* GET|HEAD <files prefix>/:token, outside /v1, no API key */
} route_id;

typedef enum {
    MATCH_OK,
    MATCH_NOT_FOUND,
    MATCH_METHOD_NOT_ALLOWED,
} match_result;

typedef struct {
    route_id route;
    const char *param; /* raw :id or :token segment inside the path, or NULL */
    size_t param_len;
    const char *allow; /* for MATCH_METHOD_NOT_ALLOWED: the Allow header value */
    const char *scope; /* scope the route needs, NULL for ROUTE_FILE */
} route_match;

/* path: the path part of the request URI (no query string), path_len its length.
 * files_prefix: path of the download location, e.g. "/files" (no trailing slash). */
match_result route_find(const char *method, const char *path, size_t path_len,
                        const char *files_prefix, route_match *m);

#endif
