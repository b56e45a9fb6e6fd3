/* What the simdbloom command's files share. */
#ifndef SIMDBLOOM_CLI_H
#define SIMDBLOOM_CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "simdbloom.h"

/* Exit codes of every subcommand. */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };
/* --strict: done, but more distinct keys came than the filter was planned for (it warned). */
#define EXIT_OVERFULL 3

/* Subcommands: each takes its own argv (argv[0] is the subcommand's name). */
int cmd_dedup(int argc, char **argv);
int cmd_build(int argc, char **argv);
int cmd_add(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_fold(int argc, char **argv);
int cmd_allow(int argc, char **argv);
int cmd_remove(int argc, char **argv);
int cmd_gen_urls(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_bench(int argc, char **argv);
/* bench_writers.c: simdbloom bench's many-writers rows. ns a key (wall) of adds of new keys and of
 * test-and-adds: [0] the plain filter on one thread, [1] the concurrent mode on one, [2] on
 * `threads`. */
#define BENCH_MAX_WRITERS 64
typedef struct writer_speeds {
    double add[3], add_if_new[3];
    unsigned threads;
} writer_speeds;
/* n fresh keys a run into one filter of `bytes`, best of reps; 0, or -1 (no memory, or a layout
 * without the concurrent mode). */
int bench_writers(uint64_t bytes, sbloom_layout layout, size_t n, int reps, unsigned threads,
                  writer_speeds *out);
/* bench_window.c: simdbloom bench's windowed rows. ns a key of test-and-adds of fresh keys and
 * of lookups of absent ones: [0] a plain filter planned for the window's n keys at p, [1] the
 * windowed filter of `periods` periods for n keys a window at p (in its steady state); and the
 * windowed filter's bytes over the plain one's. 0, or -1 (no memory). */
typedef struct window_speeds {
    double add_if_new[2], contains[2];
    double memory_ratio;
} window_speeds;
int bench_window(uint64_t n, double p, uint32_t periods, int reps, window_speeds *out);

/* args.c: the options the subcommands share. Options may come anywhere before "--"; every other
 * argument is collected, in order, into args. */
enum {
    OPT_EXPECT = 1 << 0,     /* --expect N */
    OPT_FPP = 1 << 1,        /* --fpp P */
    OPT_LAYOUT = 1 << 2,     /* --layout L */
    OPT_QUIET = 1 << 3,      /* --quiet, -q */
    OPT_OUTPUT = 1 << 4,     /* -o FILE, --output FILE */
    OPT_STATE = 1 << 5,      /* --state FILTER */
    OPT_CHECKPOINT = 1 << 6, /* --checkpoint SECONDS */
    OPT_ABSENT = 1 << 7,     /* --absent */
    OPT_NORMALIZE = 1 << 8,  /* --normalize url */
    OPT_THREADS = 1 << 9,    /* --threads N */
    OPT_COUNTING = 1 << 10,  /* --counting */
    OPT_CLEAN = 1 << 11,     /* --clean */
    OPT_NO_WAIT = 1 << 12,   /* --no-wait */
    OPT_SHARED = 1 << 13,    /* --shared FILTER */
    OPT_REDIS = 1 << 14,     /* --redis NODES --name NAME [--pass P] [--retry S] [--timeout S] */
    OPT_FORGET = 1 << 15,    /* --forget-after DURATION */
    OPT_REPAIR = 1 << 16,    /* --repair */
    OPT_TABLE = 1 << 17,     /* --table (plan) */
    OPT_GEN = 1 << 18,       /* --seed S --repeat FRACTION (gen-urls) */
    OPT_BENCH = 1 << 19,     /* --quick --json --size BYTES --isa NAME --urls FILE (bench) */
    OPT_STRICT = 1 << 20,    /* --strict */
    OPT_REWIND = 1 << 21,    /* --rewind (info) */
};
/* The periods of a window --forget-after makes: a key is forgotten between the duration and
 * 4/3 of it. Three periods keep four generations, the windowed filter's one-line form (a lookup
 * reads one cache line, as a plain filter's does: src/modes/windowed.c). */
#define FORGET_PERIODS 3
/* --forget-after without --expect: a window that grows (sbloom_create_windowed_scalable) from
 * this many lines a window, as dedup's scalable filter grows from 1M lines. */
#define FORGET_FIRST_WINDOW UINT64_C(1000000)

#define DEFAULT_EXPECT UINT64_C(10000000)
#define DEFAULT_FPP 1e-6

typedef struct cli_options {
    uint64_t expect;
    double fpp;
    sbloom_layout layout; /* 0 = auto */
    int bloom_layout;     /* --layout bloom: the smallest Bloom (bit) layout of the plan */
    int quiet, absent, fpp_given, expect_given, normalize, counting, clean, no_wait, repair;
    int rewind;
    int verbose;            /* -v: the summary even when standard error is not a terminal */
    int strict;             /* --strict: exit 3 when more distinct keys came than planned */
    int table;              /* plan --table */
    uint64_t seed;          /* gen-urls --seed (default 1) */
    double repeat;          /* gen-urls --repeat */
    int quick, json;        /* bench --quick, --json */
    uint64_t size;          /* bench --size (0: none) */
    const char *isa, *urls; /* bench --isa, --urls */
    int summary;      /* print the summary: not quiet, and verbose or standard error a terminal */
    unsigned threads; /* default: the cores online */
    const char *output, *state, *shared;
    double checkpoint;                           /* seconds, 0 = only at the end */
    uint64_t forget_after;                       /* --forget-after, in seconds; 0: never */
    const char *redis, *redis_name, *redis_pass; /* --redis, --name, --pass */
    double redis_retry;                          /* --retry SECONDS (0: the library's 30) */
    double redis_timeout;                        /* --timeout SECONDS (0: the library's 5) */
    int nargs;
    char **args;
} cli_options;

/* Parses argv for `command`, accepting the options in `allowed`. Returns -1 to go on, or the exit
 * status to return at once (0 after --help, EXIT_USAGE after a message). */
int parse_options(const char *command, const char *help, int argc, char **argv, unsigned allowed,
                  cli_options *o);
/* FILTER.allow, the allow-list beside a filter file (a new string; NULL when out of memory). */
char *allowlist_path(const char *filter_path);
/* Prints a one-line message for a library error on a file ("cannot load F: ..."), with errno's
 * text for SBLOOM_E_IO; returns EXIT_RUNTIME. */
int filter_error(const char *doing, const char *path, int rc);
/* Whether --layout named a layout, or asked for a Bloom one (--layout bloom). */
static inline int layout_given(const cli_options *o)
{
    return o->layout || o->bloom_layout;
}

/* 1 for the fingerprint layouts (fp512-r*): those that set no bits (k 0) and are one core. */
static inline int is_fingerprint_layout(sbloom_layout layout)
{
    return layout >= SBLOOM_LAYOUT_FP512_R10 && layout <= SBLOOM_LAYOUT_FP512_R29;
}
/* 1 when every stage of the filter (its one core, or a scalable filter's stages) is a
 * fingerprint layout: it removes keys, and its fill counts slots. */
static inline int all_stages_fingerprint(const sbloom_t *f)
{
    uint32_t n = sbloom_stages(f);
    for (uint32_t i = 0; i < n; i++)
        if (!is_fingerprint_layout(sbloom_get_layout(sbloom_stage(f, i))))
            return 0;
    return n > 0;
}
/* A new filter from the options' plan (expect, fpp, layout): without a layout the smallest bit
 * layout, or with any_family the smallest of every family (a fingerprint layout at low rates);
 * returns an exit status (EXIT_OK, or EXIT_USAGE / EXIT_RUNTIME after a message). */
int create_planned(const cli_options *o, sbloom_t **out, int any_family);
/* A new filter that grows from `first` lines at --fpp (no --expect): its stages the smallest of
 * every family (fingerprint stages at low rates), or with --layout bloom Bloom ones; returns an
 * exit status (EXIT_RUNTIME after a message). */
int create_growing(const cli_options *o, sbloom_t **out, uint64_t first);
/* The period --forget-after D asks for: D / FORGET_PERIODS, rounded up. */
uint64_t forget_period(const cli_options *o);
/* A windowed filter for --forget-after (FORGET_PERIODS periods), its clock the wall clock:
 * planned for --expect lines a window, or without it growing from FORGET_FIRST_WINDOW. */
int create_windowed(const cli_options *o, sbloom_t **out);
/* With --forget-after: EXIT_OK when the filter at path is windowed with the window the option
 * asks for, else a message naming both and EXIT_RUNTIME. EXIT_OK without the option. */
int check_forget_after(const cli_options *o, const char *path, const sbloom_t *f);
/* The wall clock, in seconds since the epoch: the clock of the command's windowed filters. */
uint64_t wall_seconds(void);
/* sbloom_load (a windowed filter's clock is moved by window_to_now, after). */
int load_filter(const char *path, sbloom_t **out);
/* A windowed filter's clock moved to now (what its window let go of since it was saved is
 * forgotten before the command uses it); nothing for another filter. A window ahead of this
 * clock by more than a quarter period (a clock once set ahead, or set back since: nothing would
 * be forgotten until this clock caught up) is named with both times and the repair (info
 * --rewind): an error (EXIT_RUNTIME) when `refuse`, else a warning (and EXIT_OK). */
int window_to_now(const char *path, sbloom_t *f, int refuse);

/* filelock.c: one writer of a filter file at a time (flock on FILTER.lock, created when absent).
 * filter_lock waits for the holder (saying so on a terminal unless quiet) or, with no_wait,
 * fails naming it; it prints its own message and returns EXIT_RUNTIME on failure, else EXIT_OK
 * with the lock's descriptor in *fd. filter_lock_change turns a held lock into the other mode;
 * filter_unlock releases it. */
enum { LOCK_FILTER_EXCLUSIVE = 0, LOCK_FILTER_SHARED = 1 };
int filter_lock(const char *path, const char *command, int mode, int no_wait, int quiet, int *fd);
int filter_lock_change(int fd, int mode, int no_wait);
/* The lock taken at once or not at all: 1 taken (*fd set), 0 another process holds it (nothing
 * said), -1 an error (said). */
int filter_lock_try(const char *path, const char *command, int mode, int *fd);
void filter_unlock(int fd);
/* holder.c: 1 if dedup --shared workers hold FILTER's lock now (the file is live: its header and
 * checksum are brought up to date when the last one ends), with the holder's note in note; and
 * the holder's note read from an open FILTER.lock, without its newline ("pid 123: simdbloom
 * add"), or "another process". */
int filter_shared_holder(const char *path, char *note, size_t cap);
void lock_note_read(int fd, char *note, size_t cap);

/* overload.c: if the filter holds clearly more distinct keys than planned (estimated from its
 * fill), a warning with the rate now expected and advice that works: for a state file (path not
 * NULL) how to rebuild it, else how to plan. `what` names the keys ("lines"); keys_seen (keys
 * read, repeats included) bounds the advice when the filter is too full to count. */
int warn_if_overloaded(const sbloom_t *filter, const char *what, const char *path,
                       uint64_t keys_seen); /* 1 when it warned */
/* The message for a fingerprint filter that refused a key (SBLOOM_E_FULL): what it was planned
 * for and holds, what `done` says became of the input, and what to do. Returns EXIT_RUNTIME. */
int report_full(const sbloom_t *filter, const char *command, const char *done);

/* stale.c: temporary files an interrupted save left beside the filter at path (NAME.tmp.XXXXXX,
 * and .sbloom-tmp.XXXXXX for long names, in the directory of the file a link points to). warn
 * prints one line naming them and how to remove them; clean removes them, printing each; both
 * return how many there were. */
size_t stale_temporaries_warn(const char *path);
size_t stale_temporaries_clean(const char *path);

/* The filter file at path for a command that only reads it (query, info, allow): loaded and
 * verified. */
int load_for_reading(const char *path, sbloom_t **out);
/* SBLOOM_OK when f has a bit layout (a scalable filter passes for merge only); else prints
 * "PATH is a counting filter: COMMAND takes bit filters only" (or the scalable form) and returns
 * EXIT_RUNTIME. */
int require_bit_layout(const char *command, const char *path, const sbloom_t *f);

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

/* The steps of a shared table's claim window (dedup.c): after its intent is journaled
 * ("intent"), the table answered ("claimed"), the claims are journaled ("taken"), its lines are
 * out ("output"), the journal is let go ("written"). Nothing here; the command's traced build
 * (tests/trace_syscalls.c, SIMDBLOOM_TRACE_KILL=STEP:N) kills itself at the Nth pass of a step,
 * so that the tests kill a worker at each step of the protocol rather than at a time. */
void claims_step(const char *step);

/* redis.c (where libsimdbloom-redis is built, SIMDBLOOM_WITH_REDIS): the fleet table in Redis.
 * fleet_open opens (or creates, from --expect/--fpp/--layout, default 10M at 1e-6) the filter
 * --name at --redis, and sets *hasher to a local filter that hashes keys as it does; both print
 * their own messages and return an exit status. fleet_add_if_new returns the keys new, or -1
 * (is_new then as sbloom_redis_add_if_new_hashes leaves it on an error; fleet_message says
 * why). */
typedef struct fleet fleet;
int fleet_open(const cli_options *o, fleet **out, sbloom_t **hasher);
int64_t fleet_add_if_new(fleet *f, const uint64_t *hashes, size_t n, uint8_t *is_new);
const char *fleet_message(const fleet *f); /* the last error's message */
/* The fleet filter's line of the summary (when `summary`), and its overload warning. */
int fleet_summary(fleet *f, int summary); /* 1 when it warned of overload */
void fleet_close(fleet *f);
/* A windowed fleet filter's clock moved to now (nothing for another); an exit status. */
int fleet_advance(fleet *f, uint64_t now);
int redis_info(const cli_options *o);
int cmd_push(int argc, char **argv);
int cmd_pull(int argc, char **argv);

/* args.c: parsing that prints "simdbloom: ..." on failure and returns 0; 1 on success. */
int parse_count(const char *option, const char *text, uint64_t *out); /* 10000, 10k, 5M, 2G */
/* A size in bytes: parse_count's suffixes (powers of 1000), or KiB, MiB, GiB, TiB (of 1024). */
int parse_size(const char *option, const char *text, uint64_t *out);
int parse_duration(const char *option, const char *text,
                   uint64_t *out);                                     /* 90m, 12h, 30d: seconds */
int parse_rate(const char *option, const char *text, double *out);     /* in (0, 1) */
int parse_fraction(const char *option, const char *text, double *out); /* in [0, 1) */
int parse_layout(const char *option, const char *text, sbloom_layout *out); /* 0 = auto */
/* Prints "simdbloom: <message>" and a hint to --help; returns EXIT_USAGE. */
int usage_error(const char *command, const char *fmt, ...);
/* Seconds on a monotonic clock. */
double now_seconds(void);
/* "1.5 MiB" style; buf of at least 32 bytes. */
const char *human_bytes(uint64_t bytes, char *buf, size_t cap);

/* lines.c: a reader that hands out batches of complete lines from a file or stdin. A line is
 * what lies between newlines, without the '\n'; a last line without one still counts. Lines of
 * any length (memory permitting) and any bytes, NUL included, come back whole. */
typedef struct line_reader {
    int fd;
    int eof;
    const char *name;
    char *buf; /* a reader that reads: its lines are buf[start, end) */
    size_t cap, start, end;
    const char *map; /* a mapped file: map[map_pos, map_len) is still to come */
    size_t map_len, map_pos, map_start;
    int reading_on;      /* the mapped file grew: read on past the mapping */
    uint64_t bytes_read; /* input consumed (read, or mapped and split) */
    /* Called before a read that would wait for input (a pipe or terminal with nothing ready):
     * a command flushes its output there, so a pipeline never waits on lines held back. */
    void (*idle)(void *ctx);
    void *idle_ctx;
} line_reader;

/* Opens path ("-" = standard input); 0 on success, -1 with errno set. */
/* src/cli/claims.c: the journal of the lines a worker of a shared table has claimed and not yet
 * written, so that a rerun after a kill writes them (see the file's comment). claims_open takes
 * the journal named by key in dir, adopting those of dead workers; per window of lines:
 * claims_intend (all its hashes), the test-and-add, claims_taken (those it claimed), the lines
 * handed to the output (with claims_owed true for a line owed by a dead worker: write it), and
 * claims_written. Each returns 0, or -1 with errno. */
typedef struct claims claims;
int claims_open(claims **out, const char *dir, const char *key);
int claims_intend(claims *c, const uint64_t *hashes, size_t n);
int claims_taken(claims *c, const uint64_t *hashes, const uint8_t *is_new, size_t n);
int claims_owed(claims *c, uint64_t hash);
int claims_written(claims *c);
uint64_t claims_adopted(const claims *c);
uint64_t claims_still_owed(const claims *c);
void claims_close(claims *c);

/* The reader's buffer to start with: it grows only for a line longer than itself. */
#define LINE_READER_BUFFER (UINT64_C(4) << 20)
int line_reader_open(line_reader *r, const char *path);
/* Up to max lines into lines/lens, valid until the next call; returns the count, 0 at the end,
 * -1 with errno set on a read error or when memory runs out. */
long line_reader_next(line_reader *r, const char **lines, size_t *lens, size_t max);
/* A mapped file only: its next whole lines, about `want` bytes (up to the first newline past
 * want), in *begin and *len, valid until the reader is closed; 1, or 0 when no whole line is left
 * in the mapping (line_reader_next then gives the rest: a last line without a newline, or what
 * the file grew by). */
int line_reader_take(line_reader *r, const char **begin, size_t *len, size_t want);
void line_reader_close(line_reader *r);
/* stop.c: 1 once a stop signal arrived (a read interrupted by it then fails with EINTR). */
int line_reader_stop_requested(void);
/* stop.c: while an input is mapped at map[0, len) (NULL: none), a SIGBUS there (the file was
 * truncated under the mapping) stops the command with a message naming path. */
void stop_on_input_truncated(const char *map, size_t len, const char *path);

/* output.c: lines out to a file descriptor, buffered so that every write(2) holds whole lines
 * only: output cut short (a kill, a full disk) ends at a line's end. */
#define LINE_WRITER_PIECES 1024 /* IOV_MAX on Linux */
typedef struct line_writer {
    int fd;
    char *buf;
    size_t len, cap;
    int failed, err; /* a write failed (err: its errno; reported once); nothing written after */
    struct iovec pieces[LINE_WRITER_PIECES]; /* what is pending: in buf, or in a mapped input */
    int npieces;
} line_writer;
/* 0, or -1 when the buffer cannot be allocated. */
int line_writer_open(line_writer *w, int fd, size_t cap);
/* Appends line and a newline; 0, or -1 once a write has failed. */
int line_writer_put(line_writer *w, const char *line, size_t len);
/* The same for a line followed by its newline (line[len] is '\n') that stays where it is until
 * the next line_writer_flush (a mapped input's line: line_batch.in_place): not copied. */
int line_writer_put_mapped(line_writer *w, const char *line, size_t len);
/* The same for whole lines, each with its newline, lying one after another in data[0, bytes). */
int line_writer_put_mapped_run(line_writer *w, const char *data, size_t bytes);
/* The lines of batch b whose flag says `want` ((flags[i] != 0) == want), in order; the count
 * written, or -1 once a write has failed. Lines in place (b->in_place) lie one after another in
 * the mapped file, so each run of chosen lines is one piece, found from a 64-bit mask of 64
 * lines' flags: a branch a run instead of one a line, whose outcome (new or not, present or
 * not) the CPU cannot predict. The caller flushes before its batch function returns. Other
 * lines are copied a line at a time. */
int64_t line_writer_put_chosen(line_writer *w, const line_batch *b, const uint8_t *flags, int want);
/* Writes what is buffered; 0 or -1. */
int line_writer_flush(line_writer *w);
/* For stream_state.idle (ctx: the writer): input would block, so what is buffered goes out. */
void line_writer_flush_when_idle(void *writer);
/* Flushes, then fsyncs when the output is a regular file (so that a saved state never holds
 * lines a power cut could take from the output); 0 or -1. */
int line_writer_sync(line_writer *w);
void line_writer_close(line_writer *w);

#endif
