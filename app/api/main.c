/* market-api: the FastCGI worker.
 *
 * spawn-fcgi hands it a listening socket as fd 0; it accepts one request at a time,
 * checks it in the order of docs/contract.md section 2 (key, rate limit, route, scope, input),
 * runs the route's handler and writes the response. Many such processes (multiwatch
 * restarts any that dies) share the socket; they share nothing else but PostgreSQL. */
#include <errno.h>
#include <fcgiapp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth.h"
#include "cli.h"
#include "clock.h"
#include "log.h"
#include "ops.h"
#include "request.h"
#include "routes.h"
#include "serve.h"
#include "text.h"

#define ARENA_BLOCK (64 * 1024)
/* How long a worker waits on a FastCGI connection that sends nothing more: nginx sends a
 * request's parameters and body at once, so only a stalled or hostile peer waits this. */
#define FCGI_READ_SECONDS 1
#define PRUNE_EVERY_SECONDS 60

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

static bool worker_init(worker *w)
{
    char err[512];
    if (!crypto_init()) {
        log_error("libgcrypt is too old");
        return false;
    }
    if (!config_load(&w->cfg, CONFIG_NEED_SECRET | CONFIG_NEED_DOWNLOADS, err, sizeof err)) {
        fprintf(stderr, "market-api: %s\n", err);
        return false;
    }
    crypto_derive(w->cfg.secret, w->cfg.secret_len, "market cursor v1", w->cursor_key);
    crypto_derive(w->cfg.secret, w->cfg.secret_len, "market download link v1", w->link_key);
    crypto_derive(w->cfg.secret, w->cfg.secret_len, "market webhook secret v1", w->secret_key);
    crypto_derive(w->cfg.secret, w->cfg.secret_len, "market idempotent response v1", w->idem_key);

    /* The file location is the path part of the download base URL: "/files" for
     * "http://host:8080/files". */
    const char *scheme_end = strstr(w->cfg.download_base_url, "://");
    const char *path = strchr(scheme_end + 3, '/');
    w->files_prefix = path != NULL ? path : "";
    routes_init(w->files_prefix, &w->cfg);
    w->db = db_open(w->cfg.db, "market-api");
    db_set_statement_timeout(w->db, w->cfg.statement_timeout_ms);
    /* Every statement is prepared once per session and run with other values: plan it
     * once. PostgreSQL's own choice keeps a custom plan, planned again at every run, for
     * the page statements (a LIMIT and a category it cannot see make the generic plan look
     * dear), although the generic one is the same index scan: planning was a large share
     * of the database's CPU per request (bench/run --only dbcpu). */
    db_set_session(w->db, "SET plan_cache_mode = force_generic_plan");
    serve_init(w);
    db_ready(w->db); /* connect now if we can; requests reconnect if we cannot */
    if (!ops_init(w, MARKET_VERSION, err, sizeof err)) {
        fprintf(stderr, "market-api: %s\n", err);
        return false;
    }
    return true;
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

/* Reads what the handlers need from the FastCGI parameters. */
static void request_begin(request *r, FCGX_Request *fcgi)
{
    FCGX_ParamArray env = fcgi->envp;
    r->fcgi = fcgi;
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

/* The order of checks of docs/contract.md section 2: 401, 429, 404/405, 403, 400/413/415
 * (the route's declared inputs), then the handler (which answers what only it can check).
 * Everything but the handler comes from the route table; this is the one place a 404 or
 * 405 of a route is answered, the operational routes' included. */
static void dispatch(request *r)
{
    route_fault fault = routes_find(r);
    if (fault == ROUTE_FOUND && r->route->catalogue != NULL) {
        serve_catalogue(r, r->route->catalogue);
        return;
    }
    /* The download location takes no key (the token in its path is the credential), nor
     * do the operational routes. */
    bool keyless = r->route != NULL && r->route->scope == NULL;
    if (!keyless && !auth_check(r))
        return;
    if (fault == ROUTE_NOT_FOUND) {
        respond_error(r, 404, "invalid_request_error", "route_not_found", NULL, "no route %s %.*s",
                      r->method, (int)(r->path_len > 200 ? 200 : r->path_len), r->path);
        return;
    }
    const char *allow = r->match.allow;
    if (fault == ROUTE_METHOD_NOT_ALLOWED) {
        response_header(r, "Allow", allow);
        respond_error(r, 405, "invalid_request_error", "method_not_allowed", NULL,
                      "%s is not allowed here; allowed: %s", r->method, allow);
        return;
    }
    if (!keyless && !auth_has_scope(r, r->route->scope)) {
        respond_error(r, 403, "permission_error", "insufficient_scope", NULL,
                      "this API key lacks the scope %s", r->route->scope);
        return;
    }
    if (routes_read_input(r))
        r->route->handle(r);
}

/* head is the worker's own buffer, reused by every request. */
static void write_response(request *r, FCGX_Request *fcgi, buf *head)
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
    FCGX_PutStr(head->data, (int)head->len, fcgi->out);
    if (strcmp(r->method, "HEAD") != 0)
        FCGX_PutStr(r->body->data, (int)r->body->len, fcgi->out);
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

/* Writes out the collected log lines unless a connection is already waiting (and they
 * are less than a second old), so that a quiet worker holds none back while a busy one
 * writes them together. */
static void flush_log_before_wait(void)
{
    struct pollfd listener = {.fd = 0, .events = POLLIN};
    if (log_pending() && (log_stale() || poll(&listener, 1, 0) == 0))
        log_flush();
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
static int accept_bounded(FCGX_Request *fcgi)
{
    struct pollfd listener = {.fd = 0, .events = POLLIN};
    while (poll(&listener, 1, -1) < 0 && errno == EINTR)
        ;
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

static void request_end(request *r)
{
    for (int i = 0; i < r->result_count; i++)
        db_clear(r->results[i]);
    if (r->json_body != NULL)
        json_object_put(r->json_body);
}

/* What --help says (lib/cli.h adds the usage line and the options); help2man makes
 * the man page from it (Makefile, target man). */
static const char help_description[] =
    "The FastCGI worker of the market API. spawn-fcgi (or systemd) hands it a listening\n"
    "socket as its standard input; it answers one request at a time on its own PostgreSQL\n"
    "connection and runs until it is stopped (SIGTERM). A pool is several workers on one\n"
    "socket under multiwatch, which replaces one that dies; nginx passes requests to it.\n"
    "\n"
    "Besides the API's routes and the download location it answers two operational\n"
    "requests, only when nginx marks them with the FastCGI parameter MARKET_OPS (never\n"
    "from a client's header): MARKET_OPS=healthz answers 200 {\"status\":\"ok\"} when\n"
    "PostgreSQL answers and 503 service_unavailable otherwise; MARKET_OPS=metrics answers\n"
    "the Prometheus text format: requests by route and status, their latency, database\n"
    "reconnects, rate-limit rejections (summed over the workers of the pool through\n"
    "MARKET_METRICS_FILE) and the webhook outbox (pending, delivered, failed, retry\n"
    "backlog, oldest pending age, read from PostgreSQL).\n"
    "\n"
    "Each request is logged as one line on standard error: request id, method, route,\n"
    "status, duration and the API key's 12-character prefix, never the key.\n";
static const char help_environment[] =
    "  MARKET_DB, MARKET_SECRET_FILE, MARKET_DOWNLOAD_BASE_URL, MARKET_FILES_ROOT,\n"
    "  MARKET_METRICS_FILE and the other settings of market.env(5). A missing or invalid\n"
    "  setting stops the worker at start with one line on standard error, exit status 1.\n";

int main(int argc, char **argv)
{
    log_set_program("market-api");
    static const cli_daemon self = {"market-api", MARKET_VERSION, help_description,
                                    help_environment};
    int cli = cli_daemon_args(argc, argv, &self, stdout, stderr);
    if (cli >= 0)
        return cli;
    signal(SIGPIPE, SIG_IGN);
    struct sigaction alarm_action = {.sa_handler = on_alarm};
    sigemptyset(&alarm_action.sa_mask);
    sigaction(SIGALRM, &alarm_action, NULL);
    static worker w;
    if (!worker_init(&w))
        return 1;
    if (FCGX_Init() != 0) {
        log_error("FCGX_Init failed");
        return 1;
    }
    FCGX_Request fcgi;
    FCGX_InitRequest(&fcgi, 0, 0);

    arena a;
    arena_init(&a, ARENA_BLOCK);
    buf body, headers, head;
    buf_init(&body, 64 * 1024);
    buf_init(&headers, 1024);
    buf_init(&head, 1024);
    time_t last_prune = 0;
    bool plain_close = listens_on_unix_socket();

    /* A line per request, written in batches while requests keep coming (lib/log.h). */
    log_batch(true);
    for (;;) {
        flush_log_before_wait();
        if (accept_bounded(&fcgi) < 0)
            break;
        request r;
        memset(&r, 0, sizeof r);
        r.w = &w;
        r.arena = &a;
        r.body = &body;
        r.headers = &headers;
        buf_clear(&body);
        buf_clear(&headers);
        long long start = clock_us();
        request_begin(&r, &fcgi);
        db_watch(w.db, fcgi.ipcFd); /* a client that goes away cancels its statement */
        log_set_request(r.request_id);
        dispatch(&r);
        write_response(&r, &fcgi, &head);
        ops_key_leave(); /* the key's request is answered: another of its may start */
        db_watch(w.db, -1);
        if (plain_close && drain_input(&fcgi))
            FCGX_Detach(&fcgi);
        log_set_request(NULL); /* the request's own line names it: id=... */
        ops_request_done(&r, clock_us() - start);
        FCGX_Finish_r(&fcgi);
        request_end(&r);
        arena_reset(&a);

        /* The rate windows of past minutes, a few rows per key: cheap enough between two
         * requests. Everything else that only grows is market-webhookd's retention pass,
         * off the request path (app/webhookd/retention.h). */
        time_t now = time(NULL);
        if (now - last_prune >= PRUNE_EVERY_SECONDS) {
            last_prune = now;
            auth_prune_windows(&w);
        }
    }
    log_batch(false);
    return 0;
}
