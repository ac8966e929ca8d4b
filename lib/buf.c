/* buf: the one growable byte string of the programs (response bodies, Prometheus text,
 * SQL arrays, encoded tokens, the CA bundle), so that bounds and growth are written once.
 * It also grows inside an arena, for a request's buffers that are never freed alone. */
#include "buf.h"
#include "mem.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The new home of an arena buffer that outgrew its piece: the old piece stays in the arena
 * until it is reset, which costs at most as much again as the final size. */
static char *arena_grow(buf *b, size_t cap)
{
    char *p = arena_alloc(b->arena, cap);
    if (b->len > 0)
        memcpy(p, b->data, b->len + 1);
    return p;
}

void buf_grow(buf *b, size_t extra)
{
    if (b->cap - b->len > extra)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len <= extra) {
        if (cap > ((size_t)-1) / 2)
            mem_exhausted(); /* no such buffer can exist */
        cap *= 2;
    }
    b->data = b->arena != NULL ? arena_grow(b, cap) : xrealloc(b->data, cap);
    b->cap = cap;
}

void buf_init(buf *b, size_t cap)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->arena = NULL;
    buf_grow(b, cap);
    b->data[0] = '\0';
}

void buf_init_arena(buf *b, arena *a, size_t cap)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->arena = a;
    buf_grow(b, cap);
    b->data[0] = '\0';
}

void buf_free(buf *b)
{
    if (b->arena == NULL)
        free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void buf_clear(buf *b)
{
    b->len = 0;
    if (b->data != NULL)
        b->data[0] = '\0';
}

void buf_puts(buf *b, const char *s)
{
    buf_append(b, s, strlen(s));
}

/* Formats into the room the buffer has; only when the text does not fit does it grow the
 * buffer and format again (a response's header lines are formatted once each). */
void buf_printf(buf *b, const char *fmt, ...)
{
    if (b->data == NULL)
        buf_grow(b, 0);
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->cap - b->len;
    int n = vsnprintf(b->data + b->len, room, fmt, ap);
    va_end(ap);
    if (n < 0)
        abort();
    if ((size_t)n >= room) {
        buf_grow(b, (size_t)n);
        va_start(ap, fmt);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

bool buf_append_stream(buf *b, FILE *f)
{
    char chunk[16384];
    size_t n;
    errno = 0;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_append(b, chunk, n);
    if (ferror(f)) {
        if (errno == 0)
            errno = EIO;
        return false;
    }
    return true;
}

bool buf_append_file(buf *b, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return false;
    bool ok = buf_append_stream(b, f);
    int saved = errno;
    fclose(f);
    errno = saved;
    return ok;
}
