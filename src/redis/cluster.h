/*
 * The Redis Cluster client of simdbloom-redis, over hiredis (which has no cluster support):
 * seed nodes, the slot map from CLUSTER SLOTS, one connection per master, and rc_run, which
 * sends a set of commands pipelined to every master at once and follows MOVED and ASK,
 * retries TRYAGAIN, CLUSTERDOWN and lost connections with bounded back-off, and reports
 * anything else as an error with a one-line message.
 */
#ifndef SIMDBLOOM_REDIS_CLUSTER_H
#define SIMDBLOOM_REDIS_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#define RC_SLOTS 16384

typedef struct rc_cluster rc_cluster;

/* One command. argv/argvlen are the caller's and stay valid until rc_run returns; rc_run sets
 * reply (a hiredis redisReply *, freed by rc_cmds_release) and uncertain: 1 if an earlier
 * attempt was sent on a connection that broke before its reply came, so the command may have
 * run twice. */
typedef struct rc_cmd {
    int argc;
    const char **argv;
    const size_t *argvlen;
    uint16_t slot;
    void *reply;
    int uncertain;
    int ask_node; /* internal: the node an ASK redirect named, or -1 */
    int sent_to;  /* internal: the node whose connection this round sent it on */
} rc_cmd;

/* Connects to the first seed that answers and reads the topology. nodes: "host:port,...";
 * password may be NULL; timeout and retry in seconds. Returns 0 or a SBLOOM_REDIS_E_* code
 * with the message in err. */
int rc_connect(rc_cluster **out, const char *nodes, const char *password, double timeout,
               double retry, char *err, size_t errcap);
void rc_close(rc_cluster *c);
/* Runs the commands (any order between slots, in order within a connection); 0 when every
 * command has a reply that is not an error, else a SBLOOM_REDIS_E_* code (rc_message says
 * why). Replies are set even on failure for the commands that got one. */
int rc_run(rc_cluster *c, rc_cmd *cmds, size_t n);
/* Frees the replies of the commands and clears them. */
void rc_cmds_release(rc_cmd *cmds, size_t n);
const char *rc_message(const rc_cluster *c);
/* Sets the message (printf style) and returns code. */
int rc_fail(rc_cluster *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The slot of a key: CRC16 (XMODEM) of its hash tag (the part between the first '{' and the
 * next '}', when not empty) or of the whole key, modulo 16384. */
uint16_t rc_slot(const char *key, size_t len);
/* Distinct masters serving these slots. */
uint32_t rc_masters_of(const rc_cluster *c, const uint16_t *slots, size_t n);
/* Writes v in decimal and a NUL at out (21 bytes at most); returns the digits written. */
size_t rc_u64_text(char *out, uint64_t v);
/* Pipelined rounds sent so far. */
uint64_t rc_round_trips(const rc_cluster *c);

#endif
