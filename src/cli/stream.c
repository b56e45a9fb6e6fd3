/*
 * Streaming inputs through a subcommand: every FILE (or standard input) is read in large blocks
 * and handed over in batches of lines, with the key of each line (the line without a trailing
 * CR). Progress goes to standard error about once a second when it is a terminal: lines, bytes,
 * rate, and an ETA when the total input size is known (regular files).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdlib.h>

#include "cli.h"
#include "normalize.h"

#define BATCH 4096

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

static void show_progress(const char *command, stream_state *s, int final)
{
    double now = now_seconds();
    if (!final && now - s->last_shown < 1.0)
        return;
    s->last_shown = now;
    double elapsed = now - s->started;
    double rate = elapsed > 0 ? (double)s->bytes / elapsed : 0.0;
    char done[32], speed[32];
    fprintf(stderr, "\rsimdbloom %s: %llu lines, %s, %s/s", command,
            (unsigned long long)s->lines, human_bytes(s->bytes, done, sizeof done),
            human_bytes((uint64_t)rate, speed, sizeof speed));
    if (s->total_bytes && rate > 0 && s->bytes <= s->total_bytes)
        fprintf(stderr, ", %.0f%%, ETA %.0f s   ", 100.0 * (double)s->bytes / (double)s->total_bytes,
                (double)(s->total_bytes - s->bytes) / rate);
    else
        fprintf(stderr, "   ");
    if (final)
        fputc('\n', stderr);
}

/* Under --normalize url, the batch's keys in one growing scratch buffer. */
static int normalize_keys(const char **lines, const size_t *lens, size_t n, const char **keys,
                          size_t *key_lens)
{
    static char *scratch;
    static size_t cap;
    size_t need = 0;
    for (size_t i = 0; i < n; i++)
        need += key_lens[i] + 1;
    if (need > cap) {
        char *grown = realloc(scratch, need);
        if (!grown)
            return -1;
        scratch = grown;
        cap = need;
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = url_normalize(lines[i], key_lens[i], scratch + at);
        if (len > 0) {
            keys[i] = scratch + at;
            key_lens[i] = len;
            at += len;
        }
    }
    (void)lens;
    return 0;
}

static int stream_one(const char *path, stream_state *s, line_batch_fn fn, void *ctx)
{
    static const char *lines[BATCH], *keys[BATCH];
    static size_t lens[BATCH], key_lens[BATCH];
    line_reader reader;
    if (line_reader_open(&reader, path) < 0) {
        fprintf(stderr, "simdbloom: cannot open %s: %s\n", path, strerror(errno));
        return EXIT_RUNTIME;
    }
    uint64_t bytes_before = s->bytes;
    long n;
    int rc = EXIT_OK;
    while ((n = line_reader_next(&reader, lines, lens, BATCH)) > 0) {
        for (long i = 0; i < n; i++) {
            keys[i] = lines[i];
            key_lens[i] = lens[i] - (lens[i] > 0 && lines[i][lens[i] - 1] == '\r');
        }
        if (s->normalize && normalize_keys(lines, lens, (size_t)n, keys, key_lens) < 0) {
            fprintf(stderr, "simdbloom: out of memory\n");
            rc = EXIT_RUNTIME;
            break;
        }
        rc = fn(ctx, lines, lens, keys, key_lens, (size_t)n);
        if (rc != EXIT_OK)
            break;
        s->lines += (uint64_t)n;
        s->bytes = bytes_before + reader.bytes_read;
        if (s->buffer_bytes < reader.cap)
            s->buffer_bytes = reader.cap;
        if (s->progress)
            show_progress(s->command, s, 0);
    }
    int read_errno = errno;
    line_reader_close(&reader);
    if (n < 0 && rc == EXIT_OK) {
        fprintf(stderr, "simdbloom: cannot read %s: %s\n", path, strerror(read_errno));
        return EXIT_RUNTIME;
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
    int rc = EXIT_OK;
    for (int i = 0; i < nfiles && rc == EXIT_OK; i++)
        rc = stream_one(files[i], s, fn, ctx);
    if (s->progress)
        show_progress(s->command, s, 1);
    return rc;
}
