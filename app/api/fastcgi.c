#include "fastcgi.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

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

/* libfcgi closes a connection gracefully: shutdown, then it waits for the web server to
 * close its side and reads until then, so that unread input cannot turn the close into a
 * reset that cuts the response short. On a Unix socket, once the request's input is read
 * to its end, a plain close loses nothing, so the worker closes at once and takes the
 * next request without waiting for nginx (FCGX_Detach makes libfcgi's close plain). */
static bool listens_on_unix_socket(void)
{
    struct sockaddr_storage addr = {0};
    socklen_t len = sizeof addr;
    return getsockname(0, (struct sockaddr *)&addr, &len) == 0 && addr.ss_family == AF_UNIX;
}

/* SIGALRM only interrupts a read (see accept_bounded): no SA_RESTART, nothing else. */
static void on_alarm(int signal_number)
{
    (void)signal_number;
}

/* FCGX_Accept_r, bounded: libfcgi accepts a connection and then reads its parameters with
 * blocking reads, so a peer that connects and stalls would hold the worker for good.
 * The worker waits for a connection first (as long as it takes), then lets libfcgi work
 * under a timer that fires every FCGI_READ_SECONDS: it interrupts a read that waits that
 * long, and libfcgi drops that connection and accepts the next, also under the timer (an
 * interrupted accept is retried). nginx writes a request as soon as it connects, so its
 * reads never wait that long. The connection's later reads and writes (the body, the
 * answer) get the same bound as socket timeouts. */
static int accept_bounded(FCGX_Request *fcgi, const fastcgi_idle *idle)
{
    for (;;) {
        /* While it waits, the worker also hears its database (idle->fd): what is notified
         * there may not wait for the next request (auth.c: a host gives back budget). */
        int wake_fd = idle != NULL ? idle->fd(idle->arg) : -1;
        struct pollfd fds[2] = {{.fd = 0, .events = POLLIN}, {.fd = wake_fd, .events = POLLIN}};
        int n = poll(fds, wake_fd >= 0 ? 2 : 1, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n > 0 && wake_fd >= 0 && fds[1].revents != 0)
            idle->wake(idle->arg);
        if (n < 0 || fds[0].revents != 0)
            break;
    }
    struct itimerval every = {.it_interval = {.tv_sec = FCGI_READ_SECONDS},
                              .it_value = {.tv_sec = FCGI_READ_SECONDS}};
    struct itimerval off = {0};
    setitimer(ITIMER_REAL, &every, NULL);
    int accepted = FCGX_Accept_r(fcgi);
    setitimer(ITIMER_REAL, &off, NULL);
    if (accepted < 0)
        return accepted;
    struct timeval bound = {.tv_sec = FCGI_READ_SECONDS};
    setsockopt(fcgi->ipcFd, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
    setsockopt(fcgi->ipcFd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound);
    return accepted;
}

/* Reads what is left of the request body (nginx bounds it), so that nothing is unread
 * when the connection closes; false if it did not end. */
static bool drain_input(FCGX_Request *fcgi)
{
    char scratch[4096];
    for (int i = 0; i < 64; i++) {
        if (FCGX_GetStr(scratch, sizeof scratch, fcgi->in) < (int)sizeof scratch)
            return FCGX_GetError(fcgi->in) == 0;
    }
    return false;
}

bool fastcgi_init(fastcgi_conn *c)
{
    struct sigaction alarm_action = {.sa_handler = on_alarm};
    sigemptyset(&alarm_action.sa_mask);
    sigaction(SIGALRM, &alarm_action, NULL);
    if (FCGX_Init() != 0) {
        log_error("FCGX_Init failed");
        return false;
    }
    FCGX_InitRequest(&c->fcgi, 0, 0);
    c->plain_close = listens_on_unix_socket();
    return true;
}

bool fastcgi_waiting(void)
{
    struct pollfd listener = {.fd = 0, .events = POLLIN};
    return poll(&listener, 1, 0) > 0;
}

bool fastcgi_accept(fastcgi_conn *c, const fastcgi_idle *idle)
{
    return accept_bounded(&c->fcgi, idle) >= 0;
}

int fastcgi_fd(const fastcgi_conn *c)
{
    return c->fcgi.ipcFd;
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

void fastcgi_read_request(fastcgi_conn *c, request *r)
{
    FCGX_ParamArray env = c->fcgi.envp;
    r->fcgi = &c->fcgi;
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

void fastcgi_write_response(fastcgi_conn *c, const request *r, buf *head)
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
    FCGX_PutStr(head->data, (int)head->len, c->fcgi.out);
    if (strcmp(r->method, "HEAD") != 0)
        FCGX_PutStr(r->body->data, (int)r->body->len, c->fcgi.out);
}

void fastcgi_finish(fastcgi_conn *c)
{
    if (c->plain_close && drain_input(&c->fcgi))
        FCGX_Detach(&c->fcgi);
    FCGX_Finish_r(&c->fcgi);
}
