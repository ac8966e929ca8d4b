/* request: everything one API request carries, from FastCGI input to response bytes.
 *
 * A request lives from FCGX_Accept to FCGX_Finish. All its memory comes from its arena,
 * all its results are cleared and its parsed JSON body is released by request_end(),
 * so handlers allocate freely and never free. */
#ifndef MARKET_REQUEST_H
#define MARKET_REQUEST_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "buf.h"
#include "config.h"
#include "crypto.h"
#include "db.h"
#include "input.h"
#include "json_out.h"
#include "route.h"
#include "url.h"

#define REQUEST_MAX_RESULTS 16
#define REQUEST_MAX_BODY (16 * 1024)

/* The process-wide state every request shares (one per worker process). */
typedef struct {
    market_config cfg;
    db *db;
    uint8_t cursor_key[SHA256_LEN]; /* MAC key of pagination cursors */
    uint8_t link_key[SHA256_LEN];   /* MAC key of download link tokens */
    uint8_t secret_key[SHA256_LEN]; /* encryption key of webhook secrets at rest */
    uint8_t idem_key[SHA256_LEN];   /* encryption key of stored idempotent responses */
    const char *files_prefix;       /* path of MARKET_DOWNLOAD_BASE_URL, e.g. "/files" */
    struct ring_cache *pages;       /* recent catalogue answers (serve.c) */
    /* Moves on whenever a catalogue write is notified (serve.c): what a worker keeps of the
     * catalogue beside its pages (seller_get.c's counts) is valid for one generation. */
    unsigned long catalogue_generation;
    struct replica *replica; /* MARKET_DB_READ for catalogue reads, or NULL */
    struct key_budget *keys; /* the host's keys and rate budgets (auth.c), shared */
    buf page_key;            /* the current request's key into pages, reused */
} worker;

typedef struct api_route api_route; /* routes.h */

/* Every route's inputs as typed values: routes_read_input (routes.h) fills in those the
 * request's route declares (routes.c), each with its default when it was not given,
 * before the handler runs; the others keep their zero. */
typedef struct {
    const char *id; /* the path parameter, decoded (and of its route's shape: routes.c) */

    /* Query parameters. */
    long limit;         /* the page size, 1..PAGE_MAX, default PAGE_DEFAULT */
    const char *cursor; /* as given: the handler decodes it against what it is bound to */
    const char *category, *q, *seller;
    input_decimal min_price, max_price;
    int sort;   /* index in products_sorts (handlers.h); -1: not given */
    int status; /* index in orders_statuses; -1: not given */
    int type;   /* index in event_types; -1: not given */
    input_time created_gte, created_lt;

    /* JSON body fields. */
    long expires_in;    /* seconds; default MARKET_DOWNLOAD_TTL */
    long expire_old_in; /* seconds; default MARKET_WEBHOOK_SECRET_GRACE */
    const url_parts *url;
    unsigned events;         /* bit k: subscription_kinds[k] (subscription.h) */
    const char *description; /* NULL: not given */
    int disabled;            /* -1: not given, 0 or 1 */
} api_input;

/* The authenticated API key. */
typedef struct {
    const char *key_id; /* api_keys.id as text */
    const char *account_id;
    const char *mode; /* "live" or "test" */
    bool read_write;
} api_caller;

typedef struct request {
    worker *w;
    arena *arena;
    void *fcgi; /* FCGX_Request *, kept opaque to handlers */

    /* Input, as FastCGI gave it. Absent headers are NULL. */
    const char *method;
    const char *path; /* up to '?' (not NUL-terminated there: use path_len) */
    size_t path_len;
    const char *query;
    const char *content_type;
    long long content_length; /* -1 when absent */
    const char *authorization;
    const char *idempotency_key;
    bool idempotency_key_repeated; /* the header was sent more than once */
    const char *request_id;

    const api_route *route; /* NULL until routes_find found one */
    /* "GET /v1/sellers/:id": the route as cursor contexts and idempotency records name it */
    const char *route_label;
    route_match match; /* its path parameter */
    api_input in;      /* the route's inputs, typed (routes_read_input) */
    /* The FastCGI parameter MARKET_OPS: nginx marks /healthz and /metrics with it for the
     * addresses it lets read them (ops.h); NULL otherwise. */
    const char *ops_mark;
    api_caller caller;

    /* Rate-limit headers: set once the key is known. */
    bool rate_known;
    bool over_in_flight; /* the key has its share of the host's workers (auth_begin) */
    long rate_limit, rate_remaining, rate_reset;

    /* Response. */
    int status;
    bool timed_out; /* a 503 because a statement outlived MARKET_STATEMENT_TIMEOUT (metrics) */
    const char *response_type; /* Content-Type of the body; NULL: the API's JSON */
    bool accel_redirect;       /* no body: nginx sends the file of X-Accel-Redirect */
    buf *headers;              /* extra "Name: value\r\n" lines */
    buf *body;
    json_writer json; /* writes into body */

    db_result *results[REQUEST_MAX_RESULTS];
    int result_count;
    json_object *json_body;
} request;

/* Starts a JSON response with status: clears the body and points r->json at it. */
void respond_json(request *r, int status);

/* Replaces the response with the error envelope of docs/contract.md section 4. param may be NULL.
 * Returns false so that callers can `return respond_error(...)` from bool functions. */
bool respond_error(request *r, int status, const char *type, const char *code, const char *param,
                   const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Shorthands for the common errors. */
bool respond_invalid(request *r, const char *code, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
bool respond_missing(request *r, const char *what);
/* 503 service_unavailable with Retry-After: 1, the message saying which cause: the
 * database could not be reached (no connection, a connection lost, a commit that did not
 * return), or it did not answer a statement within MARKET_STATEMENT_TIMEOUT (a slow
 * statement, a lock wait). /metrics counts the two apart (ops.c). */
bool respond_unavailable(request *r);
bool respond_timed_out(request *r);
bool respond_internal(request *r);

/* Adds a response header. The value must not contain CR or LF (it is checked). */
void response_header(request *r, const char *name, const char *value);

/* Runs a prepared statement for this request. On a lost database it answers 503, on an
 * SQL error 500 (logged), and returns NULL; else the result, owned by the request. */
db_result *request_query(request *r, db_stmt *stmt, const char *const *params);

/* Runs n statements in one round trip (db_exec_pipeline); out[i] is each result (NULL for
 * one that did not run), owned by the request. Answers 503 and returns false when the
 * database is unreachable. Check each result with request_result_ok. */
bool request_query_pipeline(request *r, int n, db_stmt *const *stmts,
                            const char *const *const *params, db_result **out);

/* True when res is a successful result of stmt; otherwise logs it and answers 500. */
bool request_result_ok(request *r, const db_stmt *stmt, const db_result *res);

/* A buffer whose memory is the request's arena: it is never freed on its own. */
buf *request_buf(request *r, size_t cap);

/* Makes res the request's: it is cleared when the request ends. */
db_result *request_keep(request *r, db_result *res);

/* Like request_query but keeps SQL errors for the caller (status not OK is returned, still
 * owned by the request) so it can map a constraint violation to a 4xx. NULL = db down. */
db_result *request_query_raw(request *r, db_stmt *stmt, const char *const *params);

/* Reads and parses a JSON object body. No body at all gives *out = NULL and true.
 * Answers 415 (not application/json), 413 (over 16 KiB), 400 body_invalid_json (not a
 * JSON object), 400 parameter_unknown (a field outside `fields`) and returns false. */
bool request_json_body(request *r, const char *const *fields, json_object **out);

/* Decodes the route's path parameter (percent-decoding, UTF-8, no NUL, <= max bytes);
 * answers 400 parameter_invalid naming it as the pattern does ("id") and returns NULL on
 * failure. */
const char *request_path_param(request *r, size_t max);

#endif
