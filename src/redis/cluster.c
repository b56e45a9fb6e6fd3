/* The Redis Cluster client of simdbloom-redis: see cluster.h. */
#include "cluster.h"
#include "replies.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "simdbloom_redis.h"

#define RC_MAX_NODES 256
#define RC_BACKOFF_FIRST 0.01 /* seconds */
#define RC_BACKOFF_MAX 1.0

typedef struct rc_node {
    char host[256];
    int port;
    redisContext *ctx;
} rc_node;

struct rc_cluster {
    char *resp; /* a command in the protocol's form, built by append_command */
    size_t resp_cap;
    rc_node nodes[RC_MAX_NODES];
    int nnodes;
    int16_t slot_node[RC_SLOTS]; /* index in nodes, -1 where no master is known */
    int standalone;              /* the server has no cluster support: every slot is its own */
    char *password;
    double timeout, retry;
    uint64_t rounds;
    char message[512];
    int timed_out; /* the last failure: a server that did not answer within the timeout */
};

int rc_fail(rc_cluster *c, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->message, sizeof c->message, fmt, ap);
    va_end(ap);
    c->timed_out = 0;
    return code;
}

/* A connection's failure that is a timeout: hiredis reports the read or write that waited the
 * whole timeout as an I/O error with EAGAIN's text. */
static int timed_out(const redisContext *ctx)
{
    return ctx && ctx->err == REDIS_ERR_IO && strcmp(ctx->errstr, strerror(EAGAIN)) == 0;
}

/* The failure of node i's connection, said as a timeout when it is one (and remembered). */
static int connection_failed(rc_cluster *c, int i, const char *doing)
{
    const rc_node *n = &c->nodes[i];
    if (timed_out(n->ctx)) {
        rc_fail(c, SBLOOM_REDIS_E_CONNECT,
                "%s:%d did not answer within %.3g s %s (stopped, or "
                "overloaded)",
                n->host, n->port, c->timeout, doing);
        c->timed_out = 1;
        return SBLOOM_REDIS_E_CONNECT;
    }
    return rc_fail(c, SBLOOM_REDIS_E_CONNECT, "%s:%d: %s %s", n->host, n->port,
                   n->ctx ? n->ctx->errstr : "not connected", doing);
}

const char *rc_message(const rc_cluster *c)
{
    return c->message;
}

uint64_t rc_round_trips(const rc_cluster *c)
{
    return c->rounds;
}

static double monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_seconds(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* CRC16-CCITT as Redis Cluster uses it (XMODEM: polynomial 0x1021, initial 0, not reflected;
 * "123456789" gives 0x31C3), bit by bit: slots are computed once per shard, not per key. */
static uint16_t crc16_xmodem(const char *p, size_t len)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)((uint8_t)p[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (uint16_t)(crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    return crc;
}

uint16_t rc_slot(const char *key, size_t len)
{
    const char *open = memchr(key, '{', len);
    if (open) {
        size_t from = (size_t)(open - key) + 1;
        const char *close = memchr(key + from, '}', len - from);
        if (close && close != key + from)
            return crc16_xmodem(key + from, (size_t)(close - (key + from))) % RC_SLOTS;
    }
    return crc16_xmodem(key, len) % RC_SLOTS;
}

static struct timeval to_timeval(double s)
{
    struct timeval tv = {(time_t)s, (suseconds_t)((s - (double)(time_t)s) * 1e6)};
    return tv;
}

static int find_node(rc_cluster *c, const char *host, int port)
{
    for (int i = 0; i < c->nnodes; i++)
        if (c->nodes[i].port == port && strcmp(c->nodes[i].host, host) == 0)
            return i;
    return -1;
}

static int add_node(rc_cluster *c, const char *host, int port)
{
    int i = find_node(c, host, port);
    if (i >= 0)
        return i;
    if (c->nnodes == RC_MAX_NODES || strlen(host) >= sizeof c->nodes[0].host)
        return -1;
    rc_node *n = &c->nodes[c->nnodes];
    snprintf(n->host, sizeof n->host, "%s", host);
    n->port = port;
    n->ctx = NULL;
    return c->nnodes++;
}

/* add_node for rc_slot_map. */
static int node_of(void *c, const char *host, int port)
{
    return add_node(c, host, port);
}

static void drop_connection(rc_cluster *c, int i)
{
    if (c->nodes[i].ctx)
        redisFree(c->nodes[i].ctx);
    c->nodes[i].ctx = NULL;
}

/* Connects to node i (and authenticates) if it has no connection. 0, or an error code with the
 * message set: SBLOOM_REDIS_E_CONNECT (worth retrying), _AUTH, _PROTOCOL. */
static int ensure_connected(rc_cluster *c, int i)
{
    rc_node *n = &c->nodes[i];
    if (n->ctx)
        return 0;
    redisContext *ctx = redisConnectWithTimeout(n->host, n->port, to_timeval(c->timeout));
    if (!ctx)
        return rc_fail(c, SBLOOM_REDIS_E_CONNECT, "cannot connect to %s:%d: out of memory", n->host,
                       n->port);
    if (ctx->err) {
        rc_fail(c, SBLOOM_REDIS_E_CONNECT, "cannot connect to %s:%d: %s", n->host, n->port,
                ctx->errstr);
        redisFree(ctx);
        return SBLOOM_REDIS_E_CONNECT;
    }
    redisSetTimeout(ctx, to_timeval(c->timeout));
    redisReply *r =
        c->password ? redisCommand(ctx, "AUTH %s", c->password) : redisCommand(ctx, "PING");
    int rc = 0;
    if (!r) {
        n->ctx = ctx; /* (for the message) */
        rc = ctx->err == REDIS_ERR_PROTOCOL
                 ? rc_fail(c, SBLOOM_REDIS_E_PROTOCOL,
                           "%s:%d does not speak the Redis protocol (%s)", n->host, n->port,
                           ctx->errstr)
             : timed_out(ctx) ? connection_failed(c, i, "at the greeting")
                              : rc_fail(c, SBLOOM_REDIS_E_CONNECT,
                                        "%s:%d failed at the greeting (%s): is it a Redis server?",
                                        n->host, n->port, ctx->errstr);
        n->ctx = NULL;
    } else if (rc_error_is(r, "NOAUTH") || rc_error_is(r, "WRONGPASS") ||
               (r->type == REDIS_REPLY_ERROR && c->password)) {
        rc = rc_fail(c, SBLOOM_REDIS_E_AUTH, "%s:%d refused the login: %s%s", n->host, n->port,
                     r->str, c->password ? "" : " (give the password: --pass, or REDISCLI_AUTH)");
    } else if (r->type == REDIS_REPLY_ERROR && rc_error_is(r, "LOADING")) {
        rc = rc_fail(c, SBLOOM_REDIS_E_CONNECT, "%s:%d is loading its data", n->host, n->port);
    } else if (r->type == REDIS_REPLY_ERROR) {
        rc = rc_fail(c, SBLOOM_REDIS_E_PROTOCOL, "%s:%d answered %s", n->host, n->port, r->str);
    } else if (r->type != REDIS_REPLY_STATUS) {
        rc = rc_fail(c, SBLOOM_REDIS_E_PROTOCOL,
                     "%s:%d does not speak the Redis protocol (odd reply to %s)", n->host, n->port,
                     c->password ? "AUTH" : "PING");
    }
    if (r)
        freeReplyObject(r);
    if (rc) {
        redisFree(ctx);
        return rc;
    }
    n->ctx = ctx;
    return 0;
}

/* The slot map from node i: CLUSTER SLOTS, or every slot to node i when it has no cluster
 * support. 0 when every slot has a master. */
static int topology_from(rc_cluster *c, int i)
{
    int rc = ensure_connected(c, i);
    if (rc)
        return rc;
    redisReply *r = redisCommand(c->nodes[i].ctx, "CLUSTER SLOTS");
    if (!r) {
        rc = connection_failed(c, i, "(asked for the cluster's slots)");
        drop_connection(c, i);
        return rc;
    }
    if (r->type == REDIS_REPLY_ERROR && strstr(r->str, "cluster support disabled")) {
        c->standalone = 1;
        for (int s = 0; s < RC_SLOTS; s++)
            c->slot_node[s] = (int16_t)i;
        freeReplyObject(r);
        return 0;
    }
    if (rc_error_is(r, "LOADING") || rc_error_is(r, "CLUSTERDOWN") || rc_error_is(r, "TRYAGAIN") ||
        rc_error_is(r, "MASTERDOWN")) { /* a node starting or failing over: asked again later */
        rc = rc_fail(c, SBLOOM_REDIS_E_CLUSTER, "%s:%d: CLUSTER SLOTS answered %s",
                     c->nodes[i].host, c->nodes[i].port, r->str);
        freeReplyObject(r);
        return rc;
    }
    if (r->type != REDIS_REPLY_ARRAY) {
        rc = rc_fail(c, SBLOOM_REDIS_E_PROTOCOL, "%s:%d: CLUSTER SLOTS answered %s",
                     c->nodes[i].host, c->nodes[i].port,
                     r->type == REDIS_REPLY_ERROR ? r->str : "an unexpected type");
        freeReplyObject(r);
        return rc;
    }
    int16_t map[RC_SLOTS];
    int missing = rc_slot_map(r, c->nodes[i].host, node_of, c, map);
    freeReplyObject(r);
    memcpy(c->slot_node, map, sizeof map);
    c->standalone = 0;
    if (missing)
        return rc_fail(c, SBLOOM_REDIS_E_CLUSTER, "%d of 16384 slots have no master (%s:%d)",
                       missing, c->nodes[i].host, c->nodes[i].port);
    return 0;
}

/* The topology from the first node that gives a complete one (known nodes first, seeds among
 * them). Authentication and protocol errors end the search at once. */
static int refresh_topology(rc_cluster *c)
{
    int rc = SBLOOM_REDIS_E_CONNECT;
    for (int i = 0; i < c->nnodes; i++) {
        rc = topology_from(c, i);
        if (rc == 0 || rc == SBLOOM_REDIS_E_AUTH || rc == SBLOOM_REDIS_E_PROTOCOL)
            return rc;
    }
    return rc;
}

int rc_connect(rc_cluster **out, const char *nodes, const char *password, double timeout,
               double retry, char *err, size_t errcap)
{
    *out = NULL;
    rc_cluster *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errcap, "out of memory");
        return SBLOOM_E_NOMEM;
    }
    c->timeout = timeout;
    c->retry = retry;
    if (password && !(c->password = strdup(password))) {
        free(c);
        snprintf(err, errcap, "out of memory");
        return SBLOOM_E_NOMEM;
    }
    /* host:port,host:port (a host may be an IPv6 address: the port follows the last colon) */
    int rc = 0;
    const char *p = nodes;
    while (p && *p && rc == 0) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char item[300];
        if (len == 0 || len >= sizeof item) {
            rc = rc_fail(c, SBLOOM_E_INVALID, "bad node '%.*s': give host:port", (int)len, p);
            break;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        char *colon = strrchr(item, ':'), *tail;
        long port = colon ? strtol(colon + 1, &tail, 10) : 0;
        if (!colon || colon == item || !colon[1] || *tail || port < 1 || port > 65535) {
            rc = rc_fail(c, SBLOOM_E_INVALID, "bad node '%s': give host:port", item);
            break;
        }
        *colon = '\0';
        if (item[0] == '[' && colon[-1] == ']') { /* [::1]:6379 */
            colon[-1] = '\0';
            memmove(item, item + 1, strlen(item));
        }
        if (add_node(c, item, (int)port) < 0)
            rc = rc_fail(c, SBLOOM_E_INVALID, "too many nodes");
        p = end ? end + 1 : NULL;
    }
    if (rc == 0 && c->nnodes == 0)
        rc = rc_fail(c, SBLOOM_E_INVALID, "no node given: give host:port[,host:port...]");
    if (rc == 0) {
        /* A cluster still forming (or failing over) is waited for, up to the retry time. */
        double deadline = monotonic_seconds() + retry, backoff = RC_BACKOFF_FIRST;
        while ((rc = refresh_topology(c)) == SBLOOM_REDIS_E_CLUSTER &&
               monotonic_seconds() < deadline) {
            sleep_seconds(backoff);
            backoff = backoff * 2 < RC_BACKOFF_MAX ? backoff * 2 : RC_BACKOFF_MAX;
        }
    }
    if (rc) {
        snprintf(err, errcap, "%s", c->message);
        rc_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

void rc_close(rc_cluster *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->nnodes; i++)
        drop_connection(c, i);
    free(c->password);
    free(c->resp);
    free(c);
}

void rc_cmds_release(rc_cmd *cmds, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (cmds[i].reply)
            freeReplyObject(cmds[i].reply);
        cmds[i].reply = NULL;
    }
}

uint32_t rc_masters_of(const rc_cluster *c, const uint16_t *slots, size_t n)
{
    uint8_t seen[RC_MAX_NODES] = {0};
    uint32_t count = 0;
    for (size_t i = 0; i < n; i++) {
        int node = c->slot_node[slots[i]];
        if (node >= 0 && !seen[node]) {
            seen[node] = 1;
            count++;
        }
    }
    return count;
}

size_t rc_u64_text(char *out, uint64_t v)
{
    char digits[20];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = digits[n - 1 - i];
    out[n] = '\0';
    return n;
}

/* Appends a command to the connection's output in the protocol's form ("*ARGC\r\n" then
 * "$LEN\r\nARG\r\n" per argument), written here in one pass: hiredis' own formatting
 * (redisAppendCommandArgv, a printf-style append per argument) took about a fifth of the client's
 * time in pipelines of BITFIELD commands with thousands of arguments. */
static int append_command(rc_cluster *c, redisContext *ctx, const rc_cmd *cmd)
{
    size_t need = 32;
    for (int i = 0; i < cmd->argc; i++)
        need += cmd->argvlen[i] + 32;
    if (need > c->resp_cap) {
        char *grown = realloc(c->resp, need);
        if (!grown)
            return -1;
        c->resp = grown;
        c->resp_cap = need;
    }
    char *p = c->resp;
    *p++ = '*';
    p += rc_u64_text(p, (uint64_t)cmd->argc);
    *p++ = '\r', *p++ = '\n';
    for (int i = 0; i < cmd->argc; i++) {
        *p++ = '$';
        p += rc_u64_text(p, cmd->argvlen[i]);
        *p++ = '\r', *p++ = '\n';
        memcpy(p, cmd->argv[i], cmd->argvlen[i]);
        p += cmd->argvlen[i];
        *p++ = '\r', *p++ = '\n';
    }
    return redisAppendFormattedCommand(ctx, c->resp, (size_t)(p - c->resp)) == REDIS_OK ? 0 : -1;
}

/* What to do with a command after one attempt. */
enum { RC_DONE, RC_RETRY_NOW, RC_RETRY_LATER, RC_FATAL };

/* "MOVED 3999 127.0.0.1:6381" / "ASK 3999 127.0.0.1:6381": the node it names, added if new. */
static int redirect_node(rc_cluster *c, const redisReply *r)
{
    char host[300];
    int port;
    if (rc_redirect_target(r->str, r->len, host, sizeof host, &port) < 0)
        return -1;
    return add_node(c, host, port);
}

/* Classifies a reply (the command was executed, or refused before it ran). */
static int judge_reply(rc_cluster *c, rc_cmd *cmd, redisReply *r, int node, int *refresh,
                       int *fatal)
{
    if (r->type != REDIS_REPLY_ERROR) {
        cmd->reply = r;
        return RC_DONE;
    }
    int verdict = RC_FATAL;
    if (rc_error_is(r, "MOVED")) {
        int target = redirect_node(c, r);
        if (target >= 0)
            c->slot_node[cmd->slot] = (int16_t)target;
        *refresh = 1; /* a slot moved: others may have too */
        verdict = RC_RETRY_NOW;
    } else if (rc_error_is(r, "ASK")) {
        cmd->ask_node = redirect_node(c, r);
        verdict = cmd->ask_node >= 0 ? RC_RETRY_NOW : RC_FATAL;
    } else if (rc_error_is(r, "TRYAGAIN") || rc_error_is(r, "CLUSTERDOWN") ||
               rc_error_is(r, "LOADING") || rc_error_is(r, "MASTERDOWN") ||
               rc_error_is(r, "READONLY")) {
        /* READONLY: a master we knew became a replica (a failover): learn the new map. */
        *refresh = 1;
        rc_fail(c, SBLOOM_REDIS_E_CLUSTER, "%s:%d: %s", c->nodes[node].host, c->nodes[node].port,
                r->str);
        verdict = RC_RETRY_LATER;
    } else if (rc_error_is(r, "NOAUTH") || rc_error_is(r, "WRONGPASS")) {
        *fatal = rc_fail(c, SBLOOM_REDIS_E_AUTH, "%s:%d refused the login: %s", c->nodes[node].host,
                         c->nodes[node].port, r->str);
    } else {
        *fatal = rc_fail(c, SBLOOM_REDIS_E_REPLY, "%s:%d answered %s: %s", c->nodes[node].host,
                         c->nodes[node].port, cmd->argv[0], r->str);
    }
    if (verdict != RC_FATAL) {
        freeReplyObject(r);
        return verdict;
    }
    cmd->reply = r; /* kept for the caller; the run fails */
    return RC_FATAL;
}

int rc_run(rc_cluster *c, rc_cmd *cmds, size_t n)
{
    size_t *pending = malloc((n ? n : 1) * sizeof *pending);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!pending || !order) {
        free(pending);
        free(order);
        return rc_fail(c, SBLOOM_E_NOMEM, "out of memory");
    }
    size_t npending = 0;
    for (size_t i = 0; i < n; i++) {
        cmds[i].reply = NULL;
        cmds[i].uncertain = 0;
        cmds[i].ask_node = -1;
        pending[npending++] = i;
    }
    double deadline = monotonic_seconds() + c->retry, backoff = RC_BACKOFF_FIRST;
    int rc = 0;
    char first_message[sizeof c->message] = "";
    while (npending > 0 && rc == 0) {
        int refresh = 0, later = 0;
        size_t nretry = 0;
        c->rounds++;
        /* Group by node: commands of one node, in their order, appended to its connection. */
        size_t norder = 0;
        for (int node = 0; node < c->nnodes; node++) {
            size_t first = norder;
            for (size_t j = 0; j < npending; j++) {
                rc_cmd *cmd = &cmds[pending[j]];
                int target = cmd->ask_node >= 0 ? cmd->ask_node : c->slot_node[cmd->slot];
                if (target == node)
                    order[norder++] = pending[j];
            }
            if (norder == first)
                continue;
            int connected = ensure_connected(c, node);
            if (connected == SBLOOM_REDIS_E_AUTH || connected == SBLOOM_REDIS_E_PROTOCOL) {
                rc = connected;
                break;
            }
            if (connected != 0) { /* unreachable (a master that died): retry after a refresh */
                for (size_t j = first; j < norder; j++)
                    pending[nretry++] = order[j];
                norder = first;
                refresh = later = 1;
                continue;
            }
            for (size_t j = first; j < norder; j++) {
                rc_cmd *cmd = &cmds[order[j]];
                cmd->sent_to = node;
                if (cmd->ask_node >= 0)
                    redisAppendCommand(c->nodes[node].ctx, "ASKING");
                if (append_command(c, c->nodes[node].ctx, cmd) != 0) {
                    rc = rc_fail(c, SBLOOM_E_NOMEM, "out of memory");
                    break;
                }
            }
        }
        /* Every node's pipeline goes out before any reply is read: the masters work at once. */
        for (size_t w = 0; w < norder && rc == 0;) {
            int node = cmds[order[w]].sent_to, done = 0;
            redisContext *ctx = c->nodes[node].ctx;
            while (ctx && !done)
                if (redisBufferWrite(ctx, &done) != REDIS_OK)
                    break;
            while (w < norder && cmds[order[w]].sent_to == node) /* to the next node's */
                w++;
        }
        /* Replies, node by node, in the order sent, each from the connection its command went
         * out on (a MOVED read here changes slot_node for the commands after it in the same
         * slot, whose replies still wait on the old node's connection). A command refused with
         * an error that no retry cures (WRONGTYPE, OOM, ...) ends the run, but the replies
         * already sent for are still read, so that the caller knows which commands ran. */
        int written = rc == 0, broken = 0;
        size_t j = 0;
        for (; written && !broken && j < norder; j++) {
            rc_cmd *cmd = &cmds[order[j]];
            int node = cmd->sent_to;
            int asked = cmd->ask_node >= 0; /* (set only by this command's own earlier reply) */
            redisContext *ctx = c->nodes[node].ctx;
            redisReply *r = NULL;
            if (ctx && asked) { /* the ASKING reply, then the command's */
                if (redisGetReply(ctx, (void **)&r) == REDIS_OK && r)
                    freeReplyObject(r);
                r = NULL;
                cmd->ask_node = -1;
            }
            if (!ctx || redisGetReply(ctx, (void **)&r) != REDIS_OK || !r) {
                /* The connection broke: this command and the rest sent on it may have run. */
                if (ctx && ctx->err == REDIS_ERR_PROTOCOL) {
                    rc = rc_fail(c, SBLOOM_REDIS_E_PROTOCOL, "%s:%d: %s", c->nodes[node].host,
                                 c->nodes[node].port, ctx->errstr);
                    cmd->uncertain = 1;
                    broken = 1;
                    continue;
                }
                if (timed_out(ctx))
                    connection_failed(c, node, "to a command");
                else
                    rc_fail(c, SBLOOM_REDIS_E_CONNECT, "lost the connection to %s:%d: %s",
                            c->nodes[node].host, c->nodes[node].port,
                            ctx ? ctx->errstr : "not connected");
                drop_connection(c, node);
                cmd->uncertain = 1;
                pending[nretry++] = order[j];
                refresh = later = 1;
                continue;
            }
            int fatal = 0;
            int verdict = judge_reply(c, cmd, r, node, &refresh, &fatal);
            if (fatal && rc == 0) { /* the first refusal is the one reported */
                rc = fatal;
                snprintf(first_message, sizeof first_message, "%s", c->message);
            }
            if (verdict != RC_FATAL && verdict != RC_DONE)
                pending[nretry++] = order[j];
            later |= verdict == RC_RETRY_LATER;
        }
        /* Sent, but their replies were not read (the connection is dropped below): they may
         * have run. */
        for (; written && j < norder; j++)
            cmds[order[j]].uncertain = 1;
        if (first_message[0])
            snprintf(c->message, sizeof c->message, "%s", first_message);
        if (rc)
            break;
        npending = nretry;
        if (npending == 0)
            break;
        if (monotonic_seconds() >= deadline) {
            char last[sizeof c->message];
            snprintf(last, sizeof last, "%s", c->message);
            int timeout = c->timed_out;
            rc = rc_fail(c,
                         timeout                   ? SBLOOM_REDIS_E_TIMEOUT
                         : strstr(last, "connect") ? SBLOOM_REDIS_E_CONNECT
                                                   : SBLOOM_REDIS_E_CLUSTER,
                         "gave up after %.0f s of retries: %s", c->retry, last);
            break;
        }
        if (later) {
            sleep_seconds(backoff);
            backoff = backoff * 2 < RC_BACKOFF_MAX ? backoff * 2 : RC_BACKOFF_MAX;
        }
        if (refresh) {
            int topo = refresh_topology(c);
            if (topo == SBLOOM_REDIS_E_AUTH || topo == SBLOOM_REDIS_E_PROTOCOL)
                rc = topo;
        }
    }
    /* Connections left with replies unread (a run that failed part way) are out of step. */
    if (rc)
        for (int node = 0; node < c->nnodes; node++)
            drop_connection(c, node);
    free(pending);
    free(order);
    return rc;
}
