/*
 * The windowed filter (SBLOOM_LAYOUT_WINDOWED): "seen within the last W?", for recrawls and
 * dedup windows. The window is G periods of P time units; the filter keeps a ring of G + 1
 * generations, each a core planned for n / G keys at rate p / (G + 1), so that the G + 1 a lookup
 * probes together keep the rate at most p. Period q (time q * P to (q + 1) * P) writes generation
 * q mod (G + 1); a key is added to it only when no live generation holds it. When time reaches
 * period q + G + 1 that generation is cleared (a memset) and reused: a key added at time t in
 * period q is held until (q + G + 1) * P, which is after t + W and at most t + W + P.
 *
 * Candidates considered (docs/SIZING.md has the rates): one block with a small epoch stamp per
 * slot (a key's lookup one cache line, but about 4 times the memory and stamps to sweep before
 * they wrap) and rotating whole filters that hash each key again per filter (the slow peers). The
 * ring of blocked generations keeps every core an ordinary 512-bit filter, probed by the same
 * kernels with the one hash; a rotation is one memset of one generation.
 *
 * File form (docs/FORMAT.md): the header with layout 6, a 192-byte window record (periods,
 * period, current period, each generation's first period), then each generation's complete image
 * in ring order.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/alloc.h"
#include "../base/endian.h"
#include "../base/hash.h"
#include "modes.h"
#include "parts.h"

#define MAX_GENERATIONS (SBLOOM_WINDOW_MAX_PERIODS + 1)
#define RECORD_BYTES 192
#define NOT_STARTED UINT64_MAX
static const uint8_t record_magic[8] = {'S', 'B', 'W', 'I', 'N', 'D', 'O', 'W'};

typedef struct windowed {
    sbloom_part gens[MAX_GENERATIONS]; /* ring order: period q writes gens[q % ngens] */
    uint64_t started[MAX_GENERATIONS]; /* the period each began, or NOT_STARTED */
    uint32_t periods, ngens;           /* G, G + 1 */
    uint64_t period;                   /* P, in the caller's unit */
    uint64_t current;                  /* the current period's number: now / P */
} windowed;

static windowed *state_of(const sbloom_t *f)
{
    return f->state;
}

/* Each generation's plan: n / G keys (rounded up) at p / (G + 1). */
static uint64_t generation_items(uint64_t n, uint32_t periods)
{
    return n / periods + (n % periods != 0);
}

static double generation_rate(double p, uint32_t periods)
{
    return p / (double)(periods + 1);
}

static uint32_t current_slot(const windowed *w)
{
    return (uint32_t)(w->current % w->ngens);
}

static void windowed_release(sbloom_t *f)
{
    windowed *w = state_of(f);
    if (w)
        sbloom_parts_release(w->gens, 0, w->ngens);
    free(w);
    f->state = NULL;
}

/* An object with its window and no generation yet. */
static int new_windowed(sbloom_t **out, uint64_t n, double p, uint32_t periods, uint64_t period,
                        uint64_t current)
{
    sbloom_t *f;
    int rc = sbloom_object_new(&f, &sbloom_mode_windowed, SBLOOM_LAYOUT_WINDOWED);
    if (rc != SBLOOM_OK)
        return rc;
    windowed *w = sbloom_calloc(1, sizeof *w);
    if (!w) {
        free(f);
        return SBLOOM_E_NOMEM;
    }
    w->periods = periods;
    w->ngens = periods + 1;
    w->period = period;
    w->current = current;
    for (uint32_t i = 0; i < MAX_GENERATIONS; i++)
        w->started[i] = NOT_STARTED;
    f->state = w;
    f->counting = SBLOOM_COUNT_NONE; /* each generation counts the keys it took */
    f->planned_items = n;
    f->planned_fpp = p;
    *out = f;
    return SBLOOM_OK;
}

int sbloom_windowed_new(sbloom_t **out, uint64_t n, double p, uint32_t periods, uint64_t period,
                        uint64_t now)
{
    sbloom_t *f;
    int rc = new_windowed(&f, n, p, periods, period, now / period);
    if (rc != SBLOOM_OK)
        return rc;
    windowed *w = state_of(f);
    for (uint32_t i = 0; i < w->ngens && rc == SBLOOM_OK; i++)
        if ((rc = sbloom_part_init(&w->gens[i], generation_items(n, periods),
                                   generation_rate(p, periods))) != SBLOOM_OK)
            sbloom_parts_release(w->gens, 0, i);
    if (rc != SBLOOM_OK) {
        w->ngens = 0; /* nothing left to release */
        sbloom_object_free(f);
        return rc;
    }
    w->started[current_slot(w)] = w->current;
    f->isa = w->gens[0].core.isa;
    *out = f;
    return SBLOOM_OK;
}

int sbloom_windowed_advance(sbloom_t *f, uint64_t now)
{
    windowed *w = state_of(f);
    uint64_t to = now / w->period;
    if (to <= w->current)
        return SBLOOM_OK; /* the same period, or a clock that went back: nothing to forget */
    /* periods current + 1 .. to begin; only the last G + 1 of them can hold keys */
    uint64_t from = to - w->current > w->ngens ? to - w->ngens + 1 : w->current + 1;
    for (uint64_t q = from; q <= to; q++) {
        sbloom_part *g = &w->gens[q % w->ngens];
        memset(g->core.blocks, 0, (size_t)g->core.bytes);
        g->items = 0;
        w->started[q % w->ngens] = q;
    }
    w->current = to;
    return SBLOOM_OK;
}

/* Generation i, oldest first: the one of period current - G + i. */
static uint32_t slot_of(const windowed *w, uint32_t i)
{
    return (uint32_t)((w->current + 1 + i) % w->ngens);
}

void sbloom_windowed_describe(const sbloom_t *f, sbloom_window *out)
{
    const windowed *w = state_of(f);
    out->periods = w->periods;
    out->generations = w->ngens;
    out->period = w->period;
    out->now = w->current * w->period;
    for (uint32_t i = 0; i < MAX_GENERATIONS; i++) {
        uint32_t slot = i < w->ngens ? slot_of(w, i) : 0;
        int live = i < w->ngens && w->started[slot] != NOT_STARTED;
        out->generation_start[i] = live ? w->started[slot] * w->period : NOT_STARTED;
        out->generation_items[i] = live ? w->gens[slot].items : 0;
    }
}

static uint32_t windowed_cores(const sbloom_t *f)
{
    return state_of(f)->ngens;
}

static const sbloom_part *windowed_core_at(const sbloom_t *f, uint32_t i)
{
    return &state_of(f)->gens[slot_of(state_of(f), i)];
}

static uint64_t windowed_items(const sbloom_t *f)
{
    return sbloom_parts_items(state_of(f)->gens, state_of(f)->ngens);
}

static uint64_t windowed_bytes(const sbloom_t *f)
{
    return sbloom_parts_bytes(state_of(f)->gens, state_of(f)->ngens);
}

static uint64_t windowed_capacity(const sbloom_t *f)
{
    return f->planned_items; /* keys per window */
}

static uint64_t windowed_run(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                             uint8_t *results)
{
    windowed *w = state_of(f);
    if (op == SBLOOM_OP_CONTAINS)
        return sbloom_parts_contains(w->gens, w->ngens, hashes, n, results);
    uint64_t count = 0;
    for (size_t at = 0; at < n; at += SBLOOM_PART_STEP) {
        size_t len = n - at < SBLOOM_PART_STEP ? n - at : SBLOOM_PART_STEP;
        /* new to the window: no live generation holds it; it goes to the current one */
        count += sbloom_parts_insert(w->gens, w->ngens, current_slot(w), hashes + at, len,
                                     results ? results + at : NULL);
    }
    return count;
}

static int windowed_add_one(sbloom_t *f, uint64_t hash)
{
    uint8_t is_new;
    return (int)windowed_run(f, SBLOOM_OP_INSERT, &hash, 1, &is_new);
}

static int windowed_contains_one(const sbloom_t *f, uint64_t hash)
{
    return (int)sbloom_parts_contains(state_of(f)->gens, state_of(f)->ngens, &hash, 1, NULL);
}

static int windowed_stats(const sbloom_t *f, int sampled, sbloom_stats *out)
{
    sbloom_parts_stats(state_of(f)->gens, state_of(f)->ngens, sampled, out);
    return SBLOOM_OK;
}

static int windowed_clone(sbloom_t **out, const sbloom_t *f)
{
    const windowed *from = state_of(f);
    sbloom_t *copy = NULL;
    int rc = new_windowed(&copy, f->planned_items, f->planned_fpp, from->periods, from->period,
                          from->current);
    if (rc != SBLOOM_OK)
        return rc;
    windowed *to = state_of(copy);
    if ((rc = sbloom_parts_copy(to->gens, from->gens, from->ngens)) != SBLOOM_OK) {
        to->ngens = 0;
        sbloom_object_free(copy);
        return rc;
    }
    memcpy(to->started, from->started, sizeof to->started);
    copy->isa = f->isa;
    copy->threads = f->threads;
    *out = copy;
    return SBLOOM_OK;
}

static void windowed_clear(sbloom_t *f)
{
    windowed *w = state_of(f);
    for (uint32_t i = 0; i < w->ngens; i++) {
        memset(w->gens[i].core.blocks, 0, (size_t)w->gens[i].core.bytes);
        w->gens[i].items = 0;
        w->started[i] = NOT_STARTED;
    }
    w->started[current_slot(w)] = w->current;
}

/* Generation by generation, when both have the same plan and window and stand at the same
 * period (advance both to one time first): a key of either is then in the same generation of
 * the union, which began when the earlier of the two did. */
static int windowed_combine(sbloom_t *dst, const sbloom_t *src, int intersect)
{
    if (intersect)
        return SBLOOM_E_LAYOUT;
    if (src->mode != &sbloom_mode_windowed)
        return SBLOOM_E_INCOMPATIBLE;
    windowed *d = state_of(dst);
    const windowed *s = state_of(src);
    if (dst->planned_items != src->planned_items || dst->planned_fpp != src->planned_fpp ||
        d->periods != s->periods || d->period != s->period || d->current != s->current ||
        !sbloom_parts_alike(d->gens, s->gens, d->ngens))
        return SBLOOM_E_INCOMPATIBLE;
    sbloom_parts_union(d->gens, s->gens, d->ngens);
    for (uint32_t i = 0; i < d->ngens; i++)
        d->started[i] = d->started[i] < s->started[i] ? d->started[i] : s->started[i];
    return SBLOOM_OK;
}

/* ---- File form: the header, the window record, each generation's complete image ---- */

static uint64_t windowed_image_bytes(const sbloom_t *f)
{
    return SBLOOM_HEADER_BYTES + RECORD_BYTES +
           sbloom_parts_image_bytes(state_of(f)->gens, state_of(f)->ngens);
}

static int windowed_write_image(const sbloom_t *f, uint8_t *out)
{
    const windowed *w = state_of(f);
    uint8_t *payload = out + SBLOOM_HEADER_BYTES;
    memset(payload, 0, RECORD_BYTES);
    memcpy(payload, record_magic, sizeof record_magic);
    sbloom_put_le32(payload + 8, w->periods);
    sbloom_put_le32(payload + 12, w->ngens);
    sbloom_put_le64(payload + 16, w->period);
    sbloom_put_le64(payload + 24, w->current);
    for (uint32_t i = 0; i < w->ngens; i++)
        sbloom_put_le64(payload + 32 + 8 * i, w->started[i]);
    uint8_t *end = sbloom_parts_write_images(w->gens, w->ngens, payload + RECORD_BYTES);
    sbloom_header h;
    sbloom_header_start(&h, SBLOOM_LAYOUT_WINDOWED, windowed_items(f), f->planned_items,
                        f->planned_fpp);
    h.payload_bytes = (uint64_t)(end - payload);
    h.nblocks = h.payload_bytes / 64; /* 64-byte units: the record and each image are multiples */
    h.payload_checksum = sbloom_xxh3(payload, (size_t)h.payload_bytes);
    sbloom_header_pack(&h, out);
    return SBLOOM_OK;
}

/* The window record, checked field by field: SBLOOM_OK with the window in w. */
static int read_record(windowed *w, const uint8_t *r, uint64_t left)
{
    if (left < RECORD_BYTES || memcmp(r, record_magic, sizeof record_magic) != 0)
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "no window record");
    uint32_t periods = sbloom_get_le32(r + 8), ngens = sbloom_get_le32(r + 12);
    uint64_t period = sbloom_get_le64(r + 16), current = sbloom_get_le64(r + 24);
    if (periods == 0 || periods > SBLOOM_WINDOW_MAX_PERIODS || ngens != periods + 1 ||
        period == 0 || current > UINT64_MAX / period)
        return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                "window record: %u periods, %u generations, period %llu, at "
                                "period %llu",
                                periods, ngens, (unsigned long long)period,
                                (unsigned long long)current);
    for (uint32_t at = 32 + 8 * ngens; at < RECORD_BYTES; at++)
        if (r[at] != 0)
            return sbloom_fail_with(SBLOOM_E_CORRUPT, "window record: byte %u is set", at);
    w->periods = periods;
    w->ngens = ngens;
    w->period = period;
    w->current = current;
    for (uint32_t i = 0; i < ngens; i++) {
        uint64_t q = sbloom_get_le64(r + 32 + 8 * i);
        /* a generation began in one of the last G + 1 periods, in its own slot, or not yet;
         * the current one has begun */
        int fits = q == NOT_STARTED ? i != current % ngens
                                    : q <= current && current - q < ngens && q % ngens == i;
        if (!fits)
            return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                    "window record: generation %u began at period %llu, now %llu",
                                    i, (unsigned long long)q, (unsigned long long)current);
        w->started[i] = q;
    }
    return SBLOOM_OK;
}

int sbloom_windowed_from_payload(sbloom_t **out, const sbloom_header *h, const uint8_t *payload)
{
    *out = NULL;
    if (!(h->flags & 1u)) /* a windowed filter always has its plan */
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "inconsistent header: a windowed filter "
                                                  "without its plan");
    windowed record;
    int rc = read_record(&record, payload, h->payload_bytes);
    if (rc != SBLOOM_OK)
        return rc;
    sbloom_t *f;
    rc = new_windowed(&f, h->planned_items, h->planned_fpp, record.periods, record.period,
                      record.current);
    if (rc != SBLOOM_OK)
        return rc;
    windowed *w = state_of(f);
    memcpy(w->started, record.started, sizeof w->started);
    w->ngens = 0; /* counts the generations read, for a release on failure */
    uint64_t at = RECORD_BYTES, size = 0;
    uint64_t per = generation_items(h->planned_items, record.periods);
    double rate = generation_rate(h->planned_fpp, record.periods);
    for (uint32_t i = 0; rc == SBLOOM_OK && i < record.ngens; i++) {
        rc = sbloom_part_read_image(&w->gens[i], "generation", payload + at, h->payload_bytes - at,
                                    i, per, rate, &size);
        if (rc == SBLOOM_OK) {
            w->ngens++;
            at += size;
            f->isa = w->gens[i].core.isa;
        }
    }
    uint64_t items = sbloom_parts_items(w->gens, w->ngens);
    if (rc == SBLOOM_OK && (at != h->payload_bytes || items != h->items))
        rc = sbloom_fail_with(SBLOOM_E_CORRUPT,
                              "header counts %llu items in %llu bytes, its generations %llu in "
                              "%llu",
                              (unsigned long long)h->items, (unsigned long long)h->payload_bytes,
                              (unsigned long long)items, (unsigned long long)at);
    if (rc != SBLOOM_OK) {
        sbloom_object_free(f);
        return rc == SBLOOM_E_TRUNCATED || rc == SBLOOM_E_FORMAT ? SBLOOM_E_CORRUPT : rc;
    }
    *out = f;
    return SBLOOM_OK;
}

const sbloom_mode sbloom_mode_windowed = {
    .name = "windowed",
    .has_core = 0,
    .takes_inline = 0,
    .run = windowed_run,
    .add_one = windowed_add_one,
    .contains_one = windowed_contains_one,
    .items = windowed_items,
    .bytes = windowed_bytes,
    .capacity = windowed_capacity,
    .clone = windowed_clone,
    .clear = windowed_clear,
    .stats = windowed_stats,
    .combine = windowed_combine,
    .image_bytes = windowed_image_bytes,
    .write_image = windowed_write_image,
    .release = windowed_release,
    .cores = windowed_cores,
    .core_at = windowed_core_at,
};
