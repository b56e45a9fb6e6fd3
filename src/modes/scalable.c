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
 * Unlike RedisBloom's BF.* expansion, every stage here is a one-line filter: a blocked filter with
 * 512-bit blocks (block512-k8 or -k16, whichever plan is smaller), or for a filter of any family
 * (SBLOOM_OPTS_ANY_FAMILY) the smallest of those and the fingerprint layouts, so a key costs one
 * cache line per stage, and every stage is probed by the same SIMD kernels. A fingerprint stage
 * that has no room for a key (its line and spare full: improbable below its plan) takes no more
 * keys; a new stage takes that key and those after it. The stages are cores (src/core/), never
 * filters of their own: this file walks them itself. All stages hash with XXH3-64; the key's hash
 * is computed once and each stage takes its own block from it (different sizes, different blocks).
 *
 * File form (docs/FORMAT.md): the usual 128-byte header with layout 5 (format version 2 when its
 * stages may be fingerprint layouts), then each stage as a complete filter image (its own header
 * and payload), oldest first.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/alloc.h"
#include "../base/hash.h"
#include "modes.h"
#include "parts.h"

/* Each stage holds GROWTH times the keys of the one before, at TIGHTENING times its rate. */
#define GROWTH 2
#define TIGHTENING 0.5
#define MAX_STAGES 40

typedef struct scalable {
    sbloom_part stages[MAX_STAGES]; /* oldest first */
    uint32_t nstages;
    uint64_t first_items; /* the first stage's plan */
    int any_family;       /* stages of every family (sbloom_plan_stage), not only Bloom ones */
} scalable;

static scalable *state_of(const sbloom_t *f)
{
    return f->state;
}

/* first * 2^i, or UINT64_MAX where that does not fit (no plan can then be made for it). */
static uint64_t stage_items(uint64_t first, uint32_t i)
{
    return i < 64 && first <= (UINT64_MAX >> i) ? first << i : UINT64_MAX;
}

static double stage_rate(double p, uint32_t i)
{
    return p * (1.0 - TIGHTENING) * pow(TIGHTENING, (double)i);
}

static sbloom_part *newest(const sbloom_t *f)
{
    scalable *s = state_of(f);
    return &s->stages[s->nstages - 1];
}

static int add_stage(sbloom_t *f)
{
    scalable *s = state_of(f);
    if (s->nstages == MAX_STAGES || (s->first_items << s->nstages) >> s->nstages != s->first_items)
        return SBLOOM_E_TOO_LARGE;
    uint32_t i = s->nstages;
    int rc = sbloom_part_init(&s->stages[i], stage_items(s->first_items, i),
                              stage_rate(f->planned_fpp, i), s->any_family);
    if (rc != SBLOOM_OK)
        return rc;
    s->nstages++;
    f->isa = s->stages[i].core.isa;
    return SBLOOM_OK;
}

static void scalable_release(sbloom_t *f)
{
    scalable *s = state_of(f);
    if (s)
        sbloom_parts_release(s->stages, 0, s->nstages);
    free(s);
    f->state = NULL;
}

/* An object with no stage yet. */
static int new_scalable(sbloom_t **out, uint64_t first, double p, int any_family)
{
    sbloom_t *f;
    int rc = sbloom_object_new(&f, &sbloom_mode_scalable, SBLOOM_NO_LAYOUT);
    if (rc != SBLOOM_OK)
        return rc;
    scalable *s = sbloom_calloc(1, sizeof *s);
    if (!s) {
        free(f);
        return SBLOOM_E_NOMEM;
    }
    s->first_items = first;
    s->any_family = any_family;
    f->state = s;
    f->counting = SBLOOM_COUNT_NONE; /* each stage counts the keys it took */
    f->planned_items = first;
    f->planned_fpp = p;
    *out = f;
    return SBLOOM_OK;
}

int sbloom_scalable_new(sbloom_t **out, uint64_t first_items, double p, int any_family)
{
    sbloom_t *f;
    int rc = new_scalable(&f, first_items, p, any_family);
    if (rc == SBLOOM_OK && (rc = add_stage(f)) != SBLOOM_OK) {
        sbloom_object_free(f);
        return rc;
    }
    if (rc == SBLOOM_OK)
        *out = f;
    return rc;
}

static uint32_t scalable_cores(const sbloom_t *f)
{
    return state_of(f)->nstages;
}

static const sbloom_part *scalable_core_at(const sbloom_t *f, uint32_t i)
{
    return &state_of(f)->stages[i];
}

static uint64_t scalable_items(const sbloom_t *f)
{
    return sbloom_parts_items(state_of(f)->stages, state_of(f)->nstages);
}

static uint64_t scalable_capacity(const sbloom_t *f)
{
    return sbloom_parts_planned(state_of(f)->stages, state_of(f)->nstages);
}

static uint64_t scalable_bytes(const sbloom_t *f)
{
    return sbloom_parts_bytes(state_of(f)->stages, state_of(f)->nstages);
}

/* The keys of a step (n <= SBLOOM_PART_STEP) that a fingerprint stage had no room for: those
 * answered 0 that no stage holds. The stage that refused them takes no more keys: a new stage
 * takes them (at most n keys, fewer than the plan of any stage after the one that refused),
 * and so on while stages refuse; with no stage left to add the filter fails with SBLOOM_E_FULL
 * (the keys are not stored: said, never a silent false negative). Returns the keys new. */
static uint64_t take_refused(sbloom_t *f, const uint64_t *hashes, size_t n, uint8_t *answer)
{
    scalable *s = state_of(f);
    uint64_t keys[SBLOOM_PART_STEP];
    uint32_t at[SBLOOM_PART_STEP]; /* where each key of keys[] sits in the step */
    uint8_t got[SBLOOM_PART_STEP], held[SBLOOM_PART_STEP];
    memcpy(keys, hashes, n * sizeof *keys);
    memcpy(got, answer, n);
    for (size_t j = 0; j < n; j++)
        at[j] = (uint32_t)j;
    uint64_t fresh = 0;
    for (size_t m = n;;) {
        sbloom_parts_probe(s->stages, s->nstages, s->nstages, keys, m, held);
        size_t left = 0;
        for (size_t j = 0; j < m; j++)
            if (!got[j] && !held[j]) { /* (in place: left <= j) */
                keys[left] = keys[j];
                at[left++] = at[j];
            }
        if (left == 0)
            return fresh;
        if (add_stage(f) != SBLOOM_OK) {
            sbloom_object_fail(f, SBLOOM_E_FULL);
            return fresh;
        }
        m = left;
        uint64_t more = sbloom_parts_insert(s->stages, s->nstages, s->nstages - 1, keys, m, got);
        fresh += more & ~SBK_FP_REFUSED;
        for (size_t j = 0; j < m; j++)
            answer[at[j]] = got[j];
        if (!(more & SBK_FP_REFUSED))
            return fresh;
    }
}

static uint64_t scalable_run(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                             uint8_t *results)
{
    scalable *s = state_of(f);
    if (op == SBLOOM_OP_CONTAINS)
        return sbloom_parts_contains(s->stages, s->nstages, hashes, n, results);
    if (op == SBLOOM_OP_REMOVE)
        return sbloom_parts_remove(s->stages, s->nstages, hashes, n, results);
    uint64_t count = 0;
    uint8_t answer[SBLOOM_PART_STEP];
    for (size_t at = 0; at < n;) {
        size_t len = n - at < SBLOOM_PART_STEP ? n - at : SBLOOM_PART_STEP;
        const sbloom_part *last = newest(f);
        if (last->items >= last->planned_items)
            add_stage(f); /* if it fails (memory, 40 stages), the newest takes more keys */
        last = newest(f);
        uint64_t room = last->planned_items > last->items ? last->planned_items - last->items : 0;
        if (room && room < len)
            len = (size_t)room; /* never more keys than the stage was planned for */
        /* a key goes to the newest stage only when no older one holds it */
        uint64_t fresh =
            sbloom_parts_insert(s->stages, s->nstages, s->nstages - 1, hashes + at, len, answer);
        count += fresh & ~SBK_FP_REFUSED;
        if (fresh & SBK_FP_REFUSED)
            count += take_refused(f, hashes + at, len, answer);
        if (results)
            memcpy(results + at, answer, len);
        at += len;
    }
    return count;
}

static int scalable_add_one(sbloom_t *f, uint64_t hash)
{
    uint8_t is_new;
    return (int)scalable_run(f, SBLOOM_OP_INSERT, &hash, 1, &is_new);
}

static int scalable_contains_one(const sbloom_t *f, uint64_t hash)
{
    return (int)sbloom_parts_contains(state_of(f)->stages, state_of(f)->nstages, &hash, 1, NULL);
}

/* Keys are removed while every stage is a fingerprint layout (a Bloom stage cannot forget). */
static int scalable_removes(const sbloom_t *f)
{
    return sbloom_parts_can_remove(state_of(f)->stages, state_of(f)->nstages);
}

static int scalable_stats(const sbloom_t *f, int sampled, sbloom_stats *out)
{
    sbloom_parts_stats(state_of(f)->stages, state_of(f)->nstages, sampled, out);
    return SBLOOM_OK;
}

static int scalable_clone(sbloom_t **out, const sbloom_t *f)
{
    const scalable *from = state_of(f);
    sbloom_t *copy = NULL;
    int rc = new_scalable(&copy, from->first_items, f->planned_fpp, from->any_family);
    if (rc == SBLOOM_OK &&
        (rc = sbloom_parts_copy(state_of(copy)->stages, from->stages, from->nstages)) != SBLOOM_OK)
        sbloom_object_free(copy);
    if (rc != SBLOOM_OK)
        return rc;
    state_of(copy)->nstages = from->nstages;
    copy->isa = f->isa;
    copy->threads = f->threads;
    *out = copy;
    return SBLOOM_OK;
}

static void scalable_clear(sbloom_t *f)
{
    scalable *s = state_of(f);
    sbloom_parts_release(s->stages, 1, s->nstages);
    s->nstages = 1;
    memset(s->stages[0].core.blocks, 0, (size_t)s->stages[0].core.bytes);
    s->stages[0].items = 0;
}

/* 1 when a stage's family has no bitwise union (fingerprints: entries are not bits). */
static int has_stage_without_union(const scalable *s)
{
    for (uint32_t i = 0; i < s->nstages; i++)
        if (!sbloom_family_of(s->stages[i].core.layout)->combines)
            return 1;
    return 0;
}

/* Stage by stage, when both grew alike (the same first stage, rate and stage count): a key of
 * either is then in the same-numbered stage of the union. Intersection is refused: a key of both
 * may sit in different stages of each; so is a union of fingerprint stages. */
static int scalable_combine(sbloom_t *dst, const sbloom_t *src, int intersect)
{
    if (intersect)
        return SBLOOM_E_LAYOUT;
    if (src->mode != &sbloom_mode_scalable)
        return SBLOOM_E_INCOMPATIBLE;
    scalable *d = state_of(dst);
    const scalable *s = state_of(src);
    if (has_stage_without_union(d) || has_stage_without_union(s))
        return SBLOOM_E_LAYOUT;
    if (d->first_items != s->first_items || dst->planned_fpp != src->planned_fpp ||
        d->nstages != s->nstages || !sbloom_parts_alike(d->stages, s->stages, d->nstages))
        return SBLOOM_E_INCOMPATIBLE;
    sbloom_parts_union(d->stages, s->stages, d->nstages);
    return SBLOOM_OK;
}

/* ---- File form: the header, then each stage's complete image ---- */

static uint64_t scalable_image_bytes(const sbloom_t *f)
{
    return SBLOOM_HEADER_BYTES +
           sbloom_parts_image_bytes(state_of(f)->stages, state_of(f)->nstages);
}

static int scalable_write_image(const sbloom_t *f, uint8_t *out)
{
    const scalable *s = state_of(f);
    uint8_t *payload = out + SBLOOM_HEADER_BYTES;
    uint8_t *end = sbloom_parts_write_images(s->stages, s->nstages, payload);
    sbloom_header h;
    sbloom_header_start(&h, SBLOOM_LAYOUT_SCALABLE, scalable_items(f), f->planned_items,
                        f->planned_fpp);
    if (s->any_family) /* its stages may be fingerprint layouts: readers before them refuse it */
        h.version = SBLOOM_FORMAT_VERSION_FP;
    h.payload_bytes = (uint64_t)(end - payload);
    h.nblocks = h.payload_bytes / 64; /* 64-byte units: each stage image is a multiple */
    h.payload_checksum = sbloom_xxh3(payload, (size_t)h.payload_bytes);
    sbloom_header_pack(&h, out);
    return SBLOOM_OK;
}

int sbloom_scalable_from_payload(sbloom_t **out, const sbloom_header *h, const uint8_t *payload)
{
    *out = NULL;
    if (!(h->flags & 1u)) /* a scalable filter always has its plan */
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "inconsistent header: a scalable filter "
                                                  "without its plan");
    sbloom_t *f;
    int any_family = h->version == SBLOOM_FORMAT_VERSION_FP;
    int rc = new_scalable(&f, h->planned_items, h->planned_fpp, any_family);
    if (rc != SBLOOM_OK)
        return rc;
    scalable *s = state_of(f);
    uint64_t at = 0, size = 0;
    while (rc == SBLOOM_OK && at < h->payload_bytes) {
        uint32_t i = s->nstages;
        if (i == MAX_STAGES) {
            rc = sbloom_fail_with(SBLOOM_E_CORRUPT, "stage %u: one stage too many", i);
            break;
        }
        /* each stage must be the one this plan grows: its items and rate */
        rc = sbloom_part_read_image(&s->stages[i], "stage", payload + at, h->payload_bytes - at, i,
                                    stage_items(s->first_items, i), stage_rate(f->planned_fpp, i),
                                    any_family ? SBLOOM_PART_FINGERPRINTS : 0, &size);
        if (rc == SBLOOM_OK) {
            s->nstages++;
            f->isa = s->stages[i].core.isa;
            at += size;
        }
    }
    uint64_t items = sbloom_parts_items(s->stages, s->nstages);
    if (rc == SBLOOM_OK && (s->nstages == 0 || items != h->items))
        rc = sbloom_fail_with(SBLOOM_E_CORRUPT, "header counts %llu items, its stages %llu",
                              (unsigned long long)h->items, (unsigned long long)items);
    if (rc != SBLOOM_OK) {
        sbloom_object_free(f);
        return rc == SBLOOM_E_TRUNCATED || rc == SBLOOM_E_FORMAT ? SBLOOM_E_CORRUPT : rc;
    }
    *out = f;
    return SBLOOM_OK;
}

const sbloom_mode sbloom_mode_scalable = {
    .name = "scalable",
    .reports_as = SBLOOM_LAYOUT_SCALABLE,
    .has_core = 0,
    .takes_inline = 0,
    .run = scalable_run,
    .add_one = scalable_add_one,
    .contains_one = scalable_contains_one,
    .items = scalable_items,
    .bytes = scalable_bytes,
    .capacity = scalable_capacity,
    .clone = scalable_clone,
    .clear = scalable_clear,
    .stats = scalable_stats,
    .combine = scalable_combine,
    .image_bytes = scalable_image_bytes,
    .write_image = scalable_write_image,
    .release = scalable_release,
    .cores = scalable_cores,
    .core_at = scalable_core_at,
    .removes = scalable_removes,
};
