/*
 * Streaming inputs through a subcommand: every FILE (or standard input) is read in large blocks
 * and handed over in batches of lines, with the key of each line (the line without a trailing
 * CR, or its --normalize url form) hashed for the subcommand's filter, on several threads: the
 * hash is most of the per-line work, while the filter step then runs in input order on one
 * thread, so output order and "first occurrence wins" are exactly those of one thread. Progress
 * goes to standard error about once a second when it is a terminal: lines, bytes,
 * rate, and an ETA when the total input size is known (regular files).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pthread.h>
#include <stdlib.h>

#include "cli.h"
#include "normalize.h"

#define MAX_THREADS 32

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

static void show_progress(const char *command, stream_state *s, int final)
{
    double now = now_seconds();
    if (!final && now - s->last_shown < 1.0)
        return;
    s->last_shown = now;
    double elapsed = now - s->started;
    double rate = elapsed > 0 ? (double)s->bytes / elapsed : 0.0;
    char done[32], speed[32];
    fprintf(stderr, "\rsimdbloom %s: %llu lines, %s, %s/s", command, (unsigned long long)s->lines,
            human_bytes(s->bytes, done, sizeof done),
            human_bytes((uint64_t)rate, speed, sizeof speed));
    if (s->total_bytes && rate > 0 && s->bytes <= s->total_bytes)
        fprintf(stderr, ", %.0f%%, ETA %.0f s   ",
                100.0 * (double)s->bytes / (double)s->total_bytes,
                (double)(s->total_bytes - s->bytes) / rate);
    else
        fprintf(stderr, "   ");
    if (final)
        fputc('\n', stderr);
}

/* A batch being prepared: keys normalized (under --normalize url) and hashed, the lines split
 * into one contiguous slice per thread. */
typedef struct batch_job {
    const stream_state *s;
    const char **lines, **keys;
    size_t *key_lens, *offsets;
    uint64_t *hashes;
    char *scratch;
    size_t first, last;
} batch_job;

static void *prepare_slice(void *arg)
{
    batch_job *job = arg;
    if (job->s->normalize) {
        for (size_t i = job->first; i < job->last; i++) {
            char *out = job->scratch + job->offsets[i];
            size_t len = url_normalize(job->lines[i], job->key_lens[i], out);
            if (len > 0) {
                job->keys[i] = out;
                job->key_lens[i] = len;
            }
        }
    }
    sbloom_hash_keys(job->s->filter, (const void *const *)(job->keys + job->first),
                     job->key_lens + job->first, job->last - job->first, job->hashes + job->first);
    return NULL;
}

/* Normalizes and hashes keys[0, n) on s->threads threads (the caller's included). */
static int prepare_batch(const stream_state *s, const char **lines, const char **keys,
                         size_t *key_lens, uint64_t *hashes, size_t n)
{
    static char *scratch;
    static size_t scratch_cap, offsets[BATCH];
    if (s->normalize) { /* each key's room in the scratch buffer: its length + 1 */
        size_t need = 0;
        for (size_t i = 0; i < n; i++) {
            offsets[i] = need;
            need += key_lens[i] + 1;
        }
        if (need > scratch_cap) {
            char *grown = realloc(scratch, need);
            if (!grown)
                return -1;
            scratch = grown;
            scratch_cap = need;
        }
    }
    unsigned threads = s->threads > 1 && n >= 1024 ? s->threads : 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    batch_job jobs[MAX_THREADS];
    pthread_t ids[MAX_THREADS];
    unsigned started = 0;
    for (unsigned t = 0; t < threads; t++) {
        jobs[t] = (batch_job){s,        lines,           keys,
                              key_lens, offsets,         hashes,
                              scratch,  n * t / threads, n * (t + 1) / threads};
        if (t > 0 && pthread_create(&ids[t], NULL, prepare_slice, &jobs[t]) == 0)
            started |= 1u << t;
        else if (t > 0)
            prepare_slice(&jobs[t]); /* no thread to be had: do it here */
    }
    prepare_slice(&jobs[0]);
    for (unsigned t = 1; t < threads; t++)
        if (started & (1u << t))
            pthread_join(ids[t], NULL);
    return 0;
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
                    path, human_bytes(LINE_READER_BUFFER, buffer, sizeof buffer),
                    human_bytes(s->filter ? sbloom_bytes(s->filter) : 0, filter, sizeof filter));
        } else {
            fprintf(stderr, "simdbloom: cannot open %s: %s\n", path, strerror(errno));
        }
        return INPUT_FAILED;
    }
    reader.idle = s->idle;
    reader.idle_ctx = s->idle_ctx;
    uint64_t bytes_before = s->bytes;
    long n;
    int rc = EXIT_OK;
    while ((n = line_reader_next(&reader, lines, lens, BATCH)) > 0) {
        for (long i = 0; i < n; i++) {
            keys[i] = lines[i];
            key_lens[i] = lens[i] - (lens[i] > 0 && lines[i][lens[i] - 1] == '\r');
        }
        if (prepare_batch(s, lines, keys, key_lens, hashes, (size_t)n) < 0) {
            fprintf(stderr, "simdbloom: out of memory\n");
            rc = EXIT_RUNTIME;
            break;
        }
        line_batch batch = {lines, keys, lens, key_lens, hashes, (size_t)n};
        rc = fn(ctx, &batch);
        if (rc != EXIT_OK)
            break;
        s->lines += (uint64_t)n;
        s->bytes = bytes_before + reader.bytes_read;
        if (s->buffer_bytes < reader.cap)
            s->buffer_bytes = reader.cap;
        if (s->progress)
            show_progress(s->command, s, 0);
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
        show_progress(s->command, s, 1);
    return rc == EXIT_OK && input_failed ? EXIT_RUNTIME : rc;
}
