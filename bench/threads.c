/*
 * simdbloom-bench-threads [MiB] [keys] [threads] [layout]: one filter, several threads (issue 12's
 * figures).
 *
 * On a filter of MiB mebibytes (default 256) of the layout (default block512-k8; a fingerprint
 * layout too) it measures, side by side in one run:
 *   - the single-threaded cost of the concurrent mode: plain vs concurrent add, contains and
 *     test-and-add on one thread;
 *   - the concurrent mode on 1 and T threads (default 2; each thread its own share of the keys,
 *     batches of 4,096 pre-hashed keys): add into an empty filter (every key new), add of keys
 *     already present (the test-first case: nothing written), contains, test-and-add;
 *   - parallel batches (sbloom_set_threads T) against the serial call.
 * Speeds are millions of keys per second, best of REPS runs; ratios are within this run.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "simdbloom.h"

#define BATCH 4096
#define REPS 3

typedef enum { OP_ADD, OP_CONTAINS, OP_TEST_AND_ADD, OP_ADD_PRESENT } op_kind;

typedef struct job {
    sbloom_t *f;
    const uint64_t *keys;
    size_t n;
    op_kind op;
    uint8_t *results;
} job;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *run_job(void *arg)
{
    job *j = arg;
    for (size_t at = 0; at < j->n; at += BATCH) {
        size_t len = j->n - at < BATCH ? j->n - at : BATCH;
        switch (j->op) {
        case OP_ADD:
        case OP_ADD_PRESENT: sbloom_add_hashes(j->f, j->keys + at, len); break;
        case OP_CONTAINS: sbloom_contains_hashes(j->f, j->keys + at, len, j->results); break;
        case OP_TEST_AND_ADD: sbloom_add_if_new_hashes(j->f, j->keys + at, len, j->results); break;
        }
    }
    return NULL;
}

/* Mkeys/s of op over keys on `threads` threads (each a contiguous share), best of REPS; the
 * filter is cleared before each add run. */
static double measure(sbloom_t *f, const uint64_t *keys, size_t n, op_kind op, int threads)
{
    double best = 0.0;
    for (int rep = 0; rep < REPS; rep++) {
        if (op == OP_ADD || op == OP_TEST_AND_ADD)
            sbloom_clear(f);
        job jobs[64];
        pthread_t ids[64];
        uint8_t *results[64];
        for (int t = 0; t < threads; t++) {
            results[t] = malloc(BATCH);
            jobs[t] = (job){f, keys + n * t / threads, n * (t + 1) / threads - n * t / threads, op,
                            results[t]};
        }
        double start = now();
        for (int t = 1; t < threads; t++)
            pthread_create(&ids[t], NULL, run_job, &jobs[t]);
        run_job(&jobs[0]);
        for (int t = 1; t < threads; t++)
            pthread_join(ids[t], NULL);
        double speed = (double)n / (now() - start) / 1e6;
        for (int t = 0; t < threads; t++)
            free(results[t]);
        if (speed > best)
            best = speed;
    }
    return best;
}

/* Mkeys/s of one whole-batch call (parallel batches when the filter has threads set). */
static double measure_batch(sbloom_t *f, const uint64_t *keys, size_t n, op_kind op,
                            uint8_t *results)
{
    double best = 0.0;
    for (int rep = 0; rep < REPS; rep++) {
        if (op != OP_CONTAINS)
            sbloom_clear(f);
        double start = now(); /* (no OP_ADD_PRESENT here) */
        if (op == OP_ADD)
            sbloom_add_hashes(f, keys, n);
        else if (op == OP_CONTAINS)
            sbloom_contains_hashes(f, keys, n, results);
        else
            sbloom_add_if_new_hashes(f, keys, n, results);
        double speed = (double)n / (now() - start) / 1e6;
        if (speed > best)
            best = speed;
    }
    return best;
}

static void usage(FILE *to)
{
    fprintf(to,
            "usage: simdbloom-bench-threads [MiB [KEYS [THREADS [LAYOUT]]]]\n"
            "  one LAYOUT filter (default block512-k8) of MiB mebibytes (default 256), KEYS\n"
            "  pre-hashed keys (default: about 12 bits a key, full at the end; 48 bits a key\n"
            "  for a fingerprint layout, within its plan), THREADS threads (2 to 64,\n"
            "  default 2): plain against concurrent adds, lookups and test-and-adds on one and\n"
            "  THREADS threads, and parallel batches; Mkeys/s, best of %d, ratios in this run.\n"
            "  SIMDBLOOM_NO_RTM=1: the concurrent mode's locked path, where the CPU has\n"
            "  hardware transactions.\n",
            REPS);
}

/* A whole positive number of at most max, or 0. */
static uint64_t number(const char *text, uint64_t max)
{
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    return end != text && *end == '\0' && text[0] != '-' && v <= max ? (uint64_t)v : 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return 0;
    }
    uint64_t mib = argc > 1 ? number(argv[1], 1u << 16) : 256;
    size_t n = argc > 2 ? (size_t)number(argv[2], UINT64_C(1) << 34) : 0;
    int threads = argc > 3 ? (int)number(argv[3], 64) : 2;
    int layout = argc > 4 ? sbloom_layout_from_name(argv[4]) : SBLOOM_LAYOUT_BLOCK512_K8;
    int fingerprint = layout >= SBLOOM_LAYOUT_FP512_R10 && layout <= SBLOOM_LAYOUT_FP512_R29;
    if (argc > 5 || mib == 0 || (argc > 2 && n == 0) || threads < 2 || layout <= 0 ||
        layout == SBLOOM_LAYOUT_SCALABLE || layout == SBLOOM_LAYOUT_WINDOWED ||
        layout == SBLOOM_LAYOUT_COUNTING512) {
        usage(stderr);
        return 2;
    }
    uint64_t bytes = mib << 20;
    if (!n)
        n = (size_t)(bytes * 8 / (fingerprint ? 48 : 12)); /* a full filter at the end */
    sbloom_t *f = NULL;
    if (sbloom_create_bytes(&f, bytes, (sbloom_layout)layout) != SBLOOM_OK) {
        fprintf(stderr, "cannot create a %llu MiB filter\n", (unsigned long long)mib);
        return 1;
    }
    uint64_t *keys = malloc(n * sizeof *keys);
    uint8_t *results = malloc(n);
    if (!keys || !results) {
        fprintf(stderr, "out of memory for %zu keys\n", n);
        return 1;
    }
    uint64_t state = 12345;
    for (size_t i = 0; i < n; i++) {
        uint64_t z = (state += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        keys[i] = z ^ (z >> 31);
    }
    printf("%s, %llu MiB, %zu keys in batches of %d, isa %s, best of %d\n",
           sbloom_layout_name((sbloom_layout)layout), (unsigned long long)mib, n, BATCH,
           sbloom_filter_isa(f), REPS);
    static const char *names[] = {"add (new)", "contains", "test-and-add", "add (present)"};
    char many[32], ratio[32], against[32];
    snprintf(many, sizeof many, "conc %dt", threads);
    snprintf(ratio, sizeof ratio, "%dt/1t", threads);
    snprintf(against, sizeof against, "%dt/plain", threads);
    printf("%-14s %10s %10s %10s %10s %9s %9s\n", "operation", "plain 1t", "conc 1t", many,
           "conc/plain", ratio, against);
    static const op_kind order[] = {OP_ADD, OP_ADD_PRESENT, OP_CONTAINS, OP_TEST_AND_ADD};
    for (size_t o = 0; o < sizeof order / sizeof *order; o++) {
        op_kind op = order[o];
        sbloom_set_concurrent(f, 0);
        if (op == OP_CONTAINS || op == OP_ADD_PRESENT) { /* a filled filter */
            sbloom_clear(f);
            sbloom_add_hashes(f, keys, n);
        }
        double plain = measure(f, keys, n, op, 1);
        sbloom_set_concurrent(f, 1);
        double one = measure(f, keys, n, op, 1);
        double more = measure(f, keys, n, op, threads);
        printf("%-14s %10.1f %10.1f %10.1f %10.2f %9.2f %9.2f\n", names[op], plain, one, more,
               one / plain, more / one, more / plain);
    }
    sbloom_set_concurrent(f, 0);
    printf("\nparallel batches: one call over all %zu keys\n", n);
    char spread_name[32];
    snprintf(spread_name, sizeof spread_name, "threads %d", threads);
    printf("%-14s %10s %10s %9s\n", "operation", "serial", spread_name, "ratio");
    for (int op = 0; op < 3; op++) {
        if (op == OP_CONTAINS) {
            sbloom_clear(f);
            sbloom_add_hashes(f, keys, n);
        }
        sbloom_set_threads(f, 1);
        double serial = measure_batch(f, keys, n, (op_kind)op, results);
        sbloom_set_threads(f, (unsigned)threads);
        double spread = measure_batch(f, keys, n, (op_kind)op, results);
        printf("%-14s %10.1f %10.1f %9.2f\n", names[op], serial, spread, spread / serial);
    }
    free(keys);
    free(results);
    sbloom_free(f);
    return 0;
}
