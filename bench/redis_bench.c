/*
 * simdbloom-redis-bench NODES [KEYS [ROUNDS]]: keys/s of the Redis filter's test-and-add and
 * lookup against the pattern of the Scrapy-style Redis Bloom filters (one SETBIT or GETBIT per
 * bit of a key), in one run, on the same cluster, the same keys, the same bits and the same
 * shard strings. Both sides pipeline rounds of 8192 keys to every master at once through the
 * same cluster client, each at its best pipeline depth, and no local front (every key goes to
 * Redis). Run by bench/redis-bench,
 * which starts a throwaway cluster; prints one table and, with --json, one JSON object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cluster.h"
#include "simdbloom.h"
#include "simdbloom_redis.h"

/* Keys per pipelined round of the bit-per-command pattern: its fastest measured depth on the
 * 3-master, 3-replica cluster of bench/redis-bench (two runs each, SETBIT keys/s): 64 keys
 * 133,573 and 127,113; 128 keys 148,070 and 148,689; 256 keys 119,914 and 151,528; 512 keys
 * 154,585 and 139,776; 2048 keys 103,264 and 100,145; 8192 keys 97,271 and 95,774. Deeper
 * pipelines only fill buffers. The filter uses its own rounds (ROUND_KEYS, src/redis/filter.c). */
#define ROUND 128

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds used so far by this process, and by the server processes whose pids are in
 * SIMDBLOOM_BENCH_SERVER_PIDS (space-separated; bench/redis-bench sets it), from /proc. */
static double client_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static double servers_cpu(void)
{
    const char *pids = getenv("SIMDBLOOM_BENCH_SERVER_PIDS");
    double total = 0;
    long tick = sysconf(_SC_CLK_TCK);
    while (pids && *pids) {
        char *end;
        long pid = strtol(pids, &end, 10);
        if (end == pids)
            break;
        pids = end;
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *p = strrchr(buf, ')'); /* fields after the command name */
        unsigned long long utime = 0, stime = 0;
        if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
                        &stime) == 2)
            total += (double)(utime + stime) / (double)tick;
    }
    return total;
}

typedef struct cost {
    double wall, client, servers;
} cost;

static cost cost_now(void)
{
    return (cost){now(), client_cpu(), servers_cpu()};
}

static cost cost_since(cost start)
{
    cost end = cost_now();
    return (cost){end.wall - start.wall, end.client - start.client, end.servers - start.servers};
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* The patterns the filter is measured against, on the shard and offsets the filter itself uses,
 * pipelined in rounds of ROUND keys:
 *   PATTERN_GETBIT, PATTERN_SETBIT: one GETBIT or SETBIT command for each of a key's k bits;
 *   PATTERN_BITFIELD_RO: one BITFIELD_RO KEY GET u1 OFF ... per key (the other lookup the filter
 *   could have used). */
enum { PATTERN_GETBIT, PATTERN_SETBIT, PATTERN_BITFIELD_RO };

static void run_pattern(rc_cluster *c, const sbloom_redis_plan *plan, const char *name,
                        const uint64_t *hashes, size_t n, int pattern)
{
    uint32_t bb = sbloom_layout_block_bytes(plan->layout), k = sbloom_layout_k(plan->layout);
    uint64_t nblocks = plan->bytes / bb, shard_blocks = plan->shard_bytes / bb;
    size_t max = (size_t)ROUND * k; /* commands, and offsets, a round at most */
    rc_cmd *cmds = calloc(max, sizeof *cmds);
    const char **argv = malloc(max * 4 * sizeof *argv);
    size_t *lens = malloc(max * 4 * sizeof *lens);
    char(*text)[32] = malloc(max * sizeof *text);
    char(*keys)[192] = malloc(plan->shards * sizeof *keys);
    uint16_t *slots = malloc(plan->shards * sizeof *slots);
    for (uint64_t s = 0; s < plan->shards; s++) {
        snprintf(keys[s], sizeof keys[s], "sbloom:{%s#%llu}", name, (unsigned long long)s);
        slots[s] = rc_slot(keys[s], strlen(keys[s]));
    }
    for (size_t at = 0; at < n; at += ROUND) {
        size_t len = n - at < ROUND ? n - at : ROUND, ncmd = 0, arg = 0, bits = 0;
        for (size_t i = 0; i < len; i++) {
            uint8_t mask[64];
            uint64_t block;
            sbloom_locate(plan->layout, nblocks, hashes[at + i], &block, mask, sizeof mask);
            uint64_t s = block / shard_blocks, base = (block % shard_blocks) * bb * 8;
            size_t first = arg;
            if (pattern == PATTERN_BITFIELD_RO) {
                argv[arg++] = "BITFIELD_RO";
                argv[arg++] = keys[s];
            }
            for (uint32_t b = 0; b < bb; b++)
                for (int bit = 0; bit < 8; bit++) {
                    if (!(mask[b] >> bit & 1))
                        continue;
                    rc_u64_text(text[bits], base + b * 8u + (7u - (unsigned)bit));
                    if (pattern == PATTERN_BITFIELD_RO) {
                        argv[arg++] = "GET";
                        argv[arg++] = "u1";
                        argv[arg++] = text[bits++];
                        continue;
                    }
                    size_t one = arg;
                    argv[arg++] = pattern == PATTERN_SETBIT ? "SETBIT" : "GETBIT";
                    argv[arg++] = keys[s];
                    argv[arg++] = text[bits++];
                    if (pattern == PATTERN_SETBIT)
                        argv[arg++] = "1";
                    cmds[ncmd++] =
                        (rc_cmd){(int)(arg - one), argv + one, lens + one, slots[s], NULL, 0, -1};
                }
            if (pattern == PATTERN_BITFIELD_RO)
                cmds[ncmd++] =
                    (rc_cmd){(int)(arg - first), argv + first, lens + first, slots[s], NULL, 0, -1};
        }
        for (size_t j = 0; j < arg; j++)
            lens[j] = strlen(argv[j]);
        if (rc_run(c, cmds, ncmd)) {
            fprintf(stderr, "redis: %s\n", rc_message(c));
            exit(1);
        }
        rc_cmds_release(cmds, ncmd);
    }
    free(cmds);
    free(argv);
    free(lens);
    free(text);
    free(keys);
    free(slots);
}

int main(int argc, char **argv)
{
    int json = 0;
    if (argc > 1 && strcmp(argv[1], "--json") == 0) {
        json = 1;
        argv++;
        argc--;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: simdbloom-redis-bench [--json] NODES [KEYS [ROUNDS]]\n");
        return 2;
    }
    const char *nodes = argv[1];
    size_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 200000;
    int rounds = argc > 3 ? atoi(argv[3]) : 3;
    uint64_t *hashes = malloc(n * sizeof *hashes), seed = 7;
    uint8_t *res = malloc(n);
    for (size_t i = 0; i < n; i++)
        hashes[i] = splitmix(&seed);

    sbloom_redis_options o = sbloom_redis_options_init();
    o.nodes = nodes;
    o.flags = SBLOOM_REDIS_NO_FRONT;
    char err[512];
    rc_cluster *c;
    if (rc_connect(&c, nodes, getenv("REDISCLI_AUTH"), 5, 30, err, sizeof err)) {
        fprintf(stderr, "redis: %s\n", err);
        return 1;
    }
    /* Best of `rounds` (by wall time), each on fresh filters (test-and-add on keys that are all
     * new). Phases: add_if_new, 8 x SETBIT, contains, 8 x GETBIT. */
    enum { PHASES = 7 };
    static const char *const phase[PHASES] = {
        "add_if_new (BITFIELD SET u1 x8, per shard)", "8 x SETBIT a key (the usual pattern)",
        "contains (GETRANGE of the block)",           "8 x GETBIT a key (the usual pattern)",
        "add_if_new, keys present (GETRANGE first)",  "8 x SETBIT a key, keys present",
        "contains by BITFIELD_RO GET u1 x8 a key"};
    cost best[PHASES];
    for (int i = 0; i < PHASES; i++)
        best[i] = (cost){1e30, 0, 0};
    uint32_t masters = 0;
    for (int r = 0; r < rounds; r++) {
        char name[2][64];
        sbloom_redis_t *f[2];
        sbloom_redis_plan plan = sbloom_redis_plan_init();
        plan.layout = SBLOOM_LAYOUT_BLOCK512_K8;
        plan.bytes = (uint64_t)n * 10 / 8; /* 10 bits per key */
        for (int side = 0; side < 2; side++) {
            snprintf(name[side], sizeof name[side], "bench-%ld-%d-%d", (long)getpid(), r, side);
            if (sbloom_redis_open(&f[side], &o, name[side], &plan, err, sizeof err)) {
                fprintf(stderr, "redis: %s\n", err);
                return 1;
            }
        }
        sbloom_redis_get_plan(f[0], &plan);
        cost got[PHASES], t = cost_now();
        if (sbloom_redis_add_if_new_hashes(f[0], hashes, n, res) < 0)
            return fprintf(stderr, "redis: %s\n", sbloom_redis_message(f[0])), 1;
        got[0] = cost_since(t);
        t = cost_now();
        run_pattern(c, &plan, name[1], hashes, n, PATTERN_SETBIT);
        got[1] = cost_since(t);
        t = cost_now();
        if (sbloom_redis_contains_hashes(f[0], hashes, n, res) != (int64_t)n)
            return fprintf(stderr, "redis: lookups disagree: %s\n", sbloom_redis_message(f[0])), 1;
        got[2] = cost_since(t);
        t = cost_now();
        run_pattern(c, &plan, name[1], hashes, n, PATTERN_GETBIT);
        got[3] = cost_since(t);
        /* The same keys again: all present (a fleet whose workers find each other's URLs). */
        t = cost_now();
        if (sbloom_redis_add_if_new_hashes(f[0], hashes, n, res) != 0)
            return fprintf(stderr, "redis: keys added twice: %s\n", sbloom_redis_message(f[0])), 1;
        got[4] = cost_since(t);
        t = cost_now();
        run_pattern(c, &plan, name[1], hashes, n, PATTERN_SETBIT);
        got[5] = cost_since(t);
        t = cost_now();
        run_pattern(c, &plan, name[0], hashes, n, PATTERN_BITFIELD_RO);
        got[6] = cost_since(t);
        for (int i = 0; i < PHASES; i++)
            if (got[i].wall < best[i].wall)
                best[i] = got[i];
        sbloom_redis_info info = sbloom_redis_info_init();
        sbloom_redis_get_info(f[0], &info);
        masters = info.masters;
        for (int side = 0; side < 2; side++) {
            sbloom_redis_drop(f[side]);
            sbloom_redis_close(f[side]);
        }
    }
    double rate[PHASES];
    for (int i = 0; i < PHASES; i++)
        rate[i] = (double)n / best[i].wall;
    if (json) {
        printf("{\"keys\": %zu, \"masters\": %u, \"add_if_new_keys_per_s\": %.0f, "
               "\"setbit_keys_per_s\": %.0f, \"contains_keys_per_s\": %.0f, "
               "\"getbit_keys_per_s\": %.0f, \"add_if_new_present_keys_per_s\": %.0f, "
               "\"setbit_present_keys_per_s\": %.0f, \"bitfield_ro_keys_per_s\": %.0f}\n",
               n, masters, rate[0], rate[1], rate[2], rate[3], rate[4], rate[5], rate[6]);
    } else {
        printf("simdbloom-redis, block512-k8 (8 bits a key), %zu keys, %u masters, best of %d:\n",
               n, masters, rounds);
        printf("  %-44s %10s %11s %14s %14s\n", "operation", "keys/s", "per master",
               "servers us/key", "client us/key");
        for (int i = 0; i < PHASES; i++)
            printf("  %-44s %10.0f %11.0f %14.2f %14.2f\n", phase[i], rate[i], rate[i] / masters,
                   best[i].servers * 1e6 / (double)n, best[i].client * 1e6 / (double)n);
        printf("  test-and-add: %.2fx the SETBIT pattern (keys present: %.2fx); contains: %.2fx "
               "the GETBIT pattern\n",
               rate[0] / rate[1], rate[4] / rate[5], rate[2] / rate[3]);
        printf("  (servers us/key: CPU time of every server process, replicas included, per key; "
               "0 when SIMDBLOOM_BENCH_SERVER_PIDS is not set)\n");
    }
    rc_close(c);
    free(hashes);
    free(res);
    return 0;
}
