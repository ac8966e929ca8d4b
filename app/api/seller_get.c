/* GET /v1/sellers/:id: a seller's profile (shared by both modes) with the number of
 * published products and one page of its catalogue in the caller's mode, newest first.
 * One statement: the profile columns repeat on every product row, and a seller with no
 * product in this mode comes back as one row with NULL product columns. */
#include <stdio.h>
#include <string.h>

#include "catalogue.h"
#include "cursor.h"
#include "handlers.h"
#include "ids.h"
#include "paging.h"
#include "params.h"
#include "routes.h"

/* The SQL is laid out by hand: clang-format would re-flow it mid-clause. */
/* clang-format off */
#define SELLER_SQL(keyset)                                                                      \
    "SELECT s.id, s.name, s.bio, s.website,"                                                    \
    "       to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"        \
    "       (SELECT count(*) FROM products c"                                                   \
    "         WHERE c.seller_id = s.id AND c.mode = $2 AND c.status = 'published'),"            \
    "       " PRODUCT_ITEM_COLUMNS ", p.created_at::text"                                        \
    "  FROM sellers s"                                                                          \
    "  LEFT JOIN LATERAL (SELECT * FROM products p"                                             \
    "                      WHERE p.seller_id = s.id AND p.mode = $2 AND p.status = 'published'" \
    keyset                                                                                      \
    "                      ORDER BY p.created_at DESC, p.id DESC LIMIT $3) p ON true"           \
    " WHERE s.id = $1"                                                                          \
    " ORDER BY p.created_at DESC, p.id DESC"
/* clang-format on */

DB_STMT(seller_first_page, SELLER_SQL(""), 3);
DB_STMT(seller_next_page, SELLER_SQL(" AND (p.created_at, p.id) < ($4::timestamptz, $5)"), 5);

enum {
    C_ID,
    C_NAME,
    C_BIO,
    C_WEBSITE,
    C_CREATED,
    C_COUNT,
    C_ITEM,
    C_KEY = C_ITEM + PRODUCT_ITEM_NCOLS
};

typedef struct {
    int limit;
    const char *context; /* what the cursor is bound to */
} seller_input;

bool seller_get_plan(request *r, catalogue_read *read)
{
    seller_input *in = arena_alloc(r->arena, sizeof *in);
    read->input = in;
    in->limit = param_limit(request_param(r, "limit"));
    const char *handle = request_path_param(r, 255);
    if (handle == NULL)
        return false;
    if (!ids_handle_valid(handle))
        return respond_missing(r, "seller");

    buf *ctx = request_buf(r, 128);
    buf_printf(ctx, "%s;", routes_label(r));
    cursor_context_add(ctx, "mode", r->caller.mode);
    cursor_context_add(ctx, "seller", handle);
    in->context = arena_strndup(r->arena, ctx->data, ctx->len);

    char *after[2];
    const char *cursor_text = request_param(r, "cursor");
    if (!paging_cursor(r, in->context, cursor_text, after, 2))
        return false;
    read->stmt = cursor_text != NULL ? &seller_next_page : &seller_first_page;
    read->params[0] = handle;
    read->params[1] = r->caller.mode;
    read->params[2] = arena_printf(r->arena, "%d", in->limit + 1);
    read->params[3] = cursor_text != NULL ? after[0] : NULL;
    read->params[4] = cursor_text != NULL ? after[1] : NULL;
    return true;
}

void seller_get_render(request *r, const catalogue_read *read, PGresult *res)
{
    const seller_input *in = read->input;
    if (PQntuples(res) == 0) {
        respond_missing(r, "seller");
        return;
    }
    int rows = PQntuples(res);
    if (rows == 1 && db_null(res, 0, C_ITEM))
        rows = 0; /* the seller has no product on this page */
    bool more = rows > in->limit;
    if (more)
        rows = in->limit;

    respond_json(r, 200);
    json_writer *j = &r->json;
    jw_object_begin(j);
    jw_kv_string(j, "id", db_text(res, 0, C_ID));
    jw_kv_string(j, "name", db_text(res, 0, C_NAME));
    jw_kv_string(j, "bio", db_text(res, 0, C_BIO));
    jw_kv_string(j, "website", db_null(res, 0, C_WEBSITE) ? NULL : db_text(res, 0, C_WEBSITE));
    jw_kv_string(j, "created_at", db_text(res, 0, C_CREATED));
    jw_kv_int(j, "product_count", db_int(res, 0, C_COUNT));
    jw_key(j, "products");
    jw_object_begin(j);
    jw_key(j, "data");
    jw_array_begin(j);
    for (int i = 0; i < rows; i++)
        catalogue_write_item(j, res, i, C_ITEM);
    jw_array_end(j);
    if (more) {
        const char *last[2] = {db_text(res, rows - 1, C_KEY), db_text(res, rows - 1, C_ITEM)};
        paging_write_next(r, in->context, last, 2);
    } else {
        paging_write_next(r, in->context, NULL, 0);
    }
    jw_object_end(j);
    jw_object_end(j);
}
