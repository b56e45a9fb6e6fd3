/* The fleet filter's stored plan: formatting, parsing, and the checks between its fields. */
#include "plan.h"

#include <math.h>
#include <stdio.h>

#define SHARD_MAX_BYTES (UINT64_C(64) << 20)
#define SHARD_MIN_COUNT 64
/* What a stored plan may ask for at most: a Redis string holds 512 MiB, and this client's plans
 * have at most 1,024 shards (64 GiB in 64 MiB shards). */
#define SHARD_LIMIT_BYTES (UINT64_C(512) << 20)
#define SHARD_LIMIT_COUNT 65536
/* Plans come from sbloom_plan_for_layout: their bytes meet the rate at the planned items. The
 * slack allows for another C library's last bit in log and lgamma. */
#define PLAN_SLACK 1.000001

int rp_bit_layout(sbloom_layout layout)
{
    return layout == SBLOOM_LAYOUT_PARQUET || layout == SBLOOM_LAYOUT_BLOCK512_K8 ||
           layout == SBLOOM_LAYOUT_BLOCK512_K16;
}

void rp_format(const rp_plan *plan, char *buf, size_t cap)
{
    int len = snprintf(buf, cap,
                       "simdbloom-redis %d layout=%s bytes=%llu shard_blocks=%llu "
                       "planned_items=%llu planned_fpp=%.17g",
                       plan->version, sbloom_layout_name(plan->layout),
                       (unsigned long long)plan->bytes, (unsigned long long)plan->shard_blocks,
                       (unsigned long long)plan->planned_items, plan->planned_fpp);
    if (plan->periods && len > 0 && (size_t)len < cap)
        snprintf(buf + len, cap - (size_t)len, " periods=%u period=%llu", plan->periods,
                 (unsigned long long)plan->period);
}

/* NULL if the fields agree with each other (a shard of 2^64 - 1 blocks once made the shard count
 * 0, and a worker read past its arrays), or which field is wrong. */
static const char *inconsistency(const rp_plan *p)
{
    uint64_t block_bytes = sbloom_layout_block_bytes(p->layout);
    if (p->bytes == 0 || p->bytes % block_bytes != 0 || p->bytes > SBLOOM_MAX_BYTES)
        return "bytes is not a whole number of blocks up to 64 GiB";
    uint64_t nblocks = p->bytes / block_bytes;
    if (p->shard_blocks == 0 || p->shard_blocks > nblocks)
        return "shard_blocks is not between one block and the whole filter";
    if (p->shard_blocks > SHARD_LIMIT_BYTES / block_bytes)
        return "shard_blocks makes a shard larger than a Redis string can be";
    if ((nblocks + p->shard_blocks - 1) / p->shard_blocks > SHARD_LIMIT_COUNT)
        return "shard_blocks makes more than 65536 shards";
    if (p->planned_items > 0 && !(p->planned_fpp > 0.0 && p->planned_fpp < 1.0))
        return "planned_fpp is not in (0, 1)";
    if (p->periods) { /* each generation: ceil(n / G) keys at p / (G + 1) */
        if (p->periods > SBLOOM_WINDOW_MAX_PERIODS)
            return "periods is not 1 to 15";
        if (p->period == 0 || p->period > UINT64_MAX / 1000 / (p->periods + 3))
            return "period is not a number of seconds the clock can reach";
        if (p->planned_items == 0)
            return "a windowed filter without its plan";
        uint64_t per = p->planned_items / p->periods + (p->planned_items % p->periods != 0);
        if (!(sbloom_blocked_fpp(p->layout, p->bytes, per) <=
              p->planned_fpp / (p->periods + 1) * PLAN_SLACK))
            return "planned_items need more bytes than a generation has";
        return NULL;
    }
    if (p->planned_items > 0 &&
        !(sbloom_blocked_fpp(p->layout, p->bytes, p->planned_items) <= p->planned_fpp * PLAN_SLACK))
        return "planned_items need more bytes than the filter has";
    return NULL;
}

rp_status rp_parse(const char *text, rp_plan *out, char *why, size_t cap)
{
    int version, end = 0;
    char layout[32];
    unsigned long long bytes, shard_blocks, items;
    double fpp;
    if (sscanf(text,
               "simdbloom-redis %d layout=%31s bytes=%llu shard_blocks=%llu planned_items=%llu "
               "planned_fpp=%lf%n",
               &version, layout, &bytes, &shard_blocks, &items, &fpp, &end) != 6) {
        snprintf(why, cap, "%.120s", text);
        return RP_NOT_A_PLAN;
    }
    if (version < RP_FIRST_VERSION || version > RP_WINDOWED_VERSION) {
        snprintf(why, cap, "format version %d; this build knows versions %d to %d", version,
                 RP_FIRST_VERSION, RP_WINDOWED_VERSION);
        return RP_VERSION;
    }
    unsigned periods = 0;
    unsigned long long period = 0;
    int tail = 0;
    if (version == RP_WINDOWED_VERSION &&
        sscanf(text + end, " periods=%u period=%llu%n", &periods, &period, &tail) != 2) {
        snprintf(why, cap, "a windowed plan without its window (%.120s)", text);
        return RP_DAMAGED;
    }
    if (text[end + tail] != '\0') {
        snprintf(why, cap, "text after the plan (%.120s)", text);
        return RP_DAMAGED;
    }
    int lay = sbloom_layout_from_name(layout);
    if (lay < 0 || !rp_bit_layout((sbloom_layout)lay)) {
        snprintf(why, cap, "layout %s is not a bit layout", layout);
        return RP_DAMAGED;
    }
    rp_plan plan = {(sbloom_layout)lay, bytes,   shard_blocks, items,
                    items ? fpp : NAN,  version, periods,      period};
    if (version == RP_WINDOWED_VERSION && periods == 0) {
        snprintf(why, cap, "periods is not 1 to 15 (%.120s)", text);
        return RP_DAMAGED;
    }
    const char *wrong = inconsistency(&plan);
    if (wrong) {
        snprintf(why, cap, "%s (%.120s)", wrong, text);
        return RP_DAMAGED;
    }
    *out = plan;
    return RP_OK;
}

uint64_t rp_shard_blocks_for(sbloom_layout layout, uint64_t bytes)
{
    uint64_t nblocks = bytes / sbloom_layout_block_bytes(layout);
    uint64_t shards = (bytes + SHARD_MAX_BYTES - 1) / SHARD_MAX_BYTES;
    if (shards < SHARD_MIN_COUNT)
        shards = nblocks < SHARD_MIN_COUNT ? nblocks : SHARD_MIN_COUNT;
    return (nblocks + shards - 1) / shards;
}

uint64_t rp_shards(const rp_plan *plan)
{
    uint64_t nblocks = plan->bytes / sbloom_layout_block_bytes(plan->layout);
    return (nblocks + plan->shard_blocks - 1) / plan->shard_blocks;
}
