/*
 * The Redis filter's handle (struct sbloom_redis) and what its files share: errors and messages,
 * building and running commands, the item counter. Nothing here is installed.
 *   handle.c     errors, commands, the counter
 *   filter.c     the plan: found or made in Redis; open and close
 *   rounds.c     adds and lookups, a round of keys at a time
 *   transfer.c   whole-filter operations: info, push, pull, drop
 *   shards.c     the shards' markers: written when a filter is made, checked, repaired
 */
#ifndef SIMDBLOOM_REDIS_HANDLE_H
#define SIMDBLOOM_REDIS_HANDLE_H

#include <hiredis/hiredis.h>

#include "cluster.h"
#include "plan.h"
#include "simdbloom_redis.h"

/* Keys per pipelined round. On the 3-master, 3-replica cluster of bench/redis-bench, rounds of
 * 2048 keys (about 32 keys a BITFIELD) took add_if_new to 205,299-245,918 keys/s in four runs,
 * against 165,032-206,278 for 1024 and 178,855-183,522 for 8192, and the servers' CPU from
 * 6.4-7.5 to 5.75-6.6 us a key. */
#define ROUND_KEYS 2048
#define GROUP_SHARDS 8 /* shards copied per round by push and pull */
#define SCAN_GROUP 256 /* shards whose markers are read or written per pipeline */
#define DEFAULT_FRONT_BYTES (UINT64_C(1) << 30)
#define MAX_K 16
#define OFFSET_CHARS 24
#define GEN_KEY_CHARS 200 /* a generation's shard key: "sbloom:{NAME#i}:PERIOD" */

typedef enum { OP_ADD, OP_ADD_IF_NEW, OP_CONTAINS } redis_op;

struct sbloom_redis {
    rc_cluster *cluster;
    char name[129];
    sbloom_redis_plan plan;
    uint32_t block_bytes, k;
    uint64_t nblocks, shard_blocks;
    char meta_key[160], items_key[168], ready_key[168];
    char **shard_keys;
    uint16_t *shard_slots;
    /* Markers (plans of version 2): each shard's 8 bytes after its blocks, and where they are
     * as text: the bit offset (BITFIELD GET i64) and the byte range (GETRANGE). */
    int marked;
    uint8_t (*marker)[8];
    char (*marker_bit)[OFFSET_CHARS];
    char (*marker_from)[OFFSET_CHARS];
    char (*marker_to)[OFFSET_CHARS];
    uint64_t damaged_shard; /* the first shard a round found damaged (when one did) */
    size_t scan_group;      /* shards a pipeline of marker scans and writes: SCAN_GROUP */
    uint8_t *shard_bad;     /* a lookup round's scratch: 1 for shards whose marker was wrong */
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
    /* A windowed filter (plan version 3; periods 0 otherwise): the window, this client's period
     * (now / period by its clock), and for each shard the keys of the generations a round
     * reads, oldest first: periods current - G .. current + 1 (GEN_KEYS(f) of them a shard;
     * the one after the current is a client's whose clock runs ahead). */
    uint32_t periods;
    uint64_t period;  /* seconds */
    uint64_t current; /* UINT64_MAX until the first advance */
    char (*gen_keys)[GEN_KEY_CHARS];
    char expire_arg[24]; /* when the current generation expires, in ms */
    /* The clock checked in every round against the server's (a quarter period apart at most):
     * this client's at the last advance (seconds), and as the script's arguments (ms). */
    uint64_t now;
    char now_arg[24], tolerance_arg[24];
    /* Generations that must be there: per shard, GEN_KEYS(f) slots (a period q in slot q mod
     * GEN_KEYS): the periods in which this client's adds found or made the shard's generation.
     * Until its expiry (after the window has passed it) only a deletion or an eviction removes
     * it, and a round that finds it gone fails (SBLOOM_REDIS_E_DAMAGED) instead of making it
     * anew, empty. must_live: a round's flags ('1': must be there), GEN_KEYS(f) a shard. */
    uint64_t *made;
    char *must_live;
    char gen_count_arg[8], current_arg[8];
    char gen_items_keys[SBLOOM_WINDOW_MAX_PERIODS + 2][GEN_KEY_CHARS]; /* their counters */
};

/* Generation keys a round reads per shard. */
#define GEN_KEYS(f) ((f)->periods + 2)
/* The script a windowed round runs per shard (rounds.c). */
extern const char rf_window_script[];
/* windows.c: a windowed filter's generation keys and counters for the period now / period,
 * its pending count sent first (to the period it was counted in). */
int rf_window_move(sbloom_redis_t *f, uint64_t now);
/* When generation q's keys expire: ((q + G + 1) x P + P / 4) seconds, in ms (the quarter period
 * is the clocks' tolerance, docs/DISTRIBUTED.md). */
uint64_t rf_window_expiry_ms(const sbloom_redis_t *f, uint64_t q);
/* The clocks' tolerance: a quarter period, rounded up (seconds). */
uint64_t rf_window_tolerance(const sbloom_redis_t *f);
/* 0 when a window of `periods` of `period` seconds has expiry times, in ms, that fit Redis's
 * signed 64-bit ones from now until long after; else a message and SBLOOM_E_INVALID. */
int rf_window_fits(sbloom_redis_t *f, uint32_t periods, uint64_t period, uint64_t now);
/* This client's clock against the server's (TIME, on the node of the filter's plan): 0, or
 * SBLOOM_REDIS_E_CLOCK with a message naming both when they differ by more than the tolerance. */
int rf_window_check_clock(sbloom_redis_t *f, uint64_t now);
/* The same error for a round whose script found the clocks apart (its reply "SBLOOMCLOCK MS"). */
int rf_window_clock_failed(sbloom_redis_t *f, const char *reply);
/* The must_live flags of shard s for the generations a round reads, and after an add round the
 * shard's current generation recorded as made. */
const char *rf_window_must_live(sbloom_redis_t *f, uint64_t s);
void rf_window_made(sbloom_redis_t *f, uint64_t s);

/* shards.c. The payload bytes shard s holds (the last may hold fewer blocks). */
uint64_t rf_shard_payload(const sbloom_redis_t *f, uint64_t s);
/* Computes every shard's marker and its offsets (after the shards' keys are made). */
int rf_make_markers(sbloom_redis_t *f);
/* A new filter of version 2: writes every shard's marker (idempotent: any client that finds the
 * filter not yet ready does it), then the ready key. */
int rf_mark_shards(sbloom_redis_t *f);
/* 1 if a BITFIELD GET i64 reply (or a GETRANGE reply of the marker's 8 bytes) is shard s's
 * marker. */
int rf_marker_integer_ok(const sbloom_redis_t *f, uint64_t s, const redisReply *r);
int rf_marker_bytes_ok(const sbloom_redis_t *f, uint64_t s, const redisReply *r);
/* The error for a shard found damaged by a round (and remembered in damaged_shard). */
int rf_damaged(sbloom_redis_t *f, uint64_t s);

/* handle.c: the message of an error (printf-style) set on the handle, and code returned. */
int rf_fail(sbloom_redis_t *f, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* An error from rc_run: its message becomes the handle's. */
int rf_cluster_failed(sbloom_redis_t *f, int code);
/* 1 if name can be a filter's name (1 to 128 printable characters, no braces). */
int rf_valid_name(const char *name);
/* One command: argv[0..argc) with their lengths in argvlen, filled by the caller. */
void rf_point_command(rc_cmd *cmd, const char **argv, size_t *argvlen, int argc, uint16_t slot);
/* The same with the lengths from strlen (none of these arguments holds a NUL). */
void rf_set_command(rc_cmd *cmd, const char **argv, size_t *argvlen, int argc, uint16_t slot);
/* Runs one command to the slot of `key` and hands back its reply (the caller frees it). */
int rf_run_one(sbloom_redis_t *f, redisReply **reply, const char *key, int argc, ...);
/* The counter's INCRBY, appended to a round's commands when keys were found new since the last
 * one: the new command count. */
size_t rf_append_items_command(sbloom_redis_t *f, size_t ncmd, size_t *arg);
/* Sends the counter's pending INCRBY now; reads the counter. */
int rf_flush_items(sbloom_redis_t *f);
int rf_read_items(sbloom_redis_t *f, uint64_t *items);

#endif /* SIMDBLOOM_REDIS_HANDLE_H */
