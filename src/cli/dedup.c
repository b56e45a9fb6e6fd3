/*
 * simdbloom dedup: the visited-URL table in one command. Lines go in; each line not seen before
 * comes out, in input order. One fused test-and-add per batch of lines does the work.
 *
 * With --state FILTER the table outlives the process: loaded if the file exists, saved back
 * crash-safely at the end and every --checkpoint seconds. Output is flushed before each save, so
 * every line the saved state knows was already written: after a crash, a rerun over the same
 * input emits again at most the lines written since the last checkpoint, and never loses one.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dedup.h"
#ifdef SIMDBLOOM_WITH_REDIS
#include "simdbloom_redis.h"
#endif

/* In parts: one string literal would pass the 4095 characters C guarantees. */
static const char dedup_help_files[] =
    "usage: simdbloom dedup [--expect N] [--fpp P] [--layout L] [--normalize url]\n"
    "                       [--forget-after DURATION]\n"
    "                       [--state FILTER [--checkpoint SECONDS] | --shared FILTER]\n"
    "                       [--no-wait] [--threads N] [--strict] [--quiet] [FILE...]\n"
    "       simdbloom dedup --redis HOST:PORT[,...] --name NAME [--expect N] [--fpp P]\n"
    "                       [--layout L] [--forget-after D] [--pass P] [--retry S] [...]\n"
    "                       [FILE...]\n"
    "\n"
    "Writes each line of the input not seen before, in input order (standard input when no FILE\n"
    "or FILE is '-'). A line is the key as bytes; a trailing CR is not part of the key (CRLF and\n"
    "LF files dedup alike) but is written out as it came. Empty lines, NUL bytes, invalid UTF-8\n"
    "and lines of any length are keys like any other.\n"
    "\n"
    "  --expect N          distinct lines to plan for (suffix k, M, G allowed): a fixed filter.\n"
    "                      Without it the filter grows as lines come (a scalable filter: stages\n"
    "                      of 1M, 2M, 4M, ... lines, each with a tighter rate, so that the total\n"
    "                      stays at --fpp whatever the count; fingerprint stages at 1e-3 and\n"
    "                      below, Bloom ones with --layout bloom)\n"
    "  --fpp P             false-positive rate: the chance that a new line is taken for a\n"
    "                      repeat and dropped (default 1e-6)\n"
    "  --layout L          auto (default: the smallest filter: at rates of 1e-3 and below a\n"
    "                      fingerprint layout, which stops the run, everything written, when\n"
    "                      a line finds it full past its plan), parquet, block512-k8,\n"
    "                      block512-k16 (whose rate rises past its plan instead), counting512,\n"
    "                      fp512-r10 .. fp512-r29, scalable (grows from N), bloom (the\n"
    "                      smallest Bloom layout of the plan); a warning says when the one\n"
    "                      named needs 4x the memory of the smallest or more\n"
    "  --forget-after D    a line seen is let through again D later (90m, 12h, 30d): for\n"
    "                      recrawls and dedup windows. The window is 3 periods of D / 3 on the\n"
    "                      wall clock: a line is forgotten between D and 4/3 D after it was\n"
    "                      first written, never before (D in seconds: a multiple of 3; 100\n"
    "                      years at most). --expect is then lines per window, at most a\n"
    "                      third of them in one period: the window is then fingerprints with\n"
    "                      their period where smaller (a burst far past the plan stops the\n"
    "                      run), or with --layout bloom or --shared Bloom generations (more\n"
    "                      warns); without it the window\n"
    "                      grows from 1M (not with --shared, --redis); with --state or\n"
    "                      --shared the file keeps the window and its clock: a file whose\n"
    "                      window is ahead of this clock by more than D / 12 (a clock once\n"
    "                      set ahead, or set back since) is refused, naming both times, until\n"
    "                      'simdbloom info --rewind FILE' brings it back to this clock;\n"
    "                      with --redis each period's generation is its own keys in Redis,\n"
    "                      which expire by themselves; each worker's clock and the servers'\n"
    "                      must agree within a quarter of a period (D / 12), checked as it\n"
    "                      runs: further apart, the run stops before it writes a key\n"
    "  --state FILTER      keep the seen lines in this filter file across runs: loaded if it\n"
    "                      exists (a plan given must then be the file's), created if not,\n"
    "                      saved crash-safely at the end\n"
    "                      One run at a time: a second run on the same FILTER waits for the\n"
    "                      first (or with --no-wait fails, naming it); the lock is FILTER.lock\n"
    "";
static const char dedup_help_shared[] =
    "  --shared FILTER     several dedup processes at once on one live filter file, mapped and\n"
    "                      shared: each distinct line is written by exactly one of them. Created\n"
    "                      from --expect/--fpp/--layout (--expect is then required: it does not\n"
    "                      grow) by whichever starts first. A worker killed (even by kill -9) "
    "loses nothing: the\n"
    "                      same command run again writes every line it had claimed and not\n"
    "                      written (its journal: /dev/shm/.sbloom-claims-*, or beside FILTER\n"
    "                      where there is no /dev/shm; $SIMDBLOOM_CLAIMS_DIR to choose),\n"
    "                      repeating at most the 4096 lines it was writing. A lock a killed\n"
    "                      worker left in FILTER.lock is taken over; one a live worker keeps\n"
    "                      (stopped) is waited for $SIMDBLOOM_LOCK_WAIT seconds (30), then\n"
    "                      the run stops (exit 1) naming it; a stop signal ends the wait\n"
    "  --no-wait           with --state or --shared: fail (exit 1) instead of waiting for a\n"
    "                      writer that holds FILTER (an add, or another --state run)\n"
    "  --checkpoint SECS   with --state, also save every SECS seconds; after a crash, rerunning\n"
    "                      the same input repeats at most the lines written since the last save.\n"
    "                      Output that is a file is fsynced before each save (one fsync per\n"
    "                      checkpoint), so the state never holds a line a power cut could lose\n"
    "";
static const char dedup_help_rest[] =
    "  --normalize url     key each URL by its canonical form (lowercase scheme and host, no\n"
    "                      default port or fragment, . and .. resolved, escapes normalized,\n"
    "                      empty path as /); other lines are keyed as they are. The line\n"
    "                      written out is the first spelling seen.\n"
    "  --redis NODES       dedup against a fleet table kept in a Redis Cluster (or one Redis\n"
    "                      server): seed nodes host:port[,host:port...]. Any number of dedup\n"
    "                      processes on any hosts write each distinct line once between them.\n"
    "                      The table is created from --expect/--fpp/--layout (--expect is then\n"
    "                      required: it does not grow) by whichever starts first; a later one\n"
    "                      with another plan is refused. A shard Redis evicted or someone\n"
    "                      overwrote stops the run, naming it, before any line is written on its\n"
    "                      strength; an error stops the run at the line it names, and the same\n"
    "                      command run again after the repair loses nothing and repeats nothing. "
    "After a failover a line may be written twice, never lost.\n"
    "                      A killed worker loses nothing after the same command runs again on\n"
    "                      this host, as with --shared\n"
    "  --name NAME         with --redis: the table's name in Redis\n"
    "  --pass P            with --redis: the password (default: $REDISCLI_AUTH)\n"
    "  --retry S           with --redis: seconds to retry while the cluster fails over (30)\n"
    "  --timeout S         with --redis: seconds to wait for a reply before the connection\n"
    "                      counts as lost (5)\n"
    "  --threads N         threads hashing lines and probing the filter (default: every\n"
    "                      core); output order and which spelling is kept do not depend on it\n"
    "\n"
    "On a terminal (or with -v) a summary goes to standard error: lines in and out, duplicate\n"
    "rate, filter size, memory, speed. If more distinct lines arrive than a fixed filter was "
    "planned for (counted from the\n"
    "filter's fill) it warns with the rate now expected and what to do.\n"
    "Progress is shown while standard error is a terminal.\n"
    "\n"
    "Output is written in whole lines, and flushed whenever input would block, so a pipeline\n"
    "downstream sees each new line without waiting for a buffer to fill. SIGTERM, SIGINT and\n"
    "SIGHUP stop the run between lines: output and --state are completed up to the last line\n"
    "read, and the exit status is 128 + the signal. (kill -9 cannot be caught; the kernel may "
    "then\n"
    "cut the last write short; --state reruns write such lines again.)\n"
    "\n"
    "  --strict            exit 3 (after a complete run) when more distinct lines came than\n"
    "                      the filter was planned for (the warning above), so that a pipeline\n"
    "                      can tell; the warning is then printed even with -q\n"
    "\n"
    "Exit status: 0 done, 1 input/output or memory error, 2 usage error, 3 done but overfull\n"
    "(--strict).\n"
    "Examples:\n"
    "  simdbloom dedup --expect 50M crawl-*.txt > new-urls.txt\n"
    "  simdbloom dedup --state visited.sbloom --checkpoint 60 < discovered.txt > to-fetch.txt\n"
    "  simdbloom dedup --state recent.sbloom --forget-after 30d --expect 5M < found.txt\n"
    "  simdbloom dedup --shared visited.sbloom --expect 100M < worker-3.txt > fetch-3.txt\n"
    "  simdbloom dedup --redis 10.0.0.5:7000 --name visited --expect 1G < found.txt > fetch.txt\n";

static const char *dedup_help(void)
{
    static char help[sizeof dedup_help_files + sizeof dedup_help_shared + sizeof dedup_help_rest];
    snprintf(help, sizeof help, "%s%s%s", dedup_help_files, dedup_help_shared, dedup_help_rest);
    return help;
}

#define OUT_BUFFER (1 << 20)
typedef struct dedup_run {
    dedup_table *table;
    sbloom_t *filter; /* the table's filter (with --redis the local one that hashes lines) */
    fleet *fleet;     /* --redis: the table in Redis */
    line_writer out;
    uint64_t lines_out; /* lines found new (and handed to the writer) */
    claims *claims; /* --shared, --redis: the lines this worker claimed and has not yet written */
    uint64_t owed_written;      /* lines a killed worker had claimed, written by this one */
    int windowed;               /* the filter forgets: its clock moves with the wall clock */
    const stream_state *stream; /* the input: lines read before the batch being run */
    int failed;                 /* the run stopped on an error whose message is printed */
    uint8_t is_new[65536];
} dedup_run;

/* Lines a worker of a shared table claims at a time: its journal holds at most this many, and a
 * rerun after a kill repeats at most this many of the lines it had written. */
#define CLAIM_WINDOW 4096

/* Line i of the batch to the output: from where it lies when it is in a mapped input (the
 * callers flush before they return), else copied. */
static int put_line(dedup_run *r, const line_batch *b, size_t i)
{
    return b->in_place ? line_writer_put_mapped(&r->out, b->lines[i], b->lens[i])
                       : line_writer_put(&r->out, b->lines[i], b->lens[i]);
}

/* A shared table's batch or clock that failed (a lock another worker keeps: it is stopped or
 * stuck): one line, where the run stopped; the claims journal keeps what was claimed. */
static int shared_failed(dedup_run *r, int rc)
{
    if (rc == SBLOOM_E_LOCKED && line_reader_stop_requested()) {
        fprintf(stderr, "simdbloom dedup: stopped by a signal while waiting for a lock another "
                        "worker keeps\n");
        return EXIT_STOPPED; /* (then as any stop: the output flushed, 128 + the signal) */
    }
    const char *detail = sbloom_error_detail();
    fprintf(stderr,
            "simdbloom: %s%s%s; stopped after input line %llu: the same command run again writes "
            "every line this run claimed and did not write\n",
            sbloom_strerror(rc), detail[0] ? ": " : "", detail,
            (unsigned long long)r->stream->lines);
    r->failed = 1;
    return EXIT_RUNTIME;
}

static int journal_failed(void)
{
    fprintf(stderr, "simdbloom: cannot write the claims journal: %s\n", strerror(errno));
    return EXIT_RUNTIME;
}

#ifdef SIMDBLOOM_WITH_REDIS
/* The fleet failed in this window. is_new says what became of each line: 1 the fleet may have
 * taken it (its command was sent, and perhaps ran), so it is written (once: at its first
 * occurrence); 0 seen; SBLOOM_REDIS_NOT_ADDED refused or never sent, so not written: the same
 * command run again after the repair writes it. The run stops here, saying where. */
static int fleet_failed(dedup_run *r, const line_batch *b, size_t at, size_t len)
{
    uint8_t *is_new = r->is_new + at;
    size_t first_not_added = len;
    for (size_t i = 0; i < len; i++) {
        if (is_new[i] == SBLOOM_REDIS_NOT_ADDED) {
            if (first_not_added == len)
                first_not_added = i;
            is_new[i] = 0; /* not taken: the journal lets it go */
        } else if (is_new[i] && put_line(r, b, at + i) < 0)
            return EXIT_RUNTIME;
    }
    if (claims_taken(r->claims, b->hashes + at, is_new, len) < 0)
        return journal_failed();
    if (line_writer_flush(&r->out) == 0)
        claims_written(r->claims);
    uint64_t before = r->stream->lines;
    unsigned long long line = (unsigned long long)(before + at + first_not_added + 1);
    if (first_not_added < len)
        fprintf(stderr,
                "simdbloom: redis: %s; stopped at input line %llu: run the same input again after "
                "the repair, nothing is lost\n",
                fleet_message(r->fleet), line);
    else
        fprintf(stderr,
                "simdbloom: redis: %s; stopped after input line %llu: run the same input again "
                "after the repair, nothing is lost\n",
                fleet_message(r->fleet), (unsigned long long)(before + at + len));
    r->failed = 1;
    return EXIT_RUNTIME;
}
#endif

/* A window of a shared table's batch: journal, claim, write out, journal again (claims.c). The
 * lines a killed worker had claimed are written when met, as if new. */
__attribute__((weak)) void claims_step(const char *step)
{
    (void)step;
}

static int claim_window(dedup_run *r, const line_batch *b, size_t at, size_t len)
{
    const uint64_t *hashes = b->hashes + at;
    uint8_t *is_new = r->is_new + at;
    if (claims_intend(r->claims, hashes, len) < 0)
        return journal_failed();
    claims_step("intent");
    int64_t fresh;
#ifdef SIMDBLOOM_WITH_REDIS
    if (r->fleet) {
        if ((fresh = fleet_add_if_new(r->fleet, hashes, len, is_new)) < 0)
            return fleet_failed(r, b, at, len);
    } else
#endif
    {
        stop_mark_shared_call(1); /* a signal while another worker's lock is awaited ends it */
        fresh = sbloom_add_if_new_hashes(r->filter, hashes, len, is_new);
        stop_mark_shared_call(0);
    }
    claims_step("claimed");
    if (fresh < 0) { /* is_new says exactly which lines the failed call claimed: written, then
                      * the run stops (the others are claimed by whoever meets them next) */
        for (size_t i = 0; i < len; i++)
            if (is_new[i] && put_line(r, b, at + i) < 0)
                return EXIT_RUNTIME;
        if (claims_taken(r->claims, hashes, is_new, len) < 0)
            return journal_failed();
        if (line_writer_flush(&r->out) == 0 && claims_written(r->claims) < 0)
            return journal_failed();
        return shared_failed(r, (int)fresh);
    }
    if (claims_taken(r->claims, hashes, is_new, len) < 0)
        return journal_failed();
    claims_step("taken");
    for (size_t i = 0; i < len; i++) {
        int owed = claims_owed(r->claims, hashes[i]);
        if ((is_new[i] || owed) && put_line(r, b, at + i) < 0)
            return EXIT_RUNTIME;
        r->owed_written += owed && !is_new[i];
        r->lines_out += owed && !is_new[i];
    }
    r->lines_out += (uint64_t)fresh;
    /* handed to the file or pipe before the journal lets the claims go */
    if (line_writer_flush(&r->out) < 0)
        return EXIT_RUNTIME;
    claims_step("output");
    if (claims_written(r->claims) < 0)
        return journal_failed();
    claims_step("written");
    return EXIT_OK;
}

/* A fingerprint filter refused a key of the batch (SBLOOM_E_FULL): the batch's new lines were
 * added and are written, and so are the refused ones (still absent: new, though the filter could
 * not keep them), and the run stops there, every line up to the batch's end written once. */
static int filter_full(dedup_run *r, const line_batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        if (!r->is_new[i] && sbloom_contains_hash(r->filter, b->hashes[i]) == 0)
            r->is_new[i] = 1;
    if (line_writer_put_chosen(&r->out, b, r->is_new, 1) < 0 || line_writer_flush(&r->out) < 0)
        return EXIT_RUNTIME;
    r->failed = 1;
    char done[160];
    snprintf(done, sizeof done,
             "the run stopped after input line %llu, every line up to there written%s",
             (unsigned long long)(r->stream->lines + b->n),
             r->table->o->state ? " (the state keeps those it holds)" : "");
    return report_full(r->filter, "dedup", done);
}

static int dedup_batch(void *ctx, const line_batch *b)
{
    dedup_run *r = ctx;
    size_t n = b->n;
    if (r->windowed) { /* a long run forgets as it goes */
        stop_mark_shared_call(r->claims != NULL);
        int rc = sbloom_advance(r->filter, wall_seconds());
        stop_mark_shared_call(0);
        if (rc != SBLOOM_OK)
            return shared_failed(r, rc);
    }
#ifdef SIMDBLOOM_WITH_REDIS
    if (r->fleet && fleet_advance(r->fleet, wall_seconds()) != EXIT_OK)
        return EXIT_RUNTIME;
#endif
    if (r->claims) {
        for (size_t at = 0; at < n; at += CLAIM_WINDOW) {
            int rc = claim_window(r, b, at, n - at < CLAIM_WINDOW ? n - at : CLAIM_WINDOW);
            if (rc != EXIT_OK)
                return rc;
        }
        return EXIT_OK;
    }
    int64_t fresh = sbloom_add_if_new_hashes(r->filter, b->hashes, n, r->is_new);
    if (fresh == SBLOOM_E_FULL)
        return filter_full(r, b);
    if (fresh < 0) {
        fprintf(stderr, "simdbloom: %s\n", sbloom_strerror((int)fresh));
        return EXIT_RUNTIME;
    }
    if (line_writer_put_chosen(&r->out, b, r->is_new, 1) < 0)
        return EXIT_RUNTIME;
    if (b->in_place && line_writer_flush(&r->out) < 0) /* out before the mapped input goes */
        return EXIT_RUNTIME;
    r->lines_out += (uint64_t)fresh;
    const dedup_table_ops *ops = r->table->ops;
    return ops->after_batch ? ops->after_batch(r->table, &r->out) : EXIT_OK;
}

/* The summary (when `summary`: for a person) and the overload warning; after a success only.
 * 1 when it warned. */
static int print_summary(const sbloom_t *filter, const stream_state *s, const dedup_run *r,
                         double seconds, int summary)
{
    char size[32], buffers[32];
    if (!summary) {
#ifdef SIMDBLOOM_WITH_REDIS
        if (r->fleet)
            return fleet_summary(r->fleet, 0);
#endif
        return warn_if_overloaded(filter, "lines", r->table->path, s->lines);
    }
    uint64_t lines_out = r->lines_out;
    double dup = s->lines ? 100.0 * (double)(s->lines - lines_out) / (double)s->lines : 0.0;
    fprintf(stderr, "simdbloom dedup: %llu lines in, %llu lines out, %.2f%% duplicates\n",
            (unsigned long long)s->lines, (unsigned long long)lines_out, dup);
#ifdef SIMDBLOOM_WITH_REDIS
    if (r->fleet) {
        int overloaded = fleet_summary(r->fleet, 1);
        fprintf(stderr, "time: %.3f s, %.2f M lines/s\n", seconds,
                seconds > 0 ? (double)s->lines / seconds / 1e6 : 0.0);
        return overloaded;
    }
#endif
    sbloom_window w = sbloom_window_init();
    if (sbloom_get_window(filter, &w) == SBLOOM_OK)
        fprintf(stderr,
                "filter: windowed, %s%s, forgets after %llu s (%u periods of %llu s), planned %llu "
                "items a window at false-positive rate %.3g, %llu items now, isa %s\n",
                human_bytes(sbloom_bytes(filter), size, sizeof size),
                sbloom_is_growing(filter) ? ", growing" : "",
                (unsigned long long)(w.period * w.periods), w.periods, (unsigned long long)w.period,
                (unsigned long long)sbloom_planned_items(filter), sbloom_planned_fpp(filter),
                (unsigned long long)sbloom_items(filter), sbloom_filter_isa(filter));
    else if (sbloom_get_layout(filter) == SBLOOM_LAYOUT_SCALABLE)
        fprintf(stderr,
                "filter: scalable, %s in %u stages (room for %llu items) at false-positive rate "
                "%.3g, isa %s\n",
                human_bytes(sbloom_bytes(filter), size, sizeof size), sbloom_stages(filter),
                (unsigned long long)sbloom_planned_items(filter), sbloom_planned_fpp(filter),
                sbloom_filter_isa(filter));
    else if (is_fingerprint_layout(sbloom_get_layout(filter)))
        fprintf(stderr,
                "filter: %s, %s, fingerprints, planned %llu items at false-positive rate %.3g, "
                "isa %s\n",
                sbloom_layout_name(sbloom_get_layout(filter)),
                human_bytes(sbloom_bytes(filter), size, sizeof size),
                (unsigned long long)sbloom_planned_items(filter), sbloom_planned_fpp(filter),
                sbloom_filter_isa(filter));
    else
        fprintf(stderr,
                "filter: %s, %s, k=%u, planned %llu items at false-positive rate %.3g, isa %s\n",
                sbloom_layout_name(sbloom_get_layout(filter)),
                human_bytes(sbloom_bytes(filter), size, sizeof size), sbloom_k(filter),
                (unsigned long long)sbloom_planned_items(filter), sbloom_planned_fpp(filter),
                sbloom_filter_isa(filter));
    fprintf(stderr, "memory: the filter, plus %s of input and output buffers\n",
            human_bytes((uint64_t)s->buffer_bytes + OUT_BUFFER, buffers, sizeof buffers));
    fprintf(stderr, "time: %.3f s, %.2f M lines/s\n", seconds,
            seconds > 0 ? (double)s->lines / seconds / 1e6 : 0.0);
    return warn_if_overloaded(filter, "lines", r->table->path, s->lines);
}

/* mkdir -p, private to the user (0700) for the folders it makes. */
static int make_directories(const char *path)
{
    char part[PATH_MAX];
    snprintf(part, sizeof part, "%s", path);
    for (char *p = part + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char was = *p;
            *p = '\0';
            if (mkdir(part, 0700) != 0 && errno != EEXIST)
                return -1;
            *p = was;
            if (!was)
                return 0;
        }
    }
}

/* The claims journal's folder: memory (/dev/shm), which outlives the process, which is all it is
 * for, and costs a rewrite nothing (on ext4 the journal's rewrites doubled a --shared run's
 * time); where there is none, for --shared beside the filter, for --redis in
 * $XDG_STATE_HOME/simdbloom (or ~/.local/state/simdbloom). Its name comes from the filter's lock
 * file (absolute) or the fleet filter's name, so that the same command run again finds it. */
static int open_claims(const cli_options *o, claims **out)
{
    char dir[PATH_MAX], key[2 * PATH_MAX + 8], lock[PATH_MAX];
    if (o->shared) {
        int rc = sbloom_lock_file(o->shared, lock, sizeof lock);
        if (rc != SBLOOM_OK)
            return filter_error("lock", o->shared, rc);
        char *slash = strrchr(lock, '/');
        const char *base = slash ? slash + 1 : lock;
        if (slash == lock)
            snprintf(dir, sizeof dir, "/");
        else if (slash)
            snprintf(dir, sizeof dir, "%.*s", (int)(slash - lock), lock);
        else
            snprintf(dir, sizeof dir, ".");
        char absolute[PATH_MAX];
        if (!realpath(dir, absolute))
            snprintf(absolute, sizeof absolute, "%s", dir);
        snprintf(key, sizeof key, "%s/%s", absolute, base);
    } else {
        const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
        if (state && state[0] == '/')
            snprintf(dir, sizeof dir, "%s/simdbloom", state);
        else if (home && home[0])
            snprintf(dir, sizeof dir, "%s/.local/state/simdbloom", home);
        else
            snprintf(dir, sizeof dir, "/tmp/simdbloom-%ld", (long)getuid());
        snprintf(key, sizeof key, "redis:%s", o->redis_name);
    }
    const char *memory = getenv("SIMDBLOOM_CLAIMS_DIR"); /* tests: a folder of their own */
    if (!memory)
        memory = "/dev/shm";
    if (access(memory, W_OK | X_OK) == 0)
        snprintf(dir, sizeof dir, "%s", memory);
    else if (make_directories(dir) < 0) {
        fprintf(stderr, "simdbloom: cannot make the folder of the claims journal %s: %s\n", dir,
                strerror(errno));
        return EXIT_RUNTIME;
    }
    if (claims_open(out, dir, key) < 0) {
        fprintf(stderr, "simdbloom: cannot open the claims journal in %s: %s\n", dir,
                strerror(errno));
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

int cmd_dedup(int argc, char **argv)
{
    cli_options o;
    int rc = parse_options("dedup", dedup_help(), argc, argv,
                           OPT_EXPECT | OPT_FPP | OPT_LAYOUT | OPT_QUIET | OPT_STATE |
                               OPT_CHECKPOINT | OPT_NORMALIZE | OPT_THREADS | OPT_SHARED |
                               OPT_NO_WAIT | OPT_REDIS | OPT_FORGET | OPT_STRICT,
                           &o);
    if (rc >= 0)
        return rc;
    if (o.checkpoint > 0 && !o.state)
        return usage_error("dedup", "--checkpoint needs --state");
    if (o.state && o.shared)
        return usage_error("dedup", "--state and --shared exclude each other");
    if (o.redis && (o.state || o.shared))
        return usage_error("dedup", "--redis excludes --state and --shared");
    if (o.no_wait && !o.state && !o.shared)
        return usage_error("dedup", "--no-wait goes with --state or --shared");
    if (o.forget_after && o.layout && !o.redis) /* (a fleet's generations take a layout) */
        return usage_error("dedup", "--forget-after makes a windowed filter: it takes no --layout "
                                    "but bloom (a ring of Bloom generations, not fingerprints)");

    dedup_run run = {0};
    dedup_table table = {.ops = dedup_table_for(&o), .o = &o, .lock = -1};
    run.table = &table;
    if ((rc = table.ops->open(&table)) != EXIT_OK)
        return rc;
    if (table.ops->shared && (rc = open_claims(&o, &run.claims)) != EXIT_OK) {
        table.ops->close(&table);
        return rc;
    }
    run.filter = table.filter;
    run.fleet = table.fleet;
    sbloom_set_threads(run.filter, o.threads); /* large batches probe on every core */
    if (line_writer_open(&run.out, STDOUT_FILENO, OUT_BUFFER) < 0) {
        claims_close(run.claims);
        table.ops->close(&table);
        fprintf(stderr, "simdbloom: out of memory\n");
        return EXIT_RUNTIME;
    }
    run.windowed = sbloom_get_layout(run.filter) == SBLOOM_LAYOUT_WINDOWED;

    stream_state s = {.command = "dedup",
                      .quiet = o.quiet,
                      .normalize = o.normalize,
                      .threads = o.threads,
                      .filter = run.filter,
                      .idle = line_writer_flush_when_idle, /* lines go out as input stalls */
                      .idle_ctx = &run.out};
    run.stream = &s;
    double started = now_seconds();
    stream_stop_on_signals();
    rc = stream_inputs(&s, o.nargs, o.args, dedup_batch, &run);
    int stopped = rc == EXIT_STOPPED;
    if (stopped)
        rc = EXIT_OK; /* finish as at the end of input: output, state, summary; then the status */
    if (line_writer_flush(&run.out) < 0)
        rc = EXIT_RUNTIME;
    if (table.ops->finish) { /* (after a read error too: every line the table knows went out) */
        int finished = table.ops->finish(&table, &run.out, !run.out.failed);
        if (rc == EXIT_OK)
            rc = finished;
    }
    int overfull = 0; /* --strict makes the overload warning an outcome: said even with -q */
    if ((!o.quiet || o.strict) && !run.failed && rc == EXIT_OK) /* a failure: its line only */
        overfull = print_summary(run.filter, &s, &run, now_seconds() - started, o.summary);
    if (overfull && o.strict && rc == EXIT_OK)
        rc = EXIT_OVERFULL;
    if (!o.quiet && run.owed_written)
        fprintf(stderr,
                "simdbloom dedup: %llu of the lines were claimed by a worker that was killed "
                "before it wrote them\n",
                (unsigned long long)run.owed_written);
    if (!o.quiet && claims_still_owed(run.claims))
        fprintf(stderr,
                "simdbloom dedup: %llu lines claimed by a killed worker were not in this input; "
                "the next run keeps looking for them\n",
                (unsigned long long)claims_still_owed(run.claims));
    claims_close(run.claims);
    line_writer_close(&run.out);
    table.ops->close(&table);
    if (stopped && !o.quiet)
        fprintf(stderr, "simdbloom dedup: stopped by a signal; output and state are complete up to "
                        "the last line read\n");
    return stopped && rc == EXIT_OK ? stop_exit_status() : rc;
}
