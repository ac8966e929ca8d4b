/* route: finds which of a program's declared routes a request's method and raw path name.
 *
 * The table belongs to the program (app/api/http/routes.c): app/api/http/route only knows that each
 * entry starts with a route_spec, a method list and a path pattern. Pure and
 * allocation-free so it can be unit-tested and fuzzed. The path is matched as the client
 * sent it (before nginx normalises anything): no trailing slashes, no empty segments, no
 * dot segments, no redirects. A path parameter is returned raw (still percent-encoded);
 * the program decodes and validates it. */
#ifndef MARKET_ROUTE_H
#define MARKET_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

/* A pattern is literal segments and at most one parameter segment written ":name", as in
 * "/v1/products/:id". A NULL pattern matches nothing (a route that is switched off). */
typedef struct {
    const char *methods; /* the methods the path accepts, as an Allow header: "GET, HEAD" */
    const char *pattern;
} route_spec;

typedef enum {
    ROUTE_FOUND,
    ROUTE_NOT_FOUND,
    ROUTE_METHOD_NOT_ALLOWED, /* the path is a route's, the method is not among its methods */
} route_fault;

/* Room for the methods of every entry that shares a path, as an Allow header. */
#define ROUTE_ALLOW_MAX 64

typedef struct {
    size_t index;      /* the entry of the table, for ROUTE_FOUND and ..._NOT_ALLOWED */
    const char *param; /* the raw parameter segment inside the path, or NULL */
    size_t param_len;
    const char *param_name; /* its name inside the pattern ("id"), or NULL */
    size_t param_name_len;
    /* ROUTE_METHOD_NOT_ALLOWED: the methods of every entry whose pattern matches the
     * path, in table order ("GET, POST, DELETE"), for the Allow header. */
    char allow[ROUTE_ALLOW_MAX];
} route_match;

/* Looks the path (path_len bytes, no query string) up in count entries that begin
 * stride bytes apart, each starting with a route_spec (like bsearch's table). Several
 * entries may share a pattern, one per method (GET and DELETE of /v1/things/:id): the
 * first entry whose pattern matches the path and whose methods hold the method is
 * found; when patterns match but no method does, index is the first of them and allow
 * lists all their methods. */
route_fault route_table_find(const void *table, size_t count, size_t stride, const char *method,
                             const char *path, size_t path_len, route_match *m);

/* Whether method is one of methods ("GET, HEAD"); exact and case-sensitive, as HTTP
 * methods are. */
bool route_method_listed(const char *methods, const char *method);

#endif
