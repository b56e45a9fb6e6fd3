/*
 * The counting filter: its promises (no false negatives while only added keys are removed, even
 * with saturated counters; a refused remove changes nothing; counts, not sets), its sizing and
 * measured false-positive rate before and after removals, errors, and files.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simdbloom.h"
#include "check.h"

/* The key's counter in word i of its block, read the way docs/KERNELS.md defines it. */
static unsigned counter_of(const sbloom_t *c, uint64_t hash, int word)
{
    static const uint32_t salts[8] = {0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
                                      0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U};
    uint64_t nblocks = sbloom_bytes(c) / 64;
    uint64_t block = ((hash >> 32) * nblocks) >> 32;
    const uint64_t *words = (const uint64_t *)sbloom_data(c) + 8 * block;
    unsigned index = ((uint32_t)hash * salts[word]) >> 28;
    return (unsigned)(words[word] >> (4 * index)) & 15;
}

static int all_zero(const sbloom_t *c)
{
    const uint8_t *p = sbloom_data(c);
    for (uint64_t i = 0; i < sbloom_bytes(c); i++)
        if (p[i])
            return 0;
    return 1;
}

static void test_errors(void)
{
    sbloom_t *c = (sbloom_t *)1;
    CHECK(sbloom_create_for_layout(&c, 0, 0.01, SBLOOM_LAYOUT_COUNTING512) == SBLOOM_E_INVALID &&
          c == NULL);
    CHECK(sbloom_create_for_layout(&c, 10, 1.5, SBLOOM_LAYOUT_COUNTING512) == SBLOOM_E_INVALID);
    CHECK(sbloom_create_for_layout(NULL, 10, 0.01, SBLOOM_LAYOUT_COUNTING512) == SBLOOM_E_NULL);
    CHECK(sbloom_create_bytes(&c, (UINT64_C(64) << 30) + 1, SBLOOM_LAYOUT_COUNTING512) ==
          SBLOOM_E_TOO_LARGE);
    CHECK(sbloom_add(NULL, "a", 1) == SBLOOM_E_NULL);
    CHECK(sbloom_remove(NULL, "a", 1) == SBLOOM_E_NULL);
    CHECK(sbloom_contains(NULL, "a", 1) == SBLOOM_E_NULL);
    CHECK(sbloom_create_bytes(&c, 1, SBLOOM_LAYOUT_COUNTING512) == SBLOOM_OK &&
          sbloom_bytes(c) == 64);
    CHECK(sbloom_add(c, NULL, 3) == SBLOOM_E_NULL);
    CHECK(sbloom_add(c, NULL, 0) == 1); /* the empty key is a key */
    CHECK(sbloom_contains(c, "", 0) == 1);
    const void *keys[2] = {"x", NULL};
    size_t lens[2] = {1, 4};
    CHECK(sbloom_add_if_new_keys(c, keys, lens, 2, NULL) == SBLOOM_E_NULL);
    CHECK(sbloom_items(c) == 1); /* the refused batch changed nothing */
    CHECK(sbloom_add_if_new_hashes(c, NULL, 0, NULL) == 0);
    CHECK(sbloom_remove_hashes(c, NULL, 3, NULL) == SBLOOM_E_NULL);
    CHECK(strcmp(sbloom_strerror(SBLOOM_E_ABSENT), "unknown error") != 0);
    CHECK(strcmp(sbloom_strerror(SBLOOM_E_UNSUPPORTED), "unknown error") != 0);
    sbloom_free(NULL);
    CHECK(sbloom_items(NULL) == 0 && sbloom_saturated(NULL) == SBLOOM_E_NULL);

    /* Set operations would lose counts: refused for the counting layout. */
    sbloom_t *other, *folded = (sbloom_t *)1;
    CHECK(sbloom_create_bytes(&other, 64, SBLOOM_LAYOUT_COUNTING512) == SBLOOM_OK);
    CHECK(sbloom_union(c, other) == SBLOOM_E_LAYOUT &&
          sbloom_intersect(c, other) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_fold(&folded, c, 1) == SBLOOM_E_LAYOUT && folded == NULL);
    sbloom_free(other);
    sbloom_free(c);

    /* The counting layout is an ordinary layout; removal is its own, refused on bit layouts
     * without a change. */
    CHECK(strcmp(sbloom_layout_name(SBLOOM_LAYOUT_COUNTING512), "counting512") == 0);
    CHECK(sbloom_layout_from_name("counting512") == SBLOOM_LAYOUT_COUNTING512);
    CHECK(sbloom_layout_block_bytes(SBLOOM_LAYOUT_COUNTING512) == 64);
    CHECK(sbloom_layout_k(SBLOOM_LAYOUT_COUNTING512) == 8);
    sbloom_plan plan = sbloom_plan_init();
    CHECK(sbloom_plan_for(100, 1e-6, &plan) == SBLOOM_OK &&
          plan.layout != SBLOOM_LAYOUT_COUNTING512); /* auto plans bit layouts only */
    for (int layout = 1; layout <= SBLOOM_LAYOUT_COUNT; layout++) {
        if (layout == SBLOOM_LAYOUT_COUNTING512 || test_layout_composite((sbloom_layout)layout) ||
            test_layout_fingerprint((sbloom_layout)layout))
            continue; /* (the fingerprint layouts remove too: test_fingerprint) */
        sbloom_t *bits;
        CHECK(sbloom_create_bytes(&bits, 4096, (sbloom_layout)layout) == SBLOOM_OK);
        CHECK(sbloom_add(bits, "k", 1) == 1);
        uint64_t h = sbloom_hash(bits, "k", 1);
        const void *k1[1] = {"k"};
        size_t l1[1] = {1};
        uint8_t removed = 7;
        CHECK(sbloom_remove(bits, "k", 1) == SBLOOM_E_LAYOUT);
        CHECK(sbloom_remove_hash(bits, h) == SBLOOM_E_LAYOUT);
        CHECK(sbloom_remove_u64(bits, 5) == SBLOOM_E_LAYOUT);
        CHECK(sbloom_remove_hashes(bits, &h, 1, &removed) == SBLOOM_E_LAYOUT && removed == 7);
        CHECK(sbloom_remove_keys(bits, k1, l1, 1, &removed) == SBLOOM_E_LAYOUT && removed == 7);
        CHECK(sbloom_saturated(bits) == SBLOOM_E_LAYOUT);
        CHECK(sbloom_contains(bits, "k", 1) == 1 && sbloom_items(bits) == 1);
        sbloom_free(bits);
    }
}

/* Add, remove, and the refusal of a key that was never added. */
static void test_remove_semantics(void)
{
    sbloom_t *c;
    CHECK(sbloom_create_for_layout(&c, 1000, 0.001, SBLOOM_LAYOUT_COUNTING512) == SBLOOM_OK);
    CHECK(sbloom_planned_items(c) == 1000 && sbloom_planned_fpp(c) == 0.001);
    CHECK(sbloom_remove(c, "never", 5) == SBLOOM_E_ABSENT);
    CHECK(all_zero(c) && sbloom_items(c) == 0);

    CHECK(sbloom_add(c, "url", 3) == 1);
    CHECK(sbloom_add(c, "url", 3) == 0); /* present already, but counted again */
    CHECK(sbloom_items(c) == 2);
    uint64_t h = sbloom_hash(c, "url", 3);
    for (int i = 0; i < 8; i++)
        CHECK(counter_of(c, h, i) >= 2);
    CHECK(sbloom_remove(c, "url", 3) == 1);
    CHECK(sbloom_contains(c, "url", 3) == 1); /* added twice, removed once */
    CHECK(sbloom_remove(c, "url", 3) == 1);
    CHECK(sbloom_contains(c, "url", 3) == 0);
    CHECK(sbloom_remove(c, "url", 3) == SBLOOM_E_ABSENT);
    CHECK(all_zero(c) && sbloom_items(c) == 0);

    /* A refused remove in a batch changes nothing and the batch goes on. */
    const void *keys[3] = {"a", "b", "a"};
    size_t lens[3] = {1, 1, 1};
    uint8_t out[3];
    CHECK(sbloom_add_if_new_keys(c, keys, lens, 1, out) == 1 && out[0] == 1);
    CHECK(sbloom_remove_keys(c, keys, lens, 3, out) == 1);
    CHECK(out[0] == 1 && out[1] == 0 && out[2] == 0); /* the second "a" finds it gone */
    CHECK(all_zero(c));
    CHECK(sbloom_add_if_new_keys(c, keys, lens, 3, out) == 2);
    CHECK(out[0] == 1 && out[1] == 1 && out[2] == 0); /* the repeat sees the first in order */
    CHECK(sbloom_contains_keys(c, keys, lens, 3, out) == 3);
    CHECK(sbloom_clear(c) == SBLOOM_OK && all_zero(c) && sbloom_items(c) == 0);
    sbloom_free(c);
}

/* One block, one key added 20 times: its counters stop at 15, are reported saturated, and are
 * never decremented, so the key stays present after 20 removes (no false negative). */
static void test_saturation(void)
{
    sbloom_t *c;
    CHECK(sbloom_create_bytes(&c, 64, SBLOOM_LAYOUT_COUNTING512) == SBLOOM_OK);
    uint64_t h = 0x0123456789abcdefULL;
    for (int i = 0; i < 20; i++)
        sbloom_add_hash(c, h);
    int full = 0;
    for (int i = 0; i < 8; i++)
        full += counter_of(c, h, i) == 15;
    CHECK(full == 8);
    CHECK(sbloom_saturated(c) == 8);
    for (int i = 0; i < 20; i++)
        CHECK(sbloom_remove_hash(c, h) == 1);
    CHECK(sbloom_contains_hash(c, h) == 1);
    CHECK(sbloom_saturated(c) == 8);
    CHECK(sbloom_items(c) == 0);
    sbloom_free(c);
}

/* A small, overfull filter (saturation everywhere) under random adds with repeats and removes of
 * added keys only: every key still held must answer present. */
static void test_no_false_negatives_under_churn(void)
{
    enum { KEYS = 3000, OPS = 60000 };
    sbloom_t *c;
    CHECK(sbloom_create_bytes(&c, 16 * 64, SBLOOM_LAYOUT_COUNTING512) == SBLOOM_OK);
    uint64_t *hash = malloc(KEYS * sizeof *hash);
    uint32_t *held = calloc(KEYS, sizeof *held);
    uint64_t rng = 42, adds = 0, removes = 0;
    for (int i = 0; i < KEYS; i++)
        hash[i] = test_rand(&rng);
    for (int op = 0; op < OPS; op++) {
        int k = (int)(test_rand(&rng) % KEYS);
        if (held[k] > 0 && test_rand(&rng) % 2) {
            int rc = sbloom_remove_hash(c, hash[k]);
            CHECK(rc == 1); /* an added key is never refused */
            held[k]--;
            removes++;
        } else {
            sbloom_add_hash(c, hash[k]);
            held[k]++;
            adds++;
        }
    }
    uint64_t false_negatives = 0, present = 0;
    for (int k = 0; k < KEYS; k++) {
        if (held[k] > 0) {
            present++;
            false_negatives += sbloom_contains_hash(c, hash[k]) != 1;
        }
    }
    CHECK(false_negatives == 0);
    CHECK(present > 0);
    CHECK(sbloom_saturated(c) > 0); /* the test did reach saturation */
    CHECK(sbloom_items(c) == adds - removes);
    free(hash);
    free(held);
    sbloom_free(c);
}

/* Within a plan no counter saturates; removing every key returns the filter to zero. */
static void test_add_remove_all(void)
{
    enum { N = 50000 };
    sbloom_t *c;
    CHECK(sbloom_create_for_layout(&c, N, 0.01, SBLOOM_LAYOUT_COUNTING512) == SBLOOM_OK);
    uint64_t *h = malloc(N * sizeof *h);
    uint64_t rng = 7;
    for (int i = 0; i < N; i++)
        h[i] = test_rand(&rng);
    CHECK(sbloom_add_if_new_hashes(c, h, N, NULL) > N * 0.98);
    CHECK(sbloom_saturated(c) == 0);
    CHECK(sbloom_contains_hashes(c, h, N, NULL) == N);
    CHECK(sbloom_remove_hashes(c, h, N, NULL) == N);
    CHECK(all_zero(c) && sbloom_items(c) == 0);
    free(h);
    sbloom_free(c);
}

/* The sizing formula is the blocked one with 16 slots per word: the plan meets p with one block
 * to spare, and a filter filled to the plan measures that rate (4 sigma of a binomial); removing
 * half the keys brings the rate to the formula's value at half the load. */
static void test_sizing_and_rate(void)
{
    sbloom_plan plan = sbloom_plan_init();
    CHECK(sbloom_plan_for_layout(100000, 0.01, SBLOOM_LAYOUT_COUNTING512, &plan) == SBLOOM_OK);
    CHECK(plan.layout == SBLOOM_LAYOUT_COUNTING512 && plan.k == 8 && plan.bytes % 64 == 0);
    CHECK(plan.fpp <= 0.01);
    CHECK(sbloom_blocked_fpp(SBLOOM_LAYOUT_COUNTING512, plan.bytes - 8 * 64, 100000) > 0.01);
    sbloom_plan plain = sbloom_plan_init();
    CHECK(sbloom_plan_for(100000, 0.01, &plain) == SBLOOM_OK);
    /* Counters cost 4 bits, and 16 slots per word lose some accuracy to 64: more than 4x. */
    CHECK(plan.bytes > 4 * plain.bytes);
    printf("counting plan for 1e5 at 1%%: %.1f bits/key (plain %.1f, classic counting %.1f)\n",
           plan.bits_per_key, plain.bits_per_key, 4 * sbloom_classic_bits_per_key(0.01));

    enum { N = 100000, PROBES = 1000000 };
    sbloom_t *c;
    CHECK(sbloom_create_for_layout(&c, N, 0.01, SBLOOM_LAYOUT_COUNTING512) == SBLOOM_OK);
    uint64_t *h = malloc(N * sizeof *h);
    uint64_t rng = 99;
    for (int i = 0; i < N; i++)
        h[i] = test_rand(&rng);
    sbloom_add_if_new_hashes(c, h, N, NULL);
    for (int phase = 0; phase < 2; phase++) {
        uint64_t load = phase == 0 ? N : N / 2;
        double want = sbloom_blocked_fpp(SBLOOM_LAYOUT_COUNTING512, sbloom_bytes(c), load);
        uint64_t hits = 0;
        for (int i = 0; i < PROBES; i++)
            hits += (uint64_t)sbloom_contains_hash(c, test_rand(&rng));
        double got = (double)hits / PROBES;
        double sigma = sqrt(want * (1 - want) / PROBES);
        printf("%llu items: measured %.5f, formula %.5f\n", (unsigned long long)load, got, want);
        CHECK(fabs(got - want) <= 4 * sigma);
        if (phase == 0)
            CHECK(sbloom_remove_hashes(c, h, N / 2, NULL) == N / 2);
    }
    CHECK(sbloom_contains_hashes(c, h + N / 2, N - N / 2, NULL) == N - N / 2);
    free(h);
    sbloom_free(c);
}

/* Files: round trip through every file entry point, damage detected. */
static void test_files(void)
{
    char path[] = "/tmp/simdbloom-counting-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    sbloom_t *c, *back = NULL;
    CHECK(sbloom_create_for_layout(&c, 5000, 0.01, SBLOOM_LAYOUT_COUNTING512) == SBLOOM_OK);
    for (int i = 0; i < 5000; i++)
        sbloom_add_hash(c, (uint64_t)i * 0x9e3779b97f4a7c15ULL);
    sbloom_remove_hash(c, 0);
    CHECK(sbloom_save(c, path) == SBLOOM_OK);
    CHECK(sbloom_load(&back, path) == SBLOOM_OK);
    CHECK(back && sbloom_bytes(back) == sbloom_bytes(c));
    CHECK(back && memcmp(sbloom_data(back), sbloom_data(c), sbloom_bytes(c)) == 0);
    CHECK(sbloom_items(back) == 4999 && sbloom_planned_items(back) == 5000);
    CHECK(sbloom_planned_fpp(back) == 0.01);
    sbloom_free(back);

    CHECK(sbloom_map(&back, path, SBLOOM_OPEN_VERIFY) == SBLOOM_OK);
    CHECK(back && sbloom_get_layout(back) == SBLOOM_LAYOUT_COUNTING512 &&
          sbloom_items(back) == 4999);
    CHECK(sbloom_contains_hash(back, 0x9e3779b97f4a7c15ULL) == 1);
    CHECK(sbloom_remove_hash(back, 0x9e3779b97f4a7c15ULL) == SBLOOM_E_READONLY);
    sbloom_free(back);

    uint64_t size = sbloom_serialized_size(c);
    uint8_t *image = malloc(size);
    CHECK(sbloom_serialize(c, image, size - 1) == SBLOOM_E_TRUNCATED);
    CHECK(sbloom_serialize(c, image, size) == SBLOOM_OK);
    CHECK(sbloom_deserialize(&back, image, size) == SBLOOM_OK);
    sbloom_free(back);
    CHECK(sbloom_deserialize(&back, image, size - 1) == SBLOOM_E_TRUNCATED);
    image[200] ^= 0x10;
    CHECK(sbloom_deserialize(&back, image, size) == SBLOOM_E_CORRUPT && back == NULL);
    free(image);
    CHECK(sbloom_load(&back, "/nonexistent/dir/f") == SBLOOM_E_IO);
    unlink(path);
    sbloom_free(c);
}

int main(void)
{
    test_errors();
    test_remove_semantics();
    test_saturation();
    test_no_false_negatives_under_churn();
    test_add_remove_all();
    test_sizing_and_rate();
    test_files();
    return check_report();
}
