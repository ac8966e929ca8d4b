/* arena: a per-request bump allocator.
 *
 * Everything a request allocates comes from one arena and is released at once by
 * arena_reset() when the request ends, so handlers never free and never leak. The first
 * block is kept across resets, so a typical request does no malloc at all. */
#ifndef MARKET_ARENA_H
#define MARKET_ARENA_H

#include <stddef.h>

typedef struct arena_block arena_block;

typedef struct {
    arena_block *head; /* block being filled; older blocks follow through ->next */
    size_t block_size; /* size of a regular block */
} arena;

void arena_init(arena *a, size_t block_size);
void *arena_alloc(arena *a, size_t size);               /* aborts on out of memory */
char *arena_strndup(arena *a, const char *s, size_t n); /* NUL-terminated copy */
char *arena_strdup(arena *a, const char *s);
char *arena_printf(arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void arena_reset(arena *a); /* frees all but the first block */
void arena_free(arena *a);

#endif
