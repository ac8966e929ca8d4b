/* bench/search_peers/statement.c: market's side of the search peers' comparison at the
 * level of its page statement: the very statement a worker prepares for
 * GET /v1/products?q=...&sort=... (app/api/catalogue/search_sql.c, linked in, not a copy),
 * prepared once on one libpq connection with the worker's session settings (lib/db.c's
 * session_setup and worker.c's plan_cache_mode = force_generic_plan, which reaches the
 * statements inside the relevance function too) and executed with the parameters
 * products_list.c binds, one page at a time. The time is PQexecPrepared's: the round
 * trip to PostgreSQL and its work, no nginx, no worker, no JSON, which is the level of
 * FTS5's and Xapian's in-process queries beside it (an embedded engine has no server to
 * reach: the round trip on a Unix socket stays in market's figure, some 0.05 ms).
 *
 *   MARKET_DB=... [PEERS_SESSION_SQL=...] peers_statement run PLAN [--requests N]
 *       [--budget S] [--only TEXT]
 *
 * The cursor is the statement's own: the sort key and id of the page's last row (what
 * market's next_cursor carries, without its MAC), "KEY\tID". */
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

/* search_sql.h and runner.h both name the sorts SORT_*, in the same order (the API's):
 * the API's are renamed API_SORT_* here. */
#define SORT_NEWEST API_SORT_NEWEST
#define SORT_PRICE_ASC API_SORT_PRICE_ASC
#define SORT_PRICE_DESC API_SORT_PRICE_DESC
#define SORT_RELEVANCE API_SORT_RELEVANCE
#define SORT_COUNT API_SORT_COUNT
#include "search_sql.h"
#undef SORT_NEWEST
#undef SORT_PRICE_ASC
#undef SORT_PRICE_DESC
#undef SORT_RELEVANCE
#undef SORT_COUNT

#include "runner.h"

_Static_assert((int)API_SORT_NEWEST == (int)SORT_NEWEST && (int)API_SORT_PRICE_ASC == (int)SORT_PRICE_ASC &&
                   (int)API_SORT_PRICE_DESC == (int)SORT_PRICE_DESC &&
                   (int)API_SORT_RELEVANCE == (int)SORT_RELEVANCE && (int)API_SORT_COUNT == (int)SORTS,
               "the runner's sorts are the API's, in the same order");

#define PREPARED_MAX 16

typedef struct {
    PGconn *pg;
    const char *prepared[PREPARED_MAX]; /* the statements' names prepared so far */
    int nprepared;
} conn_t;

static void prepare_once(conn_t *c, const db_stmt *stmt)
{
    for (int i = 0; i < c->nprepared; i++)
        if (strcmp(c->prepared[i], stmt->name) == 0)
            return;
    if (c->nprepared == PREPARED_MAX)
        die("more than %d statements", PREPARED_MAX);
    PGresult *res = PQprepare(c->pg, stmt->name, stmt->sql, stmt->nparams, NULL);
    if (PQresultStatus(res) != PGRES_COMMAND_OK)
        die("prepare %s: %s", stmt->name, PQresultErrorMessage(res));
    PQclear(res);
    c->prepared[c->nprepared++] = stmt->name;
}

static int page(void *ctx, const shape_t *shape, int sort, int limit, const char *cursor, page_t *out)
{
    conn_t *c = ctx;
    char limit_plus_one[16], key[CURSOR_MAX] = "";
    const char *id = NULL;
    snprintf(limit_plus_one, sizeof limit_plus_one, "%d", limit + 1);
    if (cursor != NULL) {
        snprintf(key, sizeof key, "%s", cursor);
        char *tab = strchr(key, '\t');
        if (tab == NULL)
            die("not a cursor of this program: %s", cursor);
        *tab = '\0';
        id = tab + 1;
    }
    /* products_list.c's parameters for q and a sort, no other filter, mode test (the
     * bench's catalogue and key). */
    const db_stmt *stmt;
    const char *params[RELEVANCE_PARAMS] = {"test", limit_plus_one, shape->q};
    if (sort == SORT_RELEVANCE) {
        stmt = &search_sql_relevance;
        params[7] = cursor != NULL ? key : NULL;
        params[8] = id;
    } else {
        stmt = search_sql_statement(FILTER_Q | (cursor != NULL ? FILTER_CURSOR : 0), (enum list_sort)sort);
        params[3] = cursor != NULL ? key : NULL;
        params[4] = id;
    }
    prepare_once(c, stmt);
    PGresult *res = PQexecPrepared(c->pg, stmt->name, stmt->nparams, params, NULL, NULL, 0);
    if (PQresultStatus(res) != PGRES_TUPLES_OK) {
        fprintf(stderr, "statement: %s, %s: %s", shape->name, sort_names[sort], PQresultErrorMessage(res));
        PQclear(res);
        return -1;
    }
    int rows = PQntuples(res);
    int items = rows > limit ? limit : rows;
    if (items > PAGE_MAX)
        items = PAGE_MAX;
    for (int i = 0; i < items; i++)
        snprintf(out->ids[out->n++], ID_MAX, "%s", PQgetvalue(res, i, 0));
    if (rows > limit) {
        /* The sort key is the column after the item's (PRODUCT_ITEM_NCOLS). */
        out->has_next = 1;
        snprintf(out->next, sizeof out->next, "%s\t%s", PQgetvalue(res, items - 1, 2),
                 PQgetvalue(res, items - 1, 0));
    }
    PQclear(res);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3 || strcmp(argv[1], "run") != 0)
        die("usage: MARKET_DB=... peers_statement run PLAN [--requests N] [--budget S] [--only TEXT]");
    const char *conninfo = getenv("MARKET_DB");
    if (conninfo == NULL)
        die("MARKET_DB is required");
    run_opts_t o;
    run_opts_parse(&o, argc, argv, 3);
    plan_t plan;
    plan_read(argv[2], &plan);
    conn_t c = {.pg = PQconnectdb(conninfo)};
    if (PQstatus(c.pg) != CONNECTION_OK)
        die("connect: %s", PQerrorMessage(c.pg));
    /* The settings a worker's session runs with: lib/db.c's session_setup, then
     * app/api/http/worker.c's session SQL (PEERS_SESSION_SQL replaces the latter, to
     * compare another plan cache mode, say). */
    const char *session = getenv("PEERS_SESSION_SQL");
    PGresult *res = PQexec(c.pg, DB_SESSION_SETTINGS_SQL);
    if (PQresultStatus(res) != PGRES_COMMAND_OK)
        die("session setup: %s", PQresultErrorMessage(res));
    PQclear(res);
    res = PQexec(c.pg, session != NULL ? session : DB_PLAN_ONCE_SQL);
    if (PQresultStatus(res) != PGRES_COMMAND_OK)
        die("session setup: %s", PQresultErrorMessage(res));
    PQclear(res);
    int bad = run_all("statement", &plan, page, &c, &o);
    PQfinish(c.pg);
    return bad ? 3 : 0;
}
