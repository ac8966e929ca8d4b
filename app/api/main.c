/* market-api: the FastCGI worker.
 *
 * spawn-fcgi hands it a listening socket as fd 0; it serves one request at a time from the
 * connections it accepts there (fastcgi.c), runs it through the order of checks of
 * docs/contract.md section 2 and the route's handler (pipeline.h) and writes the response. Many
 * such processes (multiwatch restarts any that dies) share the socket; they share nothing else but
 * PostgreSQL and the metrics file. SIGTERM (or multiwatch's SIGQUIT or SIGUSR1) stops a worker once
 * it has served what it holds (fastcgi_conns.h); with MARKET_IDLE_EXIT, the worker that finds the
 * whole pool idle stops it (pool_idle.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "cli.h"
#include "clock.h"
#include "fastcgi.h"
#include "log.h"
#include "ops.h"
#include "pipeline.h"
#include "pool_idle.h"
#include "request.h"
#include "routes.h"
#include "serve.h"
#include "worker.h"

#define ARENA_BLOCK (64 * 1024)
#define PRUNE_EVERY_SECONDS 60

/* The real steps of the order of checks (pipeline.h). */
static const pipeline_steps steps = {
    .find = routes_find,
    .key_begin = auth_begin,
    .plan_page = serve_page_plan,
    .key_finish = serve_key_finish,
    .require_scope = auth_require_scope,
    .read_input = routes_read_input,
    .answer_page = serve_page_answer,
};

/* Writes out the collected log lines unless a connection is already waiting (and they
 * are less than a second old), so that a quiet worker holds none back while a busy one
 * writes them together. */
static void flush_log_before_wait(fastcgi_server *conn)
{
    if (log_pending() && (log_stale() || !fastcgi_waiting(conn)))
        log_flush();
}

static void request_end(request *r)
{
    for (int i = 0; i < r->result_count; i++)
        db_clear(r->results[i]);
    if (r->json_body != NULL)
        json_object_put(r->json_body);
}

/* While the worker waits for a connection, it hears its database (auth_hear). */
static int idle_fd(void *arg)
{
    return db_socket(((worker *)arg)->db);
}

static void idle_wake(void *arg)
{
    auth_hear(arg);
}

/* What the idle check (look_for_idle) needs. */
typedef struct {
    worker *w;
    fastcgi_server *conn;
    bool said; /* the pool cannot be stopped from here: said once */
} idle_watch;

/* The name of process pid (/proc/PID/comm) into out; NULL when it cannot be read. */
static const char *process_name(pid_t pid, char *out, size_t outsz)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/comm", (long)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    bool got = fgets(out, (int)outsz, f) != NULL;
    fclose(f);
    if (!got)
        return NULL;
    out[strcspn(out, "\n")] = '\0';
    return out;
}

/* Asks the pool's multiwatch to stop: it passes SIGTERM on to every worker, this one
 * included, and each ends once it has served what it holds. No more looking meanwhile. */
static void stop_pool(idle_watch *iw, pid_t parent, long long idle_ms)
{
    if (kill(parent, SIGTERM) != 0) {
        if (!iw->said)
            log_error("pool idle for %lld s, but stopping it failed: kill: %s", idle_ms / 1000,
                      strerror(errno));
        iw->said = true;
        return;
    }
    log_info("pool idle for %lld s: exiting", idle_ms / 1000);
    log_flush();
    fastcgi_tick(iw->conn, 0, NULL, NULL);
}

/* Every few seconds while the worker waits (fastcgi_tick): is the whole pool idle? One
 * worker of the pool looks (ops_pool_leads), so the pool is stopped once. A stop already
 * on its way ends the looking: the leader that asked for it may have exited first, which
 * makes this worker the lowest live one. */
static void look_for_idle(void *arg)
{
    idle_watch *iw = arg;
    if (fastcgi_stop_pending() || !ops_pool_leads())
        return; /* stopping already, or another worker looks */
    long long idle_ms = ops_pool_idle_ms();
    pid_t parent = getppid();
    char name[64];
    switch (
        pool_idle_decide(iw->w->cfg.idle_exit, idle_ms, process_name(parent, name, sizeof name))) {
    case POOL_IDLE_STOP:
        stop_pool(iw, parent, idle_ms);
        break;
    case POOL_IDLE_NO_POOL:
        if (!iw->said)
            log_info("pool idle for %lld s, but this worker's parent is not %s: MARKET_IDLE_EXIT "
                     "cannot stop the pool, which stays",
                     idle_ms / 1000, POOL_IDLE_PARENT);
        iw->said = true;
        break;
    case POOL_IDLE_OFF:
    case POOL_IDLE_STAY:
        break;
    }
}

/* What --help says (lib/cli.h adds the usage line and the options); help2man makes
 * the man page from it (Makefile, target man). */
static const char help_description[] =
    "The FastCGI worker of the market API. spawn-fcgi (or systemd) hands it a listening\n"
    "socket as its standard input; it answers one request at a time on its own PostgreSQL\n"
    "connection and runs until it is stopped: SIGTERM (or SIGUSR1, multiwatch's default,\n"
    "or SIGQUIT, which Debian's multiwatch sends for --signal=TERM) ends it once it has\n"
    "answered the requests already passed to it. A pool is several workers on one socket under\n"
    "multiwatch, which replaces one that dies; nginx passes requests to it. With\n"
    "MARKET_IDLE_EXIT, a pool that has answered no API request (/healthz and /metrics do\n"
    "not count) for that many seconds stops: a worker sends its multiwatch SIGTERM,\n"
    "logging \"pool idle for N s: exiting\", and systemd's socket starts the pool again at\n"
    "the next connection.\n"
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
    "Each setting is described in market.env(5). A missing or invalid setting stops the\n"
    "worker at start with one line on standard error, exit status 1.\n";

int main(int argc, char **argv)
{
    log_set_program("market-api");
    static const cli_daemon self = {"market-api", MARKET_VERSION, help_description, SETTING_API,
                                    help_environment};
    int cli = cli_daemon_args(argc, argv, &self, stdout, stderr);
    if (cli >= 0)
        return cli;
    signal(SIGPIPE, SIG_IGN);
    static worker w;
    if (!worker_init(&w, MARKET_VERSION))
        return 1;
    static fastcgi_server conn;
    if (!fastcgi_init(&conn))
        return 1;
    fastcgi_catch_stop();
    static idle_watch watch;
    watch = (idle_watch){&w, &conn, false};
    fastcgi_tick(&conn, pool_idle_check_ms(w.cfg.idle_exit), look_for_idle, &watch);

    arena a;
    arena_init(&a, ARENA_BLOCK);
    buf body, headers, head;
    buf_init(&body, 64 * 1024);
    buf_init(&headers, 1024);
    buf_init(&head, 1024);
    time_t last_prune = 0;
    bool answered = false;
    const fastcgi_idle idle = {idle_fd, idle_wake, &w};

    /* A line per request, written in batches while requests keep coming (lib/log.h). */
    log_batch(true);
    for (;;) {
        flush_log_before_wait(&conn);
        if (!fastcgi_accept(&conn, &idle))
            break;
        ops_request_begin();
        request r;
        memset(&r, 0, sizeof r);
        r.w = &w;
        r.arena = &a;
        r.body = &body;
        r.headers = &headers;
        buf_clear(&body);
        buf_clear(&headers);
        long long start = clock_us();
        fastcgi_read_request(&conn, &r);
        db_watch(w.db, fastcgi_fd(&conn)); /* a client that goes away cancels its statement */
        log_set_request(r.request_id);
        pipeline_run(&r, &steps);
        /* The key's request is done: another of its may start. Before the answer is
         * written, which reaches the client at once (one write, the end of the request
         * with it), so that the key's next request never finds this one in flight. */
        ops_key_leave();
        fastcgi_write_response(&conn, &r, &head);
        db_watch(w.db, -1);
        log_set_request(NULL); /* the request's own line names it: id=... */
        ops_request_done(&r, clock_us() - start);
        fastcgi_finish(&conn);
        request_end(&r);
        arena_reset(&a);
        if (!answered) { /* after the answer: a pool started by this request sent it first */
            answered = true;
            serve_after_first_answer(&w);
        }

        /* The rate windows of past minutes, a few rows per key: cheap enough between two
         * requests. Everything else that only grows is market-webhookd's retention pass,
         * off the request path (app/retention/retention.h). */
        time_t now = time(NULL);
        if (now - last_prune >= PRUNE_EVERY_SECONDS) {
            last_prune = now;
            auth_prune_windows(&w);
        }
    }
    log_batch(false);
    db_close(w.db); /* the session ends cleanly (PostgreSQL sees a Terminate message) */
    return 0;
}
