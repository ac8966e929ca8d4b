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
    if (PQresultStatus(res) != PGRES_TUPLES_OK) {
        /* A statement cancelled by a conflict with recovery, say: the primary answers. */
        log_error("statement %s failed on the replica: %s", read->stmt->name,
                  PQresultErrorMessage(res));
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

/* A page the worker answered less than PAGE_CACHE_MS ago: the key check alone, then the
 * kept body, unless a catalogue write was notified meanwhile (then the page is read
 * again). */
static void serve_kept(request *r, const catalogue_handler *route, const catalogue_read *read,
                       const auth_query *q, const buf *key, long long now, const char *kept,
                       size_t kept_len)
{
    PGresult *res = request_query(r, auth_statement(), q->params);
    if (res == NULL || !auth_finish(r, res))
        return;
    if (!db_notified(r->w->db)) {
        respond_json(r, 200);
        buf_append(r->body, kept, kept_len);
        return;
    }
    catalogue_changed(r->w);
    PGresult *page = read_page(r, read);
    if (page != NULL)
        render_and_keep(r, route, read, page, key, now);
}

/* The key check on the primary while the replica reads the page (see page_send). */
static void serve_from_replica(request *r, const catalogue_handler *route,
                               const catalogue_read *read, const auth_query *q, db *reader,
                               const buf *key, long long now)
{
    PGresult *res = request_query(r, auth_statement(), q->params);
    PGresult *page = page_collect(r, reader, read); /* always: the answer must be read */
    if (res == NULL || !auth_finish(r, res))
        return;
    if (page == NULL && (page = request_query(r, read->stmt, read->params)) == NULL)
        return;
    if (db_notified(r->w->db)) /* older pages may be stale */
        catalogue_changed(r->w);
    render_and_keep(r, route, read, page, key, now);
}

/* A catalogue route: the key check and the route's statement in one round trip, or the
 * key check alone when the worker answered the same page a moment ago. The order of
 * checks holds: the statement's answer is used only once the key passed. Every key has
 * the catalogue's scope (routes.c), so after the key only the input can be refused. */
void serve_catalogue(request *r, const catalogue_handler *route)
{
    auth_query q;
    if (!auth_begin(r, &q))
        return;
    catalogue_read read = {0};
    if (r->over_in_flight || !routes_read_query(r) || !route->plan(r, &read)) {
        /* The key has its share of the workers (auth_finish answers 429 once the key is
         * known), or the input is wrong (400/404 answered): still the key first, 401 and
         * 429 win. */
        PGresult *res = request_query(r, auth_statement(), q.params);
        if (res != NULL)
            auth_finish(r, res);
        return;
    }

    buf *key = &r->w->page_key;
    cache_key(&read, key);
    long long now = clock_ms();
    const char *kept;
    size_t kept_len;
    if (ring_cache_get(r->w->pages, key->data, key->len, now, &kept, &kept_len)) {
        serve_kept(r, route, &read, &q, key, now, kept, kept_len);
        return;
    }
    db *reader = page_send(r, &read);
    if (reader != NULL) {
        serve_from_replica(r, route, &read, &q, reader, key, now);
        return;
    }
    db_stmt *stmts[2] = {auth_statement(), read.stmt};
    const char *const *params[2] = {q.params, read.params};
    PGresult *out[2];
    if (request_query_pipeline(r, 2, stmts, params, out) &&
        request_result_ok(r, stmts[0], out[0]) && auth_finish(r, out[0]) &&
        request_result_ok(r, read.stmt, out[1])) {
        if (db_notified(r->w->db)) /* older pages may be stale; this one is fresh */
            catalogue_changed(r->w);
        render_and_keep(r, route, &read, out[1], key, now);
    }
}
