/* Baselines that compete with the filter, in plain C: the classic Bloom filter, the single-hash
 * bitmap, and the random cache-line read limit. (The hash-set baselines are in shim.cc: they use
 * Abseil, which is C++.) */
#include <stdlib.h>
#include <string.h>

#include "workloads.h"

__extension__ typedef unsigned __int128 wide; /* GCC and clang; the bench needs no other */

int classic_init(classic_filter *f, uint64_t bytes, uint32_t k)
{
    f->nbits = bytes * 8;
    f->k = k;
    f->words = calloc((size_t)((f->nbits + 63) / 64), sizeof *f->words);
    return f->words != NULL;
}

void classic_free(classic_filter *f)
{
    free(f->words);
    f->words = NULL;
}

/* Bit i of the key: (h1 + i * h2) scaled into [0, nbits) by multiply-high (Kirsch-Mitzenmacher
 * double hashing from the two halves of one 64-bit hash). */
static inline uint64_t classic_bit(const classic_filter *f, uint64_t hash, uint32_t i)
{
    uint32_t h1 = (uint32_t)hash, h2 = (uint32_t)(hash >> 32) | 1;
    uint32_t mixed = h1 + i * h2;
    return (uint64_t)(((wide)((uint64_t)mixed << 32 | (mixed * 0x9e3779b9u)) * f->nbits) >> 64);
}

void classic_add(classic_filter *f, uint64_t hash)
{
    for (uint32_t i = 0; i < f->k; i++) {
        uint64_t bit = classic_bit(f, hash, i);
        f->words[bit / 64] |= UINT64_C(1) << (bit % 64);
    }
}

int classic_contains(const classic_filter *f, uint64_t hash)
{
    for (uint32_t i = 0; i < f->k; i++) {
        uint64_t bit = classic_bit(f, hash, i);
        if (!(f->words[bit / 64] & (UINT64_C(1) << (bit % 64))))
            return 0;
    }
    return 1;
}

/* The memory's limit for a blocked filter: one random 64-byte line per key, the line of key
 * i + ahead requested while key i is read (a sliding window, as the filter kernels and the peer
 * harness's "BASE line" rows do; a burst of prefetches per chunk followed by the reads measured
 * slower than that, which made every ratio to this limit look better than it was). The case
 * picks `ahead` as the best of 16 to 256 (bench/cases.c): CPUs with many miss buffers need the
 * deep windows, and a limit measured 16 ahead only was 2.9x too slow on an AMD EPYC (the peer
 * harness's figures, issue 31). */
uint64_t line_reads(const uint8_t *array, uint64_t bytes, const uint64_t *hashes, size_t n,
                    size_t ahead)
{
    uint64_t lines = bytes / 64, sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + ahead < n)
            __builtin_prefetch(array + ((hashes[i + ahead] >> 32) * lines >> 32) * 64);
        uint64_t word;
        memcpy(&word, array + ((hashes[i] >> 32) * lines >> 32) * 64, 8);
        sum += word;
    }
    return sum;
}
