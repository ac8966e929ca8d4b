/* ops: what a pool tells its operators, outside the API's routes.
 *
 *   - /healthz and /metrics (handle_healthz, handle_metrics: handlers.h): routes of the
 *     table (routes.c) found only when nginx marks the request with the FastCGI
 *     parameter MARKET_OPS ("healthz" or "metrics"; nginx sets it for the addresses it
 *     lets in, and a client cannot, since its headers arrive as HTTP_*). Without it the
 *     same paths are unknown routes like any other. Neither takes a key nor counts
 *     against a rate limit; another method is the table's 405.
 *   - the counters behind /metrics, shared by the pool's workers (lib/metrics.h);
 *   - the request log: one line per API request on stderr. */
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

/* Counts an answered API request and logs its line (an operational request is neither
 * counted nor logged); duration_us is the time the worker spent on it. Call before
 * FCGX_Finish (the request's strings live until then). */
void ops_request_done(request *r, long long duration_us);

#endif
