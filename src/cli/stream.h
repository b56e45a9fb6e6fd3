/* Lines to a subcommand in batches, hashed as its filter hashes them (stream.c, progress.c,
 * prepare.c, pipeline.c), and the stop signals (stop.c). */
#ifndef SIMDBLOOM_CLI_STREAM_H
#define SIMDBLOOM_CLI_STREAM_H

#include <signal.h>

#include "lines.h"
#include "status.h"
#include "simdbloom.h"

/* stream.c: feeding lines to a subcommand in batches. */
typedef struct stream_state {
    const char *command; /* for progress lines */
    int quiet, progress, normalize;
    unsigned threads;       /* hashing threads, 1 or more */
    const sbloom_t *filter; /* keys are hashed as this filter hashes them */
    uint64_t lines, bytes, total_bytes;
    size_t buffer_bytes; /* the reader's largest buffer, for the memory summary */
    double started, last_shown;
    void (*idle)(void *ctx); /* optional: called when input would block (line_reader.idle) */
    void *idle_ctx;
} stream_state;
/* Called with each batch: the lines as read (with any CR) and their lengths; each line's key (the
 * line without a trailing CR, or its normal form under --normalize url) and the key's hash.
 * Returns EXIT_OK to go on, or an exit status after printing a message. */
typedef struct line_batch {
    const char **lines, **keys;
    const size_t *lens, *key_lens;
    const uint64_t *hashes;
    size_t n;
    int in_place; /* each line is followed by its newline in a mapped input file, where it stays
                   * at least until fn returns (line_writer_put_mapped, then a flush), and line
                   * i + 1 begins right after line i's newline */
} line_batch;
typedef int (*line_batch_fn)(void *ctx, const line_batch *batch);
/* Streams every file (standard input when none; "-" is standard input) through fn. A file that
 * cannot be opened or read is named on standard error and skipped, as cat does: the status is
 * then EXIT_RUNTIME once the others are done. */
int stream_inputs(stream_state *s, int nfiles, char **files, line_batch_fn fn, void *ctx);
/* progress.c: the progress line (about once a second, or the last one when final). */
void stream_progress(stream_state *s, int final);
/* prepare.c: room for the normal forms of a batch's keys, grown as needed (key_room_free). */
typedef struct key_room {
    char *scratch;
    size_t scratch_cap;
    size_t *offsets;
    size_t offsets_cap;
} key_room;
/* Each line's key (the line without a trailing CR, or its normal form under --normalize url) and
 * the key's hash, on `threads` threads (the caller's included). Returns the keys: lines itself
 * without --normalize (a key begins where its line does), else keys (room for n); NULL when
 * memory runs out. */
const char **prepare_lines(const stream_state *s, unsigned threads, const char **lines,
                           const size_t *lens, const char **keys, size_t *key_lens,
                           uint64_t *hashes, size_t n, key_room *room);
void key_room_free(key_room *room);
/* The hashes of n lines that are their own keys (no --normalize), each key_lens[i] bytes long
 * (its line without a trailing CR), on the calling thread. */
void hash_line_keys(const stream_state *s, const char *const *lines, const size_t *key_lens,
                    uint64_t *hashes, size_t n);
/* pipeline.c: the whole lines of the mapped file r through fn, in order, pieces of it split and
 * hashed on s->threads threads at once; EXIT_OK when every whole line of the mapping went
 * through (line_reader_next gives what is left), else fn's status, EXIT_STOPPED or EXIT_RUNTIME
 * (after its message). */
struct line_reader;
int pipeline_run(struct line_reader *r, stream_state *s, line_batch_fn fn, void *ctx);
/* SIGTERM, SIGINT and SIGHUP stop the stream between batches (a blocked read returns at once):
 * stream_inputs then returns EXIT_STOPPED, and the command finishes its output (whole lines) and
 * its state before it exits with 128 + the signal (stop_exit_status). A kill -9 cannot be
 * caught: the kernel may then cut the last write short at a page boundary. */
enum { EXIT_STOPPED = 3 };
void stream_stop_on_signals(void);
/* A SIGBUS (the mapped file at path truncated by another process) ends the process with one line
 * saying so and exit 1, instead of a crash. */
void stop_on_mapping_failure(const char *path);
int stop_exit_status(void);
/* Around a call into a shared table (1 before, 0 after): a stop signal that comes meanwhile ends
 * the process a second later if the call has not returned (it waits for another worker's lock),
 * with one line and 128 + the signal. */
void stop_mark_shared_call(int on);
/* Around pthread_create: the threads the command starts block the stop signals (and the alarm),
 * so that they reach the main thread, whose wait for a lock only a signal there ends. */
void stop_signals_hold(sigset_t *old);
void stop_signals_release(const sigset_t *old);

#endif /* SIMDBLOOM_CLI_STREAM_H */
