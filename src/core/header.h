/* The filter file's header (docs/FORMAT.md): packing, validation before any allocation, and a
 * core's payload in file order. Nothing here is installed. */
#ifndef SIMDBLOOM_HEADER_H
#define SIMDBLOOM_HEADER_H

#include "core.h"

#define SBLOOM_HEADER_BYTES 128
/* (format versions: the families', base.h) */
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

/* The header of a file whose payload is this core's blocks: its count and plan (planned_items 0:
 * none), the payload checksum computed over the file bytes. */
void sbloom_header_describe(sbloom_header *h, const sbloom_core *c, uint64_t items,
                            uint64_t planned_items, double planned_fpp);
/* The header of a file of layout `layout` (no blocks of its own: the scalable filter) whose
 * payload_bytes and payload_checksum the caller sets. */
void sbloom_header_start(sbloom_header *h, sbloom_layout layout, uint64_t items,
                         uint64_t planned_items, double planned_fpp);
void sbloom_header_pack(const sbloom_header *h, uint8_t out[SBLOOM_HEADER_BYTES]);
/* The payload size a header claims (offset 72), read before any validation. */
uint64_t sbloom_header_payload_bytes(const uint8_t *header);
/* Its plan's keys as written, unchecked (0: none). */
uint64_t sbloom_header_planned_items(const uint8_t *header);
/* Validates the first SBLOOM_HEADER_BYTES of a file of file_bytes bytes: magic, header checksum,
 * version, layout, hash, geometry, and that file_bytes is exactly header + payload. */
int sbloom_header_parse(const uint8_t *bytes, uint64_t file_bytes, sbloom_header *h);
/* SBLOOM_E_CORRUPT, with the detail that the payload's checksum does not match. */
int sbloom_payload_mismatch(void);

/* A new heap core from a validated header and its payload (checksum checked here). */
int sbloom_core_from_image(sbloom_core *c, const sbloom_header *h, const uint8_t *payload);

#endif /* SIMDBLOOM_HEADER_H */
