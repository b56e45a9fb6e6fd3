/*
 * The command line's side of simdbloom-redis: dedup against the fleet table (fleet_*), info
 * --redis, push (a local filter file into Redis) and pull (the Redis filter into a file).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "simdbloom_redis.h"

struct fleet {
    sbloom_redis_t *filter;
};

static sbloom_redis_options options_of(const cli_options *o)
{
    sbloom_redis_options r = sbloom_redis_options_init();
    r.nodes = o->redis;
    r.password = o->redis_pass; /* NULL: REDISCLI_AUTH, as redis-cli takes it */
    r.retry = o->redis_retry;
    return r;
}

/* Opens --name at --redis: with a plan when one is given (or, for `create_default`, the
 * default plan when the filter does not exist yet), else as stored. */
static int open_named(const cli_options *o, const sbloom_redis_plan *plan, int create_default,
                      sbloom_redis_t **out)
{
    sbloom_redis_options opt = options_of(o);
    char err[512];
    int rc = sbloom_redis_open(out, &opt, o->redis_name, plan, err, sizeof err);
    if (rc == SBLOOM_REDIS_E_NOT_FOUND && create_default) {
        sbloom_plan p = sbloom_plan_init();
        sbloom_redis_plan def = sbloom_redis_plan_init();
        if (sbloom_plan_for(DEFAULT_EXPECT, DEFAULT_FPP, &p) == SBLOOM_OK) {
            def.layout = p.layout;
            def.bytes = p.bytes;
            def.planned_items = DEFAULT_EXPECT;
            def.planned_fpp = DEFAULT_FPP;
            rc = sbloom_redis_open(out, &opt, o->redis_name, &def, err, sizeof err);
        }
    }
    if (rc) {
        fprintf(stderr, "simdbloom: redis: %s\n", err);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

/* The plan from --expect/--fpp/--layout, when any is given (else *given = 0). */
static int plan_of(const cli_options *o, sbloom_redis_plan *plan, int *given)
{
    *given = o->expect_given || o->fpp_given || o->layout;
    if (!*given)
        return EXIT_OK;
    if (o->layout == SBLOOM_LAYOUT_COUNTING512 || o->layout == SBLOOM_LAYOUT_SCALABLE)
        return usage_error("dedup",
                           "--redis takes a bit layout (parquet, block512-k8, "
                           "block512-k16), not %s",
                           sbloom_layout_name(o->layout));
    sbloom_plan p = sbloom_plan_init();
    int rc = o->layout ? sbloom_plan_for_layout(o->expect, o->fpp, o->layout, &p)
                       : sbloom_plan_for(o->expect, o->fpp, &p);
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
    if ((rc = open_named(o, given ? &plan : NULL, !given, &f->filter)) != EXIT_OK) {
        free(f);
        return rc;
    }
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
    if (fresh < 0) {
        fprintf(stderr, "simdbloom: redis: %s\n", sbloom_redis_message(f->filter));
        return -1;
    }
    return fresh;
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

void fleet_summary(fleet *f)
{
    sbloom_redis_plan plan = sbloom_redis_plan_init();
    sbloom_redis_get_plan(f->filter, &plan);
    sbloom_redis_info info = sbloom_redis_info_init();
    char size[32];
    if (sbloom_redis_get_info(f->filter, &info) != 0) {
        fprintf(stderr, "fleet filter: %s\n", sbloom_redis_message(f->filter));
        return;
    }
    fprintf(stderr,
            "fleet filter: %s, %s in %llu shards on %u masters, %llu items from all clients, "
            "%llu pipelined rounds\n",
            sbloom_layout_name(plan.layout), human_bytes(plan.bytes, size, sizeof size),
            (unsigned long long)plan.shards, info.masters, (unsigned long long)info.items,
            (unsigned long long)info.round_trips);
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
    sbloom_redis_info info = sbloom_redis_info_init();
    if (sbloom_redis_get_info(f, &info) != 0) {
        fprintf(stderr, "simdbloom: redis: %s\n", sbloom_redis_message(f));
        sbloom_redis_close(f);
        return EXIT_RUNTIME;
    }
    char stored[32];
    double fill = (double)info.bits_set / ((double)plan.bytes * 8.0);
    printf("%s at %s:\n", o->redis_name, o->redis);
    describe_plan(&plan, "  ");
    printf("  items added       %llu (reported new, all clients)\n",
           (unsigned long long)info.items);
    printf("  fill              %.4f of bits set\n", fill);
    printf("  stored            %s in Redis, on %u masters\n",
           human_bytes(info.stored_bytes, stored, sizeof stored), info.masters);
    sbloom_redis_close(f);
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
    } else if (!o.quiet) {
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
    if (!o.quiet) {
        char size[32];
        fprintf(stderr, "simdbloom pull: %s (%s, %llu items) saved to %s\n", o.redis_name,
                human_bytes(sbloom_bytes(local), size, sizeof size),
                (unsigned long long)sbloom_items(local), o.output);
    }
    sbloom_free(local);
    return EXIT_OK;
}
