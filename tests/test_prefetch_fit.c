/* The prefetch window fitted while large batches run (src/core/prefetch_fit.c): a batch run in
 * timed segments gives the answers, counts and bits of the same keys in small batches; the
 * window settles on a candidate; the environment's window is never fitted.
 *   test_prefetch_fit           fitting on (the default)
 *   test_prefetch_fit env N     SIMDBLOOM_PREFETCH_AHEAD=N is set: every class below 64 MiB keeps N
 *   test_prefetch_fit off       SIMDBLOOM_PREFETCH_FIT=0 is set: the defaults stay, unfitted */
#include <stdlib.h>
#include <string.h>

#include "simdbloom.h"

#include "check.h"

#define LARGE 250000 /* keys of a batch that fits the window (it needs 7 segments of 1,536) */
#define SMALL 1000   /* keys of a batch that never does */

static int is_candidate(size_t w)
{
    return w == 0 || w == 16 || w == 32 || w == 64 || w == 128 || w == 256 || w == 512;
}

/* The same keys through a filter in large batches and another in small ones: answers, counts,
 * bits and items must agree, for add_if_new, contains and (counting) remove. */
static void same_answers(sbloom_layout layout, uint64_t bytes, uint64_t seed)
{
    sbloom_t *large = NULL, *small = NULL;
    CHECK(sbloom_create_bytes(&large, bytes, layout) == SBLOOM_OK);
    CHECK(sbloom_create_bytes(&small, bytes, layout) == SBLOOM_OK);
    if (!large || !small)
        return;
    uint64_t *keys = malloc(LARGE * sizeof *keys);
    uint8_t *got = malloc(LARGE), *want = malloc(LARGE);
    if (!keys || !got || !want) {
        CHECK(!"memory");
        return;
    }
    for (int pass = 0; pass < 3; pass++) {
        for (size_t i = 0; i < LARGE; i++) /* repeats inside the batch: new only the first time */
            keys[i] = test_rand(&seed);
        for (size_t i = 5; i < LARGE; i += 97)
            keys[i] = keys[i - 5];
        int64_t a = sbloom_add_if_new_hashes(large, keys, LARGE, got);
        int64_t b = 0;
        for (size_t at = 0; at < LARGE; at += SMALL)
            b += sbloom_add_if_new_hashes(small, keys + at, SMALL, want + at);
        CHECK(a == b);
        CHECK(memcmp(got, want, LARGE) == 0);
        CHECK(sbloom_items(large) == sbloom_items(small));
        CHECK(memcmp(sbloom_data(large), sbloom_data(small), sbloom_bytes(large)) == 0);
        /* lookups of half present, half fresh keys */
        for (size_t i = 0; i < LARGE; i += 2)
            keys[i] = test_rand(&seed);
        a = sbloom_contains_hashes(large, keys, LARGE, got);
        b = 0;
        for (size_t at = 0; at < LARGE; at += SMALL)
            b += sbloom_contains_hashes(small, keys + at, SMALL, want + at);
        CHECK(a == b && a >= LARGE / 2);
        CHECK(memcmp(got, want, LARGE) == 0);
        CHECK(sbloom_contains_hashes(large, keys, LARGE, NULL) == a);
        if (layout == SBLOOM_LAYOUT_COUNTING512) {
            a = sbloom_remove_hashes(large, keys, LARGE, got);
            b = 0;
            for (size_t at = 0; at < LARGE; at += SMALL)
                b += sbloom_remove_hashes(small, keys + at, SMALL, want + at);
            CHECK(a == b);
            CHECK(memcmp(got, want, LARGE) == 0);
            CHECK(memcmp(sbloom_data(large), sbloom_data(small), sbloom_bytes(large)) == 0);
        }
    }
    free(keys);
    free(got);
    free(want);
    sbloom_free(large);
    sbloom_free(small);
}

/* Large lookups on a filter of `bytes` until its window is fitted (at most 60 batches: a round
 * during which the thread took a page fault does not count). */
static void fits(uint64_t bytes, size_t default_window)
{
    sbloom_t *f = NULL;
    CHECK(sbloom_create_bytes(&f, bytes, SBLOOM_LAYOUT_BLOCK512_K8) == SBLOOM_OK);
    uint64_t *keys = malloc(LARGE * sizeof *keys);
    if (!f || !keys) {
        CHECK(!"memory");
        return;
    }
    uint64_t seed = bytes;
    for (size_t i = 0; i < LARGE; i++)
        keys[i] = test_rand(&seed);
    int fitted = 1;
    CHECK(sbloom_prefetch_window(f, &fitted) == default_window && fitted == 0);
    CHECK(sbloom_add_hashes(f, keys, SMALL) >= 0); /* small batches never fit */
    CHECK(sbloom_prefetch_window(f, &fitted) == default_window && fitted == 0);
    for (int b = 0; b < 60 && !fitted; b++) {
        CHECK(sbloom_contains_hashes(f, keys, LARGE, NULL) >= 0);
        sbloom_prefetch_window(f, &fitted);
    }
    size_t w = sbloom_prefetch_window(f, &fitted);
    CHECK(fitted == 1);
    CHECK(is_candidate(w));
    free(keys);
    sbloom_free(f);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "fit";
    sbloom_t *tiny = NULL;
    int fitted = 1;
    CHECK(sbloom_create_bytes(&tiny, 64 << 10, SBLOOM_LAYOUT_BLOCK512_K8) == SBLOOM_OK);
    CHECK(sbloom_prefetch_window(tiny, &fitted) == 0 && fitted == 0); /* in the caches */
    sbloom_free(tiny);
    CHECK(sbloom_prefetch_window(NULL, NULL) == 0);

    if (strcmp(mode, "fit") == 0) {
        /* each in a size class of its own, so that each layout's first batches are segmented */
        same_answers(SBLOOM_LAYOUT_PARQUET, 1u << 20, 1);
        same_answers(SBLOOM_LAYOUT_BLOCK512_K8, 2u << 20, 2);
        same_answers(SBLOOM_LAYOUT_BLOCK512_K16, 4u << 20, 3);
        same_answers(SBLOOM_LAYOUT_COUNTING512, 8u << 20, 4);
        fits(16u << 20, 32);
        fits(64u << 20, 64); /* from 64 MiB the default is the DRAM window */
    } else {
        size_t want = strcmp(mode, "env") == 0 && argc > 2 ? (size_t)atoi(argv[2]) : 32;
        sbloom_t *f = NULL;
        uint64_t *keys = malloc(LARGE * sizeof *keys);
        CHECK(sbloom_create_bytes(&f, 16u << 20, SBLOOM_LAYOUT_BLOCK512_K8) == SBLOOM_OK);
        if (f && keys) {
            uint64_t seed = 9;
            for (size_t i = 0; i < LARGE; i++)
                keys[i] = test_rand(&seed);
            for (int b = 0; b < 20; b++)
                CHECK(sbloom_contains_hashes(f, keys, LARGE, NULL) >= 0);
            CHECK(sbloom_prefetch_window(f, &fitted) == want);
            CHECK(fitted == 0);
        }
        free(keys);
        sbloom_free(f);
        same_answers(SBLOOM_LAYOUT_BLOCK512_K8, 2u << 20, 5);
    }
    return check_report();
}
