/* Public entry points for set operations on whole filters: union, intersection, and fold
 * (dividing the block count). */
#include <math.h>
#include <string.h>

#include "../modes/modes.h"

static int combine(sbloom_t *dst, const sbloom_t *src, int intersect)
{
    if (!dst || !src)
        return SBLOOM_E_NULL;
    if (dst->readonly)
        return SBLOOM_E_READONLY;
    return dst->mode->combine(dst, src, intersect);
}

int sbloom_union(sbloom_t *dst, const sbloom_t *src)
{
    return combine(dst, src, 0);
}

int sbloom_intersect(sbloom_t *dst, const sbloom_t *src)
{
    return combine(dst, src, 1);
}

/* The largest item count, up to `limit`, at which the filter keeps the planned rate: the plan a
 * smaller filter can honestly carry (0 when the original had no plan). */
static uint64_t capacity_at_rate(const sbloom_t *f, uint64_t limit, double rate)
{
    if (limit == 0)
        return 0;
    uint64_t lo = 0, hi = limit;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo - 1) / 2 + 1; /* above lo, at most hi: never wraps */
        if (sbloom_blocked_fpp(f->layout, f->core.bytes, mid) <= rate)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo > 0 ? lo : 1;
}

int sbloom_fold(sbloom_t **out, const sbloom_t *filter, uint64_t factor)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (!filter)
        return SBLOOM_E_NULL;
    if (!sbloom_layout_is_bits(filter->layout))
        return SBLOOM_E_LAYOUT;
    const sbloom_core *from = &filter->core;
    if (factor == 0 || from->nblocks % factor != 0)
        return SBLOOM_E_FACTOR;
    uint64_t nblocks = from->nblocks / factor;
    sbloom_t *f;
    int rc = sbloom_plain_new(&f, nblocks * from->block_bytes, filter->layout,
                              filter->planned_items, filter->planned_fpp, SBLOOM_OWNER_HEAP);
    if (rc != SBLOOM_OK)
        return rc;
    /* Block i of the result ORs source blocks i * factor ... i * factor + factor - 1. */
    uint64_t group = factor, words = from->block_bytes / 8;
    const uint64_t *src = from->blocks;
    uint64_t *dst = f->core.blocks;
    for (uint64_t b = 0; b < from->nblocks; b++)
        for (uint64_t w = 0; w < words; w++)
            dst[(b / group) * words + w] |= src[b * words + w];
    f->items = sbloom_core_estimated_items(&f->core);
    f->planned_items = capacity_at_rate(f, filter->planned_items, filter->planned_fpp);
    *out = f;
    return SBLOOM_OK;
}

size_t sbloom_fold_factors(const sbloom_t *filter, uint64_t *factors, size_t cap)
{
    size_t count = 0;
    if (!filter || !sbloom_layout_is_bits(filter->layout))
        return 0;
    for (uint64_t f = 2; f <= 64 && f <= filter->core.nblocks; f++)
        if (filter->core.nblocks % f == 0) {
            if (factors && count < cap)
                factors[count] = f;
            count++;
        }
    return count;
}
