/* simdbloom merge and simdbloom fold: filters combined, and shrunk to their real size. */
#include <stdio.h>

#include "cli.h"

static const char merge_help[] =
    "usage: simdbloom merge [--no-wait] [--quiet] -o OUT FILTER FILTER...\n"
    "\n"
    "Writes the union of the filters (every key of any of them) to OUT, crash-safely. The filters\n"
    "must share layout and size (as filters built with the same --expect, --fpp and --layout do).\n"
    "One writer at a time: the command holds the lock on OUT.lock that add holds, from before it\n"
    "reads its inputs to the save; it waits for another writer (dedup --state or --shared, add,\n"
    "...), or with --no-wait fails at once (exit 1) naming the holder.\n"
    "Example: simdbloom merge -o all.sbloom worker-*.sbloom\n";

static const char fold_help[] =
    "usage: simdbloom fold --fpp P [--no-wait] [--quiet] -o OUT FILTER\n"
    "\n"
    "Shrinks the filter as far as its false-positive rate, at the items it holds, stays at most\n"
    "P: a filter planned for more items than arrived shrinks to what they need, and every key\n"
    "still answers present. Folding by a factor f that divides the block count ORs each run of f\n"
    "blocks into one (f = 2: blocks 2i and 2i+1 into block i); it is exact for every layout, "
    "since\n"
    "the block index is a multiply-high. The largest such f that keeps the rate is used.\n"
    "One writer at a time: the command holds the lock on OUT.lock that add holds, from before it\n"
    "reads its inputs to the save; it waits for another writer (dedup --state or --shared, add,\n"
    "...), or with --no-wait fails at once (exit 1) naming the holder.\n"
    "Example: simdbloom fold --fpp 1e-4 -o small.sbloom big.sbloom\n";

static int merge_locked(const cli_options *o);
static int fold_locked(const cli_options *o);

/* Runs the command with OUT's lock held, the lock add takes: taken before the inputs are read,
 * since OUT may be one of them. */
static int with_output_locked(const cli_options *o, const char *command,
                              int (*run)(const cli_options *))
{
    int lock;
    int rc = filter_lock(o->output, command, LOCK_FILTER_EXCLUSIVE, o->no_wait, o->quiet, &lock);
    if (rc != EXIT_OK)
        return rc;
    rc = run(o);
    filter_unlock(lock);
    return rc;
}

int cmd_merge(int argc, char **argv)
{
    cli_options o;
    int rc =
        parse_options("merge", merge_help, argc, argv, OPT_OUTPUT | OPT_QUIET | OPT_NO_WAIT, &o);
    if (rc >= 0)
        return rc;
    if (!o.output)
        return usage_error("merge", "-o OUT is missing");
    if (o.nargs < 2)
        return usage_error("merge", "merge takes two or more FILTERs (to copy one, use cp)");
    return with_output_locked(&o, "merge", merge_locked);
}

static int merge_locked(const cli_options *o)
{
    int rc;
    sbloom_t *all;
    if ((rc = sbloom_load(&all, o->args[0])) != SBLOOM_OK)
        return filter_error("load", o->args[0], rc);
    /* windowed files saved in different periods: each brought to this clock, as add does */
    if ((rc = require_bit_layout("merge", o->args[0], all)) != SBLOOM_OK ||
        (rc = window_to_now(o->args[0], all, 1)) != EXIT_OK) {
        sbloom_free(all);
        return rc;
    }
    for (int i = 1; i < o->nargs; i++) {
        sbloom_t *next;
        if ((rc = sbloom_load(&next, o->args[i])) != SBLOOM_OK) {
            sbloom_free(all);
            return filter_error("load", o->args[i], rc);
        }
        if ((rc = require_bit_layout("merge", o->args[i], next)) != SBLOOM_OK ||
            (rc = window_to_now(o->args[i], next, 1)) != EXIT_OK) {
            sbloom_free(next);
            sbloom_free(all);
            return rc;
        }
        rc = sbloom_union(all, next);
        sbloom_free(next);
        if (rc != SBLOOM_OK) {
            sbloom_free(all);
            return filter_error("merge", o->args[i], rc);
        }
    }
    if ((rc = sbloom_save(all, o->output)) != SBLOOM_OK) {
        sbloom_free(all);
        return filter_error("save", o->output, rc);
    }
    if (o->summary)
        fprintf(stderr, "simdbloom merge: %d filters into %s, about %llu items\n", o->nargs,
                o->output, (unsigned long long)sbloom_items(all));
    sbloom_free(all);
    return EXIT_OK;
}

int cmd_fold(int argc, char **argv)
{
    cli_options o;
    int rc = parse_options("fold", fold_help, argc, argv,
                           OPT_FPP | OPT_OUTPUT | OPT_QUIET | OPT_NO_WAIT, &o);
    if (rc >= 0)
        return rc;
    if (!o.output || !o.fpp_given || o.nargs != 1)
        return usage_error("fold", "fold takes --fpp P, -o OUT and one FILTER");
    return with_output_locked(&o, "fold", fold_locked);
}

static int fold_locked(const cli_options *o)
{
    int rc;
    sbloom_t *f;
    if ((rc = sbloom_load(&f, o->args[0])) != SBLOOM_OK)
        return filter_error("load", o->args[0], rc);
    if ((rc = require_bit_layout("fold", o->args[0], f)) != SBLOOM_OK) {
        sbloom_free(f);
        return rc;
    }
    sbloom_layout layout = sbloom_get_layout(f);
    uint64_t block = sbloom_layout_block_bytes(layout), blocks = sbloom_bytes(f) / block;
    /* The fewest blocks that divide the count and keep the rate: try each divisor pair. */
    uint64_t factor = 1;
    for (uint64_t d = 1; d * d <= blocks; d++) {
        if (blocks % d != 0)
            continue;
        uint64_t pair[2] = {d, blocks / d}; /* remaining block counts d and blocks / d */
        for (int i = 0; i < 2; i++)
            if (blocks / pair[i] > factor &&
                sbloom_blocked_fpp(layout, pair[i] * block, sbloom_items(f)) <= o->fpp)
                factor = blocks / pair[i];
    }
    sbloom_t *folded;
    if ((rc = sbloom_fold(&folded, f, factor)) != SBLOOM_OK) {
        sbloom_free(f);
        return filter_error("fold", o->args[0], rc);
    }
    rc = sbloom_save(folded, o->output);
    if (rc == SBLOOM_OK && o->summary) {
        char from[32], to[32];
        fprintf(stderr,
                "simdbloom fold: %s -> %s (folded by %llu), false-positive rate at %llu "
                "items now %.3g\n",
                human_bytes(sbloom_bytes(f), from, sizeof from),
                human_bytes(sbloom_bytes(folded), to, sizeof to), (unsigned long long)factor,
                (unsigned long long)sbloom_items(f),
                sbloom_blocked_fpp(layout, sbloom_bytes(folded), sbloom_items(f)));
        if (factor == 1)
            fprintf(stderr,
                    "simdbloom fold: no smaller size keeps the rate at %g: written "
                    "unchanged\n",
                    o->fpp);
    }
    sbloom_free(f);
    sbloom_free(folded);
    return rc == SBLOOM_OK ? EXIT_OK : filter_error("save", o->output, rc);
}
