/* serve: see serve.h. The catalogue routes' one statement each is what lets their pages
 * be cached, read on a replica and carried with the key's statement; this file holds those
 * three mechanisms, so that the handlers (products_list.c, product_get.c, seller_get.c)
 * only plan a statement and render its result. */
#include "serve.h"
#include "db_async.h"

#include <string.h>

#include "auth.h"
#include "clock.h"
#include "log.h"
#include "replica.h"
#include "routes.h"
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
static void render_and_cache(request *r, const catalogue_handler *route, const catalogue_read *read,
                             db_result *res, const buf *key, long long now)
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

static db_result *page_collect(request *r, db *reader, const catalogue_read *read)
{
    if (reader == NULL)
        return NULL;
    db_result *res = db_receive(reader, REPLICA_READ_TIMEOUT_MS);
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
static db_result *read_page(request *r, const catalogue_read *read)
{
    db_result *page = page_collect(r, page_send(r, read), read);
    return page != NULL ? page : request_query(r, read->stmt, read->params);
}

/* The key's statement when the host's memory could not answer for the key (q->memory is
 * KB_ASK), with the page when the primary reads it: one round trip. NULL when the
 * database failed (answered). */
static db_result *ask_key(request *r, const auth_query *q, serve_page *page)
{
    if (page == NULL || page->source != PAGE_PRIMARY)
        return request_query(r, auth_statement(), q->params);
    db_stmt *stmts[2] = {auth_statement(), page->read.stmt};
    const char *const *params[2] = {q->params, page->read.params};
    db_result *out[2];
    if (!request_query_pipeline(r, 2, stmts, params, out) ||
        !request_result_ok(r, stmts[0], out[0]))
        return NULL;
    page->res = out[1];
    return out[0];
}

void serve_page_init(serve_page *page, const catalogue_handler *route)
{
    memset(page, 0, sizeof *page);
    page->route = route;
}

/* Where the page will come from, chosen before the key's statement is sent so that both
 * travel together: the worker's cache (then the key alone goes to the database), the
 * replica (sent now, read once the key's statement is under way on the primary) or the
 * primary (pipelined with the key's statement). */
void serve_page_plan(request *r, serve_page *page)
{
    page->planned = routes_read_input(r) && page->route->plan(r, &page->read);
    if (!page->planned)
        return;
    page->now = clock_ms();
    cache_key(&page->read, &r->w->page_key);
    const buf *key = &r->w->page_key;
    if (ring_cache_get(r->w->pages, key->data, key->len, page->now, &page->cached,
                       &page->cached_len))
        page->source = PAGE_CACHED;
    else
        page->source =
            (page->reader = page_send(r, &page->read)) != NULL ? PAGE_REPLICA : PAGE_PRIMARY;
}

bool serve_key_finish(request *r, auth_query *q, serve_page *page)
{
    db_result *key_res = NULL;
    bool asked = q->memory == KB_ASK;
    if (asked)
        key_res = ask_key(r, q, page);
    if (page != NULL && page->reader != NULL) /* always: the replica's answer must be read */
        page->replica_res = page_collect(r, page->reader, &page->read);
    return (!asked || key_res != NULL) && auth_finish(r, q, key_res);
}

void serve_page_answer(request *r, serve_page *page)
{
    if (page->res != NULL && !request_result_ok(r, page->read.stmt, page->res))
        return;
    bool changed = db_notified(r->w->db, CATALOGUE_CHANNEL);
    if (changed)
        catalogue_changed(r->w); /* cached pages may be stale (cached is gone too) */
    if (page->source == PAGE_CACHED && !changed) {
        respond_json(r, 200);
        buf_append(r->body, page->cached, page->cached_len);
        return;
    }
    db_result *res = page->res != NULL ? page->res : page->replica_res;
    if (res == NULL) /* the replica failed, or the cached page was stale */
        res = page->source == PAGE_CACHED ? read_page(r, &page->read)
                                          : request_query(r, page->read.stmt, page->read.params);
    if (res != NULL)
        render_and_cache(r, page->route, &page->read, res, &r->w->page_key, page->now);
}
