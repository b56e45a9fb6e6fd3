/*
 * dedup's tables (dedup.h): where the lines seen are kept, one back-end each.
 *   memory    a filter made for the run (planned, growing or windowed), gone at its end
 *   state     --state FILE: loaded if it exists (its plan checked against the command line), saved
 *             crash-safely at the end and every --checkpoint seconds, the output flushed and
 *             synced first, so that the saved state never knows a line that was not written
 *   shared    --shared FILE: one file mapped by every worker in concurrent mode, created by the
 *             first from the plan, its header brought up to date by the last to leave
 *   redis     --redis: the fleet's filter in a Redis Cluster (redis.c); the local filter only
 *             hashes lines
 */
#define _XOPEN_SOURCE 700
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dedup.h"

/* A new filter: windowed with --forget-after, planned when --expect (or --layout) is given, else
 * scalable. */
static int create_for_dedup(const cli_options *o, sbloom_t **filter)
{
    if (o->forget_after)
        return create_windowed(o, filter, 1);
    if (o->expect_given || (layout_given(o) && !o->bloom_layout))
        return create_planned(o, filter, 1);
    return create_growing(o, filter, DEDUP_FIRST_STAGE);
}

/* A filter's plan in words: "LAYOUT for N items at rate P", a window's length and growth said. */
static const char *plan_words(const sbloom_t *f, char *out, size_t cap)
{
    sbloom_window w = sbloom_window_init();
    int windowed = sbloom_get_window(f, &w) == SBLOOM_OK;
    char window[64] = "";
    if (windowed)
        snprintf(window, sizeof window, " (forgets after %llu s%s)",
                 (unsigned long long)(w.period * w.periods),
                 sbloom_is_growing(f) ? ", growing" : "");
    snprintf(out, cap, "%s%s for %llu items%s at rate %.3g",
             sbloom_layout_name(sbloom_get_layout(f)), window,
             (unsigned long long)sbloom_planned_items(f), windowed ? " a window" : "",
             sbloom_planned_fpp(f));
    return out;
}

/* An existing state given a plan (--expect, --fpp, --layout, --forget-after): the plan must be
 * the file's, as with --redis; a state made from another plan is refused, naming both, rather
 * than used with a rate the command line did not ask for. The same plan is said nothing.
 * --forget-after alone asks for the file's window only, whatever its plan (as add and query). */
static int check_state_plan(const cli_options *o, sbloom_t *filter)
{
    if (!(o->expect_given || o->fpp_given || layout_given(o)))
        return check_forget_after(o, o->state, filter);
    sbloom_t *wanted = NULL;
    int rc = create_for_dedup(o, &wanted);
    if (rc != EXIT_OK)
        return rc;
    /* a growing window has grown from its first plan: its rate and growing say the plan */
    int growing = sbloom_is_growing(wanted) && sbloom_get_layout(wanted) == SBLOOM_LAYOUT_WINDOWED;
    int same = sbloom_get_layout(wanted) == sbloom_get_layout(filter) &&
               sbloom_is_growing(wanted) == sbloom_is_growing(filter) &&
               (growing || sbloom_planned_items(wanted) == sbloom_planned_items(filter)) &&
               sbloom_planned_fpp(wanted) == sbloom_planned_fpp(filter) &&
               (sbloom_get_layout(filter) == SBLOOM_LAYOUT_SCALABLE || growing ||
                sbloom_bytes(wanted) == sbloom_bytes(filter));
    sbloom_window w_file = sbloom_window_init(), w_wanted = sbloom_window_init();
    if (same && sbloom_get_window(filter, &w_file) == SBLOOM_OK &&
        sbloom_get_window(wanted, &w_wanted) == SBLOOM_OK)
        same = w_file.period == w_wanted.period && w_file.periods == w_wanted.periods;
    if (!same) {
        char has[160], asks[160];
        fprintf(stderr,
                "simdbloom: %s exists with layout %s; this run asks for layout %s (leave out "
                "--expect, --fpp, --layout and --forget-after to use the file as it is, or give "
                "another --state)\n",
                o->state, plan_words(filter, has, sizeof has),
                plan_words(wanted, asks, sizeof asks));
    }
    sbloom_free(wanted);
    return same ? EXIT_OK : EXIT_RUNTIME;
}

/* The state filter if its file exists, else a new one. */
static int open_state(const cli_options *o, sbloom_t **filter)
{
    if (!o->quiet)
        stale_temporaries_warn(o->state);
    if (access(o->state, F_OK) != 0)
        return create_for_dedup(o, filter);
    int rc = load_filter(o->state, filter);
    if (rc != SBLOOM_OK)
        return filter_error("load", o->state, rc);
    if ((rc = check_state_plan(o, *filter)) != EXIT_OK ||
        (rc = window_to_now(o->state, *filter, 1)) != EXIT_OK) {
        sbloom_free(*filter);
        *filter = NULL;
    }
    return rc;
}

/* --shared: the live filter file, created from the plan by whichever process gets there first
 * (under the exclusive lock), then mapped by every process under a shared lock. */
static int open_shared(const cli_options *o, int lock, sbloom_t **filter)
{
    if (access(o->shared, F_OK) != 0) {
        if (!o->expect_given) {
            fprintf(stderr,
                    "simdbloom: %s does not exist yet: give --expect N (the distinct lines all "
                    "the workers will see) and --fpp to create it; a shared filter has a fixed "
                    "size and does not grow\n",
                    o->shared);
            return EXIT_RUNTIME;
        }
        /* the only holder of the lock while it creates (this worker may hold it shared: the one
         * it waited for made no file), and the file looked for again under it */
        if (filter_lock_change(lock, LOCK_FILTER_EXCLUSIVE, o->no_wait) != EXIT_OK) {
            fprintf(stderr, "simdbloom: cannot lock %s.lock to create it\n", o->shared);
            return EXIT_RUNTIME;
        }
    }
    if (access(o->shared, F_OK) != 0) {
        sbloom_t *made = NULL;
        /* (bit layouts: the workers share it in concurrent mode, which fingerprints lack) */
        int rc = o->forget_after ? create_windowed(o, &made, 0) : create_planned(o, &made, 0);
        if (rc != EXIT_OK)
            return rc;
        int saved = sbloom_save(made, o->shared);
        sbloom_free(made);
        if (saved != SBLOOM_OK)
            return filter_error("create", o->shared, saved);
    }
    if (filter_lock_change(lock, LOCK_FILTER_SHARED, 0) != EXIT_OK) {
        fprintf(stderr, "simdbloom: cannot lock %s.lock\n", o->shared);
        return EXIT_RUNTIME;
    }
    int rc = sbloom_map(filter, o->shared, SBLOOM_OPEN_WRITE | SBLOOM_OPEN_CONCURRENT);
    if (rc == SBLOOM_E_LAYOUT) {
        fprintf(stderr,
                "simdbloom: %s is a counting, fingerprint or scalable filter (or a windowed one "
                "of more than 3 periods); --shared takes fixed-size bit filters and "
                "--forget-after's\n",
                o->shared);
        return EXIT_RUNTIME;
    }
    if (rc != SBLOOM_OK)
        return filter_error("map", o->shared, rc);
    if ((rc = check_forget_after(o, o->shared, *filter)) != EXIT_OK) {
        sbloom_free(*filter);
        *filter = NULL;
        return rc;
    }
    if ((rc = window_to_now(o->shared, *filter, 1)) != EXIT_OK) {
        sbloom_free(*filter);
        *filter = NULL;
    }
    return rc;
}

/* The end of a --shared run: the last process to leave (no other holds the lock) brings the
 * file's header up to date, so that it is a valid filter file again. A file replaced or removed
 * while the run had it mapped kept none of the run's lines: said, exit 1. */
static int close_shared(const char *path, int lock, sbloom_t *filter, const struct stat *mapped)
{
    struct stat now;
    if (stat(path, &now) != 0 || now.st_ino != mapped->st_ino || now.st_dev != mapped->st_dev) {
        fprintf(stderr,
                "simdbloom: %s was replaced or removed by another process while this run had it "
                "mapped: the lines this run wrote are not in the file now there (the same "
                "command run again writes them again)\n",
                path);
        return EXIT_RUNTIME;
    }
    int rc = EXIT_OK;
    if (filter_lock_change(lock, LOCK_FILTER_EXCLUSIVE, 1) == EXIT_OK) {
        int synced = sbloom_sync(filter);
        if (synced != SBLOOM_OK)
            rc = filter_error("sync", path, synced);
    }
    return rc;
}

/* ---- memory ---- */

static int memory_open(dedup_table *t)
{
    return create_for_dedup(t->o, &t->filter);
}

static void filter_close(dedup_table *t)
{
    sbloom_free(t->filter);
    t->filter = NULL;
    filter_unlock(t->lock);
    t->lock = -1;
}

static const dedup_table_ops memory_table = {
    .name = "memory", .open = memory_open, .close = filter_close};

/* ---- state ---- */

static int state_open(dedup_table *t)
{
    const cli_options *o = t->o;
    t->path = o->state;
    int rc = filter_lock(o->state, "dedup", LOCK_FILTER_EXCLUSIVE, o->no_wait, o->quiet, &t->lock);
    if (rc == EXIT_OK && (rc = open_state(o, &t->filter)) != EXIT_OK)
        filter_close(t);
    t->last_saved = now_seconds();
    return rc;
}

/* Flush (and fsync, when the output is a file) first, then save: the state never knows a line
 * that was not written, even across a power cut. */
static int state_save(dedup_table *t, line_writer *out)
{
    if (line_writer_sync(out) < 0)
        return EXIT_RUNTIME;
    int rc = sbloom_save(t->filter, t->path);
    if (rc != SBLOOM_OK)
        return filter_error("save", t->path, rc);
    t->last_saved = now_seconds();
    return EXIT_OK;
}

static int state_checkpoint(dedup_table *t, line_writer *out)
{
    double every = t->o->checkpoint;
    return every > 0 && now_seconds() - t->last_saved >= every ? state_save(t, out) : EXIT_OK;
}

/* Saved after a read error too (every line the state holds was written out), never after a write
 * error: a state must not know lines never written. */
static int state_finish(dedup_table *t, line_writer *out, int written)
{
    return written ? state_save(t, out) : EXIT_OK;
}

static const dedup_table_ops state_table = {.name = "state",
                                            .open = state_open,
                                            .after_batch = state_checkpoint,
                                            .finish = state_finish,
                                            .close = filter_close};

/* ---- shared ---- */

/* --shared workers hold the lock together; only the one that creates the file holds it alone,
 * while it does (open_shared). A worker that finds the file absent and the lock held (by the
 * worker creating it, as a rule) waits for it as the others do, for the shared lock: waiting for
 * the exclusive one would wait for the whole run of every worker. */
static int shared_open(dedup_table *t)
{
    const cli_options *o = t->o;
    t->path = o->shared;
    int mode = access(o->shared, F_OK) == 0 ? LOCK_FILTER_SHARED : LOCK_FILTER_EXCLUSIVE;
    int tried = 0;
    if (mode == LOCK_FILTER_EXCLUSIVE) {
        if ((tried = filter_lock_try(o->shared, "dedup --shared", mode, &t->lock)) < 0)
            return EXIT_RUNTIME;
        if (!tried)
            mode = LOCK_FILTER_SHARED;
    }
    int rc = EXIT_OK;
    if (!tried && (rc = filter_lock(o->shared, "dedup --shared", mode, o->no_wait, o->quiet,
                                    &t->lock)) != EXIT_OK)
        return rc;
    if ((rc = open_shared(o, t->lock, &t->filter)) != EXIT_OK) {
        filter_close(t);
        return rc;
    }
    stat(o->shared, &t->mapped);
    stop_on_mapping_failure(o->shared);
    return EXIT_OK;
}

static int shared_finish(dedup_table *t, line_writer *out, int written)
{
    (void)out;
    (void)written;
    return close_shared(t->path, t->lock, t->filter, &t->mapped);
}

static const dedup_table_ops shared_table = {.name = "shared",
                                             .shared = 1,
                                             .open = shared_open,
                                             .finish = shared_finish,
                                             .close = filter_close};

/* ---- redis ---- */

#ifdef SIMDBLOOM_WITH_REDIS
static int redis_open(dedup_table *t)
{
    return fleet_open(t->o, &t->fleet, &t->filter);
}

static void redis_close(dedup_table *t)
{
    fleet_close(t->fleet);
    t->fleet = NULL;
    sbloom_free(t->filter);
    t->filter = NULL;
}

static const dedup_table_ops redis_table = {
    .name = "redis", .shared = 1, .open = redis_open, .close = redis_close};
#endif

const dedup_table_ops *dedup_table_for(const cli_options *o)
{
    if (o->state)
        return &state_table;
    if (o->shared)
        return &shared_table;
#ifdef SIMDBLOOM_WITH_REDIS
    if (o->redis)
        return &redis_table;
#endif
    return &memory_table;
}
