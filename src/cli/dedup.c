/*
 * simdbloom dedup: the visited-URL table in one command. Lines go in; each line not seen before
 * comes out, in input order. One fused test-and-add per batch of lines does the work.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define DEFAULT_EXPECT UINT64_C(10000000)
#define DEFAULT_FPP 1e-6
#define BATCH 4096

static const char dedup_help[] =
    "usage: simdbloom dedup [--expect N] [--fpp P] [--layout L] [--quiet] [FILE...]\n"
    "\n"
    "Writes each line of the input not seen before, in input order (standard input when no FILE\n"
    "or FILE is '-'). A line is the key as bytes; a trailing CR is not part of the key (CRLF and\n"
    "LF files dedup alike) but is written out as it came. Empty lines, NUL bytes, invalid UTF-8\n"
    "and lines of any length are keys like any other.\n"
    "\n"
    "  --expect N   distinct lines to plan for (default 10M; suffix k, M, G allowed)\n"
    "  --fpp P      false-positive rate at N: the chance that a new line is taken for a\n"
    "               repeat and dropped (default 1e-6)\n"
    "  --layout L   auto (default: the smallest filter), parquet, block512-k8, block512-k16\n"
    "  --quiet      no summary on standard error\n"
    "\n"
    "A summary goes to standard error: lines in and out, duplicate rate, filter size, speed. If\n"
    "more distinct lines arrive than planned it warns with the false-positive rate now expected.\n"
    "\n"
    "Exit status: 0 done, 1 input/output or memory error, 2 usage error.\n"
    "Example: simdbloom dedup --expect 50M crawl-*.txt > new-urls.txt\n";

typedef struct dedup_totals {
    uint64_t lines_in, lines_out, bytes_in;
} dedup_totals;

/* Progress on a terminal only: a line rewritten about once a second. */
static void show_progress(const dedup_totals *t, double started, double *last_shown)
{
    double now = now_seconds();
    if (now - *last_shown < 1.0)
        return;
    *last_shown = now;
    char bytes[32];
    double elapsed = now - started;
    fprintf(stderr, "\rsimdbloom dedup: %llu lines, %s, %.2f M lines/s, %llu new   ",
            (unsigned long long)t->lines_in, human_bytes(t->bytes_in, bytes, sizeof bytes),
            elapsed > 0 ? (double)t->lines_in / elapsed / 1e6 : 0.0,
            (unsigned long long)t->lines_out);
}

/* Streams one input through the filter; 0 on success, or EXIT_RUNTIME after a message. */
static int dedup_stream(sbloom_t *filter, const char *path, FILE *out, dedup_totals *t,
                        int progress, double started, double *last_shown)
{
    static const char *lines[BATCH];
    static size_t lens[BATCH], key_lens[BATCH];
    static uint8_t is_new[BATCH];
    line_reader reader;
    if (line_reader_open(&reader, path) < 0) {
        fprintf(stderr, "simdbloom: cannot open %s: %s\n", path, strerror(errno));
        return EXIT_RUNTIME;
    }
    long n;
    uint64_t bytes_before = t->bytes_in;
    while ((n = line_reader_next(&reader, lines, lens, BATCH)) > 0) {
        for (long i = 0; i < n; i++)
            key_lens[i] = lens[i] - (lens[i] > 0 && lines[i][lens[i] - 1] == '\r');
        int64_t fresh = sbloom_add_if_new_keys(filter, (const void *const *)lines, key_lens,
                                               (size_t)n, is_new);
        if (fresh < 0) {
            fprintf(stderr, "simdbloom: %s\n", sbloom_strerror((int)fresh));
            line_reader_close(&reader);
            return EXIT_RUNTIME;
        }
        for (long i = 0; i < n; i++) {
            if (is_new[i]) {
                fwrite(lines[i], 1, lens[i], out);
                putc('\n', out);
            }
        }
        t->lines_in += (uint64_t)n;
        t->lines_out += (uint64_t)fresh;
        t->bytes_in = bytes_before + reader.bytes_read;
        if (progress)
            show_progress(t, started, last_shown);
    }
    int read_errno = errno;
    line_reader_close(&reader);
    if (n < 0) {
        fprintf(stderr, "simdbloom: cannot read %s: %s\n", path, strerror(read_errno));
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

static void print_summary(const sbloom_t *filter, const dedup_totals *t, double seconds)
{
    char size[32];
    double dup = t->lines_in ? 100.0 * (double)(t->lines_in - t->lines_out) / (double)t->lines_in
                             : 0.0;
    fprintf(stderr, "simdbloom dedup: %llu lines in, %llu lines out, %.2f%% duplicates\n",
            (unsigned long long)t->lines_in, (unsigned long long)t->lines_out, dup);
    fprintf(stderr,
            "filter: %s, %s, k=%u, planned %llu items at false-positive rate %.3g, isa %s\n",
            sbloom_layout_name(sbloom_get_layout(filter)),
            human_bytes(sbloom_bytes(filter), size, sizeof size), sbloom_k(filter),
            (unsigned long long)sbloom_planned_items(filter), sbloom_planned_fpp(filter),
            sbloom_filter_isa(filter));
    fprintf(stderr, "time: %.3f s, %.2f M lines/s\n", seconds,
            seconds > 0 ? (double)t->lines_in / seconds / 1e6 : 0.0);
    uint64_t items = sbloom_items(filter);
    if (items > sbloom_planned_items(filter)) {
        double now = sbloom_blocked_fpp(sbloom_get_layout(filter), sbloom_bytes(filter), items);
        fprintf(stderr,
                "warning: %llu distinct lines exceed the %llu planned; the false-positive rate "
                "is now about %.3g (planned %.3g): new lines may have been dropped as repeats. "
                "Plan for more with --expect.\n",
                (unsigned long long)items, (unsigned long long)sbloom_planned_items(filter), now,
                sbloom_planned_fpp(filter));
    }
}

int cmd_dedup(int argc, char **argv)
{
    uint64_t expect = DEFAULT_EXPECT;
    double fpp = DEFAULT_FPP;
    sbloom_layout layout = (sbloom_layout)0;
    int quiet = 0;
    int first_file = argc;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fputs(dedup_help, stdout);
            return EXIT_OK;
        } else if (strcmp(arg, "--quiet") == 0 || strcmp(arg, "-q") == 0) {
            quiet = 1;
        } else if (is_option(arg, "--expect")) {
            if (!(value = option_value(argc, argv, &i, "--expect")) ||
                !parse_count("--expect", value, &expect))
                return EXIT_USAGE;
        } else if (is_option(arg, "--fpp")) {
            if (!(value = option_value(argc, argv, &i, "--fpp")) ||
                !parse_rate("--fpp", value, &fpp))
                return EXIT_USAGE;
        } else if (is_option(arg, "--layout")) {
            if (!(value = option_value(argc, argv, &i, "--layout")) ||
                !parse_layout("--layout", value, &layout))
                return EXIT_USAGE;
        } else if (strcmp(arg, "--") == 0) {
            first_file = i + 1;
            break;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return usage_error("dedup", "unknown option '%s'", arg);
        } else {
            first_file = i;
            break;
        }
    }

    sbloom_t *filter = NULL;
    int rc;
    if (layout) {
        rc = sbloom_create_for_layout(&filter, expect, fpp, layout);
    } else {
        rc = sbloom_create(&filter, expect, fpp);
    }
    if (rc != SBLOOM_OK) {
        fprintf(stderr, "simdbloom: cannot create a filter for %llu items at rate %g: %s\n",
                (unsigned long long)expect, fpp, sbloom_strerror(rc));
        return rc == SBLOOM_E_NOMEM || rc == SBLOOM_E_ISA ? EXIT_RUNTIME : EXIT_USAGE;
    }

    static char out_buffer[1 << 20];
    setvbuf(stdout, out_buffer, _IOFBF, sizeof out_buffer);
    int progress = !quiet && isatty(STDERR_FILENO);
    dedup_totals totals = {0, 0, 0};
    double started = now_seconds(), last_shown = started;
    rc = EXIT_OK;
    if (first_file >= argc) {
        rc = dedup_stream(filter, "-", stdout, &totals, progress, started, &last_shown);
    } else {
        for (int i = first_file; i < argc && rc == EXIT_OK; i++)
            rc = dedup_stream(filter, argv[i], stdout, &totals, progress, started, &last_shown);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "simdbloom: cannot write output: %s\n", strerror(errno));
        rc = EXIT_RUNTIME;
    }
    if (progress)
        fputc('\n', stderr);
    if (!quiet)
        print_summary(filter, &totals, now_seconds() - started);
    sbloom_free(filter);
    return rc;
}
