#include "route.h"

#include <stdbool.h>
#include <string.h>

typedef struct {
    route_id route;
    const char *method;
    const char *pattern; /* literal segments, ":" stands for the one parameter segment */
    const char *scope;
} route_def;

static const route_def routes[] = {
    {ROUTE_PRODUCTS_LIST, "GET", "/v1/products", "products:read"},
    {ROUTE_PRODUCT_GET, "GET", "/v1/products/:", "products:read"},
    {ROUTE_SELLER_GET, "GET", "/v1/sellers/:", "products:read"},
    {ROUTE_ORDERS_LIST, "GET", "/v1/orders", "orders:read"},
    {ROUTE_DOWNLOAD_LINK, "POST", "/v1/downloads/:/link", "downloads:write"},
    {ROUTE_WEBHOOKS_CREATE, "POST", "/v1/webhooks", "webhooks:write"},
};

/* "." and ".." name a folder, not a resource: such paths match no route. */
static bool is_dot_segment(const char *s, size_t n)
{
    return (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.');
}

/* Matches path against pattern; on success stores the parameter segment. */
static int pattern_match(const char *pattern, const char *path, size_t len, const char **param,
                         size_t *param_len)
{
    size_t i = 0;
    *param = NULL;
    *param_len = 0;
    for (const char *p = pattern; *p != '\0'; p++) {
        if (*p == ':') {
            size_t start = i;
            while (i < len && path[i] != '/')
                i++;
            if (i == start || is_dot_segment(path + start, i - start))
                return 0; /* empty parameter ("/v1/products/") or a dot segment */
            *param = path + start;
            *param_len = i - start;
            continue;
        }
        if (i >= len || path[i] != *p)
            return 0;
        i++;
    }
    return i == len;
}

static match_result match_file(const char *method, const char *path, size_t len, const char *prefix,
                               route_match *m)
{
    size_t plen = strlen(prefix);
    if (plen == 0 || len <= plen + 1 || memcmp(path, prefix, plen) != 0 || path[plen] != '/')
        return MATCH_NOT_FOUND;
    const char *token = path + plen + 1;
    size_t token_len = len - plen - 1;
    if (memchr(token, '/', token_len) != NULL || is_dot_segment(token, token_len))
        return MATCH_NOT_FOUND;
    m->route = ROUTE_FILE;
    m->param = token;
    m->param_len = token_len;
    m->scope = NULL;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        m->allow = "GET, HEAD";
        return MATCH_METHOD_NOT_ALLOWED;
    }
    return MATCH_OK;
}

match_result route_find(const char *method, const char *path, size_t path_len,
                        const char *files_prefix, route_match *m)
{
    memset(m, 0, sizeof *m);
    match_result file = match_file(method, path, path_len, files_prefix, m);
    if (file != MATCH_NOT_FOUND)
        return file;

    /* Each path has exactly one method, so a path match with another method is a 405. */
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        const route_def *r = &routes[i];
        if (!pattern_match(r->pattern, path, path_len, &m->param, &m->param_len))
            continue;
        m->route = r->route;
        m->scope = r->scope;
        if (strcmp(method, r->method) != 0) {
            m->allow = r->method;
            return MATCH_METHOD_NOT_ALLOWED;
        }
        return MATCH_OK;
    }
    memset(m, 0, sizeof *m);
    return MATCH_NOT_FOUND;
}
