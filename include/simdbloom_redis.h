/*
 * simdbloom-redis: one filter for a whole fleet, kept in a Redis Cluster (or one Redis server).
 *
 * A separate library (libsimdbloom-redis, built where hiredis is present) over libsimdbloom, so
 * that the core library has no network dependency. Keys are hashed and their blocks chosen
 * locally, exactly as a local filter of the same layout and size does (sbloom_locate): the
 * bits in Redis are that filter's payload bytes, cut into shard strings, and a local filter file
 * and the Redis filter are interchangeable (sbloom_redis_push, sbloom_redis_pull).
 *
 * In Redis, a filter NAME is:
 *   sbloom:{NAME}          the plan: "simdbloom-redis 1 layout=L bytes=B shard_blocks=S
 *                          planned_items=N planned_fpp=P" (set once, by whichever client
 *                          creates the filter, with SET NX)
 *   sbloom:{NAME}:items    keys reported new, summed over every client (INCRBY)
 *   sbloom:{NAME}:ready    set once every shard holds its marker (version 2)
 *   sbloom:{NAME#i}        shard i: blocks [i*S, (i+1)*S) of the payload; at least 64 shards
 *                          (fewer only for smaller filters), none over 64 MiB, spread over the
 *                          cluster's slots by their hash tags; then (version 2) 8 bytes of
 *                          marker, a hash of NAME and i, written when the filter is made
 *
 * Fail closed: a shard that Redis evicted (a maxmemory-policy of allkeys-*), that someone
 * deleted, cut short or overwrote has lost its marker. Every round reads the markers of the
 * shards it touches in the same commands (adds) or pipeline (lookups); a key of a damaged shard
 * is never answered ("seen" or "new" on the strength of bits that are gone), and the call fails
 * with SBLOOM_REDIS_E_DAMAGED naming the shard. sbloom_redis_check lists the damaged shards and
 * sbloom_redis_repair resets them. Filters made by version 1 (no markers) are still read, without
 * this check.
 *
 * Exactly once across clients: add_if_new sets a key's bits with one BITFIELD command (SET u1
 * for each of its k bits, which returns the old bit); Redis runs each command atomically, so of
 * several clients adding the same key, exactly one sees a bit that was 0 and is told "new", the
 * others "seen". Replication is asynchronous: a master that fails before its replica received
 * the last writes loses them, and a key whose bits were lost is reported new a second time
 * after the failover. A command whose connection broke before its reply arrived may or may not
 * have run; its keys are then reported new (never "seen" on the strength of their own lost
 * write), so a failure can repeat a key but never lose one. See docs/DISTRIBUTED.md.
 *
 * Errors are negative: the core library's codes (simdbloom.h) or SBLOOM_REDIS_E_*; a handle
 * keeps a one-line message for the last one (sbloom_redis_message). A handle is for one thread
 * at a time; open one per thread.
 */
#ifndef SIMDBLOOM_REDIS_H
#define SIMDBLOOM_REDIS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "simdbloom.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    SBLOOM_REDIS_E_CONNECT = -100,   /* no node reachable, or connections kept failing */
    SBLOOM_REDIS_E_AUTH = -101,      /* wrong password, or a password is needed */
    SBLOOM_REDIS_E_PROTOCOL = -102,  /* the server does not speak Redis, or replied nonsense */
    SBLOOM_REDIS_E_CLUSTER = -103,   /* the cluster stayed down (CLUSTERDOWN, TRYAGAIN, slots
                                        without a master) for the whole retry time */
    SBLOOM_REDIS_E_PLAN = -104,      /* the filter in Redis has another plan, or is not one */
    SBLOOM_REDIS_E_NOT_FOUND = -105, /* no filter of that name (opened without a plan) */
    SBLOOM_REDIS_E_REPLY = -106,     /* Redis answered with an error (out of memory, ...) */
    SBLOOM_REDIS_E_DAMAGED = -107,   /* a shard is missing or damaged (evicted, deleted,
                                        overwritten): see sbloom_redis_check */
    SBLOOM_REDIS_E_CLOCK = -108,     /* a window's client and server clocks differ by more than
                                        a quarter period: the message names both */
    SBLOOM_REDIS_E_TIMEOUT = -109    /* a server kept not answering within the timeout for the
                                        whole retry time (stopped, or overloaded) */
};

/* add_if_new's answer for a key it did not add, after an error (see the batch calls). */
#define SBLOOM_REDIS_NOT_ADDED 2

/* A short text for any code of simdbloom.h or this header. */
SBLOOM_API const char *sbloom_redis_strerror(int code);

typedef struct sbloom_redis sbloom_redis_t; /* opaque */

/* No local front (see front_bytes). */
#define SBLOOM_REDIS_NO_FRONT 1u

typedef struct sbloom_redis_options {
    size_t size;          /* set by the caller: sizeof (sbloom_redis_options_init() does) */
    const char *nodes;    /* seed nodes, "host:port[,host:port...]" (required) */
    const char *password; /* AUTH password; NULL: the environment's REDISCLI_AUTH, if set */
    double timeout;       /* seconds to connect and to wait for a reply (0: 5) */
    double retry;         /* seconds to keep retrying a cluster that is down or failing over,
                             with back-off from 10 ms to 1 s, before an error (0: 30) */
    /* The local front: every key this handle has seen in the fleet table (added, or found
     * present) is also set in a local filter of the same layout and size, and later calls
     * answer those keys without a round trip. It only ever answers "seen" for keys whose bits
     * are all in the fleet table, so it never turns "seen" into "new" and adds no false
     * positives. Memory: the filter's size, allocated when the handle opens (and, as every
     * local filter's, faulted in then on Linux); the front is used when the filter is at most
     * front_bytes (0: 1 GiB) and flags lacks SBLOOM_REDIS_NO_FRONT. */
    uint64_t front_bytes;
    unsigned flags;
} sbloom_redis_options;

static inline sbloom_redis_options sbloom_redis_options_init(void)
{
    sbloom_redis_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    return o;
}

typedef struct sbloom_redis_plan {
    size_t size;            /* set by the caller: sizeof (sbloom_redis_plan_init() does) */
    sbloom_layout layout;   /* a bit layout: parquet, block512-k8, block512-k16 */
    uint64_t bytes;         /* filter size, rounded up to whole blocks */
    uint64_t planned_items; /* the plan's n and p, kept for information (0 and NaN: none) */
    double planned_fpp;
    uint64_t shard_bytes; /* set by open: bytes per shard string */
    uint64_t shards;      /* set by open: number of shards */
} sbloom_redis_plan;

static inline sbloom_redis_plan sbloom_redis_plan_init(void)
{
    sbloom_redis_plan p;
    memset(&p, 0, sizeof p);
    p.size = sizeof p;
    return p;
}

/* Connects to the cluster (its topology from CLUSTER SLOTS; a server without cluster support is
 * a one-node cluster) and opens the filter `name` (1 to 128 printable ASCII characters, no
 * space, '{' or '}'). With a plan, the filter is created from it if absent; if present its plan
 * must have the same layout and bytes (SBLOOM_REDIS_E_PLAN otherwise). Without one (NULL) the
 * filter must exist (SBLOOM_REDIS_E_NOT_FOUND). Several clients may open with the same plan at
 * once: one creates, the others find its plan. On failure *out is NULL and err (if not NULL)
 * holds a one-line message. */
SBLOOM_API int sbloom_redis_open(sbloom_redis_t **out, const sbloom_redis_options *options,
                                 const char *name, const sbloom_redis_plan *plan, char *err,
                                 size_t errcap);
/*
 * A windowed fleet filter: "seen in the last W?" for the whole fleet, W = periods x period
 * seconds (periods 1 to 15). Each period's generation is a set of shard strings of its own,
 * "sbloom:{NAME#i}:PERIOD" (PERIOD = seconds since the epoch / period), which Redis expires by
 * itself (PEXPIREAT) a quarter period after the window has passed it: nothing sweeps. The plan
 * gives one generation: its layout and bytes (plan a filter for ceil(n / periods) keys at
 * p / (periods + 1)), and the window's n and p as planned_items and planned_fpp. Stored as plan
 * version 3, which clients that predate it refuse; a windowed filter is opened only by this
 * call (sbloom_redis_open refuses it, and this call a filter without a window), and with a plan
 * the stored one must have the same window. Without a plan (NULL) periods and period are 0 and
 * come from Redis.
 *
 * The clock is each client's, given as now (seconds since the epoch): the handle reads and adds
 * in the period now / period until sbloom_redis_advance moves it. The promise is the local
 * windowed filter's: a key added at t is held until at least t + W and forgotten by
 * t + W + period; each key is new once per window across every client, atomically (one script
 * per shard reads the generations of periods current - periods .. current + 1 and sets the key
 * in the current one only if none holds it). Clients' clocks, and the servers' (which time the
 * expiry), may differ by up to a quarter period: a client ahead by less than a period still
 * sees, and is seen in, the others' generations. A generation present but damaged (another
 * type, its marker overwritten) fails the round with SBLOOM_REDIS_E_DAMAGED naming it; one that
 * is absent is empty (expired, or never written). Keys with an expiry are what the volatile-*
 * eviction policies evict: sbloom_redis_eviction_policy reports those too for a window. No local
 * front (what it had seen, the window forgets); push, pull and repair refuse it
 * (SBLOOM_E_LAYOUT); sbloom_redis_get_info counts the live generations' keys (bits_set and
 * stored_bytes 0). docs/DISTRIBUTED.md has the details.
 */
SBLOOM_API int sbloom_redis_open_windowed(sbloom_redis_t **out, const sbloom_redis_options *options,
                                          const char *name, const sbloom_redis_plan *plan,
                                          uint32_t periods, uint64_t period, uint64_t now,
                                          char *err, size_t errcap);
/* Moves a windowed filter's clock to now (seconds since the epoch; a time before the current
 * period changes nothing). SBLOOM_E_LAYOUT for a filter without a window. */
SBLOOM_API int sbloom_redis_advance(sbloom_redis_t *filter, uint64_t now);
/* The window as this client sees it (out->size set): periods, period, now (its period's start)
 * and each live generation's start and keys (from its counter), oldest first. */
SBLOOM_API int sbloom_redis_get_window(sbloom_redis_t *filter, sbloom_window *out);
/* Sends what is still buffered (the item count) and closes; NULL is accepted. */
SBLOOM_API void sbloom_redis_close(sbloom_redis_t *filter);
/* The last error's one-line message ("" if none). */
SBLOOM_API const char *sbloom_redis_message(const sbloom_redis_t *filter);
/* The filter's plan as stored in Redis. */
SBLOOM_API int sbloom_redis_get_plan(const sbloom_redis_t *filter, sbloom_redis_plan *out);
/* The hash of a key under this filter's layout (sbloom_hash of a filter of that layout). */
SBLOOM_API uint64_t sbloom_redis_hash(const sbloom_redis_t *filter, const void *key, size_t len);

/* Batches, as the local batch calls (simdbloom.h): they return the number of keys new (adds)
 * or present (contains), or a negative error. Keys repeated within a batch are new at their
 * first occurrence only. Any batch size; sent in rounds of 2048 keys, one command per shard
 * (adds) or per key (contains), pipelined to every master at once. When most keys of a round
 * were already present, adds first read the keys' blocks (one GETRANGE a key) and send only the
 * absent keys to BITFIELD.
 * On an error, add_if_new's is_new[i] says what became of each key:
 *   0                       seen: in the table before this call's add
 *   1                       new, or perhaps new: its command was sent and its reply lost (it
 *                           may have run); such a key is 1 at its first occurrence only
 *   SBLOOM_REDIS_NOT_ADDED  not added: its command was refused (an error reply: it did
 *                           nothing) or never sent; calling again adds it
 * A caller that writes the keys marked 1 and stops, then runs the same keys again after the
 * repair, writes every key at least once and loses none. */
SBLOOM_API int64_t sbloom_redis_add_hashes(sbloom_redis_t *filter, const uint64_t *hashes,
                                           size_t n);
SBLOOM_API int64_t sbloom_redis_contains_hashes(sbloom_redis_t *filter, const uint64_t *hashes,
                                                size_t n, uint8_t *results);
SBLOOM_API int64_t sbloom_redis_add_if_new_hashes(sbloom_redis_t *filter, const uint64_t *hashes,
                                                  size_t n, uint8_t *is_new);
SBLOOM_API int64_t sbloom_redis_add_keys(sbloom_redis_t *filter, const void *const *keys,
                                         const size_t *lens, size_t n);
SBLOOM_API int64_t sbloom_redis_contains_keys(sbloom_redis_t *filter, const void *const *keys,
                                              const size_t *lens, size_t n, uint8_t *results);
SBLOOM_API int64_t sbloom_redis_add_if_new_keys(sbloom_redis_t *filter, const void *const *keys,
                                                const size_t *lens, size_t n, uint8_t *is_new);

typedef struct sbloom_redis_info {
    size_t size;           /* set by the caller: sizeof (sbloom_redis_info_init() does) */
    uint64_t items;        /* keys reported new, all clients (the counter; a client that dies
                              loses its last batch's count) */
    uint64_t bits_set;     /* BITCOUNT over the shards */
    uint64_t stored_bytes; /* STRLEN over the shards: shards grow as their blocks are written */
    uint32_t masters;      /* masters serving the filter's shards */
    uint64_t round_trips;  /* pipelined rounds this handle has sent */
} sbloom_redis_info;

static inline sbloom_redis_info sbloom_redis_info_init(void)
{
    sbloom_redis_info i;
    memset(&i, 0, sizeof i);
    i.size = sizeof i;
    return i;
}

/* Reads the counter and scans the shards (BITCOUNT, STRLEN: O(bytes) in Redis). */
SBLOOM_API int sbloom_redis_get_info(sbloom_redis_t *filter, sbloom_redis_info *out);

/* Reads every shard's marker (one GETRANGE of 8 bytes a shard): *count is the number of damaged
 * shards (missing, cut short, overwritten, of another type), whose indices go to damaged[0..cap).
 * A filter of format version 1 has no markers: *count is 0. */
SBLOOM_API int sbloom_redis_check(sbloom_redis_t *filter, uint64_t *damaged, size_t cap,
                                  uint64_t *count);
/* Resets every damaged shard to an empty one with its marker (DEL, then SETRANGE of the marker),
 * and says how many it reset. The keys whose bits were in them are lost: each is reported new
 * once more when it comes again (the fleet repeats them; it does not lose them). */
SBLOOM_API int sbloom_redis_repair(sbloom_redis_t *filter, uint64_t *repaired);

/* 1 if a master that holds the filter's shards may evict them: its maxmemory-policy is one of
 * allkeys-lru, allkeys-lfu, allkeys-random (named in policy, cap bytes), which evict keys without
 * an expiry, as the filter's are, when memory runs out; 0 if none is (noeviction and the
 * volatile-* policies leave them); negative if a server would not say (CONFIG renamed or not
 * allowed). */
SBLOOM_API int sbloom_redis_eviction_policy(sbloom_redis_t *filter, char *policy, size_t cap);

/* ORs a local filter into the Redis filter, shard by shard (each shard is copied to a temporary
 * key beside it and merged with BITOP OR, so bits other clients set meanwhile stay), and adds
 * its item count to the counter. The local filter needs the same layout and size
 * (SBLOOM_E_INCOMPATIBLE otherwise). */
SBLOOM_API int sbloom_redis_push(sbloom_redis_t *filter, const sbloom_t *local);
/* A local copy of the Redis filter: same layout, size, plan and item count; its bits are a
 * snapshot (each shard read atomically, the shards one after another). */
SBLOOM_API int sbloom_redis_pull(sbloom_redis_t *filter, sbloom_t **out);
/* Deletes the filter from Redis (its plan, counter and shards); the handle is then unusable
 * except for sbloom_redis_close. */
SBLOOM_API int sbloom_redis_drop(sbloom_redis_t *filter);

#ifdef __cplusplus
}
#endif

#endif /* SIMDBLOOM_REDIS_H */
