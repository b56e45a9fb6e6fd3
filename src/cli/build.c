/* simdbloom build and simdbloom add: lines into a filter file (saved crash-safely). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char build_help[] =
    "usage: simdbloom build [--expect N] [--fpp P] [--layout L] [--normalize url] [--threads N]\n"
    "                       [--quiet] -o FILTER [FILE...]\n"
    "\n"
    "Makes a filter planned for N distinct lines at false-positive rate P (defaults 10M, 1e-6)\n"
    "and adds every line of the input (standard input when no FILE); a trailing CR is not part of\n"
    "a key. Saves it crash-safely to FILTER.\n"
    "Example: simdbloom build --expect 2M --fpp 1e-4 -o seen.sbloom urls.txt\n";

static const char add_help[] =
    "usage: simdbloom add [--normalize url] [--threads N] [--quiet] FILTER [FILE...]\n"
    "\n"
    "Adds every line of the input to an existing filter file and saves it back crash-safely\n"
    "(the old file stays whole until the new one is complete).\n"
    "Example: simdbloom add seen.sbloom more-urls.txt\n";

typedef struct add_run {
    sbloom_t *filter;
} add_run;

static int add_batch(void *ctx, const line_batch *b)
{
    add_run *r = ctx;
    int64_t rc = sbloom_add_hashes(r->filter, b->hashes, b->n);
    if (rc < 0) {
        fprintf(stderr, "simdbloom: %s\n", sbloom_strerror((int)rc));
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* Streams the inputs into the filter and saves it to path; prints a summary unless quiet. */
static int add_and_save(const char *command, sbloom_t *filter, const char *path,
                        const cli_options *o, int nfiles, char **files)
{
    add_run run = {filter};
    int quiet = o->quiet;
    stream_state s = {.command = command,
                      .quiet = quiet,
                      .normalize = o->normalize,
                      .threads = o->threads,
                      .hasher = filter};
    uint64_t before = sbloom_items(filter);
    int rc = stream_inputs(&s, nfiles, files, add_batch, &run);
    if (rc != EXIT_OK)
        return rc; /* the file is left as it was */
    int saved = sbloom_save(filter, path);
    if (saved != SBLOOM_OK)
        return filter_error("save", path, saved);
    if (!quiet) {
        char size[32];
        fprintf(stderr, "simdbloom %s: %llu lines, %llu new keys, %llu in %s (%s, %s)\n", command,
                (unsigned long long)s.lines, (unsigned long long)(sbloom_items(filter) - before),
                (unsigned long long)sbloom_items(filter), path,
                sbloom_layout_name(sbloom_get_layout(filter)),
                human_bytes(sbloom_bytes(filter), size, sizeof size));
        if (sbloom_planned_items(filter) && sbloom_items(filter) > sbloom_planned_items(filter))
            fprintf(stderr,
                    "warning: %llu keys exceed the %llu planned; the false-positive rate "
                    "is now about %.3g (planned %.3g)\n",
                    (unsigned long long)sbloom_items(filter),
                    (unsigned long long)sbloom_planned_items(filter),
                    sbloom_blocked_fpp(sbloom_get_layout(filter), sbloom_bytes(filter),
                                       sbloom_items(filter)),
                    sbloom_planned_fpp(filter));
    }
    return EXIT_OK;
}

int cmd_build(int argc, char **argv)
{
    cli_options o;
    int rc = parse_options("build", build_help, argc, argv,
                           OPT_EXPECT | OPT_FPP | OPT_LAYOUT | OPT_QUIET | OPT_OUTPUT |
                               OPT_NORMALIZE | OPT_THREADS,
                           &o);
    if (rc >= 0)
        return rc;
    if (!o.output)
        return usage_error("build", "-o FILTER is missing");
    sbloom_t *filter;
    if ((rc = create_planned(&o, &filter)) != EXIT_OK)
        return rc;
    rc = add_and_save("build", filter, o.output, &o, o.nargs, o.args);
    sbloom_free(filter);
    return rc;
}

int cmd_add(int argc, char **argv)
{
    cli_options o;
    int rc =
        parse_options("add", add_help, argc, argv, OPT_QUIET | OPT_NORMALIZE | OPT_THREADS, &o);
    if (rc >= 0)
        return rc;
    if (o.nargs < 1)
        return usage_error("add", "FILTER is missing");
    sbloom_t *filter;
    rc = sbloom_load(&filter, o.args[0]);
    if (rc != SBLOOM_OK)
        return filter_error("load", o.args[0], rc);
    rc = add_and_save("add", filter, o.args[0], &o, o.nargs - 1, o.args + 1);
    sbloom_free(filter);
    return rc;
}
