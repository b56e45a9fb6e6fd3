/*
 * The scalable filter (SBLOOM_LAYOUT_SCALABLE): for a number of keys nobody knows in advance.
 *
 * Almeida, Baquero, Preguica and Hutchison, "Scalable Bloom Filters" (2007): a list of stages,
 * each an ordinary filter. Keys go into the newest stage until it holds what it was planned for;
 * then a new stage twice as large is added. Stage i is planned for n0 * 2^i keys at rate
 * P / 2^(i+1), so the rates add up to less than P however many stages there are (a key is a
 * false positive if any stage says so: at most the sum). A lookup asks every stage; an add asks
 * the older stages first and writes the newest only if none holds the key, so a key is never
 * stored twice and each stage's count is the keys it really took.
 *
 * Unlike RedisBloom's BF.* expansion, every stage here is a blocked filter with 512-bit blocks
 * (block512-k8 or -k16, whichever plan is smaller), so a key costs one cache line per stage, and
 * every stage is probed by the same SIMD kernels. All stages hash with XXH3-64; the key's hash is
 * computed once and each stage takes its own block from it (different sizes, different blocks).
 *
 * File form (docs/FORMAT.md): the usual 128-byte header with layout 5, then each stage as a
 * complete filter image (its own header and payload), oldest first.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "format.h"
#include "internal.h"

/* Each stage holds GROWTH times the keys of the one before, at TIGHTENING times its rate. */
#define GROWTH 2
#define TIGHTENING 0.5
#define MAX_STAGES 40
/* Keys handled per step of a batch. */
#define STEP 1024

static const sbloom_layout_kernels no_kernels; /* a scalable filter has no blocks of its own */

/* first * 2^i, or UINT64_MAX where that does not fit (no plan can then be made for it). */
static uint64_t stage_items(uint64_t first, uint32_t i)
{
    return i < 64 && first <= (UINT64_MAX >> i) ? first << i : UINT64_MAX;
}

static double stage_rate(double p, uint32_t i)
{
    return p * (1.0 - TIGHTENING) * pow(TIGHTENING, (double)i);
}

/* The newest stage is full when it took as many keys as it was planned for. */
static int newest_full(const sbloom_t *f)
{
    const sbloom_t *s = f->stages[f->nstages - 1];
    return sbloom_items(s) >= s->planned_items;
}

static int add_stage(sbloom_t *f)
{
    if (f->nstages == MAX_STAGES || (f->first_items << f->nstages) >> f->nstages != f->first_items)
        return SBLOOM_E_TOO_LARGE;
    uint32_t i = f->nstages;
    uint64_t n = stage_items(f->first_items, i);
    double p = stage_rate(f->planned_fpp, i);
    sbloom_plan k8 = sbloom_plan_init(), k16 = sbloom_plan_init();
    int rc8 = sbloom_plan_for_layout(n, p, SBLOOM_LAYOUT_BLOCK512_K8, &k8);
    int rc16 = sbloom_plan_for_layout(n, p, SBLOOM_LAYOUT_BLOCK512_K16, &k16);
    if (rc8 != SBLOOM_OK && rc16 != SBLOOM_OK)
        return rc8;
    const sbloom_plan *plan =
        rc16 != SBLOOM_OK || (rc8 == SBLOOM_OK && k8.bytes <= k16.bytes) ? &k8 : &k16;
    sbloom_t *stage;
    int rc = sbloom_filter_new(&stage, plan->bytes, plan->layout, n, p, 0);
    if (rc != SBLOOM_OK)
        return rc;
    f->stages[f->nstages++] = stage;
    stage->threads = f->threads;
    f->isa = stage->isa;
    return SBLOOM_OK;
}

static int new_scalable(sbloom_t **out, uint64_t first, double p)
{
    sbloom_t *f = sbloom_calloc(1, sizeof *f);
    if (!f)
        return SBLOOM_E_NOMEM;
    f->stages = sbloom_calloc(MAX_STAGES, sizeof *f->stages);
    if (!f->stages) {
        free(f);
        return SBLOOM_E_NOMEM;
    }
    f->layout = SBLOOM_LAYOUT_SCALABLE;
    f->block_bytes = 64;
    f->first_items = first;
    f->planned_items = first;
    f->planned_fpp = p;
    f->kern = &no_kernels;
    f->isa = "";
    *out = f;
    return SBLOOM_OK;
}

int sbloom_create_scalable(sbloom_t **out, uint64_t first_items, double p)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (first_items == 0 || !(p > 0.0 && p < 1.0))
        return SBLOOM_E_INVALID;
    sbloom_t *f;
    int rc = new_scalable(&f, first_items, p);
    if (rc == SBLOOM_OK && (rc = add_stage(f)) != SBLOOM_OK) {
        sbloom_scalable_free(f);
        return rc;
    }
    if (rc == SBLOOM_OK)
        *out = f;
    return rc;
}

void sbloom_scalable_free(sbloom_t *f)
{
    for (uint32_t i = 0; i < f->nstages; i++)
        sbloom_free(f->stages[i]);
    free(f->stages);
    free(f);
}

uint32_t sbloom_stages(const sbloom_t *filter)
{
    if (!filter)
        return 0;
    return filter->stages ? filter->nstages : 1;
}

const sbloom_t *sbloom_stage(const sbloom_t *filter, uint32_t i)
{
    if (!filter)
        return NULL;
    if (!filter->stages)
        return i == 0 ? filter : NULL;
    return i < filter->nstages ? filter->stages[i] : NULL;
}

uint64_t sbloom_scalable_items(const sbloom_t *f)
{
    uint64_t items = 0;
    for (uint32_t i = 0; i < f->nstages; i++)
        items += sbloom_items(f->stages[i]);
    return items;
}

uint64_t sbloom_scalable_capacity(const sbloom_t *f)
{
    uint64_t room = 0;
    for (uint32_t i = 0; i < f->nstages; i++)
        room += f->stages[i]->planned_items;
    return room;
}

uint64_t sbloom_scalable_bytes(const sbloom_t *f)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < f->nstages; i++)
        bytes += f->stages[i]->bytes;
    return bytes;
}

/* present[j] |= "stage s holds key j", for stages [0, count). */
static void probe_stages(sbloom_t *f, uint32_t count, const uint64_t *hashes, size_t n,
                         uint8_t *present)
{
    uint8_t answer[STEP];
    memset(present, 0, n);
    for (uint32_t s = 0; s < count; s++) {
        sbloom_batch_hashes(f->stages[s], SBLOOM_OP_CONTAINS, hashes, n, answer);
        for (size_t j = 0; j < n; j++)
            present[j] |= answer[j];
    }
}

/* Adds keys [0, n) (n <= STEP, and no more than the newest stage has room for): those no older
 * stage holds go to the newest, in order. */
static uint64_t insert_step(sbloom_t *f, const uint64_t *hashes, size_t n, uint8_t *is_new)
{
    uint8_t old[STEP], answer[STEP];
    uint64_t absent[STEP];
    size_t where[STEP], m = 0;
    sbloom_t *newest = f->stages[f->nstages - 1];
    probe_stages(f, f->nstages - 1, hashes, n, old);
    for (size_t j = 0; j < n; j++)
        if (!old[j]) {
            absent[m] = hashes[j];
            where[m++] = j;
        }
    uint64_t fresh = sbloom_batch_hashes(newest, SBLOOM_OP_INSERT, absent, m, answer);
    sbloom_count_inserted(newest, m, fresh);
    if (is_new) {
        memset(is_new, 0, n);
        for (size_t j = 0; j < m; j++)
            is_new[where[j]] = answer[j];
    }
    return fresh;
}

uint64_t sbloom_scalable_run(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                             uint8_t *results)
{
    uint64_t count = 0;
    size_t at = 0;
    while (at < n) {
        size_t len = n - at < STEP ? n - at : STEP;
        if (op == SBLOOM_OP_CONTAINS) {
            uint8_t present[STEP];
            probe_stages(f, f->nstages, hashes + at, len, present);
            for (size_t j = 0; j < len; j++)
                count += present[j];
            if (results)
                memcpy(results + at, present, len);
        } else {
            if (newest_full(f))
                add_stage(f); /* if it fails (memory, 40 stages), the newest takes more keys */
            const sbloom_t *newest = f->stages[f->nstages - 1];
            uint64_t room = newest->planned_items > sbloom_items(newest)
                                ? newest->planned_items - sbloom_items(newest)
                                : 0;
            if (room && room < len)
                len = (size_t)room; /* never more keys than the stage was planned for */
            count += insert_step(f, hashes + at, len, results ? results + at : NULL);
        }
        at += len;
    }
    return count;
}

/* ---- Statistics ---- */

int sbloom_scalable_stats(const sbloom_t *f, int sampled, sbloom_stats *out)
{
    double fill_bits = 0.0, miss = 1.0, items = 0.0, bits = 0.0;
    for (uint32_t i = 0; i < f->nstages; i++) {
        sbloom_stats s = sbloom_stats_init();
        int rc = sampled ? sbloom_estimate(f->stages[i], &s) : sbloom_get_stats(f->stages[i], &s);
        if (rc != SBLOOM_OK)
            return rc;
        double stage_bits = 8.0 * (double)f->stages[i]->bytes;
        fill_bits += s.fill * stage_bits;
        bits += stage_bits;
        miss *= 1.0 - s.estimated_fpp; /* a negative key must pass every stage */
        items += s.estimated_items;
    }
    out->fill = fill_bits / bits;
    out->estimated_fpp = 1.0 - miss;
    out->estimated_items = items;
    return SBLOOM_OK;
}

/* ---- Copies, union ---- */

int sbloom_scalable_clone(sbloom_t **out, const sbloom_t *f)
{
    sbloom_t *copy = NULL;
    int rc = new_scalable(&copy, f->first_items, f->planned_fpp);
    for (uint32_t i = 0; rc == SBLOOM_OK && i < f->nstages; i++) {
        rc = sbloom_clone(&copy->stages[i], f->stages[i]);
        if (rc == SBLOOM_OK) {
            copy->nstages++;
            copy->isa = copy->stages[i]->isa;
        }
    }
    if (rc != SBLOOM_OK) {
        if (copy)
            sbloom_scalable_free(copy);
        return rc;
    }
    copy->threads = f->threads;
    *out = copy;
    return SBLOOM_OK;
}

void sbloom_scalable_clear(sbloom_t *f)
{
    for (uint32_t i = 1; i < f->nstages; i++)
        sbloom_free(f->stages[i]);
    f->nstages = 1;
    sbloom_clear(f->stages[0]);
}

/* Stage by stage, when both grew alike (the same first stage, rate and stage count): a key of
 * either is then in the same-numbered stage of the union. */
int sbloom_scalable_union(sbloom_t *dst, const sbloom_t *src)
{
    if (!src->stages || dst->first_items != src->first_items ||
        dst->planned_fpp != src->planned_fpp || dst->nstages != src->nstages)
        return SBLOOM_E_INCOMPATIBLE;
    for (uint32_t i = 0; i < dst->nstages; i++)
        if (dst->stages[i]->bytes != src->stages[i]->bytes ||
            dst->stages[i]->layout != src->stages[i]->layout)
            return SBLOOM_E_INCOMPATIBLE;
    for (uint32_t i = 0; i < dst->nstages; i++) {
        int rc = sbloom_union(dst->stages[i], src->stages[i]);
        if (rc != SBLOOM_OK)
            return rc;
    }
    return SBLOOM_OK;
}

void sbloom_scalable_set_threads(sbloom_t *f, unsigned threads)
{
    for (uint32_t i = 0; i < f->nstages; i++)
        f->stages[i]->threads = threads;
}

/* ---- File form: the header, then each stage's complete image ---- */

uint64_t sbloom_scalable_payload_bytes(const sbloom_t *f)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < f->nstages; i++)
        bytes += sbloom_serialized_size(f->stages[i]);
    return bytes;
}

int sbloom_scalable_write_payload(const sbloom_t *f, uint8_t *out)
{
    for (uint32_t i = 0; i < f->nstages; i++) {
        uint64_t size = sbloom_serialized_size(f->stages[i]);
        int rc = sbloom_serialize(f->stages[i], out, (size_t)size);
        if (rc != SBLOOM_OK)
            return rc;
        out += size;
    }
    return SBLOOM_OK;
}

int sbloom_scalable_from_payload(sbloom_t **out, const sbloom_header *h, const uint8_t *payload)
{
    *out = NULL;
    if (!(h->flags & 1u)) /* a scalable filter always has its plan */
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "inconsistent header: a scalable filter "
                                                  "without its plan");
    sbloom_t *f;
    int rc = new_scalable(&f, h->planned_items, h->planned_fpp);
    if (rc != SBLOOM_OK)
        return rc;
    uint64_t at = 0, items = 0;
    while (rc == SBLOOM_OK && at < h->payload_bytes) {
        uint64_t left = h->payload_bytes - at;
        if (f->nstages == MAX_STAGES || left < SBLOOM_HEADER_BYTES) {
            rc = sbloom_fail_with(SBLOOM_E_CORRUPT, "stage %u: %s", f->nstages,
                                  left < SBLOOM_HEADER_BYTES ? "truncated" : "one stage too many");
            break;
        }
        /* the stage's own size, from its header (checked by deserialize against its checksum) */
        uint64_t stage_payload = sbloom_header_payload_bytes(payload + at);
        if (stage_payload > left - SBLOOM_HEADER_BYTES) {
            rc = sbloom_fail_with(SBLOOM_E_CORRUPT, "stage %u: %llu bytes, more than is left",
                                  f->nstages, (unsigned long long)stage_payload);
            break;
        }
        uint64_t size = SBLOOM_HEADER_BYTES + stage_payload;
        sbloom_t *stage;
        rc = sbloom_deserialize(&stage, payload + at, (size_t)size);
        if (rc != SBLOOM_OK) { /* each stage is a whole filter, its size and plan checked */
            char why[200];
            snprintf(why, sizeof why, "%s", sbloom_error_detail());
            sbloom_fail_with(rc, "stage %u: %s", f->nstages, why[0] ? why : sbloom_strerror(rc));
            break;
        }
        uint32_t i = f->nstages;
        f->stages[f->nstages++] = stage;
        f->isa = stage->isa;
        /* each stage must be the one this plan grows: a 512-bit layout with its items and rate */
        if ((stage->layout != SBLOOM_LAYOUT_BLOCK512_K8 &&
             stage->layout != SBLOOM_LAYOUT_BLOCK512_K16) ||
            stage->planned_items != stage_items(f->first_items, i) ||
            stage->planned_fpp != stage_rate(f->planned_fpp, i))
            rc = sbloom_fail_with(SBLOOM_E_CORRUPT,
                                  "stage %u: layout %s, %llu items at rate %g, not this filter's "
                                  "stage %u",
                                  i, sbloom_layout_name(stage->layout),
                                  (unsigned long long)stage->planned_items, stage->planned_fpp, i);
        items += stage->items;
        at += size;
    }
    if (rc == SBLOOM_OK && (f->nstages == 0 || items != h->items))
        rc = sbloom_fail_with(SBLOOM_E_CORRUPT, "header counts %llu items, its stages %llu",
                              (unsigned long long)h->items, (unsigned long long)items);
    if (rc != SBLOOM_OK) {
        sbloom_scalable_free(f);
        return rc == SBLOOM_E_TRUNCATED || rc == SBLOOM_E_FORMAT ? SBLOOM_E_CORRUPT : rc;
    }
    *out = f;
    return SBLOOM_OK;
}
