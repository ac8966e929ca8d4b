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
