/*
 * The windowed filter's file form (docs/FORMAT.md, layout 6): the header, a 192-byte window
 * record (periods, period, current period, each generation's first period; with one image each
 * generation's keys; the form byte), then for G <= 3 the lines as one image, exactly as they lie
 * in memory, so that a file mapping (sbloom_map) uses the record's clock and counts and the lines
 * in place, and processes mapping it concurrently share them; for more periods each generation's
 * complete image in ring order (gathered from the lines, spread back when read); for a growing
 * window (form 2) each ring as a whole windowed image. Every field is checked before it is used.
 */
#define _POSIX_C_SOURCE 200809L /* msync in -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../base/endian.h"
#include "../base/hash.h"
#include "windowed_ring.h"

#define RECORD_BYTES 192
static const uint8_t record_magic[8] = {'S', 'B', 'W', 'I', 'N', 'D', 'O', 'W'};

/* The record's fields (docs/FORMAT.md), at their offsets in the record. */
#define RECORD_CURRENT_AT 24
#define RECORD_STARTS_AT 32
#define RECORD_ROTATING_AT 176 /* a rotation's target while one is in progress, else 0 */
#define RECORD_FORM_AT                                                                             \
    184 /* 1: the lines as one image (G <= 3), 0: an image per generation,                         \
         * FORM_RINGS: a growing window's rings, each a whole windowed image */
#define FORM_RINGS 2

/* ---- File form: the header, the window record, the generations' images ---- */

/* G <= 3 (slots, or adjacent lines of at most 4 generations): the lines are written as they lie,
 * one image, and each generation's keys go in the record; a file mapping uses them in place.
 * More generations: an image per generation, gathered from the lines. */
static int one_image(const windowed *w)
{
    return w->ngens <= SLOT_GENERATIONS || ages_form(w); /* (ages: at most 8 generations) */
}

/* A ring's image: the header, the record, the generations. */
static uint64_t one_ring_bytes(const windowed *w)
{
    uint32_t images = one_image(w) ? 1 : w->ngens;
    return SBLOOM_HEADER_BYTES + RECORD_BYTES + images * SBLOOM_HEADER_BYTES + w->lines.bytes;
}

/* A growing window: the header, a record of form 2 (the rings' count), each ring's image. */
uint64_t sbloom_ring_image_bytes(const windowed *w)
{
    if (!w->growing)
        return one_ring_bytes(w);
    uint64_t sum = SBLOOM_HEADER_BYTES + RECORD_BYTES;
    for (; w; w = w->older)
        sum += one_ring_bytes(w);
    return sum;
}

/* The image header of the lines as one image: each generation's plan, the keys of all. */
static void describe_lines(const windowed *w, sbloom_header *h)
{
    sbloom_header_describe(h, &w->lines, sbloom_ring_items(w),
                           generation_items(w->plan_items, w->periods),
                           generation_rate(w->plan_fpp, w->periods));
}

/* The images after the record (the record's counts with one image), to out; the end, or NULL
 * without memory. */
static uint8_t *write_generations(const windowed *w, uint8_t *record, uint8_t *out)
{
    if (one_image(w)) {
        record[RECORD_FORM_AT] = 1;
        for (uint32_t i = 0; i < w->ngens; i++)
            sbloom_put_le64(record + RECORD_STARTS_AT + 8 * w->ngens + 8 * i,
                            __atomic_load_n(&w->items[i], __ATOMIC_RELAXED));
        sbloom_header h;
        describe_lines(w, &h);
        sbloom_header_pack(&h, out);
        sbloom_core_payload_out(&w->lines, out + SBLOOM_HEADER_BYTES);
        return out + SBLOOM_HEADER_BYTES + w->lines.bytes;
    }
    sbloom_part one = {.planned_items = generation_items(w->plan_items, w->periods),
                       .planned_fpp = generation_rate(w->plan_fpp, w->periods)};
    if (sbloom_ring_generation_core(w, &one.core) != SBLOOM_OK)
        return NULL;
    for (uint32_t slot = 0; slot < w->ngens; slot++) {
        sbloom_ring_gather(w, slot, &one.core);
        one.items = w->items[slot];
        out = sbloom_parts_write_images(&one, 1, out);
    }
    sbloom_core_release(&one.core);
    return out;
}

/* The outer header of a windowed file (items keys, planned for n at p) whose payload (record and
 * images) is at payload. */
static void describe_file(uint64_t items, uint64_t n, double p, int ages, const uint8_t *payload,
                          uint64_t payload_bytes, sbloom_header *h)
{
    sbloom_header_start(h, SBLOOM_LAYOUT_WINDOWED, items, n, p);
    if (ages) /* its lines are a fingerprint layout: readers before them refuse it */
        h->version = SBLOOM_FORMAT_VERSION_FP;
    h->payload_bytes = payload_bytes;
    h->nblocks = payload_bytes / 64; /* 64-byte units: the record and each image are multiples */
    h->payload_checksum = sbloom_xxh3(payload, (size_t)payload_bytes);
}

/* The window record's first fields (the rest zero): magic, periods, generations, period, clock. */
static void write_record_head(const windowed *w, uint8_t *record)
{
    memset(record, 0, RECORD_BYTES);
    memcpy(record, record_magic, sizeof record_magic);
    sbloom_put_le32(record + 8, w->periods);
    sbloom_put_le32(record + 12, w->ngens);
    sbloom_put_le64(record + 16, w->period);
    sbloom_put_le64(record + RECORD_CURRENT_AT, current_period(w));
    if (!w->growing) /* (another process may be rotating a shared mapping as it is copied) */
        sbloom_put_le64(record + RECORD_ROTATING_AT,
                        __atomic_load_n(w->rotating, __ATOMIC_ACQUIRE));
}

/* A ring's whole image at out (ring_image_bytes long): the end, or NULL without memory. */
static uint8_t *ring_write_image(const windowed *w, uint8_t *out)
{
    uint8_t *payload = out + SBLOOM_HEADER_BYTES;
    write_record_head(w, payload);
    for (uint32_t i = 0; i < w->ngens; i++)
        sbloom_put_le64(payload + RECORD_STARTS_AT + 8 * i, w->started[i]);
    uint8_t *end = write_generations(w, payload, payload + RECORD_BYTES);
    if (!end)
        return NULL;
    sbloom_header h;
    describe_file(sbloom_ring_items(w), w->plan_items, w->plan_fpp, ages_form(w), payload,
                  (uint64_t)(end - payload), &h);
    sbloom_header_pack(&h, out);
    return end;
}

int sbloom_ring_write_image(const windowed *w, uint64_t n, double p, uint8_t *out)
{
    if (!w->growing)
        return ring_write_image(w, out) ? SBLOOM_OK : SBLOOM_E_NOMEM;
    uint8_t *payload = out + SBLOOM_HEADER_BYTES, *end = payload + RECORD_BYTES;
    uint32_t rings = sbloom_ring_count(w);
    write_record_head(w, payload);
    payload[RECORD_FORM_AT] = FORM_RINGS;
    sbloom_put_le32(payload + RECORD_STARTS_AT, rings);
    for (uint32_t k = 0; k < rings && end; k++) /* oldest first */
        end = ring_write_image(sbloom_ring_at(w, k), end);
    if (!end)
        return SBLOOM_E_NOMEM;
    sbloom_header h;
    uint64_t items = 0;
    for (const windowed *r = w; r; r = r->older)
        items += sbloom_ring_items(r);
    describe_file(items, n, p, 0, payload, (uint64_t)(end - payload), &h); /* (Bloom rings) */
    sbloom_header_pack(&h, out);
    return SBLOOM_OK;
}

/* A file mapping brought up to date: the counts of the lines' image and of the file, their
 * checksums, then msync. The clock and counts in the record are live already. */
int sbloom_ring_sync(windowed *w)
{
    if (!w->image)
        return SBLOOM_OK;
    uint8_t *payload = w->image + SBLOOM_HEADER_BYTES;
    sbloom_header h;
    describe_lines(w, &h);
    sbloom_header_pack(&h, payload + RECORD_BYTES);
    describe_file(sbloom_ring_items(w), w->plan_items, w->plan_fpp, ages_form(w), payload,
                  RECORD_BYTES + SBLOOM_HEADER_BYTES + w->lines.bytes, &h);
    sbloom_header_pack(&h, w->image);
    if (msync(w->lines.map_base, (size_t)w->lines.map_bytes, MS_SYNC) != 0)
        return SBLOOM_E_IO;
    return SBLOOM_OK;
}

/* The window record as read: the window, the clock, each generation's start and (one image)
 * keys, and the form. */
typedef struct window_record {
    uint32_t periods, ngens;
    uint64_t period, current;
    uint64_t rotating; /* a rotation's target (one a kill cut short), or 0 */
    uint64_t started[MAX_GENERATIONS], items[MAX_GENERATIONS];
    int one_image;
    uint32_t rings; /* FORM_RINGS (a growing window): its rings; else 0 */
} window_record;

/* The window record, checked field by field: SBLOOM_OK with it in rec. */
static int read_record(window_record *rec, const uint8_t *r, uint64_t left)
{
    if (left < RECORD_BYTES || memcmp(r, record_magic, sizeof record_magic) != 0)
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "no window record");
    uint32_t periods = sbloom_get_le32(r + 8), ngens = sbloom_get_le32(r + 12);
    uint64_t period = sbloom_get_le64(r + 16), current = sbloom_get_le64(r + RECORD_CURRENT_AT);
    if (periods == 0 || periods > SBLOOM_WINDOW_MAX_PERIODS || ngens != periods + 1 ||
        period == 0 || current > UINT64_MAX / period)
        return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                "window record: %u periods, %u generations, period %llu, at "
                                "period %llu",
                                periods, ngens, (unsigned long long)period,
                                (unsigned long long)current);
    uint8_t form = r[RECORD_FORM_AT];
    if (form > FORM_RINGS || (form == 1 && ngens > AGES_MAX_GENERATIONS)) /* (more than 4: ages) */
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "window record: form %u for %u periods", form,
                                periods);
    uint32_t rings = form == FORM_RINGS ? sbloom_get_le32(r + RECORD_STARTS_AT) : 0;
    if (form == FORM_RINGS && (rings == 0 || rings > GROWTH_STEPS))
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "window record: %u rings", rings);
    /* the rings' count; or the starts, then (one image) the keys; a ring's rotation target */
    uint32_t used =
        form == FORM_RINGS ? RECORD_STARTS_AT + 4 : RECORD_STARTS_AT + 8 * ngens * (form ? 2 : 1);
    uint64_t rotating = form == FORM_RINGS ? 0 : sbloom_get_le64(r + RECORD_ROTATING_AT);
    for (uint32_t at = used; at < RECORD_BYTES; at++)
        if (r[at] != 0 && at != RECORD_FORM_AT &&
            !(form != FORM_RINGS && at >= RECORD_ROTATING_AT && at < RECORD_ROTATING_AT + 8))
            return sbloom_fail_with(SBLOOM_E_CORRUPT, "window record: byte %u is set", at);
    if (rotating != 0 && (rotating <= current || rotating > UINT64_MAX / period))
        return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                "window record: a rotation to period %llu, now %llu",
                                (unsigned long long)rotating, (unsigned long long)current);
    rec->periods = periods;
    rec->ngens = ngens;
    rec->period = period;
    rec->current = current;
    rec->rotating = rotating;
    rec->one_image = form == 1;
    rec->rings = rings;
    for (uint32_t i = 0; rings && i < ngens; i++) { /* each ring's record has its own */
        rec->started[i] = NOT_STARTED;
        rec->items[i] = 0;
    }
    for (uint32_t i = 0; !rings && i < ngens; i++) {
        uint64_t q = sbloom_get_le64(r + RECORD_STARTS_AT + 8 * i);
        /* a generation began in one of the last G + 1 periods, in its own slot, or not yet;
         * the current one has begun. While a rotation is in progress (a kill cut it short), the
         * generations it has cleared already began in periods up to its target. */
        uint64_t last = rotating && q > current ? rotating : current;
        int fits = q == NOT_STARTED ? i != current % ngens
                                    : q <= last && last - q < ngens && q % ngens == i;
        if (!fits)
            return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                    "window record: generation %u began at period %llu, now %llu",
                                    i, (unsigned long long)q, (unsigned long long)current);
        rec->started[i] = q;
        rec->items[i] = form ? sbloom_get_le64(r + RECORD_STARTS_AT + 8 * ngens + 8 * i) : 0;
        if (q == NOT_STARTED && rec->items[i] != 0)
            return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                    "window record: generation %u has keys and never began", i);
    }
    return SBLOOM_OK;
}

/* The lines' image (one image) checked against the plan: the layout and count of lines one
 * generation's plan gives for it (counting: slots, a line a group; 512-bit: G + 1 lines a group),
 * and each generation's keys in the record at most its bits (a key counted new set one at least).
 * A file saved whole has its count the record's; a mapping's record counts live (`live`: adds since
 * the last sync are not in the image's header yet). SBLOOM_OK with the groups and lines a group. */
static int check_lines_image(const sbloom_header *h, const sbloom_header *ih,
                             const window_record *rec, int live, uint64_t *ngroups,
                             uint32_t *per_group)
{
    uint64_t per = generation_items(h->planned_items, rec->periods);
    double rate = generation_rate(h->planned_fpp, rec->periods);
    sbloom_window_form form = sbloom_window_form_of(ih->layout);
    int ages = form == SBLOOM_WINDOW_AGES;
    *per_group = sbloom_window_group_lines(form, rec->ngens);
    sbloom_plan plan = sbloom_plan_init();
    int rc = ages ? sbloom_ring_ages_plan(h->planned_items, h->planned_fpp, rec->periods, &plan)
                  : sbloom_plan_for_layout(per, rate, ih->layout, &plan);
    if (!ages && rec->ngens > SLOT_GENERATIONS)
        return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                "window record: one image of %u generations of %s", rec->ngens,
                                sbloom_layout_name(ih->layout));
    if (ages != (h->version == SBLOOM_FORMAT_VERSION_FP))
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "format version %u for lines of %s", h->version,
                                sbloom_layout_name(ih->layout));
    uint64_t lines = plan.bytes / 64, spill = ages ? sbloom_core_fp_spill_lines(lines) : 0;
    if (rc != SBLOOM_OK || ih->nblocks % *per_group != 0 || plan.layout != ih->layout ||
        (ih->nblocks - spill) / *per_group != lines)
        return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                "generations: %llu blocks of %s, not %u x %llu for %llu items at "
                                "rate %g",
                                (unsigned long long)ih->nblocks, sbloom_layout_name(ih->layout),
                                *per_group, (unsigned long long)(plan.bytes / 64),
                                (unsigned long long)per, rate);
    *ngroups = (ih->nblocks - spill) / *per_group;
    /* a generation's bits: 512 a line, or one a 4-bit slot (128 a line); ages: fewer entries
     * than 64 a line */
    uint64_t bits = *ngroups * sbloom_window_generation_bits(form);
    uint64_t items = 0;
    for (uint32_t i = 0; i < rec->ngens; i++) {
        if (rec->items[i] > bits)
            return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                    "window record: generation %u counts %llu keys in %llu bits", i,
                                    (unsigned long long)rec->items[i], (unsigned long long)bits);
        items += rec->items[i]; /* (at most 16 x 2^38 bits: no overflow) */
    }
    if (!live && items != ih->items)
        return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                "generations: their image counts %llu items, the record %llu",
                                (unsigned long long)ih->items, (unsigned long long)items);
    return SBLOOM_OK;
}

/* One image: the lines as written, checked, become the ring's. */
static int read_one_image(windowed *w, const sbloom_header *h, const window_record *rec,
                          const uint8_t *payload)
{
    sbloom_part one;
    uint64_t size = 0, per = generation_items(h->planned_items, rec->periods), ngroups;
    double rate = generation_rate(h->planned_fpp, rec->periods);
    uint32_t per_group;
    sbloom_header ih;
    int rc = sbloom_part_read_image(&one, "generations", payload + RECORD_BYTES,
                                    h->payload_bytes - RECORD_BYTES, 0, per, rate,
                                    SBLOOM_PART_SLOTS | SBLOOM_PART_FINGERPRINTS, &size);
    if (rc != SBLOOM_OK)
        return rc;
    sbloom_header_parse(payload + RECORD_BYTES, size, &ih); /* (parsed above already) */
    rc = check_lines_image(h, &ih, rec, 0, &ngroups, &per_group);
    if (rc == SBLOOM_OK && (RECORD_BYTES + size != h->payload_bytes || ih.items != h->items))
        rc = sbloom_fail_with(SBLOOM_E_CORRUPT,
                              "header counts %llu items in %llu bytes, the generations %llu in "
                              "%llu",
                              (unsigned long long)h->items, (unsigned long long)h->payload_bytes,
                              (unsigned long long)ih.items,
                              (unsigned long long)(RECORD_BYTES + size));
    if (rc != SBLOOM_OK) {
        sbloom_core_release(&one.core);
        return rc;
    }
    w->lines = one.core; /* the image's blocks become the lines */
    w->ngroups = ngroups;
    w->per_group = per_group;
    w->age_bits =
        sbloom_window_form_of(ih.layout) == SBLOOM_WINDOW_AGES ? age_bits_for(w->ngens) : 0;
    return SBLOOM_OK;
}

/* An image per generation (G > 3, and files written before the form byte): each spread into
 * its lines. */
static int read_images(windowed *w, const sbloom_header *h, const uint8_t *payload)
{
    uint64_t at = RECORD_BYTES, size = 0, items = 0;
    uint64_t per = generation_items(h->planned_items, w->periods);
    double rate = generation_rate(h->planned_fpp, w->periods);
    int rc = SBLOOM_OK;
    for (uint32_t i = 0; rc == SBLOOM_OK && i < w->ngens; i++) {
        sbloom_part one;
        rc = sbloom_part_read_image(&one, "generation", payload + at, h->payload_bytes - at, i, per,
                                    rate, 0, &size);
        if (rc != SBLOOM_OK)
            break;
        if (i == 0)
            rc = sbloom_ring_make_lines(w, one.core.nblocks, one.core.layout);
        if (rc == SBLOOM_OK &&
            (one.core.nblocks != w->ngroups || one.core.layout != w->lines.layout))
            rc = sbloom_fail_with(
                SBLOOM_E_CORRUPT, "generation %u: %llu blocks of %s, generation 0 %llu of %s", i,
                (unsigned long long)one.core.nblocks, sbloom_layout_name(one.core.layout),
                (unsigned long long)w->ngroups, sbloom_layout_name(w->lines.layout));
        if (rc == SBLOOM_OK) {
            sbloom_ring_spread(w, i, &one.core);
            w->items[i] = one.items;
            items += one.items;
            at += size;
        }
        sbloom_core_release(&one.core);
    }
    if (rc == SBLOOM_OK && (at != h->payload_bytes || items != h->items))
        rc = sbloom_fail_with(SBLOOM_E_CORRUPT,
                              "header counts %llu items in %llu bytes, its generations %llu in "
                              "%llu",
                              (unsigned long long)h->items, (unsigned long long)h->payload_bytes,
                              (unsigned long long)items, (unsigned long long)at);
    return rc;
}

/* A ring for a validated header and record: the window, the clock and the starts (NULL without
 * memory). */
static windowed *ring_for(const sbloom_header *h, const window_record *rec)
{
    windowed *w = sbloom_ring_alloc(h->planned_items, h->planned_fpp, rec->periods, rec->period,
                                    rec->current);
    for (uint32_t i = 0; w && i < rec->ngens; i++) {
        w->started[i] = rec->started[i];
        w->items[i] = rec->items[i];
    }
    if (w)
        *w->rotating = rec->rotating;
    return w;
}

static int read_header_and_record(const sbloom_header *h, const uint8_t *payload,
                                  window_record *rec)
{
    if (!(h->flags & 1u)) /* a windowed filter always has its plan */
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "inconsistent header: a windowed filter "
                                                  "without its plan");
    int rc = read_record(rec, payload, h->payload_bytes);
    /* an image per generation and a growing window's rings are Bloom filters, written with
     * format version 1 (one image of the lines is checked with its layout: version 2 for ages) */
    if (rc == SBLOOM_OK && !rec->one_image && h->version != SBLOOM_FORMAT_VERSION)
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "format version %u for a window of %s",
                                h->version, rec->rings ? "rings" : "an image per generation");
    return rc;
}

/* A ring from its validated header and checksummed payload (of form 0 or 1). */
static int ring_from_payload(windowed **out, const sbloom_header *h, const window_record *rec,
                             const uint8_t *payload)
{
    windowed *w = ring_for(h, rec);
    if (!w)
        return SBLOOM_E_NOMEM;
    int rc = rec->one_image ? read_one_image(w, h, rec, payload) : read_images(w, h, payload);
    if (rc != SBLOOM_OK) {
        sbloom_ring_free(w);
        return rc;
    }
    *out = w;
    return SBLOOM_OK;
}

/* Ring k of a growing window at `at` (left bytes remain): a whole windowed image, checksummed,
 * of the window and clock of the file's record, planned as step `step` of the file's plan. */
static int read_ring(windowed **out, const sbloom_header *h, const window_record *outer, uint32_t k,
                     uint32_t step, const uint8_t *at, uint64_t left, uint64_t *size)
{
    if (left < SBLOOM_HEADER_BYTES)
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "ring %u: truncated", k);
    uint64_t payload_bytes = sbloom_header_payload_bytes(at);
    if (payload_bytes > left - SBLOOM_HEADER_BYTES)
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "ring %u: %llu bytes, more than is left", k,
                                (unsigned long long)payload_bytes);
    *size = SBLOOM_HEADER_BYTES + payload_bytes;
    sbloom_header rh;
    window_record rec;
    const uint8_t *payload = at + SBLOOM_HEADER_BYTES;
    int rc = sbloom_header_parse(at, *size, &rh);
    if (rc == SBLOOM_OK && rh.layout != SBLOOM_LAYOUT_WINDOWED)
        rc = sbloom_fail_with(SBLOOM_E_CORRUPT, "layout %s", sbloom_layout_name(rh.layout));
    if (rc == SBLOOM_OK && sbloom_xxh3(payload, (size_t)rh.payload_bytes) != rh.payload_checksum)
        rc = sbloom_fail_with(SBLOOM_E_CORRUPT, "its checksum does not match");
    if (rc == SBLOOM_OK)
        rc = read_header_and_record(&rh, payload, &rec);
    /* (a growing window is never mapped: no rotation of its rings can have been cut short) */
    if (rc == SBLOOM_OK && (rec.rings || rec.rotating || rec.periods != outer->periods ||
                            rec.period != outer->period || rec.current != outer->current ||
                            rh.planned_items != ring_items_for(h->planned_items, step) ||
                            rh.planned_fpp != ring_rate_for(h->planned_fpp, step)))
        rc =
            sbloom_fail_with(SBLOOM_E_CORRUPT,
                             "%llu items a window at rate %g, %u periods of %llu at period %llu: "
                             "not step %u of the file's plan and window",
                             (unsigned long long)rh.planned_items, rh.planned_fpp, rec.periods,
                             (unsigned long long)rec.period, (unsigned long long)rec.current, step);
    if (rc == SBLOOM_OK)
        rc = ring_from_payload(out, &rh, &rec, payload);
    if (rc != SBLOOM_OK) {
        char why[200];
        snprintf(why, sizeof why, "%s", sbloom_error_detail());
        return sbloom_fail_with(rc, "ring %u: %s", k, why[0] ? why : sbloom_strerror(rc));
    }
    return SBLOOM_OK;
}

/* The step whose plan is `items` keys a window for a growing window that began at `first`: 1
 * with it in *step, 0 for none. */
static int step_of(uint64_t first, uint64_t items, uint32_t *step)
{
    for (uint32_t i = 0; i < GROWTH_STEPS; i++)
        if (ring_items_for(first, i) == items) {
            *step = i;
            return 1;
        }
    return 0;
}

/* A growing window's rings, oldest first, each of a later step than the one before: the newest
 * takes the keys. */
static int read_rings(windowed **out, const sbloom_header *h, const window_record *rec,
                      const uint8_t *payload)
{
    windowed *newest = NULL;
    uint64_t at = RECORD_BYTES, size = 0, items = 0;
    int rc = SBLOOM_OK;
    for (uint32_t k = 0; rc == SBLOOM_OK && k < rec->rings; k++) {
        windowed *w = NULL;
        uint32_t step = 0;
        /* the ring's step, from its plan (read_ring checks the rest of it) */
        uint64_t ring_plan = h->payload_bytes - at >= SBLOOM_HEADER_BYTES
                                 ? sbloom_header_planned_items(payload + at)
                                 : 0;
        if (!step_of(h->planned_items, ring_plan, &step) || (newest && step <= newest->step))
            rc = sbloom_fail_with(SBLOOM_E_CORRUPT,
                                  "ring %u: planned for %llu items a window, not a later step of "
                                  "%llu",
                                  k, (unsigned long long)ring_plan,
                                  (unsigned long long)h->planned_items);
        else
            rc = read_ring(&w, h, rec, k, step, payload + at, h->payload_bytes - at, &size);
        if (rc == SBLOOM_OK) {
            w->growing = 1;
            w->step = step;
            w->older = newest;
            newest = w;
            items += sbloom_ring_items(w);
            at += size;
        }
    }
    if (rc == SBLOOM_OK && (at != h->payload_bytes || items != h->items))
        rc = sbloom_fail_with(SBLOOM_E_CORRUPT,
                              "header counts %llu items in %llu bytes, its rings %llu in %llu",
                              (unsigned long long)h->items, (unsigned long long)h->payload_bytes,
                              (unsigned long long)items, (unsigned long long)at);
    if (rc != SBLOOM_OK) {
        sbloom_ring_free(newest);
        return rc;
    }
    *out = newest;
    return SBLOOM_OK;
}

int sbloom_ring_read(windowed **out, const sbloom_header *h, const uint8_t *payload)
{
    *out = NULL;
    window_record rec;
    int rc = read_header_and_record(h, payload, &rec);
    if (rc == SBLOOM_OK)
        rc = rec.rings ? read_rings(out, h, &rec, payload)
                       : ring_from_payload(out, h, &rec, payload);
    return rc == SBLOOM_E_TRUNCATED || rc == SBLOOM_E_FORMAT ? SBLOOM_E_CORRUPT : rc;
}

int sbloom_ring_map(windowed **out, uint8_t *base, uint64_t size, const sbloom_header *h)
{
    *out = NULL;
    uint8_t *payload = base + SBLOOM_HEADER_BYTES;
    window_record rec;
    int rc = read_header_and_record(h, payload, &rec);
    if (rc != SBLOOM_OK)
        return rc;
    if (rec.rings)
        return sbloom_fail_with(SBLOOM_E_LAYOUT, "a growing windowed filter is loaded, not "
                                                 "mapped (its rings come and go)");
    if (!rec.one_image)
        return sbloom_fail_with(SBLOOM_E_LAYOUT,
                                "a windowed filter of %u periods is loaded, not "
                                "mapped (3 at most)",
                                rec.periods);
    uint64_t ngroups;
    uint32_t per_group;
    sbloom_header ih;
    uint8_t *at = payload + RECORD_BYTES;
    uint64_t left = size - SBLOOM_HEADER_BYTES - RECORD_BYTES;
    if (h->payload_bytes < RECORD_BYTES + SBLOOM_HEADER_BYTES)
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "generations: truncated");
    rc = sbloom_header_parse(at, left, &ih);
    if (rc == SBLOOM_OK && sbloom_window_form_of(ih.layout) == SBLOOM_WINDOW_NONE)
        rc = sbloom_fail_with(SBLOOM_E_CORRUPT, "generations: layout %s",
                              sbloom_layout_name(ih.layout));
    /* the counts in the record are live while processes add: the headers catch up at a sync */
    if (rc == SBLOOM_OK)
        rc = check_lines_image(h, &ih, &rec, 1, &ngroups, &per_group);
    windowed *w = NULL;
    if (rc == SBLOOM_OK && !(w = ring_for(h, &rec)))
        rc = SBLOOM_E_NOMEM;
    if (rc != SBLOOM_OK)
        return rc;
    rc = sbloom_core_init(&w->lines, ih.payload_bytes, ih.layout, SBLOOM_OWNER_CALLER);
    if (rc != SBLOOM_OK) {
        sbloom_ring_free(w);
        return rc;
    }
    w->lines.blocks = at + SBLOOM_HEADER_BYTES;
    w->lines.owner = SBLOOM_OWNER_FILE_MAP; /* unmapped with the filter */
    w->lines.map_base = base;
    w->lines.map_bytes = size;
    w->ngroups = ngroups;
    w->per_group = per_group;
    w->age_bits =
        sbloom_window_form_of(ih.layout) == SBLOOM_WINDOW_AGES ? age_bits_for(w->ngens) : 0;
    w->image = base;
    /* the clock, the starts and the counts: the record's own words from now on */
    w->current = (uint64_t *)(payload + RECORD_CURRENT_AT);
    w->started = (uint64_t *)(payload + RECORD_STARTS_AT);
    w->items = (uint64_t *)(payload + RECORD_STARTS_AT + 8 * rec.ngens);
    w->rotating = (uint64_t *)(payload + RECORD_ROTATING_AT);
    *out = w;
    return SBLOOM_OK;
}
