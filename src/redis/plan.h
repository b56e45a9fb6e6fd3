/*
 * The fleet filter's plan as its meta key stores it: one line of text,
 *   simdbloom-redis 1 layout=L bytes=B shard_blocks=S planned_items=N planned_fpp=P
 * written by the client that created the filter and read by every other. Anyone who can write the
 * keyspace can write it, so every field is checked against the others before any is used.
 */
#ifndef SIMDBLOOM_REDIS_PLAN_H
#define SIMDBLOOM_REDIS_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "simdbloom.h"

/* Version 2 (written now): every shard string ends in a marker (8 bytes after its blocks) that
 * says the shard is there and whole. Version 1 (still read): no markers, so a shard that was
 * evicted or overwritten cannot be told from an empty one. Version 3: a windowed filter (the
 * plan then ends in " periods=G period=P"), whose generations are shard strings of their own;
 * clients that know versions 1 and 2 only refuse it. */
#define RP_FORMAT_VERSION 2
#define RP_WINDOWED_VERSION 3
#define RP_FIRST_VERSION 1

typedef struct rp_plan {
    sbloom_layout layout;   /* a bit layout: parquet, block512-k8 or block512-k16 */
    uint64_t bytes;         /* the whole filter */
    uint64_t shard_blocks;  /* blocks a shard (a Redis string) holds; the last may hold fewer */
    uint64_t planned_items; /* 0: no plan */
    double planned_fpp;     /* NAN without a plan */
    int version;            /* RP_FIRST_VERSION .. RP_WINDOWED_VERSION */
    /* A windowed filter (version 3): the window is `periods` periods of `period` seconds, each
     * generation a filter of `bytes` planned for ceil(planned_items / periods) keys at
     * planned_fpp / (periods + 1); 0 and 0 otherwise. */
    uint32_t periods;
    uint64_t period;
} rp_plan;

typedef enum rp_status { RP_OK = 0, RP_NOT_A_PLAN, RP_VERSION, RP_DAMAGED } rp_status;

/* 1 for the layouts a fleet filter can have (bits: the counting and scalable ones cannot). */
int rp_bit_layout(sbloom_layout layout);
/* The plan as text, for the meta key. */
void rp_format(const rp_plan *plan, char *buf, size_t cap);
/* Parses and checks a stored plan. RP_OK fills *out; otherwise why (cap bytes) says what is
 * wrong: the text for RP_NOT_A_PLAN, the version for RP_VERSION, the field for RP_DAMAGED. */
rp_status rp_parse(const char *text, rp_plan *out, char *why, size_t cap);
/* The shard size a new plan gets: shards of at most 64 MiB, and at least 64 of them where the
 * filter has the blocks, so that even a small filter spreads over the masters. */
uint64_t rp_shard_blocks_for(sbloom_layout layout, uint64_t bytes);
/* The number of shards of a checked plan (at least 1). */
uint64_t rp_shards(const rp_plan *plan);

#endif
