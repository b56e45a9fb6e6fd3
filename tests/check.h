/* A minimal test harness: CHECK counts, failures print where, check_report() closes with the
 * plain "N passed, N failed" line and the exit status ctest reads. */
#ifndef SIMDBLOOM_CHECK_H
#define SIMDBLOOM_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static unsigned long check_passed_count, check_failed_count;

static inline void check_record(int ok, const char *file, int line, const char *what)
{
    if (ok) {
        check_passed_count++;
    } else {
        check_failed_count++;
        fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
    }
}

#define CHECK(cond) check_record((cond) ? 1 : 0, __FILE__, __LINE__, #cond)

/* |got - want| <= rel * |want|, printing both on failure. */
#define CHECK_REL(got, want, rel)                                                                  \
    do {                                                                                           \
        double check_g_ = (got), check_w_ = (want);                                                \
        int check_ok_ = fabs(check_g_ - check_w_) <= (rel)*fabs(check_w_);                         \
        if (!check_ok_)                                                                            \
            fprintf(stderr, "  got %.15g, want %.15g (relative tolerance %g)\n", check_g_,         \
                    check_w_, (double)(rel));                                                      \
        check_record(check_ok_, __FILE__, __LINE__, #got " ~ " #want);                             \
    } while (0)

#define CHECK_EQ_U64(got, want)                                                                    \
    do {                                                                                           \
        uint64_t check_g_ = (got), check_w_ = (want);                                              \
        if (check_g_ != check_w_)                                                                  \
            fprintf(stderr, "  got 0x%016llx, want 0x%016llx\n", (unsigned long long)check_g_,     \
                    (unsigned long long)check_w_);                                                 \
        check_record(check_g_ == check_w_, __FILE__, __LINE__, #got " == " #want);                 \
    } while (0)

static inline int check_report(void)
{
    printf("%lu passed, %lu failed\n", check_passed_count, check_failed_count);
    return check_failed_count ? 1 : 0;
}

/* Deterministic 64-bit stream for test keys (splitmix64). */
static inline uint64_t test_rand(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* The bit layouts: one kernel table each, for the tests that compare kernels or bits. */
static const sbloom_layout test_layouts[] = {SBLOOM_LAYOUT_PARQUET, SBLOOM_LAYOUT_BLOCK512_K8,
                                             SBLOOM_LAYOUT_BLOCK512_K16};
#define TEST_NLAYOUTS 3

/* The 200 keys of DATA_DIR/v1-keys.txt, the golden files' keys, one a line (64 bytes at most):
 * the count read (200 unless the file is missing or short). */
#define TEST_GOLDEN_KEYS 200
static inline int test_golden_keys(const char *dir, char lines[TEST_GOLDEN_KEYS][64])
{
    char path[512];
    snprintf(path, sizeof path, "%s/v1-keys.txt", dir);
    FILE *in = fopen(path, "r");
    int n = 0;
    while (in && n < TEST_GOLDEN_KEYS && fgets(lines[n], 64, in)) {
        lines[n][strcspn(lines[n], "\n")] = '\0';
        n++;
    }
    if (in)
        fclose(in);
    return n;
}

/* The fingerprint layouts (one kernel each in every table). */
static inline int test_layout_fingerprint(sbloom_layout layout)
{
    return layout >= SBLOOM_LAYOUT_FP512_R10 && layout <= SBLOOM_LAYOUT_FP512_R29;
}

/* Every layout the library has, 1 .. SBLOOM_LAYOUT_COUNT: the counting layout, the scalable
 * filter and any layout added later. Statistics, estimate and batch tests loop over this, so a
 * new layout is covered by construction, not by remembering to add it to a list. */
/* The layouts of several cores (no blocks of their own, no fixed size): scalable and windowed. */
static inline int test_layout_composite(sbloom_layout layout)
{
    return layout == SBLOOM_LAYOUT_SCALABLE || layout == SBLOOM_LAYOUT_WINDOWED;
}

#define TEST_FOR_EVERY_LAYOUT(layout)                                                              \
    for (sbloom_layout layout = (sbloom_layout)1; (int)layout <= SBLOOM_LAYOUT_COUNT;              \
         layout = (sbloom_layout)(layout + 1))

#endif
