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
#include "money.h"
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
#define SHAPES (64 * SORT_COUNT)

static const char *const sort_names[SORT_COUNT] = {"newest", "price_asc", "price_desc",
                                                   "relevance"};

/* Per sort: the key selected for the cursor, the keyset condition and the order. */
static const struct {
    const char *key;
    const char *after; /* "(key, id) OP (" — the cursor parameters follow */
    const char *cast;
    const char *order;
} sorts[SORT_COUNT] = {
    {"p.created_at::text", "(p.created_at, p.id) < (", "timestamptz",
     "p.created_at DESC, p.id DESC"},
    {"p.price::text", "(p.price, p.id) > (", "numeric", "p.price, p.id"},
    {"p.price::text", "(p.price, p.id) < (", "numeric", "p.price DESC, p.id DESC"},
    {"ts_rank(p.search, tsq)::text", "(ts_rank(p.search, tsq), p.id) < (", "real",
     "ts_rank(p.search, tsq) DESC, p.id DESC"},
};

typedef struct {
    const char *category, *q, *seller, *min_price, *max_price, *cursor_text;
    enum sort sort;
    int limit;
    char *cursor[2]; /* sort key, id */
} list_input;

static db_stmt shapes[SHAPES];

/* Builds the SQL of one shape. Parameter order: $1 mode, $2 limit + 1, then each present
 * filter in the order category, seller, q, min, max, then the cursor key and id. */
static db_stmt *shape_statement(int filters, enum sort sort)
{
    db_stmt *s = &shapes[filters * SORT_COUNT + sort];
    if (s->sql != NULL)
        return s;
    buf sql;
    buf_init(&sql, 1024);
    int n = 2;
    buf_printf(&sql, "SELECT " PRODUCT_ITEM_COLUMNS ", %s FROM products p", sorts[sort].key);
    int q_param = 0;
    if (filters & F_Q) {
        /* The q parameter number is fixed by the order below; compute it first. */
        q_param = 3 + !!(filters & F_CATEGORY) + !!(filters & F_SELLER);
        buf_printf(&sql, ", websearch_to_tsquery('english', $%d) tsq", q_param);
    }
    buf_puts(&sql, " WHERE p.mode = $1 AND p.status = 'published'");
    if (filters & F_CATEGORY)
        buf_printf(&sql, " AND p.category = $%d", ++n);
    if (filters & F_SELLER)
        buf_printf(&sql, " AND p.seller_id = $%d", ++n);
    if (filters & F_Q) {
        ++n;
        buf_puts(&sql, " AND p.search @@ tsq");
    }
    if (filters & F_MIN)
        buf_printf(&sql, " AND p.price >= $%d::numeric", ++n);
    if (filters & F_MAX)
        buf_printf(&sql, " AND p.price <= $%d::numeric", ++n);
    if (filters & F_CURSOR) {
        buf_printf(&sql, " AND %s$%d::%s, $%d)", sorts[sort].after, n + 1, sorts[sort].cast, n + 2);
        n += 2;
    }
    buf_printf(&sql, " ORDER BY %s LIMIT $2", sorts[sort].order);

    char *name = malloc(32);
    if (name == NULL)
        abort();
    snprintf(name, 32, "products_list_%d_%d", filters, (int)sort);
    s->name = name;
    s->sql = sql.data; /* kept for the life of the process, like the statement */
    s->nparams = n;
    return s;
}

static bool parse_sort(request *r, const char *text, list_input *in)
{
    if (text == NULL) {
        in->sort = in->q != NULL ? SORT_RELEVANCE : SORT_NEWEST;
        return true;
    }
    for (int i = 0; i < SORT_COUNT; i++) {
        if (strcmp(text, sort_names[i]) == 0) {
            in->sort = (enum sort)i;
            if (in->sort == SORT_RELEVANCE && in->q == NULL)
                return respond_invalid(r, "parameter_invalid", "sort",
                                       "sort=relevance needs a search query q");
            return true;
        }
    }
    return respond_invalid(r, "parameter_invalid", "sort",
                           "sort must be one of relevance, newest, price_asc, price_desc");
}

static bool parse_price(request *r, const char *text, const char *name)
{
    if (text == NULL || decimal_valid(text))
        return true;
    return respond_invalid(r, "parameter_invalid", name,
                           "%s must be a decimal number of at least 0, such as 19.99", name);
}

static bool parse_input(request *r, list_input *in)
{
    static const char *const names[] = {"category", "q",     "seller", "min_price", "max_price",
                                        "sort",     "limit", "cursor", NULL};
    query_params qp;
    if (!request_parse_query(r, names, &qp))
        return false;
    in->category = query_get(&qp, "category");
    in->q = query_get(&qp, "q");
    in->seller = query_get(&qp, "seller");
    in->min_price = query_get(&qp, "min_price");
    in->max_price = query_get(&qp, "max_price");
    in->cursor_text = query_get(&qp, "cursor");

    if (in->category != NULL && !catalogue_slug_valid(in->category))
        return respond_invalid(r, "parameter_invalid", "category",
                               "category must be a category slug such as fonts");
    if (in->q != NULL) {
        size_t chars = utf8_length(in->q, strlen(in->q));
        if (chars < 1 || chars > 200)
            return respond_invalid(r, "parameter_invalid", "q", "q must be 1 to 200 characters");
    }
    if (in->seller != NULL && !catalogue_handle_valid(in->seller))
        return respond_invalid(r, "parameter_invalid", "seller",
                               "seller must be a seller handle such as pixelforge");
    if (!parse_price(r, in->min_price, "min_price") || !parse_price(r, in->max_price, "max_price"))
        return false;
    if (in->min_price != NULL && in->max_price != NULL &&
        decimal_compare(in->min_price, in->max_price) > 0)
        return respond_invalid(r, "parameter_invalid", "max_price",
                               "max_price must not be below min_price");
    return parse_sort(r, query_get(&qp, "sort"), in) &&
           paging_limit(r, query_get(&qp, "limit"), &in->limit);
}

/* The cursor is bound to everything that shapes the list except the page size. */
static void build_context(request *r, const list_input *in, buf *ctx)
{
    buf_puts(ctx, "GET /v1/products;");
    cursor_context_add(ctx, "mode", r->caller.mode);
    cursor_context_add(ctx, "category", in->category);
    cursor_context_add(ctx, "q", in->q);
    cursor_context_add(ctx, "seller", in->seller);
    cursor_context_add(ctx, "min_price", in->min_price);
    cursor_context_add(ctx, "max_price", in->max_price);
    cursor_context_add(ctx, "sort", sort_names[in->sort]);
}

void handle_products_list(request *r)
{
    list_input in;
    memset(&in, 0, sizeof in);
    if (!parse_input(r, &in))
        return;

    buf ctx;
    buf_init(&ctx, 256);
    build_context(r, &in, &ctx);
    if (!paging_cursor(r, &ctx, in.cursor_text, in.cursor, 2))
        goto done;

    char limit_plus_one[16];
    snprintf(limit_plus_one, sizeof limit_plus_one, "%d", in.limit + 1);
    const char *params[12] = {r->caller.mode, limit_plus_one};
    int n = 2, filters = 0;
    if (in.category != NULL) {
        filters |= F_CATEGORY;
        params[n++] = in.category;
    }
    if (in.seller != NULL) {
        filters |= F_SELLER;
        params[n++] = in.seller;
    }
    if (in.q != NULL) {
        filters |= F_Q;
        params[n++] = in.q;
    }
    if (in.min_price != NULL) {
        filters |= F_MIN;
        params[n++] = in.min_price;
    }
    if (in.max_price != NULL) {
        filters |= F_MAX;
        params[n++] = in.max_price;
    }
    if (in.cursor_text != NULL) {
        filters |= F_CURSOR;
        params[n++] = in.cursor[0];
        params[n++] = in.cursor[1];
    }

    PGresult *res = request_query(r, shape_statement(filters, in.sort), params);
    if (res == NULL)
        goto done;

    int rows = PQntuples(res);
    bool more = rows > in.limit;
    if (more)
        rows = in.limit;
    respond_json(r, 200);
    json_writer *j = &r->json;
    jw_object_begin(j);
    jw_key(j, "data");
    jw_array_begin(j);
    for (int i = 0; i < rows; i++)
        catalogue_write_item(j, res, i, 0);
    jw_array_end(j);
    if (more) {
        const char *last[2] = {col(res, rows - 1, PRODUCT_ITEM_NCOLS), col(res, rows - 1, 0)};
        paging_write_next(r, &ctx, last, 2);
    } else {
        paging_write_next(r, &ctx, NULL, 0);
    }
    jw_object_end(j);
done:
    buf_free(&ctx);
}
