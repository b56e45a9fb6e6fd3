/* The output's mask of chosen lines (src/cli/flag_bits.h) against a flag-at-a-time model: every
 * byte value at every position of every count up to 64 (a non-zero flag is any of 1..255, the
 * eight-at-a-time step must not take 0x80 or 0xff for something else), and random flags. */
#include <stdint.h>

#include "simdbloom.h"
#include "check.h"
#include "../src/cli/flag_bits.h"

static uint64_t model(const uint8_t *flags, size_t count)
{
    uint64_t bits = 0;
    for (size_t i = 0; i < count; i++)
        if (flags[i])
            bits |= UINT64_C(1) << i;
    return bits;
}

/* 1 when flag_bits agrees with the model, else prints the case and 0. */
static int agrees(const uint8_t *flags, size_t count, const char *what, long at)
{
    uint64_t got = flag_bits(flags, count), want = model(flags, count);
    if (got == want)
        return 1;
    fprintf(stderr, "  %s %ld, count %zu: got 0x%016llx, want 0x%016llx\n", what, at, count,
            (unsigned long long)got, (unsigned long long)want);
    return 0;
}

int main(void)
{
    uint8_t flags[64 + 8];
    unsigned long cases = 0, wrong = 0;
    uint64_t seed = 42;
    /* one flag of each value among zeros, and among flags of 1, at every position and count */
    for (int background = 0; background <= 1; background++)
        for (size_t count = 0; count <= 64; count++)
            for (size_t at = 0; at < count; at++)
                for (int value = 0; value < 256; value++) {
                    memset(flags, background, sizeof flags);
                    flags[at] = (uint8_t)value;
                    flags[count] = 0xff; /* past the count: never read into the mask */
                    cases++;
                    wrong += !agrees(flags, count, "one flag of value", value);
                }
    CHECK(cases == 2 * 65 * 64 / 2 * 256 && wrong == 0);
    cases = 0;
    for (int round = 0; round < 100000; round++) {
        size_t count = test_rand(&seed) % 65;
        uint64_t r = test_rand(&seed), density = test_rand(&seed) % 4;
        for (size_t i = 0; i < sizeof flags; i++) {
            uint8_t v = (uint8_t)(test_rand(&seed) >> 56);
            flags[i] = density == 0 ? v : (r >> (i % 64) & 1) ? v | 1 : 0;
        }
        cases++;
        wrong += !agrees(flags, count, "random round", round);
    }
    CHECK(cases == 100000 && wrong == 0);
    return check_report();
}
