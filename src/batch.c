/*
 * Batch drivers: cut a batch into chunks, prefetch every cache line a chunk will touch while the
 * previous chunk is tested or set, and hand each chunk to the kernel.
 *
 * On filters larger than the caches a lookup is one DRAM miss; throughput then depends on how
 * many misses are in flight at once, so the lines of chunk c+1 are requested before chunk c is
 * worked on. String keys are hashed one chunk ahead for the same reason: hashing chunk c+1
 * overlaps with the misses of its prefetches.
 */
#include "hash.h"
#include "internal.h"

/* Keys per chunk: the lines of one chunk are in flight while the previous chunk is worked on.
 * Measured with simdbloom-kbench, block512-k8 on a 256 MiB filter, avx512 batch contains, ns per
 * key, two runs (AMD EPYC): chunk 8: 12.65 12.68; 16: 12.83 12.97; 24: 15.85 12.69;
 * 32: 12.47 16.24; 48: 16.28 12.88; 64: 12.33 24.18. Flat from 8 to 64 within this machine's
 * noise (the outliers are a busy neighbour core): DRAM, not the chunk, is the limit. Every figure
 * in docs/ was measured with 64. Build with -DSBLOOM_BATCH_CHUNK=N to retune. */
#ifndef SBLOOM_BATCH_CHUNK
#define SBLOOM_BATCH_CHUNK 64
#endif
#define CHUNK SBLOOM_BATCH_CHUNK

/* Below this size a filter lives in the caches, where out-of-order execution already overlaps
 * the hits and a prefetch pass only adds instructions. Measured with simdbloom-kbench,
 * block512-k16 batch contains, ns per key (AMD EPYC, 1 MiB L2 per core, 32 MiB L3):
 *
 *   filter          1 MiB  4 MiB  8 MiB  16 MiB  64 MiB
 *   avx512 without   1.72   2.11   4.14    8.88   22.20
 *   avx512 with      2.13   3.54   2.98    5.55   11.18
 */
#define PREFETCH_MIN_BYTES (UINT64_C(4) << 20)

static void prefetch_chunk(const sbloom_t *f, const uint64_t *hashes, size_t n, int for_write)
{
    if (f->bytes <= PREFETCH_MIN_BYTES)
        return;
    const char *base = f->blocks;
    for (size_t i = 0; i < n; i++) {
        const char *line = base + sbk_block_index(hashes[i], f->nblocks) * f->block_bytes;
        if (for_write)
            __builtin_prefetch(line, 1, 3);
        else
            __builtin_prefetch(line, 0, 3);
    }
}

static uint64_t run_chunk(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                          uint8_t *results)
{
    void *b = f->blocks;
    uint64_t nb = f->nblocks;
    switch (op) {
    case SBLOOM_OP_ADD: return f->kern->add(b, nb, hashes, n);
    case SBLOOM_OP_CONTAINS: return f->kern->contains(b, nb, hashes, n, results);
    case SBLOOM_OP_ADD_IF_NEW: return f->kern->add_if_new(b, nb, hashes, n, results);
    case SBLOOM_OP_COUNT_ADD: return f->counting_kern->add(b, nb, hashes, n, results);
    case SBLOOM_OP_COUNT_REMOVE: return f->counting_kern->remove(b, nb, hashes, n, results);
    case SBLOOM_OP_COUNT_CONTAINS:
    default: return f->counting_kern->contains(b, nb, hashes, n, results);
    }
}

static int writes(sbloom_batch_op op)
{
    return op != SBLOOM_OP_CONTAINS && op != SBLOOM_OP_COUNT_CONTAINS;
}

uint64_t sbloom_batch_hashes(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                             uint8_t *results)
{
    int for_write = writes(op);
    uint64_t count = 0;
    prefetch_chunk(f, hashes, n < CHUNK ? n : CHUNK, for_write);
    for (size_t start = 0; start < n; start += CHUNK) {
        size_t len = n - start < CHUNK ? n - start : CHUNK;
        size_t next = start + CHUNK;
        if (next < n)
            prefetch_chunk(f, hashes + next, n - next < CHUNK ? n - next : CHUNK, for_write);
        count += run_chunk(f, op, hashes + start, len, results ? results + start : NULL);
    }
    return count;
}

static void hash_chunk(const sbloom_t *f, const void *const *keys, const size_t *lens, size_t n,
                       uint64_t *out)
{
    /* One loop per hash function, so that the choice is made once per chunk, not per key. */
    if (f->layout == SBLOOM_LAYOUT_PARQUET) {
        for (size_t i = 0; i < n; i++)
            out[i] = sbloom_hash_bytes(SBLOOM_LAYOUT_PARQUET, keys[i], lens[i]);
    } else {
        for (size_t i = 0; i < n; i++)
            out[i] = sbloom_hash_bytes(SBLOOM_LAYOUT_BLOCK512_K8, keys[i], lens[i]);
    }
}

uint64_t sbloom_batch_keys(sbloom_t *f, sbloom_batch_op op, const void *const *keys,
                           const size_t *lens, size_t n, uint8_t *results)
{
    int for_write = writes(op);
    uint64_t buffers[2][CHUNK];
    uint64_t count = 0;
    size_t first = n < CHUNK ? n : CHUNK;
    hash_chunk(f, keys, lens, first, buffers[0]);
    prefetch_chunk(f, buffers[0], first, for_write);
    for (size_t start = 0, c = 0; start < n; start += CHUNK, c ^= 1) {
        size_t len = n - start < CHUNK ? n - start : CHUNK;
        size_t next = start + CHUNK;
        if (next < n) {
            size_t next_len = n - next < CHUNK ? n - next : CHUNK;
            hash_chunk(f, keys + next, lens + next, next_len, buffers[c ^ 1]);
            prefetch_chunk(f, buffers[c ^ 1], next_len, for_write);
        }
        count += run_chunk(f, op, buffers[c], len, results ? results + start : NULL);
    }
    return count;
}

int sbloom_keys_valid(const void *const *keys, const size_t *lens, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!keys[i] && lens[i])
            return 0;
    return 1;
}

int64_t sbloom_add_hashes(sbloom_t *filter, const uint64_t *hashes, size_t n)
{
    if (!filter || (!hashes && n))
        return SBLOOM_E_NULL;
    if (filter->readonly)
        return SBLOOM_E_READONLY;
    uint64_t added = sbloom_batch_hashes(filter, SBLOOM_OP_ADD, hashes, n, NULL);
    filter->items += added;
    return (int64_t)added;
}

int64_t sbloom_contains_hashes(const sbloom_t *filter, const uint64_t *hashes, size_t n,
                               uint8_t *results)
{
    if (!filter || (!hashes && n))
        return SBLOOM_E_NULL;
    /* The contains kernel only reads; the cast lets the drivers share one signature. */
    return (int64_t)sbloom_batch_hashes((sbloom_t *)filter, SBLOOM_OP_CONTAINS, hashes, n, results);
}

int64_t sbloom_add_if_new_hashes(sbloom_t *filter, const uint64_t *hashes, size_t n,
                                 uint8_t *is_new)
{
    if (!filter || (!hashes && n))
        return SBLOOM_E_NULL;
    if (filter->readonly)
        return SBLOOM_E_READONLY;
    uint64_t fresh = sbloom_batch_hashes(filter, SBLOOM_OP_ADD_IF_NEW, hashes, n, is_new);
    filter->items += fresh;
    return (int64_t)fresh;
}

int64_t sbloom_add_keys(sbloom_t *filter, const void *const *keys, const size_t *lens, size_t n)
{
    if (!filter || ((!keys || !lens) && n))
        return SBLOOM_E_NULL;
    if (filter->readonly)
        return SBLOOM_E_READONLY;
    if (!sbloom_keys_valid(keys, lens, n))
        return SBLOOM_E_NULL;
    uint64_t added = sbloom_batch_keys(filter, SBLOOM_OP_ADD, keys, lens, n, NULL);
    filter->items += added;
    return (int64_t)added;
}

int64_t sbloom_contains_keys(const sbloom_t *filter, const void *const *keys, const size_t *lens,
                             size_t n, uint8_t *results)
{
    if (!filter || ((!keys || !lens) && n))
        return SBLOOM_E_NULL;
    if (!sbloom_keys_valid(keys, lens, n))
        return SBLOOM_E_NULL;
    return (int64_t)sbloom_batch_keys((sbloom_t *)filter, SBLOOM_OP_CONTAINS, keys, lens, n,
                                      results);
}

int64_t sbloom_add_if_new_keys(sbloom_t *filter, const void *const *keys, const size_t *lens,
                               size_t n, uint8_t *is_new)
{
    if (!filter || ((!keys || !lens) && n))
        return SBLOOM_E_NULL;
    if (filter->readonly)
        return SBLOOM_E_READONLY;
    if (!sbloom_keys_valid(keys, lens, n))
        return SBLOOM_E_NULL;
    uint64_t fresh = sbloom_batch_keys(filter, SBLOOM_OP_ADD_IF_NEW, keys, lens, n, is_new);
    filter->items += fresh;
    return (int64_t)fresh;
}
