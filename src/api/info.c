/* Public entry points that describe a filter: its geometry, plan, count, statistics, stages. */
#include <math.h>
#include <string.h>
#include <stdlib.h>

#include "../base/alloc.h"
#include "../core/driver.h"
#include "../modes/modes.h"
#include "../modes/parts.h"

/* Views sbloom_stage can give: more than any composite mode has cores (a growing window: up to
 * 40 windows of 16 generations). */
#define SBLOOM_MAX_VIEWS (40 * (SBLOOM_WINDOW_MAX_PERIODS + 1))

sbloom_layout sbloom_get_layout(const sbloom_t *filter)
{
    if (!filter)
        return (sbloom_layout)0;
    return filter->mode->reports_as ? filter->mode->reports_as : filter->layout;
}

uint64_t sbloom_bytes(const sbloom_t *filter)
{
    return filter ? filter->mode->bytes(filter) : 0;
}

size_t sbloom_prefetch_window(const sbloom_t *filter, int *fitted)
{
    if (fitted)
        *fitted = 0;
    uint64_t bytes = sbloom_bytes(filter);
    return bytes >= SBK_PREFETCH_MIN_BYTES ? sbloom_prefetch_window_for(bytes, fitted) : 0;
}

const void *sbloom_data(const sbloom_t *filter)
{
    return filter ? filter->core.blocks : NULL;
}

uint32_t sbloom_k(const sbloom_t *filter)
{
    return filter ? filter->core.k : 0;
}

uint64_t sbloom_items(const sbloom_t *filter)
{
    return filter ? filter->mode->items(filter) : 0;
}

double sbloom_bits_per_key(const sbloom_t *filter, uint64_t n)
{
    if (!filter || n == 0)
        return NAN;
    return (double)sbloom_bytes(filter) * 8.0 / (double)n;
}

int sbloom_is_growing(const sbloom_t *filter)
{
    return filter && (filter->mode == &sbloom_mode_scalable ||
                      (filter->mode == &sbloom_mode_windowed && sbloom_windowed_growing(filter)));
}

uint64_t sbloom_planned_items(const sbloom_t *filter)
{
    return filter ? filter->mode->capacity(filter) : 0;
}

double sbloom_planned_fpp(const sbloom_t *filter)
{
    return filter ? filter->planned_fpp : NAN;
}

int sbloom_is_readonly(const sbloom_t *filter)
{
    return filter ? filter->readonly : 0;
}

const char *sbloom_filter_isa(const sbloom_t *filter)
{
    return filter ? filter->isa : NULL;
}

/* The statistics from every block (sampled 0) or from at most 4,096 evenly spaced. */
static int stats_of(const sbloom_t *filter, sbloom_stats *out, int sampled)
{
    if (!filter || !out)
        return SBLOOM_E_NULL;
    if (out->size < sizeof(sbloom_stats))
        return SBLOOM_E_INVALID;
    return filter->mode->stats(filter, sampled, out);
}

void sbloom_stats_reset(sbloom_stats *stats)
{
    if (stats) { /* every byte, padding included, as the header's initializer's memset */
        memset(stats, 0, sizeof *stats);
        stats->size = sizeof *stats;
    }
}

int sbloom_get_stats(const sbloom_t *filter, sbloom_stats *out)
{
    return stats_of(filter, out, 0);
}

int sbloom_estimate(const sbloom_t *filter, sbloom_stats *out)
{
    return stats_of(filter, out, 1);
}

int sbloom_second_line_shares(const sbloom_t *filter, double *absent_lookups, double *spare_keys)
{
    if (!filter || !absent_lookups || !spare_keys)
        return SBLOOM_E_NULL;
    *absent_lookups = *spare_keys = 0;
    if (filter->mode->second_line) {
        filter->mode->second_line(filter, absent_lookups, spare_keys);
    } else if (filter->mode->cores) { /* each core weighed by its keys */
        sbloom_second_line_sum sum = sbloom_second_line_none();
        for (uint32_t i = 0; i < filter->mode->cores(filter); i++) {
            const sbloom_part *part = filter->mode->core_at(filter, i);
            if (part)
                sbloom_second_line_add(&sum, &part->core, part->items);
        }
        sbloom_second_line_shares_of(&sum, absent_lookups, spare_keys);
    } else if (filter->mode->has_core) {
        sbloom_core_second_line(&filter->core, absent_lookups, spare_keys);
    }
    return SBLOOM_OK;
}

/* ---- Stages ---- */

uint32_t sbloom_stages(const sbloom_t *filter)
{
    if (!filter)
        return 0;
    return filter->mode->cores ? filter->mode->cores(filter) : 1;
}

/* A composite filter's core i, as a read-only plain filter over its blocks: made on the first
 * call, its count brought up to date on each, freed with the filter (or made again when the core
 * was dropped and made anew). */
const sbloom_t *sbloom_stage(const sbloom_t *filter, uint32_t i)
{
    if (!filter)
        return NULL;
    if (!filter->mode->cores)
        return i == 0 ? filter : NULL;
    if (i >= filter->mode->cores(filter))
        return NULL;
    sbloom_t *f = (sbloom_t *)filter; /* the views are a cache: the filter itself is unchanged */
    if (!f->views) {
        f->views = sbloom_calloc(SBLOOM_MAX_VIEWS, sizeof *f->views);
        if (!f->views)
            return NULL;
        f->nviews = SBLOOM_MAX_VIEWS;
    }
    if (i >= f->nviews)
        return NULL;
    const sbloom_part *part = filter->mode->core_at(filter, i);
    if (!part)
        return NULL;
    sbloom_t *view = f->views[i];
    if (view && (view->core.blocks != part->core.blocks || view->core.bytes != part->core.bytes ||
                 view->core.layout != part->core.layout)) { /* dropped and made again */
        sbloom_object_free(view);
        view = f->views[i] = NULL;
    }
    if (!view && sbloom_plain_view(&f->views[i], &part->core, part->items, part->planned_items,
                                   part->planned_fpp) != SBLOOM_OK)
        return NULL;
    f->views[i]->items = part->items;
    return f->views[i];
}
