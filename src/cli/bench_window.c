/*
 * simdbloom bench's windowed rows: a windowed filter of `periods` periods (a ring of periods + 1
 * generations) for n keys a window at rate p, against a plain filter planned for the same n keys
 * at p, on the instruction set set now, alternated, best of reps:
 *   - test-and-add of n fresh keys: the windowed filter in its steady state (one window of other
 *     keys already behind it), the clock moved one period every n / periods keys (its rotations
 *     are in the time); the plain filter from empty;
 *   - lookups of n absent keys in the filters those adds left.
 * With any_family, both are made with SBLOOM_OPTS_ANY_FAMILY (the fingerprint window against the
 * plain fingerprint filter where that family is smaller). Keys are made a batch at a time,
 * outside the timed calls. bench/window.c is the fuller benchmark (any period count and rate,
 * the concurrent mode, repeats).
 */
#include <math.h>
#include <stdlib.h>

#include "bench.h"
#include "urlgen.h"

#define BATCH 4096

/* Seconds spent in one pass over n keys drawn from *state: test-and-adds (the clock moved to
 * (`clock` + q) x `unit` before the q-th of `periods` equal shares; periods 0: never moved), or
 * lookups. */
static double pass(sbloom_t *f, uint64_t n, uint64_t *state, uint32_t periods, uint64_t clock,
                   uint64_t unit, int lookups, uint64_t *keys, uint8_t *results)
{
    double spent = 0;
    uint32_t shares = periods ? periods : 1;
    for (uint32_t q = 0; q < shares; q++) {
        if (periods) { /* a rotation, timed: the pause an add meets once a period */
            double t0 = now_seconds();
            sbloom_advance(f, (clock + q) * unit);
            spent += now_seconds() - t0;
        }
        uint64_t from = n * q / shares, to = n * (q + 1) / shares;
        for (uint64_t at = from; at < to; at += BATCH) {
            size_t len = to - at < BATCH ? (size_t)(to - at) : BATCH;
            for (size_t i = 0; i < len; i++)
                keys[i] = url_splitmix(state);
            double t0 = now_seconds();
            if (lookups)
                sbloom_contains_hashes(f, keys, len, results);
            else
                sbloom_add_if_new_hashes(f, keys, len, results);
            spent += now_seconds() - t0;
        }
    }
    return spent;
}

int bench_window(uint64_t n, double p, uint32_t periods, int any_family, int reps,
                 window_speeds *out)
{
    sbloom_t *plain = NULL, *window = NULL;
    uint64_t *keys = malloc(BATCH * sizeof *keys);
    uint8_t *results = malloc(BATCH);
    const uint64_t unit = any_family ? 2 : 1; /* a period of 2: finer ones may be kept */
    sbloom_opts plain_opts = sbloom_opts_init(), window_opts = sbloom_opts_init();
    plain_opts.expected = window_opts.expected = n;
    plain_opts.fpp = window_opts.fpp = p;
    plain_opts.flags = window_opts.flags = any_family ? SBLOOM_OPTS_ANY_FAMILY : 0;
    window_opts.periods = periods;
    window_opts.period = unit;
    int rc = keys && results && sbloom_create_opts(&plain, &plain_opts) == SBLOOM_OK &&
                     sbloom_create_opts(&window, &window_opts) == SBLOOM_OK
                 ? 0
                 : -1;
    *out = (window_speeds){{INFINITY, INFINITY}, {INFINITY, INFINITY}, NAN};
    uint64_t clock = 0, fresh = 1;
    for (int rep = 0; rep < reps && rc == 0; rep++) {
        uint64_t behind = fresh++, state = fresh++, absent = 0xAB5E47;
        pass(window, n, &behind, periods, clock, unit, 0, keys, results); /* the window before */
        clock += periods;
        uint64_t same = state; /* the plain filter takes the same keys */
        double t = pass(window, n, &state, periods, clock, unit, 0, keys, results);
        clock += periods;
        out->add_if_new[1] = fmin(out->add_if_new[1], t * 1e9 / (double)n);
        t = pass(window, n, &absent, 0, 0, unit, 1, keys, results);
        out->contains[1] = fmin(out->contains[1], t * 1e9 / (double)n);

        sbloom_clear(plain);
        absent = 0xAB5E47;
        t = pass(plain, n, &same, 0, 0, unit, 0, keys, results);
        out->add_if_new[0] = fmin(out->add_if_new[0], t * 1e9 / (double)n);
        t = pass(plain, n, &absent, 0, 0, unit, 1, keys, results);
        out->contains[0] = fmin(out->contains[0], t * 1e9 / (double)n);
    }
    if (rc == 0)
        out->memory_ratio = (double)sbloom_bytes(window) / (double)sbloom_bytes(plain);
    sbloom_free(plain);
    sbloom_free(window);
    free(keys);
    free(results);
    return rc;
}
