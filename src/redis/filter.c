/*
 * simdbloom-redis: a filter whose bits live in Redis shard strings (include/simdbloom_redis.h).
 * Keys are located locally (sbloom_locate); a round of keys becomes one BITFIELD per shard for
 * adds (SET u1 of every bit: the old bits say whether the key was new) or one GETRANGE of the
 * key's block per key for lookups (the block is then tested here), sent through rc_run.
 */
#include <hiredis/hiredis.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "plan.h"
#include "simdbloom_redis.h"

/* Keys per pipelined round. On the 3-master, 3-replica cluster of bench/redis-bench, rounds of
 * 2048 keys (about 32 keys a BITFIELD) took add_if_new to 205,299-245,918 keys/s in four runs,
 * against 165,032-206,278 for 1024 and 178,855-183,522 for 8192, and the servers' CPU from
 * 6.4-7.5 to 5.75-6.6 us a key. */
#define ROUND_KEYS 2048
#define GROUP_SHARDS 8 /* shards copied per round by push and pull */
#define DEFAULT_FRONT_BYTES (UINT64_C(1) << 30)
#define MAX_K 16
#define OFFSET_CHARS 24

typedef enum { OP_ADD, OP_ADD_IF_NEW, OP_CONTAINS } redis_op;

struct sbloom_redis {
    rc_cluster *cluster;
    char name[129];
    sbloom_redis_plan plan;
    uint32_t block_bytes, k;
    uint64_t nblocks, shard_blocks;
    char meta_key[160], items_key[168];
    char **shard_keys;
    uint16_t *shard_slots;
    sbloom_t *front;        /* keys known to be in the fleet table, same plan; or NULL */
    sbloom_t *hasher;       /* a one-block filter of the layout: hashes keys as the plan's filter */
    uint64_t items_pending; /* keys found new, not yet added to the counter */
    char items_arg[24];
    /* A round's scratch space, sized for ROUND_KEYS keys. */
    uint64_t *block;
    uint8_t *mask;      /* block_bytes per key */
    uint8_t *ask;       /* 1: the key goes to Redis (the front did not answer it) */
    uint8_t *present;   /* adds' GETRANGE pre-check: 1 where every bit was set */
    int precheck;       /* pre-check this round (most keys of the last one were present) */
    uint32_t *by_shard; /* the keys asked, grouped by shard */
    uint32_t *shard_of_cmd;
    uint64_t *shard_count;
    rc_cmd *cmds;
    const char **argv;
    size_t *argvlen;
    char *offsets; /* OFFSET_CHARS per bit (adds) or two per key (GETRANGE's range) */
    uint64_t hashes[ROUND_KEYS];
    char message[512];
};

const char *sbloom_redis_strerror(int code)
{
    switch (code) {
    case SBLOOM_REDIS_E_CONNECT: return "cannot reach the Redis nodes";
    case SBLOOM_REDIS_E_AUTH: return "Redis refused the login";
    case SBLOOM_REDIS_E_PROTOCOL: return "not a Redis server, or an unexpected reply";
    case SBLOOM_REDIS_E_CLUSTER: return "the Redis Cluster is down";
    case SBLOOM_REDIS_E_PLAN: return "the filter in Redis has another plan";
    case SBLOOM_REDIS_E_NOT_FOUND: return "no such filter in Redis";
    case SBLOOM_REDIS_E_REPLY: return "Redis answered with an error";
    default: return sbloom_strerror(code);
    }
}

static int fail(sbloom_redis_t *f, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(sbloom_redis_t *f, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    va_end(ap);
    return code;
}

/* An error from rc_run: its message becomes the filter's. */
static int cluster_failed(sbloom_redis_t *f, int code)
{
    snprintf(f->message, sizeof f->message, "%s", rc_message(f->cluster));
    return code;
}

const char *sbloom_redis_message(const sbloom_redis_t *f)
{
    return f ? f->message : "";
}

static int valid_name(const char *name)
{
    size_t len = strlen(name);
    if (len == 0 || len > 128)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (name[i] <= ' ' || name[i] > '~' || name[i] == '{' || name[i] == '}')
            return 0;
    return 1;
}

/* One command: argv[0..argc) with their lengths in argvlen, filled by the caller. */
static void point_command(rc_cmd *cmd, const char **argv, size_t *argvlen, int argc, uint16_t slot)
{
    cmd->argc = argc;
    cmd->argv = argv;
    cmd->argvlen = argvlen;
    cmd->slot = slot;
}

/* The same with the lengths from strlen (none of these arguments holds a NUL). */
static void set_command(rc_cmd *cmd, const char **argv, size_t *argvlen, int argc, uint16_t slot)
{
    for (int i = 0; i < argc; i++)
        argvlen[i] = strlen(argv[i]);
    point_command(cmd, argv, argvlen, argc, slot);
}

/* Runs one command to the slot of `key` and hands back its reply (the caller frees it). */
static int run_one(sbloom_redis_t *f, redisReply **reply, const char *key, int argc, ...)
{
    const char *argv[8];
    size_t argvlen[8];
    va_list ap;
    va_start(ap, argc);
    for (int i = 0; i < argc && i < 8; i++)
        argv[i] = va_arg(ap, const char *);
    va_end(ap);
    rc_cmd cmd;
    set_command(&cmd, argv, argvlen, argc, rc_slot(key, strlen(key)));
    int rc = rc_run(f->cluster, &cmd, 1);
    if (rc) {
        rc_cmds_release(&cmd, 1);
        return cluster_failed(f, rc);
    }
    *reply = cmd.reply;
    return 0;
}

/* ---- The plan ------------------------------------------------------------------------------ */

static void format_meta(const sbloom_redis_t *f, char *buf, size_t cap)
{
    rp_plan plan = {f->plan.layout, f->plan.bytes, f->shard_blocks, f->plan.planned_items,
                    f->plan.planned_fpp};
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
        return fail(f, SBLOOM_REDIS_E_PLAN, "%s holds no simdbloom filter plan", f->meta_key);
    case RP_VERSION: return fail(f, SBLOOM_REDIS_E_PLAN, "filter %s has %s", f->name, why);
    default: return fail(f, SBLOOM_REDIS_E_PLAN, "filter %s has a damaged plan: %s", f->name, why);
    }
    f->plan.layout = plan.layout;
    f->plan.bytes = plan.bytes;
    f->plan.planned_items = plan.planned_items;
    f->plan.planned_fpp = plan.planned_fpp;
    f->shard_blocks = plan.shard_blocks;
    return 0;
}

/* The stored plan (or, with want, the plan created from it when none is stored yet). */
static int load_or_create_plan(sbloom_redis_t *f, const sbloom_redis_plan *want)
{
    redisReply *r;
    int rc = run_one(f, &r, f->meta_key, 2, "GET", f->meta_key);
    if (rc)
        return rc;
    if (r->type == REDIS_REPLY_NIL && want) {
        freeReplyObject(r);
        char meta[256];
        format_meta(f, meta, sizeof meta);
        /* SET NX: of several clients creating at once, one writes; the others read its plan. */
        rc = run_one(f, &r, f->meta_key, 4, "SET", f->meta_key, meta, "NX");
        if (rc)
            return rc;
        freeReplyObject(r);
        if ((rc = run_one(f, &r, f->meta_key, 2, "GET", f->meta_key)))
            return rc;
    }
    if (r->type == REDIS_REPLY_NIL) {
        freeReplyObject(r);
        return fail(f, SBLOOM_REDIS_E_NOT_FOUND, "no filter named %s in Redis (%s is absent)",
                    f->name, f->meta_key);
    }
    if (r->type != REDIS_REPLY_STRING) {
        freeReplyObject(r);
        return fail(f, SBLOOM_REDIS_E_PLAN, "%s is not a simdbloom filter plan", f->meta_key);
    }
    sbloom_redis_plan asked = f->plan;
    rc = parse_meta(f, r->str);
    freeReplyObject(r);
    if (rc)
        return rc;
    if (want && (asked.layout != f->plan.layout || asked.bytes != f->plan.bytes))
        return fail(f, SBLOOM_REDIS_E_PLAN,
                    "filter %s exists with layout %s and %llu bytes; this client's plan is "
                    "layout %s and %llu bytes (open it without a plan, or pick another name)",
                    f->name, sbloom_layout_name(f->plan.layout), (unsigned long long)f->plan.bytes,
                    sbloom_layout_name(asked.layout), (unsigned long long)asked.bytes);
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
    f->block = malloc(ROUND_KEYS * sizeof *f->block);
    f->mask = malloc((size_t)ROUND_KEYS * f->block_bytes);
    f->ask = malloc(ROUND_KEYS);
    f->present = malloc(ROUND_KEYS);
    f->by_shard = malloc(ROUND_KEYS * sizeof *f->by_shard);
    size_t max_cmds = ROUND_KEYS + 1; /* a GETRANGE per key, or fewer BITFIELDs; the INCRBY */
    size_t max_args = (size_t)ROUND_KEYS * 4 * MAX_K + 4 * max_cmds;
    f->shard_of_cmd = malloc(max_cmds * sizeof *f->shard_of_cmd);
    f->cmds = calloc(max_cmds, sizeof *f->cmds);
    f->argv = malloc(max_args * sizeof *f->argv);
    f->argvlen = malloc(max_args * sizeof *f->argvlen);
    f->offsets = malloc((size_t)ROUND_KEYS * MAX_K * OFFSET_CHARS);
    if (!f->shard_keys || !f->shard_slots || !f->shard_count || !f->block || !f->mask || !f->ask ||
        !f->present || !f->by_shard || !f->shard_of_cmd || !f->cmds || !f->argv || !f->argvlen ||
        !f->offsets)
        return fail(f, SBLOOM_E_NOMEM, "out of memory");
    for (uint64_t i = 0; i < shards; i++) {
        char key[192];
        int len = snprintf(key, sizeof key, "sbloom:{%s#%llu}", f->name, (unsigned long long)i);
        if (!(f->shard_keys[i] = strdup(key)))
            return fail(f, SBLOOM_E_NOMEM, "out of memory");
        f->shard_slots[i] = rc_slot(key, (size_t)len);
    }
    return 0;
}

int sbloom_redis_open(sbloom_redis_t **out, const sbloom_redis_options *options, const char *name,
                      const sbloom_redis_plan *plan, char *err, size_t errcap)
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
    if (!valid_name(name)) {
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
    sbloom_redis_t *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errcap, "out of memory");
        return SBLOOM_E_NOMEM;
    }
    snprintf(f->name, sizeof f->name, "%s", name);
    snprintf(f->meta_key, sizeof f->meta_key, "sbloom:{%s}", name);
    snprintf(f->items_key, sizeof f->items_key, "sbloom:{%s}:items", name);
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
    int rc = rc_connect(&f->cluster, options->nodes, password,
                        options->timeout > 0 ? options->timeout : 5.0,
                        options->retry > 0 ? options->retry : 30.0, f->message, sizeof f->message);
    if (rc == 0)
        rc = load_or_create_plan(f, plan ? &f->plan : NULL);
    if (rc == 0)
        rc = make_shards_and_scratch(f);
    uint64_t front_max = options->front_bytes ? options->front_bytes : DEFAULT_FRONT_BYTES;
    if (rc == 0 && !(options->flags & SBLOOM_REDIS_NO_FRONT) && f->plan.bytes <= front_max)
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

/* The counter's INCRBY, appended to a round when keys were found new since the last one. */
static size_t append_items_command(sbloom_redis_t *f, size_t ncmd, size_t *arg)
{
    if (!f->items_pending)
        return ncmd;
    snprintf(f->items_arg, sizeof f->items_arg, "%llu", (unsigned long long)f->items_pending);
    const char **argv = f->argv + *arg;
    argv[0] = "INCRBY";
    argv[1] = f->items_key;
    argv[2] = f->items_arg;
    set_command(&f->cmds[ncmd], argv, f->argvlen + *arg, 3,
                rc_slot(f->items_key, strlen(f->items_key)));
    f->shard_of_cmd[ncmd] = UINT32_MAX;
    *arg += 3;
    return ncmd + 1;
}

/* ---- Rounds ---------------------------------------------------------------------------------- */

/* Adds: one BITFIELD per shard with keys, SET u1 OFFSET 1 for each bit of each key (Redis
 * numbers a string's bits from the most significant bit of its first byte). */
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
        for (uint64_t j = from; j < to; j++) {
            uint32_t i = f->by_shard[j];
            uint64_t base = (f->block[i] % f->shard_blocks) * f->block_bytes * 8;
            const uint8_t *mask = f->mask + (size_t)i * f->block_bytes;
            char *text = f->offsets + (size_t)j * MAX_K * OFFSET_CHARS;
            for (uint32_t b = 0; b < f->block_bytes; b++)
                for (int bit = 0; mask[b] && bit < 8; bit++)
                    if (mask[b] >> bit & 1) {
                        argv[argc] = set_u1[0], lens[argc++] = 3;
                        argv[argc] = set_u1[1], lens[argc++] = 2;
                        argv[argc] = text;
                        lens[argc++] = rc_u64_text(text, base + b * 8u + (7u - (unsigned)bit));
                        argv[argc] = set_u1[2], lens[argc++] = 1;
                        text += OFFSET_CHARS;
                    }
        }
        point_command(&f->cmds[ncmd], argv, lens, (int)argc, f->shard_slots[s]);
        f->shard_of_cmd[ncmd++] = (uint32_t)s;
        *arg += argc;
    }
    return ncmd;
}

/* Lookups: GETRANGE of each key's block. */
static size_t build_lookups(sbloom_redis_t *f, size_t nask, size_t *arg)
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
        point_command(&f->cmds[j], argv, lens, 4, f->shard_slots[s]);
        f->shard_of_cmd[j] = (uint32_t)s;
        *arg += 4;
    }
    return nask;
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
    size_t ncmd = append_items_command(f, nwork, &arg);
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
    int64_t found = 0;
    for (size_t c = 0; c < nwork; c++) {
        redisReply *r = f->cmds[c].reply;
        if (!r)
            continue; /* no answer: left as it was */
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
    rc_cmds_release(f->cmds, nwork);
    return rc ? cluster_failed(f, rc) : found;
}

/* BITFIELD SET of each asked key's bits (grouped by group_asked); is_new[i] (if not NULL) from the
 * old bits. Returns the keys new, or a negative error; *seen counts the keys whose bits were all
 * set already. */
static int64_t add_pass(sbloom_redis_t *f, const uint64_t *hashes, uint8_t *is_new, uint64_t *seen)
{
    size_t arg = 0;
    size_t nwork = build_adds(f, &arg);
    int rc = run_commands(f, nwork, arg);
    uint64_t fresh = 0;
    for (size_t c = 0; c < nwork; c++) {
        redisReply *r = f->cmds[c].reply;
        if (!r)
            continue; /* no answer: the keys stay "new" (the command may have run) */
        uint64_t s = f->shard_of_cmd[c];
        size_t at = 0;
        for (uint64_t j = f->shard_count[s]; j < f->shard_count[s + 1]; j++) {
            uint32_t i = f->by_shard[j];
            int was_new = 0;
            for (uint32_t b = 0; b < f->k; b++, at++)
                was_new |= r->type == REDIS_REPLY_ARRAY && at < r->elements &&
                           r->element[at]->type == REDIS_REPLY_INTEGER &&
                           r->element[at]->integer == 0;
            *seen += !was_new;
            /* A command that may have run before (its connection broke): a key it reports as
             * seen may be seen because of that earlier run, so it counts as new. */
            if (f->cmds[c].uncertain)
                was_new = 1;
            fresh += (uint64_t)was_new;
            if (is_new)
                is_new[i] = (uint8_t)was_new;
            if (f->front)
                sbloom_add_hash(f->front, hashes[i]);
        }
    }
    rc_cmds_release(f->cmds, nwork);
    f->items_pending += fresh;
    return rc ? cluster_failed(f, rc) : (int64_t)fresh;
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
        if (results) /* until a reply says otherwise: new (adds), absent (lookups) */
            results[i] = op == OP_ADD_IF_NEW;
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
                results[i] = 1; /* not sent: unknown, so "new" as the header promises */
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
            return fail(f, (int)hashed, "%s", sbloom_strerror((int)hashed));
        int64_t got = run_round(f, op, f->hashes, len, results ? results + at : NULL);
        if (got < 0) {
            for (size_t i = at + len; op == OP_ADD_IF_NEW && i < n; i++)
                results[i] = 1;
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

/* ---- Whole-filter operations ------------------------------------------------------------------
 */

/* Sends the counter's pending INCRBY now. */
static int flush_items(sbloom_redis_t *f)
{
    size_t arg = 0;
    size_t ncmd = append_items_command(f, 0, &arg);
    if (!ncmd)
        return 0;
    uint64_t pending = f->items_pending;
    int rc = rc_run(f->cluster, f->cmds, ncmd);
    rc_cmds_release(f->cmds, ncmd);
    if (rc)
        return cluster_failed(f, rc);
    f->items_pending -= pending;
    return 0;
}

static int read_items(sbloom_redis_t *f, uint64_t *items)
{
    redisReply *r;
    int rc = run_one(f, &r, f->items_key, 2, "GET", f->items_key);
    if (rc)
        return rc;
    *items = r->type == REDIS_REPLY_STRING ? strtoull(r->str, NULL, 10) : 0;
    freeReplyObject(r);
    return 0;
}

/* Sends `verbs[0] SHARD`, ..., `verbs[nverbs-1] SHARD` for every shard, `group` shards a
 * round, and hands each reply to take(ctx, shard, verb, reply); stops at the first error (of
 * Redis, or returned by take). For the whole-filter reads and deletes (info, pull, drop). */
typedef int (*shard_reply_fn)(sbloom_redis_t *f, void *ctx, uint64_t shard, int verb,
                              const redisReply *reply);

static int each_shard(sbloom_redis_t *f, const char *const *verbs, int nverbs, uint64_t group,
                      shard_reply_fn take, void *ctx)
{
    int rc = 0;
    for (uint64_t s = 0; rc == 0 && s < f->plan.shards; s += group) {
        uint64_t end = s + group < f->plan.shards ? s + group : f->plan.shards;
        size_t ncmd = 0;
        for (uint64_t i = s; i < end; i++)
            for (int v = 0; v < nverbs; v++, ncmd++) {
                const char **argv = f->argv + 2 * ncmd;
                argv[0] = verbs[v];
                argv[1] = f->shard_keys[i];
                set_command(&f->cmds[ncmd], argv, f->argvlen + 2 * ncmd, 2, f->shard_slots[i]);
            }
        if ((rc = rc_run(f->cluster, f->cmds, ncmd)))
            rc = cluster_failed(f, rc);
        for (size_t c = 0; rc == 0 && c < ncmd; c++)
            rc = take(f, ctx, s + c / (size_t)nverbs, (int)(c % (size_t)nverbs), f->cmds[c].reply);
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

int sbloom_redis_get_info(sbloom_redis_t *f, sbloom_redis_info *out)
{
    if (!f || !out)
        return SBLOOM_E_NULL;
    if (out->size < sizeof *out)
        return SBLOOM_E_INVALID;
    int rc = flush_items(f);
    if (rc == 0)
        rc = read_items(f, &out->items);
    out->bits_set = out->stored_bytes = 0;
    static const char *const scans[2] = {"BITCOUNT", "STRLEN"};
    if (rc == 0)
        rc = each_shard(f, scans, 2, GROUP_SHARDS, take_counts, out);
    out->masters = rc_masters_of(f->cluster, f->shard_slots, (size_t)f->plan.shards);
    out->round_trips = rc_round_trips(f->cluster);
    return rc;
}

int sbloom_redis_push(sbloom_redis_t *f, const sbloom_t *local)
{
    if (!f || !local)
        return SBLOOM_E_NULL;
    if (sbloom_get_layout(local) != f->plan.layout || sbloom_bytes(local) != f->plan.bytes)
        return fail(f, SBLOOM_E_INCOMPATIBLE,
                    "the local filter (%s, %llu bytes) differs from %s in Redis (%s, %llu bytes)",
                    sbloom_layout_name(sbloom_get_layout(local)),
                    (unsigned long long)sbloom_bytes(local), f->name,
                    sbloom_layout_name(f->plan.layout), (unsigned long long)f->plan.bytes);
    uint8_t *bits = malloc(f->plan.bytes);
    if (!bits)
        return fail(f, SBLOOM_E_NOMEM, "out of memory");
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
            point_command(&f->cmds[ncmd++], argv, lens, 3, f->shard_slots[i]);
            argv[3] = "BITOP", argv[4] = "OR", argv[5] = f->shard_keys[i],
            argv[6] = f->shard_keys[i], argv[7] = t;
            set_command(&f->cmds[ncmd++], argv + 3, lens + 3, 5, f->shard_slots[i]);
            argv[8] = "DEL", argv[9] = t;
            set_command(&f->cmds[ncmd++], argv + 8, lens + 8, 2, f->shard_slots[i]);
            arg += 10;
        }
        if (ncmd && (rc = rc_run(f->cluster, f->cmds, ncmd)))
            rc = cluster_failed(f, rc);
        rc_cmds_release(f->cmds, ncmd);
    }
    free(bits);
    if (rc == 0) {
        f->items_pending += sbloom_items(local);
        rc = flush_items(f);
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
        return fail(f, SBLOOM_REDIS_E_PLAN, "%s is not a shard string", f->shard_keys[shard]);
    return 0;
}

int sbloom_redis_pull(sbloom_redis_t *f, sbloom_t **out)
{
    if (!f || !out)
        return SBLOOM_E_NULL;
    *out = NULL;
    int rc = flush_items(f);
    uint64_t items = 0;
    if (rc == 0)
        rc = read_items(f, &items);
    uint8_t *bits = rc == 0 ? calloc(1, f->plan.bytes) : NULL;
    if (rc == 0 && !bits)
        return fail(f, SBLOOM_E_NOMEM, "out of memory");
    static const char *const get[1] = {"GET"};
    if (rc == 0)
        rc = each_shard(f, get, 1, GROUP_SHARDS, take_shard, bits);
    if (rc == 0 && (rc = sbloom_import_bits(out, f->plan.layout, bits, f->plan.bytes, items,
                                            f->plan.planned_items, f->plan.planned_fpp)))
        fail(f, rc, "%s", sbloom_strerror(rc));
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
    int rc = each_shard(f, del, 1, 256, take_nothing, NULL);
    redisReply *r;
    if (rc == 0 && (rc = run_one(f, &r, f->items_key, 2, "DEL", f->items_key)) == 0)
        freeReplyObject(r);
    if (rc == 0 && (rc = run_one(f, &r, f->meta_key, 2, "DEL", f->meta_key)) == 0)
        freeReplyObject(r);
    return rc;
}

void sbloom_redis_close(sbloom_redis_t *f)
{
    if (!f)
        return;
    if (f->cluster && f->cmds)
        flush_items(f);
    rc_close(f->cluster);
    for (uint64_t i = 0; f->shard_keys && i < f->plan.shards; i++)
        free(f->shard_keys[i]);
    free(f->shard_keys);
    free(f->shard_slots);
    free(f->shard_count);
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
    sbloom_free(f->front);
    sbloom_free(f->hasher);
    free(f);
}
