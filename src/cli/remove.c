/* simdbloom remove: take lines out of a counting or fingerprint filter file (saved back
 * crash-safely). */
#include <stdio.h>

#include "cli.h"

static const char remove_help[] =
    "usage: simdbloom remove [--normalize url] [--threads N] [--no-wait] [--quiet] FILTER\n"
    "                        [FILE...]\n"
    "\n"
    "Removes every line of the input from a counting filter (made with 'simdbloom build\n"
    "--counting') or a fingerprint filter (a layout fp512-r*: what build and dedup pick at rates\n"
    "of 1e-3 and below) and saves it back crash-safely. A line the filter certainly does not\n"
    "hold is refused and changes nothing; the summary counts them. Remove only lines that were\n"
    "added: removing a line that was never added but matches by a false positive takes another\n"
    "line's count or fingerprint, which may then answer absent. In a counting filter a line added\n"
    "twice needs two removes; a fingerprint filter holds a line once.\n"
    "One writer at a time: the command holds a lock on FILTER.lock (created beside the filter)\n"
    "from load to save; another writer waits for it (saying so on a terminal), or with\n"
    "--no-wait fails at once (exit 1) naming the holder. Readers (query, info) never wait.\n"
    "Example: simdbloom remove frontier.sbloom fetched-today.txt\n";

typedef struct remove_run {
    sbloom_t *filter;
    uint64_t removed;
} remove_run;

static int remove_batch(void *ctx, const line_batch *b)
{
    remove_run *r = ctx;
    int64_t rc = sbloom_remove_hashes(r->filter, b->hashes, b->n, NULL);
    if (rc < 0) {
        fprintf(stderr, "simdbloom: %s\n", sbloom_strerror((int)rc));
        return EXIT_RUNTIME;
    }
    r->removed += (uint64_t)rc;
    return EXIT_OK;
}

/* The read-modify-write, under the filter's lock. */
static int remove_from(const cli_options *o)
{
    int rc;
    const char *path = o->args[0];
    remove_run run = {NULL, 0};
    rc = sbloom_load(&run.filter, path);
    if (rc != SBLOOM_OK)
        return filter_error("load", path, rc);
    sbloom_layout layout = sbloom_get_layout(run.filter);
    if (layout != SBLOOM_LAYOUT_COUNTING512 && !all_stages_fingerprint(run.filter)) {
        if (layout == SBLOOM_LAYOUT_WINDOWED)
            fprintf(stderr,
                    "simdbloom: %s is a windowed filter: it forgets lines by itself once they "
                    "leave its window, and cannot remove one before; remove needs a counting "
                    "or fingerprint filter ('simdbloom build --counting', or --layout fp512-r*)\n",
                    path);
        else
            fprintf(stderr,
                    "simdbloom: %s is a %s, which cannot forget keys; remove needs a "
                    "counting or fingerprint filter ('simdbloom build --counting', or a plan at "
                    "1e-3 or below, which picks a fingerprint layout)\n",
                    path,
                    layout == SBLOOM_LAYOUT_SCALABLE ? "scalable filter with Bloom stages"
                                                     : "plain Bloom filter");
        sbloom_free(run.filter);
        return EXIT_RUNTIME;
    }
    if (!o->quiet)
        stale_temporaries_warn(path);
    stream_state s = {.command = "remove",
                      .quiet = o->quiet,
                      .normalize = o->normalize,
                      .threads = o->threads,
                      .filter = run.filter};
    rc = stream_inputs(&s, o->nargs - 1, o->args + 1, remove_batch, &run);
    if (rc == EXIT_OK) { /* after a read error the file is left as it was */
        int saved = sbloom_save(run.filter, path);
        if (saved != SBLOOM_OK)
            rc = filter_error("save", path, saved);
    }
    if (rc == EXIT_OK && o->summary)
        fprintf(stderr,
                "simdbloom remove: %llu lines, %llu removed, %llu not in the filter (left as "
                "they were), %llu held in %s\n",
                (unsigned long long)s.lines, (unsigned long long)run.removed,
                (unsigned long long)(s.lines - run.removed),
                (unsigned long long)sbloom_items(run.filter), path);
    sbloom_free(run.filter);
    return rc;
}

int cmd_remove(int argc, char **argv)
{
    cli_options o;
    int rc = parse_options("remove", remove_help, argc, argv,
                           OPT_QUIET | OPT_NORMALIZE | OPT_THREADS | OPT_NO_WAIT, &o);
    if (rc >= 0)
        return rc;
    if (o.nargs < 1)
        return usage_error("remove", "FILTER is missing");
    int lock;
    if ((rc = filter_lock(o.args[0], "remove", LOCK_FILTER_EXCLUSIVE, o.no_wait, o.quiet, &lock)) !=
        EXIT_OK)
        return rc;
    rc = remove_from(&o);
    filter_unlock(lock);
    return rc;
}
