/*
 * The fingerprint family's one-pass line operations against the reference, line by line, for
 * every geometry: random lines (keys put by the reference, a random mark), a random set of
 * their slots taken out by sbk_fp_compact and by sbk_fp_ref_drop_slots (one by one); the two
 * lines must be equal, word for word. Built twice: as is (pext and pdep a bit at a time) and,
 * on x86, with -mbmi2 (the instructions, as the vector tables use them; that build runs only
 * where the CPU has BMI2).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../simd/fingerprint.h"
#include "check.h"

static uint64_t state = 0x9e3779b97f4a7c15u;

static uint64_t next_random(void)
{
    state += UINT64_C(0x9e3779b97f4a7c15);
    return sbk_fp_mix(state);
}

/* A line of `count` random keys, its mark at a random quotient (or none). */
static void random_line(uint64_t *w, sbk_fp_geo g, unsigned count)
{
    memset(w, 0, 64);
    for (unsigned i = 0; i < count; i++) {
        sbk_fp_key k = sbk_fp_split(next_random(), 1, g);
        sbk_fp_ref_put(w, g, k.q, k.rem);
    }
    if (next_random() & 1)
        sbk_fp_lower_mark(w, g, (unsigned)(next_random() % g.q));
}

static int compare_geometry(const char *name, sbk_fp_geo g, unsigned lines)
{
    unsigned differ = 0;
    for (unsigned n = 0; n < lines; n++) {
        uint64_t ref[8], fast[8];
        unsigned count = (unsigned)(next_random() % (g.s + 1));
        random_line(ref, g, count);
        CHECK(sbk_fp_count(ref, g) == count);
        uint64_t all = count == 64 ? ~UINT64_C(0) : (UINT64_C(1) << count) - 1;
        uint64_t slots = next_random() & all;
        if (n % 4 == 0) /* a sparse set, as a rotation's (one slot in G + 1) */
            slots &= next_random() & next_random();
        if (n % 16 == 1)
            slots = all; /* every slot */
        memcpy(fast, ref, 64);
        sbk_fp_ref_drop_slots(ref, g, slots, 0);
        sbk_fp_compact(fast, g, slots);
        if (memcmp(ref, fast, 64) != 0 && differ++ == 0)
            fprintf(stderr, "%s: line %u (%u keys, slots %#llx) differs\n", name, n, count,
                    (unsigned long long)slots);
        CHECK(sbk_fp_count(ref, g) == count - (unsigned)__builtin_popcountll(slots));
    }
    CHECK(differ == 0);
    printf("%-5s %u lines: compact %s the reference\n", name, lines,
           differ ? "DIFFERS from" : "equals");
    return differ == 0;
}

#define COMPARE(NAME, INDEX, R, S, Q, MARK_BITS, HEAD_BYTES)                                       \
    compare_geometry(#NAME, SBK_FP_GEO(R, S, Q, MARK_BITS, HEAD_BYTES), 20000);

int main(void)
{
#if defined(__BMI2__) && (defined(__x86_64__) || defined(__i386__))
    if (!__builtin_cpu_supports("bmi2")) {
        printf("this CPU has no BMI2: the build with it is not run here\n");
        return 77; /* ctest: skipped */
    }
#endif
    SBK_FP_GEOMETRIES(COMPARE)
    return check_report();
}
