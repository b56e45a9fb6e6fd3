/*
 * What the cluster client reads out of Redis's replies, as functions of the reply alone, so that
 * a fuzz target can hand them any reply: the slot map of a CLUSTER SLOTS reply, and the node a
 * MOVED or ASK error names. A server, or anything that answers in its place, can send anything.
 */
#ifndef SIMDBLOOM_REDIS_REPLIES_H
#define SIMDBLOOM_REDIS_REPLIES_H

#include <hiredis/hiredis.h>
#include <stdint.h>

#include "cluster.h"

/* The index of the node (host, port) in the caller's table, added if new; -1 if it cannot be. */
typedef int (*rc_node_of)(void *ctx, const char *host, int port);

/* 1 if r is an error reply whose text starts with this word (followed by a space or the end). */
int rc_error_is(const redisReply *r, const char *word);
/* Fills map from a CLUSTER SLOTS reply: each slot its master's index from node_of, -1 where the
 * reply names none. An entry that is not a well-formed range (slots outside 0..16383, from after
 * to, a port outside 1..65535, a host "?" or of no length when asked_host is NULL) is skipped.
 * Returns the number of slots without a master, or -1 if r is not an array. */
int rc_slot_map(const redisReply *r, const char *asked_host, rc_node_of node_of, void *ctx,
                int16_t map[RC_SLOTS]);
/* "MOVED 3999 host:port" or "ASK 3999 host:port": the host (cap bytes) and port it names. 0, or
 * -1 if the text is not of that form. */
int rc_redirect_target(const char *text, size_t len, char *host, size_t cap, int *port);

#endif
