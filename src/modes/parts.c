/*
 * The cores of a composite mode: probing them all, adding to one, their statistics, copies,
 * unions and file images. Every core is a one-line filter (a 512-bit Bloom block, or a stage's
 * fingerprint line), probed by the kernels of the active table; a key's hash is computed once and
 * each core takes its own line from it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "parts.h"

int sbloom_part_init(sbloom_part *part, uint64_t planned_items, double planned_fpp, int any_family)
{
    sbloom_plan plan = sbloom_plan_init();
    int rc = sbloom_plan_stage(planned_items, planned_fpp, any_family, &plan);
    if (rc == SBLOOM_OK)
        rc = sbloom_core_init(&part->core, plan.bytes, plan.layout, SBLOOM_OWNER_HEAP);
    if (rc != SBLOOM_OK)
        return rc;
    part->items = 0;
    part->planned_items = planned_items;
    part->planned_fpp = planned_fpp;
    return SBLOOM_OK;
}

void sbloom_parts_release(sbloom_part *parts, uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to; i++)
        sbloom_core_release(&parts[i].core);
}

void sbloom_parts_probe(const sbloom_part *parts, uint32_t count, uint32_t skip,
                        const uint64_t *hashes, size_t n, uint8_t *present)
{
    uint8_t answer[SBLOOM_PART_STEP];
    memset(present, 0, n);
    for (uint32_t i = 0; i < count; i++) {
        if (i == skip)
            continue;
        sbloom_core_run(&parts[i].core, SBLOOM_OP_CONTAINS, hashes, n, answer);
        for (size_t j = 0; j < n; j++)
            present[j] |= answer[j];
    }
}

uint64_t sbloom_parts_insert(sbloom_part *parts, uint32_t count, uint32_t target,
                             const uint64_t *hashes, size_t n, uint8_t *is_new)
{
    uint8_t held[SBLOOM_PART_STEP], answer[SBLOOM_PART_STEP];
    uint64_t absent[SBLOOM_PART_STEP];
    size_t where[SBLOOM_PART_STEP], m = 0;
    sbloom_parts_probe(parts, count, target, hashes, n, held);
    for (size_t j = 0; j < n; j++)
        if (!held[j]) {
            absent[m] = hashes[j];
            where[m++] = j;
        }
    /* the target's own test-and-add decides the rest, repeats in the batch included */
    uint64_t fresh = sbloom_core_run(&parts[target].core, SBLOOM_OP_INSERT, absent, m, answer);
    parts[target].items += fresh & ~SBK_FP_REFUSED;
    if (is_new) {
        memset(is_new, 0, n);
        for (size_t j = 0; j < m; j++)
            is_new[where[j]] = answer[j];
    }
    return fresh;
}

uint64_t sbloom_parts_contains(const sbloom_part *parts, uint32_t count, const uint64_t *hashes,
                               size_t n, uint8_t *results)
{
    uint64_t found = 0;
    uint8_t present[SBLOOM_PART_STEP];
    for (size_t at = 0; at < n; at += SBLOOM_PART_STEP) {
        size_t len = n - at < SBLOOM_PART_STEP ? n - at : SBLOOM_PART_STEP;
        sbloom_parts_probe(parts, count, count, hashes + at, len, present);
        for (size_t j = 0; j < len; j++)
            found += present[j];
        if (results)
            memcpy(results + at, present, len);
    }
    return found;
}

uint64_t sbloom_parts_remove(sbloom_part *parts, uint32_t count, const uint64_t *hashes, size_t n,
                             uint8_t *removed)
{
    uint64_t gone = 0;
    for (size_t at = 0; at < n; at += SBLOOM_PART_STEP) {
        size_t len = n - at < SBLOOM_PART_STEP ? n - at : SBLOOM_PART_STEP;
        uint8_t done[SBLOOM_PART_STEP] = {0}, answer[SBLOOM_PART_STEP];
        uint64_t left[SBLOOM_PART_STEP];
        size_t where[SBLOOM_PART_STEP];
        for (uint32_t i = count; i-- > 0;) { /* newest first: where a key was added last */
            size_t m = 0;
            for (size_t j = 0; j < len; j++)
                if (!done[j]) {
                    left[m] = hashes[at + j];
                    where[m++] = j;
                }
            if (m == 0)
                break;
            uint64_t out = sbloom_core_run(&parts[i].core, SBLOOM_OP_REMOVE, left, m, answer);
            parts[i].items -= out < parts[i].items ? out : parts[i].items;
            gone += out;
            for (size_t j = 0; j < m; j++)
                done[where[j]] |= answer[j];
        }
        if (removed)
            memcpy(removed + at, done, len);
    }
    return gone;
}

int sbloom_parts_can_remove(const sbloom_part *parts, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        if (!sbloom_family_of(parts[i].core.layout)->removes)
            return 0;
    return 1;
}

/* What the parts hold together: their keys, their plans, or their bytes. */
enum part_sum { PART_ITEMS, PART_PLANNED, PART_BYTES };

static uint64_t sum_parts(const sbloom_part *parts, uint32_t count, enum part_sum what)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < count; i++)
        sum += what == PART_ITEMS     ? parts[i].items
               : what == PART_PLANNED ? parts[i].planned_items
                                      : parts[i].core.bytes;
    return sum;
}

uint64_t sbloom_parts_items(const sbloom_part *parts, uint32_t count)
{
    return sum_parts(parts, count, PART_ITEMS);
}

uint64_t sbloom_parts_planned(const sbloom_part *parts, uint32_t count)
{
    return sum_parts(parts, count, PART_PLANNED);
}

uint64_t sbloom_parts_bytes(const sbloom_part *parts, uint32_t count)
{
    return sum_parts(parts, count, PART_BYTES);
}

void sbloom_parts_tally_add(sbloom_parts_tally *t, const sbloom_core *core, int sampled)
{
    if (!t->started) {
        t->miss_product = 1.0;
        t->started = 1;
    }
    sbloom_stats st = sbloom_stats_init();
    sbloom_core_stats(core, sampled, &st);
    double bits = 8.0 * (double)core->bytes;
    t->fill_bits += st.fill * bits;
    t->bits += bits;
    t->miss_product *= 1.0 - st.estimated_fpp; /* a negative key must pass every part */
    t->items += st.estimated_items;
}

void sbloom_parts_tally_end(const sbloom_parts_tally *t, sbloom_stats *out)
{
    out->fill = t->bits > 0 ? t->fill_bits / t->bits : 0.0;
    out->estimated_fpp = t->started ? 1.0 - t->miss_product : 0.0;
    out->estimated_items = t->items;
}

void sbloom_parts_stats(const sbloom_part *parts, uint32_t count, int sampled, sbloom_stats *out)
{
    sbloom_parts_tally t = {0};
    for (uint32_t i = 0; i < count; i++)
        sbloom_parts_tally_add(&t, &parts[i].core, sampled);
    sbloom_parts_tally_end(&t, out);
}

int sbloom_parts_copy(sbloom_part *dst, const sbloom_part *src, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        int rc = sbloom_core_copy(&dst[i].core, &src[i].core);
        if (rc != SBLOOM_OK) {
            sbloom_parts_release(dst, 0, i);
            return rc;
        }
        dst[i].items = src[i].items;
        dst[i].planned_items = src[i].planned_items;
        dst[i].planned_fpp = src[i].planned_fpp;
    }
    return SBLOOM_OK;
}

int sbloom_parts_alike(const sbloom_part *a, const sbloom_part *b, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        if (a[i].core.bytes != b[i].core.bytes || a[i].core.layout != b[i].core.layout)
            return 0;
    return 1;
}

void sbloom_parts_union(sbloom_part *dst, const sbloom_part *src, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        sbloom_core_combine(&dst[i].core, &src[i].core, 0);
        dst[i].items = sbloom_core_estimated_items(&dst[i].core);
    }
}

uint64_t sbloom_parts_image_bytes(const sbloom_part *parts, uint32_t count)
{
    return count * (uint64_t)SBLOOM_HEADER_BYTES + sbloom_parts_bytes(parts, count);
}

uint8_t *sbloom_parts_write_images(const sbloom_part *parts, uint32_t count, uint8_t *out)
{
    for (uint32_t i = 0; i < count; i++) {
        const sbloom_part *p = &parts[i];
        sbloom_header h;
        sbloom_header_describe(&h, &p->core, p->items, p->planned_items, p->planned_fpp);
        sbloom_header_pack(&h, out);
        sbloom_core_payload_out(&p->core, out + SBLOOM_HEADER_BYTES);
        out += SBLOOM_HEADER_BYTES + p->core.bytes;
    }
    return out;
}

int sbloom_part_read_image(sbloom_part *part, const char *noun, const uint8_t *at, uint64_t left,
                           uint32_t index, uint64_t planned_items, double planned_fpp,
                           unsigned accept, uint64_t *size)
{
    if (left < SBLOOM_HEADER_BYTES)
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "%s %u: truncated", noun, index);
    /* the core's own size, from its header (checked against its checksum below) */
    uint64_t payload = sbloom_header_payload_bytes(at);
    if (payload > left - SBLOOM_HEADER_BYTES)
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "%s %u: %llu bytes, more than is left", noun,
                                index, (unsigned long long)payload);
    *size = SBLOOM_HEADER_BYTES + payload;
    sbloom_header h;
    int rc = sbloom_header_parse(at, *size, &h);
    sbloom_window_form form =
        rc == SBLOOM_OK ? sbloom_window_form_of(h.layout) : SBLOOM_WINDOW_NONE;
    if (form == SBLOOM_WINDOW_ADJACENT ||
        (form == SBLOOM_WINDOW_SLOTS && (accept & SBLOOM_PART_SLOTS)) ||
        (form == SBLOOM_WINDOW_AGES && (accept & SBLOOM_PART_FINGERPRINTS)))
        rc = sbloom_core_from_image(&part->core, &h, at + SBLOOM_HEADER_BYTES);
    else if (rc == SBLOOM_OK)
        rc = sbloom_fail_with(SBLOOM_E_CORRUPT, "layout %s", sbloom_layout_name(h.layout));
    if (rc != SBLOOM_OK) { /* each core is a whole filter image, its size and plan checked */
        char why[200];
        snprintf(why, sizeof why, "%s", sbloom_error_detail());
        return sbloom_fail_with(rc, "%s %u: %s", noun, index, why[0] ? why : sbloom_strerror(rc));
    }
    part->items = h.items;
    part->planned_items = (h.flags & 1u) ? h.planned_items : 0;
    part->planned_fpp = (h.flags & 1u) ? h.planned_fpp : NAN;
    if (part->planned_items != planned_items || part->planned_fpp != planned_fpp) {
        sbloom_core_release(&part->core);
        return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                "%s %u: layout %s, %llu items at rate %g, not this filter's "
                                "%s %u",
                                noun, index, sbloom_layout_name(part->core.layout),
                                (unsigned long long)part->planned_items, part->planned_fpp, noun,
                                index);
    }
    return SBLOOM_OK;
}
