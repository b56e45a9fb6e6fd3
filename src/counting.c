/*
 * The counting filter (seed 004's answer to deletion): a filter of layout counting512 behind its
 * own public type. Creation, the single-key and batch operations, introspection, and files; the
 * kernels are in simd/ (the counting entries of each table), the batch drivers in batch.c and the
 * file format in format.c and file.c, all shared with the plain filter.
 *
 * Counts: add counts every key (a duplicate too: it takes two removes to take it out), remove
 * subtracts the keys it removed, so items = adds - successful removes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "internal.h"

static int wrap(sbloom_counting_t **out, sbloom_t *filter)
{
    sbloom_counting_t *c = malloc(sizeof *c);
    if (!c) {
        sbloom_free(filter);
        return SBLOOM_E_NOMEM;
    }
    c->filter = filter;
    *out = c;
    return SBLOOM_OK;
}

/* A new zeroed counting filter, or *out = NULL and the error. */
static int counting_new(sbloom_counting_t **out, uint64_t bytes, uint64_t n, double p)
{
    sbloom_t *f;
    int rc = sbloom_filter_new(&f, bytes, SBLOOM_LAYOUT_COUNTING512, n, p, 0);
    if (rc != SBLOOM_OK)
        return rc;
    return wrap(out, f);
}

int sbloom_counting_create(sbloom_counting_t **out, uint64_t n, double p)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    sbloom_plan plan;
    int rc = sbloom_counting_plan(n, p, &plan);
    if (rc != SBLOOM_OK)
        return rc;
    return counting_new(out, plan.bytes, n, p);
}

int sbloom_counting_create_bytes(sbloom_counting_t **out, uint64_t bytes)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    return counting_new(out, bytes, 0, NAN);
}

void sbloom_counting_free(sbloom_counting_t *filter)
{
    if (!filter)
        return;
    sbloom_free(filter->filter);
    free(filter);
}

int sbloom_counting_clear(sbloom_counting_t *filter)
{
    return filter ? sbloom_clear(filter->filter) : SBLOOM_E_NULL;
}

/* ---- Keys ---- */

uint64_t sbloom_counting_hash(const sbloom_counting_t *filter, const void *key, size_t len)
{
    if (!filter || (!key && len))
        return 0;
    return sbloom_hash_bytes(SBLOOM_LAYOUT_COUNTING512, key, len);
}

int64_t sbloom_counting_add_hashes(sbloom_counting_t *filter, const uint64_t *hashes, size_t n,
                                   uint8_t *was_absent)
{
    if (!filter || (!hashes && n))
        return SBLOOM_E_NULL;
    uint64_t absent =
        sbloom_batch_hashes(filter->filter, SBLOOM_OP_COUNT_ADD, hashes, n, was_absent);
    filter->filter->items += n;
    return (int64_t)absent;
}

int64_t sbloom_counting_remove_hashes(sbloom_counting_t *filter, const uint64_t *hashes, size_t n,
                                      uint8_t *removed)
{
    if (!filter || (!hashes && n))
        return SBLOOM_E_NULL;
    uint64_t gone = sbloom_batch_hashes(filter->filter, SBLOOM_OP_COUNT_REMOVE, hashes, n, removed);
    sbloom_t *f = filter->filter;
    f->items = f->items > gone ? f->items - gone : 0; /* a loaded file's count may be off */
    return (int64_t)gone;
}

int64_t sbloom_counting_contains_hashes(const sbloom_counting_t *filter, const uint64_t *hashes,
                                        size_t n, uint8_t *results)
{
    if (!filter || (!hashes && n))
        return SBLOOM_E_NULL;
    return (int64_t)sbloom_batch_hashes(filter->filter, SBLOOM_OP_COUNT_CONTAINS, hashes, n,
                                        results);
}

int64_t sbloom_counting_add_keys(sbloom_counting_t *filter, const void *const *keys,
                                 const size_t *lens, size_t n, uint8_t *was_absent)
{
    if (!filter || ((!keys || !lens) && n) || !sbloom_keys_valid(keys, lens, n))
        return SBLOOM_E_NULL;
    uint64_t absent =
        sbloom_batch_keys(filter->filter, SBLOOM_OP_COUNT_ADD, keys, lens, n, was_absent);
    filter->filter->items += n;
    return (int64_t)absent;
}

int64_t sbloom_counting_remove_keys(sbloom_counting_t *filter, const void *const *keys,
                                    const size_t *lens, size_t n, uint8_t *removed)
{
    if (!filter || ((!keys || !lens) && n) || !sbloom_keys_valid(keys, lens, n))
        return SBLOOM_E_NULL;
    uint64_t gone =
        sbloom_batch_keys(filter->filter, SBLOOM_OP_COUNT_REMOVE, keys, lens, n, removed);
    sbloom_t *f = filter->filter;
    f->items = f->items > gone ? f->items - gone : 0;
    return (int64_t)gone;
}

int64_t sbloom_counting_contains_keys(const sbloom_counting_t *filter, const void *const *keys,
                                      const size_t *lens, size_t n, uint8_t *results)
{
    if (!filter || ((!keys || !lens) && n) || !sbloom_keys_valid(keys, lens, n))
        return SBLOOM_E_NULL;
    return (int64_t)sbloom_batch_keys(filter->filter, SBLOOM_OP_COUNT_CONTAINS, keys, lens, n,
                                      results);
}

/* Single keys are batches of one. */

int sbloom_counting_add_hash(sbloom_counting_t *filter, uint64_t hash)
{
    return (int)sbloom_counting_add_hashes(filter, &hash, 1, NULL);
}

int sbloom_counting_remove_hash(sbloom_counting_t *filter, uint64_t hash)
{
    int64_t gone = sbloom_counting_remove_hashes(filter, &hash, 1, NULL);
    return gone == 0 ? SBLOOM_E_ABSENT : (int)gone;
}

int sbloom_counting_contains_hash(const sbloom_counting_t *filter, uint64_t hash)
{
    return (int)sbloom_counting_contains_hashes(filter, &hash, 1, NULL);
}

int sbloom_counting_add(sbloom_counting_t *filter, const void *key, size_t len)
{
    if (!filter || (!key && len))
        return SBLOOM_E_NULL;
    return sbloom_counting_add_hash(filter, sbloom_counting_hash(filter, key, len));
}

int sbloom_counting_remove(sbloom_counting_t *filter, const void *key, size_t len)
{
    if (!filter || (!key && len))
        return SBLOOM_E_NULL;
    return sbloom_counting_remove_hash(filter, sbloom_counting_hash(filter, key, len));
}

int sbloom_counting_contains(const sbloom_counting_t *filter, const void *key, size_t len)
{
    if (!filter || (!key && len))
        return SBLOOM_E_NULL;
    return sbloom_counting_contains_hash(filter, sbloom_counting_hash(filter, key, len));
}

/* ---- Introspection ---- */

uint64_t sbloom_counting_items(const sbloom_counting_t *filter)
{
    return filter ? filter->filter->items : 0;
}

uint64_t sbloom_counting_planned_items(const sbloom_counting_t *filter)
{
    return filter ? filter->filter->planned_items : 0;
}

double sbloom_counting_planned_fpp(const sbloom_counting_t *filter)
{
    return filter ? filter->filter->planned_fpp : NAN;
}

uint64_t sbloom_counting_bytes(const sbloom_counting_t *filter)
{
    return filter ? filter->filter->bytes : 0;
}

const char *sbloom_counting_isa(const sbloom_counting_t *filter)
{
    return filter ? filter->filter->isa : NULL;
}

const void *sbloom_counting_data(const sbloom_counting_t *filter)
{
    return filter ? filter->filter->blocks : NULL;
}

/* A nibble is 15 when all four of its bits are set: AND each bit position of the nibbles
 * together, keep bit 0 of each nibble, and count. */
uint64_t sbloom_counting_saturated(const sbloom_counting_t *filter)
{
    if (!filter)
        return 0;
    const uint64_t *words = filter->filter->blocks;
    uint64_t count = 0, nwords = filter->filter->bytes / 8;
    for (uint64_t i = 0; i < nwords; i++) {
        uint64_t w = words[i];
        uint64_t full = w & (w >> 1) & (w >> 2) & (w >> 3) & UINT64_C(0x1111111111111111);
        count += (uint64_t)__builtin_popcountll(full);
    }
    return count;
}

/* ---- Files ---- */

uint64_t sbloom_counting_serialized_size(const sbloom_counting_t *filter)
{
    return filter ? sbloom_serialized_size(filter->filter) : 0;
}

int sbloom_counting_serialize(const sbloom_counting_t *filter, void *buf, size_t cap)
{
    if (!filter || !buf)
        return SBLOOM_E_NULL;
    return sbloom_serialize_any(filter->filter, buf, cap);
}

int sbloom_counting_deserialize(sbloom_counting_t **out, const void *buf, size_t len)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    sbloom_t *f;
    int rc = sbloom_deserialize_kind(&f, buf, len, 1);
    return rc == SBLOOM_OK ? wrap(out, f) : rc;
}

int sbloom_counting_save(const sbloom_counting_t *filter, const char *path)
{
    if (!filter || !path)
        return SBLOOM_E_NULL;
    return sbloom_save_any(filter->filter, path);
}

int sbloom_counting_load(sbloom_counting_t **out, const char *path)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    sbloom_t *f;
    int rc = sbloom_load_kind(&f, path, 1);
    return rc == SBLOOM_OK ? wrap(out, f) : rc;
}
