/* buf: a growable byte buffer. A worker keeps one for the response body and reuses it,
 * so its memory is allocated once and only grows for the largest response seen. */
#ifndef MARKET_BUF_H
#define MARKET_BUF_H

#include <stddef.h>

typedef struct {
    char *data; /* always NUL-terminated after any append */
    size_t len;
    size_t cap;
} buf;

void buf_init(buf *b, size_t cap);
void buf_free(buf *b);
void buf_clear(buf *b);
void buf_append(buf *b, const void *data, size_t len);
void buf_puts(buf *b, const char *s);
void buf_putc(buf *b, char c);
void buf_printf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
