/*
 * simdbloom-kbench: batch operations on pre-hashed keys, every instruction set side by side in one
 * run, so that ratios are measured under the same machine load.
 *
 *   simdbloom-kbench [--sizes 1M,256M] [--keys N] [--reps R] [--layout L|all] [--isa NAME]
 *
 * For each filter size and layout, one filter per instruction set gets the same keys (a quarter
 * of what the filter is planned for: the kernels are branchless, so fill does not change their
 * speed); then N probe keys, half added and half new in random order, go through batch contains,
 * and N fresh keys through fused test-and-add. The best of R repetitions is reported in ns per key
 * with the ratio to scalar.
 *
 * The counting filter (--layout counting512, or all) gets its own table: contains on the same
 * probes, then N fresh keys added and removed again (so every repetition starts from the same
 * counters), over a quarter of its planned load too (45.7 bits per key at 1%).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "simdbloom.h"

static uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t parse_size(const char *s)
{
    char *end;
    uint64_t v = strtoull(s, &end, 10);
    if (*end == 'K' || *end == 'k')
        v <<= 10;
    else if (*end == 'M' || *end == 'm')
        v <<= 20;
    else if (*end == 'G' || *end == 'g')
        v <<= 30;
    return v;
}

typedef struct result {
    double contains_ns, add_if_new_ns;
} result;

static result measure(const char *isa, sbloom_layout layout, uint64_t bytes, const uint64_t *fill,
                      size_t nfill, const uint64_t *probes, uint64_t *fresh, size_t nprobe,
                      int reps, uint8_t *out, uint64_t *checksum)
{
    result r = {1e30, 1e30};
    sbloom_set_isa(isa);
    sbloom_t *f;
    if (sbloom_create_bytes(&f, bytes, layout) != SBLOOM_OK) {
        fprintf(stderr, "cannot create %llu-byte filter\n", (unsigned long long)bytes);
        exit(1);
    }
    sbloom_add_hashes(f, fill, nfill);
    for (int rep = 0; rep < reps; rep++) {
        double t0 = now();
        int64_t found = sbloom_contains_hashes(f, probes, nprobe, out);
        double t1 = now();
        *checksum += (uint64_t)found;
        if ((t1 - t0) * 1e9 / (double)nprobe < r.contains_ns)
            r.contains_ns = (t1 - t0) * 1e9 / (double)nprobe;
    }
    for (int rep = 0; rep < reps; rep++) {
        uint64_t state = 777 + (uint64_t)rep;
        for (size_t i = 0; i < nprobe; i++)
            fresh[i] = splitmix(&state);
        double t0 = now();
        int64_t added = sbloom_add_if_new_hashes(f, fresh, nprobe, out);
        double t1 = now();
        *checksum += (uint64_t)added;
        if ((t1 - t0) * 1e9 / (double)nprobe < r.add_if_new_ns)
            r.add_if_new_ns = (t1 - t0) * 1e9 / (double)nprobe;
    }
    sbloom_free(f);
    return r;
}

typedef struct counting_result {
    double contains_ns, add_ns, remove_ns;
} counting_result;

static double per_key(double t0, double t1, size_t n)
{
    return (t1 - t0) * 1e9 / (double)n;
}

static counting_result measure_counting(const char *isa, uint64_t bytes, const uint64_t *fill,
                                        size_t nfill, const uint64_t *probes, uint64_t *fresh,
                                        size_t nprobe, int reps, uint8_t *out, uint64_t *checksum)
{
    counting_result r = {1e30, 1e30, 1e30};
    sbloom_set_isa(isa);
    sbloom_t *c;
    if (sbloom_create_bytes(&c, bytes, SBLOOM_LAYOUT_COUNTING512) != SBLOOM_OK) {
        fprintf(stderr, "cannot create %llu-byte counting filter\n", (unsigned long long)bytes);
        exit(1);
    }
    sbloom_add_hashes(c, fill, nfill);
    for (int rep = 0; rep < reps; rep++) {
        double t0 = now();
        *checksum += (uint64_t)sbloom_contains_hashes(c, probes, nprobe, out);
        double t1 = now();
        r.contains_ns = fmin(r.contains_ns, per_key(t0, t1, nprobe));
    }
    for (int rep = 0; rep < reps; rep++) {
        uint64_t state = 777 + (uint64_t)rep;
        for (size_t i = 0; i < nprobe; i++)
            fresh[i] = splitmix(&state);
        double t0 = now();
        *checksum += (uint64_t)sbloom_add_if_new_hashes(c, fresh, nprobe, out);
        double t1 = now();
        *checksum += (uint64_t)sbloom_remove_hashes(c, fresh, nprobe, out);
        double t2 = now();
        r.add_ns = fmin(r.add_ns, per_key(t0, t1, nprobe));
        r.remove_ns = fmin(r.remove_ns, per_key(t1, t2, nprobe));
    }
    sbloom_free(c);
    return r;
}

static void run_counting(const char *sizes, const char *const *isas, size_t nisa,
                         const char *only_isa, uint64_t *probes, uint64_t *fresh, size_t nprobe,
                         int reps, uint8_t *out, uint64_t *checksum)
{
    printf("\n%-13s %9s %-7s %14s %9s %12s %9s %12s %9s\n", "layout", "filter", "isa",
           "contains ns/key", "vs scalar", "add ns/key", "vs scalar", "remove ns/key", "vs scalar");
    char *list = strdup(sizes);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        uint64_t bytes = parse_size(tok);
        size_t nfill = (size_t)(bytes * 8 / 46 / 4);
        uint64_t *fill = malloc((nfill ? nfill : 1) * sizeof *fill);
        uint64_t state = 42;
        for (size_t i = 0; i < nfill; i++)
            fill[i] = splitmix(&state);
        for (size_t i = 0; i < nprobe; i++)
            probes[i] = (i % 2 && nfill) ? fill[splitmix(&state) % nfill] : splitmix(&state);
        counting_result scalar = {0, 0, 0};
        for (size_t s = 0; s < nisa; s++) {
            if (only_isa && s > 0 && strcmp(isas[s], only_isa) != 0)
                continue;
            counting_result r = measure_counting(isas[s], bytes, fill, nfill, probes, fresh, nprobe,
                                                 reps, out, checksum);
            if (s == 0)
                scalar = r;
            printf("%-13s %9s %-7s %14.2f %8.2fx %12.2f %8.2fx %12.2f %8.2fx\n", "counting512", tok,
                   isas[s], r.contains_ns, scalar.contains_ns / r.contains_ns, r.add_ns,
                   scalar.add_ns / r.add_ns, r.remove_ns, scalar.remove_ns / r.remove_ns);
            fflush(stdout);
        }
        free(fill);
    }
    free(list);
}

int main(int argc, char **argv)
{
    const char *sizes = "1M,256M";
    size_t nprobe = 4000000;
    int reps = 3;
    const char *layout_arg = "block512-k8";
    const char *only_isa = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
            sizes = argv[++i];
        else if (strcmp(argv[i], "--keys") == 0 && i + 1 < argc)
            nprobe = (size_t)parse_size(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--isa") == 0 && i + 1 < argc)
            only_isa = argv[++i];
        else if (strcmp(argv[i], "--layout") == 0 && i + 1 < argc)
            layout_arg = argv[++i];
        else {
            fprintf(stderr, "usage: simdbloom-kbench [--sizes 1M,256M] [--keys N] [--reps R] "
                            "[--layout L|all] [--isa NAME]\n");
            return 2;
        }
    }
    const char *isas[8];
    size_t nisa = sbloom_isa_list(isas, 8);
    uint64_t *probes = malloc(nprobe * sizeof *probes);
    uint64_t *fresh = malloc(nprobe * sizeof *fresh);
    uint8_t *out = malloc(nprobe);
    uint64_t checksum = 0;

    if (strcmp(layout_arg, "counting512") != 0)
        printf("%-13s %9s %-7s %14s %9s %16s %9s\n", "layout", "filter", "isa", "contains ns/key",
               "vs scalar", "add_if_new ns/key", "vs scalar");
    char *list = strdup(sizes);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        uint64_t bytes = parse_size(tok);
        for (int l = 1; l <= SBLOOM_LAYOUT_COUNT; l++) {
            if (strcmp(layout_arg, "all") != 0 && sbloom_layout_from_name(layout_arg) != l)
                continue;
            sbloom_layout layout = (sbloom_layout)l;
            size_t nfill = (size_t)(bytes * 8 / 12 / 4);
            uint64_t *fill = malloc(nfill * sizeof *fill);
            uint64_t state = 42;
            for (size_t i = 0; i < nfill; i++)
                fill[i] = splitmix(&state);
            for (size_t i = 0; i < nprobe; i++)
                probes[i] = (i % 2 && nfill) ? fill[splitmix(&state) % nfill] : splitmix(&state);
            result scalar = {0, 0};
            for (size_t s = 0; s < nisa; s++) {
                if (only_isa && s > 0 && strcmp(isas[s], only_isa) != 0)
                    continue; /* scalar always runs: it is the ratio's base */
                result r = measure(isas[s], layout, bytes, fill, nfill, probes, fresh, nprobe, reps,
                                   out, &checksum);
                if (s == 0)
                    scalar = r;
                printf("%-13s %9s %-7s %14.2f %8.2fx %16.2f %8.2fx\n", sbloom_layout_name(layout),
                       tok, isas[s], r.contains_ns, scalar.contains_ns / r.contains_ns,
                       r.add_if_new_ns, scalar.add_if_new_ns / r.add_if_new_ns);
                fflush(stdout);
            }
            free(fill);
        }
    }
    if (strcmp(layout_arg, "all") == 0 || strcmp(layout_arg, "counting512") == 0)
        run_counting(sizes, isas, nisa, only_isa, probes, fresh, nprobe, reps, out, &checksum);
    sbloom_set_isa(NULL);
    fprintf(stderr, "(checksum %llu)\n", (unsigned long long)checksum);
    free(list);
    free(probes);
    free(fresh);
    free(out);
    return 0;
}
