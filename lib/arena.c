/* arena: the memory of one request, so that no handler's error path has anything to free.
 * Its blocks are known here alone; what grows inside an arena (buf_init_arena,
 * arena_printf) takes a fresh piece of it rather than resizing in place. */
#include "arena.h"
#include "mem.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct arena_block {
    arena_block *next;
    size_t size; /* usable bytes in data[] */
    size_t used;
    max_align_t data[];
};

static arena_block *block_new(size_t size)
{
    arena_block *b = xmalloc(sizeof(*b) + size);
    b->next = NULL;
    b->size = size;
    b->used = 0;
    return b;
}

void arena_init(arena *a, size_t block_size)
{
    a->block_size = block_size;
    a->head = block_new(block_size);
}

void *arena_alloc(arena *a, size_t size)
{
    const size_t align = sizeof(max_align_t);
    size_t rounded = (size + align - 1) & ~(align - 1);
    if (rounded < size)
        mem_exhausted(); /* the size overflowed: no such block can exist */

    arena_block *b = a->head;
    if (b->size - b->used < rounded) {
        /* A request larger than a block gets a block of its own. */
        size_t want = rounded > a->block_size ? rounded : a->block_size;
        arena_block *fresh = block_new(want);
        fresh->next = a->head;
        a->head = fresh;
        b = fresh;
    }
    void *p = (char *)b->data + b->used;
    b->used += rounded;
    return p;
}

char *arena_strndup(arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *arena_strdup(arena *a, const char *s)
{
    return arena_strndup(a, s, strlen(s));
}

char *arena_printf(arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        abort();
    char *p = arena_alloc(a, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void arena_reset(arena *a)
{
    /* Keep the oldest block (the one arena_init made): it serves the next request. */
    arena_block *b = a->head;
    while (b->next != NULL) {
        arena_block *next = b->next;
        free(b);
        b = next;
    }
    b->used = 0;
    a->head = b;
}

void arena_free(arena *a)
{
    arena_block *b = a->head;
    while (b != NULL) {
        arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
}
