/* ring_cache: the structure behind market-api's page cache (serve.c), apart from it so
 * that its memory rule (one ring, touched once, nothing allocated per entry) and its
 * expiry are unit tested without a worker. */
#include "ring_cache.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "mem.h"

typedef struct {
    uint64_t hash;
    uint64_t pos; /* where the entry starts, counted in bytes ever written to the ring */
    uint32_t key_len;
    uint32_t value_len;
    long long stamp_ms; /* when the entry was put */
    long long life_ms;  /* how long it may be returned: the TTL less a random part */
    bool used;
} slot;

struct ring_cache {
    char *ring;
    size_t ring_bytes;
    uint64_t head; /* bytes ever written; the live window is [head - ring_bytes, head) */
    slot *slots;
    size_t nslots;
    long long ttl_ms;
    uint64_t rng; /* xorshift state for the lives' random part */
    bool touched; /* every page of the ring faulted in (ring_cache_touch) */
};

ring_cache *ring_cache_new(size_t ring_bytes, size_t slots, long long ttl_ms)
{
    if (slots == 0)
        abort(); /* a caller's bug: there must be somewhere to put an entry */
    ring_cache *cache = xcalloc(1, sizeof *cache);
    cache->ring = xmalloc(ring_bytes);
    cache->slots = xcalloc(slots, sizeof *cache->slots); /* the ring: ring_cache_touch */
    cache->ring_bytes = ring_bytes;
    cache->nslots = slots;
    cache->ttl_ms = ttl_ms;
    cache->rng = 0x9E3779B97F4A7C15ULL ^ (uint64_t)(uintptr_t)cache;
    return cache;
}

void ring_cache_touch(ring_cache *cache)
{
    if (cache->ttl_ms <= 0 || cache->touched)
        return;
    /* The bytes not written yet: the entries already put stay readable. */
    if (cache->head < cache->ring_bytes)
        memset(cache->ring + cache->head, 0, cache->ring_bytes - cache->head);
    cache->touched = true;
}

void ring_cache_free(ring_cache *cache)
{
    if (cache == NULL)
        return;
    free(cache->ring);
    free(cache->slots);
    free(cache);
}

bool ring_cache_get(ring_cache *cache, const char *key, size_t key_len, long long now_ms,
                    const char **value, size_t *value_len)
{
    if (cache->ttl_ms <= 0)
        return false;
    uint64_t h = hash_fnv1a(key, key_len);
    slot *s = &cache->slots[h % cache->nslots];
    if (!s->used || s->hash != h || s->key_len != key_len)
        return false;
    if (now_ms - s->stamp_ms >= s->life_ms || now_ms < s->stamp_ms)
        return false;
    /* Overwritten since: part of the entry left the live window. */
    if (cache->head - s->pos > cache->ring_bytes)
        return false;
    const char *at = cache->ring + s->pos % cache->ring_bytes;
    if (memcmp(at, key, key_len) != 0)
        return false;
    *value = at + key_len;
    *value_len = s->value_len;
    return true;
}

void ring_cache_put(ring_cache *cache, const char *key, size_t key_len, const char *value,
                    size_t value_len, long long now_ms)
{
    size_t need = key_len + value_len;
    if (cache->ttl_ms <= 0 || need > cache->ring_bytes / 4)
        return;
    /* An entry is contiguous: when it would wrap, skip to the start of the ring. */
    size_t offset = cache->head % cache->ring_bytes;
    if (offset + need > cache->ring_bytes)
        cache->head += cache->ring_bytes - offset;
    char *at = cache->ring + cache->head % cache->ring_bytes;
    memcpy(at, key, key_len);
    memcpy(at + key_len, value, value_len);

    uint64_t h = hash_fnv1a(key, key_len);
    slot *s = &cache->slots[h % cache->nslots];
    s->hash = h;
    s->pos = cache->head;
    s->key_len = (uint32_t)key_len;
    s->value_len = (uint32_t)value_len;
    s->stamp_ms = now_ms;
    /* Entries put together (a warm-up, a burst) would all expire together and be read
     * again together, every TTL, as a burst of misses: a life between half the TTL and
     * the TTL spreads them out. */
    cache->rng ^= cache->rng << 13;
    cache->rng ^= cache->rng >> 7;
    cache->rng ^= cache->rng << 17;
    s->life_ms = cache->ttl_ms - (long long)(cache->rng % (uint64_t)(cache->ttl_ms / 2 + 1));
    s->used = true;
    cache->head += need;
}

void ring_cache_clear(ring_cache *cache)
{
    memset(cache->slots, 0, cache->nslots * sizeof *cache->slots);
}
