/*
 * The filter file's header (docs/FORMAT.md): packing and validation.
 *
 * A reader trusts nothing until it is checked, in this order: the size can hold a header, the
 * magic, the header checksum, the version and reserved bytes, the layout and hash, the geometry
 * (blocks x block size == payload bytes <= 64 GiB), the total size, and only then (after the one
 * allocation, whose size is now bounded by the input's) the payload checksum.
 */
#include <string.h>

#include "../base/endian.h"
#include "../base/hash.h"
#include "header.h"

static const uint8_t magic[8] = {0x89, 'S', 'B', 'L', 'O', 'O', 'M', '\n'};

enum { HASH_XXH64 = 1, HASH_XXH3_64 = 2 };

/* Header field offsets. */
enum {
    AT_MAGIC = 0,
    AT_VERSION = 8,
    AT_HEADER_BYTES = 12,
    AT_LAYOUT = 16,
    AT_HASH = 20,
    AT_SEED = 24,
    AT_NBLOCKS = 32,
    AT_K = 40,
    AT_FLAGS = 44,
    AT_ITEMS = SBLOOM_HEADER_ITEMS_AT,
    AT_PLANNED_N = 56,
    AT_PLANNED_P = 64,
    AT_PAYLOAD_BYTES = 72,
    AT_PAYLOAD_SUM = 80,
    AT_RESERVED = 88,
    AT_HEADER_SUM = 120
};

uint64_t sbloom_header_payload_bytes(const uint8_t *header)
{
    return sbloom_get_le64(header + AT_PAYLOAD_BYTES);
}

uint64_t sbloom_header_planned_items(const uint8_t *header)
{
    return sbloom_get_le64(header + AT_PLANNED_N);
}

void sbloom_header_start(sbloom_header *h, sbloom_layout layout, uint64_t items,
                         uint64_t planned_items, double planned_fpp)
{
    memset(h, 0, sizeof *h);
    h->version = sbloom_family_of(layout)->format_version;
    h->layout = layout;
    h->hash_function = layout == SBLOOM_LAYOUT_PARQUET ? HASH_XXH64 : HASH_XXH3_64;
    h->k = sbloom_layout_k(layout);
    h->flags = planned_items ? 1u : 0u;
    h->items = items;
    h->planned_items = planned_items;
    h->planned_fpp = planned_items ? planned_fpp : 0.0;
}

void sbloom_header_describe(sbloom_header *h, const sbloom_core *c, uint64_t items,
                            uint64_t planned_items, double planned_fpp)
{
    sbloom_header_start(h, c->layout, items, planned_items, planned_fpp);
    h->nblocks = c->nblocks;
    h->payload_bytes = c->bytes;
    h->payload_checksum = sbloom_core_payload_checksum(c);
}

void sbloom_header_pack(const sbloom_header *h, uint8_t out[SBLOOM_HEADER_BYTES])
{
    uint64_t fpp_bits;
    memcpy(&fpp_bits, &h->planned_fpp, 8);
    memset(out, 0, SBLOOM_HEADER_BYTES);
    memcpy(out + AT_MAGIC, magic, 8);
    sbloom_put_le32(out + AT_VERSION, h->version);
    sbloom_put_le32(out + AT_HEADER_BYTES, SBLOOM_HEADER_BYTES);
    sbloom_put_le32(out + AT_LAYOUT, (uint32_t)h->layout);
    sbloom_put_le32(out + AT_HASH, h->hash_function);
    sbloom_put_le64(out + AT_SEED, h->hash_seed);
    sbloom_put_le64(out + AT_NBLOCKS, h->nblocks);
    sbloom_put_le32(out + AT_K, h->k);
    sbloom_put_le32(out + AT_FLAGS, h->flags);
    sbloom_put_le64(out + AT_ITEMS, h->items);
    sbloom_put_le64(out + AT_PLANNED_N, h->planned_items);
    sbloom_put_le64(out + AT_PLANNED_P, fpp_bits);
    sbloom_put_le64(out + AT_PAYLOAD_BYTES, h->payload_bytes);
    sbloom_put_le64(out + AT_PAYLOAD_SUM, h->payload_checksum);
    sbloom_put_le64(out + AT_HEADER_SUM, sbloom_xxh3(out, AT_HEADER_SUM));
}

/* Keys a filter can have counted in its lines (its family's bound; a composite filter's stages
 * are checked one by one). */
static uint64_t max_items(const sbloom_header *h)
{
    return sbloom_family_of(h->layout)->max_items(h->layout, h->nblocks, h->payload_bytes);
}

/* Plans are made by sbloom_plan_for_layout, so the filter's bytes meet its planned rate at its
 * planned items; a plan that needs more than the filter holds is a forged or damaged header. The
 * slack allows for another C library's last bit in log and lgamma. */
#define PLAN_SLACK 1.000001

int sbloom_header_parse(const uint8_t *b, uint64_t file_bytes, sbloom_header *h)
{
    sbloom_clear_detail();
    if (file_bytes < SBLOOM_HEADER_BYTES)
        return file_bytes >= 8 && memcmp(b, magic, 8) != 0 ? SBLOOM_E_FORMAT : SBLOOM_E_TRUNCATED;
    if (memcmp(b + AT_MAGIC, magic, 8) != 0)
        return SBLOOM_E_FORMAT;
    if (sbloom_xxh3(b, AT_HEADER_SUM) != sbloom_get_le64(b + AT_HEADER_SUM))
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "header checksum mismatch");
    /* From here the header is as its writer made it; what we do not know is a newer writer's. */
    memset(h, 0, sizeof *h);
    h->version = sbloom_get_le32(b + AT_VERSION);
    if ((h->version != SBLOOM_FORMAT_VERSION && h->version != SBLOOM_FORMAT_VERSION_FP) ||
        sbloom_get_le32(b + AT_HEADER_BYTES) != SBLOOM_HEADER_BYTES)
        return sbloom_fail_with(SBLOOM_E_VERSION, "format version %u, header of %u bytes",
                                h->version, sbloom_get_le32(b + AT_HEADER_BYTES));
    for (int i = AT_RESERVED; i < AT_HEADER_SUM; i++)
        if (b[i] != 0)
            return sbloom_fail_with(SBLOOM_E_VERSION, "reserved header byte %d is set", i);
    h->layout = (sbloom_layout)sbloom_get_le32(b + AT_LAYOUT);
    if (!sbloom_layout_known(h->layout))
        return sbloom_fail_with(SBLOOM_E_LAYOUT, "unknown layout %u", (unsigned)h->layout);
    const char *layout = sbloom_layout_name(h->layout);
    /* the version of the layout's family; a composite filter's either (2: a scalable filter whose
     * stages may be fingerprint lines, or a windowed filter whose lines are (its ages)) */
    if (h->version != sbloom_family_of(h->layout)->format_version &&
        !sbloom_layout_composite(h->layout))
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "inconsistent header: format version %u for %s",
                                h->version, layout);
    h->hash_function = sbloom_get_le32(b + AT_HASH);
    h->hash_seed = sbloom_get_le64(b + AT_SEED);
    uint32_t want_hash = h->layout == SBLOOM_LAYOUT_PARQUET ? HASH_XXH64 : HASH_XXH3_64;
    if (h->hash_function != want_hash || h->hash_seed != 0)
        return sbloom_fail_with(SBLOOM_E_VERSION, "hash function %u seed %llu for %s",
                                h->hash_function, (unsigned long long)h->hash_seed, layout);
    h->nblocks = sbloom_get_le64(b + AT_NBLOCKS);
    h->k = sbloom_get_le32(b + AT_K);
    h->flags = sbloom_get_le32(b + AT_FLAGS);
    h->items = sbloom_get_le64(b + AT_ITEMS);
    h->planned_items = sbloom_get_le64(b + AT_PLANNED_N);
    uint64_t fpp_bits = sbloom_get_le64(b + AT_PLANNED_P);
    memcpy(&h->planned_fpp, &fpp_bits, 8);
    h->payload_bytes = sbloom_get_le64(b + AT_PAYLOAD_BYTES);
    h->payload_checksum = sbloom_get_le64(b + AT_PAYLOAD_SUM);
    /* A consistent checksum over inconsistent fields: a bad writer, or a forger. */
    uint64_t block_bytes = sbloom_layout_block_bytes(h->layout);
    if (h->k != sbloom_layout_k(h->layout))
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "inconsistent header: k %u for %s", h->k, layout);
    if (h->nblocks == 0 || h->nblocks > SBLOOM_MAX_BYTES / block_bytes)
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "inconsistent header: %llu blocks of %s",
                                (unsigned long long)h->nblocks, layout);
    if (h->payload_bytes != h->nblocks * block_bytes)
        return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                "inconsistent header: %llu payload bytes for %llu blocks of %llu",
                                (unsigned long long)h->payload_bytes,
                                (unsigned long long)h->nblocks, (unsigned long long)block_bytes);
    if ((h->flags & ~1u) != 0)
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "inconsistent header: unknown flags 0x%x",
                                h->flags);
    int planned = (h->flags & 1u) != 0;
    if (planned ? !(h->planned_items > 0 && h->planned_fpp > 0.0 && h->planned_fpp < 1.0)
                : (h->planned_items != 0 || fpp_bits != 0)) /* all there (flag set) or all zero */
        return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                "inconsistent header: plan flag %d with %llu items at rate %g",
                                planned, (unsigned long long)h->planned_items, h->planned_fpp);
    if (planned && !sbloom_layout_composite(h->layout) &&
        !(sbloom_blocked_fpp(h->layout, h->payload_bytes, h->planned_items) <=
          h->planned_fpp * PLAN_SLACK))
        return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                "inconsistent header: planned %llu items at rate %g need more "
                                "than its %llu bytes",
                                (unsigned long long)h->planned_items, h->planned_fpp,
                                (unsigned long long)h->payload_bytes);
    if (h->items > max_items(h))
        return sbloom_fail_with(
            SBLOOM_E_CORRUPT, "inconsistent header: %llu items in %llu bytes of %s",
            (unsigned long long)h->items, (unsigned long long)h->payload_bytes, layout);
    if (file_bytes != SBLOOM_HEADER_BYTES + h->payload_bytes)
        return sbloom_fail_with(SBLOOM_E_TRUNCATED, "%llu bytes; its header says %llu",
                                (unsigned long long)file_bytes,
                                (unsigned long long)(SBLOOM_HEADER_BYTES + h->payload_bytes));
    return SBLOOM_OK;
}

int sbloom_payload_mismatch(void)
{
    return sbloom_fail_with(SBLOOM_E_CORRUPT, "payload checksum mismatch");
}

int sbloom_core_from_image(sbloom_core *c, const sbloom_header *h, const uint8_t *payload)
{
    if (sbloom_xxh3(payload, (size_t)h->payload_bytes) != h->payload_checksum)
        return sbloom_payload_mismatch();
    int rc = sbloom_core_init(c, h->payload_bytes, h->layout, SBLOOM_OWNER_HEAP);
    if (rc == SBLOOM_OK)
        sbloom_core_payload_in(c, payload);
    return rc;
}
