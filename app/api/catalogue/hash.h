/* hash: FNV-1a, 64 bits, the one hash of keys into in-process tables (the page cache's
 * slots, a worker's kept seller counts). Fast on the short keys these tables hold, and
 * no defence against chosen collisions: every table that uses it is direct-mapped, so a
 * collision only replaces an entry, never grows a chain. Nothing stores or sends it. */
#ifndef MARKET_HASH_H
#define MARKET_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t hash_fnv1a(const void *data, size_t len);

#endif
