/*
 * simdbloom-bench-window [--keys N[,N...]] [--periods G] [--reps R] [--fpp P] [--concurrent]
 * [--any-family] [--repeat F]:
 * the windowed filter against the plain one, side by side in one run (issue 29's speed and
 * memory figures); with --concurrent both in concurrent mode (sbloom_set_concurrent), one
 * thread: what the exactly-once path costs (SIMDBLOOM_NO_RTM=1 for the locked path); with
 * --any-family both made with SBLOOM_OPTS_ANY_FAMILY (the fingerprint window, its periods of 2
 * units kept as finer ones where that is smaller, against the plain fingerprint filter).
 *
 * For each N (keys per window; default 1M and 100M) it builds a plain filter planned for N keys
 * at P (default 0.01) and a windowed filter of G periods (default 3: a ring of 4 generations) for
 * N keys per window at P, and times, alternating the two, best of R (default 5):
 *   - test-and-add of N fresh keys: the plain filter from empty; the windowed filter in its
 *     steady state (a window already behind it), N / G keys a period with sbloom_advance between
 *     the periods (its rotations are in the time);
 *   - lookups of N absent keys in the filters those adds left;
 *   - a rotation alone (sbloom_advance by one period, which empties the generation it reuses), in
 *     milliseconds: the pause an add meets once a period (its share of the test-and-add above);
 *   - with --repeat F, the windowed filter's test-and-add again, in its steady state, of N keys
 *     of which a share F repeat one of the stream's last N / G keys (still in the window: a
 *     crawl's stream is mostly repeats) and the rest are fresh; its ratio to the fresh keys'.
 * It prints ns a key, the windowed / plain ratios, the rotation and the memory ratio, and for
 * fingerprint filters the shares of absent lookups and of keys on a second line
 * (sbloom_second_line_shares: the plain filter full, the window at a period's end). Pre-hashed
 * 64-bit keys, batches of 4,096 (what the CLI's dedup hands the library).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "simdbloom.h"
#include "window_keys.h"

#define BATCH 4096

static int concurrent;      /* --concurrent */
static int any_family;      /* --any-family */
static double repeat_share; /* --repeat */

/* keys[0, n) fresh from `seed`, but each with probability `share` a repeat of one of the n / G
 * keys before it (any of them where fewer come before). */
static void fill_with_repeats(uint64_t *keys, size_t n, uint64_t seed, double share, uint32_t g)
{
    uint64_t state = seed ^ UINT64_C(0x5eed5eed), span = n / g ? n / g : 1;
    const uint64_t threshold = (uint64_t)(share * 18446744073709551615.0);
    fill_keys(keys, n, seed);
    for (size_t i = 1; i < n; i++) {
        if (mix(&state) >= threshold)
            continue;
        uint64_t back = 1 + mix(&state) % (i < span ? i : span);
        keys[i] = keys[i - back];
    }
}

/* Test-and-add of keys[0, n) in batches; for a windowed filter, `periods` equal shares with the
 * clock moved one period before each (starting at period `first`). Returns seconds. */
static double add_keys(sbloom_t *f, const uint64_t *keys, size_t n, uint8_t *results,
                       uint32_t periods, uint64_t first, uint64_t period)
{
    double start = now();
    for (uint32_t q = 0; q < periods; q++) {
        if (periods > 1 || first)
            sbloom_advance(f, (first + q) * period);
        size_t from = n * q / periods, to = n * (q + 1) / periods;
        for (size_t at = from; at < to; at += BATCH) {
            size_t len = to - at < BATCH ? to - at : BATCH;
            sbloom_add_if_new_hashes(f, keys + at, len, results);
        }
    }
    return now() - start;
}

static double look_up(sbloom_t *f, const uint64_t *keys, size_t n, uint8_t *results)
{
    double start = now();
    for (size_t at = 0; at < n; at += BATCH) {
        size_t len = n - at < BATCH ? n - at : BATCH;
        sbloom_contains_hashes(f, keys + at, len, results);
    }
    return now() - start;
}

static void usage(FILE *to)
{
    fprintf(
        to,
        "usage: simdbloom-bench-window [--keys N[,N...]] [--periods G] [--reps R] "
        "[--fpp P] [--concurrent] [--any-family] [--repeat F]\n"
        "  the windowed filter's test-and-add and lookups against a plain filter planned "
        "for\n  the window's keys, alternated in one run (defaults: --keys 1000000,"
        "100000000\n  --periods 3 --reps 5 --fpp 0.01); --concurrent: both filters in "
        "concurrent mode;\n  --any-family: both with SBLOOM_OPTS_ANY_FAMILY (the fingerprint "
        "window);\n  --repeat F: also the window's test-and-add of a stream whose share F repeats "
        "keys\n  of its last N / G ('w.rep', and its ratio to 'w.add');\n"
        "  'rotate ms': one sbloom_advance by a period, alone; 'second line': fingerprint\n"
        "  filters' shares of absent lookups and keys that read a spare line\n");
}

static int run_size(uint64_t n, uint32_t periods, int reps, double p)
{
    uint64_t *fresh = malloc(n * sizeof *fresh), *absent = malloc(n * sizeof *absent);
    uint8_t results[BATCH];
    sbloom_t *plain = NULL, *window = NULL;
    sbloom_opts plain_opts = sbloom_opts_init(), window_opts = sbloom_opts_init();
    plain_opts.expected = window_opts.expected = n;
    plain_opts.fpp = window_opts.fpp = p;
    plain_opts.flags = window_opts.flags = any_family ? SBLOOM_OPTS_ANY_FAMILY : 0;
    window_opts.periods = periods;
    window_opts.period = any_family ? 2 : 1;
    sbloom_window kept = sbloom_window_init();
    if (!fresh || !absent || sbloom_create_opts(&plain, &plain_opts) != SBLOOM_OK ||
        sbloom_create_opts(&window, &window_opts) != SBLOOM_OK ||
        sbloom_get_window(window, &kept) != SBLOOM_OK) {
        fprintf(stderr, "simdbloom-bench-window: out of memory at %llu keys\n",
                (unsigned long long)n);
        return 1;
    }
    if (concurrent && (sbloom_set_concurrent(plain, 1) != SBLOOM_OK ||
                       sbloom_set_concurrent(window, 1) != SBLOOM_OK)) {
        fprintf(stderr, "simdbloom-bench-window: concurrent mode refused\n");
        return 1;
    }
    fill_keys(absent, n, 0xAB5E47 + n);
    double best[2][2] = {{1e30, 1e30}, {1e30, 1e30}}, rotation = 1e30, repeats = 1e30;
    double second[2][2] = {{0, 0}, {0, 0}}; /* [plain, window][absent lookups, spare keys] */
    uint64_t clock = 0;
    for (int rep = 0; rep < reps; rep++) {
        /* the windowed filter's steady state: one window of other keys behind it */
        fill_keys(fresh, n, 1000 * (uint64_t)rep + 1);
        add_keys(window, fresh, n, results, kept.periods, clock, kept.period);
        clock += kept.periods;
        fill_keys(fresh, n, 1000 * (uint64_t)rep + 2);
        double t = add_keys(window, fresh, n, results, kept.periods, clock, kept.period);
        clock += kept.periods;
        best[1][0] = t < best[1][0] ? t : best[1][0];
        sbloom_second_line_shares(window, &second[1][0], &second[1][1]);
        t = look_up(window, absent, n, results);
        best[1][1] = t < best[1][1] ? t : best[1][1];
        for (uint32_t q = 0; q < kept.periods; q++, clock++) {
            t = now();
            sbloom_advance(window, clock * kept.period);
            t = now() - t;
            rotation = t < rotation ? t : rotation;
        }
        if (repeat_share > 0) { /* the steady state again, half (or F) of the keys repeats */
            fill_with_repeats(fresh, n, 1000 * (uint64_t)rep + 3, repeat_share, kept.periods);
            t = add_keys(window, fresh, n, results, kept.periods, clock, kept.period);
            clock += kept.periods;
            repeats = t < repeats ? t : repeats;
            fill_keys(fresh, n, 1000 * (uint64_t)rep + 2); /* the plain filter's: fresh */
        }

        sbloom_clear(plain);
        t = add_keys(plain, fresh, n, results, 1, 0, 1);
        best[0][0] = t < best[0][0] ? t : best[0][0];
        sbloom_second_line_shares(plain, &second[0][0], &second[0][1]);
        t = look_up(plain, absent, n, results);
        best[0][1] = t < best[0][1] ? t : best[0][1];
    }
    double ns = 1e9 / (double)n;
    printf("%11llu  %-10s %6.2f  %6.2f  %5.2fx  %6.2f  %6.2f  %5.2fx  %8.3f  %5.2fx\n",
           (unsigned long long)n, sbloom_isa(), best[0][0] * ns, best[1][0] * ns,
           best[1][0] / best[0][0], best[0][1] * ns, best[1][1] * ns, best[1][1] / best[0][1],
           rotation * 1e3, (double)sbloom_bytes(window) / (double)sbloom_bytes(plain));
    if (repeat_share > 0)
        printf("%11s  w.rep %6.2f ns a key with %.0f%% repeats: %5.2fx w.add\n", "", repeats * ns,
               100 * repeat_share, repeats / best[1][0]);
    if (second[0][1] > 0 || second[1][1] > 0)
        printf("%11s  second line: absent lookups %.1f%%, keys %.1f%% (plain, full); "
               "%.1f%%, %.1f%% (window, a period's end)\n",
               "", 100 * second[0][0], 100 * second[0][1], 100 * second[1][0], 100 * second[1][1]);
    fflush(stdout);
    sbloom_free(plain);
    sbloom_free(window);
    free(fresh);
    free(absent);
    return 0;
}

int main(int argc, char **argv)
{
    const char *sizes = "1000000,100000000";
    uint32_t periods = 3;
    int reps = 5;
    double p = 0.01;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(arg, "--any-family")) {
            any_family = 1;
            continue;
        }
        if (!strcmp(arg, "--concurrent")) {
            concurrent = 1;
            continue;
        }
        if (!value) {
            usage(stderr);
            return 2;
        }
        if (!strcmp(arg, "--keys"))
            sizes = value;
        else if (!strcmp(arg, "--periods"))
            periods = (uint32_t)strtoul(value, NULL, 10);
        else if (!strcmp(arg, "--reps"))
            reps = atoi(value);
        else if (!strcmp(arg, "--fpp"))
            p = strtod(value, NULL);
        else if (!strcmp(arg, "--repeat"))
            repeat_share = strtod(value, NULL);
        else {
            usage(stderr);
            return 2;
        }
        i++;
    }
    if (periods < 1 || periods > 15 || reps < 1 || !(p > 0 && p < 1) ||
        !(repeat_share >= 0 && repeat_share < 1)) {
        usage(stderr);
        return 2;
    }
    printf("windowed (%u periods) against plain%s, test-and-add of fresh keys and lookups of "
           "absent ones, ns a key, best of %d, rate %g\n",
           periods, concurrent ? ", both concurrent" : "", reps, p);
    printf("%11s  %-10s %6s  %6s  %6s  %6s  %6s  %6s  %8s  %6s\n", "keys", "isa", "add", "w.add",
           "ratio", "miss", "w.miss", "ratio", "rotate ms", "memory");
    for (const char *s = sizes; *s;) {
        char *end;
        uint64_t n = strtoull(s, &end, 10);
        if (end == s || n < 1000) {
            usage(stderr);
            return 2;
        }
        if (run_size(n, periods, reps, p) != 0)
            return 1;
        s = *end == ',' ? end + 1 : end;
    }
    return 0;
}
