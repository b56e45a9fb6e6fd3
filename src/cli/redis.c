/*
 * The command line's side of simdbloom-redis: dedup against the fleet table (fleet_*), info
 * --redis, push (a local filter file into Redis) and pull (the Redis filter into a file).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "simdbloom_redis.h"

struct fleet {
    sbloom_redis_t *filter;
    int windowed; /* --forget-after: a windowed fleet filter */
};

static sbloom_redis_options options_of(const cli_options *o)
{
    sbloom_redis_options r = sbloom_redis_options_init();
    r.nodes = o->redis;
    r.password = o->redis_pass; /* NULL: REDISCLI_AUTH, as redis-cli takes it */
    r.retry = o->redis_retry;
    r.timeout = o->redis_timeout;
    return r;
}

/* Opens --name at --redis: with a plan when one is given (it is created from the plan when it
 * does not exist yet), else as stored. A fleet filter has a fixed size, so dedup (`to_create`)
 * says how to create one rather than guess a size. */
static int open_named(const cli_options *o, const sbloom_redis_plan *plan, int to_create,
                      sbloom_redis_t **out)
{
    sbloom_redis_options opt = options_of(o);
    char err[512];
    int rc = o->forget_after
                 ? sbloom_redis_open_windowed(out, &opt, o->redis_name, plan, FORGET_PERIODS,
                                              forget_period(o), wall_seconds(), err, sizeof err)
                 : sbloom_redis_open(out, &opt, o->redis_name, plan, err, sizeof err);
    if (rc == SBLOOM_REDIS_E_PLAN && !o->forget_after && !to_create && strstr(err, "windowed")) {
        /* info of a windowed filter: opened as one, its window as stored */
        rc = sbloom_redis_open_windowed(out, &opt, o->redis_name, NULL, 0, 0, wall_seconds(), err,
                                        sizeof err);
    }
    if (rc == SBLOOM_REDIS_E_NOT_FOUND && to_create) {
        fprintf(stderr,
                "simdbloom: redis: no filter named %s yet: give --expect N (the distinct lines "
                "the whole fleet will see) and --fpp to create it; a fleet filter has a fixed "
                "size and does not grow\n",
                o->redis_name);
        return EXIT_RUNTIME;
    }
    if (rc) {
        fprintf(stderr, "simdbloom: redis: %s\n", err);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* Exit 1 with one line naming the shards, if any is missing or damaged. */
static int refuse_damaged(sbloom_redis_t *f, const char *name)
{
    uint64_t damaged[4], count;
    if (sbloom_redis_check(f, damaged, 4, &count) != 0) {
        fprintf(stderr, "simdbloom: redis: %s\n", sbloom_redis_message(f));
        return EXIT_RUNTIME;
    }
    if (!count)
        return EXIT_OK;
    char list[128] = "";
    for (uint64_t i = 0; i < count && i < 4; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%llu", i ? ", " : "",
                 (unsigned long long)damaged[i]);
    fprintf(stderr,
            "simdbloom: redis: filter %s has %llu missing or damaged shards (%s%s): evicted, "
            "deleted or overwritten; nothing was done. 'simdbloom info --redis ... --name %s "
            "--repair' resets them (their lines are then written once more)\n",
            name, (unsigned long long)count, list, count > 4 ? ", ..." : "", name);
    return EXIT_RUNTIME;
}

/* A warning when a master may evict the filter's shards. */
static void warn_eviction(sbloom_redis_t *f, const char *name, int windowed)
{
    char policy[64];
    if (sbloom_redis_eviction_policy(f, policy, sizeof policy) == 1)
        fprintf(stderr,
                "warning: a Redis master that holds %s has maxmemory-policy %s: when its memory "
                "runs out it may evict %s. Use noeviction%s\n",
                name, policy,
                windowed ? "a generation, whose lines would then come out again"
                         : "shards of the filter (runs then stop, naming them)",
                windowed ? " (a window's keys expire: volatile-* policies evict them too)"
                         : ", or a volatile-* policy");
}

/* Distinct keys in the fleet filter: the counter, or more where the fill says so (an overfull
 * filter takes new keys for old, and the counter then undercounts); and the false-positive rate
 * now. */
static void fleet_load(const sbloom_redis_plan *plan, const sbloom_redis_info *info, double *items,
                       double *fpp_now)
{
    double bits = (double)plan->bytes * 8.0, fill = (double)info->bits_set / bits;
    unsigned k = sbloom_layout_k(plan->layout);
    double from_fill = fill < 1.0 ? -bits / k * log(1.0 - fill) : INFINITY;
    *items = fmax((double)info->items, from_fill);
    *fpp_now =
        isfinite(*items) ? sbloom_blocked_fpp(plan->layout, plan->bytes, (uint64_t)*items) : 1.0;
}

/* The local modes' overload warning, for the fleet filter. */
static int warn_fleet_overloaded(const sbloom_redis_plan *plan, const sbloom_redis_info *info)
{
    double items, fpp_now;
    fleet_load(plan, info, &items, &fpp_now);
    if (!plan->planned_items || !(items > 1.02 * (double)plan->planned_items))
        return 0;
    fprintf(stderr,
            "warning: about %.0f distinct lines in the fleet filter exceed the %llu planned; the "
            "false-positive rate is now about %.3g (planned %.3g): that share of new lines is "
            "taken for repeats. A fleet filter cannot grow: make a new one with room to spare "
            "(--expect %llu under another --name)\n",
            items, (unsigned long long)plan->planned_items, fpp_now, plan->planned_fpp,
            (unsigned long long)(2.0 * fmin(items, 1e15)));
    return 1;
}

/* The plan from --expect/--fpp/--layout, when any is given (else *given = 0). */
static int plan_of(const cli_options *o, sbloom_redis_plan *plan, int *given)
{
    *given = o->expect_given || o->fpp_given || layout_given(o);
    if (!*given)
        return EXIT_OK;
    if (!o->expect_given) /* a plan is made from the distinct lines expected */
        return usage_error("dedup", "--fpp and --layout make a plan with --expect N: give it");
    if (o->layout == SBLOOM_LAYOUT_COUNTING512 || o->layout == SBLOOM_LAYOUT_SCALABLE ||
        is_fingerprint_layout(o->layout)) /* (docs/DISTRIBUTED.md says why) */
        return usage_error("dedup",
                           "--redis takes a bit layout (parquet, block512-k8, "
                           "block512-k16, or bloom for the smallest), not %s",
                           sbloom_layout_name(o->layout));
    sbloom_plan p = sbloom_plan_init();
    /* a window's plan is one generation's: n / G lines at p / (G + 1) */
    uint64_t n = o->forget_after ? o->expect / FORGET_PERIODS + (o->expect % FORGET_PERIODS != 0)
                                 : o->expect;
    double fpp = o->forget_after ? o->fpp / (FORGET_PERIODS + 1) : o->fpp;
    int rc =
        o->layout ? sbloom_plan_for_layout(n, fpp, o->layout, &p) : sbloom_plan_for(n, fpp, &p);
    if (rc != SBLOOM_OK)
        return usage_error("dedup", "no plan for %llu items at rate %g: %s",
                           (unsigned long long)o->expect, o->fpp, sbloom_strerror(rc));
    plan->layout = p.layout;
    plan->bytes = p.bytes;
    plan->planned_items = o->expect;
    plan->planned_fpp = o->fpp;
    return EXIT_OK;
}

int fleet_open(const cli_options *o, fleet **out, sbloom_t **hasher)
{
    *out = NULL;
    *hasher = NULL;
    sbloom_redis_plan plan = sbloom_redis_plan_init();
    int given, rc = plan_of(o, &plan, &given);
    if (rc != EXIT_OK)
        return rc;
    fleet *f = calloc(1, sizeof *f);
    if (!f) {
        fprintf(stderr, "simdbloom: out of memory\n");
        return EXIT_RUNTIME;
    }
    if ((rc = open_named(o, given ? &plan : NULL, 1, &f->filter)) != EXIT_OK) {
        free(f);
        return rc;
    }
    if ((rc = refuse_damaged(f->filter, o->redis_name)) != EXIT_OK) {
        fleet_close(f);
        return rc;
    }
    f->windowed = o->forget_after != 0;
    if (!o->quiet)
        warn_eviction(f->filter, o->redis_name, f->windowed);
    sbloom_redis_get_plan(f->filter, &plan);
    int made = sbloom_create_bytes(hasher, sbloom_layout_block_bytes(plan.layout), plan.layout);
    if (made != SBLOOM_OK) {
        fleet_close(f);
        return filter_error("create", "a hashing filter", made);
    }
    *out = f;
    return EXIT_OK;
}

int64_t fleet_add_if_new(fleet *f, const uint64_t *hashes, size_t n, uint8_t *is_new)
{
    int64_t fresh = sbloom_redis_add_if_new_hashes(f->filter, hashes, n, is_new);
    return fresh < 0 ? -1 : fresh;
}

int fleet_advance(fleet *f, uint64_t now)
{
    if (!f->windowed)
        return EXIT_OK;
    if (sbloom_redis_advance(f->filter, now) != 0) {
        fprintf(stderr, "simdbloom: redis: %s\n", sbloom_redis_message(f->filter));
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

const char *fleet_message(const fleet *f)
{
    return sbloom_redis_message(f->filter);
}

static void describe_plan(const sbloom_redis_plan *plan, const char *indent)
{
    char size[32], shard[32];
    printf("%slayout            %s (k = %u bits per key)\n", indent,
           sbloom_layout_name(plan->layout), sbloom_layout_k(plan->layout));
    printf("%ssize              %s (%llu bytes) in %llu shards of %s\n", indent,
           human_bytes(plan->bytes, size, sizeof size), (unsigned long long)plan->bytes,
           (unsigned long long)plan->shards, human_bytes(plan->shard_bytes, shard, sizeof shard));
    if (plan->planned_items)
        printf("%splanned           %llu items at false-positive rate %.3g\n", indent,
               (unsigned long long)plan->planned_items, plan->planned_fpp);
    else
        printf("%splanned           (made by size, no plan)\n", indent);
}

/* A windowed fleet filter's overload warning: a generation that took more than its share of the
 * lines planned a window. */
static int warn_window_overloaded(const sbloom_redis_plan *plan, const sbloom_window *w)
{
    uint64_t share = plan->planned_items / w->periods + (plan->planned_items % w->periods != 0);
    for (uint32_t i = 0; i < w->generations; i++)
        if (plan->planned_items && (double)w->generation_items[i] > 1.02 * (double)share) {
            fprintf(stderr,
                    "warning: %llu distinct lines in one period of the fleet's window exceed "
                    "the %llu a period planned (--expect %llu a window): more new lines are "
                    "taken for repeats than planned until that period leaves the window. Make a "
                    "new one with room to spare (under another --name)\n",
                    (unsigned long long)w->generation_items[i], (unsigned long long)share,
                    (unsigned long long)plan->planned_items);
            return 1;
        }
    return 0;
}

int fleet_summary(fleet *f, int summary)
{
    sbloom_redis_plan plan = sbloom_redis_plan_init();
    sbloom_redis_get_plan(f->filter, &plan);
    sbloom_window w = sbloom_window_init();
    if (f->windowed) {
        if (sbloom_redis_get_window(f->filter, &w) != 0) {
            if (summary)
                fprintf(stderr, "fleet filter: %s\n", sbloom_redis_message(f->filter));
            return 0;
        }
        if (summary)
            fprintf(stderr,
                    "fleet filter: windowed, %s a generation, forgets after %llu s (%u periods of "
                    "%llu s)\n",
                    sbloom_layout_name(plan.layout), (unsigned long long)(w.period * w.periods),
                    w.periods, (unsigned long long)w.period);
        return warn_window_overloaded(&plan, &w);
    }
    sbloom_redis_info info = sbloom_redis_info_init();
    char size[32];
    if (sbloom_redis_get_info(f->filter, &info) != 0) {
        if (summary)
            fprintf(stderr, "fleet filter: %s\n", sbloom_redis_message(f->filter));
        return 0;
    }
    if (summary)
        fprintf(stderr,
                "fleet filter: %s, %s in %llu shards on %u masters, %llu items from all clients, "
                "%llu pipelined rounds\n",
                sbloom_layout_name(plan.layout), human_bytes(plan.bytes, size, sizeof size),
                (unsigned long long)plan.shards, info.masters, (unsigned long long)info.items,
                (unsigned long long)info.round_trips);
    return warn_fleet_overloaded(&plan, &info);
}

void fleet_close(fleet *f)
{
    if (!f)
        return;
    sbloom_redis_close(f->filter);
    free(f);
}

int redis_info(const cli_options *o)
{
    sbloom_redis_t *f;
    int rc = open_named(o, NULL, 0, &f);
    if (rc != EXIT_OK)
        return rc;
    sbloom_redis_plan plan = sbloom_redis_plan_init();
    sbloom_redis_get_plan(f, &plan);
    sbloom_window w = sbloom_window_init();
    if (sbloom_redis_get_window(f, &w) == 0) { /* a windowed filter: its window and counts */
        if (o->repair) {
            fprintf(stderr,
                    "simdbloom: redis: %s is a windowed filter: --repair resets the shards of a "
                    "plain one. A generation a run names as damaged is deleted with 'redis-cli -c "
                    "DEL KEY' (its lines come out once more)\n",
                    o->redis_name);
            sbloom_redis_close(f);
            return EXIT_RUNTIME;
        }
        printf("%s at %s:\n", o->redis_name, o->redis);
        printf("  window            forgets after %llu s: %u periods of %llu s, each period's "
               "lines in a generation of its own that Redis expires\n",
               (unsigned long long)(w.period * w.periods), w.periods, (unsigned long long)w.period);
        describe_plan(&plan, "  ");
        for (uint32_t i = 0; i < w.generations; i++) {
            char began[64];
            time_t start = (time_t)w.generation_start[i];
            struct tm tm;
            if (w.generation_start[i] == UINT64_MAX)
                continue;
            if (!gmtime_r(&start, &tm) ||
                !strftime(began, sizeof began, "began %Y-%m-%d %H:%M:%S UTC", &tm))
                snprintf(began, sizeof began, "began at %llu s",
                         (unsigned long long)w.generation_start[i]);
            printf("  generation %-2u     %s, %llu items\n", i, began,
                   (unsigned long long)w.generation_items[i]);
        }
        warn_window_overloaded(&plan, &w);
        sbloom_redis_close(f);
        return EXIT_OK;
    }
    uint64_t repaired = 0;
    if (o->repair && sbloom_redis_repair(f, &repaired) != 0) {
        fprintf(stderr, "simdbloom: redis: %s\n", sbloom_redis_message(f));
        sbloom_redis_close(f);
        return EXIT_RUNTIME;
    }
    sbloom_redis_info info = sbloom_redis_info_init();
    uint64_t *damaged = malloc((size_t)plan.shards * sizeof *damaged), count = 0;
    if (!damaged || sbloom_redis_get_info(f, &info) != 0 ||
        sbloom_redis_check(f, damaged, (size_t)plan.shards, &count) != 0) {
        fprintf(stderr, "simdbloom: redis: %s\n",
                damaged ? sbloom_redis_message(f) : "out of memory");
        free(damaged);
        sbloom_redis_close(f);
        return EXIT_RUNTIME;
    }
    char stored[32];
    double fill = (double)info.bits_set / ((double)plan.bytes * 8.0), items, fpp_now;
    fleet_load(&plan, &info, &items, &fpp_now);
    printf("%s at %s:\n", o->redis_name, o->redis);
    describe_plan(&plan, "  ");
    printf("  items added       %llu (reported new, all clients)\n",
           (unsigned long long)info.items);
    printf("  fill              %.4f of bits set\n", fill);
    if (isfinite(items))
        printf("  distinct (est.)   %.0f (from the fill and the counter)\n", items);
    else
        printf("  distinct (est.)   far more than planned (every bit set)\n");
    printf("  fpp now           %.3g (estimated from the bits)\n", fpp_now);
    printf("  stored            %s in Redis, on %u masters\n",
           human_bytes(info.stored_bytes, stored, sizeof stored), info.masters);
    if (o->repair)
        printf("  repaired          %llu shards reset to empty\n", (unsigned long long)repaired);
    printf("  damaged shards    %llu", (unsigned long long)count);
    for (uint64_t i = 0; i < count && i < 16; i++)
        printf("%s%llu", i ? ", " : " (", (unsigned long long)damaged[i]);
    printf("%s\n", count > 16 ? ", ...)" : count ? ")" : "");
    warn_fleet_overloaded(&plan, &info);
    free(damaged);
    sbloom_redis_close(f);
    if (count) {
        fprintf(stderr,
                "simdbloom: redis: filter %s has %llu missing or damaged shards (evicted, deleted "
                "or overwritten): runs stop at them; --repair resets them\n",
                o->redis_name, (unsigned long long)count);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

static const char push_help[] =
    "usage: simdbloom push FILTER --redis HOST:PORT[,...] --name NAME [--pass P] [--retry S]\n"
    "\n"
    "ORs a local filter file into the fleet filter NAME in Redis, creating NAME with the file's\n"
    "plan when it does not exist (it must have the file's layout and size when it does). Bits\n"
    "other clients set stay: each shard is merged with BITOP OR. The file's item count is added\n"
    "to the fleet's. Rerunning a push changes no bit (after a failover during a push, rerun it).\n"
    "  --redis NODES   seed nodes of the Redis Cluster (or one Redis server)\n"
    "  --name NAME     the filter's name in Redis\n"
    "  --pass P        Redis password (default: the environment's REDISCLI_AUTH)\n"
    "  --retry S       seconds to retry a cluster that is failing over (default 30)\n"
    "  --timeout S     seconds to wait for a reply before the connection counts as lost (5)\n"
    "Exit status: 0 done, 1 error, 2 usage error.\n";

int cmd_push(int argc, char **argv)
{
    cli_options o;
    int rc = parse_options("push", push_help, argc, argv, OPT_REDIS | OPT_QUIET, &o);
    if (rc >= 0)
        return rc;
    if (!o.redis)
        return usage_error("push", "--redis NODES --name NAME are required");
    if (o.nargs != 1)
        return usage_error("push", "give one FILTER file");
    sbloom_t *local;
    if ((rc = load_for_reading(o.args[0], &local)) != SBLOOM_OK)
        return filter_error("load", o.args[0], rc);
    if (sbloom_get_layout(local) == SBLOOM_LAYOUT_COUNTING512 ||
        sbloom_get_layout(local) == SBLOOM_LAYOUT_SCALABLE) {
        fprintf(stderr, "simdbloom: %s is a %s filter: a Redis filter takes bit filters only\n",
                o.args[0], sbloom_layout_name(sbloom_get_layout(local)));
        sbloom_free(local);
        return EXIT_RUNTIME;
    }
    sbloom_redis_plan plan = sbloom_redis_plan_init();
    plan.layout = sbloom_get_layout(local);
    plan.bytes = sbloom_bytes(local);
    plan.planned_items = sbloom_planned_items(local);
    plan.planned_fpp = sbloom_planned_fpp(local);
    sbloom_redis_t *f;
    if ((rc = open_named(&o, &plan, 0, &f)) != EXIT_OK) {
        sbloom_free(local);
        return rc;
    }
    rc = EXIT_OK;
    if (sbloom_redis_push(f, local) != 0) {
        fprintf(stderr, "simdbloom: redis: %s\n", sbloom_redis_message(f));
        rc = EXIT_RUNTIME;
    } else if (o.summary) {
        char size[32];
        fprintf(stderr, "simdbloom push: %s (%s, %llu items) merged into %s\n", o.args[0],
                human_bytes(sbloom_bytes(local), size, sizeof size),
                (unsigned long long)sbloom_items(local), o.redis_name);
    }
    sbloom_redis_close(f);
    sbloom_free(local);
    return rc;
}

static const char pull_help[] =
    "usage: simdbloom pull --redis HOST:PORT[,...] --name NAME -o FILTER [--pass P] [--retry S]\n"
    "\n"
    "Copies the fleet filter NAME from Redis into the filter file FILTER (saved crash-safely):\n"
    "same layout, size, plan and item count, so the file answers as the fleet table did when\n"
    "each shard was read (shards are read one after another while others may still add). The\n"
    "save waits for a writer of FILTER (the lock on FILTER.lock that add holds).\n"
    "Options as for push. Exit status: 0 done, 1 error, 2 usage error.\n";

int cmd_pull(int argc, char **argv)
{
    cli_options o;
    int rc = parse_options("pull", pull_help, argc, argv, OPT_REDIS | OPT_OUTPUT | OPT_QUIET, &o);
    if (rc >= 0)
        return rc;
    if (!o.redis || !o.output)
        return usage_error("pull", "--redis NODES --name NAME -o FILTER are required");
    if (o.nargs)
        return usage_error("pull", "unexpected argument '%s'", o.args[0]);
    sbloom_redis_t *f;
    if ((rc = open_named(&o, NULL, 0, &f)) != EXIT_OK)
        return rc;
    sbloom_t *local = NULL;
    if (sbloom_redis_pull(f, &local) != 0) {
        fprintf(stderr, "simdbloom: redis: %s\n", sbloom_redis_message(f));
        sbloom_redis_close(f);
        return EXIT_RUNTIME;
    }
    sbloom_redis_close(f);
    int lock;
    if ((rc = filter_lock(o.output, "pull", LOCK_FILTER_EXCLUSIVE, 0, o.quiet, &lock)) != EXIT_OK) {
        sbloom_free(local);
        return rc;
    }
    rc = sbloom_save(local, o.output);
    filter_unlock(lock);
    if (rc != SBLOOM_OK) {
        sbloom_free(local);
        return filter_error("save", o.output, rc);
    }
    if (o.summary) {
        char size[32];
        fprintf(stderr, "simdbloom pull: %s (%s, %llu items) saved to %s\n", o.redis_name,
                human_bytes(sbloom_bytes(local), size, sizeof size),
                (unsigned long long)sbloom_items(local), o.output);
    }
    sbloom_free(local);
    return EXIT_OK;
}
