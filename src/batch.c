/*
 * Batch drivers. On filters larger than the caches a lookup is one DRAM miss; throughput then
 * depends on how many misses are in flight at once.
 *
 * Hashes: the whole batch goes to the kernel, whose loop keeps a sliding window of prefetches
 * (simd/kernel_loops.h: the line of key j + sbk_prefetch_ahead() is requested while key j is
 * probed, on filters of SBK_PREFETCH_MIN_BYTES and more).
 *
 * Strings: keys are hashed one chunk ahead of the kernel, and each key's line is requested right
 * after its hash is computed, so the misses of chunk c+1 overlap the hashing of chunk c+1 and the
 * probing of chunk c. The kernel then takes the chunk in pieces no longer than its own prefetch
 * distance, so it does not prefetch those lines a second time. A filter that lives in the caches
 * has nothing to prefetch: its keys are hashed in longer chunks, each then probed whole.
 */
#include <stdlib.h>

#include "alloc.h"
#include "hash.h"
#include "internal.h"

/* Keys hashed ahead of the kernel on the string path. Build with -DSBLOOM_BATCH_CHUNK=N to
 * retune. */
#ifndef SBLOOM_BATCH_CHUNK
#define SBLOOM_BATCH_CHUNK 64
#endif
#define CHUNK SBLOOM_BATCH_CHUNK

/* The same on filters small enough to need no prefetch (PREFETCH_MIN_BYTES): there the chunk sets
 * no prefetch distance, and a longer one costs fewer passes between the hash loop and the
 * kernel's. SBLOOM_BATCH_CACHED_CHUNK=N to retune (its hashes live on the stack: 8 bytes a key). */
#ifndef SBLOOM_BATCH_CACHED_CHUNK
#define SBLOOM_BATCH_CACHED_CHUNK 512
#endif
#define CACHED_CHUNK SBLOOM_BATCH_CACHED_CHUNK

/* Below this size a filter lives in the caches, where out-of-order execution already overlaps
 * the hits and a prefetch only adds instructions (the kernels use the same bound). */
#define PREFETCH_MIN_BYTES SBK_PREFETCH_MIN_BYTES

static inline void prefetch_line(const sbloom_t *f, uint64_t hash, int for_write)
{
    const char *line = (const char *)f->blocks + sbk_block_index(hash, f->nblocks) * f->block_bytes;
    if (for_write)
        __builtin_prefetch(line, 1, 3);
    else
        __builtin_prefetch(line, 0, 3);
}

uint64_t sbloom_run_chunk(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                          uint8_t *results)
{
    if (f->concurrent)
        return sbloom_concurrent_run(f, op, hashes, n, results);
    if (f->stages)
        return sbloom_scalable_run(f, op, hashes, n, results);
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
    unsigned threads = sbloom_batch_threads(f, n);
    if (threads > 1)
        return sbloom_parallel_hashes(f, op, hashes, n, results, threads);
    return sbloom_run_chunk(f, op, hashes, n, results);
}

typedef sbloom_key_source key_source;

/* n string keys hashed with one layout's hash function (a constant at each call, so each call
 * compiles to a loop of its own). It also checks the keys, which costs less here than in a pass
 * of its own (sbloom_keys_valid: about 0.15 ns a URL, docs/KERNELS.md): a NULL key is hashed as
 * the empty one. Returns 0 if a NULL key had a non-zero length, else 1. */
static inline int hash_strings(sbloom_layout layout, const void *const *keys, const size_t *lens,
                               size_t n, uint64_t *out)
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
        out[i] = sbloom_hash_nonnull(layout, key, len);
    }
    return lacking == 0;
}

/* Hashes keys [start, start + n) into out; with prefetch set (0 none, 1 read, 2 write), requests
 * each key's line as soon as its hash is known. Returns 0 if a key was NULL with a non-zero
 * length (its hash then is the empty key's), else 1. */
static int hash_chunk(const sbloom_t *f, const key_source *src, size_t start, size_t n,
                      uint64_t *out, int prefetch)
{
    int valid = 1;
    /* One loop per hash function, so that the choice is made once per chunk, not per key. */
    if (src->values) {
        sbloom_layout hash_of =
            f->layout == SBLOOM_LAYOUT_PARQUET ? SBLOOM_LAYOUT_PARQUET : SBLOOM_LAYOUT_BLOCK512_K8;
        const uint64_t *values = src->values + start;
        for (size_t i = 0; i < n; i++)
            out[i] = sbloom_hash_integer(hash_of, values[i]);
    } else if (f->layout == SBLOOM_LAYOUT_PARQUET) {
        valid = hash_strings(SBLOOM_LAYOUT_PARQUET, src->keys + start, src->lens + start, n, out);
    } else {
        valid =
            hash_strings(SBLOOM_LAYOUT_BLOCK512_K8, src->keys + start, src->lens + start, n, out);
    }
    if (prefetch)
        for (size_t i = 0; i < n; i++)
            prefetch_line(f, out[i], prefetch == 2);
    return valid;
}

/* The kernel over a chunk whose lines are already requested: in pieces no longer than the
 * kernel's prefetch distance, so that it does not request them again. */
static uint64_t run_prefetched(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                               uint8_t *results)
{
    uint64_t count = 0;
    for (size_t at = 0; at < n; at += SBK_PREFETCH_AHEAD) {
        size_t len = n - at < SBK_PREFETCH_AHEAD ? n - at : SBK_PREFETCH_AHEAD;
        count += sbloom_run_chunk(f, op, hashes + at, len, results ? results + at : NULL);
    }
    return count;
}

void sbloom_hash_source(const sbloom_t *f, const sbloom_key_source *src, size_t start, size_t n,
                        uint64_t *out)
{
    hash_chunk(f, src, start, n, out, 0);
}

/* A filter that lives in the caches: nothing to prefetch, so the keys are hashed CACHED_CHUNK at
 * a time and the kernel takes each piece whole. The drivers stop at the first chunk that holds a
 * NULL key with a length, with *valid set to 0 (hash_chunk). */
static uint64_t batch_source_cached(sbloom_t *f, sbloom_batch_op op, const key_source *src,
                                    size_t n, uint8_t *results, int *valid)
{
    uint64_t hashes[CACHED_CHUNK];
    uint64_t count = 0;
    for (size_t start = 0; start < n; start += CACHED_CHUNK) {
        size_t len = n - start < CACHED_CHUNK ? n - start : CACHED_CHUNK;
        if (!hash_chunk(f, src, start, len, hashes, 0)) {
            *valid = 0;
            break;
        }
        count += sbloom_run_chunk(f, op, hashes, len, results ? results + start : NULL);
    }
    return count;
}

/* Where the keys are checked (a key may be NULL only with length 0): the serial drivers check each
 * chunk as they hash it, before its kernel runs, and stop at one that breaks it. That serves a read
 * and a write that fits in the first chunk. A longer write must not change anything before it finds
 * a bad key, and a parallel batch's workers hash without checking: both take a pass of their own
 * first (sbloom_keys_valid, about 0.15 ns a URL: docs/KERNELS.md). */
static uint64_t batch_source(sbloom_t *f, sbloom_batch_op op, const key_source *src, size_t n,
                             uint8_t *results, int *valid)
{
    *valid = 1;
    unsigned threads = sbloom_batch_threads(f, n);
    /* (a scalable filter's stages have their own blocks: its batches go whole to its driver) */
    int prefetch = f->stages || f->bytes < PREFETCH_MIN_BYTES ? 0 : writes(op) ? 2 : 1;
    size_t first_chunk = prefetch ? CHUNK : CACHED_CHUNK;
    if (src->keys && (threads > 1 || (writes(op) && n > first_chunk)) &&
        !sbloom_keys_valid(src->keys, src->lens, n)) {
        *valid = 0;
        return 0;
    }
    if (threads > 1) {
        uint64_t *hashes =
            n <= SIZE_MAX / sizeof *hashes ? sbloom_malloc(n * sizeof *hashes) : NULL;
        if (hashes) { /* else serially, below */
            sbloom_parallel_hash(f, src, n, hashes, threads);
            uint64_t count = sbloom_parallel_hashes(f, op, hashes, n, results, threads);
            free(hashes);
            return count;
        }
    }
    if (!prefetch)
        return batch_source_cached(f, op, src, n, results, valid);
    uint64_t buffers[2][CHUNK];
    uint64_t count = 0;
    size_t first = n < CHUNK ? n : CHUNK;
    if (!hash_chunk(f, src, 0, first, buffers[0], prefetch)) {
        *valid = 0;
        return 0;
    }
    for (size_t start = 0, c = 0; start < n; start += CHUNK, c ^= 1) {
        size_t len = n - start < CHUNK ? n - start : CHUNK;
        size_t next = start + CHUNK;
        if (next < n && !hash_chunk(f, src, next, n - next < CHUNK ? n - next : CHUNK,
                                    buffers[c ^ 1], prefetch)) {
            *valid = 0;
            break;
        }
        uint8_t *out = results ? results + start : NULL;
        count += run_prefetched(f, op, buffers[c], len, out);
    }
    return count;
}

uint64_t sbloom_batch_keys(sbloom_t *f, sbloom_batch_op op, const void *const *keys,
                           const size_t *lens, size_t n, uint8_t *results, int *valid)
{
    key_source src = {keys, lens, NULL};
    return batch_source(f, op, &src, n, results, valid);
}

uint64_t sbloom_batch_integers(sbloom_t *f, sbloom_batch_op op, const uint64_t *values, size_t n,
                               uint8_t *results)
{
    key_source src = {NULL, NULL, values};
    int valid;
    return batch_source(f, op, &src, n, results, &valid);
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
 * (AMD EPYC, gcc 12 -O3): 0.27-0.34 ns a key key by key, 0.15 this way (docs/KERNELS.md). */
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

void sbloom_count_inserted(sbloom_t *f, uint64_t inserted, uint64_t fresh)
{
    if (f->stages)
        return; /* a scalable filter's stages count their own keys (src/scalable.c) */
    uint64_t added = f->layout == SBLOOM_LAYOUT_COUNTING512 ? inserted : fresh;
    if (f->items_delta)
        __atomic_fetch_add(f->items_delta, added, __ATOMIC_RELAXED);
    else if (f->concurrent)
        __atomic_fetch_add(&f->items, added, __ATOMIC_RELAXED);
    else
        f->items += added;
}

/* The argument checks every batch entry shares: SBLOOM_OK, or the error to return. */
static int check_hashes(const sbloom_t *f, const uint64_t *hashes, size_t n, int write)
{
    if (!f || (!hashes && n))
        return SBLOOM_E_NULL;
    return write && f->readonly ? SBLOOM_E_READONLY : SBLOOM_OK;
}

/* The keys themselves are checked by the drivers (sbloom_batch_keys' valid), a write's before it
 * changes anything. */
static int check_keys(const sbloom_t *f, const void *const *keys, const size_t *lens, size_t n,
                      int write)
{
    if (!f || ((!keys || !lens) && n))
        return SBLOOM_E_NULL;
    return write && f->readonly ? SBLOOM_E_READONLY : SBLOOM_OK;
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
    int valid;
    uint64_t fresh = sbloom_batch_keys(f, SBLOOM_OP_INSERT, keys, lens, n, is_new, &valid);
    if (!valid)
        return SBLOOM_E_NULL; /* nothing was added */
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
    int valid;
    uint64_t present =
        sbloom_batch_keys((sbloom_t *)filter, SBLOOM_OP_CONTAINS, keys, lens, n, results, &valid);
    return valid ? (int64_t)present : SBLOOM_E_NULL;
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
    unsigned threads = sbloom_batch_threads(filter, n);
    if (threads > 1) {
        if (!sbloom_keys_valid(keys, lens, n))
            return SBLOOM_E_NULL;
        return sbloom_parallel_hash(filter, &src, n, hashes, threads) == SBLOOM_OK ? (int64_t)n : 0;
    }
    for (size_t start = 0; start < n; start += CHUNK)
        if (!hash_chunk(filter, &src, start, n - start < CHUNK ? n - start : CHUNK, hashes + start,
                        0))
            return SBLOOM_E_NULL;
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
    int valid;
    uint64_t gone = sbloom_batch_keys(filter, SBLOOM_OP_REMOVE, keys, lens, n, removed, &valid);
    if (!valid)
        return SBLOOM_E_NULL; /* nothing was removed */
    count_removed(filter, gone);
    return (int64_t)gone;
}
