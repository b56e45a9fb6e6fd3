/* The filter file's header (docs/FORMAT.md): packing, and validation before any allocation. */
#ifndef SIMDBLOOM_FORMAT_H
#define SIMDBLOOM_FORMAT_H

#include "internal.h"

#define SBLOOM_HEADER_BYTES 128
#define SBLOOM_FORMAT_VERSION 1
#define SBLOOM_HEADER_ITEMS_AT 48 /* offset of the item count */

typedef struct sbloom_header {
    uint32_t version;
    sbloom_layout layout;
    uint32_t hash_function; /* 1 = XXH64, 2 = XXH3-64 */
    uint64_t hash_seed;
    uint64_t nblocks;
    uint32_t k;
    uint32_t flags; /* bit 0: planned_items and planned_fpp are set */
    uint64_t items;
    uint64_t planned_items;
    double planned_fpp;
    uint64_t payload_bytes;
    uint64_t payload_checksum;
} sbloom_header;

/* The item-count word of a filter's image header (a little-endian host's in-place image). */
static inline uint64_t *sbloom_header_items_word(const sbloom_t *f)
{
    return (uint64_t *)(f->image + SBLOOM_HEADER_ITEMS_AT);
}

/* The payload size a header claims (offset 72), read before any validation. */
uint64_t sbloom_header_payload_bytes(const uint8_t *header);
/* src/scalable.c: a scalable filter from its validated header and checksummed payload. */
int sbloom_scalable_from_payload(sbloom_t **out, const sbloom_header *h, const uint8_t *payload);

/* The header that describes this filter (its payload checksum computed over the file bytes). */
void sbloom_header_of(const sbloom_t *f, sbloom_header *h);
void sbloom_header_pack(const sbloom_header *h, uint8_t out[SBLOOM_HEADER_BYTES]);
/* Validates the first SBLOOM_HEADER_BYTES of a file of file_bytes bytes: magic, header checksum,
 * version, layout, hash, geometry, and that file_bytes is exactly header + payload.
 */
int sbloom_header_parse(const uint8_t *bytes, uint64_t file_bytes, sbloom_header *h);
/* SBLOOM_E_CORRUPT, with the detail that the payload's checksum does not match. */
int sbloom_payload_mismatch(void);
/* XXH3-64 of the payload as stored in the file (little-endian words). */
uint64_t sbloom_payload_checksum(const sbloom_t *f);
/* Moves a validated header's counters and plan into a new filter. */
void sbloom_header_apply(const sbloom_header *h, sbloom_t *f);
/* src/image.c: a filter over the image at base (header h already validated), its bits in place;
 * read-only unless writable. */
int sbloom_image_wrap(sbloom_t **out, void *base, const sbloom_header *h, int writable);

#endif
