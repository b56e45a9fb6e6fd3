/* Where a batch's keys come from, and how they become hashes (keys.c). Nothing here is
 * installed. */
#ifndef SIMDBLOOM_KEYS_H
#define SIMDBLOOM_KEYS_H

#include "core.h"

/* Where a batch's keys come from: byte strings by pointer and length (keys), integers (values),
 * or byte strings in one buffer (data) with n + 1 offsets of 32 or 64 bits (offsets, wide). */
typedef struct sbloom_key_source {
    const void *const *keys;
    const size_t *lens;
    const uint64_t *values;
    const uint8_t *data;
    const void *offsets;
    int wide; /* offsets are int64_t (else int32_t) */
} sbloom_key_source;

/* out[i] = the hash of key start + i, for n keys, with the layout's hash. Returns 0 if a key was
 * NULL with a non-zero length (its hash then is the empty key's), else 1. */
int sbloom_hash_source(sbloom_layout layout, const sbloom_key_source *src, size_t start, size_t n,
                       uint64_t *out);
/* Offset i of a buffer-and-offsets source. */
static inline int64_t sbloom_offset_at(const void *offsets, int wide, size_t i)
{
    return wide ? ((const int64_t *)offsets)[i] : ((const int32_t *)offsets)[i];
}
/* 1 when no key of keys[0, n) is NULL with a non-zero length, else 0. */
int sbloom_keys_valid(const void *const *keys, const size_t *lens, size_t n);

#endif /* SIMDBLOOM_KEYS_H */
