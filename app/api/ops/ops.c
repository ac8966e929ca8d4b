/* ops: the pool's shared file, seen from one worker: opened and claimed at start, with
 * the host's kept keys and rate budgets inside it (key_budget.h), the in-flight marks
 * of the cap on a key's concurrent requests, and the pool's activity that decides when
 * an idle pool stops. Which counter is which is ops_counters.h's; counting a request and
 * its log line are request_log.c's; /healthz and /metrics are ops_routes.c's. */
#include "ops.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "clock.h"
#include "key_budget.h"
#include "log.h"
#include "ops_counters.h"

/* Keys a host keeps at once (key_budget.h): more, and the rest are checked by the
 * database on every request. */
#define KEY_SLOTS 8192

const int ops_statuses[N_STATUSES - 1] = {200, 201, 202, 400, 401, 403, 404, 405,
                                          409, 410, 413, 415, 429, 500, 503};

/* A catalogue page takes about a millisecond. */
const double ops_bounds[N_BOUNDS] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                     0.1,    0.25,  0.5,    1,     2.5,  5};

ops_pool ops_the_pool;

const char *ops_route_name(size_t slot)
{
    return slot == 0 ? "none" : routes_at(slot - 1)->name;
}

bool ops_init(worker *w, const char *program_version, char *err, size_t errlen)
{
    ops_the_pool.version = program_version;
    ops_the_pool.shared = metrics_open(w->cfg.metrics_file, OPS_LAYOUT, C_COUNT,
                                       key_budget_size(KEY_SLOTS), err, errlen);
    if (ops_the_pool.shared == NULL)
        return false;
    /* The host's name in rate_counters: random, kept by the file for the pool's life. */
    uint64_t host_id = 0;
    if (getrandom(&host_id, sizeof host_id, 0) != (ssize_t)sizeof host_id) {
        snprintf(err, errlen, "getrandom failed");
        return false;
    }
    w->keys = key_budget_attach(metrics_region(ops_the_pool.shared), KEY_SLOTS, host_id);
    if (!metrics_claim(ops_the_pool.shared, getpid()))
        log_error("all %d slots of %s belong to live workers: this worker's counts are not "
                  "shared",
                  METRICS_SLOTS, w->cfg.metrics_file);
    metrics_active(ops_the_pool.shared, clock_ms()); /* a pool that starts is not idle */
    if (gethostname(ops_the_pool.host, sizeof ops_the_pool.host - 1) != 0)
        snprintf(ops_the_pool.host, sizeof ops_the_pool.host, "unknown");
    return true;
}

bool ops_key_enter(const unsigned char *key_hash, long cap)
{
    uint64_t fingerprint = 0;
    memcpy(&fingerprint, key_hash, sizeof fingerprint);
    if (fingerprint == 0) /* 0 means "nothing" in the shared file */
        fingerprint = 1;
    metrics_serve(ops_the_pool.shared, fingerprint);
    if ((long)metrics_serving(ops_the_pool.shared, fingerprint) < cap)
        return true;
    metrics_serve(ops_the_pool.shared, 0);
    return false;
}

void ops_key_leave(void)
{
    metrics_serve(ops_the_pool.shared, 0);
}

void ops_request_begin(void)
{
    metrics_busy(ops_the_pool.shared, true);
}

long long ops_pool_idle_ms(void)
{
    return metrics_idle_ms(ops_the_pool.shared, clock_ms());
}

bool ops_pool_leads(void)
{
    return metrics_leads(ops_the_pool.shared);
}
