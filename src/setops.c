/* Set operations on whole filters: union, intersection, and fold (dividing the block count). */
#include <math.h>
#include <string.h>

#include "internal.h"

static int compatible(const sbloom_t *a, const sbloom_t *b)
{
    return a->layout == b->layout && a->bytes == b->bytes;
}

/* OR and AND of counters would not be sums or minimums of counts: the counting layout is refused
 * rather than given a meaning that loses counts. */
static int bitwise(const sbloom_t *f)
{
    return f->layout != SBLOOM_LAYOUT_COUNTING512 && f->layout != SBLOOM_LAYOUT_SCALABLE;
}

/* The item count a union or fold should carry: estimated from the fill, since keys present in
 * both inputs would otherwise be counted twice. */
static void reestimate_items(sbloom_t *f)
{
    sbloom_stats stats = sbloom_stats_init();
    sbloom_get_stats(f, &stats);
    f->items = isfinite(stats.estimated_items) ? (uint64_t)llround(stats.estimated_items) : 0;
}

static int combine(sbloom_t *dst, const sbloom_t *src, int intersect)
{
    if (!dst || !src)
        return SBLOOM_E_NULL;
    if (dst->readonly)
        return SBLOOM_E_READONLY;
    if (!bitwise(dst) || !bitwise(src))
        return SBLOOM_E_LAYOUT;
    if (!compatible(dst, src))
        return SBLOOM_E_INCOMPATIBLE;
    uint64_t *d = dst->blocks;
    const uint64_t *s = src->blocks;
    uint64_t words = dst->bytes / 8; /* blocks are 32 or 64 bytes: whole 64-bit words */
    if (intersect)
        for (uint64_t i = 0; i < words; i++)
            d[i] &= s[i];
    else
        for (uint64_t i = 0; i < words; i++)
            d[i] |= s[i];
    reestimate_items(dst);
    return SBLOOM_OK;
}

int sbloom_union(sbloom_t *dst, const sbloom_t *src)
{
    if (dst && src && !dst->readonly && dst->stages) /* scalable: stage by stage */
        return src->stages ? sbloom_scalable_union(dst, src) : SBLOOM_E_INCOMPATIBLE;
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
        if (sbloom_blocked_fpp(f->layout, f->bytes, mid) <= rate)
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
    if (!bitwise(filter))
        return SBLOOM_E_LAYOUT;
    if (factor == 0 || filter->nblocks % factor != 0)
        return SBLOOM_E_FACTOR;
    uint64_t nblocks = filter->nblocks / factor;
    sbloom_t *f;
    int rc = sbloom_filter_new(&f, nblocks * filter->block_bytes, filter->layout,
                               filter->planned_items, filter->planned_fpp, 0);
    if (rc != SBLOOM_OK)
        return rc;
    /* Block i of the result ORs source blocks i * factor ... i * factor + factor - 1. */
    uint64_t group = factor, words = filter->block_bytes / 8;
    const uint64_t *src = filter->blocks;
    uint64_t *dst = f->blocks;
    for (uint64_t b = 0; b < filter->nblocks; b++)
        for (uint64_t w = 0; w < words; w++)
            dst[(b / group) * words + w] |= src[b * words + w];
    reestimate_items(f);
    f->planned_items = capacity_at_rate(f, filter->planned_items, filter->planned_fpp);
    *out = f;
    return SBLOOM_OK;
}

size_t sbloom_fold_factors(const sbloom_t *filter, uint64_t *factors, size_t cap)
{
    size_t count = 0;
    if (!filter || !bitwise(filter))
        return 0;
    for (uint64_t f = 2; f <= 64 && f <= filter->nblocks; f++)
        if (filter->nblocks % f == 0) {
            if (factors && count < cap)
                factors[count] = f;
            count++;
        }
    return count;
}
