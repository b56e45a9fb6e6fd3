/*
 * How byte-string keys become 64-bit hashes: XXH64 seed 0 for Parquet (the format's rule),
 * XXH3-64 for the cache-line layouts (faster, same quality). Inline, with xxHash inlined too
 * (XXH_INLINE_ALL): the hash is on the hot path of every string operation, and a call per key
 * into another file cost measurable time in the batch drivers.
 */
#ifndef SIMDBLOOM_HASH_H
#define SIMDBLOOM_HASH_H

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "simdbloom.h"

/* XXH3_64bits of more than 240 bytes, with the CPU's widest vector unit (src/hash_long.c). */
uint64_t sbloom_xxh3_long(const void *data, size_t len);

/* XXH3_64bits(data, len): the short paths inline, the long one through sbloom_xxh3_long. */
static inline uint64_t sbloom_xxh3(const void *data, size_t len)
{
    if (len > XXH3_MIDSIZE_MAX)
        return sbloom_xxh3_long(data, len);
    return XXH3_64bits(data, len);
}

/* The hash of a key whose pointer is not NULL (xxHash must not be handed NULL, even for no
 * bytes). */
static inline uint64_t sbloom_hash_nonnull(sbloom_layout layout, const void *key, size_t len)
{
    if (layout == SBLOOM_LAYOUT_PARQUET)
        return XXH64(key, len, 0);
    return sbloom_xxh3(key, len);
}

static inline uint64_t sbloom_hash_bytes(sbloom_layout layout, const void *key, size_t len)
{
    if (len == 0)
        key = ""; /* xxHash reads nothing then */
    return sbloom_hash_nonnull(layout, key, len);
}

/* An integer key is the string of its 8 little-endian bytes: the same hash on every host, and
 * for Parquet the hash Parquet gives an INT64 column's plain-encoded value. */
static inline uint64_t sbloom_hash_integer(sbloom_layout layout, uint64_t value)
{
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(value >> (8 * i));
    return sbloom_hash_bytes(layout, le, 8);
}

#endif
