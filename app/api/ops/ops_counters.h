/* ops_counters: which of the pool's shared counters is which. metrics.c keeps them
 * without knowing what they mean; the three files of this room that do share this
 * header: ops.c opens the pool's file, request_log.c counts into it and ops_routes.c
 * reports it (/metrics). A change of their meaning or number must change OPS_LAYOUT, so
 * that a running pool's old file is replaced, never misread. */
#ifndef MARKET_API_OPS_COUNTERS_H
#define MARKET_API_OPS_COUNTERS_H

#include <stddef.h>

#include "metrics.h"
#include "routes.h"

#define OPS_LAYOUT 6

/* Slot 0 counts requests that matched no route (404, or 401 before the route was
 * known); slot i + 1 the i-th route of the table (routes.h). */
#define N_ROUTES (ROUTES_COUNT + 1)

/* Every status the worker answers (ops_statuses); anything else counts as "other", the
 * last slot. */
#define N_STATUSES 16
extern const int ops_statuses[N_STATUSES - 1];

/* Latency buckets' upper bounds, seconds (ops_bounds), then +Inf. */
#define N_BOUNDS 13
extern const double ops_bounds[N_BOUNDS];

enum {
    C_REQUESTS = 0,                                        /* [route][status] */
    C_BUCKETS = C_REQUESTS + N_ROUTES * N_STATUSES,        /* [route][bound, +Inf] */
    C_DURATION_US = C_BUCKETS + N_ROUTES * (N_BOUNDS + 1), /* [route] */
    C_DB_RECONNECTS = C_DURATION_US + N_ROUTES,
    C_RATE_LIMITED,
    C_DB_UNREACHABLE, /* 503s: the database could not be reached */
    C_DB_TIMED_OUT,   /* 503s: a statement outlived MARKET_STATEMENT_TIMEOUT */
    C_COUNT
};

/* The worker's view of its pool, set once by ops_init. */
typedef struct {
    metrics *shared;     /* the pool's file (MARKET_METRICS_FILE) */
    const char *version; /* market_build_info's */
    char host[256];      /* gethostname, for market_build_info */
} ops_pool;
extern ops_pool ops_the_pool;

/* The route of counter slot `slot`: "none" for slot 0, else the table's name. */
const char *ops_route_name(size_t slot);

#endif
