/*
 * What only the counting layout (counting512, seed 004's answer to deletion) has: removing a key
 * and counting saturated counters. Everything else (creation, add, contains, files) is the one
 * filter's code; the kernels are the counting entries of each table in simd/.
 *
 * Counts: add counts every key (a duplicate too: it takes two removes to take it out), remove
 * subtracts the keys it removed, so items = adds - successful removes.
 */
#include "../base/hash.h"
#include "../modes/modes.h"

int sbloom_remove_hash(sbloom_t *filter, uint64_t hash)
{
    int64_t gone = sbloom_remove_hashes(filter, &hash, 1, NULL);
    return gone == 0 ? SBLOOM_E_ABSENT : (int)gone;
}

int sbloom_remove(sbloom_t *filter, const void *key, size_t len)
{
    if (!filter || (!key && len))
        return SBLOOM_E_NULL;
    return sbloom_remove_hash(filter, sbloom_hash_bytes(filter->layout, key, len));
}

int sbloom_remove_u64(sbloom_t *filter, uint64_t value)
{
    if (!filter)
        return SBLOOM_E_NULL;
    return sbloom_remove_hash(filter, sbloom_hash_integer(filter->layout, value));
}

/* A nibble is 15 when all four of its bits are set: AND each bit position of the nibbles
 * together, keep bit 0 of each nibble, and count. */
int64_t sbloom_saturated(const sbloom_t *filter)
{
    if (!filter)
        return SBLOOM_E_NULL;
    if (filter->layout != SBLOOM_LAYOUT_COUNTING512)
        return SBLOOM_E_LAYOUT;
    const uint64_t *words = filter->core.blocks;
    uint64_t count = 0, nwords = filter->core.bytes / 8;
    for (uint64_t i = 0; i < nwords; i++) {
        uint64_t w = words[i];
        uint64_t full = w & (w >> 1) & (w >> 2) & (w >> 3) & UINT64_C(0x1111111111111111);
        count += (uint64_t)__builtin_popcountll(full);
    }
    return (int64_t)count;
}
