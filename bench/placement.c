/*
 * bench/placement's driver: times the batch loops of one x86 kernel table (PLACEMENT_TABLE,
 * linked from bench/placement-unit.c) on hashes already in memory. Prints one line:
 *
 *   PAD  parquet-add parquet-contains k8-add k8-contains
 *
 * in ns a key, each the best of `reps` runs over `keys` keys into a filter of 10 bits a key
 * (125 KB for 100K keys: in L2, where the loops, not memory, set the speed). Exits 2 when this
 * CPU cannot run the table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels.h"

int sbk_cpu_prefetchw; /* the library's dispatch sets it; the in-cache loops never read it */
int sbk_cpu_rtm;
size_t sbk_prefetch_window[SBK_PREFETCH_CLASSES]; /* set to the defaults in main */
unsigned sbk_prefetch_fixed;

extern const sbloom_kernels PLACEMENT_TABLE;

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Best ns a key of the layout's batch add (into a cleared filter) and batch contains. */
static void time_layout(const sbloom_layout_kernels *k, uint64_t block_bytes, const uint64_t *keys,
                        size_t n, int reps, double *add, double *contains)
{
    uint64_t nblocks = (n * 10 / 8 + block_bytes - 1) / block_bytes;
    void *blocks = aligned_alloc(64, nblocks * block_bytes);
    if (!blocks) {
        fprintf(stderr, "placement: out of memory\n");
        exit(1);
    }
    *add = *contains = 1e30;
    uint64_t found = 0;
    for (int r = 0; r < reps; r++) {
        memset(blocks, 0, nblocks * block_bytes);
        double t0 = now_ns();
        k->insert(blocks, nblocks, keys, n, NULL);
        double t1 = now_ns();
        found += k->contains(blocks, nblocks, keys, n, NULL);
        double t2 = now_ns();
        if ((t1 - t0) / (double)n < *add)
            *add = (t1 - t0) / (double)n;
        if ((t2 - t1) / (double)n < *contains)
            *contains = (t2 - t1) / (double)n;
    }
    free(blocks);
    if (found != (uint64_t)n * (uint64_t)reps) { /* every added key must be found */
        fprintf(stderr, "placement: the kernel lost keys (%llu of %llu found)\n",
                (unsigned long long)found, (unsigned long long)n * (unsigned long long)reps);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
    int reps = argc > 2 ? atoi(argv[2]) : 30;
    if (n == 0 || reps <= 0) {
        fprintf(stderr, "usage: placement [KEYS [REPS]]\n");
        return 1;
    }
    for (unsigned c = 0; c < SBK_PREFETCH_CLASSES; c++)
        sbk_prefetch_window[c] = sbk_prefetch_default(c);
    __builtin_cpu_init();
    if (!__builtin_cpu_supports(PLACEMENT_CPU_FEATURE)) {
        fprintf(stderr, "placement: this CPU lacks %s\n", PLACEMENT_CPU_FEATURE);
        return 2;
    }
    uint64_t *keys = malloc(n * sizeof *keys), state = 1;
    if (!keys) {
        fprintf(stderr, "placement: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        keys[i] = splitmix64(&state);
    double t[4];
    time_layout(&PLACEMENT_TABLE.layout[SBK_PARQUET], 32, keys, n, reps, &t[0], &t[1]);
    time_layout(&PLACEMENT_TABLE.layout[SBK_BLOCK512_K8], 64, keys, n, reps, &t[2], &t[3]);
    printf("%d %.3f %.3f %.3f %.3f\n", PLACEMENT_PAD, t[0], t[1], t[2], t[3]);
    free(keys);
    return 0;
}
