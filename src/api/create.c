/* Public entry points: making, copying, clearing and freeing filters, and their modes. */
#include <math.h>
#include <unistd.h>

#include "api.h"

int sbloom_create_opts(sbloom_t **out, const sbloom_opts *opts)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (!opts)
        return SBLOOM_E_NULL;
    sbloom_opts o;
    int rc = sbloom_read_options(opts, &o);
    if (rc == SBLOOM_OK)
        rc = sbloom_make(out, &o);
    if (rc == SBLOOM_OK && (o.flags & SBLOOM_OPTS_CONCURRENT) &&
        (rc = sbloom_set_concurrent(*out, 1)) != SBLOOM_OK) {
        sbloom_free(*out);
        *out = NULL;
    }
    return rc;
}

/* The constructors before sbloom_create_opts: their arguments as options. A zero that the options
 * read as "not given" (n, first) is an error here, as it always was. */

/* The call with these options; *out NULL on failure. */
static int create_with(sbloom_t **out, const sbloom_opts *opts)
{
    return sbloom_create_opts(out, opts);
}

/* The checks every constructor makes first: out given (and cleared), n and p in range. */
static int checked(sbloom_t **out, uint64_t n, double p)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    return n == 0 || !(p > 0.0 && p < 1.0) ? SBLOOM_E_INVALID : SBLOOM_OK;
}

int sbloom_create(sbloom_t **out, uint64_t n, double p)
{
    int rc = checked(out, n, p);
    sbloom_opts o = sbloom_opts_init();
    o.expected = n;
    o.fpp = p;
    return rc != SBLOOM_OK ? rc : create_with(out, &o);
}

int sbloom_create_for_layout(sbloom_t **out, uint64_t n, double p, sbloom_layout layout)
{
    int rc = checked(out, n, p);
    sbloom_opts o = sbloom_opts_init();
    o.expected = n;
    o.fpp = p;
    o.layout = layout;
    if (rc == SBLOOM_OK && !sbloom_layout_known(layout))
        rc = SBLOOM_E_LAYOUT;
    return rc != SBLOOM_OK ? rc : create_with(out, &o);
}

int sbloom_create_bytes(sbloom_t **out, uint64_t bytes, sbloom_layout layout)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (!sbloom_layout_known(layout) || sbloom_layout_composite(layout))
        return SBLOOM_E_LAYOUT;
    sbloom_opts o = sbloom_opts_init();
    o.bytes = bytes ? bytes : 1; /* (a filter of no bytes is one block, as it always was) */
    o.layout = layout;
    return create_with(out, &o);
}

int sbloom_create_scalable(sbloom_t **out, uint64_t first_items, double p)
{
    int rc = checked(out, first_items, p);
    sbloom_opts o = sbloom_opts_init();
    o.first = first_items;
    o.fpp = p;
    return rc != SBLOOM_OK ? rc : create_with(out, &o);
}

/* A window's arguments in range: periods 1 to SBLOOM_WINDOW_MAX_PERIODS, a period. */
static int window_checked(sbloom_t **out, uint64_t n, double p, uint32_t periods, uint64_t period)
{
    int rc = checked(out, n, p);
    if (rc == SBLOOM_OK && (periods == 0 || periods > SBLOOM_WINDOW_MAX_PERIODS || period == 0))
        rc = SBLOOM_E_INVALID;
    return rc;
}

int sbloom_create_windowed(sbloom_t **out, uint64_t n, double p, uint32_t periods, uint64_t period,
                           uint64_t now)
{
    int rc = window_checked(out, n, p, periods, period);
    sbloom_opts o = sbloom_opts_init();
    o.expected = n;
    o.fpp = p;
    o.periods = periods;
    o.period = period;
    o.now = now;
    return rc != SBLOOM_OK ? rc : create_with(out, &o);
}

int sbloom_create_windowed_scalable(sbloom_t **out, uint64_t first_n, double p, uint32_t periods,
                                    uint64_t period, uint64_t now)
{
    int rc = window_checked(out, first_n, p, periods, period);
    sbloom_opts o = sbloom_opts_init();
    o.first = first_n;
    o.fpp = p;
    o.periods = periods;
    o.period = period;
    o.now = now;
    return rc != SBLOOM_OK ? rc : create_with(out, &o);
}

int sbloom_create_in(sbloom_t **out, void *buf, size_t cap, uint64_t bytes, sbloom_layout layout)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (!buf)
        return SBLOOM_E_NULL;
    sbloom_opts o = sbloom_opts_init();
    o.memory = buf;
    o.memory_size = cap;
    o.bytes = bytes ? bytes : 1;
    o.layout = layout;
    return create_with(out, &o);
}

int sbloom_create_in_planned(sbloom_t **out, void *buf, size_t cap, uint64_t n, double fpp,
                             sbloom_layout layout)
{
    int rc = checked(out, n, fpp);
    if (rc == SBLOOM_OK && !buf)
        rc = SBLOOM_E_NULL;
    sbloom_opts o = sbloom_opts_init();
    o.memory = buf;
    o.memory_size = cap;
    o.expected = n;
    o.fpp = fpp;
    o.layout = layout;
    return rc != SBLOOM_OK ? rc : create_with(out, &o);
}

/* The checks of a call that moves a window's clock: SBLOOM_OK, or the error. */
static int clock_may_move(const sbloom_t *filter)
{
    if (!filter)
        return SBLOOM_E_NULL;
    if (filter->mode != &sbloom_mode_windowed)
        return SBLOOM_E_LAYOUT;
    return filter->readonly ? SBLOOM_E_READONLY : SBLOOM_OK;
}

int sbloom_advance(sbloom_t *filter, uint64_t now)
{
    int rc = clock_may_move(filter);
    return rc != SBLOOM_OK ? rc : sbloom_windowed_advance(filter, now);
}

int sbloom_rewind(sbloom_t *filter, uint64_t now)
{
    int rc = clock_may_move(filter);
    return rc != SBLOOM_OK ? rc : sbloom_windowed_rewind(filter, now);
}

int sbloom_get_window(const sbloom_t *filter, sbloom_window *out)
{
    if (!filter || !out)
        return SBLOOM_E_NULL;
    if (out->size < sizeof(sbloom_window))
        return SBLOOM_E_INVALID;
    if (filter->mode != &sbloom_mode_windowed)
        return SBLOOM_E_LAYOUT;
    sbloom_windowed_describe(filter, out);
    return SBLOOM_OK;
}

int sbloom_clone(sbloom_t **out, const sbloom_t *filter)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (!filter)
        return SBLOOM_E_NULL;
    return filter->mode->clone(out, filter);
}

void sbloom_free(sbloom_t *filter)
{
    if (filter)
        sbloom_object_free(filter);
}

int sbloom_clear(sbloom_t *filter)
{
    if (!filter)
        return SBLOOM_E_NULL;
    if (filter->readonly)
        return SBLOOM_E_READONLY;
    filter->mode->clear(filter);
    return SBLOOM_OK;
}

int sbloom_set_concurrent(sbloom_t *filter, int on)
{
    if (!filter)
        return SBLOOM_E_NULL;
    if (filter->mode == &sbloom_mode_windowed) /* its generations' own locks */
        return filter->readonly ? SBLOOM_E_READONLY : sbloom_windowed_set_concurrent(filter, on);
    if (!on)
        return sbloom_concurrent_leave(filter);
    if (!filter->mode->has_core)
        return SBLOOM_E_LAYOUT; /* stages: one writer */
    return sbloom_concurrent_enter(filter);
}

int sbloom_is_concurrent(const sbloom_t *filter)
{
    if (filter && filter->mode == &sbloom_mode_windowed)
        return sbloom_windowed_is_concurrent(filter);
    return filter ? filter->mode == &sbloom_mode_concurrent : 0;
}

/* Test hook (hidden: only programs linked with the static library reach it): the lock words of a
 * concurrent filter held now. Called when no batch is running, it must be 0: a lock left held
 * after a batch returned (a retry path that forgot to unlock) fails a test at once, instead of
 * hanging the next thread that wants that lock only when a preemption lands there. */
uint64_t sbloom_test_locks_held(const sbloom_t *filter)
{
    if (!filter)
        return 0;
    return filter->mode == &sbloom_mode_windowed ? sbloom_windowed_locks_held(filter)
                                                 : sbloom_concurrent_locks_held(filter);
}

int sbloom_set_threads(sbloom_t *filter, unsigned threads)
{
    if (!filter)
        return SBLOOM_E_NULL;
    if (threads == 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        threads = online > 0 ? (unsigned)online : 1;
    }
    filter->threads = threads < SBLOOM_MAX_THREADS ? threads : SBLOOM_MAX_THREADS;
    return SBLOOM_OK;
}
