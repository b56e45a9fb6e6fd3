/* The filter object: creation, single-key operations and introspection. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "format.h"
#include "hash.h"
#include "internal.h"

int sbloom_filter_new(sbloom_t **out, uint64_t bytes, sbloom_layout layout, uint64_t planned_n,
                      double planned_p, int no_blocks)
{
    if (layout == SBLOOM_LAYOUT_SCALABLE)
        return SBLOOM_E_LAYOUT; /* stages, not blocks: sbloom_create_scalable */
    int err = SBLOOM_OK;
    const sbloom_kernels *kernels = sbloom_kernels_active(&err);
    if (!kernels)
        return err;

    uint64_t block_bytes = sbloom_layout_block_bytes(layout);
    uint64_t nblocks = bytes / block_bytes + (bytes % block_bytes != 0);
    if (nblocks == 0)
        nblocks = 1;
    if (bytes > SBLOOM_MAX_BYTES || nblocks > SBLOOM_MAX_BYTES / block_bytes)
        return SBLOOM_E_TOO_LARGE;

    sbloom_t *f = sbloom_calloc(1, sizeof *f);
    if (!f)
        return SBLOOM_E_NOMEM;
    f->bytes = nblocks * block_bytes;
    f->blocks = no_blocks ? NULL : sbloom_blocks_alloc(f->bytes, &f->mapped);
    if (!f->blocks && !no_blocks) {
        free(f);
        return SBLOOM_E_NOMEM;
    }
    f->nblocks = nblocks;
    f->layout = layout;
    f->k = sbloom_layout_k(layout);
    f->block_bytes = (uint32_t)block_bytes;
    f->planned_items = planned_n;
    f->planned_fpp = planned_p;
    f->kern = &kernels->layout[layout - 1];
    f->isa = kernels->name;
    f->inline_ok = sbloom_kernels_inline_ok(kernels);
    sbloom_inline_refresh(f);
    *out = f;
    return SBLOOM_OK;
}

int sbloom_create(sbloom_t **out, uint64_t n, double p)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    sbloom_plan plan = sbloom_plan_init();
    int rc = sbloom_plan_for(n, p, &plan);
    if (rc != SBLOOM_OK)
        return rc;
    return sbloom_filter_new(out, plan.bytes, plan.layout, n, p, 0);
}

int sbloom_create_for_layout(sbloom_t **out, uint64_t n, double p, sbloom_layout layout)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (layout == SBLOOM_LAYOUT_SCALABLE)
        return sbloom_create_scalable(out, n, p);
    sbloom_plan plan = sbloom_plan_init();
    int rc = sbloom_plan_for_layout(n, p, layout, &plan);
    if (rc != SBLOOM_OK)
        return rc;
    return sbloom_filter_new(out, plan.bytes, plan.layout, n, p, 0);
}

int sbloom_create_bytes(sbloom_t **out, uint64_t bytes, sbloom_layout layout)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (!sbloom_layout_known(layout))
        return SBLOOM_E_LAYOUT;
    return sbloom_filter_new(out, bytes, layout, 0, NAN, 0);
}

int sbloom_clone(sbloom_t **out, const sbloom_t *filter)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (!filter)
        return SBLOOM_E_NULL;
    if (filter->stages)
        return sbloom_scalable_clone(out, filter);
    sbloom_t *copy = NULL;
    int rc = sbloom_filter_new(&copy, filter->bytes, filter->layout, filter->planned_items,
                               filter->planned_fpp, 0);
    if (rc != SBLOOM_OK)
        return rc;
    memcpy(copy->blocks, filter->blocks, (size_t)filter->bytes);
    copy->items = filter->items;
    *out = copy;
    return SBLOOM_OK;
}

void sbloom_free(sbloom_t *filter)
{
    if (!filter)
        return;
    if (filter->stages) {
        sbloom_scalable_free(filter);
        return;
    }
    if (filter->map_base) {
        /* a read-write mapping leaves a valid file behind; a concurrent one leaves that to
         * whoever knows no other process still adds (sbloom_sync) */
        if (!filter->items_delta)
            sbloom_sync(filter);
        sbloom_unmap_file(filter->map_base, filter->map_bytes);
    } else if (!filter->image) {
        sbloom_blocks_free(filter->blocks, filter->bytes, filter->mapped);
    }
    sbloom_concurrent_release(filter);
    free(filter);
}

int sbloom_clear(sbloom_t *filter)
{
    if (!filter)
        return SBLOOM_E_NULL;
    if (filter->readonly)
        return SBLOOM_E_READONLY;
    if (filter->stages) {
        sbloom_scalable_clear(filter);
        return SBLOOM_OK;
    }
    memset(filter->blocks, 0, (size_t)filter->bytes);
    filter->items = 0;
    return SBLOOM_OK;
}

/* ---- Single keys ---- */

_Static_assert(offsetof(struct sbloom, inline_add) == offsetof(sbloom_inline_view, inline_add),
               "the filter's first members are sbloom_inline_view's");

/* What the header's inline lookup reads for a NULL filter: layout 0, the library's call. */
const sbloom_inline_view sbloom_inline_null_view = {NULL, 0, 0, 0, 0, 0};

void sbloom_inline_refresh(sbloom_t *f)
{
    int bit_layout = f->layout == SBLOOM_LAYOUT_PARQUET || f->layout == SBLOOM_LAYOUT_BLOCK512_K8 ||
                     f->layout == SBLOOM_LAYOUT_BLOCK512_K16;
    int eligible = bit_layout && f->inline_ok && !f->stages && !f->concurrent;
    f->inline_contains = eligible ? (uint32_t)f->layout : 0;
    f->inline_add = eligible && !f->readonly ? (uint32_t)f->layout : 0;
}

uint64_t sbloom_hash(const sbloom_t *filter, const void *key, size_t len)
{
    if (!filter || (!key && len))
        return 0;
    return sbloom_hash_bytes(filter->layout, key, len);
}

/* Single keys call the layout's one-key kernel directly: no batch driver, no loop. A filter the
 * header's inline calls may take (inline_add, inline_contains: a plain bit layout) is tested
 * first and goes straight to its kernel, as they do; the other kinds follow, out of line (inlined,
 * they made the first path set up a stack frame). For string keys this took a URL's sbloom_add
 * from 9.6 to 8.1 ns (a loop of sbloom_add over the peers' 50,000-URL sample into a block512-k8
 * filter, best of 40 passes, this 2-core EPYC), against going through sbloom_add_hash's checks. */

/* Read-only, scalable, concurrent and counting filters, and tables forced off the inline path. */
__attribute__((noinline)) static int add_other(sbloom_t *filter, uint64_t hash)
{
    if (filter->readonly)
        return SBLOOM_E_READONLY;
    if (filter->stages) {
        uint8_t is_new;
        return (int)sbloom_scalable_run(filter, SBLOOM_OP_INSERT, &hash, 1, &is_new);
    }
    uint64_t fresh = filter->concurrent ? (uint64_t)sbloom_concurrent_add_one(filter, hash)
                                        : (uint64_t)filter->kern->insert_one(filter->blocks,
                                                                             filter->nblocks, hash);
    sbloom_count_inserted(filter, 1, fresh);
    return (int)fresh;
}

static inline int add_one(sbloom_t *filter, uint64_t hash)
{
    if (filter->inline_add) {
        int fresh = filter->kern->insert_one(filter->blocks, filter->nblocks, hash);
        filter->items += (uint64_t)fresh;
        return fresh;
    }
    return add_other(filter, hash);
}

__attribute__((noinline)) static int contains_other(const sbloom_t *filter, uint64_t hash)
{
    if (filter->stages)
        return (int)sbloom_scalable_run((sbloom_t *)filter, SBLOOM_OP_CONTAINS, &hash, 1, NULL);
    if (filter->concurrent)
        return (int)filter->kern->contains_shared(filter->blocks, filter->nblocks, &hash, 1, NULL);
    return filter->kern->contains_one(filter->blocks, filter->nblocks, hash);
}

static inline int contains_one(const sbloom_t *filter, uint64_t hash)
{
    if (filter->inline_contains)
        return filter->kern->contains_one(filter->blocks, filter->nblocks, hash);
    return contains_other(filter, hash);
}

int sbloom_add_hash(sbloom_t *filter, uint64_t hash)
{
    return filter ? add_one(filter, hash) : SBLOOM_E_NULL;
}

int sbloom_contains_hash(const sbloom_t *filter, uint64_t hash)
{
    return filter ? contains_one(filter, hash) : SBLOOM_E_NULL;
}

int sbloom_add(sbloom_t *filter, const void *key, size_t len)
{
    if (!filter || (!key && len))
        return SBLOOM_E_NULL;
    return add_one(filter, sbloom_hash_bytes(filter->layout, key, len));
}

int sbloom_contains(const sbloom_t *filter, const void *key, size_t len)
{
    if (!filter || (!key && len))
        return SBLOOM_E_NULL;
    return contains_one(filter, sbloom_hash_bytes(filter->layout, key, len));
}

uint64_t sbloom_hash_u64(const sbloom_t *filter, uint64_t value)
{
    return filter ? sbloom_hash_integer(filter->layout, value) : 0;
}

int sbloom_add_u64(sbloom_t *filter, uint64_t value)
{
    if (!filter)
        return SBLOOM_E_NULL;
    return sbloom_add_hash(filter, sbloom_hash_integer(filter->layout, value));
}

int sbloom_add_if_new_u64(sbloom_t *filter, uint64_t value)
{
    return sbloom_add_u64(filter, value);
}

int sbloom_contains_u64(const sbloom_t *filter, uint64_t value)
{
    if (!filter)
        return SBLOOM_E_NULL;
    return sbloom_contains_hash(filter, sbloom_hash_integer(filter->layout, value));
}

/* ---- Introspection ---- */

sbloom_layout sbloom_get_layout(const sbloom_t *filter)
{
    return filter ? filter->layout : (sbloom_layout)0;
}

uint64_t sbloom_bytes(const sbloom_t *filter)
{
    if (!filter)
        return 0;
    return filter->stages ? sbloom_scalable_bytes(filter) : filter->bytes;
}

const void *sbloom_data(const sbloom_t *filter)
{
    return filter ? filter->blocks : NULL;
}

uint32_t sbloom_k(const sbloom_t *filter)
{
    return filter ? filter->k : 0;
}

uint64_t sbloom_items(const sbloom_t *filter)
{
    if (!filter)
        return 0;
    if (filter->stages)
        return sbloom_scalable_items(filter);
    if (filter->items_delta) /* a concurrent mapping: the header's count and the live delta */
        return __atomic_load_n(sbloom_header_items_word(filter), __ATOMIC_RELAXED) +
               __atomic_load_n(filter->items_delta, __ATOMIC_RELAXED);
    return __atomic_load_n(&filter->items, __ATOMIC_RELAXED);
}

double sbloom_bits_per_key(const sbloom_t *filter, uint64_t n)
{
    if (!filter || n == 0)
        return NAN;
    return (double)sbloom_bytes(filter) * 8.0 / (double)n;
}

uint64_t sbloom_planned_items(const sbloom_t *filter)
{
    if (!filter)
        return 0;
    return filter->stages ? sbloom_scalable_capacity(filter) : filter->planned_items;
}

double sbloom_planned_fpp(const sbloom_t *filter)
{
    return filter ? filter->planned_fpp : NAN;
}

int sbloom_is_readonly(const sbloom_t *filter)
{
    return filter ? filter->readonly : 0;
}

const char *sbloom_filter_isa(const sbloom_t *filter)
{
    return filter ? filter->isa : NULL;
}

/* Non-zero slots of a word: its set bits, or (slot_bits 4) its non-zero 4-bit counters. */
static uint32_t used_slots(uint64_t word, uint32_t slot_bits)
{
    if (slot_bits == 4)
        word = (word | word >> 1 | word >> 2 | word >> 3) & UINT64_C(0x1111111111111111);
    return (uint32_t)__builtin_popcountll(word);
}

/* Word i of a block, read atomically (a concurrent filter may be written meanwhile). */
static uint64_t load_word(const uint8_t *block, uint32_t i, uint32_t word_bits)
{
    if (word_bits == 64)
        return __atomic_load_n((const uint64_t *)block + i, __ATOMIC_RELAXED);
    return __atomic_load_n((const uint32_t *)block + i, __ATOMIC_RELAXED);
}

/*
 * A random key probing a block is a false positive when every one of its k slots is in use; with
 * one slot per word, that happens with probability prod_i used(word_i) / slots. Averaging this
 * over the blocks gives the rate a random negative key meets now. The fill (used slots) also
 * inverts the expected fill 1 - exp(-n / (nblocks * slots)) into an estimate of distinct items.
 * Blocks 0, stride, 2 * stride, ... are read: every block, or an evenly spaced sample.
 */
static void scan_blocks(const sbloom_t *filter, uint64_t stride, sbloom_stats *out)
{
    uint32_t word_bits = sbloom_layout_word_bits(filter->layout);
    uint32_t slots = sbloom_layout_slots(filter->layout);
    uint32_t slot_bits = word_bits / slots;
    uint32_t words = filter->k;
    uint64_t used = 0, scanned = 0;
    double fpp_sum = 0.0;
    for (uint64_t b = 0; b < filter->nblocks; b += stride, scanned++) {
        const uint8_t *block = (const uint8_t *)filter->blocks + b * filter->block_bytes;
        double block_fpp = 1.0;
        for (uint32_t i = 0; i < words; i++) {
            uint32_t in_use = used_slots(load_word(block, i, word_bits), slot_bits);
            used += in_use;
            block_fpp *= (double)in_use / slots;
        }
        fpp_sum += block_fpp;
    }
    double total_slots = (double)scanned * words * slots;
    out->fill = (double)used / total_slots;
    out->estimated_fpp = fpp_sum / (double)scanned;
    out->estimated_items =
        out->fill >= 1.0 ? INFINITY : -(double)filter->nblocks * slots * log1p(-out->fill);
}

/* Blocks the estimate reads at most: 4096 x 64 bytes = 256 KiB, a few microseconds. */
#define ESTIMATE_BLOCKS 4096

/* The statistics from every block (sampled 0) or from at most ESTIMATE_BLOCKS evenly spaced. */
static int stats_of(const sbloom_t *filter, sbloom_stats *out, int sampled)
{
    if (!filter || !out)
        return SBLOOM_E_NULL;
    if (out->size < sizeof(sbloom_stats))
        return SBLOOM_E_INVALID;
    if (filter->stages)
        return sbloom_scalable_stats(filter, sampled, out);
    uint64_t stride = sampled ? filter->nblocks / ESTIMATE_BLOCKS : 1;
    scan_blocks(filter, stride ? stride : 1, out);
    return SBLOOM_OK;
}

int sbloom_get_stats(const sbloom_t *filter, sbloom_stats *out)
{
    return stats_of(filter, out, 0);
}

int sbloom_estimate(const sbloom_t *filter, sbloom_stats *out)
{
    return stats_of(filter, out, 1);
}
