/* What the fuzz targets share: reading the input as a stream of small fields, and one filter per
 * instruction set this machine runs, the scalar reference first. */
#ifndef SIMDBLOOM_FUZZ_COMMON_H
#define SIMDBLOOM_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "simdbloom.h"

#define FUZZ_MAX_ISAS 12
/* The fixed-size layouts (1 .. 4) the kernel fuzzers pick from: the scalable one (5) has stages,
 * not blocks of its own. Kept at 4 so that committed inputs keep their meaning. */
#define FUZZ_FIXED_LAYOUTS SBLOOM_LAYOUT_COUNTING512

typedef struct fuzz_input {
    const uint8_t *data;
    size_t size, pos;
} fuzz_input;

/* The next n bytes as a little-endian number; zeros once the input runs out. */
static inline uint64_t fuzz_take(fuzz_input *in, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)(in->pos < in->size ? in->data[in->pos++] : 0) << (8 * i);
    return v;
}

static inline int fuzz_done(const fuzz_input *in)
{
    return in->pos >= in->size;
}

/* One operation of the kernel fuzzers: an opcode byte (returned; its low 2 bits choose the
 * operation) and n = opcode >> 2 hashes of 8 bytes each into hashes[0 .. n). */
static inline unsigned fuzz_take_op(fuzz_input *in, uint64_t hashes[64], size_t *n)
{
    unsigned op = (unsigned)fuzz_take(in, 1);
    *n = op >> 2;
    for (size_t i = 0; i < *n; i++)
        hashes[i] = fuzz_take(in, 8);
    return op;
}

/* One operation of the fuzzers of the layouts that remove (fuzz_counting, fuzz_fingerprint):
 * by the opcode's low 2 bits, test-and-add, remove or contains of the n hashes (answers in out),
 * or one key of each through the single-key calls (a number that encodes their three answers). */
static inline int64_t fuzz_removing_op(sbloom_t *filter, unsigned op, const uint64_t *hashes,
                                       size_t n, uint8_t *out)
{
    switch (op & 3) {
    case 0: return sbloom_add_if_new_hashes(filter, hashes, n, out);
    case 1: return sbloom_remove_hashes(filter, hashes, n, out);
    case 2: return sbloom_contains_hashes(filter, hashes, n, out);
    default:
        return n ? sbloom_add_hash(filter, hashes[0]) * 4 +
                       sbloom_remove_hash(filter, hashes[n - 1]) * 2 +
                       sbloom_contains_hash(filter, hashes[0])
                 : 0;
    }
}

typedef struct fuzz_filters {
    size_t count;
    const char *isa[FUZZ_MAX_ISAS];
    sbloom_t *filter[FUZZ_MAX_ISAS]; /* filter[0] runs on scalar */
} fuzz_filters;

/* One filter of the given size and layout per usable instruction set; aborts (a finding) if any
 * creation fails, since these sizes are small. */
static inline void fuzz_filters_create(fuzz_filters *ff, uint64_t bytes, sbloom_layout layout)
{
    ff->count = sbloom_isa_list(ff->isa, FUZZ_MAX_ISAS);
    if (ff->count > FUZZ_MAX_ISAS)
        ff->count = FUZZ_MAX_ISAS;
    for (size_t i = 0; i < ff->count; i++) {
        if (sbloom_set_isa(ff->isa[i]) != SBLOOM_OK ||
            sbloom_create_bytes(&ff->filter[i], bytes, layout) != SBLOOM_OK)
            abort();
    }
    sbloom_set_isa(NULL);
}

/* Every filter byte-identical to the scalar one, with the same item count. */
static inline void fuzz_filters_check_and_free(fuzz_filters *ff)
{
    for (size_t i = 1; i < ff->count; i++) {
        if (memcmp(sbloom_data(ff->filter[0]), sbloom_data(ff->filter[i]),
                   sbloom_bytes(ff->filter[0])) != 0 ||
            sbloom_items(ff->filter[0]) != sbloom_items(ff->filter[i]))
            abort();
    }
    for (size_t i = 0; i < ff->count; i++)
        sbloom_free(ff->filter[i]);
}

#endif
