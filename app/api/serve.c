/* serve: see serve.h. */
#include "serve.h"

#include <string.h>

#include "auth.h"
#include "clock.h"
#include "log.h"
#include "replica.h"
#include "ring_cache.h"

/* The page cache: 4 MiB and 4096 entries per worker, allocated at start. */
#define PAGE_CACHE_BYTES (4 * 1024 * 1024)
#define PAGE_CACHE_SLOTS 4096
/* market-admin's catalogue writes notify this channel (sql/migrations/006_search.sql). */
#define CATALOGUE_CHANNEL "market_catalogue"

void serve_init(worker *w)
{
    db_listen(w->db, CATALOGUE_CHANNEL);
    if (w->cfg.db_read != NULL)
        w->replica = replica_open(w->cfg.db_read, "market-api-read", w->cfg.db_read_max_lag, w->db);
    w->pages = ring_cache_new(PAGE_CACHE_BYTES, PAGE_CACHE_SLOTS, w->cfg.page_cache_ms);
    buf_init(&w->page_key, 512);
}

void serve_after_first_answer(worker *w)
{
    ring_cache_touch(w->pages);
}

/* The page cache's key: the statement and its parameters, each with its length (a NULL
 * parameter has none), which is everything a catalogue answer depends on. */
static void cache_key(const catalogue_read *read, buf *key)
{
    buf_clear(key);
    buf_puts(key, read->stmt->name);
    for (int i = 0; i < read->stmt->nparams; i++) {
        const char *p = read->params[i];
        if (p == NULL)
            buf_puts(key, "|-");
        else
            buf_printf(key, "|%zu:%s", strlen(p), p);
    }
}

/* A catalogue write was notified: what the worker kept of the catalogue may be stale. */
static void catalogue_changed(worker *w)
{
    ring_cache_clear(w->pages);
    w->catalogue_generation++;
}

/* Writes the answer from the route's result and keeps it for repeats when it is a 200. */
static void render_and_keep(request *r, const catalogue_handler *route, const catalogue_read *read,
                            PGresult *res, const buf *key, long long now)
{
    route->render(r, read, res);
    if (r->status == 200)
        ring_cache_put(r->w->pages, key->data, key->len, r->body->data, r->body->len, now);
}

/* With MARKET_DB_READ, the route's statement goes to the replica while it is fit:
 * page_send sends it there and names the connection (NULL: the primary reads it), and
 * page_collect reads the answer, or gives NULL when the primary must read it after all
 * (the replica failed meanwhile, or could not run it). Between the two the worker runs
 * the key check on the primary, so both databases work at once. */
static db *page_send(request *r, const catalogue_read *read)
{
    if (r->w->replica == NULL)
        return NULL;
    db *reader = replica_pick(r->w->replica, clock_ms());
    if (reader != NULL && !db_send(reader, read->stmt, read->params)) {
        replica_failed(r->w->replica, db_error(reader));
        return NULL;
    }
    return reader;
}

static PGresult *page_collect(request *r, db *reader, const catalogue_read *read)
{
    if (reader == NULL)
        return NULL;
    PGresult *res = db_receive(reader, REPLICA_READ_TIMEOUT_MS);
    if (res == NULL) {
        replica_failed(r->w->replica, db_error(reader));
        return NULL;
    }
    request_keep(r, res);
    if (!db_ok(res)) {
        /* A statement cancelled by a conflict with recovery, say: the primary answers. */
        log_error("statement %s failed on the replica: %s", read->stmt->name, db_message(res));
        return NULL;
    }
    return res;
}

/* The route's statement alone, on the replica when it is fit, else on the primary. */
static PGresult *read_page(request *r, const catalogue_read *read)
{
    PGresult *page = page_collect(r, page_send(r, read), read);
    return page != NULL ? page : request_query(r, read->stmt, read->params);
}

/* Where a request's page comes from, chosen before the key is checked so that both
 * travel together: the worker's cache (the key check alone), the replica (sent now, read
 * once the key check is under way on the primary) or the primary (pipelined with the key
 * check: one round trip). None when there is no page to read: the input was refused, or
 * the key has its share of the workers. */
typedef enum { PAGE_NONE, PAGE_KEPT, PAGE_REPLICA, PAGE_PRIMARY } page_source;

/* The key check when the host's memory could not answer it (q->kept is KB_ASK), with
 * the page when the primary reads it; NULL when the database failed (answered). */
static PGresult *check_key(request *r, const auth_query *q, const catalogue_read *read,
                           page_source source, PGresult **page)
{
    if (source != PAGE_PRIMARY)
        return request_query(r, auth_statement(), q->params);
    db_stmt *stmts[2] = {auth_statement(), read->stmt};
    const char *const *params[2] = {q->params, read->params};
    PGresult *out[2];
    if (!request_query_pipeline(r, 2, stmts, params, out) ||
        !request_result_ok(r, stmts[0], out[0]))
        return NULL;
    *page = out[1];
    return out[0];
}

/* A catalogue route, in one sequence whatever the page's source: the key, then the page.
 * The order of checks holds: the page is used only once the key passed and holds the
 * route's scope (401, 429 and 403 win over a refused input, answered by routes_read_input
 * or plan). Every key has the catalogue's scope today (routes.c); the check stays so
 * that a scope given to the route later is not silently ignored. */
void serve_catalogue(request *r, const catalogue_handler *route)
{
    auth_query q;
    if (!auth_begin(r, &q))
        return;
    catalogue_read read = {0};
    bool planned = !r->over_in_flight && routes_read_input(r) && route->plan(r, &read);

    buf *key = &r->w->page_key;
    long long now = clock_ms();
    const char *kept = NULL;
    size_t kept_len = 0;
    db *reader = NULL;
    page_source source = PAGE_NONE;
    if (planned) {
        cache_key(&read, key);
        if (ring_cache_get(r->w->pages, key->data, key->len, now, &kept, &kept_len))
            source = PAGE_KEPT;
        else
            source = (reader = page_send(r, &read)) != NULL ? PAGE_REPLICA : PAGE_PRIMARY;
    }

    /* The host's memory may answer for the key: then the page alone goes to the database
     * (below), and a request the memory refused reads none. */
    PGresult *page = NULL;
    PGresult *key_res = NULL;
    bool asked = q.kept == KB_ASK;
    if (asked)
        key_res = check_key(r, &q, &read, source, &page);
    PGresult *replica_page = page_collect(r, reader, &read); /* always: the answer must be read */
    if ((asked && key_res == NULL) || !auth_finish(r, &q, key_res) ||
        !auth_require_scope(r, r->route->scope) || source == PAGE_NONE)
        return;
    if (page != NULL && !request_result_ok(r, read.stmt, page))
        return;

    bool changed = db_notified(r->w->db, CATALOGUE_CHANNEL);
    if (changed)
        catalogue_changed(r->w); /* kept pages may be stale (kept is gone too) */
    if (source == PAGE_KEPT && !changed) {
        respond_json(r, 200);
        buf_append(r->body, kept, kept_len);
        return;
    }
    if (page == NULL)
        page = replica_page;
    if (page == NULL) /* the replica failed, or the kept page was stale */
        page = source == PAGE_KEPT ? read_page(r, &read) : request_query(r, read.stmt, read.params);
    if (page != NULL)
        render_and_keep(r, route, &read, page, key, now);
}
