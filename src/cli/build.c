/* simdbloom build and simdbloom add: lines into a filter file, plain or counting (saved
 * crash-safely). */
#include <stdio.h>
#include <string.h>

#include <unistd.h>

#include "cli.h"

static const char build_help[] =
    "usage: simdbloom build [--expect N] [--fpp P] [--layout L | --counting] [--forget-after D]\n"
    "                       [--normalize url] [--threads N] [--no-wait] [--strict] [--quiet]\n"
    "                       -o FILTER [FILE...]\n"
    "\n"
    "Makes a filter planned for N distinct lines at false-positive rate P (default 1e-6) and adds\n"
    "every line of the input (standard input when no FILE); a trailing CR is not part of a key.\n"
    "The layout is the smallest for the plan ('simdbloom plan'): a fingerprint layout at rates of\n"
    "1e-3 and below (removes lines; refuses lines past its plan: the build then fails, naming\n"
    "it), a Bloom one above; --layout L names one, or bloom the smallest Bloom one (for merge\n"
    "and fold); a warning says when the named one needs 4x the memory of the smallest or more.\n"
    "Without --expect (and --layout, --counting) the filter grows as lines come, as dedup's does\n"
    "(a scalable filter: stages of 1M, 2M, 4M, ... lines, fingerprint ones at 1e-3 and below,\n"
    "or Bloom ones with --layout bloom). Saves it crash-safely to FILTER, replacing what was\n"
    "there.\n"
    "One writer at a time: the command holds the lock on FILTER.lock that add holds, from the\n"
    "start to the save; it waits for another writer, or with --no-wait fails at once (exit 1)\n"
    "naming the holder.\n"
    "  --counting   a counting filter, layout counting512 (4-bit counters, about 4.5x the memory\n"
    "               at 1%): lines can later be taken out with 'simdbloom remove'\n"
    "  --forget-after D  a windowed filter that forgets each line D after it was added (90m,\n"
    "               12h, 30d: 3 periods of D / 3 on the wall clock, as dedup's); --expect is then\n"
    "               lines per window (fingerprints with their period where smaller, Bloom\n"
    "               generations with --layout bloom, which merge); without it the window grows\n"
    "               as lines come (from 1M lines a window, doubling, the rate kept)\n"
    "  --strict     exit 3 (the file saved) when more distinct lines came than planned: the\n"
    "               overload warning as a status a script can test\n"
    "Exit status: 0 done, 1 error, 2 usage error, 3 done but overfull (--strict).\n"
    "Example: simdbloom build --expect 2M --fpp 1e-4 -o seen.sbloom urls.txt\n";

/* The first stage of the scalable filter build makes when no --expect is given (dedup's). */
#define BUILD_FIRST_STAGE UINT64_C(1000000)

static const char add_help[] =
    "usage: simdbloom add [--forget-after D] [--normalize url] [--threads N] [--no-wait]\n"
    "                     [--strict] [--quiet] FILTER [FILE...]\n"
    "\n"
    "Adds every line of the input to an existing filter file (plain, counting, scalable or\n"
    "windowed) and saves it back crash-safely (the old file stays whole until the new one is\n"
    "complete). A windowed filter first forgets what fell out of its window since it was saved,\n"
    "then takes the lines as of the time the command started.\n"
    "One writer at a time: the command holds a lock on FILTER.lock (created beside the filter)\n"
    "from load to save; another writer waits for it (saying so on a terminal), or with\n"
    "--no-wait fails at once (exit 1) naming the holder. Readers (query, info) never wait.\n"
    "  --forget-after D  refuse a filter that does not forget after D (a check: the file's\n"
    "             window is the one it was built with)\n"
    "  --strict   exit 3 (the file saved) when the filter now holds more than planned\n"

    "Example: simdbloom add seen.sbloom more-urls.txt\n";

typedef struct add_run {
    sbloom_t *filter;
    uint64_t fresh; /* keys absent before their add */
    const char *command;
} add_run;

static int add_batch(void *ctx, const line_batch *b)
{
    add_run *r = ctx;
    int64_t rc = sbloom_add_hashes(r->filter, b->hashes, b->n);
    if (rc == SBLOOM_E_FULL)
        return report_full(r->filter, r->command, "the file is left as it was");
    if (rc < 0) {
        fprintf(stderr, "simdbloom: %s\n", sbloom_strerror((int)rc));
        return EXIT_RUNTIME;
    }
    r->fresh += (uint64_t)rc;
    return EXIT_OK;
}

/* Streams the inputs into the filter and saves it to path; prints a summary unless quiet. */
static int add_and_save(const char *command, sbloom_t *filter, const char *path,
                        const cli_options *o, int nfiles, char **files)
{
    add_run run = {filter, 0, command};
    int quiet = o->quiet;
    stream_state s = {.command = command,
                      .quiet = quiet,
                      .normalize = o->normalize,
                      .threads = o->threads,
                      .filter = filter};
    if (!quiet)
        stale_temporaries_warn(path);
    int rc = stream_inputs(&s, nfiles, files, add_batch, &run);
    if (rc != EXIT_OK)
        return rc; /* the file is left as it was */
    int saved = sbloom_save(filter, path);
    if (saved != SBLOOM_OK)
        return filter_error("save", path, saved);
    if (o->summary) {
        char size[32];
        uint64_t items = sbloom_items(filter);
        sbloom_layout layout = sbloom_get_layout(filter);
        fprintf(stderr, "simdbloom %s: %llu lines, %llu new keys, %llu in %s (%s, %s)\n", command,
                (unsigned long long)s.lines, (unsigned long long)run.fresh,
                (unsigned long long)items, path, sbloom_layout_name(layout),
                human_bytes(sbloom_bytes(filter), size, sizeof size));
    }
    /* a warning, on a terminal or not; with --strict an outcome (exit 3), said even with -q */
    if ((!quiet || o->strict) && warn_if_overloaded(filter, "keys", NULL, s.lines) && o->strict)
        return EXIT_OVERFULL;
    return EXIT_OK;
}

int cmd_build(int argc, char **argv)
{
    cli_options o;
    int rc =
        parse_options("build", build_help, argc, argv,
                      OPT_EXPECT | OPT_FPP | OPT_LAYOUT | OPT_QUIET | OPT_OUTPUT | OPT_NORMALIZE |
                          OPT_THREADS | OPT_COUNTING | OPT_NO_WAIT | OPT_STRICT | OPT_FORGET,
                      &o);
    if (rc >= 0)
        return rc;
    if (!o.output)
        return usage_error("build", "-o FILTER is missing");
    if (o.counting && layout_given(&o))
        return usage_error("build", "--layout does not apply to --counting (its layout is fixed)");
    if (o.forget_after && (o.counting || o.layout))
        return usage_error("build", "--forget-after makes a windowed filter: it takes no --layout "
                                    "but bloom (a ring of Bloom generations), nor --counting");
    if (o.counting)
        o.layout = SBLOOM_LAYOUT_COUNTING512;
    sbloom_t *filter;
    if (o.forget_after) {
        if ((rc = create_windowed(&o, &filter, 1)) != EXIT_OK)
            return rc;
    } else if (!o.expect_given && (!layout_given(&o) || o.bloom_layout)) {
        /* no count given: a filter that grows, as dedup's */
        if ((rc = create_growing(&o, &filter, BUILD_FIRST_STAGE)) != EXIT_OK)
            return rc;
    } else if ((rc = create_planned(&o, &filter, 1)) != EXIT_OK) {
        return rc;
    }
    int lock;
    if ((rc = filter_lock(o.output, "build", LOCK_FILTER_EXCLUSIVE, o.no_wait, o.quiet, &lock)) !=
        EXIT_OK) {
        sbloom_free(filter);
        return rc;
    }
    int existed = access(o.output, F_OK) == 0;
    rc = add_and_save("build", filter, o.output, &o, o.nargs, o.args);
    if (existed && o.summary && (rc == EXIT_OK || rc == EXIT_OVERFULL))
        fprintf(stderr, "simdbloom build: %s replaced the filter that was there\n", o.output);
    sbloom_free(filter);
    filter_unlock(lock);
    return rc;
}

int cmd_add(int argc, char **argv)
{
    cli_options o;
    int rc = parse_options(
        "add", add_help, argc, argv,
        OPT_QUIET | OPT_NORMALIZE | OPT_THREADS | OPT_NO_WAIT | OPT_STRICT | OPT_FORGET, &o);
    if (rc >= 0)
        return rc;
    if (o.nargs < 1)
        return usage_error("add", "FILTER is missing");
    int lock;
    if ((rc = filter_lock(o.args[0], "add", LOCK_FILTER_EXCLUSIVE, o.no_wait, o.quiet, &lock)) !=
        EXIT_OK)
        return rc;
    sbloom_t *filter;
    rc = load_filter(o.args[0], &filter);
    if (rc != SBLOOM_OK) {
        filter_unlock(lock);
        return filter_error("load", o.args[0], rc);
    }
    rc = check_forget_after(&o, o.args[0], filter);
    if (rc == EXIT_OK)
        rc = window_to_now(o.args[0], filter, 1);
    if (rc == EXIT_OK)
        rc = add_and_save("add", filter, o.args[0], &o, o.nargs - 1, o.args + 1);
    sbloom_free(filter);
    filter_unlock(lock);
    return rc;
}
