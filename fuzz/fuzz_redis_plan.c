/*
 * fuzz_redis_plan: arbitrary text as the plan a fleet filter's meta key holds (src/redis/plan.c).
 * Anyone who can write the keyspace can write it. Nothing may crash; a plan that is accepted must
 * cut the filter into at least one shard, every block must fall in a shard that exists, no shard
 * may exceed a Redis string, and the plan written out again must read back the same (a window's
 * too: version 3, and only it, has one).
 */
#include <math.h>
#include <stdio.h>

#include "fuzz_common.h"
#include "../src/redis/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char text[512], why[300];
    size_t len = size < sizeof text - 1 ? size : sizeof text - 1;
    memcpy(text, data, len);
    text[len] = '\0';
    rp_plan plan;
    if (rp_parse(text, &plan, why, sizeof why) != RP_OK)
        return 0;
    uint64_t block_bytes = sbloom_layout_block_bytes(plan.layout);
    uint64_t nblocks = plan.bytes / block_bytes, shards = rp_shards(&plan);
    if (!rp_bit_layout(plan.layout) || nblocks == 0 || plan.bytes % block_bytes != 0 ||
        plan.shard_blocks == 0 || plan.shard_blocks > nblocks || shards == 0 || shards > 65536 ||
        (shards - 1) * plan.shard_blocks >= nblocks || shards * plan.shard_blocks < nblocks ||
        plan.shard_blocks * block_bytes > (512u << 20))
        abort();
    if (plan.planned_items ? !(plan.planned_fpp > 0 && plan.planned_fpp < 1)
                           : !isnan(plan.planned_fpp))
        abort();
    char again[512];
    rp_plan back;
    rp_format(&plan, again, sizeof again);
    if (rp_parse(again, &back, why, sizeof why) != RP_OK || back.layout != plan.layout ||
        back.bytes != plan.bytes || back.shard_blocks != plan.shard_blocks ||
        back.planned_items != plan.planned_items || back.version != plan.version ||
        back.periods != plan.periods || back.period != plan.period ||
        (plan.version == RP_WINDOWED_VERSION) != (plan.periods != 0) ||
        (plan.planned_items && back.planned_fpp != plan.planned_fpp))
        abort();
    return 0;
}
