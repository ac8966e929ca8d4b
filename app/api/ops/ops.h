/* ops: what a pool tells its operators, outside the API's routes.
 *
 *   - /healthz and /metrics (handle_healthz, handle_metrics: handlers.h): routes of the
 *     table (routes.c) found only when nginx marks the request with the FastCGI
 *     parameter MARKET_OPS ("healthz" or "metrics"; nginx sets it for the addresses it
 *     lets in, and a client cannot, since its headers arrive as HTTP_*). Without it the
 *     same paths are unknown routes like any other. Neither takes a key nor counts
 *     against a rate limit; another method is the table's 405 (ops_routes.c).
 *   - the counters behind /metrics, shared by the pool's workers (metrics.h; which is
 *     which: ops_counters.h), in the pool's file that ops.c opens;
 *   - the request log: one line per API request on stderr (request_log.c). */
#ifndef MARKET_API_OPS_H
#define MARKET_API_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "request.h"

/* Opens the pool's shared counters (MARKET_METRICS_FILE) and claims this worker's slot,
 * and attaches w->keys, the host's keys and rate budgets kept in the same file;
 * version is what /metrics reports (market_build_info). False with one line in err when
 * the file cannot be had. */
bool ops_init(worker *w, const char *version, char *err, size_t errlen);

/* The in-flight cap (docs/contract.md section 3): this worker takes on a request of the
 * key whose SHA-256 is key_hash, unless `cap` workers of the pool already serve that key
 * (false: the caller refuses the request). ops_key_leave ends it; a worker that dies
 * holds nothing (the pool's shared file says which workers are alive). */
bool ops_key_enter(const unsigned char *key_hash, long cap);
void ops_key_leave(void);

/* A request is being served: the pool is busy (metrics_busy) until ops_request_done. */
void ops_request_begin(void);

/* How long the whole pool has answered no API request, in milliseconds; -1 while one of
 * its workers serves a request (app/api/ops/metrics.h, metrics_idle_ms). A worker's start counts
 * as activity, so that a pool started for a connection has the whole period. */
long long ops_pool_idle_ms(void);

/* True for one worker of the pool at a time (metrics_leads): the one that looks whether
 * the pool is idle, so that two never stop it together. */
bool ops_pool_leads(void);

/* Counts an answered API request and logs its line (an operational request is neither
 * counted nor logged, nor is it activity: a monitor polling /healthz keeps no pool
 * awake); duration_us is the time the worker spent on it. Call before
 * FCGX_Finish (the request's strings live until then). */
void ops_request_done(request *r, long long duration_us);

#endif
