/* query: strict parsing of a URL query string against the parameters a route accepts.
 *
 * Every parameter name must be one the route knows, none may repeat, and every name and
 * value must decode to valid UTF-8 without NUL. The first fault found is reported by its
 * kind and the parameter it concerns; the program turns it into its own error. */
#ifndef MARKET_QUERY_H
#define MARKET_QUERY_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"

#define QUERY_MAX_PARAMS 16
#define QUERY_MAX_VALUE 2048 /* bytes, decoded */

typedef struct {
    const char *names[QUERY_MAX_PARAMS];  /* the route's accepted names, NULL-terminated */
    const char *values[QUERY_MAX_PARAMS]; /* values[i] belongs to names[i]; NULL if absent */
} query_params;

typedef enum {
    QUERY_UNKNOWN = 1, /* a name the route does not accept */
    QUERY_DUPLICATED,  /* a name given twice */
    QUERY_MALFORMED,   /* a name or value that is not percent-encoded UTF-8 without NUL */
    QUERY_TOO_LONG,    /* a value over QUERY_MAX_VALUE bytes, decoded */
} query_fault;

typedef struct {
    query_fault fault;
    /* The name at fault, decoded (for QUERY_UNKNOWN: as given, of any length); when the
     * name itself is malformed (name_malformed), the name as sent, every byte outside
     * printable ASCII written %XX, at most QUERY_RAW_NAME_MAX bytes. */
    const char *name;
    bool name_malformed;
} query_error;

#define QUERY_RAW_NAME_MAX 64

/* names: NULL-terminated list of accepted names (at most QUERY_MAX_PARAMS - 1). */
bool query_parse(arena *a, const char *qs, const char *const *names, query_params *out,
                 query_error *err);

/* The value of name, or NULL if it was not given. */
const char *query_get(const query_params *q, const char *name);

#endif
