/*
 * Batches: keys hashed, their lines prefetched, and chunks handed to a chunk function, serially
 * or spread over threads. Written once for every mode: a mode gives its chunk function (one
 * kernel call for the plain filter, the locked test-and-add for the concurrent one, a walk of the
 * stages for the scalable one) and, when its keys land in one core's blocks, that core.
 */
#ifndef SIMDBLOOM_DRIVER_H
#define SIMDBLOOM_DRIVER_H

#include "core.h"
#include "keys.h"

/* A chunk function: the operation over n hashes, its answers in results (may be NULL), and the
 * count it returns (new, present or removed keys). */
typedef uint64_t (*sbloom_chunk_fn)(void *ctx, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                                    uint8_t *results);

typedef struct sbloom_runner {
    sbloom_chunk_fn run;
    void *ctx;
    /* The blocks every key lands in: prefetched ahead of the chunk function and split among
     * threads. NULL for a mode of several cores (its chunk function walks them itself). */
    const sbloom_core *core;
    sbloom_layout layout; /* which hash a string or integer key takes */
    unsigned threads;     /* workers a large batch may spread over (sbloom_set_threads) */
} sbloom_runner;

/* parallel.c: the threads a batch of n keys runs on (1: serially); the chunk function over the
 * batch on t threads, each owning a range of the core's blocks (answers as the serial call's);
 * and the keys hashed on t threads. */
#define SBLOOM_PARALLEL_MIN_KEYS 65536
#define SBLOOM_MAX_THREADS 256u
unsigned sbloom_parallel_threads(const sbloom_runner *r, sbloom_batch_op op, size_t n);
uint64_t sbloom_parallel_run(const sbloom_runner *r, sbloom_batch_op op, const uint64_t *hashes,
                             size_t n, uint8_t *results, unsigned threads);
void sbloom_parallel_hash(const sbloom_runner *r, const sbloom_key_source *src, size_t n,
                          uint64_t *out, unsigned threads);

/* driver.c: a batch of hashes, and of keys. A key pointer may be NULL only when its length is
 * 0: sbloom_drive_keys sets *valid to 0 when one breaks that, a write's before it changes
 * anything, a read's at the chunk that holds it (where it stops). */
uint64_t sbloom_drive_hashes(const sbloom_runner *r, sbloom_batch_op op, const uint64_t *hashes,
                             size_t n, uint8_t *results);
uint64_t sbloom_drive_keys(const sbloom_runner *r, sbloom_batch_op op, const sbloom_key_source *src,
                           size_t n, uint8_t *results, int *valid);
/* prefetch_fit.c: the prefetch window fitted to the CPU while large batches run. Whether a batch
 * of n keys on a filter of `bytes` should fit it (its size class is not settled); that batch
 * run (answers and count as r->run's over the whole batch); the window a filter of `bytes` takes
 * now, with *fitted (may be NULL) set when fitting settled it. */
int sbloom_prefetch_fitting(uint64_t bytes, size_t n);
uint64_t sbloom_prefetch_fit_run(const sbloom_runner *r, sbloom_batch_op op, const uint64_t *hashes,
                                 size_t n, uint8_t *results);
size_t sbloom_prefetch_window_for(uint64_t bytes, int *fitted);

/* The hashes of n keys (no operation): 1, or 0 when a key was NULL with a length. */
int sbloom_drive_hash_only(const sbloom_runner *r, const sbloom_key_source *src, size_t n,
                           uint64_t *out);

#endif /* SIMDBLOOM_DRIVER_H */
