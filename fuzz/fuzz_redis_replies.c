/*
 * fuzz_redis_replies: arbitrary bytes as what a Redis server (or anything answering in its place)
 * sends the cluster client, parsed by hiredis into replies and read by src/redis/replies.c: the
 * slot map of CLUSTER SLOTS, MOVED/ASK redirects, error words. Nothing may crash or hang; a slot
 * map holds only nodes that were named, and counts its empty slots right; a redirect names a host
 * and a port in 1..65535.
 */
#include <stdio.h>

#include "fuzz_common.h"
#include "../src/redis/replies.h"

#define MAX_NODES 8

typedef struct nodes {
    char host[MAX_NODES][64];
    int port[MAX_NODES];
    int count;
} nodes;

static int node_of(void *ctx, const char *host, int port)
{
    nodes *n = ctx;
    if (port < 1 || port > 65535 || !host[0])
        abort(); /* rc_slot_map passes only well-formed nodes */
    for (int i = 0; i < n->count; i++)
        if (n->port[i] == port && strcmp(n->host[i], host) == 0)
            return i;
    if (n->count == MAX_NODES || strlen(host) >= sizeof n->host[0])
        return -1;
    snprintf(n->host[n->count], sizeof n->host[0], "%s", host);
    n->port[n->count] = port;
    return n->count++;
}

/* The map between two guards that no slot range may reach. */
static struct {
    int16_t before[1024];
    int16_t map[RC_SLOTS];
    int16_t after[1024];
} slots;

static void check_reply(const redisReply *r)
{
    int16_t *map = slots.map;
    memset(slots.before, 0x5a, sizeof slots.before);
    memset(slots.after, 0x5a, sizeof slots.after);
    nodes n = {.count = 0};
    int missing = rc_slot_map(r, "asked.example", node_of, &n, map);
    for (size_t i = 0; i < 1024; i++)
        if (slots.before[i] != 0x5a5a || slots.after[i] != 0x5a5a)
            abort(); /* a range outside 0..16383 was written */
    if (r->type != REDIS_REPLY_ARRAY ? missing != -1 : missing < 0 || missing > RC_SLOTS)
        abort();
    if (missing >= 0) {
        int empty = 0;
        for (int s = 0; s < RC_SLOTS; s++) {
            if (map[s] < -1 || map[s] >= n.count)
                abort();
            empty += map[s] < 0;
        }
        if (empty != missing)
            abort();
    }
    static const char *const words[] = {"MOVED",       "ASK",     "TRYAGAIN",
                                        "CLUSTERDOWN", "LOADING", "MASTERDOWN",
                                        "READONLY",    "NOAUTH",  "WRONGPASS"};
    for (size_t w = 0; w < sizeof words / sizeof *words; w++)
        if (rc_error_is(r, words[w]) && r->type != REDIS_REPLY_ERROR)
            abort();
    if (r->type == REDIS_REPLY_ERROR && r->str) {
        char host[300];
        int port = 0;
        if (rc_redirect_target(r->str, r->len, host, sizeof host, &port) == 0 &&
            (!host[0] || port < 1 || port > 65535))
            abort();
    }
}

/* hiredis 0.14 (Debian 12's) allocates whatever length an array header declares, before its
 * elements arrive (hiredis 1.0 bounds it: maxelements). Inputs that may declare more than 65,536
 * elements are skipped: that allocation is hiredis's, not the client's reading. Any '*' counts,
 * not only one at a line's start: hiredis skips the two bytes after a bulk string without
 * looking at them, so "$1\r\nx\r*70008192\r\n" declares one (a CI run's fuzzer found it). */
static int declares_huge_array(const uint8_t *data, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        if (data[i] != '*')
            continue;
        uint64_t n = 0;
        for (size_t j = i + 1; j < size && data[j] >= '0' && data[j] <= '9' && n <= 65536; j++)
            n = n * 10 + (uint64_t)(data[j] - '0');
        if (n > 65536)
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (declares_huge_array(data, size))
        return 0;
    redisReader *reader = redisReaderCreate();
    if (!reader)
        return 0;
    if (redisReaderFeed(reader, (const char *)data, size) == REDIS_OK) {
        for (int i = 0; i < 16; i++) { /* bounded: a few replies an input */
            void *reply = NULL;
            if (redisReaderGetReply(reader, &reply) != REDIS_OK || !reply)
                break;
            check_reply(reply);
            freeReplyObject(reply);
        }
    }
    redisReaderFree(reader);
    return 0;
}
