/*
 * Filters whose memory the caller owns: a file image (header + bits) in a caller's buffer, made
 * new (sbloom_create_in) or attached without copying (sbloom_attach), and the header write-back
 * (sbloom_sync) that makes such an image, or a read-write file mapping, a valid file again.
 *
 * The bits are used in place, so the image's words must be in host order: files store
 * little-endian words, so on a big-endian host these entries answer SBLOOM_E_UNSUPPORTED.
 */
#include <math.h>
#include <string.h>

#include "../base/endian.h"
#include "../base/hash.h"
#include "api.h"

uint64_t sbloom_image_size(uint64_t bytes, sbloom_layout layout)
{
    uint64_t block_bytes = sbloom_layout_block_bytes(layout);
    if (block_bytes == 0 || bytes > SBLOOM_MAX_BYTES || sbloom_layout_composite(layout))
        return 0; /* (a scalable filter lives in stages the library allocates) */
    uint64_t nblocks = bytes / block_bytes + (bytes % block_bytes != 0);
    return SBLOOM_HEADER_BYTES + (nblocks ? nblocks : 1) * block_bytes;
}

static int aligned(const void *p)
{
    return ((uintptr_t)p & 63u) == 0;
}

int sbloom_image_new(sbloom_t **out, void *buf, size_t cap, uint64_t bytes, sbloom_layout layout,
                     uint64_t planned_items, double planned_fpp)
{
    if (!buf)
        return SBLOOM_E_NULL;
    if (!sbloom_layout_known(layout) || sbloom_layout_composite(layout))
        return SBLOOM_E_LAYOUT;
    if (sbloom_host_is_big_endian())
        return SBLOOM_E_UNSUPPORTED;
    uint64_t need = sbloom_image_size(bytes, layout);
    if (need == 0)
        return SBLOOM_E_TOO_LARGE;
    if (!aligned(buf))
        return SBLOOM_E_INVALID;
    if (cap < need)
        return SBLOOM_E_TRUNCATED;
    memset(buf, 0, (size_t)need);
    sbloom_t *f;
    int rc = sbloom_plain_new(&f, need - SBLOOM_HEADER_BYTES, layout, planned_items, planned_fpp,
                              SBLOOM_OWNER_CALLER);
    if (rc != SBLOOM_OK)
        return rc;
    f->core.blocks = (uint8_t *)buf + SBLOOM_HEADER_BYTES;
    f->image = buf;
    sbloom_object_show_core(f);
    sbloom_object_sync(f); /* a valid image from the start: another process may attach at once */
    *out = f;
    return SBLOOM_OK;
}

int sbloom_attach(sbloom_t **out, void *buf, size_t len, unsigned flags)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (!buf)
        return SBLOOM_E_NULL;
    if ((flags & ~(unsigned)(SBLOOM_OPEN_VERIFY | SBLOOM_OPEN_WRITE)) != 0 || !aligned(buf))
        return SBLOOM_E_INVALID;
    if (sbloom_host_is_big_endian())
        return SBLOOM_E_UNSUPPORTED;
    sbloom_header h;
    int rc = sbloom_header_parse(buf, len, &h);
    if (rc != SBLOOM_OK)
        return rc;
    const uint8_t *payload = (const uint8_t *)buf + SBLOOM_HEADER_BYTES;
    if ((flags & SBLOOM_OPEN_VERIFY) &&
        sbloom_xxh3(payload, (size_t)h.payload_bytes) != h.payload_checksum)
        return sbloom_payload_mismatch();
    return sbloom_plain_wrap(out, buf, &h, (flags & SBLOOM_OPEN_WRITE) != 0);
}

int sbloom_sync(sbloom_t *filter)
{
    return filter ? sbloom_object_sync(filter) : SBLOOM_E_NULL;
}

int sbloom_set_concurrent_shared(sbloom_t *filter, void *locks, size_t len)
{
    if (!filter || !locks)
        return SBLOOM_E_NULL;
    if (((uintptr_t)locks & 7u) != 0 || len < SBLOOM_SHARED_LOCKS_BYTES)
        return SBLOOM_E_INVALID;
    if (filter->core.owner != SBLOOM_OWNER_CALLER || !filter->image || filter->readonly)
        return SBLOOM_E_INVALID; /* caller memory written in place: the one kind it is for */
    if (filter->mode == &sbloom_mode_concurrent)
        return SBLOOM_E_INVALID; /* set once, before the first add */
    return sbloom_concurrent_share_region(filter, locks);
}
