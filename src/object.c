/*
 * The filter object: creation and release, the inline view (written here only), the count, the
 * header of a filter with a core, and the batch driver's view of a filter. The operations
 * themselves are the mode's (src/modes/); nothing here calls a public sbloom_* function.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/alloc.h"
#include "object.h"

_Static_assert(offsetof(struct sbloom, inline_add) == offsetof(sbloom_inline_view, inline_add),
               "the filter's first members are sbloom_inline_view's");

/* What the header's inline lookup reads for a NULL filter: layout 0, the library's call. */
const sbloom_inline_view sbloom_inline_null_view = {NULL, 0, 0, 0, 0, 0};

int sbloom_object_new(sbloom_t **out, const sbloom_mode *mode, sbloom_layout layout)
{
    sbloom_t *f = sbloom_calloc(1, sizeof *f);
    if (!f)
        return SBLOOM_E_NOMEM;
    f->mode = mode;
    f->layout = layout;
    f->planned_fpp = NAN;
    f->core.owner = SBLOOM_OWNER_CALLER; /* no blocks yet: nothing to release */
    f->isa = "";
    *out = f;
    return SBLOOM_OK;
}

void sbloom_object_free(sbloom_t *f)
{
    /* a read-write file mapping leaves a valid file behind; a concurrent one leaves that to
     * whoever knows no other process still adds (sbloom_sync) */
    if (f->core.owner == SBLOOM_OWNER_FILE_MAP && f->counting != SBLOOM_COUNT_SHARED)
        sbloom_object_sync(f);
    f->mode->release(f);
    for (uint32_t i = 0; i < f->nviews; i++)
        if (f->views[i])
            sbloom_object_free(f->views[i]);
    free(f->views);
    free(f);
}

void sbloom_object_show_core(sbloom_t *f)
{
    f->blocks = f->core.blocks;
    f->bytes = f->core.bytes;
    f->nblocks = f->core.nblocks;
    if (f->core.isa)
        f->isa = f->core.isa;
    int eligible = f->mode->takes_inline && f->core.blocks && f->core.inline_ok &&
                   sbloom_layout_is_bits(f->core.layout);
    f->inline_contains = eligible ? (uint32_t)f->core.layout : 0;
    f->inline_add = eligible && !f->readonly ? (uint32_t)f->core.layout : 0;
}

void sbloom_object_count(sbloom_t *f, uint64_t inserted, uint64_t fresh)
{
    uint64_t added = sbloom_family_of(f->layout)->counts_every_add ? inserted : fresh;
    switch (f->counting) {
    case SBLOOM_COUNT_PLAIN: f->items += added; break;
    case SBLOOM_COUNT_ATOMIC: __atomic_fetch_add(&f->items, added, __ATOMIC_RELAXED); break;
    case SBLOOM_COUNT_SHARED: __atomic_fetch_add(f->items_delta, added, __ATOMIC_RELAXED); break;
    case SBLOOM_COUNT_NONE: break;
    }
}

void sbloom_object_uncount(sbloom_t *f, uint64_t removed)
{
    /* (never below 0: a loaded file's count may be off) */
    uint64_t was = __atomic_load_n(&f->items, __ATOMIC_RELAXED);
    if (f->counting != SBLOOM_COUNT_ATOMIC) {
        f->items = was > removed ? was - removed : 0;
        return;
    }
    while (!__atomic_compare_exchange_n(&f->items, &was, was > removed ? was - removed : 0, 1,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ; /* (another thread's count moved it: again from the value it left) */
}

int sbloom_object_removes(const sbloom_t *f)
{
    return f->mode->removes ? f->mode->removes(f) : sbloom_family_of(f->layout)->removes;
}

uint64_t sbloom_object_items(const sbloom_t *f)
{
    if (f->counting == SBLOOM_COUNT_SHARED) /* the header's count and the live delta */
        return __atomic_load_n(sbloom_object_header_items(f), __ATOMIC_RELAXED) +
               __atomic_load_n(f->items_delta, __ATOMIC_RELAXED);
    return __atomic_load_n(&f->items, __ATOMIC_RELAXED);
}

void sbloom_object_header(const sbloom_t *f, sbloom_header *h)
{
    sbloom_header_describe(h, &f->core, sbloom_object_items(f), f->planned_items, f->planned_fpp);
}

int sbloom_object_sync(sbloom_t *f)
{
    if (f->mode->sync)
        return f->mode->sync(f);
    if (!f->image || f->readonly)
        return SBLOOM_OK; /* nothing of the caller's to bring up to date */
    if (f->counting == SBLOOM_COUNT_SHARED) {
        /* A concurrent mapping: move the live delta into the header's count (atomically, as
         * another process may sync at the same moment), then write the rest of the header. */
        uint64_t delta = __atomic_exchange_n(f->items_delta, 0, __ATOMIC_RELAXED);
        __atomic_fetch_add(sbloom_object_header_items(f), delta, __ATOMIC_RELAXED);
    }
    sbloom_header h;
    sbloom_object_header(f, &h);
    if (f->counting == SBLOOM_COUNT_SHARED) {
        uint8_t head[SBLOOM_HEADER_BYTES];
        sbloom_header_pack(&h, head);
        memcpy(f->image, head, SBLOOM_HEADER_ITEMS_AT);
        memcpy(f->image + SBLOOM_HEADER_ITEMS_AT + 8, head + SBLOOM_HEADER_ITEMS_AT + 8,
               SBLOOM_HEADER_BYTES - SBLOOM_HEADER_ITEMS_AT - 8);
    } else {
        sbloom_header_pack(&h, f->image);
    }
    if (f->core.owner == SBLOOM_OWNER_FILE_MAP &&
        msync(f->core.map_base, (size_t)f->core.map_bytes, MS_SYNC) != 0)
        return SBLOOM_E_IO;
    return SBLOOM_OK;
}

/* The chunk function the drivers call: the mode's. */
static uint64_t run_mode(void *ctx, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                         uint8_t *results)
{
    sbloom_t *f = ctx;
    return f->mode->run(f, op, hashes, n, results);
}

void sbloom_object_runner(const sbloom_t *f, sbloom_runner *r)
{
    r->run = f->mode->chunk ? f->mode->chunk : run_mode;
    r->ctx = (sbloom_t *)f; /* a lookup's chunk function only reads */
    r->core = f->mode->has_core ? &f->core : NULL;
    r->layout = f->layout;
    /* a family that moves entries (a fingerprint filter's lines share one spare): parallel.c
     * spreads only its lookups, and in the concurrent mode (every key under its locks, lookups
     * too) its batches run on one thread */
    r->threads =
        sbloom_family_of(f->layout)->moves_entries && f->mode->shared_core ? 1 : f->threads;
}

/* (The object is never in read-only memory: a const filter's batch may still have to say that it
 * failed.) */
void sbloom_object_fail(const sbloom_t *f, int code)
{
    __atomic_store_n(&((sbloom_t *)f)->failed, code, __ATOMIC_RELAXED);
}

int sbloom_object_failed(const sbloom_t *f)
{
    return __atomic_load_n(&f->failed, __ATOMIC_RELAXED);
}

int sbloom_object_take_failure(const sbloom_t *f)
{
    return f->failed ? __atomic_exchange_n(&((sbloom_t *)f)->failed, 0, __ATOMIC_RELAXED) : 0;
}
