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
 * every stage is probed by the same SIMD kernels. The stages are cores (src/core/), never
 * filters of their own: this file walks them itself. All stages hash with XXH3-64; the key's hash
 * is computed once and each stage takes its own block from it (different sizes, different blocks).
 *
 * File form (docs/FORMAT.md): the usual 128-byte header with layout 5, then each stage as a
 * complete filter image (its own header and payload), oldest first.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/alloc.h"
#include "../base/hash.h"
#include "modes.h"

/* Each stage holds GROWTH times the keys of the one before, at TIGHTENING times its rate. */
#define GROWTH 2
#define TIGHTENING 0.5
#define MAX_STAGES 40
/* Keys handled per step of a batch. */
#define STEP 1024

/* A stage: its blocks, the keys it took, and its plan. */
typedef struct stage {
    sbloom_core core;
    uint64_t items;
    uint64_t planned_items;
    double planned_fpp;
} stage;

typedef struct scalable {
    stage stages[MAX_STAGES]; /* oldest first */
    uint32_t nstages;
    uint64_t first_items; /* the first stage's plan */
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

static stage *newest(const sbloom_t *f)
{
    scalable *s = state_of(f);
    return &s->stages[s->nstages - 1];
}

/* The newest stage is full when it took as many keys as it was planned for. */
static int newest_full(const sbloom_t *f)
{
    const stage *st = newest(f);
    return st->items >= st->planned_items;
}

static int add_stage(sbloom_t *f)
{
    scalable *s = state_of(f);
    if (s->nstages == MAX_STAGES || (s->first_items << s->nstages) >> s->nstages != s->first_items)
        return SBLOOM_E_TOO_LARGE;
    uint32_t i = s->nstages;
    uint64_t n = stage_items(s->first_items, i);
    double p = stage_rate(f->planned_fpp, i);
    sbloom_plan k8 = sbloom_plan_init(), k16 = sbloom_plan_init();
    int rc8 = sbloom_plan_for_layout(n, p, SBLOOM_LAYOUT_BLOCK512_K8, &k8);
    int rc16 = sbloom_plan_for_layout(n, p, SBLOOM_LAYOUT_BLOCK512_K16, &k16);
    if (rc8 != SBLOOM_OK && rc16 != SBLOOM_OK)
        return rc8;
    const sbloom_plan *plan =
        rc16 != SBLOOM_OK || (rc8 == SBLOOM_OK && k8.bytes <= k16.bytes) ? &k8 : &k16;
    stage *st = &s->stages[i];
    int rc = sbloom_core_init(&st->core, plan->bytes, plan->layout, SBLOOM_OWNER_HEAP);
    if (rc != SBLOOM_OK)
        return rc;
    st->items = 0;
    st->planned_items = n;
    st->planned_fpp = p;
    s->nstages++;
    f->isa = st->core.isa;
    return SBLOOM_OK;
}

static void release_stages(scalable *s, uint32_t from)
{
    for (uint32_t i = from; i < s->nstages; i++)
        sbloom_core_release(&s->stages[i].core);
    s->nstages = from;
}

static void scalable_release(sbloom_t *f)
{
    scalable *s = state_of(f);
    if (s)
        release_stages(s, 0);
    free(s);
    f->state = NULL;
}

/* An object with no stage yet. */
static int new_scalable(sbloom_t **out, uint64_t first, double p)
{
    sbloom_t *f;
    int rc = sbloom_object_new(&f, &sbloom_mode_scalable, SBLOOM_LAYOUT_SCALABLE);
    if (rc != SBLOOM_OK)
        return rc;
    scalable *s = sbloom_calloc(1, sizeof *s);
    if (!s) {
        free(f);
        return SBLOOM_E_NOMEM;
    }
    s->first_items = first;
    f->state = s;
    f->counting = SBLOOM_COUNT_NONE; /* each stage counts the keys it took */
    f->planned_items = first;
    f->planned_fpp = p;
    *out = f;
    return SBLOOM_OK;
}

int sbloom_scalable_new(sbloom_t **out, uint64_t first_items, double p)
{
    sbloom_t *f;
    int rc = new_scalable(&f, first_items, p);
    if (rc == SBLOOM_OK && (rc = add_stage(f)) != SBLOOM_OK) {
        sbloom_object_free(f);
        return rc;
    }
    if (rc == SBLOOM_OK)
        *out = f;
    return rc;
}

uint32_t sbloom_scalable_stage_count(const sbloom_t *f)
{
    return state_of(f)->nstages;
}

const sbloom_core *sbloom_scalable_stage(const sbloom_t *f, uint32_t i, uint64_t *items,
                                         uint64_t *planned_items, double *planned_fpp)
{
    const stage *st = &state_of(f)->stages[i];
    *items = st->items;
    *planned_items = st->planned_items;
    *planned_fpp = st->planned_fpp;
    return &st->core;
}

/* What the stages hold together: their keys, their plans, or their bytes. */
enum stage_sum { STAGE_ITEMS, STAGE_PLANNED, STAGE_BYTES };

static uint64_t sum_stages(const sbloom_t *f, enum stage_sum what)
{
    const scalable *s = state_of(f);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < s->nstages; i++) {
        const stage *st = &s->stages[i];
        sum += what == STAGE_ITEMS     ? st->items
               : what == STAGE_PLANNED ? st->planned_items
                                       : st->core.bytes;
    }
    return sum;
}

static uint64_t scalable_items(const sbloom_t *f)
{
    return sum_stages(f, STAGE_ITEMS);
}

static uint64_t scalable_capacity(const sbloom_t *f)
{
    return sum_stages(f, STAGE_PLANNED);
}

static uint64_t scalable_bytes(const sbloom_t *f)
{
    return sum_stages(f, STAGE_BYTES);
}

/* present[j] = "one of stages [0, count) holds key j". */
static void probe_stages(const scalable *s, uint32_t count, const uint64_t *hashes, size_t n,
                         uint8_t *present)
{
    uint8_t answer[STEP];
    memset(present, 0, n);
    for (uint32_t i = 0; i < count; i++) {
        sbloom_core_run(&s->stages[i].core, SBLOOM_OP_CONTAINS, hashes, n, answer);
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
    scalable *s = state_of(f);
    stage *last = newest(f);
    probe_stages(s, s->nstages - 1, hashes, n, old);
    for (size_t j = 0; j < n; j++)
        if (!old[j]) {
            absent[m] = hashes[j];
            where[m++] = j;
        }
    uint64_t fresh = sbloom_core_run(&last->core, SBLOOM_OP_INSERT, absent, m, answer);
    last->items += fresh;
    if (is_new) {
        memset(is_new, 0, n);
        for (size_t j = 0; j < m; j++)
            is_new[where[j]] = answer[j];
    }
    return fresh;
}

static uint64_t scalable_run(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                             uint8_t *results)
{
    uint64_t count = 0;
    size_t at = 0;
    while (at < n) {
        size_t len = n - at < STEP ? n - at : STEP;
        if (op == SBLOOM_OP_CONTAINS) {
            uint8_t present[STEP];
            probe_stages(state_of(f), state_of(f)->nstages, hashes + at, len, present);
            for (size_t j = 0; j < len; j++)
                count += present[j];
            if (results)
                memcpy(results + at, present, len);
        } else {
            if (newest_full(f))
                add_stage(f); /* if it fails (memory, 40 stages), the newest takes more keys */
            const stage *last = newest(f);
            uint64_t room =
                last->planned_items > last->items ? last->planned_items - last->items : 0;
            if (room && room < len)
                len = (size_t)room; /* never more keys than the stage was planned for */
            count += insert_step(f, hashes + at, len, results ? results + at : NULL);
        }
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
    return (int)scalable_run((sbloom_t *)f, SBLOOM_OP_CONTAINS, &hash, 1, NULL); /* only reads */
}

/* ---- Statistics ---- */

static int scalable_stats(const sbloom_t *f, int sampled, sbloom_stats *out)
{
    const scalable *s = state_of(f);
    double fill_bits = 0.0, miss = 1.0, items = 0.0, bits = 0.0;
    for (uint32_t i = 0; i < s->nstages; i++) {
        sbloom_stats st = sbloom_stats_init();
        sbloom_core_stats(&s->stages[i].core, sampled, &st);
        double stage_bits = 8.0 * (double)s->stages[i].core.bytes;
        fill_bits += st.fill * stage_bits;
        bits += stage_bits;
        miss *= 1.0 - st.estimated_fpp; /* a negative key must pass every stage */
        items += st.estimated_items;
    }
    out->fill = fill_bits / bits;
    out->estimated_fpp = 1.0 - miss;
    out->estimated_items = items;
    return SBLOOM_OK;
}

/* ---- Copies, union ---- */

static int scalable_clone(sbloom_t **out, const sbloom_t *f)
{
    const scalable *from = state_of(f);
    sbloom_t *copy = NULL;
    int rc = new_scalable(&copy, from->first_items, f->planned_fpp);
    for (uint32_t i = 0; rc == SBLOOM_OK && i < from->nstages; i++) {
        scalable *to = state_of(copy);
        rc = sbloom_core_copy(&to->stages[i].core, &from->stages[i].core);
        if (rc == SBLOOM_OK) {
            to->stages[i].items = from->stages[i].items;
            to->stages[i].planned_items = from->stages[i].planned_items;
            to->stages[i].planned_fpp = from->stages[i].planned_fpp;
            to->nstages++;
            copy->isa = to->stages[i].core.isa;
        }
    }
    if (rc != SBLOOM_OK) {
        if (copy)
            sbloom_object_free(copy);
        return rc;
    }
    copy->threads = f->threads;
    *out = copy;
    return SBLOOM_OK;
}

static void scalable_clear(sbloom_t *f)
{
    scalable *s = state_of(f);
    release_stages(s, 1);
    memset(s->stages[0].core.blocks, 0, (size_t)s->stages[0].core.bytes);
    s->stages[0].items = 0;
}

/* Stage by stage, when both grew alike (the same first stage, rate and stage count): a key of
 * either is then in the same-numbered stage of the union. Intersection is refused: a key of both
 * may sit in different stages of each. */
static int scalable_combine(sbloom_t *dst, const sbloom_t *src, int intersect)
{
    if (intersect)
        return SBLOOM_E_LAYOUT;
    if (src->mode != &sbloom_mode_scalable)
        return SBLOOM_E_INCOMPATIBLE;
    scalable *d = state_of(dst);
    const scalable *s = state_of(src);
    if (d->first_items != s->first_items || dst->planned_fpp != src->planned_fpp ||
        d->nstages != s->nstages)
        return SBLOOM_E_INCOMPATIBLE;
    for (uint32_t i = 0; i < d->nstages; i++)
        if (d->stages[i].core.bytes != s->stages[i].core.bytes ||
            d->stages[i].core.layout != s->stages[i].core.layout)
            return SBLOOM_E_INCOMPATIBLE;
    for (uint32_t i = 0; i < d->nstages; i++) {
        sbloom_core_combine(&d->stages[i].core, &s->stages[i].core, 0);
        d->stages[i].items = sbloom_core_estimated_items(&d->stages[i].core);
    }
    return SBLOOM_OK;
}

/* ---- File form: the header, then each stage's complete image ---- */

static uint64_t scalable_image_bytes(const sbloom_t *f)
{
    const scalable *s = state_of(f);
    uint64_t bytes = SBLOOM_HEADER_BYTES;
    for (uint32_t i = 0; i < s->nstages; i++)
        bytes += SBLOOM_HEADER_BYTES + s->stages[i].core.bytes;
    return bytes;
}

static int scalable_write_image(const sbloom_t *f, uint8_t *out)
{
    const scalable *s = state_of(f);
    uint8_t *payload = out + SBLOOM_HEADER_BYTES, *at = payload;
    for (uint32_t i = 0; i < s->nstages; i++) {
        const stage *st = &s->stages[i];
        sbloom_header h;
        sbloom_header_describe(&h, &st->core, st->items, st->planned_items, st->planned_fpp);
        sbloom_header_pack(&h, at);
        sbloom_core_payload_out(&st->core, at + SBLOOM_HEADER_BYTES);
        at += SBLOOM_HEADER_BYTES + st->core.bytes;
    }
    sbloom_header h;
    sbloom_header_start(&h, SBLOOM_LAYOUT_SCALABLE, scalable_items(f), f->planned_items,
                        f->planned_fpp);
    h.payload_bytes = (uint64_t)(at - payload);
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
    int rc = new_scalable(&f, h->planned_items, h->planned_fpp);
    if (rc != SBLOOM_OK)
        return rc;
    scalable *s = state_of(f);
    uint64_t at = 0, items = 0;
    while (rc == SBLOOM_OK && at < h->payload_bytes) {
        uint64_t left = h->payload_bytes - at;
        if (s->nstages == MAX_STAGES || left < SBLOOM_HEADER_BYTES) {
            rc = sbloom_fail_with(SBLOOM_E_CORRUPT, "stage %u: %s", s->nstages,
                                  left < SBLOOM_HEADER_BYTES ? "truncated" : "one stage too many");
            break;
        }
        /* the stage's own size, from its header (checked against its checksum below) */
        uint64_t stage_payload = sbloom_header_payload_bytes(payload + at);
        if (stage_payload > left - SBLOOM_HEADER_BYTES) {
            rc = sbloom_fail_with(SBLOOM_E_CORRUPT, "stage %u: %llu bytes, more than is left",
                                  s->nstages, (unsigned long long)stage_payload);
            break;
        }
        uint64_t size = SBLOOM_HEADER_BYTES + stage_payload;
        uint32_t i = s->nstages;
        stage *st = &s->stages[i];
        sbloom_header sh;
        /* each stage is a whole filter image, its size, plan and checksum checked */
        rc = sbloom_header_parse(payload + at, size, &sh);
        if (rc == SBLOOM_OK)
            rc = sbloom_core_from_image(&st->core, &sh, payload + at + SBLOOM_HEADER_BYTES);
        if (rc != SBLOOM_OK) {
            char why[200];
            snprintf(why, sizeof why, "%s", sbloom_error_detail());
            sbloom_fail_with(rc, "stage %u: %s", i, why[0] ? why : sbloom_strerror(rc));
            break;
        }
        s->nstages++;
        st->items = sh.items;
        st->planned_items = (sh.flags & 1u) ? sh.planned_items : 0;
        st->planned_fpp = (sh.flags & 1u) ? sh.planned_fpp : NAN;
        f->isa = st->core.isa;
        /* each stage must be the one this plan grows: a 512-bit layout with its items and rate */
        if ((sh.layout != SBLOOM_LAYOUT_BLOCK512_K8 && sh.layout != SBLOOM_LAYOUT_BLOCK512_K16) ||
            st->planned_items != stage_items(s->first_items, i) ||
            st->planned_fpp != stage_rate(f->planned_fpp, i))
            rc = sbloom_fail_with(SBLOOM_E_CORRUPT,
                                  "stage %u: layout %s, %llu items at rate %g, not this filter's "
                                  "stage %u",
                                  i, sbloom_layout_name(sh.layout),
                                  (unsigned long long)st->planned_items, st->planned_fpp, i);
        items += st->items;
        at += size;
    }
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
};
