/*
 * The plain mode: one core, one writer. Every operation is the core's: a kernel call per chunk,
 * the core's statistics, a copy or a bitwise combination of its blocks.
 */
#include <math.h>
#include <string.h>

#include "modes.h"

int sbloom_plain_new(sbloom_t **out, uint64_t bytes, sbloom_layout layout, uint64_t n, double p,
                     sbloom_owner owner)
{
    if (sbloom_layout_composite(layout))
        return SBLOOM_E_LAYOUT; /* cores, not blocks: sbloom_create_scalable, _windowed */
    sbloom_core core;
    int rc = sbloom_core_init(&core, bytes, layout, owner);
    if (rc != SBLOOM_OK)
        return rc;
    sbloom_t *f;
    rc = sbloom_object_new(&f, &sbloom_mode_plain, layout);
    if (rc != SBLOOM_OK) {
        sbloom_core_release(&core);
        return rc;
    }
    f->core = core;
    f->planned_items = n;
    f->planned_fpp = p;
    sbloom_object_show_core(f);
    *out = f;
    return SBLOOM_OK;
}

int sbloom_plain_view(sbloom_t **out, const sbloom_core *core, uint64_t items, uint64_t n, double p)
{
    sbloom_t *f;
    int rc = sbloom_object_new(&f, &sbloom_mode_plain, core->layout);
    if (rc != SBLOOM_OK)
        return rc;
    f->core = *core;
    f->core.owner = SBLOOM_OWNER_CALLER; /* the other filter's blocks */
    f->readonly = 1;
    f->items = items;
    f->planned_items = n;
    f->planned_fpp = p;
    sbloom_object_show_core(f);
    *out = f;
    return SBLOOM_OK;
}

void sbloom_plain_apply_header(sbloom_t *f, const sbloom_header *h)
{
    f->items = h->items;
    if (h->flags & 1u) {
        f->planned_items = h->planned_items;
        f->planned_fpp = h->planned_fpp;
    }
}

int sbloom_plain_wrap(sbloom_t **out, uint8_t *base, const sbloom_header *h, int writable)
{
    sbloom_t *f;
    int rc = sbloom_plain_new(&f, h->payload_bytes, h->layout, 0, NAN, SBLOOM_OWNER_CALLER);
    if (rc != SBLOOM_OK)
        return rc;
    f->core.blocks = base + SBLOOM_HEADER_BYTES;
    f->image = base;
    f->readonly = !writable;
    sbloom_object_show_core(f);
    sbloom_plain_apply_header(f, h);
    *out = f;
    return SBLOOM_OK;
}

/* The driver's chunk function: the kernel called straight from here, so that a string batch,
 * which calls it every SBK_PREFETCH_AHEAD keys, pays one indirect call for the mode, no more. */
static uint64_t plain_chunk(void *ctx, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                            uint8_t *results)
{
    const sbloom_core *c = &((const sbloom_t *)ctx)->core;
    switch (op) {
    case SBLOOM_OP_INSERT: {
        uint64_t fresh = c->kern->insert(c->blocks, c->nblocks, hashes, n, results);
        if (fresh & SBK_FP_REFUSED) { /* a fingerprint filter had no room for a key */
            sbloom_object_fail(ctx, SBLOOM_E_FULL);
            fresh &= ~SBK_FP_REFUSED;
        }
        return fresh;
    }
    case SBLOOM_OP_REMOVE: return c->kern->remove(c->blocks, c->nblocks, hashes, n, results);
    case SBLOOM_OP_CONTAINS:
    default: return c->kern->contains(c->blocks, c->nblocks, hashes, n, results);
    }
}

static uint64_t plain_run(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                          uint8_t *results)
{
    return plain_chunk(f, op, hashes, n, results);
}

static int plain_add_one(sbloom_t *f, uint64_t hash)
{
    int fresh = f->core.kern->insert_one(f->core.blocks, f->core.nblocks, hash);
    if (fresh == SBK_FP_ONE_REFUSED) {
        sbloom_object_fail(f, SBLOOM_E_FULL);
        return 0;
    }
    return fresh;
}

static int plain_contains_one(const sbloom_t *f, uint64_t hash)
{
    return f->core.kern->contains_one(f->core.blocks, f->core.nblocks, hash);
}

uint64_t sbloom_plain_bytes(const sbloom_t *f)
{
    return f->core.bytes;
}

uint64_t sbloom_plain_capacity(const sbloom_t *f)
{
    return f->planned_items;
}

int sbloom_plain_clone(sbloom_t **out, const sbloom_t *f)
{
    sbloom_t *copy;
    int rc = sbloom_plain_new(&copy, f->core.bytes, f->layout, f->planned_items, f->planned_fpp,
                              SBLOOM_OWNER_HEAP);
    if (rc != SBLOOM_OK)
        return rc;
    memcpy(copy->core.blocks, f->core.blocks, (size_t)f->core.bytes);
    copy->items = f->items;
    *out = copy;
    return SBLOOM_OK;
}

void sbloom_plain_clear(sbloom_t *f)
{
    memset(f->core.blocks, 0, (size_t)f->core.bytes);
    f->items = 0;
}

int sbloom_plain_stats(const sbloom_t *f, int sampled, sbloom_stats *out)
{
    sbloom_core_stats(&f->core, sampled, out);
    return SBLOOM_OK;
}

int sbloom_plain_combine(sbloom_t *dst, const sbloom_t *src, int intersect)
{
    /* OR and AND of counters would not be sums or minimums of counts: the counting layout is
     * refused rather than given a meaning that loses counts (and a composite has no blocks) */
    if (!sbloom_family_of(dst->layout)->combines || !sbloom_family_of(src->layout)->combines)
        return SBLOOM_E_LAYOUT;
    if (dst->layout != src->layout || dst->core.bytes != src->core.bytes)
        return SBLOOM_E_INCOMPATIBLE;
    sbloom_core_combine(&dst->core, &src->core, intersect);
    /* estimated from the fill: keys present in both would otherwise be counted twice */
    dst->items = sbloom_core_estimated_items(&dst->core);
    return SBLOOM_OK;
}

uint64_t sbloom_plain_image_bytes(const sbloom_t *f)
{
    return SBLOOM_HEADER_BYTES + f->core.bytes;
}

int sbloom_plain_write_image(const sbloom_t *f, uint8_t *out)
{
    sbloom_header h;
    sbloom_object_header(f, &h);
    sbloom_header_pack(&h, out);
    sbloom_core_payload_out(&f->core, out + SBLOOM_HEADER_BYTES);
    return SBLOOM_OK;
}

static void plain_release(sbloom_t *f)
{
    sbloom_core_release(&f->core);
}

const sbloom_mode sbloom_mode_plain = {
    SBLOOM_ONE_CORE_OPERATIONS,
    .name = "plain",
    .takes_inline = 1,
    .run = plain_run,
    .chunk = plain_chunk,
    .add_one = plain_add_one,
    .contains_one = plain_contains_one,
    .release = plain_release,
};
