/* request: what every handler answers through, so that all routes answer alike: the error
 * envelope of docs/contract.md section 4, the 503 a database failure becomes, the results
 * kept until the request ends, and the body read and checked before a handler sees it. */
#include "request.h"

#include <fcgiapp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_body.h"
#include "log.h"
#include "text.h"

void respond_json(request *r, int status)
{
    r->status = status;
    buf_clear(r->body);
    jw_init(&r->json, r->body);
}

static bool __attribute__((format(printf, 6, 0)))
respond_verror(request *r, int status, const char *type, const char *code, const char *param,
               const char *fmt, va_list ap)
{
    char message[512];
    vsnprintf(message, sizeof message, fmt, ap);
    respond_json(r, status);
    json_writer *j = &r->json;
    jw_object_begin(j);
    jw_key(j, "error");
    jw_object_begin(j);
    jw_kv_string(j, "type", type);
    jw_kv_string(j, "code", code);
    jw_kv_string(j, "message", message);
    if (param != NULL)
        jw_kv_string(j, "param", param);
    jw_kv_string(j, "request_id", r->request_id);
    jw_object_end(j);
    jw_object_end(j);
    return false;
}

bool respond_error(request *r, int status, const char *type, const char *code, const char *param,
                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    respond_verror(r, status, type, code, param, fmt, ap);
    va_end(ap);
    return false;
}

bool respond_invalid(request *r, const char *code, const char *param, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    respond_verror(r, 400, "invalid_request_error", code, param, fmt, ap);
    va_end(ap);
    return false;
}

bool respond_missing(request *r, const char *what)
{
    return respond_error(r, 404, "invalid_request_error", "resource_missing", "id", "no such %s",
                         what);
}

bool respond_unavailable(request *r)
{
    response_header(r, "Retry-After", "1");
    r->timed_out = false;
    return respond_error(r, 503, "api_error", "service_unavailable", NULL,
                         "the database is unreachable; retry shortly");
}

bool respond_timed_out(request *r)
{
    response_header(r, "Retry-After", "1");
    r->timed_out = true;
    return respond_error(r, 503, "api_error", "service_unavailable", NULL,
                         "the database did not answer within MARKET_STATEMENT_TIMEOUT (%ld ms); "
                         "retry shortly",
                         r->w->cfg.statement_timeout_ms);
}

bool respond_internal(request *r)
{
    return respond_error(r, 500, "api_error", "internal_error", NULL,
                         "an internal error occurred; quote the request_id when reporting it");
}

void response_header(request *r, const char *name, const char *value)
{
    /* A CR or LF in a value would let it inject headers: refuse rather than send. */
    if (strpbrk(value, "\r\n") != NULL) {
        log_error("refused a header %s with a line break", name);
        return;
    }
    buf_printf(r->headers, "%s: %s\r\n", name, value);
}

buf *request_buf(request *r, size_t cap)
{
    buf *b = arena_alloc(r->arena, sizeof *b);
    buf_init_arena(b, r->arena, cap);
    return b;
}

db_result *request_keep(request *r, db_result *res)
{
    if (r->result_count == REQUEST_MAX_RESULTS)
        abort(); /* handlers run a few statements; more is a programming error */
    r->results[r->result_count++] = res;
    return res;
}

db_result *request_query_raw(request *r, db_stmt *stmt, const char *const *params)
{
    db_result *res = db_exec(r->w->db, stmt, params);
    if (res == NULL) {
        respond_unavailable(r);
        return NULL;
    }
    return request_keep(r, res);
}

bool request_result_ok(request *r, const db_stmt *stmt, const db_result *res)
{
    if (db_ok(res))
        return true;
    if (strcmp(db_sqlstate(res), DB_STATEMENT_TIMEOUT) == 0) {
        /* Not the caller's fault, nor a bug: the bound every request has, or a client that
         * went away (nginx closed the connection: no one reads the answer). */
        if (db_watch_fired(r->w->db))
            log_error("statement %s cancelled: the client went away", stmt->name);
        else
            log_error("statement %s cancelled after MARKET_STATEMENT_TIMEOUT (%ld ms)", stmt->name,
                      r->w->cfg.statement_timeout_ms);
        return respond_timed_out(r);
    }
    log_error("statement %s failed: %s", stmt->name, res != NULL ? db_message(res) : "not run");
    return respond_internal(r);
}

db_result *request_query(request *r, db_stmt *stmt, const char *const *params)
{
    db_result *res = request_query_raw(r, stmt, params);
    if (res == NULL || !request_result_ok(r, stmt, res))
        return NULL;
    return res;
}

bool request_query_pipeline(request *r, int n, db_stmt *const *stmts,
                            const char *const *const *params, db_result **out)
{
    if (!db_exec_pipeline(r->w->db, n, stmts, params, out))
        return respond_unavailable(r);
    for (int i = 0; i < n; i++)
        if (out[i] != NULL)
            request_keep(r, out[i]);
    return true;
}

static bool content_type_is_json(const char *ct)
{
    /* "application/json", optionally followed by parameters such as "; charset=utf-8". */
    if (ct == NULL || strncasecmp(ct, "application/json", 16) != 0)
        return false;
    return ct[16] == '\0' || ct[16] == ';' || ct[16] == ' ';
}

/* Reads the body into the arena; false (413 answered) when it is over the limit. */
static bool read_raw_body(request *r, char **data, size_t *len)
{
    FCGX_Request *fcgi = r->fcgi;
    if (r->content_length > REQUEST_MAX_BODY)
        return respond_error(r, 413, "invalid_request_error", "body_too_large", NULL,
                             "the request body is over %d bytes", REQUEST_MAX_BODY);
    char *p = arena_alloc(r->arena, REQUEST_MAX_BODY + 2);
    int n = FCGX_GetStr(p, REQUEST_MAX_BODY + 1, fcgi->in);
    if (n < 0)
        n = 0;
    if (n > REQUEST_MAX_BODY)
        return respond_error(r, 413, "invalid_request_error", "body_too_large", NULL,
                             "the request body is over %d bytes", REQUEST_MAX_BODY);
    p[n] = '\0';
    *data = p;
    *len = (size_t)n;
    return true;
}

bool request_json_body(request *r, const char *const *fields, json_object **out)
{
    *out = NULL;
    char *data = NULL;
    size_t len = 0;
    if (r->content_length > 0 && !content_type_is_json(r->content_type))
        return respond_error(r, 415, "invalid_request_error", "unsupported_media_type", NULL,
                             "the request body must be application/json");
    if (!read_raw_body(r, &data, &len))
        return false;
    if (len == 0)
        return true;
    if (!content_type_is_json(r->content_type))
        return respond_error(r, 415, "invalid_request_error", "unsupported_media_type", NULL,
                             "the request body must be application/json");
    json_body_error err;
    json_object *obj;
    if (!json_body_parse(data, len, fields, &obj, &err)) {
        /* A field of empty name is still the one at fault: param "" names it. */
        const char *param = err.named ? arena_strdup(r->arena, err.param) : NULL;
        return respond_invalid(r, err.code, param, "%s", err.message);
    }
    r->json_body = obj; /* released by request_end */
    *out = obj;
    return true;
}

const char *request_path_param(request *r, size_t max)
{
    const char *raw = r->match.param;
    size_t raw_len = r->match.param_len;
    char *out = arena_alloc(r->arena, raw_len + 1);
    size_t len;
    if (raw_len > 3 * max || !percent_decode(raw, raw_len, false, out, &len) || len > max) {
        const char *name = arena_strndup(r->arena, r->match.param_name, r->match.param_name_len);
        respond_invalid(r, "parameter_invalid", name,
                        "%s must be at most %zu bytes of valid percent-encoded UTF-8", name, max);
        return NULL;
    }
    return out;
}
