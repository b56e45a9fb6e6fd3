/*
 * The prefetch window fitted to the CPU while large batches run.
 *
 * How many keys ahead a batch loop should request lines (simd/kernel_loops.h) depends on how many
 * misses a core keeps in flight and how long each takes, which no CPU reports: 32 to 64 suit the
 * CPUs the defaults were measured on, AMD Zen 5 reads a line every 2.5 ns at 100M keys with 128
 * in flight against 3.6 with 64 (the speed issue), and a filter in L3 wants another window than
 * one in DRAM. So the first large batches on a filter of each size class (sbk_prefetch_class: a
 * power of two of bytes) run in segments of SEGMENT keys, each with one candidate window (0: no
 * request ahead, for a filter the core's caches hold after all), timed.
 * A round gives each candidate one segment, in an order that turns from round to round; a
 * candidate's score in a round is its time over the round's mean. After ROUNDS rounds the class
 * keeps the candidate of the lowest median score, unless it beats the class's default by less
 * than MARGIN. A round during which the thread took a page fault (a fresh filter's first touches
 * cost more than the window saves) is not counted.
 *
 * Only the time depends on the window: every segment is the same kernel over the next keys, in
 * order, so answers and counts are the unsplit batch's. A window the environment sets
 * (SIMDBLOOM_PREFETCH_AHEAD, _DRAM) is never fitted; SIMDBLOOM_PREFETCH_FIT=0 keeps every
 * default. Batches spread over threads, and batches while another thread fits the same class,
 * run as they are.
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "driver.h"

/* Keys a segment runs: long against the deepest window (its first keys are requested before
 * any is probed), short enough that a round (7 segments with the untimed first) fits in the
 * batches that need the window most: a dedup piece of 1 MiB holds about 14,000 URL lines. */
#define SEGMENT 1536
#define ROUNDS 8
#define MARGIN 0.03 /* a fitted window beats the default by at least this (3%) */

/* The windows a class tries: none (0) for a filter the caches may hold after all, up to 256 keys
 * ahead; from SBK_PREFETCH_DRAM_BYTES, where no request ahead is never right, 512 instead of none
 * (CPUs with many miss buffers). */
static const size_t candidate_sets[2][6] = {{0, 16, 32, 64, 128, 256}, {16, 32, 64, 128, 256, 512}};
#define NCANDIDATES (sizeof candidate_sets[0] / sizeof candidate_sets[0][0])

static const size_t *candidates_of(unsigned cls)
{
    return candidate_sets[sbk_prefetch_class_dram(cls)];
}

typedef struct fit_state {
    int busy;    /* a thread is fitting this class */
    int settled; /* the class's window is final */
    unsigned rounds;
    double score[ROUNDS][NCANDIDATES];
} fit_state;

static fit_state classes[SBK_PREFETCH_CLASSES];

static int fitting_off(void)
{
    static int off = -1; /* (read once; a race only reads it twice) */
    int v = __atomic_load_n(&off, __ATOMIC_RELAXED);
    if (v < 0) {
        const char *text = getenv("SIMDBLOOM_PREFETCH_FIT");
        v = text && strcmp(text, "0") == 0;
        __atomic_store_n(&off, v, __ATOMIC_RELAXED);
    }
    return v;
}

int sbloom_prefetch_fitting(uint64_t bytes, size_t n)
{
    unsigned c = sbk_prefetch_class(bytes);
    return bytes >= SBK_PREFETCH_MIN_BYTES && n >= (NCANDIDATES + 1) * SEGMENT &&
           !__atomic_load_n(&classes[c].settled, __ATOMIC_ACQUIRE) &&
           !(__atomic_load_n(&sbk_prefetch_fixed, __ATOMIC_ACQUIRE) & (1u << c)) && !fitting_off();
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static long page_faults(void)
{
    struct rusage u;
#ifdef RUSAGE_THREAD
    if (getrusage(RUSAGE_THREAD, &u) != 0)
#else
    if (getrusage(RUSAGE_SELF, &u) != 0)
#endif
        return -1;
    return u.ru_minflt + u.ru_majflt;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The window a class keeps once its rounds are in. */
static size_t chosen(const fit_state *s, unsigned cls)
{
    const size_t *candidates = candidates_of(cls);
    double median[NCANDIDATES];
    for (size_t k = 0; k < NCANDIDATES; k++) {
        double v[ROUNDS];
        for (unsigned r = 0; r < ROUNDS; r++)
            v[r] = s->score[r][k];
        qsort(v, ROUNDS, sizeof v[0], by_value);
        median[k] = (v[ROUNDS / 2 - 1] + v[ROUNDS / 2]) / 2;
    }
    size_t fallback = sbk_prefetch_default(cls), best = 0;
    double beat = 1; /* a default built in that is no candidate: the rounds' mean */
    for (size_t k = 0; k < NCANDIDATES; k++) {
        if (median[k] < median[best])
            best = k;
        if (candidates[k] == fallback)
            beat = median[k];
    }
    return median[best] < beat * (1 - MARGIN) ? candidates[best] : fallback;
}

/* The chunk function over keys [at, at + len) of the batch. */
static uint64_t run_piece(const sbloom_runner *r, sbloom_batch_op op, const uint64_t *hashes,
                          size_t at, size_t len, uint8_t *results)
{
    return r->run(r->ctx, op, hashes + at, len, results ? results + at : NULL);
}

uint64_t sbloom_prefetch_fit_run(const sbloom_runner *r, sbloom_batch_op op, const uint64_t *hashes,
                                 size_t n, uint8_t *results)
{
    unsigned cls = sbk_prefetch_class(r->core->bytes);
    fit_state *s = &classes[cls];
    size_t *window = &sbk_prefetch_window[cls];
    if (__atomic_exchange_n(&s->busy, 1, __ATOMIC_ACQUIRE))
        return r->run(r->ctx, op, hashes, n, results); /* another thread fits this class */
    const size_t *candidates = candidates_of(cls);
    size_t before = __atomic_load_n(window, __ATOMIC_RELAXED);
    /* the first segment untimed, at the window in force: the loop's first misses, the code */
    uint64_t count = run_piece(r, op, hashes, 0, SEGMENT, results);
    size_t at = SEGMENT;
    while (!s->settled && n - at >= NCANDIDATES * SEGMENT) {
        double took[NCANDIDATES];
        long faults = page_faults();
        for (size_t i = 0; i < NCANDIDATES; i++) {
            size_t k = (i + s->rounds) % NCANDIDATES;
            __atomic_store_n(window, candidates[k], __ATOMIC_RELAXED);
            double t0 = now_ns();
            count += run_piece(r, op, hashes, at, SEGMENT, results);
            took[k] = now_ns() - t0;
            at += SEGMENT;
        }
        if (faults < 0 || page_faults() != faults)
            continue; /* the round is not counted */
        double mean = 0;
        for (size_t k = 0; k < NCANDIDATES; k++)
            mean += took[k] / NCANDIDATES;
        for (size_t k = 0; k < NCANDIDATES; k++)
            s->score[s->rounds][k] = mean > 0 ? took[k] / mean : 1;
        if (++s->rounds == ROUNDS) {
            before = chosen(s, cls);
            __atomic_store_n(&s->settled, 1, __ATOMIC_RELEASE);
        }
    }
    __atomic_store_n(window, before, __ATOMIC_RELAXED);
    __atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
    return count + run_piece(r, op, hashes, at, n - at, results);
}

size_t sbloom_prefetch_window_for(uint64_t bytes, int *fitted)
{
    unsigned cls = sbk_prefetch_class(bytes);
    if (fitted)
        *fitted = __atomic_load_n(&classes[cls].settled, __ATOMIC_ACQUIRE);
    return sbk_prefetch_ahead(bytes);
}
