/*
 * simdbloom-bench-overlap: does this CPU hide a loop's own work behind its random line reads?
 *
 * The line-read loop of the "line-read limit" (one random 64-byte line a key over an array of
 * --bytes, on huge pages where the kernel gives them, the line of key i + --ahead requested while
 * key i is read), with W steps of arithmetic a key added (multiply-adds on the key's hash: a chain
 * within a key, independent from key to key, as a filter's probe is), timed beside the same loop
 * over a 16 KiB array (in L1: the work alone) and with W = 0 (the reads alone). Where the core
 * overlaps the two, reads + work take about the larger of the two; where it does not, their sum.
 * "overlap" prints where the measured time lies: 0 at the larger (hidden), 1 at the sum (added).
 * A batch kernel of the library is such a loop (docs/notes/device.md: on the device's Xeon its
 * time was near the sum with the filter in that CPU's L3). Plain C, timed by itself; compare rows
 * of one run.
 *
 * usage: simdbloom-bench-overlap [--bytes N] [--ahead A] [--work W,W,...] [--keys N] [--reps R]
 */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "window_keys.h" /* now(), mix(), fill_keys() */

#define HUGE_PAGE ((size_t)2 << 20)
#define SMALL_LINES 256 /* 16 KiB: the work alone */
#define MAX_WORKS 16

/* The line of hash h among `lines` lines: the multiply-high of its top 32 bits, as the filters'. */
static inline const uint64_t *line_of(const uint64_t *array, uint64_t lines, uint64_t h)
{
    return array + (((h >> 32) * lines) >> 32) * 8;
}

/* One pass: for each key, `work` multiply-add steps on its hash and one word of its line; the
 * line of key i + ahead requested first. Returns a value that depends on every read. */
static uint64_t pass(const uint64_t *array, uint64_t lines, const uint64_t *keys, size_t n,
                     size_t ahead, unsigned work)
{
    uint64_t sink = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + ahead < n)
            __builtin_prefetch(line_of(array, lines, keys[i + ahead]), 0, 3);
        uint64_t h = keys[i];
        uint64_t x = h;
        for (unsigned s = 0; s < work; s++)
            x = x * UINT64_C(0xD6E8FEB86659FD93) + (x >> 29);
        sink += x ^ line_of(array, lines, h)[h & 7];
    }
    return sink;
}

/* The best of reps passes, in ns a key. */
static double best_ns(const uint64_t *array, uint64_t lines, const uint64_t *keys, size_t n,
                      size_t ahead, unsigned work, int reps, uint64_t *sink)
{
    double best = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        *sink += pass(array, lines, keys, n, ahead, work);
        double ns = (now() - t0) * 1e9 / (double)n;
        if (r == 0 || ns < best)
            best = ns;
    }
    return best;
}

static uint64_t *lines_alloc(uint64_t lines)
{
    size_t bytes = (size_t)lines * 64, rounded = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    uint64_t *array = aligned_alloc(HUGE_PAGE, rounded);
    if (!array)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(array, rounded, MADV_HUGEPAGE); /* a hint: failure is harmless */
#endif
    uint64_t state = 7;
    for (size_t i = 0; i < rounded / 8; i++)
        array[i] = mix(&state);
    return array;
}

static int usage(FILE *to, int status)
{
    fprintf(to,
            "usage: simdbloom-bench-overlap [--bytes N] [--ahead A] [--work W,W,...] [--keys N] "
            "[--reps R]\n"
            "  random line reads over N bytes (default 125000000) with W multiply-add steps a "
            "key\n  (default 0,2,4,8,16,32), beside the same work over 16 KiB (in L1); A keys "
            "requested\n  ahead (default 64); keys a pass (default 4000000); best of R passes "
            "(default 5)\n");
    return status;
}

int main(int argc, char **argv)
{
    uint64_t bytes = 125000000;
    size_t ahead = 64, n = 4000000;
    int reps = 5;
    unsigned works[MAX_WORKS] = {0, 2, 4, 8, 16, 32}, nworks = 6;
    for (int i = 1; i < argc; i += 2) { /* each option and its value */
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return usage(stdout, 0);
        if (!v)
            return usage(stderr, 2);
        if (!strcmp(argv[i], "--bytes"))
            bytes = strtoull(v, &end, 10);
        else if (!strcmp(argv[i], "--ahead"))
            ahead = strtoull(v, &end, 10);
        else if (!strcmp(argv[i], "--keys"))
            n = strtoull(v, &end, 10);
        else if (!strcmp(argv[i], "--reps"))
            reps = (int)strtol(v, &end, 10);
        else if (!strcmp(argv[i], "--work")) {
            nworks = 0;
            const char *p = v;
            do {
                if (nworks == MAX_WORKS)
                    return usage(stderr, 2);
                unsigned long w = strtoul(p, &end, 10);
                if (end == p || w > 1000)
                    return usage(stderr, 2);
                works[nworks++] = (unsigned)w;
                p = end + 1;
            } while (*end == ',');
        } else
            return usage(stderr, 2);
        if (!end || *end != '\0')
            return usage(stderr, 2);
    }
    if (bytes < 64 * SMALL_LINES || n == 0 || reps < 1 || ahead > 4096)
        return usage(stderr, 2);
    uint64_t lines = bytes / 64;
    if (lines > (UINT64_C(1) << 32))
        return usage(stderr, 2);
    uint64_t *big = lines_alloc(lines), *small = lines_alloc(SMALL_LINES);
    uint64_t *keys = malloc(n * sizeof *keys);
    if (!big || !small || !keys) {
        fprintf(stderr, "simdbloom-bench-overlap: out of memory\n");
        return 1;
    }
    uint64_t sink = 0;
    fill_keys(keys, n, 1);
    printf("random line reads over %llu bytes, %zu keys ahead, %zu keys a pass, best of %d; "
           "ns a key\n",
           (unsigned long long)bytes, ahead, n, reps);
    printf("%6s %10s %10s %10s %10s %10s %8s\n", "work", "reads", "work only", "both", "larger",
           "sum", "overlap");
    double reads = best_ns(big, lines, keys, n, ahead, 0, reps, &sink);
    for (unsigned w = 0; w < nworks; w++) {
        /* each figure measured again beside the others, so that a slow spell of the machine
         * shows as disagreement between rows rather than as a false overlap */
        double alone = best_ns(small, SMALL_LINES, keys, n, ahead, works[w], reps, &sink);
        double both = best_ns(big, lines, keys, n, ahead, works[w], reps, &sink);
        double again = best_ns(big, lines, keys, n, ahead, 0, reps, &sink);
        reads = again < reads ? again : reads;
        double larger = reads > alone ? reads : alone, sum = reads + alone;
        double share = sum > larger ? (both - larger) / (sum - larger) : 0;
        printf("%6u %10.2f %10.2f %10.2f %10.2f %10.2f %8.2f\n", works[w], reads, alone, both,
               larger, sum, share);
    }
    printf(
        "(overlap: 0 when reads + work took the larger of the two, 1 when their sum; sink %llu)\n",
        (unsigned long long)(sink & 1));
    free(keys);
    free(small);
    free(big);
    return 0;
}
