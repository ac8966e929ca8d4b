/* hash: the FNV-1a of hash.h in one place, so that the tables that index by it agree on
 * its constants and the unit tests check them once against the published vectors. */
#include "hash.h"

/* The 64-bit offset basis and prime of FNV (draft-eastlake-fnv). */
#define FNV64_OFFSET_BASIS 14695981039346656037ULL
#define FNV64_PRIME 1099511628211ULL

uint64_t hash_fnv1a(const void *data, size_t len)
{
    const unsigned char *bytes = data;
    uint64_t h = FNV64_OFFSET_BASIS;
    for (size_t i = 0; i < len; i++) {
        h ^= bytes[i];
        h *= FNV64_PRIME;
    }
    return h;
}
