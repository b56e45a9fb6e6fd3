/*
 * The header's inline single-key calls (sbloom_add_hash, sbloom_contains_hash) against the
 * library's own functions, reached as (sbloom_add_hash)(f, h): for every layout the answers,
 * the item counts and the filter bytes must be the same, bit for bit; and the filters the inline
 * path must leave to the library (counting, scalable, concurrent, read-only, a forced scalar
 * table) must say so in their inline view, and still answer right through the inline call.
 * Built twice on x86: with -mavx2, where the header writes the calls out inline, and plain, where
 * they are the library's own (which still checks which filters the library marks inline-able).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simdbloom.h"
#include "check.h"

#define KEYS 20000

static const sbloom_inline_view *view_of(const sbloom_t *f)
{
    return (const sbloom_inline_view *)(const void *)f;
}

/* Two filters of one layout, one fed through the inline calls and one through the library's:
 * same answers, counts and bytes; lookups of added and fresh keys agree. */
static void inline_equals_library(sbloom_layout layout)
{
    sbloom_t *inl = NULL, *lib = NULL;
    CHECK(sbloom_create_for_layout(&inl, 5000, 0.01, layout) == SBLOOM_OK);
    CHECK(sbloom_create_for_layout(&lib, 5000, 0.01, layout) == SBLOOM_OK);
    if (!inl || !lib)
        return;
    /* The bit layouts take the inline path, unless SIMDBLOOM_ISA forces the reference code. */
    uint32_t inline_layout =
        layout != SBLOOM_LAYOUT_COUNTING512 && !getenv("SIMDBLOOM_ISA") ? (uint32_t)layout : 0u;
    if (!getenv("SIMDBLOOM_ISA")) {
        CHECK(view_of(inl)->inline_add == inline_layout);
        CHECK(view_of(inl)->inline_contains == inline_layout);
    }
    static uint64_t keys[KEYS];
    uint64_t state = 7 + (uint64_t)layout, same_answers = 1, fresh = 0;
    for (int i = 0; i < KEYS; i++) {
        /* every fifth key repeats an earlier one: present keys answer 0 */
        uint64_t h = keys[i] = i % 5 == 4 ? keys[i - 3] : test_rand(&state);
        int a = sbloom_add_hash(inl, h);
        int b = (sbloom_add_hash)(lib, h);
        same_answers &= a == b;
        fresh += (uint64_t)(a == 1);
    }
    CHECK(same_answers);
    CHECK(fresh > KEYS / 2); /* the keys were mostly new: the answers were not all 0 */
    CHECK_EQ_U64(sbloom_items(inl), sbloom_items(lib));
    CHECK(sbloom_bytes(inl) == sbloom_bytes(lib) &&
          memcmp(sbloom_data(inl), sbloom_data(lib), (size_t)sbloom_bytes(lib)) == 0);
    uint64_t other = 99, agree = 1, found = 0;
    for (int i = 0; i < KEYS; i++) {
        uint64_t added = keys[i], absent = test_rand(&other);
        int in = sbloom_contains_hash(inl, added);
        agree &= in == (sbloom_contains_hash)(lib, added);
        agree &= sbloom_contains_hash(inl, absent) == (sbloom_contains_hash)(lib, absent);
        found += (uint64_t)(in == 1);
    }
    CHECK(agree);
    CHECK(found == KEYS); /* no false negative */
    sbloom_free(inl);
    sbloom_free(lib);
}

/* Filters the inline path leaves to the library: the view says 0, and the calls still work. */
static void library_keeps(void)
{
    sbloom_t *f = NULL;
    CHECK(sbloom_create_scalable(&f, 1000, 0.01) == SBLOOM_OK);
    if (f) {
        CHECK(view_of(f)->inline_add == 0 && view_of(f)->inline_contains == 0);
        CHECK(sbloom_add_hash(f, 42) == 1 && sbloom_contains_hash(f, 42) == 1);
        CHECK(sbloom_items(f) == 1);
        sbloom_free(f);
    }

    CHECK(sbloom_create(&f, 1000, 0.01) == SBLOOM_OK);
    if (f) {
        CHECK(sbloom_set_concurrent(f, 1) == SBLOOM_OK);
        CHECK(view_of(f)->inline_add == 0 && view_of(f)->inline_contains == 0);
        CHECK(sbloom_add_hash(f, 42) == 1 && sbloom_contains_hash(f, 42) == 1);
        CHECK(sbloom_set_concurrent(f, 0) == SBLOOM_OK);
        CHECK(view_of(f)->inline_add != 0); /* plain again: inline again */
        CHECK(sbloom_add_hash(f, 43) == 1 && sbloom_items(f) == 2);
        sbloom_free(f);
    }

    /* A read-only mapping: the inline add must refuse (through the library), never write. */
    char dir[] = "/tmp/simdbloom-inline-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(!"mkdtemp");
        return;
    }
    char path[64];
    snprintf(path, sizeof path, "%s/f.sbloom", dir);
    CHECK(sbloom_create(&f, 1000, 0.01) == SBLOOM_OK);
    if (f) {
        sbloom_add_hash(f, 42);
        CHECK(sbloom_save(f, path) == SBLOOM_OK);
        sbloom_free(f);
        f = NULL;
    }
    CHECK(sbloom_map(&f, path, 0) == SBLOOM_OK);
    if (f) {
        CHECK(view_of(f)->inline_add == 0 && view_of(f)->inline_contains != 0);
        CHECK(sbloom_add_hash(f, 7) == SBLOOM_E_READONLY);
        CHECK(sbloom_contains_hash(f, 42) == 1);
        sbloom_free(f);
    }
    unlink(path);
    rmdir(dir);

    /* A forced scalar table means the reference code: the library's, not the caller's. */
    CHECK(sbloom_set_isa("scalar") == SBLOOM_OK);
    CHECK(sbloom_create(&f, 1000, 0.01) == SBLOOM_OK);
    if (f) {
        CHECK(view_of(f)->inline_add == 0 && view_of(f)->inline_contains == 0);
        CHECK(sbloom_add_hash(f, 42) == 1 && sbloom_contains_hash(f, 42) == 1);
        sbloom_free(f);
    }
    CHECK(sbloom_set_isa(NULL) == SBLOOM_OK);
    CHECK(sbloom_create(&f, 1000, 0.01) == SBLOOM_OK);
    if (f) {
        CHECK(view_of(f)->inline_add != 0);
        sbloom_free(f);
    }
    CHECK(sbloom_add_hash(NULL, 1) == SBLOOM_E_NULL &&
          sbloom_contains_hash(NULL, 1) == SBLOOM_E_NULL);
    /* What the inline lookup reads for NULL sends it to the library; in a loop over filters and
     * NULLs, each lookup reads its own filter. */
    CHECK(sbloom_inline_null_view.inline_contains == 0 && sbloom_inline_null_view.inline_add == 0);
    sbloom_t *g = NULL;
    CHECK(sbloom_create(&g, 1000, 0.01) == SBLOOM_OK);
    if (g) {
        const sbloom_t *order[4] = {g, NULL, g, NULL};
        int answers[4];
        CHECK(sbloom_add_hash(g, 7) == 1);
        for (int i = 0; i < 4; i++)
            answers[i] = sbloom_contains_hash(order[i], 7);
        CHECK(answers[0] == 1 && answers[1] == SBLOOM_E_NULL && answers[2] == 1 &&
              answers[3] == SBLOOM_E_NULL);
        sbloom_free(g);
    }
}

int main(void)
{
#ifdef TEST_INLINE_AVX2 /* this build runs the header's AVX2 form */
#ifndef __AVX2__
#error "TEST_INLINE_AVX2 needs -mavx2"
#endif
    if (!__builtin_cpu_supports("avx2")) {
        printf("SKIP: this CPU has no AVX2\n");
        return 77;
    }
#endif
    if (getenv("SIMDBLOOM_ISA"))
        printf("SIMDBLOOM_ISA is set: the checks of which filters go inline are skipped\n");
    for (int i = 0; i < TEST_NLAYOUTS; i++)
        inline_equals_library(test_layouts[i]);
    inline_equals_library(SBLOOM_LAYOUT_COUNTING512);
    /* The header's AVX2 code against simd/avx2.c itself (the CPU's best may be avx512.c): both
     * take their salts from the header's one definition, and must set the same bits. */
    if (!getenv("SIMDBLOOM_ISA") && sbloom_set_isa("avx2") == SBLOOM_OK) {
        CHECK(strcmp(sbloom_isa(), "avx2") == 0);
        for (int i = 0; i < TEST_NLAYOUTS; i++)
            inline_equals_library(test_layouts[i]);
        CHECK(sbloom_set_isa(NULL) == SBLOOM_OK);
    }
    if (!getenv("SIMDBLOOM_ISA"))
        library_keeps();
    return check_report();
}
