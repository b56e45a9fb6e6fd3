/* Internal to bench/: key generation and the baseline filters the cases use. */
#ifndef SIMDBLOOM_BENCH_WORKLOADS_H
#define SIMDBLOOM_BENCH_WORKLOADS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Pre-hashed key i of stream `seed` (inserted keys use one seed, absent keys another). */
uint64_t bench_key(uint64_t seed, uint64_t i);

/* A classic unblocked Bloom filter (k bits anywhere in m, double hashing h1 + i*h2) or, with
 * k = 1, the single-hash bitmap. Scalar, written as a textbook would: the baseline, not a rival. */
typedef struct classic_filter {
    uint64_t *words;
    uint64_t nbits;
    uint32_t k;
} classic_filter;

int classic_init(classic_filter *f, uint64_t bytes, uint32_t k);
void classic_free(classic_filter *f);
void classic_add(classic_filter *f, uint64_t hash);
int classic_contains(const classic_filter *f, uint64_t hash);

/* The memory-level-parallelism limit: one 8-byte read from each key's random 64-byte line of an
 * array of `bytes`, with the lines of the next chunk of 32 keys prefetched first. */
uint64_t line_reads(const uint8_t *array, uint64_t bytes, const uint64_t *hashes, size_t n,
                    size_t ahead);

#ifdef __cplusplus
}
#endif

#endif
