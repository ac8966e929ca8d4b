/* ops_routes: the operators' two routes, /healthz and /metrics (ops.h says who may reach
 * them): the pool's shared counters in the Prometheus text format (prom.h), with the
 * outbox and retention figures read from PostgreSQL at each scrape. */
#include "ops.h"

#include <stdio.h>

#include "handlers.h"
#include "log.h"
#include "ops_counters.h"
#include "prom.h"

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
                snprintf(status, sizeof status, "%d", ops_statuses[s]);
            else
                snprintf(status, sizeof status, "other");
            prom_u64(b, "market_http_requests_total",
                     (const char *const[]){"route", ops_route_name(route), "status", status, NULL},
                     n);
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
                       (const char *const[]){"route", ops_route_name(route), NULL}, ops_bounds,
                       N_BOUNDS, counts, (double)sum[C_DURATION_US + route] / 1e6);
    }
}

static void put_pool(buf *b, const uint64_t *sum, unsigned live)
{
    prom_family(b, "market_build_info", "gauge", "The version of market-api and its host.");
    prom_u64(
        b, "market_build_info",
        (const char *const[]){"version", ops_the_pool.version, "host", ops_the_pool.host, NULL}, 1);
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
    unsigned live = metrics_sum(ops_the_pool.shared, sum);
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
