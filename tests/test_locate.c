/* sbloom_locate, sbloom_export_bits and sbloom_import_bits: what a filter kept outside the
 * library (simdbloom-redis keeps the exported bytes in Redis strings) relies on. For every bit
 * layout: a block tested against the located mask answers exactly as the filter does; the mask
 * sets the layout's k bits; exported bytes imported back give a byte-identical file image. */
#include <stdlib.h>
#include <string.h>

#include "simdbloom.h"
#include "check.h"

static int popcount_bytes(const uint8_t *p, size_t n)
{
    int bits = 0;
    for (size_t i = 0; i < n; i++)
        bits += __builtin_popcount(p[i]);
    return bits;
}

/* The filter's answer, computed from its exported bytes and the located mask. */
static int located_contains(const uint8_t *bits, sbloom_layout layout, uint64_t nblocks,
                            uint64_t hash)
{
    uint8_t mask[64];
    uint64_t block;
    if (sbloom_locate(layout, nblocks, hash, &block, mask, sizeof mask) != SBLOOM_OK)
        return -1;
    uint32_t bb = sbloom_layout_block_bytes(layout);
    for (uint32_t i = 0; i < bb; i++)
        if ((bits[block * bb + i] & mask[i]) != mask[i])
            return 0;
    return 1;
}

static void check_layout(sbloom_layout layout)
{
    uint64_t seed = 42 + (uint64_t)layout;
    sbloom_t *f;
    CHECK(sbloom_create_for_layout(&f, 20000, 0.01, layout) == SBLOOM_OK);
    uint64_t bytes = sbloom_bytes(f), nblocks = bytes / sbloom_layout_block_bytes(layout);
    uint64_t *added = malloc(20000 * sizeof *added);
    for (int i = 0; i < 20000; i++)
        sbloom_add_hash(f, added[i] = test_rand(&seed));
    uint8_t *bits = malloc(bytes);
    CHECK(sbloom_export_bits(f, bits, bytes - 1) == SBLOOM_E_TRUNCATED);
    CHECK(sbloom_export_bits(f, bits, bytes) == SBLOOM_OK);

    int disagree = 0, wrong_k = 0, present = 0;
    for (int i = 0; i < 40000; i++) {
        uint64_t h = i % 2 ? test_rand(&seed) : added[i / 2]; /* half of them added before */
        int want = sbloom_contains_hash(f, h);
        present += want;
        disagree += located_contains(bits, layout, nblocks, h) != want;
        uint8_t mask[64];
        uint64_t block;
        sbloom_locate(layout, nblocks, h, &block, mask, sizeof mask);
        wrong_k += popcount_bytes(mask, sbloom_layout_block_bytes(layout)) !=
                       (int)sbloom_layout_k(layout) ||
                   block >= nblocks;
    }
    CHECK(disagree == 0);
    CHECK(wrong_k == 0);
    CHECK(present > 0);

    sbloom_t *g;
    CHECK(sbloom_import_bits(&g, layout, bits, bytes, sbloom_items(f), sbloom_planned_items(f),
                             sbloom_planned_fpp(f)) == SBLOOM_OK);
    uint64_t size = sbloom_serialized_size(f);
    CHECK(size == sbloom_serialized_size(g));
    uint8_t *a = malloc(size), *b = malloc(size);
    CHECK(sbloom_serialize(f, a, size) == SBLOOM_OK && sbloom_serialize(g, b, size) == SBLOOM_OK);
    CHECK(memcmp(a, b, size) == 0);
    free(a);
    free(b);
    sbloom_free(g);
    sbloom_free(f);
    free(bits);
    free(added);
}

int main(void)
{
    for (int i = 0; i < TEST_NLAYOUTS; i++)
        check_layout(test_layouts[i]);

    /* Bad arguments */
    uint8_t mask[64], bits[64] = {0};
    uint64_t block;
    sbloom_t *f = NULL, *c = NULL;
    CHECK(sbloom_locate(SBLOOM_LAYOUT_COUNTING512, 1, 1, &block, mask, 64) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_locate(SBLOOM_LAYOUT_BLOCK512_K8, 0, 1, &block, mask, 64) == SBLOOM_E_INVALID);
    CHECK(sbloom_locate(SBLOOM_LAYOUT_BLOCK512_K8, 1, 1, &block, mask, 32) == SBLOOM_E_INVALID);
    CHECK(sbloom_locate(SBLOOM_LAYOUT_PARQUET, 1, 1, &block, mask, 32) == SBLOOM_OK);
    CHECK(sbloom_locate(SBLOOM_LAYOUT_PARQUET, 1, 1, NULL, mask, 32) == SBLOOM_E_NULL);
    CHECK(sbloom_import_bits(&f, SBLOOM_LAYOUT_BLOCK512_K8, bits, 32, 0, 0, 0) == SBLOOM_E_INVALID);
    CHECK(f == NULL);
    CHECK(sbloom_import_bits(&f, SBLOOM_LAYOUT_COUNTING512, bits, 64, 0, 0, 0) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_import_bits(&f, SBLOOM_LAYOUT_BLOCK512_K8, NULL, 64, 0, 0, 0) == SBLOOM_E_NULL);
    CHECK(sbloom_create_for_layout(&c, 1000, 0.01, SBLOOM_LAYOUT_COUNTING512) == SBLOOM_OK);
    CHECK(sbloom_export_bits(c, bits, sizeof bits) == SBLOOM_E_LAYOUT);
    sbloom_free(c);
    return check_report();
}
