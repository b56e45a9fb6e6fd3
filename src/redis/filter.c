/*
 * simdbloom-redis: a filter whose bits live in Redis shard strings (include/simdbloom_redis.h).
 * This file: the plan (found in Redis, or made and stored there), open and close. The rounds of
 * adds and lookups are in rounds.c, whole-filter operations in transfer.c (handle.h).
 */
#include <hiredis/hiredis.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "handle.h"

/* ---- The plan ------------------------------------------------------------------------------ */

static void format_meta(const sbloom_redis_t *f, char *buf, size_t cap)
{
    rp_plan plan = {f->plan.layout,      f->plan.bytes,
                    f->shard_blocks,     f->plan.planned_items,
                    f->plan.planned_fpp, f->periods ? RP_WINDOWED_VERSION : RP_FORMAT_VERSION,
                    f->periods,          f->period};
    rp_format(&plan, buf, cap);
}

/* Fills the plan from a stored meta value; SBLOOM_REDIS_E_PLAN if it is not one. */
static int parse_meta(sbloom_redis_t *f, const char *text)
{
    rp_plan plan;
    char why[300];
    switch (rp_parse(text, &plan, why, sizeof why)) {
    case RP_OK: break;
    case RP_NOT_A_PLAN:
        return rf_fail(f, SBLOOM_REDIS_E_PLAN, "%s holds no simdbloom filter plan", f->meta_key);
    case RP_VERSION: return rf_fail(f, SBLOOM_REDIS_E_PLAN, "filter %s has %s", f->name, why);
    default:
        return rf_fail(f, SBLOOM_REDIS_E_PLAN, "filter %s has a damaged plan: %s", f->name, why);
    }
    f->plan.layout = plan.layout;
    f->plan.bytes = plan.bytes;
    f->plan.planned_items = plan.planned_items;
    f->plan.planned_fpp = plan.planned_fpp;
    f->shard_blocks = plan.shard_blocks;
    f->marked = plan.version >= 2;
    f->periods = plan.periods;
    f->period = plan.period;
    return 0;
}

/* The stored plan (or, with want, the plan created from it when none is stored yet); windowed:
 * what the caller opens, which the stored plan must be. */
static int load_or_create_plan(sbloom_redis_t *f, const sbloom_redis_plan *want, int windowed)
{
    redisReply *r;
    int rc = rf_run_one(f, &r, f->meta_key, 2, "GET", f->meta_key);
    if (rc)
        return rc;
    if (r->type == REDIS_REPLY_NIL && want) {
        freeReplyObject(r);
        char meta[256];
        format_meta(f, meta, sizeof meta);
        /* SET NX: of several clients creating at once, one writes; the others read its plan. */
        rc = rf_run_one(f, &r, f->meta_key, 4, "SET", f->meta_key, meta, "NX");
        if (rc)
            return rc;
        freeReplyObject(r);
        if ((rc = rf_run_one(f, &r, f->meta_key, 2, "GET", f->meta_key)))
            return rc;
    }
    if (r->type == REDIS_REPLY_NIL) {
        freeReplyObject(r);
        return rf_fail(f, SBLOOM_REDIS_E_NOT_FOUND, "no filter named %s in Redis (%s is absent)",
                       f->name, f->meta_key);
    }
    if (r->type != REDIS_REPLY_STRING) {
        freeReplyObject(r);
        return rf_fail(f, SBLOOM_REDIS_E_PLAN, "%s is not a simdbloom filter plan", f->meta_key);
    }
    sbloom_redis_plan asked = f->plan;
    uint32_t asked_periods = f->periods;
    uint64_t asked_period = f->period;
    rc = parse_meta(f, r->str);
    freeReplyObject(r);
    if (rc)
        return rc;
    if (!windowed != !f->periods)
        return rf_fail(f, SBLOOM_REDIS_E_PLAN,
                       f->periods ? "filter %s is windowed: open it as one (--forget-after)"
                                  : "filter %s is not windowed: open it without a window",
                       f->name);
    if (want && windowed && (asked_periods != f->periods || asked_period != f->period))
        return rf_fail(f, SBLOOM_REDIS_E_PLAN,
                       "filter %s forgets after %u periods of %llu s; this client asks for %u of "
                       "%llu s (open it without a plan, or pick another name)",
                       f->name, f->periods, (unsigned long long)f->period, asked_periods,
                       (unsigned long long)asked_period);
    if (want && (asked.layout != f->plan.layout || asked.bytes != f->plan.bytes))
        return rf_fail(f, SBLOOM_REDIS_E_PLAN,
                       "filter %s exists with layout %s and %llu bytes; this client's plan is "
                       "layout %s and %llu bytes (open it without a plan, or pick another name)",
                       f->name, sbloom_layout_name(f->plan.layout),
                       (unsigned long long)f->plan.bytes, sbloom_layout_name(asked.layout),
                       (unsigned long long)asked.bytes);
    return 0;
}

static int make_shards_and_scratch(sbloom_redis_t *f)
{
    f->block_bytes = sbloom_layout_block_bytes(f->plan.layout);
    f->k = sbloom_layout_k(f->plan.layout);
    f->nblocks = f->plan.bytes / f->block_bytes;
    f->plan.shards = (f->nblocks + f->shard_blocks - 1) / f->shard_blocks;
    f->plan.shard_bytes = f->shard_blocks * f->block_bytes;
    uint64_t shards = f->plan.shards;
    f->shard_keys = calloc(shards, sizeof *f->shard_keys);
    f->shard_slots = calloc(shards, sizeof *f->shard_slots);
    f->shard_count = calloc(shards + 1, sizeof *f->shard_count);
    f->shard_bad = calloc(shards, 1);
    f->block = malloc(ROUND_KEYS * sizeof *f->block);
    f->mask = malloc((size_t)ROUND_KEYS * f->block_bytes);
    f->ask = malloc(ROUND_KEYS);
    f->present = malloc(ROUND_KEYS);
    f->by_shard = malloc(ROUND_KEYS * sizeof *f->by_shard);
    /* a GETRANGE per key and one a shard for its marker, or fewer BITFIELDs; the INCRBY */
    size_t max_cmds = 2 * ROUND_KEYS + 1;
    size_t max_args = (size_t)ROUND_KEYS * 4 * MAX_K + 4 * max_cmds;
    f->shard_of_cmd = malloc(max_cmds * sizeof *f->shard_of_cmd);
    f->cmds = calloc(max_cmds, sizeof *f->cmds);
    f->argv = malloc(max_args * sizeof *f->argv);
    f->argvlen = malloc(max_args * sizeof *f->argvlen);
    f->offsets = malloc((size_t)ROUND_KEYS * MAX_K * OFFSET_CHARS);
    if (f->periods) {
        f->gen_keys = calloc(shards * GEN_KEYS(f), sizeof *f->gen_keys);
        f->made = malloc(shards * GEN_KEYS(f) * sizeof *f->made);
        f->must_live = malloc(shards * (GEN_KEYS(f) + 1));
        for (uint64_t i = 0; f->made && i < shards * GEN_KEYS(f); i++)
            f->made[i] = UINT64_MAX; /* no generation made or found by this client yet */
    }
    if (!f->shard_keys || !f->shard_slots || !f->shard_count || !f->shard_bad || !f->block ||
        !f->mask || !f->ask || !f->present || !f->by_shard || !f->shard_of_cmd || !f->cmds ||
        !f->argv || !f->argvlen || !f->offsets ||
        (f->periods && (!f->gen_keys || !f->made || !f->must_live)))
        return rf_fail(f, SBLOOM_E_NOMEM, "out of memory");
    for (uint64_t i = 0; i < shards; i++) {
        char key[192];
        int len = snprintf(key, sizeof key, "sbloom:{%s#%llu}", f->name, (unsigned long long)i);
        if (!(f->shard_keys[i] = strdup(key)))
            return rf_fail(f, SBLOOM_E_NOMEM, "out of memory");
        f->shard_slots[i] = rc_slot(key, (size_t)len);
    }
    return rf_make_markers(f);
}

/* sbloom_redis_open, and with windowed sbloom_redis_open_windowed: periods and period (0: the
 * stored plan's) and the clock now. */
static int open_filter(sbloom_redis_t **out, const sbloom_redis_options *options, const char *name,
                       const sbloom_redis_plan *plan, int windowed, uint32_t periods,
                       uint64_t period, uint64_t now, char *err, size_t errcap)
{
    char scratch[8];
    if (!err) {
        err = scratch;
        errcap = sizeof scratch;
    }
    if (errcap)
        err[0] = '\0';
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (!options || !name || !options->nodes) {
        snprintf(err, errcap, "options, nodes and name are required");
        return SBLOOM_E_NULL;
    }
    if (options->size < sizeof(sbloom_redis_options) ||
        (plan && plan->size < sizeof(sbloom_redis_plan))) {
        snprintf(err, errcap, "options or plan not initialized (sbloom_redis_*_init)");
        return SBLOOM_E_INVALID;
    }
    if (!rf_valid_name(name)) {
        snprintf(err, errcap,
                 "bad filter name '%s': 1 to 128 printable characters, no space, '{' or '}'", name);
        return SBLOOM_E_INVALID;
    }
    if (plan &&
        (!rp_bit_layout(plan->layout) || plan->bytes == 0 || plan->bytes > SBLOOM_MAX_BYTES)) {
        snprintf(err, errcap, "%s",
                 !rp_bit_layout(plan->layout)
                     ? "a Redis filter takes a bit layout: parquet, block512-k8 or block512-k16"
                     : "the plan's size must be 1 byte to 64 GiB");
        return plan->bytes > SBLOOM_MAX_BYTES ? SBLOOM_E_TOO_LARGE : SBLOOM_E_LAYOUT;
    }
    if (windowed && (periods > SBLOOM_WINDOW_MAX_PERIODS || (plan && (!periods || !period)) ||
                     (!periods != !period))) {
        snprintf(err, errcap, "a window is 1 to %d periods of at least one second",
                 SBLOOM_WINDOW_MAX_PERIODS);
        return SBLOOM_E_INVALID;
    }
    sbloom_redis_t *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errcap, "out of memory");
        return SBLOOM_E_NOMEM;
    }
    f->periods = windowed ? periods : 0;
    f->period = windowed ? period : 0;
    f->current = UINT64_MAX;
    f->scan_group = SCAN_GROUP;
    snprintf(f->name, sizeof f->name, "%s", name);
    snprintf(f->meta_key, sizeof f->meta_key, "sbloom:{%s}", name);
    snprintf(f->items_key, sizeof f->items_key, "sbloom:{%s}:items", name);
    snprintf(f->ready_key, sizeof f->ready_key, "sbloom:{%s}:ready", name);
    if (plan) {
        f->plan = *plan;
        uint32_t bb = sbloom_layout_block_bytes(plan->layout);
        f->plan.bytes = (plan->bytes + bb - 1) / bb * bb;
        if (!f->plan.planned_items)
            f->plan.planned_fpp = NAN;
        f->shard_blocks = rp_shard_blocks_for(f->plan.layout, f->plan.bytes);
    }
    const char *password = options->password ? options->password : getenv("REDISCLI_AUTH");
    if (password && !*password)
        password = NULL;
    int rc = windowed && period ? rf_window_fits(f, periods, period, now) : 0;
    if (rc == 0)
        rc = rc_connect(&f->cluster, options->nodes, password,
                        options->timeout > 0 ? options->timeout : 5.0,
                        options->retry > 0 ? options->retry : 30.0, f->message, sizeof f->message);
    /* a window's clocks checked before anything is written (a plan given: it may be created) */
    if (rc == 0 && windowed && period)
        rc = rf_window_check_clock(f, now);
    if (rc == 0)
        rc = load_or_create_plan(f, plan ? &f->plan : NULL, windowed);
    if (rc == 0 && windowed && !period) /* the window read from Redis */
        rc = rf_window_fits(f, f->periods, f->period, now) ? SBLOOM_REDIS_E_PLAN
                                                           : rf_window_check_clock(f, now);
    if (rc == 0)
        rc = make_shards_and_scratch(f);
    if (rc == 0 && f->marked && !f->periods) /* a window's generations are marked as made */
        rc = rf_mark_shards(f);
    if (rc == 0 && f->periods)
        rc = rf_window_move(f, now);
    /* no local front for a window: what it has seen, the window forgets */
    uint64_t front_max = options->front_bytes ? options->front_bytes : DEFAULT_FRONT_BYTES;
    if (rc == 0 && !(options->flags & SBLOOM_REDIS_NO_FRONT) && f->plan.bytes <= front_max &&
        !f->periods)
        rc = sbloom_create_bytes(&f->front, f->plan.bytes, f->plan.layout);
    if (rc == 0)
        rc = sbloom_create_bytes(&f->hasher, f->block_bytes, f->plan.layout);
    if (rc) {
        if (!f->message[0])
            snprintf(f->message, sizeof f->message, "%s", sbloom_strerror(rc));
        snprintf(err, errcap, "%s", f->message);
        sbloom_redis_close(f);
        return rc;
    }
    *out = f;
    return 0;
}

int sbloom_redis_open(sbloom_redis_t **out, const sbloom_redis_options *options, const char *name,
                      const sbloom_redis_plan *plan, char *err, size_t errcap)
{
    return open_filter(out, options, name, plan, 0, 0, 0, 0, err, errcap);
}

int sbloom_redis_open_windowed(sbloom_redis_t **out, const sbloom_redis_options *options,
                               const char *name, const sbloom_redis_plan *plan, uint32_t periods,
                               uint64_t period, uint64_t now, char *err, size_t errcap)
{
    return open_filter(out, options, name, plan, 1, periods, period, now, err, errcap);
}

int sbloom_redis_get_plan(const sbloom_redis_t *f, sbloom_redis_plan *out)
{
    if (!f || !out)
        return SBLOOM_E_NULL;
    if (out->size < sizeof *out)
        return SBLOOM_E_INVALID;
    *out = f->plan;
    return 0;
}

uint64_t sbloom_redis_hash(const sbloom_redis_t *f, const void *key, size_t len)
{
    return f ? sbloom_hash(f->hasher, key, len) : 0;
}

void sbloom_redis_close(sbloom_redis_t *f)
{
    if (!f)
        return;
    if (f->cluster && f->cmds)
        rf_flush_items(f);
    rc_close(f->cluster);
    for (uint64_t i = 0; f->shard_keys && i < f->plan.shards; i++)
        free(f->shard_keys[i]);
    free(f->shard_keys);
    free(f->shard_slots);
    free(f->shard_count);
    free(f->shard_bad);
    free(f->block);
    free(f->mask);
    free(f->ask);
    free(f->present);
    free(f->by_shard);
    free(f->shard_of_cmd);
    free(f->cmds);
    free(f->argv);
    free(f->argvlen);
    free(f->offsets);
    free(f->marker);
    free(f->marker_bit);
    free(f->marker_from);
    free(f->marker_to);
    free(f->gen_keys);
    free(f->made);
    free(f->must_live);
    sbloom_free(f->front);
    sbloom_free(f->hasher);
    free(f);
}
