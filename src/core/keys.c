/* Keys into hashes, and the check that no key is NULL with a length. */
#include "../base/hash.h"
#include "keys.h"

/* n string keys hashed with XXH3-64 (xxh3 1) or Parquet's XXH64 (0). It also checks the keys,
 * which costs less here than in a pass of its own (sbloom_keys_valid: about 0.15 ns a URL,
 * docs/notes/kernels-history.md): a NULL key is hashed as the empty one. Returns 0 if a NULL key
 * had a non-zero length, else 1. One function a hash, each a loop with nothing else live: inside
 * sbloom_hash_source, beside the (since removed) prefetch's arguments and the choice of hash, gcc
 * 12 kept the loop's pointers on the stack (perf annotate) and sbloom_hash_keys took 6.02 ns a URL
 * against 5.61 before the move to this file; so, 5.89 (100,000 URLs of the peers' sample, best of
 * 40, a program timing the static library of each build alternately, AMD EPYC, pinned to one core).
 */
static inline int hash_strings(int xxh3, const void *const *keys, const size_t *lens, size_t n,
                               uint64_t *out)
{
    size_t lacking = 0;
    for (size_t i = 0; i < n; i++) {
        const void *key = keys[i];
        size_t len = lens[i];
        if (!key) {
            lacking |= len;
            key = "";
            len = 0;
        }
        out[i] = xxh3 ? sbloom_xxh3(key, len) : XXH64(key, len, 0);
    }
    return lacking == 0;
}

/* The kernels' 8-key XXH64, or NULL. */
static sbk_xxh64_fn xxh64_x8_here(void)
{
    int err;
    const sbloom_kernels *table = sbloom_kernels_active(&err);
    return table ? table->xxh64_x8 : NULL;
}

static __attribute__((noinline)) int hash_strings_xxh3(const void *const *keys, const size_t *lens,
                                                       size_t n, uint64_t *out)
{
    return hash_strings(1, keys, lens, n, out);
}

/* Parquet's XXH64: where the kernels hash 8 keys at once (AVX-512), in groups of 8 keys of at
 * least 4 bytes each; other groups and the rest one at a time. */
static __attribute__((noinline)) int hash_strings_xxh64(const void *const *keys, const size_t *lens,
                                                        size_t n, uint64_t *out)
{
    sbk_xxh64_fn x8 = xxh64_x8_here();
    int valid = 1;
    size_t i = 0;
    for (; x8 && n - i >= 8; i += 8) {
        int fit = 1;
        for (size_t j = 0; j < 8; j++)
            fit &= (keys[i + j] != NULL) & (lens[i + j] >= 4);
        if (fit)
            x8((const uint8_t *const *)(keys + i), lens + i, out + i);
        else
            valid &= hash_strings(0, keys + i, lens + i, 8, out + i);
    }
    return hash_strings(0, keys + i, lens + i, n - i, out + i) & valid;
}

/* n keys of one buffer, key i at data[offsets[i] .. offsets[i + 1]) (checked by the caller), hashed
 * with one layout's hash over offsets of one width (both constants at each call). */
static inline void hash_spans(sbloom_layout layout, const uint8_t *data, const void *offsets,
                              int wide, size_t n, uint64_t *out)
{
    int64_t from = sbloom_offset_at(offsets, wide, 0);
    for (size_t i = 0; i < n; i++) {
        int64_t to = sbloom_offset_at(offsets, wide, i + 1);
        size_t len = (size_t)(to - from);
        out[i] = sbloom_hash_nonnull(layout, len ? data + from : (const uint8_t *)"", len);
        from = to;
    }
}

/* The same for Parquet's XXH64 where the kernels hash 8 keys at once: groups of 8 keys of at
 * least 4 bytes each together, other groups and the rest one at a time. */
static inline void hash_spans_xxh64(sbk_xxh64_fn x8, const uint8_t *data, const void *offsets,
                                    int wide, size_t n, uint64_t *out)
{
    size_t i = 0;
    for (; x8 && n - i >= 8; i += 8) {
        const uint8_t *keys[8];
        size_t lens[8];
        int fit = 1;
        for (size_t j = 0; j < 8; j++) {
            int64_t from = sbloom_offset_at(offsets, wide, i + j);
            lens[j] = (size_t)(sbloom_offset_at(offsets, wide, i + j + 1) - from);
            keys[j] = data + from;
            fit &= lens[j] >= 4;
        }
        if (fit)
            x8(keys, lens, out + i);
        else
            hash_spans(SBLOOM_LAYOUT_PARQUET, data, (const char *)offsets + i * (wide ? 8 : 4),
                       wide, 8, out + i);
    }
    hash_spans(SBLOOM_LAYOUT_PARQUET, data, (const char *)offsets + i * (wide ? 8 : 4), wide, n - i,
               out + i);
}

static void hash_spans_of(sbloom_layout layout, const sbloom_key_source *src, size_t start,
                          size_t n, uint64_t *out)
{
    const void *offsets = src->wide ? (const void *)((const int64_t *)src->offsets + start)
                                    : (const void *)((const int32_t *)src->offsets + start);
    if (layout == SBLOOM_LAYOUT_PARQUET && src->wide)
        hash_spans_xxh64(xxh64_x8_here(), src->data, offsets, 1, n, out);
    else if (layout == SBLOOM_LAYOUT_PARQUET)
        hash_spans_xxh64(xxh64_x8_here(), src->data, offsets, 0, n, out);
    else if (src->wide)
        hash_spans(SBLOOM_LAYOUT_BLOCK512_K8, src->data, offsets, 1, n, out);
    else
        hash_spans(SBLOOM_LAYOUT_BLOCK512_K8, src->data, offsets, 0, n, out);
}

int sbloom_hash_source(sbloom_layout layout, const sbloom_key_source *src, size_t start, size_t n,
                       uint64_t *out)
{
    int valid = 1;
    /* One loop per hash function, so that the choice is made once per chunk, not per key. */
    if (src->offsets) {
        hash_spans_of(layout, src, start, n, out);
    } else if (src->values) {
        sbloom_layout hash_of =
            layout == SBLOOM_LAYOUT_PARQUET ? SBLOOM_LAYOUT_PARQUET : SBLOOM_LAYOUT_BLOCK512_K8;
        const uint64_t *values = src->values + start;
        for (size_t i = 0; i < n; i++)
            out[i] = sbloom_hash_integer(hash_of, values[i]);
    } else if (layout == SBLOOM_LAYOUT_PARQUET) {
        valid = hash_strings_xxh64(src->keys + start, src->lens + start, n, out);
    } else {
        valid = hash_strings_xxh3(src->keys + start, src->lens + start, n, out);
    }
    return valid;
}

/* 1 when no key of keys[0, n) is NULL with a non-zero length, else 0. */
static int keys_valid_each(const void *const *keys, const size_t *lens, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!keys[i] && lens[i])
            return 0;
    return 1;
}

/* The same, KEYS_BLOCK keys at a time: a block's pointers alone say whether it holds a NULL key
 * (the top bit of (x - 1) & ~x is set only for x == 0), and only such a block has its lengths
 * read. The test has no branch and four accumulators, so compilers vectorize it; the pointers are
 * half the bytes of a pass that also reads every length. 50,000 keys, best of 200, /tmp program
 * (AMD EPYC, gcc 12 -O3): 0.27-0.34 ns a key key by key, 0.15 this way
 * (docs/notes/kernels-history.md). */
#define KEYS_BLOCK 64
int sbloom_keys_valid(const void *const *keys, const size_t *lens, size_t n)
{
    enum { TOP = sizeof(uintptr_t) * 8 - 1 };
    size_t i = 0;
    for (; n - i >= KEYS_BLOCK; i += KEYS_BLOCK) {
        uintptr_t null_top[4] = {0, 0, 0, 0};
        for (size_t j = i; j < i + KEYS_BLOCK; j += 4)
            for (size_t lane = 0; lane < 4; lane++) {
                uintptr_t key = (uintptr_t)keys[j + lane];
                null_top[lane] |= (key - 1) & ~key;
            }
        if ((null_top[0] | null_top[1] | null_top[2] | null_top[3]) >> TOP &&
            !keys_valid_each(keys + i, lens + i, KEYS_BLOCK))
            return 0;
    }
    return keys_valid_each(keys + i, lens + i, n - i);
}
