/*
 * Streaming inputs through a subcommand: every FILE (or standard input) is handed over in batches
 * of lines, with the key of each line (the line without a trailing CR, or its --normalize url
 * form) hashed for the subcommand's filter (prepare.c), while the subcommand's step (fn: the
 * filter, the output) runs in input order on one thread, so output order and "first occurrence
 * wins" are exactly those of one thread. A mapped file goes through the pipeline (pipeline.c:
 * pieces split and hashed on every thread); the rest (pipes, a mapped file's unterminated last
 * line or what it grew by) is read in blocks, each batch hashed on every thread. Progress goes to
 * standard error about once a second when it is a terminal (progress.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdlib.h>

#include "stream.h"

#define BATCH 65536

static uint64_t known_input_bytes(int nfiles, char **files)
{
    uint64_t total = 0;
    for (int i = 0; i < nfiles; i++) {
        struct stat st;
        if (strcmp(files[i], "-") == 0 || stat(files[i], &st) != 0 || !S_ISREG(st.st_mode))
            return 0;
        total += (uint64_t)st.st_size;
    }
    return total;
}

/* stream_one's status for a file that could not be opened or read (after its message). */
#define INPUT_FAILED 4

static int stream_one(const char *path, stream_state *s, line_batch_fn fn, void *ctx)
{
    static const char *lines[BATCH], *keys[BATCH];
    static size_t lens[BATCH], key_lens[BATCH];
    static uint64_t hashes[BATCH];
    line_reader reader;
    if (line_reader_open(&reader, path) < 0) {
        if (errno == ENOMEM) { /* the file opened; its read buffer did not fit */
            char buffer[32], filter[32];
            fprintf(stderr,
                    "simdbloom: not enough memory to read %s: its %s buffer does not fit beside "
                    "the %s filter\n",
                    reader.name, human_bytes(LINE_READER_BUFFER, buffer, sizeof buffer),
                    human_bytes(s->filter ? sbloom_bytes(s->filter) : 0, filter, sizeof filter));
        } else {
            fprintf(stderr, "simdbloom: cannot open %s: %s\n", path, strerror(errno));
        }
        return INPUT_FAILED;
    }
    reader.idle = s->idle;
    reader.idle_ctx = s->idle_ctx;
    uint64_t bytes_before = s->bytes;
    static key_room room;
    long n = 1;
    int rc = EXIT_OK;
    if (reader.map) /* a mapped file: its whole lines on every thread */
        rc = pipeline_run(&reader, s, fn, ctx);
    while (rc == EXIT_OK && (n = line_reader_next(&reader, lines, lens, BATCH)) > 0) {
        const char **batch_keys =
            prepare_lines(s, s->threads, lines, lens, keys, key_lens, hashes, (size_t)n, &room);
        if (!batch_keys) {
            fprintf(stderr, "simdbloom: out of memory\n");
            rc = EXIT_RUNTIME;
            break;
        }
        line_batch batch = {lines, batch_keys, lens, key_lens, hashes, (size_t)n, 0};
        rc = fn(ctx, &batch);
        if (rc != EXIT_OK)
            break;
        s->lines += (uint64_t)n;
        s->bytes = bytes_before + reader.bytes_read;
        if (s->buffer_bytes < reader.cap)
            s->buffer_bytes = reader.cap;
        if (s->progress)
            stream_progress(s, 0);
        if (line_reader_stop_requested()) {
            rc = EXIT_STOPPED;
            break;
        }
    }
    int read_errno = errno;
    line_reader_close(&reader);
    if (n < 0 && rc == EXIT_OK && line_reader_stop_requested())
        return EXIT_STOPPED;
    if (n < 0 && rc == EXIT_OK) {
        fprintf(stderr, "simdbloom: cannot read %s: %s\n", path, strerror(read_errno));
        return INPUT_FAILED;
    }
    return rc;
}

int stream_inputs(stream_state *s, int nfiles, char **files, line_batch_fn fn, void *ctx)
{
    static char *standard_input[] = {"-"};
    if (nfiles == 0) {
        nfiles = 1;
        files = standard_input;
    }
    s->started = s->last_shown = now_seconds();
    s->total_bytes = known_input_bytes(nfiles, files);
    s->progress = !s->quiet && isatty(STDERR_FILENO);
    /* A file that cannot be opened or read is reported and the next one read, as cat does; the
     * status is then 1. Anything else (the output failing, a signal) ends the stream. */
    int rc = EXIT_OK, input_failed = 0;
    for (int i = 0; i < nfiles && rc == EXIT_OK; i++) {
        rc = stream_one(files[i], s, fn, ctx);
        if (rc == INPUT_FAILED) {
            input_failed = 1;
            rc = EXIT_OK;
        }
    }
    if (s->progress)
        stream_progress(s, 1);
    return rc == EXIT_OK && input_failed ? EXIT_RUNTIME : rc;
}
