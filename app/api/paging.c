#include "paging.h"

#include <string.h>

#include "cursor.h"

bool paging_limit(request *r, const char *text, int *limit)
{
    if (text == NULL) {
        *limit = PAGE_DEFAULT;
        return true;
    }
    /* Digits only, no sign, no leading zero, no spaces: "020" or "+5" are mistakes. */
    size_t n = strlen(text);
    int value = 0;
    bool ok = n >= 1 && n <= 3 && text[0] != '0' && strspn(text, "0123456789") == n;
    for (size_t i = 0; ok && i < n; i++)
        value = value * 10 + (text[i] - '0');
    if (!ok || value < 1 || value > PAGE_MAX)
        return respond_invalid(r, "parameter_invalid", "limit",
                               "limit must be an integer from 1 to %d", PAGE_MAX);
    *limit = value;
    return true;
}

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
