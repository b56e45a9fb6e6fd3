/*
 * The shards' markers. A filter of plan version 2 keeps, in every shard string, 8 bytes after
 * the shard's blocks: a hash of the filter's name and the shard's index. A shard that was
 * evicted or deleted (Redis then reads it as empty, or a later BITFIELD makes it again from
 * zeros), cut short, overwritten, or copied from another shard has lost its marker, so the
 * rounds that probe a shard read its marker in the same command (adds) or the same pipeline
 * (lookups), and never answer for a shard whose marker is wrong.
 *
 * A new filter is marked by whichever client finds it not yet ready (the ready key absent):
 * SETRANGE of each marker, which is idempotent, then SET of the ready key. Only then does any
 * client add to it, so a marker missing later means damage, never a filter still being made.
 */
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handle.h"
#include "replies.h"

uint64_t rf_shard_payload(const sbloom_redis_t *f, uint64_t s)
{
    uint64_t first = s * f->shard_blocks;
    uint64_t blocks = f->nblocks - first < f->shard_blocks ? f->nblocks - first : f->shard_blocks;
    return blocks * f->block_bytes;
}

/* FNV-1a (64 bits) of "simdbloom-redis shard NAME#s": a shard copied to another index, or to
 * another filter, does not carry the right marker. */
static uint64_t marker_of(const sbloom_redis_t *f, uint64_t s)
{
    char text[200];
    int len = snprintf(text, sizeof text, "simdbloom-redis shard %s#%llu", f->name,
                       (unsigned long long)s);
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (int i = 0; i < len; i++) {
        h ^= (uint8_t)text[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

int rf_make_markers(sbloom_redis_t *f)
{
    uint64_t shards = f->plan.shards;
    f->marker = calloc(shards, sizeof *f->marker);
    f->marker_bit = calloc(shards, sizeof *f->marker_bit);
    f->marker_from = calloc(shards, sizeof *f->marker_from);
    f->marker_to = calloc(shards, sizeof *f->marker_to);
    if (!f->marker || !f->marker_bit || !f->marker_from || !f->marker_to)
        return rf_fail(f, SBLOOM_E_NOMEM, "out of memory");
    for (uint64_t s = 0; s < shards; s++) {
        uint64_t m = marker_of(f, s), at = rf_shard_payload(f, s);
        for (int b = 0; b < 8; b++) /* big-endian: BITFIELD reads bits from the first byte's top */
            f->marker[s][b] = (uint8_t)(m >> (56 - 8 * b));
        rc_u64_text(f->marker_bit[s], at * 8);
        rc_u64_text(f->marker_from[s], at);
        rc_u64_text(f->marker_to[s], at + 7);
    }
    return 0;
}

int rf_marker_integer_ok(const sbloom_redis_t *f, uint64_t s, const redisReply *r)
{
    if (!r || r->type != REDIS_REPLY_INTEGER)
        return 0;
    uint64_t got = (uint64_t)r->integer, want = 0;
    for (int b = 0; b < 8; b++)
        want = want << 8 | f->marker[s][b];
    return got == want;
}

int rf_marker_bytes_ok(const sbloom_redis_t *f, uint64_t s, const redisReply *r)
{
    return r && r->type == REDIS_REPLY_STRING && r->len == 8 &&
           memcmp(r->str, f->marker[s], 8) == 0;
}

int rf_damaged(sbloom_redis_t *f, uint64_t s)
{
    f->damaged_shard = s;
    return rf_fail(f, SBLOOM_REDIS_E_DAMAGED,
                   "shard %s of filter %s is missing or damaged (evicted, deleted or overwritten: "
                   "its marker is gone); nothing was answered on its strength. See the damaged "
                   "shards with `simdbloom info --redis`, and docs/DISTRIBUTED.md for the repair",
                   f->shard_keys[s], f->name);
}

/* SETRANGE of the markers of shards [from, to), or when `reset` DEL first (a repair). */
static int write_markers(sbloom_redis_t *f, const uint64_t *shards, size_t n, int reset)
{
    size_t group = f->scan_group;
    for (size_t at = 0; at < n; at += group) {
        size_t len = n - at < group ? n - at : group, ncmd = 0;
        for (size_t j = 0; j < len; j++) {
            uint64_t s = shards ? shards[at + j] : at + j;
            const char **argv = f->argv + 8 * j;
            size_t *lens = f->argvlen + 8 * j;
            if (reset) {
                argv[0] = "DEL", argv[1] = f->shard_keys[s];
                rf_set_command(&f->cmds[ncmd++], argv, lens, 2, f->shard_slots[s]);
            }
            argv[2] = "SETRANGE", lens[2] = 8;
            argv[3] = f->shard_keys[s], lens[3] = strlen(f->shard_keys[s]);
            argv[4] = f->marker_from[s], lens[4] = strlen(f->marker_from[s]);
            argv[5] = (const char *)f->marker[s], lens[5] = 8;
            rf_point_command(&f->cmds[ncmd++], argv + 2, lens + 2, 4, f->shard_slots[s]);
        }
        int rc = rc_run(f->cluster, f->cmds, ncmd);
        rc_cmds_release(f->cmds, ncmd);
        if (rc)
            return rf_cluster_failed(f, rc);
    }
    return 0;
}

int rf_mark_shards(sbloom_redis_t *f)
{
    redisReply *r;
    int rc = rf_run_one(f, &r, f->ready_key, 2, "EXISTS", f->ready_key);
    if (rc)
        return rc;
    int ready = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    freeReplyObject(r);
    if (ready)
        return 0;
    if ((rc = write_markers(f, NULL, (size_t)f->plan.shards, 0)))
        return rc;
    if ((rc = rf_run_one(f, &r, f->ready_key, 3, "SET", f->ready_key, "1")))
        return rc;
    freeReplyObject(r);
    return 0;
}

/* Test hook (hidden: only programs linked with the static library reach it): shards a pipeline
 * of the marker scans and writes, 1 to SCAN_GROUP, so that a test reaches the last shard of a
 * group, and of all, with a filter of 64 shards rather than 16 GiB. */
void sbloom_redis_test_scan_group(sbloom_redis_t *f, size_t group);
void sbloom_redis_test_scan_group(sbloom_redis_t *f, size_t group)
{
    f->scan_group = group >= 1 && group <= SCAN_GROUP ? group : SCAN_GROUP;
}

/* Reads every shard's marker, scan_group shards a pipeline; the damaged ones' indices go to
 * damaged[0..cap), *count counts them all. */
static int scan_markers(sbloom_redis_t *f, uint64_t *damaged, size_t cap, uint64_t *count)
{
    *count = 0;
    size_t group = f->scan_group;
    for (uint64_t s = 0; s < f->plan.shards; s += group) {
        size_t len = f->plan.shards - s < group ? (size_t)(f->plan.shards - s) : group;
        for (size_t j = 0; j < len; j++) {
            const char **argv = f->argv + 4 * j;
            size_t *lens = f->argvlen + 4 * j;
            argv[0] = "GETRANGE", argv[1] = f->shard_keys[s + j];
            argv[2] = f->marker_from[s + j], argv[3] = f->marker_to[s + j];
            rf_set_command(&f->cmds[j], argv, lens, 4, f->shard_slots[s + j]);
        }
        int rc = rc_run(f->cluster, f->cmds, len);
        for (size_t j = 0; j < len; j++) {
            const redisReply *r = f->cmds[j].reply;
            /* an answer that is not the marker: "" (the key is gone), other bytes, or WRONGTYPE
             * (a key of another type); another error is the scan's failure (rc) */
            if (r && !rf_marker_bytes_ok(f, s + j, r) &&
                (r->type != REDIS_REPLY_ERROR || rc_error_is(r, "WRONGTYPE"))) {
                if (*count < cap)
                    damaged[*count] = s + j;
                ++*count;
            }
        }
        int other_error = 0;
        for (size_t j = 0; j < len; j++) {
            const redisReply *r = f->cmds[j].reply;
            other_error |= r && r->type == REDIS_REPLY_ERROR && !rc_error_is(r, "WRONGTYPE");
        }
        rc_cmds_release(f->cmds, len);
        if (rc && (rc != SBLOOM_REDIS_E_REPLY || other_error)) /* WRONGTYPE is an answer here */
            return rf_cluster_failed(f, rc);
    }
    return 0;
}

int sbloom_redis_check(sbloom_redis_t *f, uint64_t *damaged, size_t cap, uint64_t *count)
{
    if (!f || !count || (cap && !damaged))
        return SBLOOM_E_NULL;
    *count = 0;
    if (f->periods) /* each round checks the generations it reads (windows.c) */
        return 0;
    if (!f->marked)
        return 0; /* a filter of version 1 has no markers to check */
    return scan_markers(f, damaged, cap, count);
}

int sbloom_redis_repair(sbloom_redis_t *f, uint64_t *repaired)
{
    if (!f || !repaired)
        return SBLOOM_E_NULL;
    *repaired = 0;
    if (f->periods)
        return rf_fail(f, SBLOOM_E_LAYOUT,
                       "filter %s is windowed: a damaged generation is deleted (its period's keys "
                       "come out once more), not repaired",
                       f->name);
    if (!f->marked)
        return rf_fail(f, SBLOOM_E_INVALID,
                       "filter %s is of format version 1, without shard markers: nothing to "
                       "repair (pull it, drop it and push it back to give it markers)",
                       f->name);
    uint64_t count;
    uint64_t *damaged = malloc((size_t)f->plan.shards * sizeof *damaged);
    if (!damaged)
        return rf_fail(f, SBLOOM_E_NOMEM, "out of memory");
    int rc = scan_markers(f, damaged, (size_t)f->plan.shards, &count);
    if (rc == 0 && count)
        rc = write_markers(f, damaged, (size_t)count, 1);
    if (rc == 0)
        *repaired = count;
    free(damaged);
    return rc;
}

int sbloom_redis_eviction_policy(sbloom_redis_t *f, char *policy, size_t cap)
{
    if (!f || (cap && !policy))
        return SBLOOM_E_NULL;
    if (cap)
        policy[0] = '\0';
    /* one CONFIG GET a shard, on the shard's master: the masters that hold the filter */
    size_t n = f->plan.shards < 256 ? (size_t)f->plan.shards : 256;
    for (size_t j = 0; j < n; j++) {
        const char **argv = f->argv + 3 * j;
        argv[0] = "CONFIG", argv[1] = "GET", argv[2] = "maxmemory-policy";
        rf_set_command(&f->cmds[j], argv, f->argvlen + 3 * j, 3, f->shard_slots[j]);
    }
    int rc = rc_run(f->cluster, f->cmds, n), risky = 0;
    for (size_t j = 0; rc == 0 && j < n && !risky; j++) {
        const redisReply *r = f->cmds[j].reply;
        if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
            r->element[1]->type == REDIS_REPLY_STRING &&
            (strncmp(r->element[1]->str, "allkeys-", 8) == 0 ||
             (f->periods && strncmp(r->element[1]->str, "volatile-", 9) == 0))) {
            /* (a window's generations expire, so the volatile-* policies may evict them too) */
            risky = 1;
            if (cap)
                snprintf(policy, cap, "%s", r->element[1]->str);
        }
    }
    rc_cmds_release(f->cmds, n);
    return rc ? rf_cluster_failed(f, rc) : risky;
}
