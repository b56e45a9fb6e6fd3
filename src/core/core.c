/* The core filter: its memory, one kernel call per chunk, and whole-filter bitwise operations. */
#include <string.h>

#include "../os/os.h"
#include "core.h"

int sbloom_core_init(sbloom_core *c, uint64_t bytes, sbloom_layout layout, sbloom_owner owner)
{
    memset(c, 0, sizeof *c);
    if (!sbloom_layout_known(layout) || sbloom_layout_composite(layout))
        return SBLOOM_E_LAYOUT; /* stages, not blocks: src/modes/scalable.c */
    int err = SBLOOM_OK;
    const sbloom_kernels *kernels = sbloom_kernels_active(&err);
    if (!kernels)
        return err;
    uint64_t block_bytes = sbloom_layout_block_bytes(layout);
    uint64_t nblocks = bytes / block_bytes + (bytes % block_bytes != 0);
    if (nblocks < 2)
        nblocks = sbloom_family_of(layout)->min_lines;
    if (bytes > SBLOOM_MAX_BYTES || nblocks > SBLOOM_MAX_BYTES / block_bytes)
        return SBLOOM_E_TOO_LARGE;
    c->bytes = nblocks * block_bytes;
    if (owner != SBLOOM_OWNER_CALLER) {
        int mapped = 0;
        c->blocks = sbloom_blocks_alloc(c->bytes, &mapped);
        if (!c->blocks)
            return SBLOOM_E_NOMEM;
        owner = mapped ? SBLOOM_OWNER_ANON_MAP : SBLOOM_OWNER_HEAP;
    }
    c->owner = owner;
    c->nblocks = nblocks;
    c->layout = layout;
    c->k = sbloom_layout_k(layout);
    c->block_bytes = (uint32_t)block_bytes;
    c->kern = &kernels->layout[layout - 1];
    c->isa = kernels->name;
    c->inline_ok = sbloom_kernels_inline_ok(kernels);
    c->whole_words = sbloom_kernels_whole_words(kernels);
    return SBLOOM_OK;
}

int sbloom_core_copy(sbloom_core *c, const sbloom_core *src)
{
    int rc = sbloom_core_init(c, src->bytes, src->layout, SBLOOM_OWNER_HEAP);
    if (rc == SBLOOM_OK)
        memcpy(c->blocks, src->blocks, (size_t)src->bytes);
    return rc;
}

void sbloom_core_release(sbloom_core *c)
{
    switch (c->owner) {
    case SBLOOM_OWNER_HEAP: sbloom_blocks_free(c->blocks, c->bytes, 0); break;
    case SBLOOM_OWNER_ANON_MAP: sbloom_blocks_free(c->blocks, c->bytes, 1); break;
    case SBLOOM_OWNER_FILE_MAP:
        if (c->map_base)
            sbloom_unmap_file(c->map_base, c->map_bytes);
        break;
    case SBLOOM_OWNER_CALLER: break;
    }
    memset(c, 0, sizeof *c);
    c->owner = SBLOOM_OWNER_CALLER; /* empty: nothing left to release */
}

uint64_t sbloom_core_run(const sbloom_core *c, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                         uint8_t *results)
{
    switch (op) {
    case SBLOOM_OP_INSERT: return c->kern->insert(c->blocks, c->nblocks, hashes, n, results);
    case SBLOOM_OP_REMOVE: return c->kern->remove(c->blocks, c->nblocks, hashes, n, results);
    case SBLOOM_OP_CONTAINS:
    default: return c->kern->contains(c->blocks, c->nblocks, hashes, n, results);
    }
}

uint64_t sbloom_core_run_shared(const sbloom_core *c, sbloom_batch_op op, const uint64_t *hashes,
                                size_t n, uint8_t *results)
{
    if (op == SBLOOM_OP_CONTAINS)
        return c->kern->contains_shared(c->blocks, c->nblocks, hashes, n, results);
    return c->kern->insert_shared(c->blocks, c->nblocks, hashes, n, NULL);
}

uint64_t sbloom_core_run_groups(const sbloom_core *c, uint32_t lines, uint32_t target,
                                sbloom_batch_op op, const uint64_t *hashes, size_t n,
                                uint8_t *results)
{
    uint64_t groups = c->nblocks / lines;
    if (op == SBLOOM_OP_INSERT)
        return c->kern->window_insert(c->blocks, groups, lines, target, hashes, n, results);
    return c->kern->window_contains(c->blocks, groups, lines, target, hashes, n, results);
}

uint64_t sbloom_core_run_aged(const sbloom_core *c, uint64_t lines, uint32_t age_bits, uint32_t age,
                              sbloom_batch_op op, const uint64_t *hashes, size_t n,
                              uint8_t *results)
{
    if (op == SBLOOM_OP_INSERT)
        return c->kern->window_insert(c->blocks, lines, age_bits, age, hashes, n, results);
    return c->kern->window_contains(c->blocks, lines, age_bits, age, hashes, n, results);
}

void sbloom_core_age(sbloom_core *c, uint64_t lines, uint64_t from, uint64_t to, uint32_t age_bits,
                     uint32_t age, uint32_t to_age)
{
    c->kern->window_age(c->blocks, lines, from, to, age_bits, age, to_age);
}

void sbloom_core_combine(sbloom_core *dst, const sbloom_core *src, int intersect)
{
    uint64_t *d = dst->blocks;
    const uint64_t *s = src->blocks;
    uint64_t words = dst->bytes / 8; /* blocks are 32 or 64 bytes: whole 64-bit words */
    if (intersect)
        for (uint64_t i = 0; i < words; i++)
            d[i] &= s[i];
    else
        for (uint64_t i = 0; i < words; i++)
            d[i] |= s[i];
}
