/* simdbloom-redis against a live Redis (a cluster, or one server): test_redis NODES [PASSWORD].
 * Started by tests/redis_test.sh, which starts the servers on loopback and stops them.
 *   - every bit layout: keys added through Redis leave the same bytes as a local filter of the
 *     same plan (pull), and lookups agree with the local filter on present and absent keys;
 *   - two clients (threads, one handle each) add overlapping key sets at once: every distinct
 *     key is reported new by exactly one of them;
 *   - the local front changes no answer; plans are checked; errors are codes with messages;
 *   - a windowed filter (check_window);
 *   - a shard's slot moved to another master between rounds: replies still meet their commands
 *     (check_slot_moved_between_rounds, on a cluster). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "simdbloom.h"
#include "simdbloom_redis.h"
#include "check.h"

/* Test hook of the static library (src/redis/shards.c): shards a pipeline of marker scans. */
void sbloom_redis_test_scan_group(sbloom_redis_t *f, size_t group);

static const char *nodes, *password;

static sbloom_redis_options options(unsigned flags)
{
    sbloom_redis_options o = sbloom_redis_options_init();
    o.nodes = nodes;
    o.password = password;
    o.timeout = 5;
    o.retry = 10;
    o.flags = flags;
    return o;
}

static sbloom_redis_t *open_named(const char *name, const sbloom_redis_plan *plan, unsigned flags)
{
    sbloom_redis_options o = options(flags);
    sbloom_redis_t *f = NULL;
    char err[512];
    int rc = sbloom_redis_open(&f, &o, name, plan, err, sizeof err);
    if (rc)
        fprintf(stderr, "open %s: %s (%d)\n", name, err, rc);
    CHECK(rc == 0);
    return f;
}

/* Same bits as a local filter, same answers. */
static void check_layout_equivalence(sbloom_layout layout)
{
    char name[64];
    snprintf(name, sizeof name, "test-eq-%s-%ld", sbloom_layout_name(layout), (long)getpid());
    sbloom_t *local;
    CHECK(sbloom_create_for_layout(&local, 30000, 0.001, layout) == SBLOOM_OK);
    sbloom_redis_plan plan = sbloom_redis_plan_init();
    plan.layout = layout;
    plan.bytes = sbloom_bytes(local);
    plan.planned_items = 30000;
    plan.planned_fpp = 0.001;
    sbloom_redis_t *f = open_named(name, &plan, 0);
    if (!f)
        return;
    enum { N = 30000 };
    uint64_t *h = malloc(2 * N * sizeof *h), seed = (uint64_t)layout;
    uint8_t *res = malloc(2 * N), *want = malloc(2 * N);
    for (int i = 0; i < 2 * N; i++)
        h[i] = test_rand(&seed);
    int64_t fresh_remote = sbloom_redis_add_if_new_hashes(f, h, N, res);
    int64_t fresh_local = sbloom_add_if_new_hashes(local, h, N, want);
    CHECK(fresh_remote == fresh_local);
    CHECK(memcmp(res, want, N) == 0);
    /* Lookups through a handle without a front (every key asks Redis) and with one. */
    sbloom_redis_t *g = open_named(name, NULL, SBLOOM_REDIS_NO_FRONT);
    int64_t present = g ? sbloom_redis_contains_hashes(g, h, 2 * N, res) : -1;
    int64_t want_present = sbloom_contains_hashes(local, h, 2 * N, want);
    CHECK(present == want_present);
    CHECK(memcmp(res, want, 2 * N) == 0);
    CHECK(sbloom_redis_contains_hashes(f, h, 2 * N, res) == want_present);
    CHECK(memcmp(res, want, 2 * N) == 0);

    /* Adds of keys mostly present (the pre-check by GETRANGE takes over after the first round),
     * through a handle without a front, mixed with new ones: the same answers as locally. */
    if (g) {
        for (int i = 0; i < N; i++)
            h[i] = i % 8 == 7 ? test_rand(&seed) : h[i];
        int64_t again = sbloom_redis_add_if_new_hashes(g, h, N, res);
        int64_t again_local = sbloom_add_if_new_hashes(local, h, N, want);
        CHECK(again == again_local && again > 0);
        CHECK(memcmp(res, want, N) == 0);
        fresh_local += again_local;
        sbloom_redis_info flushed = sbloom_redis_info_init(); /* sends g's pending count */
        CHECK(sbloom_redis_get_info(g, &flushed) == 0);
    }

    sbloom_t *pulled = NULL;
    CHECK(sbloom_redis_pull(f, &pulled) == 0);
    if (pulled) {
        uint64_t bytes = sbloom_bytes(local);
        uint8_t *a = malloc(bytes), *b = malloc(bytes);
        sbloom_export_bits(local, a, bytes);
        sbloom_export_bits(pulled, b, bytes);
        CHECK(memcmp(a, b, bytes) == 0);
        CHECK(sbloom_items(pulled) == (uint64_t)fresh_local);
        CHECK(sbloom_planned_items(pulled) == 30000);
        free(a);
        free(b);
        sbloom_free(pulled);
    }
    sbloom_redis_info info = sbloom_redis_info_init();
    CHECK(sbloom_redis_get_info(f, &info) == 0);
    CHECK(info.items == (uint64_t)fresh_local);
    CHECK(info.masters >= 1);
    /* Plans: another size is refused, the same plan opens. */
    sbloom_redis_plan other = plan;
    other.bytes += 4096;
    sbloom_redis_options o = options(0);
    sbloom_redis_t *bad = NULL;
    char err[512];
    CHECK(sbloom_redis_open(&bad, &o, name, &other, err, sizeof err) == SBLOOM_REDIS_E_PLAN);
    CHECK(bad == NULL && strstr(err, "exists with layout") != NULL);
    CHECK(sbloom_redis_drop(f) == 0);
    sbloom_redis_close(g);
    sbloom_redis_close(f);
    free(h);
    free(res);
    free(want);
    sbloom_free(local);
}

typedef struct client {
    const char *name;
    const uint64_t *hashes;
    size_t n;
    uint8_t *is_new;
    int64_t fresh;
} client;

static void *run_client(void *arg)
{
    client *c = arg;
    sbloom_redis_plan plan = sbloom_redis_plan_init();
    plan.layout = SBLOOM_LAYOUT_BLOCK512_K16;
    plan.bytes = 1 << 20; /* 1 MiB for 60,000 keys: a false positive is unlikely (~1e-9) */
    sbloom_redis_t *f = open_named(c->name, &plan, 0);
    c->fresh = -1;
    if (!f)
        return NULL;
    c->fresh = 0;
    for (size_t at = 0; at < c->n; at += 1000) { /* many small batches, interleaving */
        size_t len = c->n - at < 1000 ? c->n - at : 1000;
        int64_t got = sbloom_redis_add_if_new_hashes(f, c->hashes + at, len, c->is_new + at);
        if (got < 0) {
            fprintf(stderr, "add_if_new: %s\n", sbloom_redis_message(f));
            c->fresh = got;
            break;
        }
        c->fresh += got;
    }
    sbloom_redis_close(f);
    return NULL;
}

typedef struct indexed {
    uint64_t hash;
    int index;
} indexed;

static int by_hash(const void *a, const void *b)
{
    uint64_t x = ((const indexed *)a)->hash, y = ((const indexed *)b)->hash;
    return x < y ? -1 : x > y;
}

/* Two clients over overlapping halves: each distinct key new exactly once between them. */
static void check_exactly_once(void)
{
    char name[64];
    snprintf(name, sizeof name, "test-once-%ld", (long)getpid());
    enum { DISTINCT = 60000, EACH = 40000 };
    uint64_t *keys = malloc(DISTINCT * sizeof *keys), seed = 99;
    for (int i = 0; i < DISTINCT; i++)
        keys[i] = test_rand(&seed);
    /* A takes keys [0, 40000), B [20000, 60000) in reverse, with repeats of its own. */
    uint64_t *a = malloc(EACH * 2 * sizeof *a), *b = malloc(EACH * 2 * sizeof *b);
    for (int i = 0; i < EACH; i++) {
        a[2 * i] = keys[i];
        a[2 * i + 1] = keys[i / 2];
        b[2 * i] = keys[DISTINCT - 1 - i];
        b[2 * i + 1] = keys[DISTINCT - 1 - i / 3];
    }
    client ca = {name, a, 2 * EACH, calloc(2 * EACH, 1), 0};
    client cb = {name, b, 2 * EACH, calloc(2 * EACH, 1), 0};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, run_client, &ca);
    pthread_create(&tb, NULL, run_client, &cb);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECK(ca.fresh >= 0 && cb.fresh >= 0);
    /* Times each distinct key was reported new, over both clients. */
    uint8_t *times = calloc(DISTINCT, 1);
    indexed *sorted = malloc(DISTINCT * sizeof *sorted);
    for (int i = 0; i < DISTINCT; i++)
        sorted[i] = (indexed){keys[i], i};
    qsort(sorted, DISTINCT, sizeof *sorted, by_hash);
    int unknown = 0;
    for (int side = 0; side < 2; side++) {
        const client *c = side ? &cb : &ca;
        for (size_t i = 0; i < c->n; i++) {
            if (!c->is_new[i])
                continue;
            indexed want = {c->hashes[i], 0};
            const indexed *found = bsearch(&want, sorted, DISTINCT, sizeof *sorted, by_hash);
            if (!found)
                unknown++;
            else
                times[found->index]++;
        }
    }
    int never = 0, twice = 0;
    for (int i = 0; i < DISTINCT; i++) {
        never += times[i] == 0;
        twice += times[i] > 1;
    }
    printf("exactly once: %lld + %lld new of %d distinct keys; %d never, %d more than once\n",
           (long long)ca.fresh, (long long)cb.fresh, DISTINCT, never, twice);
    CHECK(unknown == 0);
    CHECK(twice == 0);
    CHECK(never == 0); /* a false positive would show here; at ~1e-9 it does not */
    CHECK(ca.fresh + cb.fresh == DISTINCT);
    sbloom_redis_t *f = open_named(name, NULL, 0);
    if (f) {
        sbloom_redis_info info = sbloom_redis_info_init();
        CHECK(sbloom_redis_get_info(f, &info) == 0);
        CHECK(info.items == DISTINCT);
        CHECK(sbloom_redis_drop(f) == 0);
        sbloom_redis_close(f);
    }
    free(keys);
    free(a);
    free(b);
    free(ca.is_new);
    free(cb.is_new);
    free(times);
    free(sorted);
}

static void check_errors(void)
{
    sbloom_redis_options o = options(0);
    sbloom_redis_t *f = (sbloom_redis_t *)1;
    char err[512];
    CHECK(sbloom_redis_open(&f, &o, "test-absent-filter", NULL, err, sizeof err) ==
          SBLOOM_REDIS_E_NOT_FOUND);
    CHECK(f == NULL && strstr(err, "no filter named") != NULL);
    CHECK(sbloom_redis_open(&f, &o, "bad{name}", NULL, err, sizeof err) == SBLOOM_E_INVALID);
    sbloom_redis_plan plan = sbloom_redis_plan_init();
    plan.layout = SBLOOM_LAYOUT_COUNTING512;
    plan.bytes = 4096;
    CHECK(sbloom_redis_open(&f, &o, "test-counting", &plan, err, sizeof err) == SBLOOM_E_LAYOUT);
    o.nodes = "127.0.0.1";
    CHECK(sbloom_redis_open(&f, &o, "x", NULL, err, sizeof err) == SBLOOM_E_INVALID);
    CHECK(strstr(err, "host:port") != NULL);
}

/* A shard deleted under a handle (as eviction does; on the standalone server, which this test
 * reaches with hiredis directly): a test-and-add of keys in every shard fails
 * (SBLOOM_REDIS_E_DAMAGED), and no key of the damaged shard is answered new, nor (the handle's
 * front holds what it was told is in the fleet) held by a lookup afterwards; the keys of the
 * shards that answered are answered as before. */
static void check_damaged_keys(const char *host, int port)
{
    sbloom_redis_plan plan = sbloom_redis_plan_init();
    plan.layout = SBLOOM_LAYOUT_BLOCK512_K8;
    plan.bytes = 1 << 20; /* (64 shards) */
    sbloom_redis_t *f = open_named("damaged-keys", &plan, 0);
    redisContext *c = redisConnect(host, port);
    CHECK(f && c && !c->err);
    if (!f || !c || c->err) {
        sbloom_redis_close(f);
        redisFree(c);
        return;
    }
    if (password)
        freeReplyObject(redisCommand(c, "AUTH %s", password));
    sbloom_redis_get_plan(f, &plan);
    enum { N = 4000 };
    static uint64_t keys[N];
    static uint8_t is_new[N], held[N];
    uint64_t seed = 31;
    for (size_t i = 0; i < N; i++)
        keys[i] = test_rand(&seed);
    CHECK(sbloom_redis_add_if_new_hashes(f, keys, N / 2, is_new) > N / 2 - 10);
    uint64_t victim = 5, nblocks = plan.bytes / 64, per_shard = plan.shard_bytes / 64;
    freeReplyObject(redisCommand(c, "DEL sbloom:{damaged-keys#%llu}", (unsigned long long)victim));
    memset(is_new, 0, sizeof is_new);
    CHECK(sbloom_redis_add_if_new_hashes(f, keys, N, is_new) == SBLOOM_REDIS_E_DAMAGED);
    uint64_t in_victim = 0, answered_new = 0;
    for (size_t i = 0; i < N; i++) {
        uint64_t block;
        uint8_t mask[64];
        sbloom_locate(plan.layout, nblocks, keys[i], &block, mask, sizeof mask);
        if (block / per_shard != victim)
            continue;
        in_victim++;
        answered_new += is_new[i] == 1;
    }
    CHECK(in_victim > 20 && answered_new == 0);
    /* a lookup afterwards: the victim's keys are not answered from what the handle saw */
    memset(held, 0, sizeof held);
    CHECK(sbloom_redis_contains_hashes(f, keys + N / 2, N / 2, held) == SBLOOM_REDIS_E_DAMAGED);
    uint64_t held_in_victim = 0;
    for (size_t i = N / 2; i < N; i++) {
        uint64_t block;
        uint8_t mask[64];
        sbloom_locate(plan.layout, nblocks, keys[i], &block, mask, sizeof mask);
        held_in_victim += block / per_shard == victim && held[i - N / 2];
    }
    CHECK(held_in_victim == 0);
    /* the markers are scanned and written a group of shards a pipeline (256; 16 here): the last
     * shard of a group and the last of all, damaged too, are each found and reset */
    sbloom_redis_test_scan_group(f, 16);
    freeReplyObject(redisCommand(c, "DEL sbloom:{damaged-keys#15}"));
    freeReplyObject(redisCommand(c, "SET sbloom:{damaged-keys#%llu} abcd",
                                 (unsigned long long)(plan.shards - 1)));
    uint64_t damaged[8], count = 0, repaired = 0;
    CHECK(sbloom_redis_check(f, damaged, 8, &count) == 0 && count == 3);
    CHECK(count == 3 && damaged[0] == victim && damaged[1] == 15 && damaged[2] == plan.shards - 1);
    CHECK(sbloom_redis_repair(f, &repaired) == 0 && repaired == 3);
    CHECK(sbloom_redis_check(f, damaged, 8, &count) == 0 && count == 0);
    CHECK(sbloom_redis_drop(f) == 0);
    sbloom_redis_close(f);
    redisFree(c);
}

/* A master's connection to HOST:PORT (authenticated when the test has a password), or NULL. */
static redisContext *connect_to(const char *host, int port)
{
    redisContext *c = redisConnect(host, port);
    if (!c || c->err) {
        redisFree(c);
        return NULL;
    }
    if (password)
        freeReplyObject(redisCommand(c, "AUTH %s", password));
    return c;
}

/* The cluster's masters that are up, connected (at most 8); returns how many. */
static int connect_masters(redisContext **masters)
{
    char host[64];
    int port = 0, n = 0;
    if (sscanf(nodes, "%63[^:]:%d", host, &port) != 2)
        return 0;
    redisContext *seed = connect_to(host, port);
    redisReply *r = seed ? redisCommand(seed, "CLUSTER NODES") : NULL;
    for (char *line = r && r->type == REDIS_REPLY_STRING ? r->str : NULL; line && n < 8;) {
        char *end = strchr(line, '\n'), addr[128], flags[128];
        if (end)
            *end = 0;
        int p;
        if (sscanf(line, "%*s %127s %127s", addr, flags) == 2 && strstr(flags, "master") &&
            !strstr(flags, "fail") && sscanf(addr, "%63[^:]:%d", host, &p) == 2 &&
            (masters[n] = connect_to(host, p)))
            n++;
        line = end ? end + 1 : NULL;
    }
    freeReplyObject(r);
    redisFree(seed);
    return n;
}

/* A master's reply to a command that must answer +OK (or another status). */
static int status_of(redisReply *r)
{
    int ok = r && r->type == REDIS_REPLY_STATUS;
    freeReplyObject(r);
    return ok;
}

/* Moves the slot of `key` from master `from` to master `to` (each a connection) as redis-cli's
 * reshard does, without the filter's handle knowing, in two steps: step 0 marks the slot
 * IMPORTING and MIGRATING and MIGRATEs the key (the old master then answers ASK for it); step 1
 * gives the slot to the new master on every master (the old one then answers MOVED). Returns 0
 * when done. */
static int move_slot(redisContext **masters, int nmasters, const char *key, int from, int to,
                     int step)
{
    redisReply *slot = redisCommand(masters[from], "CLUSTER KEYSLOT %s", key);
    redisReply *from_id = redisCommand(masters[from], "CLUSTER MYID");
    redisReply *to_id = redisCommand(masters[to], "CLUSTER MYID");
    redisReply *port = redisCommand(masters[to], "CONFIG GET port");
    int ok = slot && slot->type == REDIS_REPLY_INTEGER && from_id && to_id &&
             from_id->type == REDIS_REPLY_STRING && to_id->type == REDIS_REPLY_STRING && port &&
             port->type == REDIS_REPLY_ARRAY && port->elements == 2;
    long long s = ok ? slot->integer : 0;
    if (ok && step == 0) {
        ok = status_of(
                 redisCommand(masters[to], "CLUSTER SETSLOT %lld IMPORTING %s", s, from_id->str)) &&
             status_of(
                 redisCommand(masters[from], "CLUSTER SETSLOT %lld MIGRATING %s", s, to_id->str)) &&
             status_of(password
                           ? redisCommand(masters[from], "MIGRATE 127.0.0.1 %s %s 0 5000 AUTH %s",
                                          port->element[1]->str, key, password)
                           : redisCommand(masters[from], "MIGRATE 127.0.0.1 %s %s 0 5000",
                                          port->element[1]->str, key));
    }
    for (int m = 0; ok && step == 1 && m < nmasters; m++) { /* the importing master first */
        int at = m == 0 ? to : m == to ? 0 : m;
        ok = status_of(redisCommand(masters[at], "CLUSTER SETSLOT %lld NODE %s", s, to_id->str));
    }
    freeReplyObject(slot);
    freeReplyObject(from_id);
    freeReplyObject(to_id);
    freeReplyObject(port);
    return ok ? 0 : -1;
}

/* Looks up the N added keys and N absent ones in one call: all found, no error, few of the
 * absent ones (expected 0.02%). */
static void check_lookups_after(sbloom_redis_t *f, const uint64_t *keys, size_t n, const char *what)
{
    uint8_t *held = calloc(2 * n, 1);
    CHECK(held != NULL);
    if (!held)
        return;
    int64_t found = sbloom_redis_contains_hashes(f, keys, 2 * n, held);
    if (found < 0)
        fprintf(stderr, "lookups %s: %s\n", what, sbloom_redis_message(f));
    size_t present = 0, false_positives = 0;
    for (size_t i = 0; i < 2 * n; i++)
        *(i < n ? &present : &false_positives) += held[i];
    printf("lookups %s: %lld found, %zu of %zu added, %zu of %zu absent\n", what, (long long)found,
           present, n, false_positives, n);
    CHECK(found >= 0 && present == n && false_positives < n / 100);
    free(held);
}

/* A shard's slot moves to another master between rounds, as in a reshard: the next lookup round
 * sends many GETRANGEs of that shard to its old master, which answers ASK to each (the key moved,
 * the slot not yet) or MOVED (the slot moved too), while the new master answers its own shards'
 * commands in the same round. Every reply must still be read from the connection its command
 * went out on: every key added is found, absent keys are not, and no shard reads as damaged. */
static void check_slot_moved_between_rounds(void)
{
    redisContext *masters[8] = {0};
    int nmasters = connect_masters(masters);
    CHECK(nmasters >= 2);
    sbloom_redis_plan plan = sbloom_redis_plan_init();
    plan.layout = SBLOOM_LAYOUT_BLOCK512_K8;
    plan.bytes = 1 << 20; /* (64 shards over the masters) */
    sbloom_redis_t *f = nmasters >= 2 ? open_named("moved", &plan, 0) : NULL;
    enum { N = 4000 };
    static uint64_t keys[2 * N];
    uint64_t seed = 77;
    for (size_t i = 0; i < 2 * N; i++)
        keys[i] = test_rand(&seed);
    CHECK(!f || sbloom_redis_add_hashes(f, keys, N) > N - 10);
    for (int round = 0; f && round < 2; round++) { /* shard 3 moves on, then on again */
        const char *key = "sbloom:{moved#3}";
        int from = -1;
        for (int m = 0; m < nmasters && from < 0; m++) {
            redisReply *r = redisCommand(masters[m], "EXISTS %s", key);
            if (r && r->type == REDIS_REPLY_INTEGER && r->integer == 1)
                from = m;
            freeReplyObject(r);
        }
        int to = (from + 1) % nmasters;
        CHECK(from >= 0);
        if (from < 0 || move_slot(masters, nmasters, key, from, to, 0) != 0) {
            CHECK(!"the key moved");
            break;
        }
        check_lookups_after(f, keys, N, "while the slot moves (ASK)");
        if (move_slot(masters, nmasters, key, from, to, 1) != 0) {
            CHECK(!"the slot moved");
            break;
        }
        check_lookups_after(f, keys, N, "after the slot moved (MOVED)");
    }
    if (f)
        CHECK(sbloom_redis_drop(f) == 0);
    sbloom_redis_close(f);
    for (int m = 0; m < nmasters; m++)
        redisFree(masters[m]);
}

/* Sleeps until the wall clock reads at least t (seconds since the epoch), plus a tenth. */
static void sleep_until(uint64_t t)
{
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        double left = (double)t + 0.1 - ((double)now.tv_sec + (double)now.tv_nsec * 1e-9);
        if (left <= 0)
            return;
        struct timespec pause = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        nanosleep(&pause, NULL);
    }
}

/* A windowed fleet filter (sbloom_redis_open_windowed) on the real clock (the servers time the
 * expiry, and every round checks the client's clock against theirs: a quarter period apart at
 * most), with periods of 2 s: two clients, one ahead by up to that quarter, report each key new
 * once; a client that crosses into the next period first writes its generation, and the one
 * behind sees it; keys are held through the window and forgotten after it; the window's counts;
 * a client whose clock went back, or that is far from the servers' when it opens, is refused
 * (SBLOOM_REDIS_E_CLOCK) before it writes anything; a generation this client made that vanishes
 * fails the round; plans and refusals. */
static void check_window(void)
{
    enum { N = 10000, G = 3, P = 2 };
    char name[64];
    snprintf(name, sizeof name, "window-%ld", (long)getpid());
    sbloom_redis_plan plan = sbloom_redis_plan_init();
    sbloom_plan one = sbloom_plan_init();
    CHECK(sbloom_plan_for_layout(30000 / G, 1e-3 / (G + 1), SBLOOM_LAYOUT_BLOCK512_K8, &one) ==
          SBLOOM_OK);
    plan.layout = SBLOOM_LAYOUT_BLOCK512_K8;
    plan.bytes = one.bytes;
    plan.planned_items = 30000;
    plan.planned_fpp = 1e-3;
    uint64_t t0 = ((uint64_t)time(NULL) / P + 1) * P; /* the start of the next period */
    sleep_until(t0);
    sbloom_redis_options o = options(0);
    sbloom_redis_t *a = NULL, *b = NULL, *c = NULL;
    char err[512];
    /* clocks too far from the servers': refused before the plan is written */
    CHECK(sbloom_redis_open_windowed(&c, &o, name, &plan, G, P, t0 - 60, err, sizeof err) ==
              SBLOOM_REDIS_E_CLOCK &&
          strstr(err, "apart") != NULL && c == NULL);
    CHECK(sbloom_redis_open_windowed(&c, &o, name, NULL, 0, 0, t0, err, sizeof err) ==
          SBLOOM_REDIS_E_NOT_FOUND); /* (nothing was made) */
    CHECK(sbloom_redis_open_windowed(&a, &o, name, &plan, G, P, t0, err, sizeof err) == 0);
    CHECK(sbloom_redis_open_windowed(&b, &o, name, NULL, 0, 0, t0, err, sizeof err) == 0);
    if (!a || !b) {
        fprintf(stderr, "open windowed: %s\n", err);
        sbloom_redis_close(a);
        return;
    }
    uint64_t *keys = malloc(3 * N * sizeof *keys);
    uint8_t *new_a = calloc(3 * N, 1), *new_b = calloc(3 * N, 1), *held = calloc(3 * N, 1);
    for (uint64_t i = 0; i < 3 * N; i++)
        keys[i] = i * 0x9E3779B97F4A7C15ULL + 12345;
    /* overlapping halves: each key new once between the two */
    int64_t na = sbloom_redis_add_if_new_hashes(a, keys, 6000, new_a);
    int64_t nb = sbloom_redis_add_if_new_hashes(b, keys + 3000, N - 3000, new_b + 3000);
    uint64_t twice = 0, never = 0;
    for (size_t i = 0; i < N; i++) {
        twice += new_a[i] && new_b[i];
        never += !new_a[i] && !new_b[i];
    }
    CHECK(na > 5900 && nb > 3900 && twice == 0 && never < 20);
    /* half a period on, b's clock runs ahead into the next period and writes its generation; a,
     * still in the first, sees those keys */
    sleep_until(t0 + 1);
    CHECK(sbloom_redis_advance(b, t0 + P) == 0);
    CHECK(sbloom_redis_add_if_new_hashes(b, keys + N, 1000, new_b + N) > 990);
    CHECK(sbloom_redis_advance(a, t0 + 1) == 0); /* (a handle's clock must follow the real one) */
    CHECK(sbloom_redis_add_if_new_hashes(a, keys + N, 1000, new_a + N) == 0);
    CHECK(sbloom_redis_contains_hashes(a, keys, N, held) == N); /* and the window's first keys */
    sbloom_window wb = sbloom_window_init(); /* (b's count sent: a handle sends it with a round) */
    CHECK(sbloom_redis_get_window(b, &wb) == 0 && wb.now == t0 + P);
    /* the window: period t0's keys held through t0 + 3P, gone at t0 + 4P (but for the rate) */
    sleep_until(t0 + 3 * P + P / 2);
    CHECK(sbloom_redis_advance(a, t0 + 3 * P + P / 2) == 0);
    CHECK(sbloom_redis_contains_hashes(a, keys, N, held) == N);
    sbloom_window w = sbloom_window_init();
    CHECK(sbloom_redis_get_window(a, &w) == 0 && w.periods == G && w.period == P &&
          w.now == t0 + 3 * P && w.generation_start[0] == t0);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < w.generations; i++)
        sum += w.generation_items[i];
    CHECK_EQ_U64(sum, (uint64_t)na + (uint64_t)nb + 1000u);
    sleep_until(t0 + 4 * P);
    CHECK(sbloom_redis_advance(a, t0 + 4 * P) == 0);
    CHECK(sbloom_redis_contains_hashes(a, keys, N, held) < 50);
    CHECK(sbloom_redis_contains_hashes(a, keys + N, 1000, held) == 1000); /* period t0 + P's */
    CHECK(sbloom_redis_add_if_new_hashes(a, keys, 1000, new_a) > 990);    /* new once more */
    /* a clock that goes back by more than the tolerance: the period stays, and the next round
     * is refused, naming both clocks */
    CHECK(sbloom_redis_advance(a, t0) == 0);
    CHECK(sbloom_redis_contains_hashes(a, keys + 2000, 1000, held) == SBLOOM_REDIS_E_CLOCK);
    CHECK(strstr(sbloom_redis_message(a), "apart") != NULL);
    CHECK(sbloom_redis_add_if_new_hashes(a, keys + 2 * N, 10, new_a) == SBLOOM_REDIS_E_CLOCK);
    uint64_t now = (uint64_t)time(NULL);
    CHECK(sbloom_redis_advance(a, now) == 0); /* the right time again: it goes on */
    CHECK(sbloom_redis_contains_hashes(a, keys + 2 * N, 10, held) == 0);
    /* refusals */
    sbloom_redis_plan other = plan;
    CHECK(sbloom_redis_open(&c, &o, name, NULL, err, sizeof err) == SBLOOM_REDIS_E_PLAN &&
          strstr(err, "windowed") != NULL);
    CHECK(sbloom_redis_open_windowed(&c, &o, name, &other, G, 2 * P, now, err, sizeof err) ==
              SBLOOM_REDIS_E_PLAN &&
          strstr(err, "forgets after") != NULL);
    CHECK(sbloom_redis_open_windowed(&c, &o, name, &other, 16, P, now, err, sizeof err) ==
          SBLOOM_E_INVALID);
    /* a window whose expiry times would not fit Redis's: refused before anything is written */
    char huge[80];
    snprintf(huge, sizeof huge, "%s-huge", name);
    CHECK(sbloom_redis_open_windowed(&c, &o, huge, &other, G, UINT64_C(3000000000000000), now, err,
                                     sizeof err) == SBLOOM_E_INVALID &&
          strstr(err, "too long") != NULL);
    CHECK(sbloom_redis_open_windowed(&c, &o, huge, NULL, 0, 0, now, err, sizeof err) ==
          SBLOOM_REDIS_E_NOT_FOUND);
    sbloom_t *local = NULL;
    CHECK(sbloom_redis_pull(a, &local) == SBLOOM_E_LAYOUT && local == NULL);
    uint64_t repaired = 0;
    CHECK(sbloom_redis_repair(a, &repaired) == SBLOOM_E_LAYOUT);
    char plain_name[80];
    snprintf(plain_name, sizeof plain_name, "%s-plain", name);
    sbloom_redis_plan pp = sbloom_redis_plan_init();
    pp.layout = SBLOOM_LAYOUT_BLOCK512_K8;
    pp.bytes = 4096;
    sbloom_redis_t *p = open_named(plain_name, &pp, 0);
    CHECK(sbloom_redis_open_windowed(&c, &o, plain_name, NULL, 0, 0, now, err, sizeof err) ==
              SBLOOM_REDIS_E_PLAN &&
          strstr(err, "not windowed") != NULL);
    CHECK(p && sbloom_redis_advance(p, now) == SBLOOM_E_LAYOUT);
    CHECK(p && sbloom_redis_drop(p) == 0);
    sbloom_redis_close(p);
    CHECK(sbloom_redis_drop(a) == 0);
    sbloom_redis_close(a);
    sbloom_redis_close(b);
    free(keys);
    free(new_a);
    free(new_b);
    free(held);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_redis NODES [PASSWORD]\n");
        return 2;
    }
    nodes = argv[1];
    password = argc > 2 ? argv[2] : NULL;
    for (int i = 0; i < TEST_NLAYOUTS; i++)
        check_layout_equivalence(test_layouts[i]);
    check_exactly_once();
    check_window();
    check_errors();
    if (strchr(nodes, ','))
        check_slot_moved_between_rounds();
    if (!strchr(nodes, ',')) { /* the standalone server: its keys reached directly */
        char host[64];
        int port = 0;
        if (sscanf(nodes, "%63[^:]:%d", host, &port) == 2)
            check_damaged_keys(host, port);
    }
    return check_report();
}
