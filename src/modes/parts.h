/*
 * The cores of a composite mode (scalable, windowed): each core with the keys it took and its
 * plan, and what such a mode does over an array of them. The modes hold parts, never sbloom_t's.
 * Nothing here is installed.
 */
#ifndef SIMDBLOOM_PARTS_H
#define SIMDBLOOM_PARTS_H

#include "../core/header.h"

typedef struct sbloom_part {
    sbloom_core core;
    uint64_t items;         /* keys it took */
    uint64_t planned_items; /* its plan */
    double planned_fpp;
} sbloom_part;

/* Keys handled per step of a composite batch (the callers' stack buffers are this long). */
#define SBLOOM_PART_STEP 1024

/* A new heap core for its plan (the smaller 512-bit Bloom layout; with any_family the smallest of
 * those and the fingerprint layouts: sbloom_plan_stage), no keys. */
int sbloom_part_init(sbloom_part *part, uint64_t planned_items, double planned_fpp, int any_family);
/* Releases parts [from, to). */
void sbloom_parts_release(sbloom_part *parts, uint32_t from, uint32_t to);
/* present[j] = 1 when a part of [0, count) other than skip holds key j (n <= SBLOOM_PART_STEP). */
void sbloom_parts_probe(const sbloom_part *parts, uint32_t count, uint32_t skip,
                        const uint64_t *hashes, size_t n, uint8_t *present);
/* Keys [0, n) (n <= SBLOOM_PART_STEP) that no part other than target holds go to target, in
 * order (a key repeated in the batch is new once); is_new as the batch calls give it (may be
 * NULL). Returns the keys new to target, which count in its items, with SBK_FP_REFUSED added
 * when a fingerprint target had no room for one (its is_new 0, the key not stored). */
uint64_t sbloom_parts_insert(sbloom_part *parts, uint32_t count, uint32_t target,
                             const uint64_t *hashes, size_t n, uint8_t *is_new);
/* Lookups of any n keys over every part; returns how many were present. */
uint64_t sbloom_parts_contains(const sbloom_part *parts, uint32_t count, const uint64_t *hashes,
                               size_t n, uint8_t *results);
/* Removes each of n keys from the newest part that holds it (every part must remove keys:
 * sbloom_parts_can_remove); removed[j] = 1 for a key removed (may be NULL). Returns how many. */
uint64_t sbloom_parts_remove(sbloom_part *parts, uint32_t count, const uint64_t *hashes, size_t n,
                             uint8_t *removed);
int sbloom_parts_can_remove(const sbloom_part *parts, uint32_t count);
/* Keys, plans and bytes summed over the parts. */
uint64_t sbloom_parts_items(const sbloom_part *parts, uint32_t count);
uint64_t sbloom_parts_planned(const sbloom_part *parts, uint32_t count);
uint64_t sbloom_parts_bytes(const sbloom_part *parts, uint32_t count);
/* The statistics of the parts together: fill over all bits, the rate a key meets passing every
 * part, the items summed. */
void sbloom_parts_stats(const sbloom_part *parts, uint32_t count, int sampled, sbloom_stats *out);
/* The same statistics over cores given one at a time (a windowed filter's generations, each
 * gathered from its lines): a tally started zeroed, each core added, then the result. */
typedef struct sbloom_parts_tally {
    double fill_bits, bits, miss_product, items;
    int started;
} sbloom_parts_tally;
void sbloom_parts_tally_add(sbloom_parts_tally *t, const sbloom_core *core, int sampled);
void sbloom_parts_tally_end(const sbloom_parts_tally *t, sbloom_stats *out);
/* Heap copies of count parts (released again on failure). */
int sbloom_parts_copy(sbloom_part *dst, const sbloom_part *src, uint32_t count);
/* 1 when two arrays of parts have the same geometry part by part (a union can OR them). */
int sbloom_parts_alike(const sbloom_part *a, const sbloom_part *b, uint32_t count);
/* dst |= src part by part, each part's items estimated again from its fill. */
void sbloom_parts_union(sbloom_part *dst, const sbloom_part *src, uint32_t count);
/* The parts as complete images (header and payload each), one after another: the bytes they take,
 * and writing them at out (returns the end). */
uint64_t sbloom_parts_image_bytes(const sbloom_part *parts, uint32_t count);
uint8_t *sbloom_parts_write_images(const sbloom_part *parts, uint32_t count, uint8_t *out);
/* Part `index` read from the image at `at` (left bytes remain in the payload): header, checksum,
 * a 512-bit Bloom layout (or those `accept` adds: SBLOOM_PART_SLOTS the counting layout, a windowed
 * filter's generation slots; SBLOOM_PART_FINGERPRINTS the fingerprint layouts, a scalable
 * filter's stages of any family), and the plan the caller expects of it; messages name it "NOUN
 * INDEX". *size is the image's length. */
#define SBLOOM_PART_SLOTS 1u
#define SBLOOM_PART_FINGERPRINTS 2u
int sbloom_part_read_image(sbloom_part *part, const char *noun, const uint8_t *at, uint64_t left,
                           uint32_t index, uint64_t planned_items, double planned_fpp,
                           unsigned accept, uint64_t *size);

#endif /* SIMDBLOOM_PARTS_H */
