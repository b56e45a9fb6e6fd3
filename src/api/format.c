/*
 * Public entry points for a filter's bytes in memory: the file image (serialize / deserialize),
 * the Parquet bare bitset, plain bits in and out, and where a hash's bits lie.
 */
#include <math.h>
#include <string.h>

#include "../base/endian.h"
#include "../base/hash.h"
#include "../modes/modes.h"

static int swap_needed(void)
{
    return sbloom_host_is_big_endian();
}

uint64_t sbloom_serialized_size(const sbloom_t *filter)
{
    return filter ? filter->mode->image_bytes(filter) : 0;
}

int sbloom_serialize(const sbloom_t *filter, void *buf, size_t cap)
{
    if (!filter || !buf)
        return SBLOOM_E_NULL;
    if (cap < sbloom_serialized_size(filter))
        return SBLOOM_E_TRUNCATED;
    return filter->mode->write_image(filter, buf);
}

int sbloom_deserialize(sbloom_t **out, const void *buf, size_t len)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (!buf)
        return SBLOOM_E_NULL;
    sbloom_header h;
    int rc = sbloom_header_parse(buf, len, &h);
    if (rc != SBLOOM_OK)
        return rc;
    const uint8_t *payload = (const uint8_t *)buf + SBLOOM_HEADER_BYTES;
    if (sbloom_xxh3(payload, (size_t)h.payload_bytes) != h.payload_checksum)
        return sbloom_payload_mismatch();
    if (h.layout == SBLOOM_LAYOUT_SCALABLE)
        return sbloom_scalable_from_payload(out, &h, payload);
    if (h.layout == SBLOOM_LAYOUT_WINDOWED)
        return sbloom_windowed_from_payload(out, &h, payload);
    sbloom_t *f;
    rc = sbloom_plain_new(&f, h.payload_bytes, h.layout, 0, NAN, SBLOOM_OWNER_HEAP);
    if (rc != SBLOOM_OK)
        return rc;
    sbloom_core_payload_in(&f->core, payload);
    sbloom_plain_apply_header(f, &h);
    *out = f;
    return SBLOOM_OK;
}

int sbloom_parquet_export(const sbloom_t *filter, void *buf, size_t cap)
{
    if (!filter || !buf)
        return SBLOOM_E_NULL;
    if (filter->layout != SBLOOM_LAYOUT_PARQUET)
        return SBLOOM_E_LAYOUT;
    if (cap < filter->core.bytes)
        return SBLOOM_E_TRUNCATED;
    sbloom_copy_words(buf, filter->core.blocks, filter->core.bytes, 32, swap_needed());
    return SBLOOM_OK;
}

int sbloom_parquet_import(sbloom_t **out, const void *bitset, size_t len)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (!bitset)
        return SBLOOM_E_NULL;
    if (len == 0 || len % 32 != 0)
        return SBLOOM_E_INVALID;
    if (len > SBLOOM_MAX_BYTES)
        return SBLOOM_E_TOO_LARGE;
    sbloom_t *f;
    int rc = sbloom_plain_new(&f, len, SBLOOM_LAYOUT_PARQUET, 0, NAN, SBLOOM_OWNER_HEAP);
    if (rc != SBLOOM_OK)
        return rc;
    sbloom_copy_words(f->core.blocks, bitset, len, 32, swap_needed());
    f->items = sbloom_core_estimated_items(&f->core); /* a bare bitset carries no count */
    *out = f;
    return SBLOOM_OK;
}

int sbloom_export_bits(const sbloom_t *filter, void *buf, size_t cap)
{
    if (!filter || !buf)
        return SBLOOM_E_NULL;
    if (!sbloom_layout_is_bits(filter->layout))
        return SBLOOM_E_LAYOUT;
    if (cap < filter->core.bytes)
        return SBLOOM_E_TRUNCATED;
    sbloom_copy_words(buf, filter->core.blocks, filter->core.bytes,
                      sbloom_layout_word_bits(filter->layout), swap_needed());
    return SBLOOM_OK;
}

int sbloom_import_bits(sbloom_t **out, sbloom_layout layout, const void *bits, size_t len,
                       uint64_t items, uint64_t planned_items, double planned_fpp)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (!bits)
        return SBLOOM_E_NULL;
    if (!sbloom_layout_is_bits(layout))
        return SBLOOM_E_LAYOUT;
    uint32_t block_bytes = sbloom_layout_block_bytes(layout);
    if (len == 0 || len % block_bytes != 0)
        return SBLOOM_E_INVALID;
    if (len > SBLOOM_MAX_BYTES)
        return SBLOOM_E_TOO_LARGE;
    sbloom_t *f;
    int rc = sbloom_plain_new(&f, len, layout, planned_items, planned_items ? planned_fpp : NAN,
                              SBLOOM_OWNER_HEAP);
    if (rc != SBLOOM_OK)
        return rc;
    sbloom_copy_words(f->core.blocks, bits, len, sbloom_layout_word_bits(layout), swap_needed());
    f->items = items;
    *out = f;
    return SBLOOM_OK;
}

/* The mask is what the scalar reference's add sets in a zeroed block of a one-block filter
 * (the bits in a block depend on the hash's low half only), in the payload's byte order. */
int sbloom_locate(sbloom_layout layout, uint64_t nblocks, uint64_t hash, uint64_t *block,
                  void *mask, size_t cap)
{
    if (!block || !mask)
        return SBLOOM_E_NULL;
    if (!sbloom_layout_is_bits(layout))
        return SBLOOM_E_LAYOUT;
    uint32_t block_bytes = sbloom_layout_block_bytes(layout);
    if (nblocks == 0 || nblocks > (UINT64_C(1) << 32) || cap < block_bytes)
        return SBLOOM_E_INVALID;
    _Alignas(64) uint8_t scratch[64] = {0};
    sbloom_kernels_scalar.layout[layout - 1].insert_one(scratch, 1, hash);
    sbloom_copy_words(mask, scratch, block_bytes, sbloom_layout_word_bits(layout), swap_needed());
    *block = sbk_block_index(hash, nblocks);
    return SBLOOM_OK;
}
