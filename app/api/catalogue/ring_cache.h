/* ring_cache: a bounded cache of byte strings that live a short while.
 *
 * Memory is one ring allocated when the cache is made and touched whole by
 * ring_cache_touch, so the process's RSS does not move with traffic afterwards: a new
 * entry overwrites the oldest bytes, and a
 * lookup checks that its entry still lies inside the ring's live window and that its key
 * matches byte for byte. Entries are found through a direct-mapped slot table (a
 * collision replaces the older entry), so there are no chains for hostile keys to grow
 * and no per-entry allocation. Not thread-safe: one cache per process. */
#ifndef MARKET_RING_CACHE_H
#define MARKET_RING_CACHE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ring_cache ring_cache;

/* ring_bytes: memory for keys and values; slots: entries indexed at most; ttl_ms: the
 * age after which an entry is no longer returned (0 turns the cache off). Each entry
 * lives between half the TTL and the TTL, at random, so that entries put together do not
 * all expire together. */
ring_cache *ring_cache_new(size_t ring_bytes, size_t slots, long long ttl_ms);

/* Faults in every page of the ring (once; never for a cache that is off, ttl_ms <= 0).
 * Apart from ring_cache_new so that the caller chooses when: market-api does it after
 * its first answer, since a pool started by a request (an idle site's) would otherwise
 * fault in megabytes before answering it. A cache works untouched: its pages then come
 * as entries are written. */
void ring_cache_touch(ring_cache *cache);
void ring_cache_free(ring_cache *cache);

/* The value stored under key if it is still alive at now_ms. The pointer stays
 * valid until the next ring_cache_put or ring_cache_clear. */
bool ring_cache_get(ring_cache *cache, const char *key, size_t key_len, long long now_ms,
                    const char **value, size_t *value_len);

/* Stores value under key, stamped now_ms. An entry larger than a quarter of the ring is
 * not stored. */
void ring_cache_put(ring_cache *cache, const char *key, size_t key_len, const char *value,
                    size_t value_len, long long now_ms);

/* Forgets every entry. */
void ring_cache_clear(ring_cache *cache);

#endif
