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
    switch (op) {
    case SBLOOM_OP_INSERT: return f->kern->insert(f->blocks, f->nblocks, hashes, n, results);
    case SBLOOM_OP_REMOVE: return f->kern->remove(f->blocks, f->nblocks, hashes, n, results);
    case SBLOOM_OP_CONTAINS:
    default: return f->kern->contains(f->blocks, f->nblocks, hashes, n, results);
    }
}

static int writes(sbloom_batch_op op)
{
    return op != SBLOOM_OP_CONTAINS;
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

/* Where a batch's keys come from: byte strings, or integers. */
typedef struct key_source {
    const void *const *keys;
    const size_t *lens;
    const uint64_t *values; /* integer keys when not NULL */
} key_source;

static void hash_chunk(const sbloom_t *f, const key_source *src, size_t start, size_t n,
                       uint64_t *out)
{
    /* One loop per hash function, so that the choice is made once per chunk, not per key. */
    sbloom_layout hash_of =
        f->layout == SBLOOM_LAYOUT_PARQUET ? SBLOOM_LAYOUT_PARQUET : SBLOOM_LAYOUT_BLOCK512_K8;
    if (src->values) {
        for (size_t i = 0; i < n; i++)
            out[i] = sbloom_hash_integer(hash_of, src->values[start + i]);
    } else if (hash_of == SBLOOM_LAYOUT_PARQUET) {
        for (size_t i = 0; i < n; i++)
            out[i] = sbloom_hash_bytes(SBLOOM_LAYOUT_PARQUET, src->keys[start + i],
                                       src->lens[start + i]);
    } else {
        for (size_t i = 0; i < n; i++)
            out[i] = sbloom_hash_bytes(SBLOOM_LAYOUT_BLOCK512_K8, src->keys[start + i],
                                       src->lens[start + i]);
    }
}

static uint64_t batch_source(sbloom_t *f, sbloom_batch_op op, const key_source *src, size_t n,
                             uint8_t *results)
{
    int for_write = writes(op);
    uint64_t buffers[2][CHUNK];
    uint64_t count = 0;
    size_t first = n < CHUNK ? n : CHUNK;
    hash_chunk(f, src, 0, first, buffers[0]);
    prefetch_chunk(f, buffers[0], first, for_write);
    for (size_t start = 0, c = 0; start < n; start += CHUNK, c ^= 1) {
        size_t len = n - start < CHUNK ? n - start : CHUNK;
        size_t next = start + CHUNK;
        if (next < n) {
            size_t next_len = n - next < CHUNK ? n - next : CHUNK;
            hash_chunk(f, src, next, next_len, buffers[c ^ 1]);
            prefetch_chunk(f, buffers[c ^ 1], next_len, for_write);
        }
        count += run_chunk(f, op, buffers[c], len, results ? results + start : NULL);
    }
    return count;
}

uint64_t sbloom_batch_keys(sbloom_t *f, sbloom_batch_op op, const void *const *keys,
                           const size_t *lens, size_t n, uint8_t *results)
{
    key_source src = {keys, lens, NULL};
    return batch_source(f, op, &src, n, results);
}

uint64_t sbloom_batch_integers(sbloom_t *f, sbloom_batch_op op, const uint64_t *values, size_t n,
                               uint8_t *results)
{
    key_source src = {NULL, NULL, values};
    return batch_source(f, op, &src, n, results);
}

int sbloom_keys_valid(const void *const *keys, const size_t *lens, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!keys[i] && lens[i])
            return 0;
    return 1;
}

void sbloom_count_inserted(sbloom_t *f, uint64_t inserted, uint64_t fresh)
{
    f->items += f->layout == SBLOOM_LAYOUT_COUNTING512 ? inserted : fresh;
}

/* The argument checks every batch entry shares: SBLOOM_OK, or the error to return. */
static int check_hashes(const sbloom_t *f, const uint64_t *hashes, size_t n, int write)
{
    if (!f || (!hashes && n))
        return SBLOOM_E_NULL;
    return write && f->readonly ? SBLOOM_E_READONLY : SBLOOM_OK;
}

static int check_keys(const sbloom_t *f, const void *const *keys, const size_t *lens, size_t n,
                      int write)
{
    if (!f || ((!keys || !lens) && n))
        return SBLOOM_E_NULL;
    if (write && f->readonly)
        return SBLOOM_E_READONLY;
    return sbloom_keys_valid(keys, lens, n) ? SBLOOM_OK : SBLOOM_E_NULL;
}

static int64_t insert_hashes(sbloom_t *f, const uint64_t *hashes, size_t n, uint8_t *is_new)
{
    int rc = check_hashes(f, hashes, n, 1);
    if (rc != SBLOOM_OK)
        return rc;
    uint64_t fresh = sbloom_batch_hashes(f, SBLOOM_OP_INSERT, hashes, n, is_new);
    sbloom_count_inserted(f, n, fresh);
    return (int64_t)fresh;
}

static int64_t insert_keys(sbloom_t *f, const void *const *keys, const size_t *lens, size_t n,
                           uint8_t *is_new)
{
    int rc = check_keys(f, keys, lens, n, 1);
    if (rc != SBLOOM_OK)
        return rc;
    uint64_t fresh = sbloom_batch_keys(f, SBLOOM_OP_INSERT, keys, lens, n, is_new);
    sbloom_count_inserted(f, n, fresh);
    return (int64_t)fresh;
}

static int64_t insert_integers(sbloom_t *f, const uint64_t *values, size_t n, uint8_t *is_new)
{
    int rc = check_hashes(f, values, n, 1);
    if (rc != SBLOOM_OK)
        return rc;
    uint64_t fresh = sbloom_batch_integers(f, SBLOOM_OP_INSERT, values, n, is_new);
    sbloom_count_inserted(f, n, fresh);
    return (int64_t)fresh;
}

int64_t sbloom_add_hashes(sbloom_t *filter, const uint64_t *hashes, size_t n)
{
    return insert_hashes(filter, hashes, n, NULL);
}

int64_t sbloom_add_if_new_hashes(sbloom_t *filter, const uint64_t *hashes, size_t n,
                                 uint8_t *is_new)
{
    return insert_hashes(filter, hashes, n, is_new);
}

int64_t sbloom_contains_hashes(const sbloom_t *filter, const uint64_t *hashes, size_t n,
                               uint8_t *results)
{
    int rc = check_hashes(filter, hashes, n, 0);
    if (rc != SBLOOM_OK)
        return rc;
    /* The contains kernel only reads; the cast lets the drivers share one signature. */
    return (int64_t)sbloom_batch_hashes((sbloom_t *)filter, SBLOOM_OP_CONTAINS, hashes, n, results);
}

int64_t sbloom_add_keys(sbloom_t *filter, const void *const *keys, const size_t *lens, size_t n)
{
    return insert_keys(filter, keys, lens, n, NULL);
}

int64_t sbloom_add_if_new_keys(sbloom_t *filter, const void *const *keys, const size_t *lens,
                               size_t n, uint8_t *is_new)
{
    return insert_keys(filter, keys, lens, n, is_new);
}

int64_t sbloom_contains_keys(const sbloom_t *filter, const void *const *keys, const size_t *lens,
                             size_t n, uint8_t *results)
{
    int rc = check_keys(filter, keys, lens, n, 0);
    if (rc != SBLOOM_OK)
        return rc;
    return (int64_t)sbloom_batch_keys((sbloom_t *)filter, SBLOOM_OP_CONTAINS, keys, lens, n,
                                      results);
}

/* ---- Integer keys ---- */

int64_t sbloom_add_u64s(sbloom_t *filter, const uint64_t *values, size_t n)
{
    return insert_integers(filter, values, n, NULL);
}

int64_t sbloom_add_if_new_u64s(sbloom_t *filter, const uint64_t *values, size_t n, uint8_t *is_new)
{
    return insert_integers(filter, values, n, is_new);
}

int64_t sbloom_contains_u64s(const sbloom_t *filter, const uint64_t *values, size_t n,
                             uint8_t *results)
{
    int rc = check_hashes(filter, values, n, 0);
    if (rc != SBLOOM_OK)
        return rc;
    return (int64_t)sbloom_batch_integers((sbloom_t *)filter, SBLOOM_OP_CONTAINS, values, n,
                                          results);
}

int64_t sbloom_hash_keys(const sbloom_t *filter, const void *const *keys, const size_t *lens,
                         size_t n, uint64_t *hashes)
{
    int rc = check_keys(filter, keys, lens, n, 0);
    if (rc != SBLOOM_OK)
        return rc;
    if (!hashes && n)
        return SBLOOM_E_NULL;
    key_source src = {keys, lens, NULL};
    for (size_t start = 0; start < n; start += CHUNK)
        hash_chunk(filter, &src, start, n - start < CHUNK ? n - start : CHUNK, hashes + start);
    return (int64_t)n;
}

/* ---- Removal (the counting layout) ---- */

static void count_removed(sbloom_t *f, uint64_t gone)
{
    f->items = f->items > gone ? f->items - gone : 0; /* a loaded file's count may be off */
}

int64_t sbloom_remove_hashes(sbloom_t *filter, const uint64_t *hashes, size_t n, uint8_t *removed)
{
    int rc = check_hashes(filter, hashes, n, 1);
    if (rc != SBLOOM_OK)
        return rc;
    if (!filter->kern->remove)
        return SBLOOM_E_LAYOUT;
    uint64_t gone = sbloom_batch_hashes(filter, SBLOOM_OP_REMOVE, hashes, n, removed);
    count_removed(filter, gone);
    return (int64_t)gone;
}

int64_t sbloom_remove_keys(sbloom_t *filter, const void *const *keys, const size_t *lens, size_t n,
                           uint8_t *removed)
{
    int rc = check_keys(filter, keys, lens, n, 1);
    if (rc != SBLOOM_OK)
        return rc;
    if (!filter->kern->remove)
        return SBLOOM_E_LAYOUT;
    uint64_t gone = sbloom_batch_keys(filter, SBLOOM_OP_REMOVE, keys, lens, n, removed);
    count_removed(filter, gone);
    return (int64_t)gone;
}
