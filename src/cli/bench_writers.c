/*
 * simdbloom bench's many-writers rows: adds of new keys and test-and-adds into one filter, the
 * plain filter on one thread against the concurrent mode (sbloom_set_concurrent) on one thread
 * and on `threads`, each thread taking a contiguous share of the keys in batches, wall time from
 * before the threads start to after the last one ends. bench/threads.c is the fuller benchmark
 * (lookups, present keys, parallel batches); this one fits in the command's few seconds.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "bench.h"
#include "urlgen.h"

#define BATCH 4096

typedef struct share {
    sbloom_t *f;
    const uint64_t *keys;
    size_t n;
    int test_and_add;
} share;

static void *add_share(void *arg)
{
    share *s = arg;
    uint8_t results[BATCH];
    for (size_t at = 0; at < s->n; at += BATCH) {
        size_t len = s->n - at < BATCH ? s->n - at : BATCH;
        if (s->test_and_add)
            sbloom_add_if_new_hashes(s->f, s->keys + at, len, results);
        else
            sbloom_add_hashes(s->f, s->keys + at, len);
    }
    return NULL;
}

/* ns a key (wall time over all n keys) of one add run on `threads` threads; NAN on failure. */
static double run_adds(sbloom_t *f, const uint64_t *keys, size_t n, unsigned threads,
                       int test_and_add)
{
    pthread_t ids[BENCH_MAX_WRITERS];
    share shares[BENCH_MAX_WRITERS];
    for (unsigned t = 0; t < threads; t++)
        shares[t] = (share){f, keys + n * t / threads, n * (t + 1) / threads - n * t / threads,
                            test_and_add};
    double start = now_seconds();
    unsigned started = 1;
    for (unsigned t = 1; t < threads; t++, started++)
        if (pthread_create(&ids[t], NULL, add_share, &shares[t]) != 0)
            break;
    add_share(&shares[0]);
    for (unsigned t = 1; t < started; t++)
        pthread_join(ids[t], NULL);
    if (started < threads)
        return NAN;
    return (now_seconds() - start) * 1e9 / (double)n;
}

int bench_writers(uint64_t bytes, sbloom_layout layout, size_t n, int reps, unsigned threads,
                  writer_speeds *out)
{
    if (threads > BENCH_MAX_WRITERS)
        threads = BENCH_MAX_WRITERS;
    sbloom_t *f = NULL;
    uint64_t *keys = malloc(n * sizeof *keys);
    if (!keys || sbloom_create_bytes(&f, bytes, layout) != SBLOOM_OK) {
        free(keys);
        return -1;
    }
    *out = (writer_speeds){.threads = threads};
    double *cells[2][3] = {{&out->add[0], &out->add[1], &out->add[2]},
                           {&out->add_if_new[0], &out->add_if_new[1], &out->add_if_new[2]}};
    for (int op = 0; op < 2; op++)
        for (int form = 0; form < 3; form++)
            *cells[op][form] = INFINITY;
    uint64_t state = 4242;
    int rc = 0;
    for (int rep = 0; rep < reps && rc == 0; rep++)
        for (int op = 0; op < 2 && rc == 0; op++)
            for (int form = 0; form < 3; form++) { /* plain, concurrent 1, concurrent N */
                if (sbloom_set_concurrent(f, form > 0) != SBLOOM_OK) {
                    rc = -1; /* a layout without the mode (counting512) */
                    break;
                }
                for (size_t i = 0; i < n; i++) /* keys new to the filter, at its low fill */
                    keys[i] = url_splitmix(&state);
                double ns = run_adds(f, keys, n, form == 2 ? threads : 1, op);
                *cells[op][form] = fmin(*cells[op][form], ns);
            }
    sbloom_free(f);
    free(keys);
    return rc;
}
