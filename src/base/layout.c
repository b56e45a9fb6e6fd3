/* Names and fixed geometry of the layouts (the public enum and its strings). */
#include <string.h>

#include "base.h"

/* A block holds k words of block_bytes * 8 / k bits; a key takes one slot of every word: a bit,
 * or in the counting layout a 4-bit counter (slot_bits). The family says what its lines hold
 * (family.c: the family's row). */
static const struct {
    const char *name;
    uint32_t block_bytes;
    uint32_t k;
    uint32_t slot_bits;
    sbloom_family_id family;
} layouts[SBLOOM_LAYOUT_COUNT] = {
    [SBLOOM_LAYOUT_PARQUET - 1] = {"parquet", 32, 8, 1, SBLOOM_FAMILY_BITS},
    [SBLOOM_LAYOUT_BLOCK512_K8 - 1] = {"block512-k8", 64, 8, 1, SBLOOM_FAMILY_BITS},
    [SBLOOM_LAYOUT_BLOCK512_K16 - 1] = {"block512-k16", 64, 16, 1, SBLOOM_FAMILY_BITS},
    [SBLOOM_LAYOUT_COUNTING512 - 1] = {"counting512", 64, 8, 4, SBLOOM_FAMILY_COUNTERS},
    /* stages of 512-bit blocks whose k varies: k 0, and the file counts 64-byte units */
    [SBLOOM_LAYOUT_SCALABLE - 1] = {"scalable", 64, 0, 1, SBLOOM_FAMILY_NONE},
    /* a ring of generations of 512-bit blocks: k 0, and the file counts 64-byte units */
    [SBLOOM_LAYOUT_WINDOWED - 1] = {"windowed", 64, 0, 1, SBLOOM_FAMILY_NONE},
    /* 64-byte lines of fingerprints: no bits set, k 0 (simd/fingerprint.h) */
    [SBLOOM_LAYOUT_FP512_R10 - 1] = {"fp512-r10", 64, 0, 0, SBLOOM_FAMILY_FINGERPRINTS},
    [SBLOOM_LAYOUT_FP512_R13 - 1] = {"fp512-r13", 64, 0, 0, SBLOOM_FAMILY_FINGERPRINTS},
    [SBLOOM_LAYOUT_FP512_R16 - 1] = {"fp512-r16", 64, 0, 0, SBLOOM_FAMILY_FINGERPRINTS},
    [SBLOOM_LAYOUT_FP512_R19 - 1] = {"fp512-r19", 64, 0, 0, SBLOOM_FAMILY_FINGERPRINTS},
    [SBLOOM_LAYOUT_FP512_R22 - 1] = {"fp512-r22", 64, 0, 0, SBLOOM_FAMILY_FINGERPRINTS},
    [SBLOOM_LAYOUT_FP512_R27 - 1] = {"fp512-r27", 64, 0, 0, SBLOOM_FAMILY_FINGERPRINTS},
    [SBLOOM_LAYOUT_FP512_R29 - 1] = {"fp512-r29", 64, 0, 0, SBLOOM_FAMILY_FINGERPRINTS},
};

sbloom_family_id sbloom_layout_family(sbloom_layout layout)
{
    return sbloom_layout_known(layout) ? layouts[layout - 1].family : SBLOOM_FAMILY_NONE;
}

/* The fingerprint geometries, from the kernels' one list (kernel index = layout - 1). */
#define GEOMETRY_ROW(NAME, INDEX, R, S, Q, MARK_BITS, HEAD_BYTES)                                  \
    [INDEX] = {R, S, Q, MARK_BITS, HEAD_BYTES},
static const sbk_fp_geo geometries[SBK_LAYOUTS] = {SBK_FP_GEOMETRIES(GEOMETRY_ROW)};

int sbloom_layout_is_fingerprint(sbloom_layout layout)
{
    return sbloom_layout_family(layout) == SBLOOM_FAMILY_FINGERPRINTS;
}

int sbloom_layout_fp_geometry(sbloom_layout layout, sbk_fp_geo *out)
{
    if (!sbloom_layout_is_fingerprint(layout))
        return SBLOOM_E_LAYOUT;
    *out = geometries[layout - 1];
    return SBLOOM_OK;
}

int sbloom_layout_known(sbloom_layout layout)
{
    return layout >= 1 && layout <= SBLOOM_LAYOUT_COUNT;
}

const char *sbloom_layout_name(sbloom_layout layout)
{
    return sbloom_layout_known(layout) ? layouts[layout - 1].name : NULL;
}

int sbloom_layout_from_name(const char *name)
{
    if (!name)
        return SBLOOM_E_NULL;
    for (int i = 0; i < SBLOOM_LAYOUT_COUNT; i++)
        if (strcmp(name, layouts[i].name) == 0)
            return i + 1;
    return SBLOOM_E_LAYOUT;
}

uint32_t sbloom_layout_block_bytes(sbloom_layout layout)
{
    return sbloom_layout_known(layout) ? layouts[layout - 1].block_bytes : 0;
}

uint32_t sbloom_layout_k(sbloom_layout layout)
{
    return sbloom_layout_known(layout) ? layouts[layout - 1].k : 0;
}

uint32_t sbloom_layout_word_bits(sbloom_layout layout)
{
    if (sbloom_layout_is_fingerprint(layout))
        return 64; /* a line is 8 words of 64 bits (simd/fingerprint.h) */
    return sbloom_layout_known(layout) && layouts[layout - 1].k
               ? layouts[layout - 1].block_bytes * 8 / layouts[layout - 1].k
               : 0;
}

uint32_t sbloom_layout_slots(sbloom_layout layout)
{
    return sbloom_layout_known(layout) && layouts[layout - 1].k
               ? sbloom_layout_word_bits(layout) / layouts[layout - 1].slot_bits
               : 0;
}

int sbloom_layout_is_bits(sbloom_layout layout)
{
    return sbloom_layout_family(layout) == SBLOOM_FAMILY_BITS;
}

int sbloom_layout_composite(sbloom_layout layout)
{
    return layout == SBLOOM_LAYOUT_SCALABLE || layout == SBLOOM_LAYOUT_WINDOWED;
}
