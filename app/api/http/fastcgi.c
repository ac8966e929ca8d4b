/* fastcgi: libfcgi's side of a request, apart from main.c so that the worker's loop reads
 * without FastCGI's details: which parameter holds what (nginx passes each header line as
 * one), the request id a response echoes, the response's head. Holding and waiting on the
 * connections is fastcgi_conns.c's. */
#include "fastcgi.h"

#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "log.h"
#include "text.h"

/* How long a worker waits on a FastCGI connection that sends nothing more: nginx sends a
 * request's parameters and body at once, so only a stalled or hostile peer waits this. */
#define FCGI_READ_SECONDS 1

static const char *status_text(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 202:
        return "Accepted";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 413:
        return "Payload Too Large";
    case 415:
        return "Unsupported Media Type";
    case 429:
        return "Too Many Requests";
    case 503:
        return "Service Unavailable";
    default:
        return "Internal Server Error";
    }
}

bool fastcgi_init(fastcgi_server *c)
{
    if (FCGX_Init() != 0) {
        log_error("FCGX_Init failed");
        return false;
    }
    fastcgi_conns_init(&c->conns, 0, FCGI_READ_SECONDS);
    c->fcgi = NULL;
    return true;
}

bool fastcgi_waiting(fastcgi_server *c)
{
    return fastcgi_conns_busy(&c->conns);
}

bool fastcgi_accept(fastcgi_server *c, const fastcgi_idle *idle)
{
    c->fcgi = fastcgi_conns_next(&c->conns, idle);
    return c->fcgi != NULL;
}

int fastcgi_fd(const fastcgi_server *c)
{
    return c->fcgi->ipcFd;
}

/* How many times the FastCGI parameter name was sent: nginx passes each header line as a
 * parameter of its own, and libfcgi's FCGX_GetParam answers only the first. */
static int param_count(FCGX_ParamArray env, const char *name)
{
    size_t len = strlen(name);
    int n = 0;
    for (; *env != NULL; env++)
        if (strncmp(*env, name, len) == 0 && (*env)[len] == '=')
            n++;
    return n;
}

void fastcgi_read_request(fastcgi_server *c, request *r)
{
    FCGX_ParamArray env = c->fcgi->envp;
    r->fcgi = c->fcgi;
    r->method = FCGX_GetParam("REQUEST_METHOD", env);
    if (r->method == NULL)
        r->method = "GET";

    /* The raw request URI, as the client sent it: nginx's $uri is decoded and merged. */
    const char *uri = FCGX_GetParam("REQUEST_URI", env);
    if (uri == NULL)
        uri = FCGX_GetParam("DOCUMENT_URI", env);
    if (uri == NULL)
        uri = "/";
    r->path = uri;
    r->path_len = strcspn(uri, "?");
    r->query = uri[r->path_len] == '?' ? uri + r->path_len + 1 : "";

    r->content_type = FCGX_GetParam("CONTENT_TYPE", env);
    const char *length = FCGX_GetParam("CONTENT_LENGTH", env);
    r->content_length = (length != NULL && *length != '\0') ? strtoll(length, NULL, 10) : -1;
    r->authorization = FCGX_GetParam("HTTP_AUTHORIZATION", env);
    r->ops_mark = FCGX_GetParam("MARKET_OPS", env);
    r->idempotency_key = FCGX_GetParam("HTTP_IDEMPOTENCY_KEY", env);
    r->idempotency_key_repeated = param_count(env, "HTTP_IDEMPOTENCY_KEY") > 1;

    /* Echo a sane client id; else nginx's $request_id (REQUEST_ID) so that the access log
     * and the response agree; else one of our own. */
    const char *id = FCGX_GetParam("HTTP_X_REQUEST_ID", env);
    if (id == NULL || !token_valid(id, 64, "._-"))
        id = FCGX_GetParam("REQUEST_ID", env);
    if (id == NULL || !token_valid(id, 64, "._-")) {
        char *fresh = arena_alloc(r->arena, 33);
        memcpy(fresh, "req_", sizeof "req_");
        crypto_random_alnum(fresh + 4, 24);
        id = fresh;
    }
    r->request_id = id;
    r->status = 200;
}

void fastcgi_write_response(fastcgi_server *c, const request *r, buf *head)
{
    buf_clear(head);
    buf_printf(head, "Status: %d %s\r\n", r->status, status_text(r->status));
    /* A download answers with an X-Accel-Redirect: nginx sends the file and its type. */
    bool own_body = !r->accel_redirect;
    if (own_body)
        buf_printf(head, "Content-Type: %s\r\n",
                   r->response_type != NULL ? r->response_type : "application/json; charset=utf-8");
    buf_printf(head, "X-Request-Id: %s\r\n", r->request_id);
    buf_puts(head, "Cache-Control: no-store\r\n");
    if (own_body)
        buf_printf(head, "Content-Length: %zu\r\n", r->body->len);
    buf_append(head, r->headers->data, r->headers->len);
    buf_puts(head, "\r\n");
    /* When nginx is gone (its client left, say) the answer has no reader: the connection
     * is closed, as libfcgi did, and nothing is logged but the request's line. */
    struct iovec pieces[2] = {{head->data, head->len}, {r->body->data, r->body->len}};
    (void)fastcgi_conns_reply(c->fcgi, pieces, strcmp(r->method, "HEAD") != 0 ? 2 : 1);
}

void fastcgi_finish(fastcgi_server *c)
{
    fastcgi_conns_finish(&c->conns, c->fcgi);
    c->fcgi = NULL;
}

void fastcgi_catch_stop(void)
{
    fastcgi_conns_catch_stop();
}

bool fastcgi_stop_pending(void)
{
    return fastcgi_conns_stop_pending();
}

void fastcgi_tick(fastcgi_server *c, int every_ms, void (*tick)(void *arg), void *arg)
{
    fastcgi_conns_tick(&c->conns, every_ms, tick, arg);
}
