/*
 * The scalable filter (sbloom_create_scalable, SBLOOM_LAYOUT_SCALABLE): grows by stages and keeps
 * its promised rate at 20 times its first stage; every API entry either works on it or refuses
 * it with SBLOOM_E_LAYOUT; files and images round-trip; damage is caught.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simdbloom.h"
#include "check.h"

enum { FIRST = 10000, KEYS = 200000, PROBES = 2000000 };

static uint64_t *random_keys(uint64_t seed, size_t n)
{
    uint64_t *keys = malloc(n * sizeof *keys);
    for (size_t i = 0; i < n; i++)
        keys[i] = test_rand(&seed);
    return keys;
}

/* keys[0, n) added in batches of 1 to 5,000 (a batch of one through the single-key call), each
 * batch added again at once (nothing new then); returns the keys reported new. */
static uint64_t add_in_batches(sbloom_t *f, const uint64_t *keys, size_t n, uint8_t *is_new)
{
    uint64_t reported = 0;
    for (size_t at = 0; at < n;) {
        size_t len = 1 + (at * 7919) % 5000;
        if (len > n - at)
            len = n - at;
        int64_t got = len == 1 ? sbloom_add_hash(f, keys[at])
                               : sbloom_add_if_new_hashes(f, keys + at, len, is_new);
        CHECK(got >= 0);
        reported += got > 0 ? (uint64_t)got : 0;
        CHECK(sbloom_add_if_new_hashes(f, keys + at, len, is_new) == 0); /* a repeat: nothing */
        at += len;
    }
    return reported;
}

/* Added in batches of every form, with repeats: no false negative, the rate kept, exactly the
 * distinct keys reported new (false positives aside), and stages that grew as planned. */
static void grows_and_keeps_its_rate(void)
{
    const double p = 1e-3;
    sbloom_t *f = NULL;
    CHECK(sbloom_create_scalable(&f, FIRST, p) == SBLOOM_OK);
    if (!f)
        return;
    CHECK(sbloom_get_layout(f) == SBLOOM_LAYOUT_SCALABLE && sbloom_stages(f) == 1);
    CHECK(sbloom_planned_items(f) == FIRST && sbloom_planned_fpp(f) == p);
    CHECK(sbloom_data(f) == NULL && sbloom_k(f) == 0);
    uint64_t *keys = random_keys(1, KEYS);
    uint8_t *is_new = malloc(KEYS);
    uint64_t reported = add_in_batches(f, keys, KEYS, is_new);
    CHECK(sbloom_contains_hashes(f, keys, KEYS, NULL) == KEYS);
    CHECK(reported <= KEYS && reported >= KEYS - KEYS * p);
    CHECK(sbloom_items(f) == reported);
    /* 10k + 20k + 40k + 80k + 160k: five stages hold 200k */
    CHECK(sbloom_stages(f) == 5);
    CHECK(sbloom_planned_items(f) == 310000);
    uint64_t *probes = random_keys(2, PROBES);
    uint64_t positives = (uint64_t)sbloom_contains_hashes(f, probes, PROBES, NULL);
    double measured = (double)positives / PROBES;
    sbloom_stats stats = sbloom_stats_init(), sampled = sbloom_stats_init();
    CHECK(sbloom_get_stats(f, &stats) == SBLOOM_OK);
    CHECK(sbloom_estimate(f, &sampled) == SBLOOM_OK);
    printf("scalable: %u stages, %llu bytes, rate %.3g measured, %.3g from the fills (promised "
           "%g)\n",
           sbloom_stages(f), (unsigned long long)sbloom_bytes(f), measured, stats.estimated_fpp, p);
    CHECK(stats.estimated_fpp < p);
    CHECK(measured < p + 4 * sqrt(p / PROBES)); /* the promise, with binomial noise */
    CHECK_REL(stats.estimated_items, (double)KEYS, 0.05);
    CHECK_REL(sampled.estimated_items, (double)KEYS, 0.05);
    /* memory: 310k keys of room (the newest stage is 48% full) at rates tightened to p/2 .. p/32
     * cost 2.44x a filter planned for exactly 200k at p; the same stages never cost more */
    sbloom_plan plan = sbloom_plan_init();
    CHECK(sbloom_plan_for(KEYS, p, &plan) == SBLOOM_OK);
    CHECK(sbloom_bytes(f) < 2.5 * (double)plan.bytes);

    /* other key forms share the stages */
    const char *words[] = {"alpha", "beta", "gamma"};
    size_t lens[] = {5, 4, 5};
    CHECK(sbloom_add_keys(f, (const void *const *)words, lens, 3) >= 2);
    CHECK(sbloom_contains_keys(f, (const void *const *)words, lens, 3, NULL) == 3);
    CHECK(sbloom_add_u64(f, 42) >= 0 && sbloom_contains_u64(f, 42) == 1);

    /* clone, clear */
    sbloom_t *copy = NULL;
    CHECK(sbloom_clone(&copy, f) == SBLOOM_OK);
    CHECK(copy && sbloom_stages(copy) == 5 && sbloom_items(copy) == sbloom_items(f));
    CHECK(copy && sbloom_contains_hashes(copy, keys, KEYS, NULL) == KEYS);
    CHECK(sbloom_clear(copy) == SBLOOM_OK && sbloom_stages(copy) == 1 && sbloom_items(copy) == 0);
    CHECK(sbloom_contains_hashes(copy, keys, 1000, NULL) == 0);
    sbloom_free(copy);
    free(keys);
    free(probes);
    free(is_new);
    sbloom_free(f);
}

/* Saved and loaded, serialized and deserialized: the same stages and answers; damage and
 * truncation are refused. */
static void files(void)
{
    sbloom_t *f = NULL;
    CHECK(sbloom_create_for_layout(&f, 1000, 1e-4, SBLOOM_LAYOUT_SCALABLE) == SBLOOM_OK);
    if (!f)
        return;
    uint64_t *keys = random_keys(3, 5000);
    sbloom_add_hashes(f, keys, 5000);
    CHECK(sbloom_stages(f) == 3); /* 1000 + 2000 + 4000 */
    char path[] = "/tmp/sbloom-scalable-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    CHECK(sbloom_save(f, path) == SBLOOM_OK);
    sbloom_t *back = NULL;
    CHECK(sbloom_load(&back, path) == SBLOOM_OK);
    uint64_t size = sbloom_serialized_size(f);
    uint8_t *a = malloc(size), *b = malloc(size);
    CHECK(sbloom_serialize(f, a, size) == SBLOOM_OK);
    if (back) {
        CHECK(sbloom_get_layout(back) == SBLOOM_LAYOUT_SCALABLE && sbloom_stages(back) == 3);
        CHECK(sbloom_items(back) == sbloom_items(f));
        CHECK(sbloom_planned_fpp(back) == 1e-4 && sbloom_planned_items(back) == 7000);
        CHECK(sbloom_serialized_size(back) == size);
        CHECK(sbloom_serialize(back, b, size) == SBLOOM_OK && memcmp(a, b, size) == 0);
        CHECK(sbloom_contains_hashes(back, keys, 5000, NULL) == 5000);
        /* it goes on growing after a load */
        uint64_t *more = random_keys(4, 5000);
        sbloom_add_hashes(back, more, 5000);
        CHECK(sbloom_stages(back) == 4);
        free(more);
        sbloom_free(back);
    }
    FILE *file = fopen(path, "rb");
    uint64_t on_disk = 0;
    if (file) {
        on_disk = fread(b, 1, size, file);
        fclose(file);
    }
    CHECK(on_disk == size && memcmp(a, b, size) == 0); /* the file is the serialized image */
    sbloom_t *g = NULL;
    CHECK(sbloom_deserialize(&g, a, size) == SBLOOM_OK && g && sbloom_stages(g) == 3);
    sbloom_free(g);
    /* every header and a sample of the payload, damaged: refused, never a crash */
    for (uint64_t at = 0; at < size; at += at < 512 ? 1 : 997) {
        memcpy(b, a, size);
        b[at] ^= 0x10;
        CHECK(sbloom_deserialize(&g, b, size) != SBLOOM_OK && g == NULL);
    }
    CHECK(sbloom_deserialize(&g, a, size - 64) == SBLOOM_E_TRUNCATED);
    CHECK(sbloom_map(&g, path, 0) == SBLOOM_E_LAYOUT && g == NULL);
    unlink(path);
    free(a);
    free(b);
    free(keys);
    sbloom_free(f);
}

static void unions_and_refusals(void)
{
    sbloom_t *a = NULL, *b = NULL, *c = NULL, *out = NULL;
    CHECK(sbloom_create_scalable(&a, 1000, 1e-3) == SBLOOM_OK);
    CHECK(sbloom_create_scalable(&b, 1000, 1e-3) == SBLOOM_OK);
    CHECK(sbloom_create_scalable(&c, 2000, 1e-3) == SBLOOM_OK);
    if (!a || !b || !c)
        return;
    uint64_t *ka = random_keys(5, 2500), *kb = random_keys(6, 2500);
    sbloom_add_hashes(a, ka, 2500);
    sbloom_add_hashes(b, kb, 2500);
    CHECK(sbloom_stages(a) == 2 && sbloom_stages(b) == 2);
    CHECK(sbloom_union(a, b) == SBLOOM_OK);
    CHECK(sbloom_contains_hashes(a, ka, 2500, NULL) == 2500);
    CHECK(sbloom_contains_hashes(a, kb, 2500, NULL) == 2500);
    CHECK(sbloom_union(a, c) == SBLOOM_E_INCOMPATIBLE); /* grown from another first stage */
    sbloom_t *plain = NULL;
    CHECK(sbloom_create(&plain, 1000, 1e-3) == SBLOOM_OK);
    CHECK(sbloom_union(a, plain) == SBLOOM_E_INCOMPATIBLE);
    CHECK(sbloom_union(plain, a) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_intersect(a, b) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_fold(&out, a, 2) == SBLOOM_E_LAYOUT && out == NULL);
    CHECK(sbloom_fold_factors(a, NULL, 0) == 0);
    CHECK(sbloom_set_concurrent(a, 1) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_remove_hash(a, ka[0]) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_create_bytes(&out, 4096, SBLOOM_LAYOUT_SCALABLE) == SBLOOM_E_LAYOUT);
    sbloom_plan plan = sbloom_plan_init();
    CHECK(sbloom_plan_for_layout(1000, 1e-3, SBLOOM_LAYOUT_SCALABLE, &plan) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_image_size(4096, SBLOOM_LAYOUT_SCALABLE) == 0);
    CHECK(sbloom_create_scalable(&out, 0, 1e-3) == SBLOOM_E_INVALID);
    CHECK(sbloom_create_scalable(&out, 10, 1.0) == SBLOOM_E_INVALID);
    CHECK(sbloom_create_scalable(NULL, 10, 0.1) == SBLOOM_E_NULL);
    CHECK(strcmp(sbloom_layout_name(SBLOOM_LAYOUT_SCALABLE), "scalable") == 0);
    CHECK(sbloom_stages(NULL) == 0 && sbloom_stages(plain) == 1);
    CHECK(sbloom_set_threads(a, 2) == SBLOOM_OK);
    CHECK(sbloom_contains_hashes(a, ka, 2500, NULL) == 2500);
    free(ka);
    free(kb);
    sbloom_free(plain);
    sbloom_free(a);
    sbloom_free(b);
    sbloom_free(c);
}

/* sbloom_stage's views: each stage's layout, plan and count (the count as of the call, the sum
 * of them the filter's), read-only, the same view again on the next call; after a clear, only
 * the first stage, empty. */
static void stage_views(void)
{
    sbloom_t *f = NULL;
    CHECK(sbloom_create_scalable(&f, 1000, 0.01) == SBLOOM_OK);
    if (!f)
        return;
    for (uint64_t i = 0; i < 5000; i++)
        sbloom_add_u64(f, i);
    uint32_t n = sbloom_stages(f);
    CHECK(n >= 3);
    uint64_t items = 0, planned = 0;
    for (uint32_t i = 0; i < n; i++) {
        const sbloom_t *stage = sbloom_stage(f, i);
        CHECK(stage != NULL);
        if (!stage)
            continue;
        CHECK(sbloom_stage(f, i) == stage);
        CHECK(sbloom_is_readonly(stage) && sbloom_stages(stage) == 1);
        CHECK(sbloom_get_layout(stage) == SBLOOM_LAYOUT_BLOCK512_K8 ||
              sbloom_get_layout(stage) == SBLOOM_LAYOUT_BLOCK512_K16);
        CHECK(sbloom_planned_items(stage) == (uint64_t)1000 << i);
        CHECK(sbloom_contains_u64(stage, 0) == (i == 0));
        items += sbloom_items(stage);
        planned += sbloom_planned_items(stage);
    }
    CHECK(sbloom_stage(f, n) == NULL);
    CHECK_EQ_U64(items, sbloom_items(f));
    CHECK_EQ_U64(planned, sbloom_planned_items(f));
    uint64_t last = sbloom_items(sbloom_stage(f, n - 1));
    CHECK(sbloom_add_u64(f, 1u << 30) == 1);
    CHECK_EQ_U64(sbloom_items(sbloom_stage(f, n - 1)), last + 1);
    CHECK(sbloom_clear(f) == SBLOOM_OK);
    CHECK(sbloom_stages(f) == 1 && sbloom_stage(f, 1) == NULL);
    CHECK(sbloom_stage(f, 0) && sbloom_items(sbloom_stage(f, 0)) == 0);
    sbloom_free(f);
}

/* A filter that grows, of every family (SBLOOM_OPTS_ANY_FAMILY without expected). */
static sbloom_t *growing_any_family(uint64_t first, double p)
{
    sbloom_opts opts = sbloom_opts_init();
    opts.first = first;
    opts.fpp = p;
    opts.flags = SBLOOM_OPTS_ANY_FAMILY;
    sbloom_t *f = NULL;
    CHECK(sbloom_create_opts(&f, &opts) == SBLOOM_OK);
    return f;
}

/* At 1e-6 its stages are fingerprint layouts: it grows as the Bloom stages do, keeps the rate,
 * answers test-and-add exactly, takes less memory than Bloom stages for the same keys, removes
 * keys, round-trips through a file (format version 2) and refuses a union. */
static void grows_fingerprint_stages(void)
{
    const double p = 1e-6;
    sbloom_t *f = growing_any_family(FIRST, p), *bloom = NULL;
    CHECK(sbloom_create_scalable(&bloom, FIRST, p) == SBLOOM_OK);
    if (!f || !bloom)
        return;
    uint64_t *keys = random_keys(11, KEYS);
    uint8_t *is_new = malloc(KEYS);
    uint64_t reported = add_in_batches(f, keys, KEYS, is_new);
    sbloom_add_hashes(bloom, keys, KEYS);
    CHECK(sbloom_contains_hashes(f, keys, KEYS, NULL) == KEYS);
    /* each key new but for false positives against the keys before it (about 0.2 expected) */
    CHECK(reported >= KEYS - 3 && sbloom_items(f) == reported);
    CHECK(sbloom_stages(f) == 5 && sbloom_planned_items(f) == 310000);
    for (uint32_t i = 0; i < sbloom_stages(f); i++) {
        const sbloom_t *stage = sbloom_stage(f, i);
        CHECK(stage && sbloom_get_layout(stage) >= SBLOOM_LAYOUT_FP512_R10 &&
              sbloom_get_layout(stage) <= SBLOOM_LAYOUT_FP512_R29);
    }
    printf("scalable of any family at 1e-6: %llu bytes in %u stages; Bloom stages: %llu\n",
           (unsigned long long)sbloom_bytes(f), sbloom_stages(f),
           (unsigned long long)sbloom_bytes(bloom));
    CHECK(sbloom_bytes(f) < 0.8 * (double)sbloom_bytes(bloom));
    /* a second line over the stages: an absent key's lookup reads one where it does in any stage,
     * the spare keys those of every stage */
    double absent = 0, spare = 0, reaches_none = 1, spare_keys = 0;
    for (uint32_t i = 0; i < sbloom_stages(f); i++) {
        double a = 0, s = 0;
        CHECK(sbloom_second_line_shares(sbloom_stage(f, i), &a, &s) == SBLOOM_OK);
        reaches_none *= 1 - a;
        spare_keys += s * (double)sbloom_items(sbloom_stage(f, i));
    }
    CHECK(sbloom_second_line_shares(f, &absent, &spare) == SBLOOM_OK);
    printf("second line over the stages: %.4f of absent lookups, %.4f of the keys\n", absent,
           spare);
    CHECK(spare > 0 && fabs(spare - spare_keys / (double)sbloom_items(f)) < 1e-12);
    CHECK(absent > 0 && fabs(absent - (1 - reaches_none)) < 1e-12);
    uint64_t *probes = random_keys(12, PROBES);
    CHECK(sbloom_contains_hashes(f, probes, PROBES, NULL) <= 10); /* expected at most 2 */
    sbloom_stats stats = sbloom_stats_init();
    CHECK(sbloom_get_stats(f, &stats) == SBLOOM_OK && stats.estimated_fpp < p);
    CHECK_REL(stats.estimated_items, (double)KEYS, 0.05);

    /* a file: version 2 in its header, the same bytes back, and it goes on growing */
    uint64_t size = sbloom_serialized_size(f);
    uint8_t *image = malloc(size);
    CHECK(sbloom_serialize(f, image, size) == SBLOOM_OK);
    CHECK(image[8] == 2 && image[16] == SBLOOM_LAYOUT_SCALABLE);
    sbloom_t *back = NULL;
    CHECK(sbloom_deserialize(&back, image, size) == SBLOOM_OK);
    if (back) {
        CHECK(sbloom_stages(back) == 5 && sbloom_items(back) == reported);
        CHECK(sbloom_contains_hashes(back, keys, KEYS, NULL) == KEYS);
        uint64_t *more = random_keys(13, 200000);
        CHECK(sbloom_add_hashes(back, more, 200000) >= 200000 - 3);
        CHECK(sbloom_stages(back) == 6);
        const sbloom_t *sixth = sbloom_stage(back, 5);
        CHECK(sixth && sbloom_get_layout(sixth) >= SBLOOM_LAYOUT_FP512_R10);
        free(more);
        sbloom_free(back);
    }
    free(image);

    /* removes: each key from the stage that took it */
    uint8_t *removed = malloc(KEYS / 2);
    CHECK(sbloom_remove_hashes(f, keys, KEYS / 2, removed) == KEYS / 2);
    CHECK(memchr(removed, 0, KEYS / 2) == NULL);
    CHECK(sbloom_items(f) == reported - KEYS / 2);
    CHECK(sbloom_contains_hashes(f, keys, KEYS / 2, NULL) <= 2);
    CHECK(sbloom_contains_hashes(f, keys + KEYS / 2, KEYS - KEYS / 2, NULL) == KEYS - KEYS / 2);
    CHECK(sbloom_remove_hash(f, keys[0]) == SBLOOM_E_ABSENT);

    sbloom_t *twin = growing_any_family(FIRST, p);
    CHECK(twin && sbloom_union(f, twin) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_union(bloom, f) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_remove_hash(bloom, keys[0]) == SBLOOM_E_LAYOUT);
    sbloom_free(twin);
    free(removed);
    free(probes);
    free(is_new);
    free(keys);
    sbloom_free(bloom);
    sbloom_free(f);
}

/* Keys that all fall in line 0 of the first stage (hashes below 2^64 / its lines: line = hash x
 * lines / 2^64), with uniform remainders: its line and spare fill and refuse the rest before
 * the stage holds its plan; new stages take them, and every key is stored and answered new once. */
static void refused_keys_go_to_a_new_stage(void)
{
    enum { FIRST_PLAN = 1000, CROWD = 600 };
    sbloom_t *f = growing_any_family(FIRST_PLAN, 1e-6);
    const sbloom_t *first = f ? sbloom_stage(f, 0) : NULL;
    if (!first)
        return;
    uint64_t lines = sbloom_bytes(first) / 64, seed = 14, keys[CROWD];
    uint8_t is_new[CROWD];
    for (size_t i = 0; i < CROWD; i++)
        keys[i] = test_rand(&seed) / lines;
    CHECK(sbloom_add_if_new_hashes(f, keys, CROWD, is_new) == CROWD);
    CHECK(memchr(is_new, 0, CROWD) == NULL);
    CHECK(sbloom_contains_hashes(f, keys, CROWD, NULL) == CROWD);
    CHECK(sbloom_add_if_new_hashes(f, keys, CROWD, is_new) == 0);
    CHECK(sbloom_items(f) == CROWD);
    first = sbloom_stage(f, 0);
    printf("%d keys in line 0 of a first stage of %llu lines: it took %llu of its %d, %u stages\n",
           CROWD, (unsigned long long)lines, (unsigned long long)sbloom_items(first), FIRST_PLAN,
           sbloom_stages(f));
    CHECK(sbloom_items(first) < FIRST_PLAN); /* it refused keys before its plan */
    for (size_t i = 0; i < CROWD; i += 7) /* removed one at a time, from the stage that took it */
        CHECK(sbloom_remove_hash(f, keys[i]) == 1 && sbloom_contains_hash(f, keys[i]) == 0);
    sbloom_free(f);
    /* planned for 64 keys the first stage is a Bloom layout (smaller there): the filter grows,
     * and removes nothing (a Bloom stage cannot forget) */
    f = growing_any_family(64, 1e-6);
    if (!f)
        return;
    CHECK(sbloom_add_hashes(f, keys, CROWD) > 0 && sbloom_stages(f) > 1);
    CHECK(sbloom_get_layout(sbloom_stage(f, 0)) == SBLOOM_LAYOUT_BLOCK512_K8);
    CHECK(sbloom_remove_hash(f, keys[0]) == SBLOOM_E_LAYOUT);
    sbloom_free(f);
}

int main(void)
{
    grows_and_keeps_its_rate();
    grows_fingerprint_stages();
    refused_keys_go_to_a_new_stage();
    stage_views();
    files();
    unions_and_refusals();
    return check_report();
}
