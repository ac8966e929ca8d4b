/* GET /v1/products: search and list published products of the caller's mode.
 *
 * Filters: category, q (full text), seller, min_price, max_price. Sorts: newest,
 * price_asc, price_desc, relevance. Every combination has its own prepared statement,
 * assembled once from constant SQL fragments (values are always parameters), so each
 * gets a plan that uses the index made for it (see 001_core.sql) instead of one generic
 * plan full of "param IS NULL OR" branches. Keyset pagination: the cursor holds the sort
 * key and id of the last row, and the next page starts strictly after it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "catalogue.h"
#include "cursor.h"
#include "handlers.h"
#include "ids.h"
#include "mem.h"
#include "paging.h"
#include "text.h"

enum sort { SORT_NEWEST, SORT_PRICE_ASC, SORT_PRICE_DESC, SORT_RELEVANCE, SORT_COUNT };

enum filter {
    F_CATEGORY = 1 << 0,
    F_SELLER = 1 << 1,
    F_Q = 1 << 2,
    F_MIN = 1 << 3,
    F_MAX = 1 << 4,
    F_CURSOR = 1 << 5,
};

/* In the order of enum sort; the route table (routes.c) takes them as sort's values. */
const char *const products_sorts[SORT_COUNT + 1] = {"newest", "price_asc", "price_desc",
                                                    "relevance", NULL};

/* Per sort: the key selected for the cursor, the keyset condition and the order. The key
 * is read as the text PostgreSQL sends it in: a `::text` cast would give the same text
 * (DateStyle ISO, TimeZone UTC: see db.c) but costs a copy per row, on every page. */
static const struct {
    const char *key;
    const char *after; /* "(key, id) OP (" — the cursor parameters follow */
    const char *cast;
    const char *order;
} sorts[SORT_RELEVANCE] = {
    {"p.created_at", "(p.created_at, p.id) < (", "timestamptz", "p.created_at DESC, p.id DESC"},
    {"p.price", "(p.price, p.id) > (", "numeric", "p.price, p.id"},
    {"p.price", "(p.price, p.id) < (", "numeric", "p.price DESC, p.id DESC"},
};

/* The typed inputs (routes.c) the plan and the render read, and what the plan made of
 * them: prices as given (the statements compare them as numeric). */
typedef struct {
    const char *category, *q, *seller, *min_price, *max_price, *cursor_text;
    enum sort sort;
    int limit;
    char *cursor[2];     /* sort key, id */
    const char *context; /* what the cursor is bound to */
} list_input;

static db_stmt shapes[64 * SORT_RELEVANCE];

/* The filters other than q, on table alias a; parameters numbered from *n. */
static void add_filters(buf *sql, int filters, const char *a, int first_param)
{
    int n = first_param;
    if (filters & F_CATEGORY)
        buf_printf(sql, " AND %s.category = $%d", a, n++);
    if (filters & F_SELLER)
        buf_printf(sql, " AND %s.seller_id = $%d", a, n++);
    if (filters & F_MIN)
        buf_printf(sql, " AND %s.price >= $%d::numeric", a, n++);
    if (filters & F_MAX)
        buf_printf(sql, " AND %s.price <= $%d::numeric", a, n++);
}

/* Relevance (contract section 6): a match's rank is the number of distinct words of q its
 * title holds (0: a match by its description alone); higher rank first, then id
 * descending. One statement for every filter: market_relevance_page
 * (sql/migrations/018_whole_pages.sql) finds the page's ids rank by rank, each rank
 * by a bounded walk in id order or, when that finds no page, through a GIN index.
 * Parameters: $1 mode, $2 limit + 1, $3 q, $4 category, $5 seller, $6 min_price,
 * $7 max_price (each NULL when not given), $8 and $9 the cursor's rank and id (NULL on a
 * first page). */
#define RELEVANCE_PARAMS 9

DB_STMT(products_list_relevance,
        "SELECT " PRODUCT_ITEM_COLUMNS ", s.match_rank::text"
        " FROM market_relevance_page($1, $2::int, $3, $4, $5, $6::numeric, $7::numeric,"
        " $8::int, $9) WITH ORDINALITY s(match_id, match_rank, i)"
        " JOIN products p ON p.id = s.match_id ORDER BY s.i",
        RELEVANCE_PARAMS);

/* A search in another sort than relevance (newest, price_asc, price_desc): the matches
 * after the cursor in that order, a whole page of them (contract section 5), found one of
 * two ways decided inside the statement (CTEs are read only when needed):
 *   walk   the next rows in the sort's order (through the index made for the sort and
 *          the category or seller filter), each checked against q and the other filters:
 *          the page when they hold one, or when the walk reached the last row. A short
 *          walk of 16 rows per item first; when it found some matches but not a page, a
 *          long one of market_search_walk_rows(limit + 1) rows (the square root of rows
 *          wanted x rows of the table: a few thousand on a million products);
 *   index  else every match after the cursor through the GIN index of q's words, sorted:
 *          fewer matches than the walk's rows (uniformly spread), or it would have found
 *          a page (sql/migrations/018_whole_pages.sql). */

/* The filters the walk's index serves (its equality column and, for the price sorts, the
 * price range), or the rest (residual), on alias a; parameter numbers as in add_filters. */
static void add_split_filters(buf *sql, int filters, enum sort sort, bool walk, const char *a,
                              int first_param)
{
    int n = first_param;
    /* The walk reads the seller's index when there is a seller, else the category's. */
    bool category_in_walk = !(filters & F_SELLER);
    bool price_in_walk = sort != SORT_NEWEST;
    if (filters & F_CATEGORY) {
        if (category_in_walk == walk)
            buf_printf(sql, " AND %s.category = $%d", a, n);
        n++;
    }
    if (filters & F_SELLER) {
        if (walk)
            buf_printf(sql, " AND %s.seller_id = $%d", a, n);
        n++;
    }
    if (filters & F_MIN) {
        if (price_in_walk == walk)
            buf_printf(sql, " AND %s.price >= $%d::numeric", a, n);
        n++;
    }
    if (filters & F_MAX) {
        if (price_in_walk == walk)
            buf_printf(sql, " AND %s.price <= $%d::numeric", a, n);
    }
}

/* The walk of at most `limit` rows after the cursor, named walk<n>, and its matches,
 * hits<n>, a page at most (in walk order). */
static void add_walk(buf *sql, const char *n, const char *limit, int filters, enum sort sort,
                     const char *after)
{
    int first_filter = 4;
    buf_printf(sql,
               " walk%s AS MATERIALIZED (SELECT p.id, p.search, p.category, p.price"
               " FROM products p WHERE p.mode = $1 AND p.status = 'published'",
               n);
    add_split_filters(sql, filters, sort, true, "p", first_filter);
    buf_printf(sql, "%s ORDER BY %s LIMIT %s),", after, sorts[sort].order, limit);
    buf_printf(sql,
               " hits%s AS MATERIALIZED (SELECT p.id FROM walk%s p"
               " WHERE p.search @@ (SELECT tsq FROM q)",
               n, n);
    add_split_filters(sql, filters, sort, false, "p", first_filter);
    buf_puts(sql, " LIMIT $2),");
}

static void search_sql(buf *sql, int filters, enum sort sort)
{
    int first_filter = 4;
    int key_param = first_filter + !!(filters & F_CATEGORY) + !!(filters & F_SELLER) +
                    !!(filters & F_MIN) + !!(filters & F_MAX);
    char after[96] = "";
    if (filters & F_CURSOR)
        snprintf(after, sizeof after, " AND %s$%d::%s, $%d)", sorts[sort].after, key_param,
                 sorts[sort].cast, key_param + 1);

    /* q: the query ($3, as websearch_to_tsquery reads it, less its alternatives that
     * cannot match: 018_whole_pages.sql); bound: the rows the long walk may read. */
    buf_puts(sql, "WITH q AS MATERIALIZED (SELECT market_search_query($3) AS tsq),"
                  " bound AS MATERIALIZED (SELECT market_search_walk_rows($2::int) AS rows),");
    add_walk(sql, "1", "16 * $2", filters, sort, after);
    add_walk(sql, "2", "(SELECT rows FROM bound)", filters, sort, after);
    /* way: 1 the short walk holds the page (or every row left), 2 the long one does,
     * 3 the index. The long walk is read only when the short one's matches are dense
     * enough to fill a page within its bound (limit + 1 hits at the short walk's rate);
     * sparser ones are too rare for any walk. */
    buf_puts(sql,
             " way AS MATERIALIZED (SELECT CASE"
             " WHEN (SELECT count(*) FROM hits1) >= $2 OR (SELECT count(*) FROM walk1) < 16 * $2"
             " THEN 1 WHEN (SELECT count(*) FROM hits1) = 0 OR $2::bigint * 16 * $2"
             " > (SELECT rows FROM bound) * (SELECT count(*) FROM hits1) THEN 3"
             " WHEN (SELECT count(*) FROM hits2) >= $2"
             " OR (SELECT count(*) FROM walk2) < (SELECT rows FROM bound) THEN 2"
             " ELSE 3 END AS way),");
    /* The index way: every match after the cursor, then sorted. OFFSET 0 keeps the
     * planner from reading them in the sort's order, which is the walk again. */
    buf_puts(sql, " page AS ((SELECT id FROM hits1 WHERE (SELECT way FROM way) = 1)"
                  " UNION ALL (SELECT id FROM hits2 WHERE (SELECT way FROM way) = 2)"
                  " UNION ALL (SELECT p.id FROM (SELECT p.id, p.created_at, p.price"
                  " FROM products p WHERE (SELECT way FROM way) = 3 AND p.mode = $1"
                  " AND p.status = 'published' AND p.search @@ (SELECT tsq FROM q)");
    add_filters(sql, filters, "p", first_filter);
    buf_printf(sql, "%s OFFSET 0) p ORDER BY %s LIMIT $2))", after, sorts[sort].order);
    buf_printf(sql,
               " SELECT " PRODUCT_ITEM_COLUMNS ", %s FROM page u"
               " JOIN products p ON p.id = u.id ORDER BY %s",
               sorts[sort].key, sorts[sort].order);
}

/* The statement of one shape of the other sorts. Parameter order: $1 mode, $2 limit + 1,
 * then each present filter in the order q, category, seller, min, max, then the cursor key
 * and id. Every statement answers the item's columns and the sort key. */
static db_stmt *shape_statement(int filters, enum sort sort)
{
    db_stmt *s = &shapes[filters * SORT_RELEVANCE + sort];
    if (s->sql != NULL)
        return s;
    buf sql;
    buf_init(&sql, 2048);
    int n = 2 + !!(filters & F_Q) + !!(filters & F_CATEGORY) + !!(filters & F_SELLER) +
            !!(filters & F_MIN) + !!(filters & F_MAX);
    if (filters & F_Q) {
        search_sql(&sql, filters, sort);
        n += 2 * !!(filters & F_CURSOR);
    } else {
        buf_printf(&sql, "SELECT " PRODUCT_ITEM_COLUMNS ", %s FROM products p", sorts[sort].key);
        buf_puts(&sql, " WHERE p.mode = $1 AND p.status = 'published'");
        add_filters(&sql, filters, "p", 3);
        if (filters & F_CURSOR)
            buf_printf(&sql, " AND %s$%d::%s, $%d)", sorts[sort].after, n + 1, sorts[sort].cast,
                       n + 2);
        n += 2 * !!(filters & F_CURSOR);
        buf_printf(&sql, " ORDER BY %s LIMIT $2", sorts[sort].order);
    }

    char *name = xmalloc(40);
    snprintf(name, 40, "products_list_%d_%d", filters, (int)sort);
    s->name = name;
    s->sql = sql.data; /* kept for the life of the process, like the statement */
    s->nparams = n;
    return s;
}

/* Each input is valid on its own (routes.c); here what ties two together: the prices'
 * order, and the sort's default and its need of q. */
static bool parse_input(request *r, list_input *in)
{
    const api_input *given = &r->in;
    in->category = given->category;
    in->q = given->q;
    in->seller = given->seller;
    in->min_price = given->min_price.text;
    in->max_price = given->max_price.text;
    in->cursor_text = given->cursor;
    in->limit = (int)given->limit;
    if (in->min_price != NULL && in->max_price != NULL &&
        input_decimal_cmp(&given->min_price, &given->max_price) > 0)
        return respond_invalid(r, "parameter_invalid", "max_price",
                               "max_price must not be below min_price");
    in->sort = given->sort >= 0 ? (enum sort)given->sort
               : in->q != NULL  ? SORT_RELEVANCE
                                : SORT_NEWEST;
    if (in->sort == SORT_RELEVANCE && in->q == NULL)
        return respond_invalid(r, "parameter_invalid", "sort",
                               "sort=relevance needs a search query q");
    return true;
}

/* The cursor is bound to everything that shapes the list except the page size. */
static const char *build_context(request *r, const list_input *in)
{
    buf *ctx = request_buf(r, 256);
    buf_printf(ctx, "%s;", r->route_label);
    cursor_context_add(ctx, "mode", r->caller.mode);
    cursor_context_add(ctx, "category", in->category);
    cursor_context_add(ctx, "q", in->q);
    cursor_context_add(ctx, "seller", in->seller);
    cursor_context_add(ctx, "min_price", in->min_price);
    cursor_context_add(ctx, "max_price", in->max_price);
    cursor_context_add(ctx, "sort", products_sorts[in->sort]);
    const char *context = arena_strndup(r->arena, ctx->data, ctx->len);
    return context;
}

/* A relevance cursor holds the rank of its row: a number of words of q, written by
 * render below; anything else was not made here (a MAC'd cursor cannot be forged, but one
 * from an older ranking could be kept). */
static bool relevance_cursor_valid(const list_input *in)
{
    const char *rank = in->cursor[0];
    size_t len = strspn(rank, "0123456789");
    return len >= 1 && len <= 3 && rank[len] == '\0';
}

/* The relevance statement's parameters (see products_list_relevance). */
static void relevance_params(request *r, const list_input *in, const char **params)
{
    params[0] = r->caller.mode;
    params[1] = arena_printf(r->arena, "%d", in->limit + 1);
    params[2] = in->q;
    params[3] = in->category;
    params[4] = in->seller;
    params[5] = in->min_price;
    params[6] = in->max_price;
    params[7] = in->cursor_text != NULL ? in->cursor[0] : NULL;
    params[8] = in->cursor_text != NULL ? in->cursor[1] : NULL;
}

bool products_list_plan(request *r, catalogue_read *read)
{
    list_input *in = arena_alloc(r->arena, sizeof *in);
    memset(in, 0, sizeof *in);
    read->input = in;
    if (!parse_input(r, in))
        return false;
    in->context = build_context(r, in);
    if (!paging_cursor(r, in->context, in->cursor_text, in->cursor, 2))
        return false;
    if (in->sort == SORT_RELEVANCE) {
        if (in->cursor_text != NULL && !relevance_cursor_valid(in))
            return respond_invalid(r, "cursor_invalid", "cursor",
                                   "cursor is not a next_cursor of this list with these filters");
        relevance_params(r, in, read->params);
        read->stmt = &products_list_relevance;
        return true;
    }

    const char **params = read->params;
    int n = 0, filters = 0;
    params[n++] = r->caller.mode;
    params[n++] = arena_printf(r->arena, "%d", in->limit + 1);
    const char *optional[] = {in->q, in->category, in->seller, in->min_price, in->max_price};
    const int flags[] = {F_Q, F_CATEGORY, F_SELLER, F_MIN, F_MAX};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        if (optional[i] != NULL) {
            filters |= flags[i];
            params[n++] = optional[i];
        }
    }
    if (in->cursor_text != NULL) {
        filters |= F_CURSOR;
        params[n++] = in->cursor[0];
        params[n++] = in->cursor[1];
    }
    read->stmt = shape_statement(filters, in->sort);
    return true;
}

void products_list_render(request *r, const catalogue_read *read, db_result *res)
{
    const list_input *in = read->input;
    int rows = db_rows(res);
    /* The statement reads one row more than the page: there, the next page starts. */
    bool more = rows > in->limit;
    int items = more ? in->limit : rows;
    respond_json(r, 200);
    json_writer *j = &r->json;
    jw_object_begin(j);
    jw_key(j, "data");
    jw_array_begin(j);
    for (int i = 0; i < items; i++)
        catalogue_write_item(j, res, i, 0);
    jw_array_end(j);
    if (more) {
        const char *key[2] = {db_text(res, items - 1, PRODUCT_ITEM_NCOLS),
                              db_text(res, items - 1, 0)};
        paging_write_next(r, in->context, key, 2);
    } else {
        paging_write_next(r, in->context, NULL, 0);
    }
    jw_object_end(j);
}
