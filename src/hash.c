/* How byte-string keys become 64-bit hashes: XXH64 seed 0 for Parquet (the format's rule),
 * XXH3-64 for the cache-line layouts (faster, same quality). xxHash is inlined: the hash is on
 * the hot path of every string operation. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "internal.h"

uint64_t sbloom_hash_bytes(sbloom_layout layout, const void *key, size_t len)
{
    if (len == 0)
        key = ""; /* xxHash reads nothing then, but must not be handed NULL */
    if (layout == SBLOOM_LAYOUT_PARQUET)
        return XXH64(key, len, 0);
    return XXH3_64bits(key, len);
}
