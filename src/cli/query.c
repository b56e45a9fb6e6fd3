/* simdbloom query: which input lines a filter file holds (or does not). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char query_help[] =
    "usage: simdbloom query [--absent] [--forget-after D] [--normalize url] [--threads N] "
    "[--quiet]\n"
    "                       FILTER [FILE...]\n"
    "\n"
    "Prints each input line the filter may hold (with --absent: each line it certainly does not\n"
    "hold), in input order. The filter file is read into memory, not mapped (a file replaced\n"
    "while the query runs cannot crash it), and its checksums verified. Keys listed in\n"
    "FILTER.allow (see 'simdbloom allow') count as absent. A windowed filter answers as of now:\n"
    "what fell out of its window since it was saved is not held.\n"
    "  --absent          print the lines the filter does not hold\n"
    "  --forget-after D  refuse a filter that does not forget after D (a check: the file's\n"
    "                    window is the one it was built with)\n"
    "Example: simdbloom query --absent seen.sbloom discovered.txt > to-fetch.txt\n";

typedef struct query_run {
    const sbloom_t *filter;
    const sbloom_allowlist_t *allow; /* FILTER.allow when it exists */
    int absent;
    uint64_t printed;
    line_writer out;
    uint8_t present[65536];
} query_run;

static int query_batch(void *ctx, const line_batch *b)
{
    query_run *r = ctx;
    size_t n = b->n;
    if (sbloom_contains_hashes(r->filter, b->hashes, n, r->present) < 0)
        return EXIT_RUNTIME;
    if (r->allow) /* known false positives, consulted for the filter's positives only */
        for (size_t i = 0; i < n; i++)
            if (r->present[i] &&
                sbloom_allowlist_contains(r->allow, b->keys[i], b->key_lens[i]) == 1)
                r->present[i] = 0;
    int64_t printed = line_writer_put_chosen(&r->out, b, r->present, !r->absent);
    if (printed < 0)
        return EXIT_RUNTIME;
    r->printed += (uint64_t)printed;
    if (b->in_place && line_writer_flush(&r->out) < 0) /* out before the mapped input goes */
        return EXIT_RUNTIME;
    return EXIT_OK;
}

int cmd_query(int argc, char **argv)
{
    cli_options o;
    int rc = parse_options("query", query_help, argc, argv,
                           OPT_ABSENT | OPT_QUIET | OPT_NORMALIZE | OPT_THREADS | OPT_FORGET, &o);
    if (rc >= 0)
        return rc;
    if (o.nargs < 1)
        return usage_error("query", "FILTER is missing");
    sbloom_t *filter;
    rc = load_for_reading(o.args[0], &filter);
    if (rc != SBLOOM_OK)
        return filter_error("load", o.args[0], rc);
    if ((rc = check_forget_after(&o, o.args[0], filter)) != EXIT_OK ||
        (rc = window_to_now(o.args[0], filter, 0)) != EXIT_OK) {
        sbloom_free(filter);
        return rc;
    }
    static query_run run;
    run.filter = filter;
    run.absent = o.absent;
    if (line_writer_open(&run.out, STDOUT_FILENO, 1 << 20) < 0) {
        sbloom_free(filter);
        fprintf(stderr, "simdbloom: out of memory\n");
        return EXIT_RUNTIME;
    }
    sbloom_allowlist_t *allow = NULL;
    char *allow_path = allowlist_path(o.args[0]);
    if (allow_path && access(allow_path, F_OK) == 0) {
        if ((rc = sbloom_allowlist_load(&allow, allow_path)) != SBLOOM_OK) {
            filter_error("load", allow_path, rc);
            free(allow_path);
            line_writer_close(&run.out);
            sbloom_free(filter);
            return EXIT_RUNTIME;
        }
        run.allow = allow;
    }
    free(allow_path);
    stream_state s = {.command = "query",
                      .quiet = o.quiet,
                      .normalize = o.normalize,
                      .threads = o.threads,
                      .filter = filter,
                      .idle = line_writer_flush_when_idle, /* answers go out as input stalls */
                      .idle_ctx = &run.out};
    stream_stop_on_signals();
    rc = stream_inputs(&s, o.nargs - 1, o.args + 1, query_batch, &run);
    int stopped = rc == EXIT_STOPPED;
    if (stopped)
        rc = EXIT_OK;
    if (line_writer_flush(&run.out) < 0)
        rc = EXIT_RUNTIME;
    if (o.summary && rc == EXIT_OK)
        fprintf(stderr, "simdbloom query: %llu lines, %llu %s\n", (unsigned long long)s.lines,
                (unsigned long long)run.printed, o.absent ? "absent" : "present");
    sbloom_allowlist_free(allow);
    line_writer_close(&run.out);
    sbloom_free(filter);
    return stopped && rc == EXIT_OK ? stop_exit_status() : rc;
}
