/*
 * Adds and lookups, a round of keys at a time. Keys are located locally (sbloom_locate); a round
 * becomes one BITFIELD per shard for adds (SET u1 of every bit: the old bits say whether the key
 * was new) or one GETRANGE of the key's block per key for lookups (the block is then tested
 * here), sent through rc_run.
 */
#include <hiredis/hiredis.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "handle.h"
#include "replies.h"

/* ---- Rounds ---------------------------------------------------------------------------------- */

/* The bit offsets of key i's bits in its shard string, as text from `text` (OFFSET_CHARS each,
 * lengths in len): Redis numbers a string's bits from the most significant bit of its first
 * byte. Returns their count (k). */
static uint32_t key_bit_offsets(const sbloom_redis_t *f, uint32_t i, char *text, size_t *len)
{
    uint64_t base = (f->block[i] % f->shard_blocks) * f->block_bytes * 8;
    const uint8_t *mask = f->mask + (size_t)i * f->block_bytes;
    uint32_t count = 0;
    for (uint32_t b = 0; b < f->block_bytes; b++)
        for (int bit = 0; mask[b] && bit < 8; bit++)
            if (mask[b] >> bit & 1) {
                len[count] = rc_u64_text(text + (size_t)count * OFFSET_CHARS,
                                         base + b * 8u + (7u - (unsigned)bit));
                count++;
            }
    return count;
}

/* Adds: one BITFIELD per shard with keys, SET u1 OFFSET 1 for each bit of each key. */
static size_t build_adds(sbloom_redis_t *f, size_t *arg)
{
    static const char *const set_u1[3] = {"SET", "u1", "1"};
    size_t ncmd = 0;
    uint64_t shards = f->plan.shards;
    for (uint64_t s = 0; s < shards; s++) {
        uint64_t from = f->shard_count[s], to = f->shard_count[s + 1];
        if (from == to)
            continue;
        const char **argv = f->argv + *arg;
        size_t *lens = f->argvlen + *arg;
        size_t argc = 0;
        argv[argc] = "BITFIELD", lens[argc++] = 8;
        argv[argc] = f->shard_keys[s], lens[argc++] = strlen(f->shard_keys[s]);
        if (f->marked) { /* first the shard's marker: the same command proves the shard whole */
            argv[argc] = "GET", lens[argc++] = 3;
            argv[argc] = "i64", lens[argc++] = 3;
            argv[argc] = f->marker_bit[s], lens[argc++] = strlen(f->marker_bit[s]);
        }
        for (uint64_t j = from; j < to; j++) {
            char *text = f->offsets + (size_t)j * MAX_K * OFFSET_CHARS;
            size_t len[MAX_K];
            uint32_t bits = key_bit_offsets(f, f->by_shard[j], text, len);
            for (uint32_t b = 0; b < bits; b++) {
                argv[argc] = set_u1[0], lens[argc++] = 3;
                argv[argc] = set_u1[1], lens[argc++] = 2;
                argv[argc] = text + (size_t)b * OFFSET_CHARS, lens[argc++] = len[b];
                argv[argc] = set_u1[2], lens[argc++] = 1;
            }
        }
        rf_point_command(&f->cmds[ncmd], argv, lens, (int)argc, f->shard_slots[s]);
        f->shard_of_cmd[ncmd++] = (uint32_t)s;
        *arg += argc;
    }
    return ncmd;
}

/* GETRANGE of each asked key's block: commands [0, nask). */
static void build_key_lookups(sbloom_redis_t *f, size_t nask, size_t *arg)
{
    for (size_t j = 0; j < nask; j++) {
        uint32_t i = f->by_shard[j];
        uint64_t s = f->block[i] / f->shard_blocks;
        uint64_t start = (f->block[i] % f->shard_blocks) * f->block_bytes;
        char *text = f->offsets + j * 2 * OFFSET_CHARS;
        const char **argv = f->argv + *arg;
        size_t *lens = f->argvlen + *arg;
        argv[0] = "GETRANGE", lens[0] = 8;
        argv[1] = f->shard_keys[s], lens[1] = strlen(f->shard_keys[s]);
        argv[2] = text, lens[2] = rc_u64_text(text, start);
        argv[3] = text + OFFSET_CHARS;
        lens[3] = rc_u64_text(text + OFFSET_CHARS, start + f->block_bytes - 1);
        rf_point_command(&f->cmds[j], argv, lens, 4, f->shard_slots[s]);
        f->shard_of_cmd[j] = (uint32_t)s;
        *arg += 4;
    }
}

/* Lookups: GETRANGE of each key's block, then (version 2) of the marker of each shard they
 * touch, in the same pipeline. */
static size_t build_lookups(sbloom_redis_t *f, size_t nask, size_t *arg)
{
    size_t ncmd = nask;
    for (uint64_t s = 0; f->marked && s < f->plan.shards; s++) {
        if (f->shard_count[s] == f->shard_count[s + 1])
            continue;
        const char **argv = f->argv + *arg;
        size_t *lens = f->argvlen + *arg;
        argv[0] = "GETRANGE", lens[0] = 8;
        argv[1] = f->shard_keys[s], lens[1] = strlen(f->shard_keys[s]);
        argv[2] = f->marker_from[s], lens[2] = strlen(f->marker_from[s]);
        argv[3] = f->marker_to[s], lens[3] = strlen(f->marker_to[s]);
        rf_point_command(&f->cmds[ncmd], argv, lens, 4, f->shard_slots[s]);
        f->shard_of_cmd[ncmd++] = (uint32_t)s;
        *arg += 4;
    }
    build_key_lookups(f, nask, arg);
    return ncmd;
}

/* Groups the keys still asked (ask[i]) by shard, in input order within a shard: a key repeated
 * in the round is then new only at its first occurrence, as Redis runs the SETs in order.
 * Returns how many there are. */
static size_t group_asked(sbloom_redis_t *f, size_t n)
{
    uint64_t shards = f->plan.shards;
    memset(f->shard_count, 0, (shards + 1) * sizeof *f->shard_count);
    size_t nask = 0;
    for (size_t i = 0; i < n; i++)
        if (f->ask[i]) {
            f->shard_count[f->block[i] / f->shard_blocks + 1]++;
            nask++;
        }
    for (uint64_t s = 0; s < shards; s++)
        f->shard_count[s + 1] += f->shard_count[s];
    uint64_t *fill = f->shard_count; /* used as insertion cursors, then restored */
    for (size_t i = 0; i < n; i++)
        if (f->ask[i])
            f->by_shard[fill[f->block[i] / f->shard_blocks]++] = (uint32_t)i;
    for (uint64_t s = shards; s > 0; s--)
        fill[s] = fill[s - 1];
    fill[0] = 0;
    return nask;
}

/* Runs the round's commands (and the counter's pending INCRBY with them). */
static int run_commands(sbloom_redis_t *f, size_t nwork, size_t arg)
{
    uint64_t pending = f->items_pending;
    size_t ncmd = rf_append_items_command(f, nwork, &arg);
    int rc = rc_run(f->cluster, f->cmds, ncmd);
    if (ncmd > nwork && f->cmds[nwork].reply) /* the counter took what was pending */
        f->items_pending -= pending;
    if (ncmd > nwork)
        rc_cmds_release(f->cmds + nwork, ncmd - nwork);
    return rc;
}

/* GETRANGE of each asked key's block; present[i] set for the keys whose bits are all there (the
 * others keep their value). Returns how many were present, or a negative error. */
static int64_t lookup_pass(sbloom_redis_t *f, const uint64_t *hashes, size_t nask, uint8_t *present)
{
    size_t arg = 0;
    size_t nwork = build_lookups(f, nask, &arg);
    int rc = run_commands(f, nwork, arg);
    /* The markers, read after the blocks on the same connections: a shard whose marker is
     * still there was whole when its blocks were read. */
    uint64_t bad = UINT64_MAX;
    for (size_t c = nask; c < nwork; c++) {
        uint64_t s = f->shard_of_cmd[c];
        const redisReply *r = f->cmds[c].reply;
        /* WRONGTYPE: the shard is a key of another type; another error fails the round (rc) */
        f->shard_bad[s] = r && !rf_marker_bytes_ok(f, s, r) &&
                          (r->type != REDIS_REPLY_ERROR || rc_error_is(r, "WRONGTYPE"));
        if (f->shard_bad[s] && bad == UINT64_MAX)
            bad = s;
    }
    int64_t found = 0;
    for (size_t c = 0; c < nask; c++) {
        redisReply *r = f->cmds[c].reply;
        if (!r || (f->marked && f->shard_bad[f->shard_of_cmd[c]]))
            continue; /* no answer, or none to trust: left as it was */
        uint32_t i = f->by_shard[c];
        const uint8_t *mask = f->mask + (size_t)i * f->block_bytes;
        int all = r->type == REDIS_REPLY_STRING;
        for (uint32_t b = 0; all && b < f->block_bytes; b++) {
            uint8_t have = b < r->len ? (uint8_t)r->str[b] : 0;
            all = (have & mask[b]) == mask[b];
        }
        present[i] = (uint8_t)all;
        found += all;
        if (all && f->front)
            sbloom_add_hash(f->front, hashes[i]);
    }
    for (size_t c = nask; c < nwork; c++)
        f->shard_bad[f->shard_of_cmd[c]] = 0;
    rc_cmds_release(f->cmds, nwork);
    if (bad != UINT64_MAX)
        return rf_damaged(f, bad);
    return rc ? rf_cluster_failed(f, rc) : found;
}

/* 1 if the key at by_shard[j] occurs earlier in its shard's group, from by_shard[first]. Only
 * asked when a command's outcome is unknown, so the quadratic scan costs nothing in the usual
 * case. */
static int repeated_in_shard(const sbloom_redis_t *f, const uint64_t *hashes, uint64_t first,
                             uint64_t j)
{
    for (uint64_t e = first; e < j; e++)
        if (hashes[f->by_shard[e]] == hashes[f->by_shard[j]])
            return 1;
    return 0;
}

/* BITFIELD SET of each asked key's bits (grouped by group_asked); is_new[i] (if not NULL) from the
 * old bits. Returns the keys new, or a negative error; *seen counts the keys whose bits were all
 * set already. */
static int64_t add_pass(sbloom_redis_t *f, const uint64_t *hashes, uint8_t *is_new, uint64_t *seen)
{
    size_t arg = 0;
    size_t nwork = build_adds(f, &arg);
    int rc = run_commands(f, nwork, arg);
    uint64_t fresh = 0, bad = UINT64_MAX;
    for (size_t c = 0; c < nwork; c++) {
        redisReply *r = f->cmds[c].reply;
        uint64_t s = f->shard_of_cmd[c];
        int answered = r && r->type == REDIS_REPLY_ARRAY;
        int maybe_ran = f->cmds[c].uncertain; /* sent on a connection that broke */
        size_t at = 0;
        if (answered && f->marked) { /* the reply's first element is the shard's marker */
            if (!(r->elements > 0 && rf_marker_integer_ok(f, s, r->element[0]))) {
                if (bad == UINT64_MAX)
                    bad = s;
                continue; /* bits of a shard that is gone or damaged: the keys stay "not added" */
            }
            at = 1;
        }
        if (!answered && !maybe_ran)
            continue; /* refused, or never sent: the keys stay "not added" */
        uint64_t first = f->shard_count[s];
        for (uint64_t j = first; j < f->shard_count[s + 1]; j++) {
            uint32_t i = f->by_shard[j];
            int was_new = 0;
            for (uint32_t b = 0; answered && b < f->k; b++, at++)
                was_new |= at < r->elements && r->element[at]->type == REDIS_REPLY_INTEGER &&
                           r->element[at]->integer == 0;
            *seen += answered && !was_new;
            /* A command that may have run before (its connection broke), or whose reply never
             * came: a key it reports as seen may be seen because of that run, so it counts as
             * new, at its first occurrence in the round only (the same key in one shard's
             * command, in input order). */
            if (maybe_ran && !repeated_in_shard(f, hashes, first, j))
                was_new = 1;
            fresh += (uint64_t)was_new;
            if (is_new)
                is_new[i] = (uint8_t)was_new;
            if (f->front && answered) /* the bits are in the table now */
                sbloom_add_hash(f->front, hashes[i]);
        }
    }
    rc_cmds_release(f->cmds, nwork);
    f->items_pending += fresh;
    if (bad != UINT64_MAX)
        return rf_damaged(f, bad);
    return rc ? rf_cluster_failed(f, rc) : (int64_t)fresh;
}

/* ---- A windowed filter's rounds (windows.c): one script a shard ---------------------------- */

/* EVAL of the window script for each shard with keys: its generations, then the k bit offsets of
 * each of its keys, in input order. */
static size_t build_window_rounds(sbloom_redis_t *f, redis_op op, size_t *arg)
{
    size_t ncmd = 0;
    uint32_t ngen = GEN_KEYS(f);
    char *text = f->offsets;
    for (uint64_t s = 0; s < f->plan.shards; s++) {
        uint64_t from = f->shard_count[s], to = f->shard_count[s + 1];
        if (from == to)
            continue;
        const char **argv = f->argv + *arg;
        size_t *lens = f->argvlen + *arg;
        size_t argc = 0;
        argv[argc] = "EVAL", lens[argc++] = 4;
        argv[argc] = rf_window_script, lens[argc++] = strlen(rf_window_script);
        argv[argc] = f->gen_count_arg, lens[argc++] = strlen(f->gen_count_arg);
        for (uint32_t g = 0; g < ngen; g++) {
            argv[argc] = f->gen_keys[s * ngen + g];
            lens[argc] = strlen(argv[argc]);
            argc++;
        }
        argv[argc] = op == OP_CONTAINS ? "c" : "a", lens[argc++] = 1;
        argv[argc] = f->k == 16 ? "16" : "8", lens[argc++] = f->k == 16 ? 2 : 1;
        argv[argc] = f->current_arg, lens[argc++] = strlen(f->current_arg);
        argv[argc] = (const char *)f->marker[s], lens[argc++] = 8;
        argv[argc] = f->marker_from[s], lens[argc++] = strlen(f->marker_from[s]);
        argv[argc] = f->expire_arg, lens[argc++] = strlen(f->expire_arg);
        argv[argc] = f->now_arg, lens[argc++] = strlen(f->now_arg);
        argv[argc] = f->tolerance_arg, lens[argc++] = strlen(f->tolerance_arg);
        argv[argc] = rf_window_must_live(f, s), lens[argc++] = ngen;
        for (uint64_t j = from; j < to; j++) {
            uint32_t bits = key_bit_offsets(f, f->by_shard[j], text, lens + argc);
            for (uint32_t b = 0; b < bits; b++)
                argv[argc++] = text + (size_t)b * OFFSET_CHARS;
            text += (size_t)bits * OFFSET_CHARS;
        }
        rf_point_command(&f->cmds[ncmd], argv, lens, (int)argc, f->shard_slots[s]);
        f->shard_of_cmd[ncmd++] = (uint32_t)s;
        *arg += argc;
    }
    return ncmd;
}

/* A round of a windowed filter: results as the public calls define them (a command that may
 * have run without its reply: its keys new at their first occurrence, as for adds above). */
static int64_t window_round(sbloom_redis_t *f, redis_op op, const uint64_t *hashes, size_t n,
                            uint8_t *results)
{
    for (size_t i = 0; i < n; i++) {
        f->ask[i] = 1;
        sbloom_locate(f->plan.layout, f->nblocks, hashes[i], &f->block[i],
                      f->mask + i * f->block_bytes, f->block_bytes);
        if (results)
            results[i] = op == OP_ADD_IF_NEW ? SBLOOM_REDIS_NOT_ADDED : 0;
    }
    group_asked(f, n);
    size_t arg = 0;
    size_t nwork = build_window_rounds(f, op, &arg);
    int rc = run_commands(f, nwork, arg);
    uint64_t answered_keys = 0;
    int damaged = -1, clock = -1;
    for (size_t c = 0; c < nwork; c++) {
        redisReply *r = f->cmds[c].reply;
        uint64_t s = f->shard_of_cmd[c], first = f->shard_count[s];
        int answered = r && r->type == REDIS_REPLY_ARRAY;
        int maybe_ran = op != OP_CONTAINS && f->cmds[c].uncertain;
        if (r && r->type == REDIS_REPLY_ERROR && damaged < 0 &&
            (rc_error_is(r, "SBLOOMDAMAGED") || rc_error_is(r, "SBLOOMVANISHED")))
            damaged = (int)c;
        if (r && r->type == REDIS_REPLY_ERROR && rc_error_is(r, "SBLOOMCLOCK") && clock < 0)
            clock = (int)c;
        if (answered && op != OP_CONTAINS) /* the shard's generation is there from now on */
            rf_window_made(f, s);
        if (!answered && !maybe_ran)
            continue; /* refused, or never sent: not added (adds), absent (lookups) */
        for (uint64_t j = first; j < f->shard_count[s + 1]; j++) {
            uint32_t i = f->by_shard[j];
            size_t e = (size_t)(j - first);
            int yes = answered && e < r->elements && r->element[e]->type == REDIS_REPLY_INTEGER &&
                      r->element[e]->integer == 1;
            if (maybe_ran && !answered)
                yes = !repeated_in_shard(f, hashes, first, j);
            if (results)
                results[i] = (uint8_t)yes;
            answered_keys += (uint64_t)yes;
        }
    }
    if (op != OP_CONTAINS)
        f->items_pending += answered_keys;
    if (damaged >= 0) { /* (the message made before the reply is released) */
        const redisReply *r = f->cmds[damaged].reply;
        int len = (int)(r->len < 200 ? r->len : 200);
        if (rc_error_is(r, "SBLOOMVANISHED"))
            rc = rf_fail(f, SBLOOM_REDIS_E_DAMAGED,
                         "filter %s: a generation this client used is gone before its time "
                         "(%.*s: deleted, or evicted: see the eviction policy); nothing was "
                         "answered on its strength. Its keys come out once more when the same "
                         "input runs again",
                         f->name, len, r->str);
        else
            rc = rf_fail(f, SBLOOM_REDIS_E_DAMAGED,
                         "filter %s: a generation is damaged (%.*s: overwritten, or of another "
                         "type); nothing was answered on its strength. Delete that key (it holds "
                         "at most a period's keys, which come out once more)",
                         f->name, len, r->str);
        rc_cmds_release(f->cmds, nwork);
        return rc;
    }
    if (clock >= 0) {
        const redisReply *r = f->cmds[clock].reply;
        rc = rf_window_clock_failed(f, r->str);
        rc_cmds_release(f->cmds, nwork);
        return rc;
    }
    rc_cmds_release(f->cmds, nwork);
    return rc ? rf_cluster_failed(f, rc) : (int64_t)answered_keys;
}

/* One round of at most ROUND_KEYS keys; results as the public calls define them.
 *
 * Adds first ask Redis with GETRANGE (as lookups do) when most keys of the previous round were
 * already in the table: a present key then costs a read instead of a BITFIELD that changes
 * nothing but is still replicated. Keys found present are "seen"; only the others are sent to
 * BITFIELD, whose old bits decide, atomically, which are new. Bits only go from 0 to 1, so a
 * key whose bits were all set before the round was not new in it. */
static int64_t run_round(sbloom_redis_t *f, redis_op op, const uint64_t *hashes, size_t n,
                         uint8_t *results)
{
    if (f->periods)
        return window_round(f, op, hashes, n, results);
    int64_t counted = 0;
    for (size_t i = 0; i < n; i++) {
        f->ask[i] = !(f->front && sbloom_contains_hash(f->front, hashes[i]));
        if (!f->ask[i]) { /* every bit is in the fleet table already */
            if (results)
                results[i] = op == OP_CONTAINS;
            counted += op == OP_CONTAINS;
            continue;
        }
        sbloom_locate(f->plan.layout, f->nblocks, hashes[i], &f->block[i],
                      f->mask + i * f->block_bytes, f->block_bytes);
        if (results) /* until a reply says otherwise: not added (adds), absent (lookups) */
            results[i] = op == OP_ADD_IF_NEW ? SBLOOM_REDIS_NOT_ADDED : 0;
    }
    size_t nask = group_asked(f, n);
    if (nask == 0 && !f->items_pending)
        return counted;
    if (op == OP_CONTAINS) {
        int64_t found = lookup_pass(f, hashes, nask, results);
        return found < 0 ? found : counted + found;
    }
    uint64_t asked = nask, seen = 0;
    if (f->precheck && nask) {
        memset(f->present, 0, n);
        int64_t found = lookup_pass(f, hashes, nask, f->present);
        if (found < 0)
            return found;
        seen = (uint64_t)found;
        for (size_t i = 0; i < n; i++)
            if (f->ask[i] && f->present[i]) {
                f->ask[i] = 0;
                if (results)
                    results[i] = 0;
            }
        nask = group_asked(f, n);
    }
    int64_t fresh = nask || f->items_pending ? add_pass(f, hashes, results, &seen) : 0;
    /* Pre-check next round when at least half of this round's keys were present. */
    f->precheck = asked > 0 && 2 * seen >= asked;
    return fresh;
}

static int64_t run_hashes(sbloom_redis_t *f, redis_op op, const uint64_t *hashes, size_t n,
                          uint8_t *results)
{
    if (!f || (n && !hashes) || (n && op != OP_ADD && !results))
        return SBLOOM_E_NULL;
    int64_t total = 0;
    for (size_t at = 0; at < n; at += ROUND_KEYS) {
        size_t len = n - at < ROUND_KEYS ? n - at : ROUND_KEYS;
        int64_t got = run_round(f, op, hashes + at, len, results ? results + at : NULL);
        if (got < 0) {
            for (size_t i = at + len; op == OP_ADD_IF_NEW && i < n; i++)
                results[i] = SBLOOM_REDIS_NOT_ADDED; /* never sent */
            return got;
        }
        total += got;
    }
    return total;
}

static int64_t run_keys(sbloom_redis_t *f, redis_op op, const void *const *keys, const size_t *lens,
                        size_t n, uint8_t *results)
{
    if (!f || (n && (!keys || !lens)) || (n && op != OP_ADD && !results))
        return SBLOOM_E_NULL;
    int64_t total = 0;
    for (size_t at = 0; at < n; at += ROUND_KEYS) {
        size_t len = n - at < ROUND_KEYS ? n - at : ROUND_KEYS;
        int64_t hashed = sbloom_hash_keys(f->hasher, keys + at, lens + at, len, f->hashes);
        if (hashed < 0)
            return rf_fail(f, (int)hashed, "%s", sbloom_strerror((int)hashed));
        int64_t got = run_round(f, op, f->hashes, len, results ? results + at : NULL);
        if (got < 0) {
            for (size_t i = at + len; op == OP_ADD_IF_NEW && i < n; i++)
                results[i] = SBLOOM_REDIS_NOT_ADDED;
            return got;
        }
        total += got;
    }
    return total;
}

int64_t sbloom_redis_add_hashes(sbloom_redis_t *f, const uint64_t *hashes, size_t n)
{
    return run_hashes(f, OP_ADD, hashes, n, NULL);
}

int64_t sbloom_redis_contains_hashes(sbloom_redis_t *f, const uint64_t *hashes, size_t n,
                                     uint8_t *results)
{
    return run_hashes(f, OP_CONTAINS, hashes, n, results);
}

int64_t sbloom_redis_add_if_new_hashes(sbloom_redis_t *f, const uint64_t *hashes, size_t n,
                                       uint8_t *is_new)
{
    return run_hashes(f, OP_ADD_IF_NEW, hashes, n, is_new);
}

int64_t sbloom_redis_add_keys(sbloom_redis_t *f, const void *const *keys, const size_t *lens,
                              size_t n)
{
    return run_keys(f, OP_ADD, keys, lens, n, NULL);
}

int64_t sbloom_redis_contains_keys(sbloom_redis_t *f, const void *const *keys, const size_t *lens,
                                   size_t n, uint8_t *results)
{
    return run_keys(f, OP_CONTAINS, keys, lens, n, results);
}

int64_t sbloom_redis_add_if_new_keys(sbloom_redis_t *f, const void *const *keys, const size_t *lens,
                                     size_t n, uint8_t *is_new)
{
    return run_keys(f, OP_ADD_IF_NEW, keys, lens, n, is_new);
}
