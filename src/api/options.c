/*
 * The options of sbloom_create_opts (create.c) read as their size allows (libbpf's OPTS habit: an
 * older caller's struct is shorter, a newer caller's longer with the fields this library does not
 * know left zero), and the filter they ask for made (simdbloom.h says what each option makes).
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "api.h"

#define DEFAULT_FPP 1e-6
#define DEFAULT_FIRST UINT64_C(1000000)

/* The caller's options in a struct of this library's size: SBLOOM_OK, or SBLOOM_E_INVALID for a
 * size shorter than the first field's end, or for fields past this library's that are set. */
int sbloom_read_options(const sbloom_opts *in, sbloom_opts *out)
{
    memset(out, 0, sizeof *out);
    if (in->size < offsetof(sbloom_opts, expected))
        return SBLOOM_E_INVALID;
    size_t known = in->size < sizeof *out ? in->size : sizeof *out;
    memcpy(out, in, known);
    for (size_t at = sizeof *out; at < in->size; at++)
        if (((const unsigned char *)in)[at] != 0)
            return SBLOOM_E_INVALID; /* an option of a newer library, set */
    return (out->flags & ~(SBLOOM_OPTS_CONCURRENT | SBLOOM_OPTS_ANY_FAMILY)) ? SBLOOM_E_INVALID
                                                                             : SBLOOM_OK;
}

/* The plan for n keys at p: of `layout`, or (0) the smallest bit layout, or with
 * SBLOOM_OPTS_ANY_FAMILY the smallest of every family. */
static int plan_with(const sbloom_opts *o, uint64_t n, double p, sbloom_plan *plan)
{
    if (o->layout)
        return sbloom_plan_for_layout(n, p, o->layout, plan);
    return (o->flags & SBLOOM_OPTS_ANY_FAMILY) ? sbloom_plan_any(n, p, plan)
                                               : sbloom_plan_for(n, p, plan);
}

static int valid_rate(double p)
{
    return p > 0.0 && p < 1.0;
}

/* A filter planned for n keys at p (plan_with), with the library's memory. */
static int planned(sbloom_t **out, const sbloom_opts *o, uint64_t n, double p)
{
    sbloom_plan plan = sbloom_plan_init();
    int rc = plan_with(o, n, p, &plan);
    if (rc != SBLOOM_OK)
        return rc;
    return sbloom_plain_new(out, plan.bytes, plan.layout, n, p, SBLOOM_OWNER_HEAP);
}

/* The image in the caller's memory: of bytes and layout, or planned for expected. */
static int in_memory(sbloom_t **out, const sbloom_opts *o, double p)
{
    if (o->periods || (o->bytes && o->expected) || (!o->bytes && !o->expected))
        return SBLOOM_E_INVALID; /* (windows and growing filters live in the library's memory) */
    if (o->bytes)
        return sbloom_image_new(out, o->memory, o->memory_size, o->bytes, o->layout, 0, NAN);
    sbloom_plan plan = sbloom_plan_init();
    int rc = plan_with(o, o->expected, p, &plan);
    if (rc != SBLOOM_OK)
        return rc;
    return sbloom_image_new(out, o->memory, o->memory_size, plan.bytes, plan.layout, o->expected,
                            p);
}

/* A window's periods and period from the options (layout windowed alone: 1 period of 1): 1, or 0
 * for options that make no window. */
static int window_args(const sbloom_opts *o, double p, uint32_t *periods, uint64_t *period)
{
    *periods = o->periods ? o->periods : 1;
    *period = o->periods ? o->period : 1;
    return valid_rate(p) && *periods <= SBLOOM_WINDOW_MAX_PERIODS && *period != 0 && !o->bytes &&
           (!o->layout || o->layout == SBLOOM_LAYOUT_WINDOWED);
}

/* A window: planned for expected keys a window, or growing from first. */
static int window(sbloom_t **out, const sbloom_opts *o, double p)
{
    uint32_t periods;
    uint64_t period;
    if (!window_args(o, p, &periods, &period))
        return SBLOOM_E_INVALID;
    if (o->expected)
        return sbloom_windowed_new(out, o->expected, p, periods, period, o->now,
                                   (o->flags & SBLOOM_OPTS_ANY_FAMILY) != 0);
    return sbloom_windowed_new_growing(out, o->first ? o->first : DEFAULT_FIRST, p, periods, period,
                                       o->now);
}

int sbloom_make(sbloom_t **out, const sbloom_opts *o)
{
    double p = o->fpp == 0.0 ? DEFAULT_FPP : o->fpp;
    if (o->memory)
        return in_memory(out, o, p);
    if (o->periods || o->layout == SBLOOM_LAYOUT_WINDOWED)
        return window(out, o, p);
    if (o->bytes) {
        if (o->expected)
            return SBLOOM_E_INVALID;
        if (!sbloom_layout_known(o->layout))
            return SBLOOM_E_LAYOUT;
        return sbloom_plain_new(out, o->bytes, o->layout, 0, NAN, SBLOOM_OWNER_HEAP);
    }
    if (o->layout == SBLOOM_LAYOUT_SCALABLE || !o->expected) {
        uint64_t first = o->expected ? o->expected : o->first ? o->first : DEFAULT_FIRST;
        return valid_rate(p)
                   ? sbloom_scalable_new(out, first, p, (o->flags & SBLOOM_OPTS_ANY_FAMILY) != 0)
                   : SBLOOM_E_INVALID;
    }
    return planned(out, o, o->expected, p);
}

int sbloom_plan_opts(const sbloom_opts *opts, sbloom_plan *out)
{
    if (!opts || !out)
        return SBLOOM_E_NULL;
    if (out->size < sizeof(sbloom_plan))
        return SBLOOM_E_INVALID;
    sbloom_opts o;
    int rc = sbloom_read_options(opts, &o);
    if (rc != SBLOOM_OK)
        return rc;
    double p = o.fpp == 0.0 ? DEFAULT_FPP : o.fpp;
    /* a size only a filter of a planned count has: not one in caller memory, of given bytes, or
     * growing (its size follows the keys that come) */
    if (o.memory || o.bytes || !o.expected || o.layout == SBLOOM_LAYOUT_SCALABLE || !valid_rate(p))
        return SBLOOM_E_INVALID;
    sbloom_plan plan = sbloom_plan_init();
    if (o.periods || o.layout == SBLOOM_LAYOUT_WINDOWED) {
        uint32_t periods;
        uint64_t period;
        if (!window_args(&o, p, &periods, &period))
            return SBLOOM_E_INVALID;
        rc = sbloom_windowed_plan(o.expected, p, periods, period,
                                  (o.flags & SBLOOM_OPTS_ANY_FAMILY) != 0, &plan);
    } else {
        rc = plan_with(&o, o.expected, p, &plan);
    }
    if (rc == SBLOOM_OK) {
        size_t callers_size = out->size; /* a newer caller's struct may be larger */
        *out = plan;
        out->size = callers_size;
    }
    return rc;
}
