/*
 * simdbloom-redis-bench [--json] [--stream FILE] NODES [KEYS [ROUNDS]]: keys/s of the Redis
 * filter's test-and-add and lookup against the pattern of the Scrapy-style Redis Bloom filters
 * (one SETBIT or GETBIT per bit of a key), in one run, on the same cluster, the same keys, the
 * same bits and the same shard strings. Both sides pipeline to every master at once through the
 * same cluster client, each at its best pipeline depth, and no local front (every key goes to
 * Redis). With --stream, also the lines of FILE in order (a crawler's stream, repeats and all):
 * the work `dedup --redis` sends. Run by bench/redis-bench, which starts a throwaway cluster;
 * prints one table and, with --json, one JSON object.
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
 * pipelines only fill buffers. The filter uses its own rounds (ROUND_KEYS, src/redis/handle.h). */
#define ROUND 128

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds used so far by this process, and by the server processes whose pids are in an
 * environment variable (space-separated; bench/redis-bench sets SIMDBLOOM_BENCH_MASTER_PIDS and
 * SIMDBLOOM_BENCH_REPLICA_PIDS), from /proc. */
static double client_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* The CPU seconds of the processes listed in `variable`; their number in *count when given. */
static double servers_cpu(const char *variable, unsigned *count)
{
    const char *pids = getenv(variable);
    double total = 0;
    unsigned listed = 0;
    long tick = sysconf(_SC_CLK_TCK);
    while (pids && *pids) {
        char *end;
        long pid = strtol(pids, &end, 10);
        if (end == pids)
            break;
        pids = end;
        listed++;
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
    if (count)
        *count = listed;
    return total;
}

typedef struct cost {
    double wall, client, masters, replicas;
} cost;

static cost cost_now(void)
{
    return (cost){now(), client_cpu(), servers_cpu("SIMDBLOOM_BENCH_MASTER_PIDS", NULL),
                  servers_cpu("SIMDBLOOM_BENCH_REPLICA_PIDS", NULL)};
}

static cost cost_since(cost start)
{
    cost end = cost_now();
    return (cost){end.wall - start.wall, end.client - start.client, end.masters - start.masters,
                  end.replicas - start.replicas};
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
                    cmds[ncmd++] = (rc_cmd){.argc = (int)(arg - one),
                                            .argv = argv + one,
                                            .argvlen = lens + one,
                                            .slot = slots[s],
                                            .ask_node = -1};
                }
            if (pattern == PATTERN_BITFIELD_RO)
                cmds[ncmd++] = (rc_cmd){.argc = (int)(arg - first),
                                        .argv = argv + first,
                                        .argvlen = lens + first,
                                        .slot = slots[s],
                                        .ask_node = -1};
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

/* The lines of a file (without their newline), and their number; exits on failure. */
static char **read_lines(const char *path, size_t **lens, size_t *count)
{
    FILE *in = fopen(path, "r");
    if (!in) {
        perror(path);
        exit(1);
    }
    size_t n = 0, cap = 1024;
    char **lines = malloc(cap * sizeof *lines);
    *lens = malloc(cap * sizeof **lens);
    char *line = NULL;
    size_t size = 0;
    for (ssize_t len; (len = getline(&line, &size, in)) >= 0;) {
        if (len > 0 && line[len - 1] == '\n')
            len--;
        if (n == cap) {
            cap *= 2;
            lines = realloc(lines, cap * sizeof *lines);
            *lens = realloc(*lens, cap * sizeof **lens);
        }
        lines[n] = malloc((size_t)len + 1);
        memcpy(lines[n], line, (size_t)len);
        (*lens)[n++] = (size_t)len;
    }
    free(line);
    fclose(in);
    *count = n;
    return lines;
}

/* Hashes of the lines of `path`, as a filter of `layout` hashes them. */
static uint64_t *stream_hashes(const char *path, sbloom_layout layout, size_t *count)
{
    size_t *lens;
    char **lines = read_lines(path, &lens, count);
    sbloom_t *hasher;
    if (*count == 0 || sbloom_create_bytes(&hasher, 64, layout) != SBLOOM_OK) {
        fprintf(stderr, "%s: no lines, or no hasher\n", path);
        exit(1);
    }
    uint64_t *hashes = malloc(*count * sizeof *hashes);
    for (size_t i = 0; i < *count; i++) {
        hashes[i] = sbloom_hash(hasher, lines[i], lens[i]);
        free(lines[i]);
    }
    sbloom_free(hasher);
    free(lines);
    free(lens);
    return hashes;
}

/* Opens a fresh filter of `keys` x 10 bits, named after the pid, the round and `side`. */
static sbloom_redis_t *open_fresh(const sbloom_redis_options *o, size_t keys, int round,
                                  const char *side, char name[64], sbloom_redis_plan *plan)
{
    char err[512];
    sbloom_redis_t *f;
    *plan = sbloom_redis_plan_init();
    plan->layout = SBLOOM_LAYOUT_BLOCK512_K8;
    plan->bytes = (uint64_t)keys * 10 / 8; /* 10 bits per key */
    snprintf(name, 64, "bench-%ld-%d-%s", (long)getpid(), round, side);
    if (sbloom_redis_open(&f, o, name, plan, err, sizeof err)) {
        fprintf(stderr, "redis: %s\n", err);
        exit(1);
    }
    sbloom_redis_get_plan(f, plan);
    return f;
}

static void close_dropped(sbloom_redis_t *f)
{
    sbloom_redis_drop(f);
    sbloom_redis_close(f);
}

/* Exits with the filter's message unless `ok` (a failed call, or answers that disagree). */
static void require(int ok, sbloom_redis_t *f, const char *what)
{
    if (!ok) {
        fprintf(stderr, "redis: %s: %s\n", what, sbloom_redis_message(f));
        exit(1);
    }
}

/* Phases, in the order they run in a round. */
enum {
    ADD_NEW,
    SETBIT_NEW,
    CONTAINS,
    GETBIT,
    ADD_PRESENT,
    SETBIT_PRESENT,
    BITFIELD_RO,
    ADD_STREAM,
    SETBIT_STREAM,
    PHASES
};

static const char *const phase_name[PHASES] = {"add_if_new (BITFIELD SET u1 x8, per shard)",
                                               "8 x SETBIT a key (the usual pattern)",
                                               "contains (GETRANGE of the block)",
                                               "8 x GETBIT a key (the usual pattern)",
                                               "add_if_new, keys present (GETRANGE first)",
                                               "8 x SETBIT a key, keys present",
                                               "contains by BITFIELD_RO GET u1 x8 a key",
                                               "add_if_new, the stream's lines in order",
                                               "8 x SETBIT a line, the stream"};

static const char *const phase_json[PHASES] = {
    "add_if_new",     "setbit",      "contains",          "getbit",       "add_if_new_present",
    "setbit_present", "bitfield_ro", "add_if_new_stream", "setbit_stream"};

/* Keys a second the servers could take with a core each: the busier role's CPU per key, spread
 * over its processes (a derived figure, from the measured CPU times). */
static double core_bound_rate(const cost *c, double keys, unsigned masters, unsigned replicas)
{
    double per_master = c->masters / masters, per_replica = replicas ? c->replicas / replicas : 0;
    double busiest = per_master > per_replica ? per_master : per_replica;
    return busiest > 0 ? keys / busiest : 0;
}

int main(int argc, char **argv)
{
    int json = 0;
    const char *stream = NULL;
    for (;;) {
        if (argc > 1 && strcmp(argv[1], "--json") == 0) {
            json = 1;
            argv++;
            argc--;
        } else if (argc > 2 && strcmp(argv[1], "--stream") == 0) {
            stream = argv[2];
            argv += 2;
            argc -= 2;
        } else {
            break;
        }
    }
    if (argc < 2) {
        fprintf(stderr,
                "usage: simdbloom-redis-bench [--json] [--stream FILE] NODES [KEYS [ROUNDS]]\n");
        return 2;
    }
    const char *nodes = argv[1];
    size_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 200000;
    int rounds = argc > 3 ? atoi(argv[3]) : 3;
    uint64_t *hashes = malloc(n * sizeof *hashes), seed = 7;
    for (size_t i = 0; i < n; i++)
        hashes[i] = splitmix(&seed);
    size_t lines = 0;
    uint64_t *line_hashes =
        stream ? stream_hashes(stream, SBLOOM_LAYOUT_BLOCK512_K8, &lines) : NULL;
    uint8_t *res = malloc(n > lines ? n : lines);
    int phases = stream ? PHASES : ADD_STREAM;

    sbloom_redis_options o = sbloom_redis_options_init();
    o.nodes = nodes;
    o.flags = SBLOOM_REDIS_NO_FRONT;
    char err[512];
    rc_cluster *c;
    if (rc_connect(&c, nodes, getenv("REDISCLI_AUTH"), 5, 30, err, sizeof err)) {
        fprintf(stderr, "redis: %s\n", err);
        return 1;
    }
    /* Best of `rounds` (by wall time), each on fresh filters. */
    cost best[PHASES];
    for (int i = 0; i < PHASES; i++)
        best[i] = (cost){1e30, 0, 0, 0};
    uint32_t masters = 0;
    int64_t stream_new = 0;
    for (int r = 0; r < rounds; r++) {
        char name[2][64];
        sbloom_redis_t *f[2];
        sbloom_redis_plan plan;
        f[0] = open_fresh(&o, n, r, "filter", name[0], &plan);
        f[1] = open_fresh(&o, n, r, "pattern", name[1], &plan);
        cost got[PHASES], t = cost_now();
        require(sbloom_redis_add_if_new_hashes(f[0], hashes, n, res) >= 0, f[0], "add_if_new");
        got[ADD_NEW] = cost_since(t);
        t = cost_now();
        run_pattern(c, &plan, name[1], hashes, n, PATTERN_SETBIT);
        got[SETBIT_NEW] = cost_since(t);
        t = cost_now();
        require(sbloom_redis_contains_hashes(f[0], hashes, n, res) == (int64_t)n, f[0],
                "lookups disagree");
        got[CONTAINS] = cost_since(t);
        t = cost_now();
        run_pattern(c, &plan, name[1], hashes, n, PATTERN_GETBIT);
        got[GETBIT] = cost_since(t);
        /* The same keys again: all present (a fleet whose workers find each other's URLs). */
        t = cost_now();
        require(sbloom_redis_add_if_new_hashes(f[0], hashes, n, res) == 0, f[0],
                "keys added twice");
        got[ADD_PRESENT] = cost_since(t);
        t = cost_now();
        run_pattern(c, &plan, name[1], hashes, n, PATTERN_SETBIT);
        got[SETBIT_PRESENT] = cost_since(t);
        t = cost_now();
        run_pattern(c, &plan, name[0], hashes, n, PATTERN_BITFIELD_RO);
        got[BITFIELD_RO] = cost_since(t);
        sbloom_redis_info info = sbloom_redis_info_init();
        sbloom_redis_get_info(f[0], &info);
        masters = info.masters;
        for (int side = 0; side < 2; side++)
            close_dropped(f[side]);
        if (stream) { /* fresh filters sized for the stream, fed its lines in order */
            f[0] = open_fresh(&o, lines, r, "stream-filter", name[0], &plan);
            f[1] = open_fresh(&o, lines, r, "stream-pattern", name[1], &plan);
            t = cost_now();
            stream_new = sbloom_redis_add_if_new_hashes(f[0], line_hashes, lines, res);
            require(stream_new >= 0, f[0], "add_if_new");
            got[ADD_STREAM] = cost_since(t);
            t = cost_now();
            run_pattern(c, &plan, name[1], line_hashes, lines, PATTERN_SETBIT);
            got[SETBIT_STREAM] = cost_since(t);
            for (int side = 0; side < 2; side++)
                close_dropped(f[side]);
        }
        for (int i = 0; i < phases; i++)
            if (got[i].wall < best[i].wall)
                best[i] = got[i];
    }
    unsigned master_procs, replica_procs;
    servers_cpu("SIMDBLOOM_BENCH_MASTER_PIDS", &master_procs);
    servers_cpu("SIMDBLOOM_BENCH_REPLICA_PIDS", &replica_procs);
    double keys[PHASES], rate[PHASES], bound[PHASES];
    for (int i = 0; i < phases; i++) {
        keys[i] = (double)(i >= ADD_STREAM ? lines : n);
        rate[i] = keys[i] / best[i].wall;
        bound[i] =
            master_procs ? core_bound_rate(&best[i], keys[i], master_procs, replica_procs) : 0;
    }
    if (json) {
        printf("{\"keys\": %zu, \"stream_lines\": %zu, \"stream_new\": %lld, \"masters\": %u, "
               "\"replicas\": %u",
               n, lines, (long long)stream_new, masters, replica_procs);
        for (int i = 0; i < phases; i++)
            printf(", \"%s\": {\"keys_per_s\": %.0f, \"masters_us_per_key\": %.3f, "
                   "\"replicas_us_per_key\": %.3f, \"client_us_per_key\": %.3f, "
                   "\"core_bound_keys_per_s\": %.0f}",
                   phase_json[i], rate[i], best[i].masters * 1e6 / keys[i],
                   best[i].replicas * 1e6 / keys[i], best[i].client * 1e6 / keys[i], bound[i]);
        printf("}\n");
    } else {
        printf("simdbloom-redis, block512-k8 (8 bits a key), %zu keys, %u masters, %u replicas, "
               "best of %d:\n",
               n, masters, replica_procs, rounds);
        if (stream)
            printf("stream: %s, %zu lines, %lld new (%.2f%% repeats)\n", stream, lines,
                   (long long)stream_new, 100.0 * (1.0 - (double)stream_new / (double)lines));
        printf("  %-44s %10s %10s %9s %9s %9s %12s\n", "operation", "keys/s", "a master", "masters",
               "replicas", "client", "core-bound");
        for (int i = 0; i < phases; i++)
            printf("  %-44s %10.0f %10.0f %9.2f %9.2f %9.2f %12.0f\n", phase_name[i], rate[i],
                   rate[i] / masters, best[i].masters * 1e6 / keys[i],
                   best[i].replicas * 1e6 / keys[i], best[i].client * 1e6 / keys[i], bound[i]);
        printf("  test-and-add: %.2fx the SETBIT pattern (keys present: %.2fx",
               rate[ADD_NEW] / rate[SETBIT_NEW], rate[ADD_PRESENT] / rate[SETBIT_PRESENT]);
        if (stream)
            printf("; the stream: %.2fx", rate[ADD_STREAM] / rate[SETBIT_STREAM]);
        printf("); contains: %.2fx the GETBIT pattern\n", rate[CONTAINS] / rate[GETBIT]);
        printf("  with a core per server (core-bound): test-and-add %.2fx, contains %.2fx\n",
               bound[SETBIT_NEW] > 0 ? bound[ADD_NEW] / bound[SETBIT_NEW] : 0,
               bound[GETBIT] > 0 ? bound[CONTAINS] / bound[GETBIT] : 0);
        printf("  (masters, replicas, client: CPU us per key, from /proc; core-bound: keys/s if "
               "each server had a core, keys / the busiest server's CPU seconds)\n");
    }
    rc_close(c);
    free(hashes);
    free(line_hashes);
    free(res);
    return 0;
}
