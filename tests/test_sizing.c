/* Sizing math against the source documents and the Parquet specification. */
#include <math.h>

#include "simdbloom.h"
#include "check.h"

/* Seed 000's table: m/n bits per item, k = ceil(ln 2 * m/n), the rate it prints. */
static void seed000_table(void)
{
    static const struct {
        double ratio, rate, rel;
    } table[] = {
        {1, 0.63212055882856, 1e-9},
        {2, 0.39957640089373, 1e-9},
        {4, 0.14689159766038, 1e-9},
        {8, 0.02157714146322, 1e-9},
        {16, 0.00046557303372, 1e-9},
        {32, 0.00000021167340, 1e-6}, /* printed to 8 digits */
        {64, 4e-14, 0.15},            /* printed to 1 digit */
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        double k = ceil(log(2.0) * table[i].ratio);
        CHECK_REL(sbloom_classic_fpp(table[i].ratio, k), table[i].rate, table[i].rel);
    }
    /* The best integer k beats ceil(ln 2 * m/n) at 1:2, 1:16 and 1:32. */
    CHECK(sbloom_classic_best_k(2) == 1);
    CHECK(sbloom_classic_fpp(2, 1) < sbloom_classic_fpp(2, 2));
    CHECK(sbloom_classic_best_k(16) == 11);
    CHECK(sbloom_classic_fpp(16, 11) < sbloom_classic_fpp(16, 12));
    CHECK(sbloom_classic_best_k(32) == 22);
    CHECK_REL(sbloom_classic_fpp(32, 22), 2.1042e-7, 1e-4);
    /* Where ceil is already best, best_k agrees. */
    CHECK(sbloom_classic_best_k(1) == 1);
    CHECK(sbloom_classic_best_k(4) == 3);
    CHECK(sbloom_classic_best_k(8) == 6);
}

static void seed004(void)
{
    /* k = 10, m = 20n: "0.0000889". */
    CHECK_REL(sbloom_classic_fpp(20, 10), 0.0000889, 0.001);
}

/* Parquet format spec: bits of space per insert for a given false-positive rate. */
static void parquet_spec_table(void)
{
    static const struct {
        double p, bits;
    } spec[] = {{0.1, 6.0}, {0.01, 10.5}, {0.001, 16.9}, {0.0001, 26.4}, {0.00001, 41.0}};
    for (size_t i = 0; i < sizeof spec / sizeof spec[0]; i++) {
        sbloom_plan plan = sbloom_plan_init();
        CHECK(sbloom_plan_for_layout(1000000, spec[i].p, SBLOOM_LAYOUT_PARQUET, &plan) ==
              SBLOOM_OK);
        CHECK(fabs(plan.bits_per_key - spec[i].bits) < 0.1);
    }
}

/* Plans meet their target with the fewest blocks, and auto picks the smallest layout. */
static void plans(void)
{
    static const double rates[] = {0.5, 0.1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-9};
    static const uint64_t counts[] = {1, 7, 1000, 123457, 10000000, 3000000000ULL};
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            uint64_t smallest = UINT64_MAX;
            for (int l = 0; l < TEST_NLAYOUTS; l++) {
                sbloom_plan plan = sbloom_plan_init();
                int rc = sbloom_plan_for_layout(counts[c], rates[r], test_layouts[l], &plan);
                if (rc == SBLOOM_E_TOO_LARGE)
                    continue;
                CHECK(rc == SBLOOM_OK);
                uint32_t block = sbloom_layout_block_bytes(test_layouts[l]);
                CHECK(plan.bytes % block == 0);
                CHECK(plan.fpp <= rates[r]);
                CHECK(plan.fpp == sbloom_blocked_fpp(test_layouts[l], plan.bytes, counts[c]));
                /* a multiple of 8 blocks (fold by 2, 4, 8), and 8 blocks fewer would miss the
                 * target: the fewest such */
                CHECK(plan.bytes / block % 8 == 0);
                CHECK(sbloom_fold_factors(NULL, NULL, 0) == 0);
                if (plan.bytes > 8 * block)
                    CHECK(sbloom_blocked_fpp(test_layouts[l], plan.bytes - 8 * block, counts[c]) >
                          rates[r]);
                if (plan.bytes < smallest)
                    smallest = plan.bytes;
            }
            sbloom_plan best = sbloom_plan_init();
            if (smallest != UINT64_MAX) {
                CHECK(sbloom_plan_for(counts[c], rates[r], &best) == SBLOOM_OK);
                CHECK(best.bytes == smallest);
            }
        }
    }
    /* Blocking costs space: every blocked plan needs more bits than the classic filter. */
    sbloom_plan plan = sbloom_plan_init();
    CHECK(sbloom_plan_for(1000000, 1e-3, &plan) == SBLOOM_OK);
    CHECK(plan.bits_per_key > sbloom_classic_bits_per_key(1e-3));
    /* The classic bits for p give p with their best k. */
    double bits = sbloom_classic_bits_per_key(1e-3);
    CHECK_REL(sbloom_classic_fpp(bits, sbloom_classic_best_k(bits)), 1e-3, 1e-6);
}

static void blocked_formula(void)
{
    /* An empty filter never says yes; a hopelessly small one always does. */
    CHECK(sbloom_blocked_fpp(SBLOOM_LAYOUT_BLOCK512_K8, 64, 0) == 0.0);
    CHECK(sbloom_blocked_fpp(SBLOOM_LAYOUT_BLOCK512_K8, 64, 100000000) == 1.0);
    /* One key per block on average (Poisson(1) load), summed here term by term. */
    double sum = 0.0, fact = 1.0;
    for (int l = 0; l < 60; l++) {
        if (l > 0)
            fact *= l;
        sum += exp(-1.0) / fact * pow(1.0 - pow(31.0 / 32.0, l), 8);
    }
    CHECK_REL(sbloom_blocked_fpp(SBLOOM_LAYOUT_PARQUET, 32, 1), sum, 1e-9);
    /* More space, lower rate. */
    CHECK(sbloom_blocked_fpp(SBLOOM_LAYOUT_BLOCK512_K16, 1 << 20, 100000) <
          sbloom_blocked_fpp(SBLOOM_LAYOUT_BLOCK512_K16, 1 << 19, 100000));
}

static void bad_arguments(void)
{
    sbloom_plan plan = sbloom_plan_init();
    CHECK(sbloom_plan_for(0, 0.01, &plan) == SBLOOM_E_INVALID);
    CHECK(sbloom_plan_for(10, 0.0, &plan) == SBLOOM_E_INVALID);
    CHECK(sbloom_plan_for(10, 1.0, &plan) == SBLOOM_E_INVALID);
    CHECK(sbloom_plan_for(10, -0.5, &plan) == SBLOOM_E_INVALID);
    CHECK(sbloom_plan_for(10, NAN, &plan) == SBLOOM_E_INVALID);
    CHECK(sbloom_plan_for(10, INFINITY, &plan) == SBLOOM_E_INVALID);
    CHECK(sbloom_plan_for(10, 0.01, NULL) == SBLOOM_E_NULL);
    CHECK(sbloom_plan_for_layout(10, 0.01, (sbloom_layout)0, &plan) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_plan_for_layout(10, 0.01, (sbloom_layout)99, &plan) == SBLOOM_E_LAYOUT);
    /* 2^50 items at 1e-9 need far over 64 GiB. */
    CHECK(sbloom_plan_for(UINT64_C(1) << 50, 1e-9, &plan) == SBLOOM_E_TOO_LARGE);
    CHECK(sbloom_plan_for(UINT64_MAX, 0.5, &plan) == SBLOOM_E_TOO_LARGE);
    CHECK(isnan(sbloom_blocked_fpp((sbloom_layout)7, 64, 10)));
    CHECK(isnan(sbloom_blocked_fpp(SBLOOM_LAYOUT_BLOCK512_K8, 63, 10)));
    CHECK(isnan(sbloom_classic_fpp(0, 3)));
    CHECK(isnan(sbloom_classic_fpp(8, NAN)));
    CHECK(isnan(sbloom_classic_fpp(INFINITY, 3)));
    CHECK(sbloom_classic_best_k(-1) == 0);
    CHECK(sbloom_classic_best_k(NAN) == 0);
    CHECK(isnan(sbloom_classic_bits_per_key(0)));
    CHECK(isnan(sbloom_classic_bits_per_key(1)));
}

/* Plans asked again and again, and one after another that differ in a single argument (count,
 * rate, layout), the planner's recent plans in play: each answer is the plan for its own
 * arguments (the rate met, the formula's rate for its size and count, 8 blocks fewer missing). */
static void plans_asked_again(void)
{
    static const struct {
        uint64_t n;
        double p;
        sbloom_layout layout;
    } asks[] = {
        {123457, 1e-3, SBLOOM_LAYOUT_BLOCK512_K8}, {123457, 1e-6, SBLOOM_LAYOUT_BLOCK512_K8},
        {246914, 1e-3, SBLOOM_LAYOUT_BLOCK512_K8}, {123457, 1e-3, SBLOOM_LAYOUT_BLOCK512_K16},
        {123457, 1e-3, SBLOOM_LAYOUT_PARQUET},     {123458, 1e-3, SBLOOM_LAYOUT_BLOCK512_K8},
        {123457, 2e-3, SBLOOM_LAYOUT_BLOCK512_K8}, {1000, 1e-2, SBLOOM_LAYOUT_BLOCK512_K16},
        {10000000, 1e-6, SBLOOM_LAYOUT_PARQUET},   {10000000, 1e-6, SBLOOM_LAYOUT_BLOCK512_K16},
    };
    size_t count = sizeof asks / sizeof asks[0];
    for (size_t round = 0; round < 6; round++)
        for (size_t j = 0; j < count; j++) {
            /* forwards, backwards, then in strides that interleave the asks */
            size_t i = round == 1 ? count - 1 - j : round < 2 ? j : (j * (round + 1)) % count;
            sbloom_plan plan = sbloom_plan_init();
            plan.bytes = 1; /* overwritten */
            CHECK(sbloom_plan_for_layout(asks[i].n, asks[i].p, asks[i].layout, &plan) == SBLOOM_OK);
            uint32_t block = sbloom_layout_block_bytes(asks[i].layout);
            CHECK(plan.size == sizeof plan && plan.layout == asks[i].layout);
            CHECK(plan.k == sbloom_layout_k(asks[i].layout) && plan.bytes % (8 * block) == 0);
            CHECK(plan.fpp <= asks[i].p);
            CHECK(plan.fpp == sbloom_blocked_fpp(asks[i].layout, plan.bytes, asks[i].n));
            CHECK(plan.bits_per_key == (double)plan.bytes * 8.0 / (double)asks[i].n);
            CHECK(plan.bytes == 8 * block ||
                  sbloom_blocked_fpp(asks[i].layout, plan.bytes - 8 * block, asks[i].n) >
                      asks[i].p);
        }
}

int main(void)
{
    seed000_table();
    seed004();
    parquet_spec_table();
    plans();
    plans_asked_again();
    blocked_formula();
    bad_arguments();
    return check_report();
}
