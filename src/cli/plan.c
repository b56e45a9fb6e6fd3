/*
 * simdbloom plan: what a filter costs. For one (n, p) it prints each layout's size and the
 * classic unblocked filter's, so the price of blocking is visible; --table prints bits per key
 * against rate for every layout (the README's sizing table comes from it); --forget-after the
 * window's two forms (sbloom_plan_opts).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char plan_help[] =
    "usage: simdbloom plan [--expect N] [--fpp P] [--forget-after D] | --table\n"
    "\n"
    "Prints the filter each layout needs for N distinct items at false-positive rate P (exact\n"
    "formulas): the Bloom layouts, the smallest fingerprint layout (fp512-r*: a remainder a key,\n"
    "removes keys, refuses keys past its plan), the one build and dedup pick (the smallest of\n"
    "all), the classic unblocked filter for comparison, and the counting filter (counting512).\n"
    "  --expect N   items (default 10M)     --fpp P   rate (default 1e-6)\n"
    "  --forget-after D\n"
    "               a window instead: N items every D (3 periods of D / 3) at rate P, as\n"
    "               build and dedup --state make it with --forget-after and --expect: the ring\n"
    "               of Bloom generations, the fingerprint window, and the one they pick\n"
    "  --table      bits per key against rate, every layout, as a Markdown table\n";

static const sbloom_layout all_layouts[] = {SBLOOM_LAYOUT_PARQUET, SBLOOM_LAYOUT_BLOCK512_K8,
                                            SBLOOM_LAYOUT_BLOCK512_K16};

/* The smallest fingerprint plan for n at p (the geometry whose rate fits, at the least bytes). */
static int fingerprint_plan(uint64_t n, double p, sbloom_plan *out)
{
    int rc = SBLOOM_E_TOO_LARGE;
    for (int layout = SBLOOM_LAYOUT_FP512_R10; layout <= SBLOOM_LAYOUT_FP512_R29; layout++) {
        sbloom_plan candidate = sbloom_plan_init();
        if (sbloom_plan_for_layout(n, p, (sbloom_layout)layout, &candidate) == SBLOOM_OK &&
            (rc != SBLOOM_OK || candidate.bytes < out->bytes)) {
            *out = candidate;
            rc = SBLOOM_OK;
        }
    }
    return rc;
}

static int print_table(void)
{
    static const double rates[] = {1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9};
    const uint64_t n = 10000000;
    printf("| false-positive rate | classic (best k) |");
    for (size_t l = 0; l < 3; l++)
        printf(" %s |", sbloom_layout_name(all_layouts[l]));
    printf(" fingerprint | auto picks | counting512 | classic counting (4-bit) |\n"
           "|---|---|---|---|---|---|---|---|---|\n");
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
        double classic = sbloom_classic_bits_per_key(rates[r]);
        printf("| %g | %.2f (k=%u) |", rates[r], classic, sbloom_classic_best_k(classic));
        for (size_t l = 0; l < 3; l++) {
            sbloom_plan plan = sbloom_plan_init();
            if (sbloom_plan_for_layout(n, rates[r], all_layouts[l], &plan) == SBLOOM_OK)
                printf(" %.2f |", plan.bits_per_key);
            else
                printf(" - |");
        }
        sbloom_plan best = sbloom_plan_init(), counting = sbloom_plan_init();
        sbloom_plan fp = sbloom_plan_init();
        if (fingerprint_plan(n, rates[r], &fp) == SBLOOM_OK)
            printf(" %.2f (%s) |", fp.bits_per_key, sbloom_layout_name(fp.layout) + 6);
        else
            printf(" - |");
        if (sbloom_plan_any(n, rates[r], &best) == SBLOOM_OK)
            printf(" %s |", sbloom_layout_name(best.layout));
        else
            printf(" - |");
        if (sbloom_plan_for_layout(n, rates[r], SBLOOM_LAYOUT_COUNTING512, &counting) == SBLOOM_OK)
            printf(" %.2f |", counting.bits_per_key);
        else
            printf(" - |");
        printf(" %.2f |\n", 4 * classic);
    }
    return EXIT_OK;
}

/* The window --forget-after makes (filters.c's create_windowed, planned for --expect), in both
 * forms, as sbloom_plan_opts plans them; the fingerprint window is what build and dedup --state
 * take where it is smaller (SBLOOM_OPTS_ANY_FAMILY). */
static int print_window(const cli_options *o)
{
    sbloom_plan plans[2];
    for (int any = 0; any < 2; any++) {
        sbloom_opts opts = sbloom_opts_init();
        opts.expected = o->expect;
        opts.fpp = o->fpp;
        opts.periods = FORGET_PERIODS;
        opts.period = forget_period(o);
        opts.flags = any ? SBLOOM_OPTS_ANY_FAMILY : 0;
        plans[any] = sbloom_plan_init();
        int rc = sbloom_plan_opts(&opts, &plans[any]);
        if (rc != SBLOOM_OK) {
            fprintf(stderr, "simdbloom: a window of %llu items at rate %g: %s\n",
                    (unsigned long long)o->expect, o->fpp, sbloom_strerror(rc));
            return EXIT_USAGE;
        }
    }
    printf("%llu items a window at false-positive rate %g, forgotten after %llu s (%u periods of "
           "%llu s):\n",
           (unsigned long long)o->expect, o->fpp, (unsigned long long)o->forget_after,
           FORGET_PERIODS, (unsigned long long)forget_period(o));
    printf("%-12s %14s %12s  %s\n", "window", "bytes", "bits/key", "lines");
    printf("%-12s %14llu %12.2f  %s (%s)\n", "ring", (unsigned long long)plans[0].bytes,
           plans[0].bits_per_key, sbloom_layout_name(plans[0].layout),
           plans[0].layout == SBLOOM_LAYOUT_COUNTING512
               ? "generation slots: one line a key"
               : "a line a generation: adjacent lines a key");
    int fingerprints = is_fingerprint_layout(plans[1].layout);
    if (fingerprints)
        printf("%-12s %14llu %12.2f  %s (entries with their period: one line a key)\n",
               "fingerprint", (unsigned long long)plans[1].bytes, plans[1].bits_per_key,
               sbloom_layout_name(plans[1].layout));
    else
        printf("%-12s none smaller than the ring for this plan\n", "fingerprint");
    printf("build and dedup --state pick the %s (--layout bloom: the ring; without --expect, a "
           "ring that grows)\n",
           fingerprints ? "fingerprint window" : "ring");
    return EXIT_OK;
}

int cmd_plan(int argc, char **argv)
{
    cli_options o;
    int rc = parse_options("plan", plan_help, argc, argv,
                           OPT_EXPECT | OPT_FPP | OPT_TABLE | OPT_FORGET, &o);
    if (rc >= 0)
        return rc;
    if (o.nargs)
        return usage_error("plan", "unexpected argument '%s'", o.args[0]);
    if (o.table && o.forget_after)
        return usage_error("plan", "--table is for filters that never forget; leave out "
                                   "--forget-after");
    if (o.table)
        return print_table();
    if (o.forget_after)
        return print_window(&o);
    uint64_t n = o.expect;
    double p = o.fpp;
    printf("%llu items at false-positive rate %g:\n", (unsigned long long)n, p);
    printf("%-14s %14s %12s %4s %12s\n", "layout", "bytes", "bits/key", "k", "fpp");
    for (size_t l = 0; l < 3; l++) {
        sbloom_plan plan = sbloom_plan_init();
        int rc = sbloom_plan_for_layout(n, p, all_layouts[l], &plan);
        if (rc != SBLOOM_OK) {
            printf("%-14s %s\n", sbloom_layout_name(all_layouts[l]), sbloom_strerror(rc));
            continue;
        }
        printf("%-14s %14llu %12.2f %4u %12.3g\n", sbloom_layout_name(plan.layout),
               (unsigned long long)plan.bytes, plan.bits_per_key, plan.k, plan.fpp);
    }
    sbloom_plan fp = sbloom_plan_init();
    if (fingerprint_plan(n, p, &fp) == SBLOOM_OK)
        printf("%-14s %14llu %12.2f %4s %12.3g  (fingerprints: removes keys; refuses keys past "
               "its plan)\n",
               sbloom_layout_name(fp.layout), (unsigned long long)fp.bytes, fp.bits_per_key, "-",
               fp.fpp);
    double classic = sbloom_classic_bits_per_key(p);
    uint32_t k = sbloom_classic_best_k(classic);
    printf("%-14s %14.0f %12.2f %4u %12.3g\n", "classic", ceil(classic * (double)n / 8.0), classic,
           k, sbloom_classic_fpp(classic, k));
    sbloom_plan counting = sbloom_plan_init();
    if (sbloom_plan_for_layout(n, p, SBLOOM_LAYOUT_COUNTING512, &counting) == SBLOOM_OK)
        printf("%-14s %14llu %12.2f %4u %12.3g  (counting filter: deletions, 4-bit counters)\n",
               "counting512", (unsigned long long)counting.bytes, counting.bits_per_key, counting.k,
               counting.fpp);
    sbloom_plan best = sbloom_plan_init();
    rc = sbloom_plan_any(n, p, &best);
    if (rc != SBLOOM_OK) {
        fprintf(stderr, "simdbloom: %s\n", sbloom_strerror(rc));
        return EXIT_USAGE;
    }
    printf("auto picks %s\n", sbloom_layout_name(best.layout));
    sbloom_plan bloom = sbloom_plan_init(); /* what --shared, Redis, merge and union take */
    if (sbloom_plan_for(n, p, &bloom) == SBLOOM_OK)
        printf("bloom picks %s  (dedup --shared, Redis, merge, union)\n",
               sbloom_layout_name(bloom.layout));
    return EXIT_OK;
}
