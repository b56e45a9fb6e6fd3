/* Statistics of a core: fill, the rate a random key meets, and the items the fill implies, each
 * computed by the core's family from its lines (src/base/families/). */
#include <math.h>

#include "core.h"

void sbloom_core_second_line(const sbloom_core *c, double *absent_lookups, double *spare_keys)
{
    *absent_lookups = *spare_keys = 0;
    const sbloom_family *family = sbloom_family_of(c->layout);
    if (family->second_line && c->blocks)
        family->second_line(c->layout, c->blocks, c->nblocks, absent_lookups, spare_keys);
}

void sbloom_second_line_add(sbloom_second_line_sum *sum, const sbloom_core *c, uint64_t keys)
{
    double absent, spare;
    sbloom_core_second_line(c, &absent, &spare);
    sum->reaches_none *= 1 - absent;
    sum->spare_keys += spare * (double)keys;
    sum->keys += (double)keys;
}

void sbloom_second_line_shares_of(const sbloom_second_line_sum *sum, double *absent_lookups,
                                  double *spare_keys)
{
    *absent_lookups = 1 - sum->reaches_none;
    *spare_keys = sum->keys > 0 ? sum->spare_keys / sum->keys : 0;
}

/* Blocks the estimate reads at most: 4096 x 64 bytes = 256 KiB, a few microseconds. */
#define ESTIMATE_BLOCKS 4096

void sbloom_core_stats(const sbloom_core *c, int sampled, sbloom_stats *out)
{
    uint64_t stride = sampled ? c->nblocks / ESTIMATE_BLOCKS : 1;
    sbloom_family_of(c->layout)->scan(c->layout, c->blocks, c->nblocks, stride ? stride : 1, out);
}

uint64_t sbloom_core_estimated_items(const sbloom_core *c)
{
    sbloom_stats stats = sbloom_stats_init();
    sbloom_core_stats(c, 0, &stats);
    return isfinite(stats.estimated_items) ? (uint64_t)llround(stats.estimated_items) : 0;
}
