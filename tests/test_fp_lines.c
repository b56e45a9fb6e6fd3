/*
 * The fingerprint family's one-pass line operations against the reference, line by line, for
 * every geometry: random lines (keys put by the reference, a random mark), a random set of
 * their slots taken out by sbk_fp_compact and by sbk_fp_ref_drop_slots (one by one); the two
 * lines must be equal, word for word. Built twice: as is (pext and pdep a bit at a time) and,
 * on x86, with -mbmi2 (the instructions, as the vector tables use them; that build runs only
 * where the CPU has BMI2). Then a window's rotation (the kernel tables' window_age) of random
 * lines with random ages, every instruction set's against scalar's, byte for byte: the scan
 * that finds an age's entries and each form's way of taking them out or retagging them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../simd/fingerprint.h"
#include "check.h"
#include "simdbloom.h"

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

/* Rotations of ROTATED_LINES lines (main and spare) with their spill bytes: 20 rounds for each
 * age width of 1 to 3 bits (the ages form keeps at most 8 generations) that the geometry's extras
 * hold, each dropping or retagging one random age, `isa`'s window_age against scalar's. */
#define ROTATED_LINES 64
static int compare_rotations(const char *isa, int layout, const char *name, sbk_fp_geo g)
{
    const sbk_window_age_fn fast = sbloom_kernels_by_name(isa)->layout[layout].window_age;
    const sbk_window_age_fn ref = sbloom_kernels_by_name("scalar")->layout[layout].window_age;
    size_t words = 8 * (ROTATED_LINES + sbk_fp_spill_lines(ROTATED_LINES));
    uint64_t *a = aligned_alloc(64, 8 * words), *b = aligned_alloc(64, 8 * words);
    unsigned rounds = 0, differ = 0;
    for (unsigned age_bits = 1; age_bits <= 3 && age_bits <= sbk_fp_extra_bits(g); age_bits++) {
        for (unsigned round = 0; round < 20; round++, rounds++) {
            for (unsigned line = 0; line < ROTATED_LINES; line++)
                random_line(a + 8 * line, g, (unsigned)(next_random() % (g.s + 1)));
            for (size_t i = 8 * ROTATED_LINES; i < words; i++)
                a[i] = next_random() & UINT64_C(0x0707070707070707); /* spill bytes 0 .. 7 */
            memcpy(b, a, 8 * words);
            uint32_t ages = UINT32_C(1) << age_bits, age = (uint32_t)(next_random() % ages);
            uint32_t to = round % 4 == 3 ? (age + 1) % ages : SBK_FP_AGE_DROP;
            uint64_t from = round % 5 == 4 ? next_random() % ROTATED_LINES : 0;
            ref(a, ROTATED_LINES, from, ROTATED_LINES, age_bits, age, to);
            fast(b, ROTATED_LINES, from, ROTATED_LINES, age_bits, age, to);
            if (memcmp(a, b, 8 * words) != 0 && differ++ == 0)
                fprintf(stderr, "%s %s: %u age bits, age %u to %u: the lines differ\n", isa, name,
                        age_bits, (unsigned)age, (unsigned)to);
        }
    }
    free(a);
    free(b);
    CHECK(differ == 0);
    printf("%-5s %-12s %u rotations of %d lines: %s scalar's\n", name, isa, rounds, ROTATED_LINES,
           differ ? "DIFFER from" : "equal");
    return differ == 0;
}

#define ROTATE(NAME, INDEX, R, S, Q, MARK_BITS, HEAD_BYTES)                                        \
    compare_rotations(isa, INDEX, #NAME, SBK_FP_GEO(R, S, Q, MARK_BITS, HEAD_BYTES));

/* The concurrent forms' spare lock (kernels.h's reaches_spare) over SPARE_LINES random lines of
 * every fill, full ones among them, their marks random: each key's answer is its definition's, its
 * quotient at or above its line's mark or its line full, on every table (scalar's too). */
#define SPARE_LINES 64
static int compare_reaches_spare(const char *isa, int layout, const char *name, sbk_fp_geo g)
{
    const sbk_probe_one_fn fast = sbloom_kernels_by_name(isa)->layout[layout].reaches_spare;
    uint64_t *lines = aligned_alloc(64, 64 * SPARE_LINES);
    uint64_t main = sbk_fp_main_lines(SPARE_LINES);
    unsigned keys = 0, differ = 0, reaching = 0;
    for (unsigned round = 0; round < 20; round++) {
        for (unsigned line = 0; line < SPARE_LINES; line++)
            random_line(lines + 8 * line, g, (unsigned)(next_random() % (g.s + 1)));
        for (unsigned i = 0; i < 200; i++, keys++) {
            uint64_t hash = next_random();
            sbk_fp_key k = sbk_fp_split(hash, main, g);
            const uint64_t *w = lines + 8 * k.line;
            int want = k.q >= sbk_fp_mark(w, g) || sbk_fp_count(w, g) >= g.s;
            reaching += (unsigned)want;
            differ += (unsigned)(fast(lines, SPARE_LINES, hash) != want);
        }
    }
    free(lines);
    CHECK(differ == 0 && reaching > 0 && reaching < keys);
    printf("%-5s %-12s reaches_spare: %u keys (%u reaching the spare), %u wrong\n", name, isa, keys,
           reaching, differ);
    return differ == 0;
}

#define REACHES_SPARE(NAME, INDEX, R, S, Q, MARK_BITS, HEAD_BYTES)                                 \
    compare_reaches_spare(isa, INDEX, #NAME, SBK_FP_GEO(R, S, Q, MARK_BITS, HEAD_BYTES));

int main(void)
{
#if defined(__BMI2__) && (defined(__x86_64__) || defined(__i386__))
    if (!__builtin_cpu_supports("bmi2")) {
        printf("this CPU has no BMI2: the build with it is not run here\n");
        return 77; /* ctest: skipped */
    }
#endif
    SBK_FP_GEOMETRIES(COMPARE)
    const char *names[16];
    size_t isas = sbloom_isa_list(names, 16);
    for (size_t i = 0; i < isas && i < 16; i++) {
        const char *isa = names[i];
        SBK_FP_GEOMETRIES(REACHES_SPARE)
        if (strcmp(isa, "scalar") != 0) {
            SBK_FP_GEOMETRIES(ROTATE)
        }
    }
    return check_report();
}
