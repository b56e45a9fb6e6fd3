/*
 * Batch drivers. On filters larger than the caches a lookup is one DRAM miss; throughput then
 * depends on how many misses are in flight at once.
 *
 * Hashes: the whole batch goes to the kernel, whose loop keeps a sliding window of prefetches
 * (simd/kernel_loops.h: the line of key j + sbk_prefetch_ahead() is requested while key j is
 * probed, on filters of SBK_PREFETCH_MIN_BYTES and more), except while the window of its size is
 * being fitted to the CPU (prefetch_fit.c): then it goes in timed segments.
 *
 * Strings: keys are hashed one chunk ahead of the kernel, and each key's line is requested right
 * after its hash is computed, so the misses of chunk c+1 overlap the hashing of chunk c+1 and the
 * probing of chunk c. The kernel then takes the chunk in pieces no longer than its own prefetch
 * distance, so it does not prefetch those lines a second time. A filter that lives in the caches
 * has nothing to prefetch: its keys are hashed in longer chunks, each then probed whole.
 */
#include <stdlib.h>

#include "../base/alloc.h"
#include "driver.h"

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

static int writes(sbloom_batch_op op)
{
    return op != SBLOOM_OP_CONTAINS;
}

uint64_t sbloom_drive_hashes(const sbloom_runner *r, sbloom_batch_op op, const uint64_t *hashes,
                             size_t n, uint8_t *results)
{
    unsigned threads = sbloom_parallel_threads(r, n);
    if (threads > 1)
        return sbloom_parallel_run(r, op, hashes, n, results, threads);
    if (r->core && sbloom_prefetch_fitting(r->core->bytes, n))
        return sbloom_prefetch_fit_run(r, op, hashes, n, results);
    return r->run(r->ctx, op, hashes, n, results);
}

/* The chunk function over a chunk whose lines are already requested: in pieces no longer than
 * the kernel's prefetch distance, so that it does not request them again. */
static uint64_t run_prefetched(const sbloom_runner *r, sbloom_batch_op op, const uint64_t *hashes,
                               size_t n, uint8_t *results)
{
    uint64_t count = 0;
    for (size_t at = 0; at < n; at += SBK_PREFETCH_AHEAD) {
        size_t len = n - at < SBK_PREFETCH_AHEAD ? n - at : SBK_PREFETCH_AHEAD;
        count += r->run(r->ctx, op, hashes + at, len, results ? results + at : NULL);
    }
    return count;
}

/* Keys hashed CACHED_CHUNK at a time, each piece handed whole to the chunk function: a filter
 * that lives in the caches has nothing to prefetch, and a mode of several cores prefetches
 * nothing here. The drivers stop at the first chunk that holds a NULL key with a length, with
 * *valid set to 0 (sbloom_hash_source). */
static uint64_t drive_cached(const sbloom_runner *r, sbloom_batch_op op,
                             const sbloom_key_source *src, size_t n, uint8_t *results, int *valid)
{
    uint64_t hashes[CACHED_CHUNK];
    uint64_t count = 0;
    for (size_t start = 0; start < n; start += CACHED_CHUNK) {
        size_t len = n - start < CACHED_CHUNK ? n - start : CACHED_CHUNK;
        if (!sbloom_hash_source(r->layout, src, start, len, hashes, NULL, 0)) {
            *valid = 0;
            break;
        }
        count += r->run(r->ctx, op, hashes, len, results ? results + start : NULL);
    }
    return count;
}

/* Where the keys are checked (a key may be NULL only with length 0): the serial drivers check each
 * chunk as they hash it, before its kernel runs, and stop at one that breaks it. That serves a read
 * and a write that fits in the first chunk. A longer write must not change anything before it finds
 * a bad key, and a parallel batch's workers hash without checking: both take a pass of their own
 * first (sbloom_keys_valid, about 0.15 ns a URL: docs/notes/kernels-history.md). */
uint64_t sbloom_drive_keys(const sbloom_runner *r, sbloom_batch_op op, const sbloom_key_source *src,
                           size_t n, uint8_t *results, int *valid)
{
    *valid = 1;
    unsigned threads = sbloom_parallel_threads(r, n);
    int prefetch = !r->core || r->core->bytes < PREFETCH_MIN_BYTES ? 0 : writes(op) ? 2 : 1;
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
            sbloom_parallel_hash(r, src, n, hashes, threads);
            uint64_t count = sbloom_parallel_run(r, op, hashes, n, results, threads);
            free(hashes);
            return count;
        }
    }
    if (!prefetch)
        return drive_cached(r, op, src, n, results, valid);
    uint64_t buffers[2][CHUNK];
    uint64_t count = 0;
    size_t first = n < CHUNK ? n : CHUNK;
    if (!sbloom_hash_source(r->layout, src, 0, first, buffers[0], r->core, prefetch)) {
        *valid = 0;
        return 0;
    }
    for (size_t start = 0, c = 0; start < n; start += CHUNK, c ^= 1) {
        size_t len = n - start < CHUNK ? n - start : CHUNK;
        size_t next = start + CHUNK;
        if (next < n &&
            !sbloom_hash_source(r->layout, src, next, n - next < CHUNK ? n - next : CHUNK,
                                buffers[c ^ 1], r->core, prefetch)) {
            *valid = 0;
            break;
        }
        count += run_prefetched(r, op, buffers[c], len, results ? results + start : NULL);
    }
    return count;
}

int sbloom_drive_hash_only(const sbloom_runner *r, const sbloom_key_source *src, size_t n,
                           uint64_t *out)
{
    unsigned threads = sbloom_parallel_threads(r, n);
    if (threads > 1) {
        if (src->keys && !sbloom_keys_valid(src->keys, src->lens, n))
            return 0;
        sbloom_parallel_hash(r, src, n, out, threads);
        return 1;
    }
    for (size_t start = 0; start < n; start += CHUNK)
        if (!sbloom_hash_source(r->layout, src, start, n - start < CHUNK ? n - start : CHUNK,
                                out + start, NULL, 0))
            return 0;
    return 1;
}
