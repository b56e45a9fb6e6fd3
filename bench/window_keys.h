/*
 * What the two windowed benchmarks (window.c, window_table.c) and overlap.c share: a monotonic
 * clock in seconds, and pre-hashed keys from a seed (splitmix64, so each run's keys are the same).
 */
#ifndef SIMDBLOOM_BENCH_WINDOW_KEYS_H
#define SIMDBLOOM_BENCH_WINDOW_KEYS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline uint64_t mix(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static inline void fill_keys(uint64_t *keys, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        keys[i] = mix(&seed);
}

#endif
