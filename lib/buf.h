/* buf: a growable byte buffer. A worker keeps one for the response body and reuses it,
 * so its memory is allocated once and only grows for the largest response seen.
 *
 * A buffer made with buf_init_arena takes its memory from an arena instead: it grows by
 * taking a larger piece of the arena, and it is never freed on its own, since the arena
 * releases everything at once (a request's buffers: request_buf). */
#ifndef MARKET_BUF_H
#define MARKET_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"

typedef struct {
    char *data; /* always NUL-terminated after any append */
    size_t len;
    size_t cap;
    arena *arena; /* where the memory comes from; NULL: the heap (buf_free frees it) */
} buf;

void buf_init(buf *b, size_t cap);
void buf_init_arena(buf *b, arena *a, size_t cap);
void buf_free(buf *b); /* for a heap buffer; an arena's is released with its arena */
void buf_clear(buf *b);
/* Makes room for extra more bytes and the NUL (the slow path of the appends below). */
void buf_grow(buf *b, size_t extra);
void buf_puts(buf *b, const char *s);
void buf_printf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends what is left to read of f (which stays open); false on a read error, errno set
 * (EIO when the C library left none). */
bool buf_append_stream(buf *b, FILE *f);
/* Appends the whole file at path; false (errno set) when it cannot be opened or read. */
bool buf_append_file(buf *b, const char *path);

/* The appends a response is written with, item by item: inline, so that the common case
 * (the buffer has room) is a compare and a copy. */
static inline void buf_append(buf *b, const void *data, size_t len)
{
    if (b->cap - b->len <= len)
        buf_grow(b, len);
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
}

static inline void buf_putc(buf *b, char c)
{
    if (b->cap - b->len <= 1)
        buf_grow(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}

#endif
