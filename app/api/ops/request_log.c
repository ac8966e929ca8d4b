/* request_log: what an answered request leaves behind: its counts in the pool's shared
 * counters (ops_counters.h) and its one log line, apart from the pool's file (ops.c) and
 * from the routes that report the counts (ops_routes.c). */
#include "ops.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "log.h"
#include "ops_counters.h"
#include "text.h"

static unsigned long connections_seen; /* db_connections() when last looked at */

/* Every connection after the worker's first is a reconnect. */
static void count_reconnects(worker *w)
{
    unsigned long now = db_connections(w->db);
    unsigned long base = connections_seen > 1 ? connections_seen : 1;
    if (now > base)
        metrics_add(ops_the_pool.shared, C_DB_RECONNECTS, now - base);
    if (now > connections_seen)
        connections_seen = now;
}

static int status_index(int status)
{
    for (int i = 0; i < N_STATUSES - 1; i++)
        if (ops_statuses[i] == status)
            return i;
    return N_STATUSES - 1;
}

static int bucket_index(long long duration_us)
{
    for (int i = 0; i < N_BOUNDS; i++)
        if ((double)duration_us <= ops_bounds[i] * 1e6)
            return i;
    return N_BOUNDS;
}

/* The key's display prefix (its first 12 characters, as market-admin key list shows it)
 * when the header carries something shaped like a key; "-" otherwise, so that nothing
 * else a client puts there (another secret pasted by mistake) reaches the log. */
static void key_prefix(const char *authorization, char out[13])
{
    snprintf(out, 13, "-");
    if (authorization == NULL || strncasecmp(authorization, "Bearer ", 7) != 0)
        return;
    const char *key = authorization + 7;
    while (*key == ' ')
        key++;
    if (strncmp(key, "sk_live_", 8) != 0 && strncmp(key, "sk_test_", 8) != 0)
        return;
    char tail[5];
    memcpy(tail, key + 8, 4);
    tail[4] = '\0';
    if (strlen(key) < 12 || !token_valid(tail, 4, NULL))
        return;
    memcpy(out, key, 12);
    out[12] = '\0';
}

void ops_request_done(request *r, long long duration_us)
{
    count_reconnects(r->w);
    bool operational = r->route != NULL && r->route->ops != NULL;
    if (!operational)
        metrics_active(ops_the_pool.shared, clock_ms());
    metrics_busy(ops_the_pool.shared, false);
    if (operational)
        return; /* /healthz and /metrics are neither counted nor logged */
    size_t route = routes_slot(r->route);
    if (duration_us < 0)
        duration_us = 0;
    metrics_add(ops_the_pool.shared, C_REQUESTS + route * N_STATUSES + status_index(r->status), 1);
    metrics_add(ops_the_pool.shared, C_BUCKETS + route * (N_BOUNDS + 1) + bucket_index(duration_us),
                1);
    metrics_add(ops_the_pool.shared, C_DURATION_US + route, (uint64_t)duration_us);
    if (r->status == 429) /* the rate limit and the in-flight cap */
        metrics_add(ops_the_pool.shared, C_RATE_LIMITED, 1);
    if (r->status == 503)
        metrics_add(ops_the_pool.shared, r->timed_out ? C_DB_TIMED_OUT : C_DB_UNREACHABLE, 1);

    if (!r->w->cfg.request_log)
        return;
    char prefix[13];
    key_prefix(r->authorization, prefix);
    /* The method is a token nginx checked; the path is never logged (a download's path
     * is its credential). */
    log_info("request id=%s method=%s route=%s status=%d duration_ms=%.3f key=%s", r->request_id,
             r->method, ops_route_name(route), r->status, (double)duration_us / 1000.0, prefix);
}
