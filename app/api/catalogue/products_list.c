/* GET /v1/products: search and list published products of the caller's mode.
 *
 * Filters: category, q (full text), seller, min_price, max_price. Sorts: newest,
 * price_asc, price_desc, relevance. This file reads the inputs, binds the cursor to them
 * and writes the page; the statements are search_sql.c's. Keyset pagination: the cursor
 * holds the sort key and id of the last row, and the next page starts strictly after it. */
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
#include "search_sql.h"
#include "text.h"

/* In the order of enum list_sort; the route table (routes.c) takes them as sort's values. */
const char *const products_sorts[SORT_COUNT + 1] = {"newest", "price_asc", "price_desc",
                                                    "relevance", NULL};

/* The typed inputs (routes.c) the plan and the render read, and what the plan made of
 * them: prices as given (the statements compare them as numeric). */
typedef struct {
    const char *category, *q, *seller, *min_price, *max_price, *cursor_text;
    enum list_sort sort;
    int limit;
    char *cursor[2];     /* sort key, id */
    const char *context; /* what the cursor is bound to */
} list_input;

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
    in->sort = given->sort >= 0 ? (enum list_sort)given->sort
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

/* The relevance statement's parameters (search_sql_relevance, search_sql.h). */
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
        read->stmt = &search_sql_relevance;
        return true;
    }

    const char **params = read->params;
    int n = 0, filters = 0;
    params[n++] = r->caller.mode;
    params[n++] = arena_printf(r->arena, "%d", in->limit + 1);
    const char *optional[] = {in->q, in->category, in->seller, in->min_price, in->max_price};
    const int flags[] = {FILTER_Q, FILTER_CATEGORY, FILTER_SELLER, FILTER_MIN, FILTER_MAX};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        if (optional[i] != NULL) {
            filters |= flags[i];
            params[n++] = optional[i];
        }
    }
    if (in->cursor_text != NULL) {
        filters |= FILTER_CURSOR;
        params[n++] = in->cursor[0];
        params[n++] = in->cursor[1];
    }
    read->stmt = search_sql_statement(filters, in->sort);
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
