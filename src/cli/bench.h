/* simdbloom bench's rows of many writers (bench_writers.c) and of windows (bench_window.c). */
#ifndef SIMDBLOOM_CLI_BENCH_H
#define SIMDBLOOM_CLI_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "simdbloom.h"
#include "status.h"

/* bench_writers.c: simdbloom bench's many-writers rows. ns a key (wall) of adds of new keys and of
 * test-and-adds: [0] the plain filter on one thread, [1] the concurrent mode on one, [2] on
 * `threads`. */
#define BENCH_MAX_WRITERS 64
typedef struct writer_speeds {
    double add[3], add_if_new[3];
    unsigned threads;
} writer_speeds;
/* n fresh keys a run into one filter of `bytes`, best of reps; 0, or -1 (no memory, or a layout
 * without the concurrent mode). */
int bench_writers(uint64_t bytes, sbloom_layout layout, size_t n, int reps, unsigned threads,
                  writer_speeds *out);
/* bench_window.c: simdbloom bench's windowed rows. ns a key of test-and-adds of fresh keys and
 * of lookups of absent ones: [0] a plain filter planned for the window's n keys at p, [1] the
 * windowed filter of `periods` periods for n keys a window at p (in its steady state); and the
 * windowed filter's bytes over the plain one's. any_family: both of the smallest family
 * (SBLOOM_OPTS_ANY_FAMILY: the fingerprint window where it is smaller), periods of 2 units so
 * that it may keep finer ones. 0, or -1 (no memory). */
typedef struct window_speeds {
    double add_if_new[2], contains[2];
    double memory_ratio;
} window_speeds;
int bench_window(uint64_t n, double p, uint32_t periods, int any_family, int reps,
                 window_speeds *out);

#endif /* SIMDBLOOM_CLI_BENCH_H */
