/*
 * Filters whose memory the caller owns: a file image (header + bits) in a caller's buffer, made
 * new (sbloom_create_in) or attached without copying (sbloom_attach), and the header write-back
 * (sbloom_sync) that makes such an image, or a read-write file mapping, a valid file again.
 *
 * The bits are used in place, so the image's words must be in host order: files store
 * little-endian words, so on a big-endian host these entries answer SBLOOM_E_UNSUPPORTED.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <string.h>
#include <sys/mman.h>

#include "endian.h"
#include "format.h"
#include "hash.h"

uint64_t sbloom_image_size(uint64_t bytes, sbloom_layout layout)
{
    uint64_t block_bytes = sbloom_layout_block_bytes(layout);
    if (block_bytes == 0 || bytes > SBLOOM_MAX_BYTES || layout == SBLOOM_LAYOUT_SCALABLE)
        return 0; /* (a scalable filter lives in stages the library allocates) */
    uint64_t nblocks = bytes / block_bytes + (bytes % block_bytes != 0);
    return SBLOOM_HEADER_BYTES + (nblocks ? nblocks : 1) * block_bytes;
}

static int aligned(const void *p)
{
    return ((uintptr_t)p & 63u) == 0;
}

/* A filter over an image at `base` whose header h is valid: no allocation of bits, and nothing
 * freed with the filter (the caller, or a file mapping, owns the memory). */
static int wrap_image(sbloom_t **out, uint8_t *base, const sbloom_header *h, int writable)
{
    sbloom_t *f;
    int rc = sbloom_filter_new(&f, h->payload_bytes, h->layout, 0, NAN, 1);
    if (rc != SBLOOM_OK)
        return rc;
    f->blocks = base + SBLOOM_HEADER_BYTES;
    f->image = base;
    f->readonly = !writable;
    sbloom_inline_refresh(f);
    sbloom_header_apply(h, f);
    *out = f;
    return SBLOOM_OK;
}

int sbloom_create_in(sbloom_t **out, void *buf, size_t cap, uint64_t bytes, sbloom_layout layout)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (!buf)
        return SBLOOM_E_NULL;
    if (!sbloom_layout_known(layout) || layout == SBLOOM_LAYOUT_SCALABLE)
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
    int rc = sbloom_filter_new(&f, need - SBLOOM_HEADER_BYTES, layout, 0, NAN, 1);
    if (rc != SBLOOM_OK)
        return rc;
    f->blocks = (uint8_t *)buf + SBLOOM_HEADER_BYTES;
    f->image = buf;
    sbloom_sync(f); /* a valid image from the start: another process may attach at once */
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
    return wrap_image(out, buf, &h, (flags & SBLOOM_OPEN_WRITE) != 0);
}

int sbloom_image_wrap(sbloom_t **out, void *base, const sbloom_header *h, int writable)
{
    return wrap_image(out, base, h, writable);
}

int sbloom_sync(sbloom_t *filter)
{
    if (!filter)
        return SBLOOM_E_NULL;
    if (!filter->image || filter->readonly)
        return SBLOOM_OK; /* nothing of the caller's to bring up to date */
    if (filter->items_delta) {
        /* A concurrent mapping: move the live delta into the header's count (atomically, as
         * another process may sync at the same moment), then write the rest of the header. */
        uint64_t delta = __atomic_exchange_n(filter->items_delta, 0, __ATOMIC_RELAXED);
        __atomic_fetch_add(sbloom_header_items_word(filter), delta, __ATOMIC_RELAXED);
    }
    sbloom_header h;
    sbloom_header_of(filter, &h);
    if (filter->items_delta) {
        uint8_t head[SBLOOM_HEADER_BYTES];
        sbloom_header_pack(&h, head);
        memcpy(filter->image, head, SBLOOM_HEADER_ITEMS_AT);
        memcpy(filter->image + SBLOOM_HEADER_ITEMS_AT + 8, head + SBLOOM_HEADER_ITEMS_AT + 8,
               SBLOOM_HEADER_BYTES - SBLOOM_HEADER_ITEMS_AT - 8);
    } else {
        sbloom_header_pack(&h, filter->image);
    }
    if (filter->map_base && msync(filter->map_base, (size_t)filter->map_bytes, MS_SYNC) != 0)
        return SBLOOM_E_IO;
    return SBLOOM_OK;
}
