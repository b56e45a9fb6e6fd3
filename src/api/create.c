/* Public entry points: making, copying, clearing and freeing filters, and their modes. */
#include <math.h>
#include <unistd.h>

#include "../modes/modes.h"

int sbloom_create(sbloom_t **out, uint64_t n, double p)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    sbloom_plan plan = sbloom_plan_init();
    int rc = sbloom_plan_for(n, p, &plan);
    if (rc != SBLOOM_OK)
        return rc;
    return sbloom_plain_new(out, plan.bytes, plan.layout, n, p, SBLOOM_OWNER_HEAP);
}

int sbloom_create_for_layout(sbloom_t **out, uint64_t n, double p, sbloom_layout layout)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (layout == SBLOOM_LAYOUT_SCALABLE)
        return sbloom_create_scalable(out, n, p);
    if (layout == SBLOOM_LAYOUT_WINDOWED)
        return sbloom_create_windowed(out, n, p, 1, 1, 0);
    sbloom_plan plan = sbloom_plan_init();
    int rc = sbloom_plan_for_layout(n, p, layout, &plan);
    if (rc != SBLOOM_OK)
        return rc;
    return sbloom_plain_new(out, plan.bytes, plan.layout, n, p, SBLOOM_OWNER_HEAP);
}

int sbloom_create_bytes(sbloom_t **out, uint64_t bytes, sbloom_layout layout)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (!sbloom_layout_known(layout))
        return SBLOOM_E_LAYOUT;
    return sbloom_plain_new(out, bytes, layout, 0, NAN, SBLOOM_OWNER_HEAP);
}

int sbloom_create_scalable(sbloom_t **out, uint64_t first_items, double p)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (first_items == 0 || !(p > 0.0 && p < 1.0))
        return SBLOOM_E_INVALID;
    return sbloom_scalable_new(out, first_items, p);
}

int sbloom_create_windowed(sbloom_t **out, uint64_t n, double p, uint32_t periods, uint64_t period,
                           uint64_t now)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (n == 0 || !(p > 0.0 && p < 1.0) || periods == 0 || periods > SBLOOM_WINDOW_MAX_PERIODS ||
        period == 0)
        return SBLOOM_E_INVALID;
    return sbloom_windowed_new(out, n, p, periods, period, now);
}

int sbloom_create_windowed_scalable(sbloom_t **out, uint64_t first_n, double p, uint32_t periods,
                                    uint64_t period, uint64_t now)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (first_n == 0 || !(p > 0.0 && p < 1.0) || periods == 0 ||
        periods > SBLOOM_WINDOW_MAX_PERIODS || period == 0)
        return SBLOOM_E_INVALID;
    return sbloom_windowed_new_growing(out, first_n, p, periods, period, now);
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
