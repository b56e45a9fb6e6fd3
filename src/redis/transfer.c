/* Whole-filter operations on the Redis filter: info, push, pull, drop. */
#include <hiredis/hiredis.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "handle.h"

/* Sends `verbs[0] SHARD`, ..., `verbs[nverbs-1] SHARD` for every shard, `group` shards a
 * round, and hands each reply to take(ctx, shard, verb, reply); stops at the first error (of
 * Redis, or returned by take). For the whole-filter reads and deletes (info, pull, drop). */
typedef int (*shard_reply_fn)(sbloom_redis_t *f, void *ctx, uint64_t shard, int verb,
                              const redisReply *reply);
static int take_counts(sbloom_redis_t *f, void *ctx, uint64_t shard, int verb, const redisReply *r);

static int each_shard(sbloom_redis_t *f, const char *const *verbs, int nverbs, uint64_t group,
                      shard_reply_fn take, void *ctx)
{
    /* info counts what it can: a shard that is a key of another type (WRONGTYPE) counts as
     * empty there, and is listed as damaged by the marker check */
    int lenient = take == take_counts;
    int rc = 0;
    for (uint64_t s = 0; rc == 0 && s < f->plan.shards; s += group) {
        uint64_t end = s + group < f->plan.shards ? s + group : f->plan.shards;
        size_t ncmd = 0;
        for (uint64_t i = s; i < end; i++)
            for (int v = 0; v < nverbs; v++, ncmd++) {
                const char **argv = f->argv + 2 * ncmd;
                argv[0] = verbs[v];
                argv[1] = f->shard_keys[i];
                rf_set_command(&f->cmds[ncmd], argv, f->argvlen + 2 * ncmd, 2, f->shard_slots[i]);
            }
        if ((rc = rc_run(f->cluster, f->cmds, ncmd)) && !(lenient && rc == SBLOOM_REDIS_E_REPLY))
            rc = rf_cluster_failed(f, rc);
        else
            rc = 0;
        for (size_t c = 0; rc == 0 && c < ncmd; c++)
            if (f->cmds[c].reply)
                rc = take(f, ctx, s + c / (size_t)nverbs, (int)(c % (size_t)nverbs),
                          f->cmds[c].reply);
        rc_cmds_release(f->cmds, ncmd);
    }
    return rc;
}

/* info: BITCOUNT and STRLEN of each shard, summed. */
static int take_counts(sbloom_redis_t *f, void *ctx, uint64_t shard, int verb, const redisReply *r)
{
    sbloom_redis_info *out = ctx;
    uint64_t v = r->type == REDIS_REPLY_INTEGER ? (uint64_t)r->integer : 0;
    (void)f, (void)shard;
    if (verb == 0)
        out->bits_set += v;
    else
        out->stored_bytes += v;
    return 0;
}

/* The bits BITCOUNT found in the markers of the shards that have theirs are not the filter's. */
static int discount_markers(sbloom_redis_t *f, sbloom_redis_info *out)
{
    uint64_t count, *damaged = malloc((size_t)f->plan.shards * sizeof *damaged);
    if (!damaged)
        return rf_fail(f, SBLOOM_E_NOMEM, "out of memory");
    int rc = sbloom_redis_check(f, damaged, (size_t)f->plan.shards, &count);
    for (uint64_t s = 0, d = 0; rc == 0 && s < f->plan.shards; s++) {
        if (d < count && damaged[d] == s) {
            d++;
            continue;
        }
        for (int b = 0; b < 8; b++)
            out->bits_set -= (uint64_t)__builtin_popcount(f->marker[s][b]);
    }
    free(damaged);
    return rc;
}

int sbloom_redis_get_info(sbloom_redis_t *f, sbloom_redis_info *out)
{
    if (!f || !out)
        return SBLOOM_E_NULL;
    if (out->size < sizeof *out)
        return SBLOOM_E_INVALID;
    out->bits_set = out->stored_bytes = 0;
    if (f->periods) { /* the keys of the live generations (sbloom_redis_get_window) */
        sbloom_window w = sbloom_window_init();
        int rc = sbloom_redis_get_window(f, &w);
        out->items = 0;
        for (uint32_t i = 0; rc == 0 && i < w.generations; i++)
            out->items += w.generation_items[i];
        out->masters = rc_masters_of(f->cluster, f->shard_slots, (size_t)f->plan.shards);
        out->round_trips = rc_round_trips(f->cluster);
        return rc;
    }
    int rc = rf_flush_items(f);
    if (rc == 0)
        rc = rf_read_items(f, &out->items);
    static const char *const scans[2] = {"BITCOUNT", "STRLEN"};
    if (rc == 0)
        rc = each_shard(f, scans, 2, GROUP_SHARDS, take_counts, out);
    if (rc == 0 && f->marked)
        rc = discount_markers(f, out);
    out->masters = rc_masters_of(f->cluster, f->shard_slots, (size_t)f->plan.shards);
    out->round_trips = rc_round_trips(f->cluster);
    return rc;
}

/* The whole-filter transfers take one filter's bits: a window's generations are not one. */
static int refuse_window(sbloom_redis_t *f, const char *what)
{
    return rf_fail(f, SBLOOM_E_LAYOUT, "filter %s is windowed: %s takes a filter without a window",
                   f->name, what);
}

int sbloom_redis_push(sbloom_redis_t *f, const sbloom_t *local)
{
    if (!f || !local)
        return SBLOOM_E_NULL;
    if (f->periods)
        return refuse_window(f, "push");
    if (sbloom_get_layout(local) != f->plan.layout || sbloom_bytes(local) != f->plan.bytes)
        return rf_fail(
            f, SBLOOM_E_INCOMPATIBLE,
            "the local filter (%s, %llu bytes) differs from %s in Redis (%s, %llu bytes)",
            sbloom_layout_name(sbloom_get_layout(local)), (unsigned long long)sbloom_bytes(local),
            f->name, sbloom_layout_name(f->plan.layout), (unsigned long long)f->plan.bytes);
    uint8_t *bits = malloc(f->plan.bytes);
    if (!bits)
        return rf_fail(f, SBLOOM_E_NOMEM, "out of memory");
    int rc = sbloom_export_bits(local, bits, f->plan.bytes);
    char tmp[GROUP_SHARDS][224];
    for (uint64_t s = 0; rc == 0 && s < f->plan.shards; s += GROUP_SHARDS) {
        uint64_t end = s + GROUP_SHARDS < f->plan.shards ? s + GROUP_SHARDS : f->plan.shards;
        size_t ncmd = 0, arg = 0;
        for (uint64_t i = s; i < end; i++) {
            uint64_t from = i * f->plan.shard_bytes;
            uint64_t len = f->plan.bytes - from < f->plan.shard_bytes ? f->plan.bytes - from
                                                                      : f->plan.shard_bytes;
            int any = 0;
            for (uint64_t b = 0; b < len && !any; b++)
                any = bits[from + b] != 0;
            if (!any)
                continue; /* nothing to OR in */
            /* A temporary key in the shard's slot (its hash tag), unique to this push. */
            char *t = tmp[i - s];
            snprintf(t, sizeof tmp[0], "%s:push:%ld.%u", f->shard_keys[i], (long)getpid(),
                     (unsigned)rand());
            const char **argv = f->argv + arg;
            size_t *lens = f->argvlen + arg;
            argv[0] = "SET", lens[0] = 3;
            argv[1] = t, lens[1] = strlen(t);
            argv[2] = (const char *)bits + from, lens[2] = (size_t)len; /* binary: no strlen */
            rf_point_command(&f->cmds[ncmd++], argv, lens, 3, f->shard_slots[i]);
            argv[3] = "BITOP", argv[4] = "OR", argv[5] = f->shard_keys[i],
            argv[6] = f->shard_keys[i], argv[7] = t;
            rf_set_command(&f->cmds[ncmd++], argv + 3, lens + 3, 5, f->shard_slots[i]);
            argv[8] = "DEL", argv[9] = t;
            rf_set_command(&f->cmds[ncmd++], argv + 8, lens + 8, 2, f->shard_slots[i]);
            arg += 10;
        }
        if (ncmd && (rc = rc_run(f->cluster, f->cmds, ncmd)))
            rc = rf_cluster_failed(f, rc);
        rc_cmds_release(f->cmds, ncmd);
    }
    free(bits);
    if (rc == 0) {
        f->items_pending += sbloom_items(local);
        rc = rf_flush_items(f);
    }
    return rc;
}

/* pull: a shard's bytes into the payload (shorter shards end in zeros). */
static int take_shard(sbloom_redis_t *f, void *ctx, uint64_t shard, int verb, const redisReply *r)
{
    uint8_t *bits = ctx;
    uint64_t from = shard * f->plan.shard_bytes;
    uint64_t room =
        f->plan.bytes - from < f->plan.shard_bytes ? f->plan.bytes - from : f->plan.shard_bytes;
    (void)verb;
    if (r->type == REDIS_REPLY_STRING)
        memcpy(bits + from, r->str, r->len < room ? r->len : room);
    else if (r->type != REDIS_REPLY_NIL)
        return rf_fail(f, SBLOOM_REDIS_E_PLAN, "%s is not a shard string", f->shard_keys[shard]);
    return 0;
}

int sbloom_redis_pull(sbloom_redis_t *f, sbloom_t **out)
{
    if (!f || !out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (f->periods)
        return refuse_window(f, "pull");
    int rc = rf_flush_items(f);
    uint64_t items = 0;
    if (rc == 0)
        rc = rf_read_items(f, &items);
    uint8_t *bits = rc == 0 ? calloc(1, f->plan.bytes) : NULL;
    if (rc == 0 && !bits)
        return rf_fail(f, SBLOOM_E_NOMEM, "out of memory");
    static const char *const get[1] = {"GET"};
    if (rc == 0)
        rc = each_shard(f, get, 1, GROUP_SHARDS, take_shard, bits);
    if (rc == 0 && (rc = sbloom_import_bits(out, f->plan.layout, bits, f->plan.bytes, items,
                                            f->plan.planned_items, f->plan.planned_fpp)))
        rf_fail(f, rc, "%s", sbloom_strerror(rc));
    free(bits);
    return rc;
}

static int take_nothing(sbloom_redis_t *f, void *ctx, uint64_t shard, int verb, const redisReply *r)
{
    (void)f, (void)ctx, (void)shard, (void)verb, (void)r;
    return 0;
}

int sbloom_redis_drop(sbloom_redis_t *f)
{
    if (!f)
        return SBLOOM_E_NULL;
    f->items_pending = 0;
    static const char *const del[1] = {"DEL"};
    redisReply *r;
    if (f->periods) { /* every generation not yet expired, and their counters: periods
                         current - G - 1 .. current + 1 by this client's clock */
        uint64_t from = f->current > f->periods ? f->current - f->periods - 1 : 0;
        int rc = 0;
        char key[GEN_KEY_CHARS];
        for (uint64_t q = from; rc == 0 && q <= f->current + 1; q++) {
            for (uint64_t s = 0; rc == 0 && s <= f->plan.shards; s++) {
                if (s < f->plan.shards)
                    snprintf(key, sizeof key, "sbloom:{%s#%llu}:%llu", f->name,
                             (unsigned long long)s, (unsigned long long)q);
                else
                    snprintf(key, sizeof key, "sbloom:{%s}:items:%llu", f->name,
                             (unsigned long long)q);
                if ((rc = rf_run_one(f, &r, key, 2, "DEL", key)) == 0)
                    freeReplyObject(r);
            }
        }
        if (rc == 0 && (rc = rf_run_one(f, &r, f->meta_key, 2, "DEL", f->meta_key)) == 0)
            freeReplyObject(r);
        return rc;
    }
    int rc = each_shard(f, del, 1, 256, take_nothing, NULL);
    if (rc == 0 && (rc = rf_run_one(f, &r, f->items_key, 2, "DEL", f->items_key)) == 0)
        freeReplyObject(r);
    if (rc == 0 && (rc = rf_run_one(f, &r, f->ready_key, 2, "DEL", f->ready_key)) == 0)
        freeReplyObject(r);
    if (rc == 0 && (rc = rf_run_one(f, &r, f->meta_key, 2, "DEL", f->meta_key)) == 0)
        freeReplyObject(r);
    return rc;
}
