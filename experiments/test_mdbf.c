/* Seed 001's multi-dimensional Bloom filter (bench/mdbf.c): no false negatives in either reading,
 * rates as its model predicts, bad parameters refused. */
#include <math.h>

#include "simdbloom.h"
#include "../tests/check.h"
#include "mdbf.h"

static double measured(const mdbf_params *p, uint64_t n, uint64_t probes, int *no_false_negative)
{
    mdbf *f = mdbf_new(p);
    uint64_t state = 5, positives = 0;
    uint64_t keys[2000];
    for (uint64_t i = 0; i < n; i++) {
        keys[i] = test_rand(&state);
        mdbf_add(f, &keys[i], 8);
    }
    *no_false_negative = 1;
    for (uint64_t i = 0; i < n; i++)
        *no_false_negative &= mdbf_contains(f, &keys[i], 8);
    for (uint64_t i = 0; i < probes; i++) {
        uint64_t x = test_rand(&state) | (UINT64_C(1) << 63);
        positives += (uint64_t)mdbf_contains(f, &x, 8);
    }
    mdbf_free(f);
    return (double)positives / (double)probes;
}

int main(void)
{
    for (int every = 0; every < 2; every++) {
        for (uint32_t s = 1; s <= 4; s++) {
            mdbf_params p = {.groups = s, .bits = 20000, .k = 4, .every_group = every};
            int ok;
            double rate = measured(&p, 2000, 400000, &ok);
            CHECK(ok);
            double want = mdbf_predicted_fpp(&p, 2000);
            double sigma = sqrt(want * (1 - want) / 400000);
            if (!(fabs(rate - want) <= 5 * sigma + 2e-6))
                fprintf(stderr, "  S=%u every=%d: measured %g, predicted %g\n", s, every, rate,
                        want);
            CHECK(fabs(rate - want) <= 5 * sigma + 2e-6);
        }
    }
    /* The paper's reading: more groups, more false positives; the other: fewer. */
    mdbf_params one = {.groups = 1, .bits = 20000, .k = 4}, four = one;
    four.groups = 4;
    CHECK(mdbf_predicted_fpp(&four, 2000) > mdbf_predicted_fpp(&one, 2000));
    four.every_group = 1;
    CHECK(mdbf_predicted_fpp(&four, 2000) < mdbf_predicted_fpp(&one, 2000));
    mdbf_params bad = {.groups = 0, .bits = 10, .k = 2};
    CHECK(mdbf_new(&bad) == NULL);
    bad = (mdbf_params){.groups = 1, .bits = 10, .k = 2, .k1 = 3};
    CHECK(mdbf_new(&bad) == NULL);
    plain_bf *f = plain_bf_new(1000, 3);
    uint64_t x = 42;
    plain_bf_add(f, &x, 8);
    CHECK(plain_bf_contains(f, &x, 8) == 1);
    plain_bf_free(f);
    CHECK(plain_bf_new(0, 3) == NULL);
    return check_report();
}
