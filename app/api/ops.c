/* ops: the operators' side of a worker, kept out of the files of the request path: the
 * shared counters and their Prometheus text, /healthz, the in-flight cap's bookkeeping and
 * the request log line. What each counter means is known here alone (OPS_LAYOUT);
 * lib/metrics only keeps them. */
#include "ops.h"

#include <fcgiapp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "metrics.h"
#include "prom.h"
#include "handlers.h"
#include "key_budget.h"
#include "routes.h"
#include "text.h"

/* The counters of lib/metrics, in this order. A change of their meaning or number must
 * change OPS_LAYOUT, so that a running pool's old file is replaced, never misread. */
#define OPS_LAYOUT 6
/* Keys a host keeps at once (lib/key_budget.h): more, and the rest are checked by the
 * database on every request. */
#define KEY_SLOTS 8192
/* Slot 0 counts requests that matched no route (404, or 401 before the route was
 * known); slot i + 1 the i-th route of the table (routes.h). */
#define N_ROUTES (ROUTES_COUNT + 1)

static const char *route_name(size_t slot)
{
    return slot == 0 ? "none" : routes_at(slot - 1)->name;
}

/* Every status the worker answers; anything else counts as "other". */
static const int statuses[] = {200, 201, 202, 400, 401, 403, 404, 405,
                               409, 410, 413, 415, 429, 500, 503};
#define N_STATUSES ((int)(sizeof statuses / sizeof statuses[0]) + 1)

/* Latency buckets, seconds: a catalogue page takes about a millisecond. */
static const double bounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                0.1,    0.25,  0.5,    1,     2.5,  5};
#define N_BOUNDS ((int)(sizeof bounds / sizeof bounds[0]))

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

/* Statement: the database answers at all. */
DB_STMT(ops_health, "SELECT 1", 0);

/* The outbox as every drainer left it, whichever host it ran on. The retry backlog is
 * what waits for another attempt after a failed one. */
DB_STMT(ops_outbox,
        "SELECT count(*) FILTER (WHERE status = 'pending'),"
        "       count(*) FILTER (WHERE status = 'delivered'),"
        "       count(*) FILTER (WHERE status = 'failed'),"
        "       count(*) FILTER (WHERE status = 'endpoint_deleted'),"
        "       count(*) FILTER (WHERE status = 'pending' AND attempts > 0),"
        "       COALESCE(extract(epoch FROM clock_timestamp() -"
        "                min(created_at) FILTER (WHERE status = 'pending')), 0)"
        "  FROM webhook_deliveries",
        0);

enum { O_PENDING, O_DELIVERED, O_FAILED, O_ENDPOINT_DELETED, O_RETRYING, O_OLDEST_AGE };

/* What market-webhookd's retention passes pruned so far, per table, whichever drainer
 * ran them (one row per table: sql/migrations/008_retention.sql). */
DB_STMT(ops_retention,
        "SELECT relation, pruned, COALESCE(extract(epoch FROM last_pass_at), 0)"
        "  FROM retention_totals ORDER BY relation",
        0);

enum { R_RELATION, R_PRUNED, R_LAST_PASS };

static metrics *shared;
static const char *version;
static char host[256];
static unsigned long connections_seen; /* db_connections() when last looked at */

bool ops_init(worker *w, const char *program_version, char *err, size_t errlen)
{
    version = program_version;
    shared = metrics_open(w->cfg.metrics_file, OPS_LAYOUT, C_COUNT, key_budget_size(KEY_SLOTS), err,
                          errlen);
    if (shared == NULL)
        return false;
    /* The host's name in rate_counters: random, kept by the file for the pool's life. */
    uint64_t host_id = 0;
    if (getrandom(&host_id, sizeof host_id, 0) != (ssize_t)sizeof host_id) {
        snprintf(err, errlen, "getrandom failed");
        return false;
    }
    w->keys = key_budget_attach(metrics_region(shared), KEY_SLOTS, host_id);
    if (!metrics_claim(shared, getpid()))
        log_error("all %d slots of %s belong to live workers: this worker's counts are not "
                  "shared",
                  METRICS_SLOTS, w->cfg.metrics_file);
    metrics_active(shared, clock_ms()); /* a pool that starts is not idle */
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown");
    return true;
}

bool ops_key_enter(const unsigned char *key_hash, long cap)
{
    uint64_t fingerprint = 0;
    memcpy(&fingerprint, key_hash, sizeof fingerprint);
    if (fingerprint == 0) /* 0 means "nothing" in the shared file */
        fingerprint = 1;
    metrics_serve(shared, fingerprint);
    if ((long)metrics_serving(shared, fingerprint) < cap)
        return true;
    metrics_serve(shared, 0);
    return false;
}

void ops_key_leave(void)
{
    metrics_serve(shared, 0);
}

void ops_request_begin(void)
{
    metrics_busy(shared, true);
}

long long ops_pool_idle_ms(void)
{
    return metrics_idle_ms(shared, clock_ms());
}

bool ops_pool_leads(void)
{
    return metrics_leads(shared);
}

/* Every connection after the worker's first is a reconnect. */
static void count_reconnects(worker *w)
{
    unsigned long now = db_connections(w->db);
    unsigned long base = connections_seen > 1 ? connections_seen : 1;
    if (now > base)
        metrics_add(shared, C_DB_RECONNECTS, now - base);
    if (now > connections_seen)
        connections_seen = now;
}

static int status_index(int status)
{
    for (int i = 0; i < N_STATUSES - 1; i++)
        if (statuses[i] == status)
            return i;
    return N_STATUSES - 1;
}

static int bucket_index(long long duration_us)
{
    for (int i = 0; i < N_BOUNDS; i++)
        if ((double)duration_us <= bounds[i] * 1e6)
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
        metrics_active(shared, clock_ms());
    metrics_busy(shared, false);
    if (operational)
        return; /* /healthz and /metrics are neither counted nor logged */
    size_t route = routes_slot(r->route);
    if (duration_us < 0)
        duration_us = 0;
    metrics_add(shared, C_REQUESTS + route * N_STATUSES + status_index(r->status), 1);
    metrics_add(shared, C_BUCKETS + route * (N_BOUNDS + 1) + bucket_index(duration_us), 1);
    metrics_add(shared, C_DURATION_US + route, (uint64_t)duration_us);
    if (r->status == 429) /* the rate limit and the in-flight cap */
        metrics_add(shared, C_RATE_LIMITED, 1);
    if (r->status == 503)
        metrics_add(shared, r->timed_out ? C_DB_TIMED_OUT : C_DB_UNREACHABLE, 1);

    if (!r->w->cfg.request_log)
        return;
    char prefix[13];
    key_prefix(r->authorization, prefix);
    /* The method is a token nginx checked; the path is never logged (a download's path
     * is its credential). */
    log_info("request id=%s method=%s route=%s status=%d duration_ms=%.3f key=%s", r->request_id,
             r->method, route_name(route), r->status, (double)duration_us / 1000.0, prefix);
}

void handle_healthz(request *r)
{
    db_result *res = request_query(r, &ops_health, NULL);
    if (res == NULL)
        return; /* 503 service_unavailable (or 500) answered */
    respond_json(r, 200);
    jw_object_begin(&r->json);
    jw_kv_string(&r->json, "status", "ok");
    jw_object_end(&r->json);
}

static void put_requests(buf *b, const uint64_t *sum)
{
    prom_family(b, "market_http_requests_total", "counter",
                "API requests answered by the pool's workers, by route and status.");
    for (size_t route = 0; route < N_ROUTES; route++) {
        for (int s = 0; s < N_STATUSES; s++) {
            uint64_t n = sum[C_REQUESTS + route * N_STATUSES + s];
            if (n == 0)
                continue;
            char status[16];
            if (s < N_STATUSES - 1)
                snprintf(status, sizeof status, "%d", statuses[s]);
            else
                snprintf(status, sizeof status, "other");
            prom_u64(b, "market_http_requests_total",
                     (const char *const[]){"route", route_name(route), "status", status, NULL}, n);
        }
    }
    prom_family(b, "market_http_request_duration_seconds", "histogram",
                "Time a worker spent on an API request, by route.");
    for (size_t route = 0; route < N_ROUTES; route++) {
        const uint64_t *counts = &sum[C_BUCKETS + route * (N_BOUNDS + 1)];
        uint64_t total = 0;
        for (int i = 0; i <= N_BOUNDS; i++)
            total += counts[i];
        if (total == 0)
            continue;
        prom_histogram(b, "market_http_request_duration_seconds",
                       (const char *const[]){"route", route_name(route), NULL}, bounds, N_BOUNDS,
                       counts, (double)sum[C_DURATION_US + route] / 1e6);
    }
}

static void put_pool(buf *b, const uint64_t *sum, unsigned live)
{
    prom_family(b, "market_build_info", "gauge", "The version of market-api and its host.");
    prom_u64(b, "market_build_info", (const char *const[]){"version", version, "host", host, NULL},
             1);
    prom_family(b, "market_api_workers", "gauge",
                "Live worker processes sharing these counters (MARKET_METRICS_FILE).");
    prom_u64(b, "market_api_workers", NULL, live);
    prom_family(b, "market_db_reconnects_total", "counter",
                "Database connections the workers opened after their first one.");
    prom_u64(b, "market_db_reconnects_total", NULL, sum[C_DB_RECONNECTS]);
    prom_family(b, "market_rate_limited_total", "counter",
                "API requests refused by the rate limit (429).");
    prom_u64(b, "market_rate_limited_total", NULL, sum[C_RATE_LIMITED]);
    prom_family(b, "market_db_unavailable_total", "counter",
                "API requests answered 503 for the database, by cause: unreachable (no "
                "connection) or timeout (a statement outlived MARKET_STATEMENT_TIMEOUT).");
    prom_u64(b, "market_db_unavailable_total", (const char *const[]){"cause", "unreachable", NULL},
             sum[C_DB_UNREACHABLE]);
    prom_u64(b, "market_db_unavailable_total", (const char *const[]){"cause", "timeout", NULL},
             sum[C_DB_TIMED_OUT]);
}

/* The outbox figures, read now from PostgreSQL; false when the database did not answer. */
static bool put_outbox(request *r, buf *b)
{
    db_result *res = db_exec(r->w->db, &ops_outbox, NULL);
    if (!db_ok(res)) {
        if (res != NULL)
            log_error("metrics: outbox query failed: %s", db_message(res));
        db_clear(res);
        return false;
    }
    prom_family(b, "market_webhook_deliveries", "gauge",
                "Webhook deliveries in the outbox, by status.");
    static const struct {
        const char *status;
        int column;
    } by_status[] = {{"pending", O_PENDING},
                     {"delivered", O_DELIVERED},
                     {"failed", O_FAILED},
                     {"endpoint_deleted", O_ENDPOINT_DELETED}};
    for (size_t i = 0; i < sizeof by_status / sizeof by_status[0]; i++)
        prom_u64(b, "market_webhook_deliveries",
                 (const char *const[]){"status", by_status[i].status, NULL},
                 (uint64_t)db_int(res, 0, by_status[i].column));
    prom_family(b, "market_webhook_retry_backlog", "gauge",
                "Pending deliveries that failed at least once and wait for a retry.");
    prom_u64(b, "market_webhook_retry_backlog", NULL, (uint64_t)db_int(res, 0, O_RETRYING));
    prom_family(b, "market_webhook_oldest_pending_age_seconds", "gauge",
                "Age of the oldest pending delivery (0 when none is pending).");
    prom_f64(b, "market_webhook_oldest_pending_age_seconds", NULL, db_double(res, 0, O_OLDEST_AGE));
    db_clear(res);
    return true;
}

/* The retention figures, read now from PostgreSQL; false when the database did not
 * answer. */
static bool put_retention(request *r, buf *b)
{
    db_result *res = db_exec(r->w->db, &ops_retention, NULL);
    if (!db_ok(res)) {
        if (res != NULL)
            log_error("metrics: retention query failed: %s", db_message(res));
        db_clear(res);
        return false;
    }
    prom_family(b, "market_retention_pruned_rows_total", "counter",
                "Rows the retention passes of market-webhookd deleted, by table.");
    double last = 0;
    for (int i = 0; i < db_rows(res); i++) {
        prom_u64(b, "market_retention_pruned_rows_total",
                 (const char *const[]){"table", db_text(res, i, R_RELATION), NULL},
                 (uint64_t)db_int(res, i, R_PRUNED));
        double at = db_double(res, i, R_LAST_PASS);
        if (at > last)
            last = at;
    }
    prom_family(b, "market_retention_last_pass_timestamp_seconds", "gauge",
                "When the last retention pass ended, Unix time (0 before the first).");
    prom_f64(b, "market_retention_last_pass_timestamp_seconds", NULL, last);
    db_clear(res);
    return true;
}

void handle_metrics(request *r)
{
    static uint64_t sum[C_COUNT];
    unsigned live = metrics_sum(shared, sum);
    r->status = 200;
    r->response_type = PROM_CONTENT_TYPE;
    buf_clear(r->body);
    put_pool(r->body, sum, live);
    put_requests(r->body, sum);
    bool db_up = put_outbox(r, r->body) && put_retention(r, r->body);
    prom_family(r->body, "market_database_up", "gauge",
                "1 when the database answered this scrape, 0 when it did not.");
    prom_u64(r->body, "market_database_up", NULL, db_up ? 1 : 0);
}
