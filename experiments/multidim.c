/*
 * simdbloom-multidim: seed 001's three experiments on its multi-dimensional Bloom filter (bench/
 * mdbf.h), then the comparison the paper does not make: equal total bits.
 *
 *   simdbloom-multidim [--trials T] [--probes P] [--data DIR]
 *
 * Prints Markdown tables (docs/MULTIDIM.md is made from them by bench/multidim-report) and, with
 * --data, one whitespace-separated file per experiment for gnuplot. Each point: T trials, each
 * with fresh items (n of them inserted) and P items never inserted probed; the rate is
 * positives / (T * P), with a 95% interval from the normal approximation of the binomial.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mdbf.h"
#include "simdbloom.h"

static uint32_t trials = 200, probes = 5000;
static const uint64_t items = 15; /* the paper's N = 150 bits give V1 10 bits per item */

typedef struct rate {
    double p, half; /* estimate and 95% half-width */
    uint64_t total; /* probes behind it */
} rate;

static rate rate_of(uint64_t positives, uint64_t total)
{
    double p = (double)positives / (double)total;
    return (rate){p, 1.96 * sqrt(p * (1 - p) / (double)total), total};
}

/* Item i of trial t: inserted items and probes never collide (bit 63 tells them apart). */
static uint64_t item(uint32_t t, uint64_t i, int probe)
{
    return ((uint64_t)probe << 63) | ((uint64_t)t << 32) | i;
}

/* A filter under test: made fresh for each trial from its configuration. */
typedef struct model {
    void *(*make)(const void *config);
    void (*add)(void *filter, const void *key, size_t len);
    int (*contains)(const void *filter, const void *key, size_t len);
    void (*drop)(void *filter);
} model;

static rate measure(const model *m, const void *config, uint64_t n)
{
    uint64_t positives = 0;
    for (uint32_t t = 0; t < trials; t++) {
        void *f = m->make(config);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t x = item(t, i, 0);
            m->add(f, &x, 8);
        }
        for (uint64_t i = 0; i < probes; i++) {
            uint64_t x = item(t, i, 1);
            positives += (uint64_t)m->contains(f, &x, 8);
        }
        m->drop(f);
    }
    return rate_of(positives, (uint64_t)trials * probes);
}

static void *make_mdbf(const void *config)
{
    return mdbf_new(config);
}
static void add_mdbf(void *f, const void *key, size_t len)
{
    mdbf_add(f, key, len);
}
static int contains_mdbf(const void *f, const void *key, size_t len)
{
    return mdbf_contains(f, key, len);
}
static void drop_mdbf(void *f)
{
    mdbf_free(f);
}
static const model multidimensional = {make_mdbf, add_mdbf, contains_mdbf, drop_mdbf};

typedef struct plain_config {
    uint64_t bits;
    uint32_t k;
} plain_config;
static void *make_plain(const void *config)
{
    const plain_config *c = config;
    return plain_bf_new(c->bits, c->k);
}
static void add_plain(void *f, const void *key, size_t len)
{
    plain_bf_add(f, key, len);
}
static int contains_plain(const void *f, const void *key, size_t len)
{
    return plain_bf_contains(f, key, len);
}
static void drop_plain(void *f)
{
    plain_bf_free(f);
}
static const model standard = {make_plain, add_plain, contains_plain, drop_plain};

static rate measure_mdbf(const mdbf_params *p, uint64_t n)
{
    return measure(&multidimensional, p, n);
}

static rate measure_plain(uint64_t bits, uint32_t k, uint64_t n)
{
    plain_config c = {bits, k};
    return measure(&standard, &c, n);
}

/* No positive at all: the 95% upper bound is about 3 / probes (the rule of three). */
static void print_rate(FILE *out, rate r)
{
    if (r.p == 0)
        fprintf(out, " 0 (< %.2g) |", 3.0 / (double)r.total);
    else
        fprintf(out, " %.4g ± %.2g |", r.p, r.half);
}

static FILE *data_file(const char *dir, const char *name)
{
    if (!dir)
        return NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.dat", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        perror(path);
    return f;
}

/* One experiment: the parameter varies over values[]; set() applies it. */
static void experiment(const char *title, const char *name, const char *axis,
                       const uint32_t *values, size_t count,
                       void (*set)(mdbf_params *, uint64_t *plain_bits, uint32_t *plain_k,
                                   uint32_t value),
                       const char *dir)
{
    FILE *dat = data_file(dir, name);
    printf("### %s\n\n", title);
    printf("| %s | MD bits | MD, any group (the paper) | predicted | MD, every group | predicted "
           "| standard BF (N bits, k) |\n|---|---|---|---|---|---|---|\n",
           axis);
    for (size_t i = 0; i < count; i++) {
        mdbf_params p = {.groups = 4, .bits = 150, .k = 4};
        uint64_t plain_bits = 150;
        uint32_t plain_k = 4;
        set(&p, &plain_bits, &plain_k, values[i]);
        mdbf *probe = mdbf_new(&p);
        uint64_t total = mdbf_total_bits(probe);
        mdbf_free(probe);
        mdbf_params every = p;
        every.every_group = 1;
        rate any = measure_mdbf(&p, items), all = measure_mdbf(&every, items);
        rate plain = measure_plain(plain_bits, plain_k, items);
        printf("| %u | %llu |", values[i], (unsigned long long)total);
        print_rate(stdout, any);
        printf(" %.4g |", mdbf_predicted_fpp(&p, items));
        print_rate(stdout, all);
        printf(" %.4g |", mdbf_predicted_fpp(&every, items));
        print_rate(stdout, plain);
        printf("\n");
        if (dat)
            fprintf(dat, "%u %g %g %g %g %g %g\n", values[i], any.p, any.half, all.p, all.half,
                    plain.p, plain.half);
    }
    printf("\n");
    if (dat)
        fclose(dat);
}

static void set_groups(mdbf_params *p, uint64_t *bits, uint32_t *k, uint32_t v)
{
    (void)bits, (void)k;
    p->groups = v;
}

static void set_bits(mdbf_params *p, uint64_t *bits, uint32_t *k, uint32_t v)
{
    (void)k;
    p->bits = v;
    *bits = v;
}

static void set_k(mdbf_params *p, uint64_t *bits, uint32_t *k, uint32_t v)
{
    (void)bits;
    p->k = v;
    *k = v;
}

/* Equal total bits: each multi-dimensional configuration against a standard filter of the same
 * size with its best k, at the paper's scale. */
static void equal_bits_small(void)
{
    printf("### Equal total bits, the paper's scale (N = 150, k = 4, n = %llu)\n\n",
           (unsigned long long)items);
    printf("| S | total bits | MD, any group | MD, every group | standard BF, same bits | its "
           "best k |\n|---|---|---|---|---|---|\n");
    for (uint32_t s = 1; s <= 8; s *= 2) {
        mdbf_params p = {.groups = s, .bits = 150, .k = 4}, every = p;
        every.every_group = 1;
        mdbf *probe = mdbf_new(&p);
        uint64_t total = mdbf_total_bits(probe);
        mdbf_free(probe);
        uint32_t k = sbloom_classic_best_k((double)total / (double)items);
        printf("| %u | %llu |", s, (unsigned long long)total);
        print_rate(stdout, measure_mdbf(&p, items));
        print_rate(stdout, measure_mdbf(&every, items));
        print_rate(stdout, measure_plain(total, k, items));
        printf(" %u |\n", k);
    }
    printf("\n");
}

/* Equal total bits at a crawler's scale: 100,000 items, and this library's blocked layouts. */
static void equal_bits_large(void)
{
    const uint64_t n = 100000, probe_count = 1000000;
    printf("### Equal total bits, 100,000 items (N = 10 bits per item per group, k = 4)\n\n");
    printf("| S | bits per item | MD, any group | MD, every group | standard BF, best k | "
           "block512-k8 | block512-k16 |\n|---|---|---|---|---|---|---|\n");
    for (uint32_t s = 1; s <= 4; s *= 2) {
        mdbf_params p = {.groups = s, .bits = (uint32_t)(10 * n), .k = 4}, every = p;
        every.every_group = 1;
        mdbf *any = mdbf_new(&p), *all = mdbf_new(&every);
        uint64_t total = mdbf_total_bits(any);
        double per_item = (double)total / (double)n;
        uint32_t k = sbloom_classic_best_k(per_item);
        plain_bf *plain = plain_bf_new(total, k);
        sbloom_t *k8, *k16;
        sbloom_create_bytes(&k8, total / 8, SBLOOM_LAYOUT_BLOCK512_K8);
        sbloom_create_bytes(&k16, total / 8, SBLOOM_LAYOUT_BLOCK512_K16);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t x = item(0, i, 0);
            mdbf_add(any, &x, 8);
            mdbf_add(all, &x, 8);
            plain_bf_add(plain, &x, 8);
            sbloom_add(k8, &x, 8);
            sbloom_add(k16, &x, 8);
        }
        uint64_t hits[5] = {0};
        for (uint64_t i = 0; i < probe_count; i++) {
            uint64_t x = item(0, i, 1);
            hits[0] += (uint64_t)mdbf_contains(any, &x, 8);
            hits[1] += (uint64_t)mdbf_contains(all, &x, 8);
            hits[2] += (uint64_t)plain_bf_contains(plain, &x, 8);
            hits[3] += (uint64_t)sbloom_contains(k8, &x, 8);
            hits[4] += (uint64_t)sbloom_contains(k16, &x, 8);
        }
        printf("| %u | %.1f |", s, per_item);
        for (int c = 0; c < 5; c++)
            print_rate(stdout, rate_of(hits[c], probe_count));
        printf("\n");
        mdbf_free(any);
        mdbf_free(all);
        plain_bf_free(plain);
        sbloom_free(k8);
        sbloom_free(k16);
    }
    printf("\n");
}

int main(int argc, char **argv)
{
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--trials") == 0 && i + 1 < argc)
            trials = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--probes") == 0 && i + 1 < argc)
            probes = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            dir = argv[++i];
        else {
            fprintf(stderr, "usage: simdbloom-multidim [--trials T] [--probes P] [--data DIR]\n");
            return 2;
        }
    }
    if (trials == 0 || probes == 0) {
        fprintf(stderr, "simdbloom-multidim: --trials and --probes must be positive\n");
        return 2;
    }
    printf("Each point: %u trials of n = %llu fresh items and %u absent probes; ± is a 95%% "
           "interval.\n\n",
           trials, (unsigned long long)items, probes);
    static const uint32_t groups[] = {1, 2, 3, 4, 5, 6, 7, 8};
    static const uint32_t sizes[] = {60, 90, 120, 150, 200, 300, 400};
    static const uint32_t ks[] = {1, 2, 3, 4, 5, 6, 7, 8};
    experiment("Experiment 1: rate against S (k = 4, N = 150)", "by_groups", "S", groups, 8,
               set_groups, dir);
    experiment("Experiment 2: rate against N (S = 4, k = 4)", "by_bits", "N", sizes, 7, set_bits,
               dir);
    experiment("Experiment 3: rate against k (S = 4, N = 150)", "by_k", "k", ks, 8, set_k, dir);
    equal_bits_small();
    equal_bits_large();
    return 0;
}
