/*
 * Batch drivers. On filters larger than the caches a lookup is one DRAM miss; throughput then
 * depends on how many misses are in flight at once.
 *
 * Hashes: the whole batch goes to the kernel, whose loop keeps a sliding window of prefetches
 * (simd/kernel_loops.h: the line of key j + sbk_prefetch_ahead() is requested while key j is
 * probed, on filters of SBK_PREFETCH_MIN_BYTES and more), except while the window of its size is
 * being fitted to the CPU (prefetch_fit.c): then it goes in timed segments.
 *
 * Strings: keys are hashed a run at a time into a buffer, and each run goes to the hash driver
 * above. On a filter larger than the caches the run is long (STRING_RUN keys, on the heap), so
 * that the kernel's window runs on as it does for hashes; one that lives in the caches has
 * nothing to prefetch, and its runs are shorter (CACHED_CHUNK, on the stack). Hashing 64 keys at a
 * time and requesting each key's line as its hash was computed (the form before) took 35-39 ns a
 * URL line on a 49 MB filter, against 27 this way (this project's Intel Xeon VM, a program over
 * the static library: docs/notes/kernels-history.md).
 */
#include <stdlib.h>

#include "../base/alloc.h"
#include "driver.h"

/* Keys hashed at a time on a filter larger than the caches (a buffer of 8 bytes a key, on the
 * heap). SBLOOM_BATCH_STRING_RUN=N to retune. */
#ifndef SBLOOM_BATCH_STRING_RUN
#define SBLOOM_BATCH_STRING_RUN 8192
#endif
#define STRING_RUN SBLOOM_BATCH_STRING_RUN

/* The same on filters small enough to need no prefetch (PREFETCH_MIN_BYTES), and wherever the
 * heap has no room for a long run: a longer one costs fewer passes between the hash loop and the
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
    unsigned threads = sbloom_parallel_threads(r, op, n);
    if (threads > 1)
        return sbloom_parallel_run(r, op, hashes, n, results, threads);
    if (r->core && sbloom_prefetch_fitting(r->core->bytes, n))
        return sbloom_prefetch_fit_run(r, op, hashes, n, results);
    return r->run(r->ctx, op, hashes, n, results);
}

/* Keys hashed CACHED_CHUNK at a time, each piece handed whole to the chunk function: a filter
 * that lives in the caches has nothing to prefetch, a mode of several cores prefetches nothing
 * here, and a larger filter comes here when the heap has no room for its runs' buffer. The drivers
 * stop at the first chunk that holds a NULL key with a length, with *valid set to 0
 * (sbloom_hash_source). */
static uint64_t drive_cached(const sbloom_runner *r, sbloom_batch_op op,
                             const sbloom_key_source *src, size_t n, uint8_t *results, int *valid)
{
    uint64_t hashes[CACHED_CHUNK];
    uint64_t count = 0;
    for (size_t start = 0; start < n; start += CACHED_CHUNK) {
        size_t len = n - start < CACHED_CHUNK ? n - start : CACHED_CHUNK;
        if (!sbloom_hash_source(r->layout, src, start, len, hashes)) {
            *valid = 0;
            break;
        }
        count += r->run(r->ctx, op, hashes, len, results ? results + start : NULL);
    }
    return count;
}

/* Keys hashed `run` at a time into `buffer` (on the heap: STRING_RUN keys or the whole batch),
 * each run handed to the hash driver (the kernel's window, its fitting). Stops as drive_cached
 * does. */
static uint64_t drive_runs(const sbloom_runner *r, sbloom_batch_op op, const sbloom_key_source *src,
                           size_t n, uint8_t *results, int *valid, uint64_t *buffer, size_t run)
{
    uint64_t count = 0;
    for (size_t start = 0; start < n; start += run) {
        size_t len = n - start < run ? n - start : run;
        if (!sbloom_hash_source(r->layout, src, start, len, buffer)) {
            *valid = 0;
            break;
        }
        count += sbloom_drive_hashes(r, op, buffer, len, results ? results + start : NULL);
    }
    return count;
}

/* Where the keys are checked (a key may be NULL only with length 0): the serial drivers check each
 * run as they hash it, before its kernel runs, and stop at one that breaks it. That serves a read
 * and a write that fits in the first run (STRING_RUN keys where the heap gave their buffer, else
 * CACHED_CHUNK). A longer write must not change anything before it finds a bad key, and a
 * parallel batch's workers hash without checking: both take a pass of their own first
 * (sbloom_keys_valid, about 0.15 ns a URL: docs/notes/kernels-history.md). */
uint64_t sbloom_drive_keys(const sbloom_runner *r, sbloom_batch_op op, const sbloom_key_source *src,
                           size_t n, uint8_t *results, int *valid)
{
    *valid = 1;
    unsigned threads = sbloom_parallel_threads(r, op, n);
    int cached = !r->core || r->core->bytes < PREFETCH_MIN_BYTES;
    size_t run = !cached && threads == 1 ? (n < STRING_RUN ? n : STRING_RUN) : 0;
    uint64_t *buffer = run ? sbloom_malloc(run * sizeof *buffer) : NULL;
    size_t first_run = buffer ? run : CACHED_CHUNK;
    uint64_t count = 0;
    if (src->keys && (threads > 1 || (writes(op) && n > first_run)) &&
        !sbloom_keys_valid(src->keys, src->lens, n)) {
        *valid = 0;
    } else if (buffer) {
        count = drive_runs(r, op, src, n, results, valid, buffer, run);
    } else if (threads > 1) {
        uint64_t *hashes =
            n <= SIZE_MAX / sizeof *hashes ? sbloom_malloc(n * sizeof *hashes) : NULL;
        if (hashes) {
            sbloom_parallel_hash(r, src, n, hashes, threads);
            count = sbloom_parallel_run(r, op, hashes, n, results, threads);
            free(hashes);
        } else { /* serially, in stack runs: the keys were checked above */
            count = drive_cached(r, op, src, n, results, valid);
        }
    } else {
        count = drive_cached(r, op, src, n, results, valid);
    }
    free(buffer);
    return count;
}

int sbloom_drive_hash_only(const sbloom_runner *r, const sbloom_key_source *src, size_t n,
                           uint64_t *out)
{
    unsigned threads = sbloom_parallel_threads(r, SBLOOM_OP_CONTAINS, n); /* (hashing only) */
    if (threads > 1) {
        if (src->keys && !sbloom_keys_valid(src->keys, src->lens, n))
            return 0;
        sbloom_parallel_hash(r, src, n, out, threads);
        return 1;
    }
    for (size_t start = 0; start < n; start += CACHED_CHUNK)
        if (!sbloom_hash_source(r->layout, src, start,
                                n - start < CACHED_CHUNK ? n - start : CACHED_CHUNK, out + start))
            return 0;
    return 1;
}
