/* route: the route table's matcher, apart from the table because it is pure and fuzzed: the path is
 * the client's, matched before anything else reads it. The table and what each route does are
 * routes.c's. */
#include "route.h"

#include <stdio.h>
#include <string.h>

/* "." and ".." name a folder, not a resource: such paths match no route. */
static bool is_dot_segment(const char *s, size_t n)
{
    return (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.');
}

/* Matches path against pattern; on success stores the parameter segment and its name. */
static bool pattern_match(const char *pattern, const char *path, size_t len, route_match *m)
{
    size_t i = 0;
    const char *p = pattern;
    while (*p != '\0') {
        if (*p != ':') {
            if (i >= len || path[i] != *p)
                return false;
            i++;
            p++;
            continue;
        }
        size_t name_len = strcspn(p + 1, "/");
        size_t start = i;
        while (i < len && path[i] != '/')
            i++;
        if (i == start || is_dot_segment(path + start, i - start))
            return false; /* an empty parameter ("/v1/products/") or a dot segment */
        m->param = path + start;
        m->param_len = i - start;
        m->param_name = p + 1;
        m->param_name_len = name_len;
        p += 1 + name_len;
    }
    return i == len;
}

bool route_method_listed(const char *methods, const char *method)
{
    size_t n = strlen(method);
    for (const char *p = methods; *p != '\0';) {
        size_t item = strcspn(p, ", ");
        if (item == n && n > 0 && memcmp(p, method, n) == 0)
            return true;
        p += item;
        p += strspn(p, ", ");
    }
    return false;
}

/* Appends an entry's methods to the Allow list, while they fit (a table's own methods
 * always do: ROUTE_ALLOW_MAX is far above what the API declares). */
static void allow_append(char *allow, const char *methods)
{
    size_t used = strlen(allow);
    if (used + strlen(methods) + 2 >= ROUTE_ALLOW_MAX)
        return;
    snprintf(allow + used, ROUTE_ALLOW_MAX - used, "%s%s", used > 0 ? ", " : "", methods);
}

route_fault route_table_find(const void *table, size_t count, size_t stride, const char *method,
                             const char *path, size_t path_len, route_match *m)
{
    route_match first = {0}; /* the first entry whose pattern matches, whatever its methods */
    bool path_matched = false;
    for (size_t i = 0; i < count; i++) {
        const route_spec *spec = (const route_spec *)((const char *)table + i * stride);
        route_match here = {0};
        if (spec->pattern == NULL || !pattern_match(spec->pattern, path, path_len, &here))
            continue;
        here.index = i;
        if (route_method_listed(spec->methods, method)) {
            *m = here;
            return ROUTE_FOUND;
        }
        if (!path_matched) {
            first = here;
            path_matched = true;
        }
        allow_append(first.allow, spec->methods);
    }
    *m = first;
    return path_matched ? ROUTE_METHOD_NOT_ALLOWED : ROUTE_NOT_FOUND;
}
