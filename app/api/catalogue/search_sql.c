/* search_sql: the SQL of GET /v1/products, apart from its handler (products_list.c) so
 * that what PostgreSQL is asked for a search, and why each page stays whole and bounded,
 * reads in one file. The handler reads the inputs and the cursor and names a statement;
 * this file builds that statement, once per shape, from constant fragments (values are
 * always parameters), so each shape gets a plan that uses the index made for it (see
 * 001_core.sql) instead of one generic plan full of "param IS NULL OR" branches. The
 * relevance walk and the search helpers it calls are SQL functions of the migrations
 * (018_whole_pages.sql, 020_walks_stop_at_the_page.sql,
 * 021_rank_titles_planned_each_time.sql, 022_counted_read_when_rare.sql,
 * 023_title_pairs.sql). */
#include "search_sql.h"

#include <stdio.h>

#include "buf.h"
#include "catalogue.h"
#include "mem.h"

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

static db_stmt shapes[64 * SORT_RELEVANCE];

/* The filters other than q, on table alias a; parameters numbered from *n. */
static void add_filters(buf *sql, int filters, const char *a, int first_param)
{
    int n = first_param;
    if (filters & FILTER_CATEGORY)
        buf_printf(sql, " AND %s.category = $%d", a, n++);
    if (filters & FILTER_SELLER)
        buf_printf(sql, " AND %s.seller_id = $%d", a, n++);
    if (filters & FILTER_MIN)
        buf_printf(sql, " AND %s.price >= $%d::numeric", a, n++);
    if (filters & FILTER_MAX)
        buf_printf(sql, " AND %s.price <= $%d::numeric", a, n++);
}

/* Relevance (contract section 6): a match's rank is the number of distinct words of q its
 * title holds (0: a match by its description alone); higher rank first, then id
 * descending. One statement for every filter: market_relevance_page
 * (sql/migrations/018_whole_pages.sql) finds the page's ids rank by rank, each rank
 * by a bounded walk in id order or, when that finds no page, through a GIN index
 * (its parameters: search_sql.h). */
/* The prepared statements keep the route's name (products_list_*): it is what the log
 * lines of a cancelled statement and pg_stat_statements show operators. */
db_stmt search_sql_relevance = {
    "products_list_relevance",
    "SELECT " PRODUCT_ITEM_COLUMNS ", s.match_rank::text"
    " FROM market_relevance_page($1, $2::int, $3, $4, $5, $6::numeric, $7::numeric,"
    " $8::int, $9) WITH ORDINALITY s(match_id, match_rank, i)"
    " JOIN products p ON p.id = s.match_id ORDER BY s.i",
    RELEVANCE_PARAMS, 0};

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
static void add_split_filters(buf *sql, int filters, enum list_sort sort, bool walk, const char *a,
                              int first_param)
{
    int n = first_param;
    /* The walk reads the seller's index when there is a seller, else the category's. */
    bool category_in_walk = !(filters & FILTER_SELLER);
    bool price_in_walk = sort != SORT_NEWEST;
    if (filters & FILTER_CATEGORY) {
        if (category_in_walk == walk)
            buf_printf(sql, " AND %s.category = $%d", a, n);
        n++;
    }
    if (filters & FILTER_SELLER) {
        if (walk)
            buf_printf(sql, " AND %s.seller_id = $%d", a, n);
        n++;
    }
    if (filters & FILTER_MIN) {
        if (price_in_walk == walk)
            buf_printf(sql, " AND %s.price >= $%d::numeric", a, n);
        n++;
    }
    if (filters & FILTER_MAX) {
        if (price_in_walk == walk)
            buf_printf(sql, " AND %s.price <= $%d::numeric", a, n);
    }
}

/* The walk of at most `limit` rows after the cursor, named walk<n>, and its matches,
 * hits<n>, a page at most (in walk order). */
static void add_walk(buf *sql, const char *n, const char *limit, int filters, enum list_sort sort,
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

static void search_sql(buf *sql, int filters, enum list_sort sort)
{
    int first_filter = 4;
    int key_param = first_filter + !!(filters & FILTER_CATEGORY) + !!(filters & FILTER_SELLER) +
                    !!(filters & FILTER_MIN) + !!(filters & FILTER_MAX);
    char after[96] = "";
    if (filters & FILTER_CURSOR)
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

/* Built at its first use and kept for the process's life, like the prepared statement. */
db_stmt *search_sql_statement(int filters, enum list_sort sort)
{
    db_stmt *s = &shapes[filters * SORT_RELEVANCE + sort];
    if (s->sql != NULL)
        return s;
    buf sql;
    buf_init(&sql, 2048);
    int n = 2 + !!(filters & FILTER_Q) + !!(filters & FILTER_CATEGORY) +
            !!(filters & FILTER_SELLER) + !!(filters & FILTER_MIN) + !!(filters & FILTER_MAX);
    if (filters & FILTER_Q) {
        search_sql(&sql, filters, sort);
        n += 2 * !!(filters & FILTER_CURSOR);
    } else {
        buf_printf(&sql, "SELECT " PRODUCT_ITEM_COLUMNS ", %s FROM products p", sorts[sort].key);
        buf_puts(&sql, " WHERE p.mode = $1 AND p.status = 'published'");
        add_filters(&sql, filters, "p", 3);
        if (filters & FILTER_CURSOR)
            buf_printf(&sql, " AND %s$%d::%s, $%d)", sorts[sort].after, n + 1, sorts[sort].cast,
                       n + 2);
        n += 2 * !!(filters & FILTER_CURSOR);
        buf_printf(&sql, " ORDER BY %s LIMIT $2", sorts[sort].order);
    }

    char *name = xmalloc(40);
    snprintf(name, 40, "products_list_%d_%d", filters, (int)sort);
    s->name = name;
    s->sql = sql.data; /* kept for the life of the process, like the statement */
    s->nparams = n;
    return s;
}
