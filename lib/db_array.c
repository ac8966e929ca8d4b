/* db_array: the array literal encoder, a file of its own because every list parameter of
 * every program goes through it: its quoting has to be right once, and the unit tests
 * check it against PostgreSQL itself. */
#include "db_array.h"

#include <string.h>

void db_array_append(buf *b, const char *item)
{
    buf_putc(b, b->len == 0 ? '{' : ',');
    if (item == NULL) {
        buf_puts(b, "NULL"); /* unquoted: the only spelling PostgreSQL reads as a null */
        return;
    }
    buf_putc(b, '"');
    /* Runs without a special character are copied whole; inside quotes only " and \ are
     * special to the array parser. */
    const char *run = item;
    for (const char *p = strpbrk(run, "\"\\"); p != NULL; p = strpbrk(run, "\"\\")) {
        buf_append(b, run, (size_t)(p - run));
        buf_putc(b, '\\');
        buf_putc(b, *p);
        run = p + 1;
    }
    buf_puts(b, run);
    buf_putc(b, '"');
}

void db_array_end(buf *b)
{
    buf_puts(b, b->len == 0 ? "{}" : "}");
}
