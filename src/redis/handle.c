/* The Redis filter's errors and messages, its commands, and its item counter (handle.h). */
#include <hiredis/hiredis.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "handle.h"

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
    case SBLOOM_REDIS_E_DAMAGED: return "a shard of the filter in Redis is missing or damaged";
    case SBLOOM_REDIS_E_TIMEOUT:
        return "a Redis server did not answer within the timeout (stopped, or overloaded)";
    case SBLOOM_REDIS_E_CLOCK:
        return "this client's clock and the Redis servers' differ by more than a window allows";
    default: return sbloom_strerror(code);
    }
}

int rf_fail(sbloom_redis_t *f, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    va_end(ap);
    return code;
}

/* An error from rc_run: its message becomes the filter's. */
int rf_cluster_failed(sbloom_redis_t *f, int code)
{
    snprintf(f->message, sizeof f->message, "%s", rc_message(f->cluster));
    return code;
}

const char *sbloom_redis_message(const sbloom_redis_t *f)
{
    return f ? f->message : "";
}

int rf_valid_name(const char *name)
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
void rf_point_command(rc_cmd *cmd, const char **argv, size_t *argvlen, int argc, uint16_t slot)
{
    cmd->argc = argc;
    cmd->argv = argv;
    cmd->argvlen = argvlen;
    cmd->slot = slot;
}

/* The same with the lengths from strlen (none of these arguments holds a NUL). */
void rf_set_command(rc_cmd *cmd, const char **argv, size_t *argvlen, int argc, uint16_t slot)
{
    for (int i = 0; i < argc; i++)
        argvlen[i] = strlen(argv[i]);
    rf_point_command(cmd, argv, argvlen, argc, slot);
}

/* Runs one command to the slot of `key` and hands back its reply (the caller frees it). */
int rf_run_one(sbloom_redis_t *f, redisReply **reply, const char *key, int argc, ...)
{
    const char *argv[8];
    size_t argvlen[8];
    va_list ap;
    va_start(ap, argc);
    for (int i = 0; i < argc && i < 8; i++)
        argv[i] = va_arg(ap, const char *);
    va_end(ap);
    rc_cmd cmd;
    rf_set_command(&cmd, argv, argvlen, argc, rc_slot(key, strlen(key)));
    int rc = rc_run(f->cluster, &cmd, 1);
    if (rc) {
        rc_cmds_release(&cmd, 1);
        return rf_cluster_failed(f, rc);
    }
    *reply = cmd.reply;
    return 0;
}

/* The counter's INCRBY, appended to a round when keys were found new since the last one. */
size_t rf_append_items_command(sbloom_redis_t *f, size_t ncmd, size_t *arg)
{
    if (!f->items_pending)
        return ncmd;
    snprintf(f->items_arg, sizeof f->items_arg, "%llu", (unsigned long long)f->items_pending);
    const char **argv = f->argv + *arg;
    argv[0] = "INCRBY";
    argv[1] = f->items_key;
    argv[2] = f->items_arg;
    rf_set_command(&f->cmds[ncmd], argv, f->argvlen + *arg, 3,
                   rc_slot(f->items_key, strlen(f->items_key)));
    f->shard_of_cmd[ncmd] = UINT32_MAX;
    *arg += 3;
    if (!f->periods)
        return ncmd + 1;
    /* a windowed filter's counter is its period's, expiring with the period's generation */
    argv = f->argv + *arg;
    argv[0] = "PEXPIREAT";
    argv[1] = f->items_key;
    argv[2] = f->expire_arg;
    rf_set_command(&f->cmds[ncmd + 1], argv, f->argvlen + *arg, 3,
                   rc_slot(f->items_key, strlen(f->items_key)));
    f->shard_of_cmd[ncmd + 1] = UINT32_MAX;
    *arg += 3;
    return ncmd + 2;
}

/* Sends the counter's pending INCRBY now. */
int rf_flush_items(sbloom_redis_t *f)
{
    size_t arg = 0;
    size_t ncmd = rf_append_items_command(f, 0, &arg);
    if (!ncmd)
        return 0;
    uint64_t pending = f->items_pending;
    int rc = rc_run(f->cluster, f->cmds, ncmd);
    rc_cmds_release(f->cmds, ncmd);
    if (rc)
        return rf_cluster_failed(f, rc);
    f->items_pending -= pending;
    return 0;
}

int rf_read_items(sbloom_redis_t *f, uint64_t *items)
{
    redisReply *r;
    int rc = rf_run_one(f, &r, f->items_key, 2, "GET", f->items_key);
    if (rc)
        return rc;
    *items = r->type == REDIS_REPLY_STRING ? strtoull(r->str, NULL, 10) : 0;
    freeReplyObject(r);
    return 0;
}
