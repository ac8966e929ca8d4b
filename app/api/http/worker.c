/* worker: a worker's one-time set-up, apart from main.c so that main.c reads as the
 * request loop. Everything here runs once per process, before the first request: a worker
 * that cannot start says why on standard error and exits; it never serves half set up. */
#include "worker.h"

#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "crypto.h"
#include "log.h"
#include "ops.h"
#include "request.h"
#include "routes.h"
#include "serve.h"

bool worker_init(worker *w, const char *version)
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
     * of the database's CPU per request (README, "The engine without the cache"). */
    db_set_session(w->db, DB_PLAN_ONCE_SQL);
    serve_init(w);
    auth_init(w);
    /* Connect now if we can (requests reconnect if we cannot), unless the pool stops when
     * idle: a request started it, which one worker takes, and the others would connect
     * only to compete with that worker for the CPU while it answers; each connects at its
     * own first request instead. */
    if (w->cfg.idle_exit <= 0)
        db_ready(w->db);
    if (!ops_init(w, version, err, sizeof err)) {
        fprintf(stderr, "market-api: %s\n", err);
        return false;
    }
    return true;
}
