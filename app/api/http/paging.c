/* paging: the keyset page every list route answers with, written once, so that a cursor
 * is read and made the same way for events, orders, products, webhooks and a seller's
 * products. A route says only its cursor context, its key columns and how to write an
 * item. */
#include "paging.h"

#include <string.h>

#include "cursor.h"

bool paging_cursor(request *r, const char *context, const char *text, char **fields, int n)
{
    if (text == NULL)
        return true;
    if (cursor_decode(r->arena, r->w->cursor_key, context, text, fields, n))
        return true;
    return respond_invalid(r, "cursor_invalid", "cursor",
                           "cursor is not a next_cursor of this list with these filters");
}

void paging_write_next(request *r, const char *context, const char *const *fields, int n)
{
    jw_key(&r->json, "next_cursor");
    if (fields == NULL) {
        jw_null(&r->json);
        return;
    }
    buf *cursor = request_buf(r, 128);
    cursor_encode(cursor, r->w->cursor_key, context, fields, n);
    jw_string_n(&r->json, cursor->data, cursor->len);
}

void paging_respond(request *r, const char *context, const db_result *res, int limit,
                    int key_column, int id_column,
                    void (*write_item)(json_writer *j, const db_result *res, int row))
{
    int rows = db_rows(res);
    int shown = rows > limit ? limit : rows;
    respond_json(r, 200);
    json_writer *j = &r->json;
    jw_object_begin(j);
    jw_key(j, "data");
    jw_array_begin(j);
    for (int i = 0; i < shown; i++)
        write_item(j, res, i);
    jw_array_end(j);
    if (rows > limit) {
        const char *key[2] = {db_text(res, shown - 1, key_column),
                              db_text(res, shown - 1, id_column)};
        paging_write_next(r, context, key, 2);
    } else {
        paging_write_next(r, context, NULL, 0);
    }
    jw_object_end(j);
}

buf *paging_account_context(request *r)
{
    buf *ctx = request_buf(r, 256);
    buf_printf(ctx, "%s;", r->route_label);
    cursor_context_add(ctx, "mode", r->caller.mode);
    cursor_context_add(ctx, "account", r->caller.account_id);
    return ctx;
}
