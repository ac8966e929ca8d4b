/* route_table_find, over a table shaped like the API's (app/api/http/routes.c), against a reference
 * router that splits the path into segments.
 * Input: one byte choosing the method, then the raw path (NUL bytes included). */
#include "fuzz.h"
#include "route.h"

typedef enum {
    ROUTE_NONE = -1,
    ROUTE_FILE,
    ROUTE_PRODUCTS_LIST,
    ROUTE_PRODUCT_GET,
    ROUTE_SELLER_GET,
    ROUTE_ORDERS_LIST,
    ROUTE_DOWNLOAD_LINK,
    ROUTE_WEBHOOKS_CREATE,
} route_id;

/* Indexed by route_id. */
static const route_spec table[] = {
    {"GET, HEAD", "/files/:token"}, {"GET", "/v1/products"}, {"GET", "/v1/products/:id"},
    {"GET", "/v1/sellers/:id"},     {"GET", "/v1/orders"},   {"POST", "/v1/downloads/:id/link"},
    {"POST", "/v1/webhooks"},
};

static const char *const methods[] = {"GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "get", ""};

typedef struct {
    route_id route;
    const char *param; /* points into the path */
    size_t param_len;
} ref_match;

static bool is_dot(const char *s, size_t n)
{
    return (n == 1 && s[0] == '.') || (n == 2 && memcmp(s, "..", 2) == 0);
}

/* Segment i of path (after the leading '/'), or NULL when there are fewer. */
static const char *segment(const char *path, size_t len, int i, size_t *seg_len)
{
    size_t pos = 1;
    for (int k = 0; k < i; k++) {
        const char *slash = memchr(path + pos, '/', len - pos);
        if (slash == NULL)
            return NULL;
        pos = (size_t)(slash - path) + 1;
    }
    const char *end = memchr(path + pos, '/', len - pos);
    *seg_len = (end != NULL ? (size_t)(end - path) : len) - pos;
    return path + pos;
}

static size_t segment_count(const char *path, size_t len)
{
    size_t n = 1;
    for (size_t i = 1; i < len; i++)
        n += path[i] == '/';
    return n;
}

static bool seg_is(const char *path, size_t len, int i, const char *want)
{
    size_t n;
    const char *s = segment(path, len, i, &n);
    return s != NULL && n == strlen(want) && memcmp(s, want, n) == 0;
}

/* A parameter segment: non-empty, not a dot segment. */
static bool seg_param(const char *path, size_t len, int i, ref_match *r)
{
    const char *s = segment(path, len, i, &r->param_len);
    r->param = s;
    return s != NULL && r->param_len > 0 && !is_dot(s, r->param_len);
}

static ref_match ref_route(const char *path, size_t len)
{
    ref_match r = {ROUTE_NONE, NULL, 0};
    if (len == 0 || path[0] != '/')
        return r;
    size_t count = segment_count(path, len);
    if (count == 2 && seg_is(path, len, 0, "files") && seg_param(path, len, 1, &r)) {
        r.route = ROUTE_FILE;
        return r;
    }
    r.param = NULL;
    r.param_len = 0;
    if (!seg_is(path, len, 0, "v1"))
        return r;
    if (count == 2 && seg_is(path, len, 1, "products"))
        r.route = ROUTE_PRODUCTS_LIST;
    else if (count == 2 && seg_is(path, len, 1, "orders"))
        r.route = ROUTE_ORDERS_LIST;
    else if (count == 2 && seg_is(path, len, 1, "webhooks"))
        r.route = ROUTE_WEBHOOKS_CREATE;
    else if (count == 3 && seg_is(path, len, 1, "products") && seg_param(path, len, 2, &r))
        r.route = ROUTE_PRODUCT_GET;
    else if (count == 3 && seg_is(path, len, 1, "sellers") && seg_param(path, len, 2, &r))
        r.route = ROUTE_SELLER_GET;
    else if (count == 4 && seg_is(path, len, 1, "downloads") && seg_is(path, len, 3, "link") &&
             seg_param(path, len, 2, &r))
        r.route = ROUTE_DOWNLOAD_LINK;
    if (r.route == ROUTE_NONE)
        r.param = NULL, r.param_len = 0;
    return r;
}

static const char *route_allow(route_id route)
{
    switch (route) {
    case ROUTE_FILE:
        return "GET, HEAD";
    case ROUTE_DOWNLOAD_LINK:
    case ROUTE_WEBHOOKS_CREATE:
        return "POST";
    default:
        return "GET";
    }
}

static bool method_allowed(const char *method, route_id route)
{
    if (route == ROUTE_FILE)
        return strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    return strcmp(method, route_allow(route)) == 0;
}

static void check_same_string(const char *x, const char *y)
{
    FUZZ_CHECK((x == NULL) == (y == NULL));
    FUZZ_CHECK(x == NULL || strcmp(x, y) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *method = methods[data[0] % (sizeof methods / sizeof methods[0])];
    size_t len = size - 1;
    char *path = malloc(len ? len : 1); /* exactly the path: reads past it are caught */
    memcpy(path, data + 1, len);

    route_match m;
    route_fault got = route_table_find(table, sizeof table / sizeof table[0], sizeof table[0],
                                       method, path, len, &m);
    ref_match want = ref_route(path, len);

    if (want.route == ROUTE_NONE) {
        FUZZ_CHECK(got == ROUTE_NOT_FOUND);
        FUZZ_CHECK(m.index == 0 && m.param == NULL && m.param_name == NULL);
    } else {
        FUZZ_CHECK(m.index == (size_t)want.route);
        FUZZ_CHECK(m.param == want.param && m.param_len == want.param_len);
        FUZZ_CHECK((m.param == NULL) == (m.param_name == NULL));
        check_same_string(table[m.index].methods, route_allow(want.route));
        FUZZ_CHECK(got ==
                   (method_allowed(method, want.route) ? ROUTE_FOUND : ROUTE_METHOD_NOT_ALLOWED));
    }
    free(path);
    return 0;
}
