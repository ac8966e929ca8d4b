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
#include "money.h"
#include "paging.h"
#include "params.h"
#include "routes.h"
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

/* Per sort: the key selected for the cursor, the keyset condition and the order. */
static const struct {
    const char *key;
    const char *after; /* "(key, id) OP (" — the cursor parameters follow */
    const char *cast;
    const char *order;
} sorts[SORT_RELEVANCE] = {
    {"p.created_at::text", "(p.created_at, p.id) < (", "timestamptz",
     "p.created_at DESC, p.id DESC"},
    {"p.price::text", "(p.price, p.id) > (", "numeric", "p.price, p.id"},
    {"p.price::text", "(p.price, p.id) < (", "numeric", "p.price DESC, p.id DESC"},
};

/* Relevance has two ranks: 1 when the title alone matches q, 0 when only title and
 * description together do; ties go by id, descending. Each rank is a stream of ids in id
 * order, found in the cheapest of three ways for this q (see search_rank below):
 *   probe   the next PROBE rows of the (mode, id) index, each checked against q;
 *   window  the same over the next WINDOW rows, when the probe found some matches but
 *           too few, and their density promises at least half a page in the window;
 *   index   the GIN index, when matches are rare (the probe found too few to promise a
 *           page), or when the window came up short after all.
 * So a common word costs a short walk of the index, a rare one a look-up of its few
 * matches, and no search costs the whole set of its matches. WINDOW is
 * MARKET_SEARCH_WINDOW rows for rank 1 without other filters, which reads the index
 * alone (an index-only scan), and two fifths of that where rows are read from the table;
 * PROBE is a tenth of WINDOW. */
#define PROBE_SHARE 10

/* Reading a GIN index for q is cheap when it costs at most this many index entries per row
 * of the walk it replaces (see add_index_cheap). */
#define POSTINGS_PER_ROW 4

/* A cursor's rank: "1" or "0", as written by render below. */
enum rank_cursor { RANK_FIRST_PAGE, RANK_IN_TITLE, RANK_IN_TEXT };

typedef struct {
    const char *category, *q, *seller, *min_price, *max_price, *cursor_text;
    enum sort sort;
    int limit;
    char *cursor[2];     /* sort key, id */
    const char *context; /* what the cursor is bound to */
} list_input;

static db_stmt shapes[64 * SORT_COUNT * 3];

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

/* The CTEs every search statement starts with, after "WITH ": q (the query, $3), and for
 * each GIN-indexed column the estimate of what reading its index for q costs.
 *   q.tsq    the query;
 *   q.tree   the part of it an index can answer ('T' when none: "-word" alone);
 *   q.loose  that part with its phrases loosened to AND ("a <-> b" to "a & b"), which the
 *            GIN index answers exactly, without reading the table to recheck a phrase;
 *   est_COLUMN.postings  how many entries the column's GIN index would read for loose,
 *            from the planner's statistics of the column (its most common lexemes and
 *            their frequencies; a lexeme not among them counts 0, being rarer than all of
 *            them): the rarest of an AND's words or the sum of an OR's, plus every
 *            excluded word; NULL when the index cannot answer q at all. */
static void add_query_ctes(buf *sql)
{
    buf_puts(sql, "q AS MATERIALIZED (SELECT t.tsq, t.tree, CASE WHEN t.tree = 'T' THEN NULL"
                  " ELSE regexp_replace(t.tree, ' <(-|[0-9]+)> ', ' & ', 'g')::tsquery END AS loose"
                  " FROM (SELECT s.tsq, querytree(s.tsq) AS tree FROM (SELECT"
                  " websearch_to_tsquery('english', $3) AS tsq) s) t),");
    static const char *const columns[] = {"search", "title_search"};
    for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++)
        buf_printf(sql,
                   " est_%s AS MATERIALIZED (SELECT CASE WHEN q.tree = 'T' THEN NULL ELSE (SELECT"
                   " CASE WHEN strpos(q.tree, '|') > 0"
                   " THEN coalesce(sum(l.f) FILTER (WHERE NOT l.neg), 0)"
                   " ELSE coalesce(min(l.f) FILTER (WHERE NOT l.neg), 0) END"
                   " + coalesce(sum(l.f) FILTER (WHERE l.neg), 0) FROM (SELECT m[1] = '!' AS neg,"
                   " coalesce(s.most_common_elem_freqs[array_position("
                   "s.most_common_elems::text::text[], replace(m[2], '''''', ''''))], 0)"
                   " * c.reltuples AS f"
                   " FROM regexp_matches(q.tree, '(!?)''((?:[^'']|'''')*)''', 'g') m, pg_class c"
                   " LEFT JOIN pg_stats s ON s.schemaname = current_schema()"
                   " AND s.tablename = 'products' AND s.attname = '%s'"
                   " WHERE c.oid = 'products'::regclass) l) END AS postings FROM q),",
                   columns[i], columns[i]);
}

/* A condition: reading the GIN index of column for q is cheap, so that all its matches
 * may be read and sorted: the statistics promise at most POSTINGS_PER_ROW * rows index
 * entries, and the index holds fewer than `rows` candidates (counted by reading at most
 * `rows` of them). */
static void add_index_cheap(buf *sql, const char *column, long rows)
{
    buf_printf(sql,
               "((SELECT postings FROM est_%s) <= %ld AND (SELECT count(*) FROM"
               " (SELECT 1 FROM products c WHERE c.status = 'published'"
               " AND c.%s @@ (SELECT loose FROM q) LIMIT %ld) x) < %ld)",
               column, POSTINGS_PER_ROW * rows, column, rows, rows);
}

/* What a match of the rank is: rank 1 the title matches q, rank 0 only title and
 * description together do. */
static void add_match(buf *sql, int rank, const char *a)
{
    if (rank == 1)
        buf_printf(sql, "%s.title_search @@ (SELECT tsq FROM q)", a);
    else
        buf_printf(
            sql, "%s.search @@ (SELECT tsq FROM q) AND NOT %s.title_search @@ (SELECT tsq FROM q)",
            a, a);
}

/* The next `rows` published rows of the mode in id order, after the cursor id if any. */
static void add_scan(buf *sql, const char *columns, const char *after, long rows)
{
    buf_printf(sql,
               "(SELECT %s FROM products p WHERE p.mode = $1 AND p.status = 'published'%s"
               " ORDER BY p.id DESC LIMIT %ld)",
               columns, after, rows);
}

/* The matches among the next `rows` rows: at most a page (LIMIT $2), so the scan stops
 * as soon as it has found a page. */
static void add_hits(buf *sql, int rank, int filters, const char *after, long rows)
{
    bool plain = (filters & ~(F_Q | F_CURSOR)) == 0;
    /* Only the columns needed, so that rank 1 without filters reads the index alone. */
    const char *columns = rank == 1
                              ? (plain ? "p.id, p.title_search"
                                       : "p.id, p.title_search, p.category, p.seller_id, p.price")
                              : (plain ? "p.id, p.search, p.title_search"
                                       : "p.id, p.search, p.title_search, p.category,"
                                         " p.seller_id, p.price");
    buf_puts(sql, "SELECT w.id FROM ");
    add_scan(sql, columns, after, rows);
    buf_puts(sql, " w WHERE ");
    add_match(sql, rank, "w");
    add_filters(sql, filters, "w", 4);
    buf_puts(sql, " LIMIT $2");
}

/* "the scan of `rows` rows reached the end of the mode's rows" */
static void add_short(buf *sql, const char *after, long rows)
{
    buf_puts(sql, "(SELECT count(*) FROM ");
    add_scan(sql, "1", after, rows);
    buf_printf(sql, " x) < %ld", rows);
}

/* One rank's stream as the CTEs rN_probe, rN_window, rN_cheap, rN_way, rN_bound and rN
 * (ids, in order). rN_way picks the way: 1 probe, 2 window, 3 index, or 4 when the
 * window came up short and the index is not cheap: then rN holds the window's matches and
 * the page ends at the window's last row (rN_bound), where the next page goes on.
 * PostgreSQL evaluates a CASE's branches in order and a CTE only when read, so only what
 * is needed runs. */
static void search_rank(buf *sql, long window_rows, int rank, int filters, bool after_cursor,
                        int cursor_param)
{
    bool plain = (filters & ~(F_Q | F_CURSOR)) == 0;
    long window = rank == 1 && plain ? window_rows : (window_rows * 2 + 4) / 5;
    long probe = (window + PROBE_SHARE - 1) / PROBE_SHARE;
    char after[32] = "";
    if (after_cursor)
        snprintf(after, sizeof after, " AND p.id < $%d", cursor_param);

    buf_printf(sql, " r%d_probe AS MATERIALIZED (", rank);
    add_hits(sql, rank, filters, after, probe);
    buf_printf(sql, "), r%d_window AS MATERIALIZED (", rank);
    add_hits(sql, rank, filters, after, window);
    buf_printf(sql, "), r%d_cheap AS MATERIALIZED (SELECT ", rank);
    add_index_cheap(sql, rank == 1 ? "title_search" : "search", (window_rows * 2 + 4) / 5);
    buf_printf(sql,
               " AS ok), r%d_way AS MATERIALIZED (SELECT CASE"
               " WHEN (SELECT count(*) FROM r%d_probe) >= $2 THEN 1 WHEN ",
               rank, rank);
    add_short(sql, after, probe);
    /* The window is tried when it promises at least half a page: below that, matches
     * are rare enough (under about one in a thousand rows) that the index costs less
     * than a long walk that may come up short anyway, if the index is cheap. */
    buf_printf(sql,
               " THEN 1 WHEN (SELECT count(*) FROM r%d_probe) * %d < $2"
               " AND (SELECT ok FROM r%d_cheap) THEN 3"
               " WHEN (SELECT count(*) FROM r%d_window) >= $2 THEN 2 WHEN ",
               rank, 2 * PROBE_SHARE, rank, rank);
    add_short(sql, after, window);
    buf_printf(sql,
               " THEN 2 WHEN (SELECT ok FROM r%d_cheap) THEN 3 ELSE 4 END AS way),"
               " r%d_bound AS MATERIALIZED (SELECT min(x.id) AS id FROM ",
               rank, rank);
    add_scan(sql, "p.id", after, window);
    buf_printf(sql,
               " x), r%d AS ((SELECT id FROM r%d_probe WHERE (SELECT way FROM r%d_way) = 1)"
               " UNION ALL (SELECT id FROM r%d_window WHERE (SELECT way FROM r%d_way) IN (2, 4))"
               " UNION ALL (SELECT g.id FROM (SELECT p.id FROM products p"
               " WHERE p.mode = $1 AND p.status = 'published'%s AND ",
               rank, rank, rank, rank, rank, after);
    add_match(sql, rank, "p");
    add_filters(sql, filters, "p", 4);
    /* OFFSET 0 keeps the planner from reading this in id order: that is the other ways'
     * walk, and too slow here, where matches are rare. */
    buf_printf(sql,
               " OFFSET 0) g WHERE (SELECT way FROM r%d_way) = 3 ORDER BY g.id DESC LIMIT $2))",
               rank);
}

/* The relevance statement: parameters $1 mode, $2 limit + 1, $3 q, the other filters,
 * then the cursor id. Rank 1 comes first; rank 0 is read only when rank 1 runs out, and
 * not at all when rank 1's page ends at its window (way 4). Then a boundary row when the
 * page ends at a window (see bounded_search_sql). */
static void relevance_sql(buf *sql, long window, int filters, enum rank_cursor from)
{
    int cursor_param = 4 + !!(filters & F_CATEGORY) + !!(filters & F_SELLER) + !!(filters & F_MIN) +
                       !!(filters & F_MAX);
    bool title_rank = from != RANK_IN_TEXT;
    buf_puts(sql, "WITH ");
    add_query_ctes(sql);
    if (title_rank) {
        search_rank(sql, window, 1, filters, from == RANK_IN_TITLE, cursor_param);
        buf_putc(sql, ',');
    }
    search_rank(sql, window, 0, filters, from == RANK_IN_TEXT, cursor_param);
    /* The page: rank 1's ids, then rank 0's, a page in all (the LIMIT stops the append
     * before rank 0 when rank 1 filled the page). */
    buf_puts(sql, ", page AS MATERIALIZED (SELECT * FROM (");
    if (title_rank)
        buf_puts(sql, "(SELECT id, 1 AS rank FROM r1 ORDER BY id DESC LIMIT $2) UNION ALL ");
    buf_puts(sql, "(SELECT id, 0 AS rank FROM r0");
    if (title_rank)
        buf_puts(sql, " WHERE (SELECT way FROM r1_way) <> 4");
    buf_puts(sql, " ORDER BY id DESC LIMIT $2)) b LIMIT $2),"
                  " bound AS MATERIALIZED (SELECT CASE WHEN (SELECT count(*) FROM page) >= $2"
                  " THEN NULL");
    if (title_rank)
        buf_puts(sql, " WHEN (SELECT way FROM r1_way) = 4 THEN 1");
    buf_puts(sql, " WHEN (SELECT way FROM r0_way) = 4 THEN 0 END AS rank)");
    /* Then the rows of those ids, and the boundary's. */
    buf_puts(sql, " (SELECT " PRODUCT_ITEM_COLUMNS ", u.rank::text, false FROM page u"
                  " JOIN products p ON p.id = u.id ORDER BY u.rank DESC, u.id DESC)"
                  " UNION ALL (SELECT " PRODUCT_ITEM_COLUMNS ", b.rank::text, true FROM bound b"
                  " JOIN products p ON p.id = ");
    if (title_rank)
        buf_puts(sql, "CASE b.rank WHEN 1 THEN (SELECT id FROM r1_bound)"
                      " ELSE (SELECT id FROM r0_bound) END");
    else
        buf_puts(sql, "(SELECT id FROM r0_bound)");
    buf_puts(sql, " WHERE b.rank IS NOT NULL)");
}

/* A search in another sort than relevance (newest, price_asc, price_desc): the matches in
 * that order, found without reading more than a bounded number of rows whatever q
 * matches. Two ways, decided inside the statement (CTEs are read only when needed, a
 * CASE's branches in order):
 *   walk   the next `walk_rows` rows in the sort's order (through the index made for the
 *          sort and the category or seller filter), each checked against q and the other
 *          filters: a page as soon as matches are dense enough to give one there;
 *   index  else, when the GIN index holds fewer than `walk_rows` candidates, and reading
 *          them costs it at most POSTINGS_PER_ROW times `walk_rows` entries (as the
 *          planner's statistics tell), all of them, sorted: matches are rare.
 * When neither holds (many candidates, yet too few of them near the cursor to fill a
 * page), the page has the walk's matches only (possibly none) and next_cursor points at
 * the walk's last row: the next page goes on from there. The statement then answers a
 * last row marked as the boundary, which names that row (see products_list_render). The
 * candidates are counted with q's phrases loosened to plain AND ("a <-> b" to "a & b"),
 * which the GIN index answers exactly. */

/* Per sort: the walk's order backwards (its last row first). */
static const char *const walk_reversed[SORT_RELEVANCE] = {
    "w.created_at, w.id",
    "w.price DESC, w.id DESC",
    "w.price, w.id",
};

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

static void bounded_search_sql(buf *sql, long walk_rows, int filters, enum sort sort)
{
    int first_filter = 4;
    int key_param = first_filter + !!(filters & F_CATEGORY) + !!(filters & F_SELLER) +
                    !!(filters & F_MIN) + !!(filters & F_MAX);
    char after[96] = "";
    if (filters & F_CURSOR)
        snprintf(after, sizeof after, " AND %s$%d::%s, $%d)", sorts[sort].after, key_param,
                 sorts[sort].cast, key_param + 1);

    buf_puts(sql, "WITH ");
    add_query_ctes(sql);
    /* walk: rows in the sort's order; hits: its matches, a page at most (in walk order). */
    buf_puts(sql, " walk AS MATERIALIZED (SELECT p.id, p.created_at, p.price, p.category,"
                  " p.search FROM products p WHERE p.mode = $1 AND p.status = 'published'");
    add_split_filters(sql, filters, sort, true, "p", first_filter);
    buf_printf(sql, "%s ORDER BY %s LIMIT %ld),", after, sorts[sort].order, walk_rows);
    buf_puts(sql, " hits AS MATERIALIZED (SELECT p.id FROM walk p"
                  " WHERE p.search @@ (SELECT tsq FROM q)");
    add_split_filters(sql, filters, sort, false, "p", first_filter);
    buf_puts(sql, " LIMIT $2),");
    buf_printf(sql,
               " way AS MATERIALIZED (SELECT CASE"
               " WHEN (SELECT count(*) FROM hits) >= $2 OR (SELECT count(*) FROM walk) < %ld"
               " THEN 1 WHEN ",
               walk_rows);
    add_index_cheap(sql, "search", walk_rows);
    buf_puts(sql, " THEN 2 ELSE 3 END AS way),");
    /* The index way: every match after the cursor, then sorted. OFFSET 0 keeps the
     * planner from reading them in the sort's order, which is the walk, too slow here. */
    buf_puts(sql, " page AS ((SELECT id FROM hits WHERE (SELECT way FROM way) <> 2)"
                  " UNION ALL (SELECT p.id FROM (SELECT p.id, p.created_at, p.price"
                  " FROM products p WHERE (SELECT way FROM way) = 2 AND p.mode = $1"
                  " AND p.status = 'published' AND p.search @@ (SELECT tsq FROM q)");
    add_filters(sql, filters, "p", first_filter);
    buf_printf(sql, "%s OFFSET 0) p ORDER BY %s LIMIT $2))", after, sorts[sort].order);
    buf_printf(sql,
               " (SELECT " PRODUCT_ITEM_COLUMNS ", %s, false FROM page u"
               " JOIN products p ON p.id = u.id ORDER BY %s)",
               sorts[sort].key, sorts[sort].order);
    buf_printf(sql,
               " UNION ALL (SELECT " PRODUCT_ITEM_COLUMNS ", %s, true FROM (SELECT w.id"
               " FROM walk w WHERE (SELECT way FROM way) = 3 ORDER BY %s LIMIT 1) b"
               " JOIN products p ON p.id = b.id)",
               sorts[sort].key, walk_reversed[sort]);
}

/* The statement of one shape. Parameter order: $1 mode, $2 limit + 1, then each present
 * filter in the order q, category, seller, min, max, then the cursor key and id (for
 * relevance the cursor id only: its rank is part of the shape). Every statement answers
 * the item's columns, the sort key, and a column that is true on a boundary row only. */
static db_stmt *shape_statement(long window, int filters, enum sort sort, enum rank_cursor from)
{
    db_stmt *s = &shapes[(filters * SORT_COUNT + sort) * 3 + from];
    if (s->sql != NULL)
        return s;
    buf sql;
    buf_init(&sql, 2048);
    int n = 2 + !!(filters & F_Q) + !!(filters & F_CATEGORY) + !!(filters & F_SELLER) +
            !!(filters & F_MIN) + !!(filters & F_MAX);
    if (sort == SORT_RELEVANCE) {
        relevance_sql(&sql, window, filters, from);
        n += !!(filters & F_CURSOR);
    } else if (filters & F_Q) {
        bounded_search_sql(&sql, (window * 2 + 4) / 5, filters, sort);
        n += 2 * !!(filters & F_CURSOR);
    } else {
        buf_printf(&sql, "SELECT " PRODUCT_ITEM_COLUMNS ", %s, false FROM products p",
                   sorts[sort].key);
        buf_puts(&sql, " WHERE p.mode = $1 AND p.status = 'published'");
        add_filters(&sql, filters, "p", 3);
        if (filters & F_CURSOR)
            buf_printf(&sql, " AND %s$%d::%s, $%d)", sorts[sort].after, n + 1, sorts[sort].cast,
                       n + 2);
        n += 2 * !!(filters & F_CURSOR);
        buf_printf(&sql, " ORDER BY %s LIMIT $2", sorts[sort].order);
    }

    char *name = xmalloc(40);
    snprintf(name, 40, "products_list_%d_%d_%d", filters, (int)sort, (int)from);
    s->name = name;
    s->sql = sql.data; /* kept for the life of the process, like the statement */
    s->nparams = n;
    return s;
}

/* sort is one of products_sorts (routes.c checked it); without it, relevance when
 * searching, else newest. */
static bool parse_sort(request *r, const char *text, list_input *in)
{
    in->sort = in->q != NULL ? SORT_RELEVANCE : SORT_NEWEST;
    for (int i = 0; text != NULL && i < SORT_COUNT; i++)
        if (strcmp(text, products_sorts[i]) == 0)
            in->sort = (enum sort)i;
    if (in->sort == SORT_RELEVANCE && in->q == NULL)
        return respond_invalid(r, "parameter_invalid", "sort",
                               "sort=relevance needs a search query q");
    return true;
}

/* Each parameter is valid on its own (routes.c); here what ties two together. */
static bool parse_input(request *r, list_input *in)
{
    in->category = request_param(r, "category");
    in->q = request_param(r, "q");
    in->seller = request_param(r, "seller");
    in->min_price = request_param(r, "min_price");
    in->max_price = request_param(r, "max_price");
    in->cursor_text = request_param(r, "cursor");
    in->limit = param_limit(request_param(r, "limit"));
    if (in->min_price != NULL && in->max_price != NULL &&
        decimal_compare(in->min_price, in->max_price) > 0)
        return respond_invalid(r, "parameter_invalid", "max_price",
                               "max_price must not be below min_price");
    return parse_sort(r, request_param(r, "sort"), in);
}

/* The cursor is bound to everything that shapes the list except the page size. */
static const char *build_context(request *r, const list_input *in)
{
    buf *ctx = request_buf(r, 256);
    buf_printf(ctx, "%s;", routes_label(r));
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

/* A relevance cursor holds the rank of its row, "1" or "0"; anything else was not made
 * here (a MAC'd cursor cannot be forged, but one from an older ranking could be kept). */
static bool relevance_from(request *r, const list_input *in, enum rank_cursor *from)
{
    *from = RANK_FIRST_PAGE;
    if (in->sort != SORT_RELEVANCE || in->cursor_text == NULL)
        return true;
    if (strcmp(in->cursor[0], "1") == 0)
        *from = RANK_IN_TITLE;
    else if (strcmp(in->cursor[0], "0") == 0)
        *from = RANK_IN_TEXT;
    else
        return respond_invalid(r, "cursor_invalid", "cursor",
                               "cursor is not a next_cursor of this list with these filters");
    return true;
}

bool products_list_plan(request *r, catalogue_read *read)
{
    list_input *in = arena_alloc(r->arena, sizeof *in);
    memset(in, 0, sizeof *in);
    read->input = in;
    if (!parse_input(r, in))
        return false;
    in->context = build_context(r, in);
    enum rank_cursor from;
    if (!paging_cursor(r, in->context, in->cursor_text, in->cursor, 2) ||
        !relevance_from(r, in, &from))
        return false;

    char *limit_plus_one = arena_printf(r->arena, "%d", in->limit + 1);
    const char **params = read->params;
    int n = 0, filters = 0;
    params[n++] = r->caller.mode;
    params[n++] = limit_plus_one;
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
        if (in->sort != SORT_RELEVANCE) /* a relevance cursor's rank is in the shape */
            params[n++] = in->cursor[0];
        params[n++] = in->cursor[1];
    }
    read->stmt = shape_statement(r->w->cfg.search_window, filters, in->sort, from);
    return true;
}

void products_list_render(request *r, const catalogue_read *read, PGresult *res)
{
    const list_input *in = read->input;
    int rows = PQntuples(res);
    /* A boundary row (bounded_search_sql) is no item: the page ends there, more follows. */
    bool boundary = rows > 0 && db_text(res, rows - 1, PRODUCT_ITEM_NCOLS + 1)[0] == 't';
    int items = boundary ? rows - 1 : rows;
    bool more = boundary || items > in->limit;
    if (items > in->limit)
        items = in->limit;
    int last = boundary ? rows - 1 : items - 1;
    respond_json(r, 200);
    json_writer *j = &r->json;
    jw_object_begin(j);
    jw_key(j, "data");
    jw_array_begin(j);
    for (int i = 0; i < items; i++)
        catalogue_write_item(j, res, i, 0);
    jw_array_end(j);
    if (more) {
        const char *key[2] = {db_text(res, last, PRODUCT_ITEM_NCOLS), db_text(res, last, 0)};
        paging_write_next(r, in->context, key, 2);
    } else {
        paging_write_next(r, in->context, NULL, 0);
    }
    jw_object_end(j);
}
