/* The public API: lifecycle, every bad-argument path, no false negatives, fused test-and-add,
 * batch/single agreement, introspection and instruction-set selection. */
#define _DEFAULT_SOURCE /* setrlimit */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "simdbloom.h"
#include "check.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

static void errors_have_names(void)
{
    /* Every code from SBLOOM_OK to the last one has its own text, never "unknown error". */
    const int last = SBLOOM_E_FULL;
    for (int code = 0; code >= last; code--) {
        const char *s = sbloom_strerror(code);
        CHECK(s != NULL && strlen(s) > 0 && strcmp(s, "unknown error") != 0);
        for (int other = code + 1; other <= 0; other++)
            CHECK(strcmp(s, sbloom_strerror(other)) != 0);
    }
    CHECK(strcmp(sbloom_strerror(last - 1), "unknown error") == 0);
    CHECK(strcmp(sbloom_strerror(-1000), "unknown error") == 0);
    CHECK(strcmp(sbloom_strerror(5), "not an error code") == 0);
}

static void bad_arguments(void)
{
    sbloom_t *f = (sbloom_t *)&f; /* must be reset to NULL on failure */
    CHECK(sbloom_create(NULL, 10, 0.01) == SBLOOM_E_NULL);
    CHECK(sbloom_create(&f, 0, 0.01) == SBLOOM_E_INVALID && f == NULL);
    f = (sbloom_t *)&f;
    CHECK(sbloom_create(&f, 10, NAN) == SBLOOM_E_INVALID && f == NULL);
    CHECK(sbloom_create(&f, 10, 0.0) == SBLOOM_E_INVALID);
    CHECK(sbloom_create(&f, 10, 1.0) == SBLOOM_E_INVALID);
    CHECK(sbloom_create(&f, 10, 2.0) == SBLOOM_E_INVALID);
    CHECK(sbloom_create(&f, UINT64_MAX, 1e-9) == SBLOOM_E_TOO_LARGE);
    CHECK(sbloom_create_bytes(&f, UINT64_MAX, SBLOOM_LAYOUT_BLOCK512_K8) == SBLOOM_E_TOO_LARGE);
    CHECK(sbloom_create_bytes(&f, SBLOOM_MAX_BYTES + 1, SBLOOM_LAYOUT_PARQUET) ==
          SBLOOM_E_TOO_LARGE);
    CHECK(sbloom_create_bytes(&f, 1024, (sbloom_layout)0) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_create_bytes(&f, 1024, (sbloom_layout)(SBLOOM_LAYOUT_COUNT + 1)) ==
          SBLOOM_E_LAYOUT);
    CHECK(sbloom_create_bytes(NULL, 1024, SBLOOM_LAYOUT_PARQUET) == SBLOOM_E_NULL);
    CHECK(sbloom_create_for_layout(&f, 100, 0.01, (sbloom_layout)(SBLOOM_LAYOUT_COUNT + 1)) ==
          SBLOOM_E_LAYOUT);
    CHECK(f == NULL);

    /* NULL filters and NULL data. */
    uint64_t h = 1;
    uint8_t r;
    const void *key = "x";
    size_t len = 1;
    CHECK(sbloom_add(NULL, "x", 1) == SBLOOM_E_NULL);
    CHECK(sbloom_contains(NULL, "x", 1) == SBLOOM_E_NULL);
    CHECK(sbloom_add_hash(NULL, 1) == SBLOOM_E_NULL);
    CHECK(sbloom_contains_hash(NULL, 1) == SBLOOM_E_NULL);
    CHECK(sbloom_add_hashes(NULL, &h, 1) == SBLOOM_E_NULL);
    CHECK(sbloom_contains_hashes(NULL, &h, 1, &r) == SBLOOM_E_NULL);
    CHECK(sbloom_add_if_new_hashes(NULL, &h, 1, &r) == SBLOOM_E_NULL);
    CHECK(sbloom_add_keys(NULL, &key, &len, 1) == SBLOOM_E_NULL);
    CHECK(sbloom_contains_keys(NULL, &key, &len, 1, &r) == SBLOOM_E_NULL);
    CHECK(sbloom_add_if_new_keys(NULL, &key, &len, 1, &r) == SBLOOM_E_NULL);
    CHECK(sbloom_clear(NULL) == SBLOOM_E_NULL);
    sbloom_free(NULL);
    CHECK(sbloom_get_layout(NULL) == 0 && sbloom_bytes(NULL) == 0 && sbloom_k(NULL) == 0);
    CHECK(sbloom_items(NULL) == 0 && sbloom_data(NULL) == NULL);
    CHECK(isnan(sbloom_bits_per_key(NULL, 10)));
    sbloom_stats stats = sbloom_stats_init();
    CHECK(sbloom_get_stats(NULL, &stats) == SBLOOM_E_NULL);

    CHECK(sbloom_create(&f, 1000, 0.01) == SBLOOM_OK);
    CHECK(sbloom_add(f, NULL, 3) == SBLOOM_E_NULL);
    CHECK(sbloom_contains(f, NULL, 3) == SBLOOM_E_NULL);
    CHECK(sbloom_add_hashes(f, NULL, 3) == SBLOOM_E_NULL);
    CHECK(sbloom_contains_hashes(f, NULL, 3, NULL) == SBLOOM_E_NULL);
    CHECK(sbloom_add_if_new_hashes(f, NULL, 2, NULL) == SBLOOM_E_NULL);
    CHECK(sbloom_add_keys(f, NULL, &len, 1) == SBLOOM_E_NULL);
    CHECK(sbloom_add_keys(f, &key, NULL, 1) == SBLOOM_E_NULL);
    const void *null_key = NULL;
    CHECK(sbloom_add_keys(f, &null_key, &len, 1) == SBLOOM_E_NULL);
    CHECK(sbloom_contains_keys(f, &null_key, &len, 1, NULL) == SBLOOM_E_NULL);
    CHECK(sbloom_add_if_new_keys(f, &null_key, &len, 1, NULL) == SBLOOM_E_NULL);
    CHECK(sbloom_items(f) == 0); /* failed calls changed nothing */
    CHECK(sbloom_get_stats(f, NULL) == SBLOOM_E_NULL);
    /* Empty batches and zero-length keys are fine; a NULL pointer is allowed for length 0. */
    CHECK(sbloom_add_hashes(f, NULL, 0) == 0);
    CHECK(sbloom_contains_keys(f, NULL, NULL, 0, NULL) == 0);
    size_t zero = 0;
    CHECK(sbloom_add_if_new_keys(f, &null_key, &zero, 1, &r) == 1 && r == 1);
    CHECK(sbloom_contains(f, NULL, 0) == 1);
    CHECK(sbloom_contains(f, "", 0) == 1);
    sbloom_free(f);
}

static void lifecycle_and_introspection(void)
{
    for (int l = 0; l < TEST_NLAYOUTS; l++) {
        sbloom_t *f;
        CHECK(sbloom_create_for_layout(&f, 100000, 0.001, test_layouts[l]) == SBLOOM_OK);
        sbloom_plan plan = sbloom_plan_init();
        CHECK(sbloom_plan_for_layout(100000, 0.001, test_layouts[l], &plan) == SBLOOM_OK);
        CHECK(sbloom_get_layout(f) == test_layouts[l]);
        CHECK(sbloom_bytes(f) == plan.bytes);
        CHECK(sbloom_k(f) == sbloom_layout_k(test_layouts[l]));
        CHECK(((uintptr_t)sbloom_data(f) & 63) == 0); /* one key, one cache line */
        CHECK(sbloom_planned_items(f) == 100000 && sbloom_planned_fpp(f) == 0.001);
        CHECK_REL(sbloom_bits_per_key(f, 100000), plan.bits_per_key, 1e-12);
        CHECK(sbloom_filter_isa(f) != NULL);
        CHECK(strcmp(sbloom_layout_name(test_layouts[l]),
                     sbloom_layout_name((sbloom_layout)sbloom_layout_from_name(
                         sbloom_layout_name(test_layouts[l])))) == 0);

        /* Fill to plan, then the stats estimate the state. */
        uint64_t state = 42 + (uint64_t)l;
        for (int i = 0; i < 100000; i++)
            sbloom_add_hash(f, test_rand(&state));
        sbloom_stats s = sbloom_stats_init();
        CHECK(sbloom_get_stats(f, &s) == SBLOOM_OK);
        CHECK(sbloom_items(f) <= 100000 && sbloom_items(f) > 99800);
        CHECK_REL(s.estimated_items, 100000, 0.02);
        CHECK_REL(s.estimated_fpp, plan.fpp, 0.15);
        CHECK(s.fill > 0.3 && s.fill < 0.7);

        /* A clone has the same bits, count and plan, and is independent of the original. */
        sbloom_t *copy = NULL;
        CHECK(sbloom_clone(&copy, f) == SBLOOM_OK);
        CHECK(sbloom_bytes(copy) == sbloom_bytes(f) && sbloom_items(copy) == sbloom_items(f));
        CHECK(sbloom_planned_items(copy) == 100000 && sbloom_get_layout(copy) == test_layouts[l]);
        CHECK(memcmp(sbloom_data(copy), sbloom_data(f), sbloom_bytes(f)) == 0);
        uint64_t more[1000];
        for (int i = 0; i < 1000; i++)
            more[i] = test_rand(&state);
        CHECK(sbloom_add_hashes(copy, more, 1000) > 900);
        CHECK(sbloom_items(f) < sbloom_items(copy));
        CHECK(memcmp(sbloom_data(copy), sbloom_data(f), sbloom_bytes(f)) != 0);
        sbloom_free(copy);
        CHECK(sbloom_clone(&copy, NULL) == SBLOOM_E_NULL && copy == NULL);
        CHECK(sbloom_clone(NULL, f) == SBLOOM_E_NULL);

        CHECK(sbloom_clear(f) == SBLOOM_OK);
        CHECK(sbloom_items(f) == 0);
        CHECK(sbloom_get_stats(f, &s) == SBLOOM_OK);
        CHECK(s.fill == 0.0 && s.estimated_fpp == 0.0 && s.estimated_items == 0.0);
        sbloom_free(f);
    }
    CHECK(sbloom_layout_from_name("nope") == SBLOOM_E_LAYOUT);
    CHECK(sbloom_layout_from_name(NULL) == SBLOOM_E_NULL);
    CHECK(sbloom_layout_name((sbloom_layout)0) == NULL);
    /* Sizes round up to whole blocks; the smallest filter is one block. */
    sbloom_t *f;
    CHECK(sbloom_create_bytes(&f, 1, SBLOOM_LAYOUT_BLOCK512_K16) == SBLOOM_OK);
    CHECK(sbloom_bytes(f) == 64);
    CHECK(sbloom_add(f, "k", 1) == 1 && sbloom_contains(f, "k", 1) == 1);
    sbloom_free(f);
    CHECK(sbloom_create_bytes(&f, 100, SBLOOM_LAYOUT_PARQUET) == SBLOOM_OK);
    CHECK(sbloom_bytes(f) == 128);
    sbloom_free(f);
    /* A large filter (mmap path) is zeroed and usable. */
    CHECK(sbloom_create_bytes(&f, 64 << 20, SBLOOM_LAYOUT_BLOCK512_K8) == SBLOOM_OK);
    CHECK(sbloom_contains_hash(f, 12345) == 0);
    CHECK(sbloom_add_hash(f, 12345) == 1 && sbloom_contains_hash(f, 12345) == 1);
    sbloom_free(f);
}

/* Every added key is found, through every API, in every layout; 1M+ keys each. */
static void no_false_negatives(void)
{
    enum { N = 1 << 20 };
    uint64_t *hashes = malloc(N * sizeof *hashes);
    uint8_t *results = malloc(N);
    char(*text)[24] = malloc((size_t)N * 24);
    const void **keys = malloc(N * sizeof *keys);
    size_t *lens = malloc(N * sizeof *lens);
    for (int l = 0; l < TEST_NLAYOUTS; l++) {
        uint64_t state = 7 + (uint64_t)l;
        for (size_t i = 0; i < N; i++)
            hashes[i] = test_rand(&state);

        sbloom_t *f;
        CHECK(sbloom_create_for_layout(&f, N, 0.01, test_layouts[l]) == SBLOOM_OK);
        CHECK(sbloom_add_hashes(f, hashes, N) > (int64_t)(N * 0.98));
        CHECK(sbloom_contains_hashes(f, hashes, N, results) == N);
        size_t single_misses = 0, flag_misses = 0;
        for (size_t i = 0; i < N; i++) {
            flag_misses += results[i] != 1;
            single_misses += sbloom_contains_hash(f, hashes[i]) != 1;
        }
        CHECK(flag_misses == 0 && single_misses == 0);
        sbloom_free(f);

        /* Strings: single adds, batch test (and the reverse). */
        for (size_t i = 0; i < N; i++) {
            lens[i] = (size_t)snprintf(text[i], sizeof text[i], "key-%zu-%d", i, l);
            keys[i] = text[i];
        }
        CHECK(sbloom_create_for_layout(&f, N, 0.01, test_layouts[l]) == SBLOOM_OK);
        for (size_t i = 0; i < N; i++)
            sbloom_add(f, keys[i], lens[i]);
        CHECK(sbloom_contains_keys(f, keys, lens, N, results) == N);
        CHECK(sbloom_clear(f) == SBLOOM_OK);
        CHECK(sbloom_add_keys(f, keys, lens, N) > (int64_t)(N * 0.98));
        size_t misses = 0;
        for (size_t i = 0; i < N; i++)
            misses += sbloom_contains(f, keys[i], lens[i]) != 1;
        CHECK(misses == 0);
        /* The string API is the hash API over sbloom_hash. */
        for (size_t i = 0; i < 1000; i++)
            CHECK(sbloom_contains_hash(f, sbloom_hash(f, keys[i], lens[i])) == 1);
        sbloom_free(f);
    }
    free(hashes);
    free(results);
    free(text);
    free(keys);
    free(lens);
}

/* sbloom_add_if_new_keys over a stream with repeats, against the same keys one at a time. */
static void strings_across_chunks(sbloom_layout layout, uint64_t bytes, const uint64_t *stream,
                                  size_t m)
{
    const void **keys = malloc(m * sizeof *keys);
    size_t *lens = malloc(m * sizeof *lens);
    uint8_t *flags = malloc(m);
    CHECK(keys && lens && flags);
    for (size_t i = 0; i < m; i++) {
        keys[i] = &stream[i]; /* its 8 bytes, in any byte order: the same key for both sides */
        lens[i] = sizeof stream[i];
    }
    sbloom_t *batch, *single;
    CHECK(sbloom_create_bytes(&batch, bytes, layout) == SBLOOM_OK);
    CHECK(sbloom_create_bytes(&single, bytes, layout) == SBLOOM_OK);
    int64_t fresh = sbloom_add_if_new_keys(batch, keys, lens, m, flags);
    int64_t fresh_single = 0, disagree = 0;
    for (size_t i = 0; i < m; i++) {
        int absent = !sbloom_contains(single, keys[i], lens[i]);
        sbloom_add(single, keys[i], lens[i]);
        fresh_single += absent;
        disagree += absent != flags[i];
    }
    CHECK(fresh == fresh_single && disagree == 0);
    CHECK(sbloom_items(batch) == sbloom_items(single));
    CHECK(memcmp(sbloom_data(batch), sbloom_data(single), bytes) == 0);
    CHECK(sbloom_contains_keys(batch, keys, lens, m, flags) == (int64_t)m);
    sbloom_free(batch);
    sbloom_free(single);
    free(keys);
    free(lens);
    free(flags);
}

/* A NULL key with a length is refused wherever it sits in a batch, on every driver: a filter in
 * the caches (hashed CACHED_CHUNK keys at a time), a large one (hashed STRING_RUN keys at a time)
 * and a parallel batch. Reads find it while hashing, writes before they change anything; a NULL key
 * of length 0 is the empty key everywhere. */
static void null_keys_anywhere(void)
{
    enum { N = 70000 }; /* above SBLOOM_PARALLEL_MIN_KEYS */
    static uint64_t words[N];
    static const void *keys[N];
    static size_t lens[N];
    static uint64_t hashes[N];
    static uint8_t results[N];
    for (size_t i = 0; i < N; i++) {
        words[i] = i * 0x9e3779b97f4a7c15u;
        keys[i] = &words[i];
        lens[i] = sizeof words[i];
    }
    const sbloom_layout layouts[] = {SBLOOM_LAYOUT_PARQUET, SBLOOM_LAYOUT_BLOCK512_K8};
    const struct {
        uint64_t bytes;
        unsigned threads;
    } drivers[] = {{64u << 10, 1}, {1u << 20, 1}, {1u << 20, 2}};
    const size_t at[] = {0, 513, 4097, 8195, N - 1}; /* first, second and last runs */
    for (size_t l = 0; l < 2; l++)
        for (size_t d = 0; d < 3; d++) {
            sbloom_t *f;
            CHECK(sbloom_create_bytes(&f, drivers[d].bytes, layouts[l]) == SBLOOM_OK);
            CHECK(sbloom_set_threads(f, drivers[d].threads) == SBLOOM_OK);
            CHECK(sbloom_add_keys(f, keys, lens, N / 2) >= 0);
            uint64_t items = sbloom_items(f);
            uint8_t *before = malloc(drivers[d].bytes);
            CHECK(before != NULL);
            memcpy(before, sbloom_data(f), drivers[d].bytes);
            for (size_t a = 0; a < sizeof at / sizeof at[0]; a++) {
                size_t i = at[a];
                keys[i] = NULL; /* claims 8 bytes */
                CHECK(sbloom_contains_keys(f, keys, lens, N, results) == SBLOOM_E_NULL);
                CHECK(sbloom_contains_keys(f, keys, lens, N, NULL) == SBLOOM_E_NULL);
                CHECK(sbloom_hash_keys(f, keys, lens, N, hashes) == SBLOOM_E_NULL);
                CHECK(sbloom_add_keys(f, keys, lens, N) == SBLOOM_E_NULL);
                CHECK(sbloom_add_if_new_keys(f, keys, lens, N, results) == SBLOOM_E_NULL);
                CHECK(sbloom_items(f) == items &&
                      memcmp(before, sbloom_data(f), drivers[d].bytes) == 0);
                lens[i] = 0; /* now the empty key */
                CHECK(sbloom_hash_keys(f, keys, lens, N, hashes) == N &&
                      hashes[i] == sbloom_hash(f, "", 0) &&
                      hashes[N / 3] == sbloom_hash(f, keys[N / 3], lens[N / 3]));
                int64_t present = sbloom_contains_keys(f, keys, lens, N, results);
                CHECK(present >= N / 2 - 1 && present <= N);
                CHECK(results[i] == sbloom_contains(f, "", 0) && results[N / 4] == 1);
                keys[i] = &words[i];
                lens[i] = sizeof words[i];
            }
            /* a write a few keys longer than one run (STRING_RUN: 8,192 keys) of keys not added
             * yet, its NULL key in the second run: refused before the first run changes anything */
            keys[N / 2 + 8193] = NULL;
            CHECK(sbloom_add_keys(f, keys + N / 2, lens + N / 2, 8195) == SBLOOM_E_NULL);
            CHECK(sbloom_add_if_new_keys(f, keys + N / 2, lens + N / 2, 8195, results) ==
                  SBLOOM_E_NULL);
            CHECK(sbloom_items(f) == items &&
                  memcmp(before, sbloom_data(f), drivers[d].bytes) == 0);
            keys[N / 2 + 8193] = &words[N / 2 + 8193];
            CHECK(sbloom_contains_keys(f, keys, lens, N / 2, NULL) == N / 2);
            /* a write takes a NULL key of length 0 (the empty key) wherever it sits, a block of
             * keys that holds it included */
            for (size_t a = 0; a < sizeof at / sizeof at[0]; a++) {
                keys[at[a]] = NULL;
                lens[at[a]] = 0;
            }
            CHECK(sbloom_add_keys(f, keys, lens, N) >= 0);
            CHECK(sbloom_contains(f, "", 0) == 1 &&
                  sbloom_contains_keys(f, keys, lens, N, NULL) == N);
            for (size_t a = 0; a < sizeof at / sizeof at[0]; a++) {
                keys[at[a]] = &words[at[a]];
                lens[at[a]] = sizeof words[at[a]];
            }
            free(before);
            sbloom_free(f);
        }
}

/* A write batch that fits in its driver's first run (CACHED_CHUNK keys on a filter in the caches,
 * STRING_RUN on a larger one: src/core/driver.c) is checked as that run is hashed, before its
 * kernel runs, not in a pass of its own: a NULL key with a length anywhere in it is refused and
 * nothing changes, for add, test-and-add and the counting layout's remove. (Longer writes take the
 * pass of their own: null_keys_anywhere.) */
static void null_keys_small_writes(void)
{
    enum { N = 300 };
    uint64_t words[N];
    const void *keys[N];
    size_t lens[N];
    uint8_t results[N];
    for (size_t i = 0; i < N; i++) {
        words[i] = (i + 1) * 0xc2b2ae3d27d4eb4fu;
        keys[i] = &words[i];
        lens[i] = sizeof words[i];
    }
    const sbloom_layout layouts[] = {SBLOOM_LAYOUT_PARQUET, SBLOOM_LAYOUT_BLOCK512_K8,
                                     SBLOOM_LAYOUT_COUNTING512};
    const uint64_t sizes[] = {64u << 10, 1u << 20};
    const size_t batches[] = {N, 40};
    for (size_t l = 0; l < 3; l++)
        for (size_t z = 0; z < 2; z++)
            for (size_t bt = 0; bt < 2; bt++) {
                size_t n = batches[bt];
                sbloom_t *f;
                CHECK(sbloom_create_bytes(&f, sizes[z], layouts[l]) == SBLOOM_OK);
                CHECK(sbloom_add_keys(f, keys, lens, n / 2) >= 0);
                uint64_t items = sbloom_items(f);
                uint8_t *before = malloc(sizes[z]);
                CHECK(before != NULL);
                memcpy(before, sbloom_data(f), sizes[z]);
                const size_t at[] = {0, n / 2, n - 1};
                for (size_t a = 0; a < sizeof at / sizeof at[0]; a++) {
                    size_t i = at[a];
                    keys[i] = NULL; /* claims 8 bytes */
                    CHECK(sbloom_add_keys(f, keys, lens, n) == SBLOOM_E_NULL);
                    CHECK(sbloom_add_if_new_keys(f, keys, lens, n, results) == SBLOOM_E_NULL);
                    if (layouts[l] == SBLOOM_LAYOUT_COUNTING512)
                        CHECK(sbloom_remove_keys(f, keys, lens, n, results) == SBLOOM_E_NULL);
                    CHECK(sbloom_items(f) == items &&
                          memcmp(before, sbloom_data(f), sizes[z]) == 0);
                    keys[i] = &words[i];
                }
                /* the same batch without the NULL key goes through */
                CHECK(sbloom_add_if_new_keys(f, keys, lens, n, results) >= 0);
                CHECK(sbloom_contains_keys(f, keys, lens, n, NULL) == (int64_t)n);
                if (layouts[l] == SBLOOM_LAYOUT_COUNTING512)
                    CHECK(sbloom_remove_keys(f, keys + n / 2, lens + n / 2, n - n / 2, NULL) ==
                          (int64_t)(n - n / 2));
                free(before);
                sbloom_free(f);
            }
}

/* Fused test-and-add: new means absent before the call and not earlier in the same batch. */
static void add_if_new(void)
{
    for (int l = 0; l < TEST_NLAYOUTS; l++) {
        sbloom_t *f;
        CHECK(sbloom_create_for_layout(&f, 10000, 1e-6, test_layouts[l]) == SBLOOM_OK);
        CHECK(sbloom_add_hash(f, 111) == 1);
        CHECK(sbloom_add_hash(f, 111) == 0);
        uint64_t batch[] = {222, 111, 333, 222, 222, 444, 333};
        uint8_t is_new[7];
        CHECK(sbloom_add_if_new_hashes(f, batch, 7, is_new) == 3);
        uint8_t want[] = {1, 0, 1, 0, 0, 1, 0};
        CHECK(memcmp(is_new, want, 7) == 0);
        CHECK(sbloom_items(f) == 4);
        CHECK(sbloom_add_if_new_hashes(f, batch, 7, is_new) == 0);
        CHECK(sbloom_add_if_new_hashes(f, batch, 7, NULL) == 0);

        const char *words[] = {"a", "b", "a", "", "c", "", "b"};
        size_t lens[7];
        for (int i = 0; i < 7; i++)
            lens[i] = strlen(words[i]);
        CHECK(sbloom_add_if_new_keys(f, (const void *const *)words, lens, 7, is_new) == 4);
        uint8_t want_words[] = {1, 1, 0, 1, 1, 0, 0};
        CHECK(memcmp(is_new, want_words, 7) == 0);

        /* Long batches with repeats across chunk boundaries (chunks are 64 keys). */
        enum { M = 10000 };
        static uint64_t stream[M];
        static uint8_t flags[M];
        uint64_t state = 99;
        for (int i = 0; i < M; i++)
            stream[i] = (i >= 50 && test_rand(&state) % 3 == 0) ? stream[test_rand(&state) % i]
                                                                : test_rand(&state);
        CHECK(sbloom_clear(f) == SBLOOM_OK);
        int64_t fresh = sbloom_add_if_new_hashes(f, stream, M, flags);
        /* Reference: the same stream one key at a time. */
        sbloom_t *g;
        CHECK(sbloom_create_bytes(&g, sbloom_bytes(f), test_layouts[l]) == SBLOOM_OK);
        int64_t fresh_single = 0, disagree = 0;
        for (int i = 0; i < M; i++) {
            int absent = !sbloom_contains_hash(g, stream[i]);
            sbloom_add_hash(g, stream[i]);
            fresh_single += absent;
            disagree += absent != flags[i];
        }
        CHECK(fresh == fresh_single && disagree == 0);
        CHECK(memcmp(sbloom_data(f), sbloom_data(g), sbloom_bytes(f)) == 0);
        sbloom_free(g);
        /* The same stream as string keys, through the string driver's two paths: a filter in
         * the caches (hashed 512 keys at a time) and one past the prefetch bound (64 at a
         * time, lines requested ahead). */
        strings_across_chunks(test_layouts[l], sbloom_bytes(f), stream, M);
        strings_across_chunks(test_layouts[l], UINT64_C(4) << 20, stream, M);
        sbloom_free(f);
    }
}

/* A batch's count is the number of 1s among its answers, at every length: the kernels count
 * eight answers a step in the bytes of a word, emptied every 255 steps, so lengths around 8 and
 * around 255 * 8 = 2040 are the edges. The all-ones lookups would wrap a byte if it were emptied
 * one step later. */
/* How many of answers[0, n) are 1, one at a time. */
static int64_t ones_among(const uint8_t *answers, size_t n)
{
    int64_t ones = 0;
    for (size_t i = 0; i < n; i++)
        ones += answers[i];
    return ones;
}

static void answer_counts(void)
{
    enum { K = 6000 };
    static const size_t lengths[] = {0,    1,    7,    8,    9,    15,   16,   17,   63,
                                     64,   65,   2039, 2040, 2041, 2047, 2048, 2049, 2055,
                                     4080, 4081, 4087, 4095, 4096, 4097, 5000, 6000};
    static uint64_t added[K], mixed[K];
    static uint8_t answers[K];
    uint64_t state = 2024;
    for (size_t i = 0; i < K; i++) {
        added[i] = test_rand(&state);
        mixed[i] = i % 3 == 0 ? test_rand(&state) : added[i];
    }
    for (int l = 0; l < TEST_NLAYOUTS; l++) {
        sbloom_t *f, *g;
        CHECK(sbloom_create_for_layout(&f, K, 1e-4, test_layouts[l]) == SBLOOM_OK);
        CHECK(sbloom_add_hashes(f, added, K) >= 0);
        for (size_t t = 0; t < sizeof lengths / sizeof *lengths; t++) {
            size_t n = lengths[t];
            CHECK(sbloom_contains_hashes(f, added, n, answers) == (int64_t)n);
            CHECK(ones_among(answers, n) == (int64_t)n);
            int64_t hits = sbloom_contains_hashes(f, mixed, n, answers), mismatched = 0;
            for (size_t i = 0; i < n; i++)
                mismatched += answers[i] != sbloom_contains_hash(f, mixed[i]);
            CHECK(hits == ones_among(answers, n) && mismatched == 0);
            CHECK(sbloom_create_for_layout(&g, K, 1e-4, test_layouts[l]) == SBLOOM_OK);
            int64_t fresh = sbloom_add_if_new_hashes(g, mixed, n, answers);
            CHECK(fresh == ones_among(answers, n) && (uint64_t)fresh == sbloom_items(g));
            sbloom_free(g);
        }
        sbloom_free(f);
    }
}

static void instruction_sets(void)
{
    const char *names[16], *before = sbloom_isa();
    size_t count = sbloom_isa_list(names, 16);
    int has_scalar = 0;
    for (size_t i = 0; i < count && i < 16; i++)
        has_scalar |= strcmp(names[i], "scalar") == 0;
    CHECK(count >= 1 && has_scalar);
    CHECK(sbloom_isa_list(NULL, 0) == count);
    for (size_t i = 0; i < count && i < 16; i++) {
        CHECK(sbloom_set_isa(names[i]) == SBLOOM_OK);
        CHECK(strcmp(sbloom_isa(), names[i]) == 0);
        sbloom_t *f;
        CHECK(sbloom_create(&f, 1000, 0.01) == SBLOOM_OK);
        CHECK(strcmp(sbloom_filter_isa(f), names[i]) == 0);
        sbloom_free(f);
    }
    CHECK(sbloom_set_isa("sse9") == SBLOOM_E_ISA);
    CHECK(sbloom_set_isa("auto") == SBLOOM_OK);
    CHECK(strcmp(sbloom_isa(), names[count - 1]) == 0); /* auto: the last listed */
    CHECK(sbloom_set_isa(NULL) == SBLOOM_OK);
    CHECK(sbloom_set_isa(before) == SBLOOM_OK); /* the rest runs on the ISA this run forced */
}

/* Allocation failure is an error code, not a crash: cap the address space below the filter. */
static void out_of_memory(void)
{
#ifdef UNDER_ASAN
    printf("SKIP: ASan reserves address space: rlimit checks not run (test_alloc_failure covers "
           "every allocation)\n");
#else
    struct rlimit old, low;
    if (getrlimit(RLIMIT_AS, &old) != 0) {
        printf("SKIP: no address-space limit to read: allocation-failure checks not run\n");
        return;
    }
    low = old;
    low.rlim_cur = (rlim_t)1 << 30;
    if (setrlimit(RLIMIT_AS, &low) != 0) {
        printf("SKIP: address-space limit cannot be set: allocation-failure checks not run\n");
        return;
    }
    /* Some environments (qemu-user) do not enforce the limit: then there is nothing to test. */
    void *probe = malloc((size_t)3 << 30);
    if (probe) {
        free(probe);
        setrlimit(RLIMIT_AS, &old);
        printf("SKIP: address-space limit not enforced here (qemu-user): rlimit checks not run "
               "(test_alloc_failure covers every allocation)\n");
        return;
    }
    sbloom_t *f = (sbloom_t *)&f;
    CHECK(sbloom_create_bytes(&f, UINT64_C(4) << 30, SBLOOM_LAYOUT_BLOCK512_K8) == SBLOOM_E_NOMEM);
    CHECK(f == NULL);
    CHECK(sbloom_create(&f, UINT64_C(2000000000), 1e-6) == SBLOOM_E_NOMEM);
    setrlimit(RLIMIT_AS, &old);
    CHECK(sbloom_create(&f, 1000, 0.01) == SBLOOM_OK);
    sbloom_free(f);
#endif
}

/* An overloaded filter: sbloom_items (keys that changed it) falls behind, the sampled estimate
 * does not, and it agrees with the full scan. */
static void overload_estimate(void)
{
    sbloom_stats sampled = sbloom_stats_init(), full = sbloom_stats_init();
    CHECK(sbloom_estimate(NULL, &sampled) == SBLOOM_E_NULL);
    for (size_t l = 0; l < sizeof test_layouts / sizeof *test_layouts; l++) {
        sbloom_t *f = NULL;
        CHECK(sbloom_create_for_layout(&f, 400000, 1e-3, test_layouts[l]) == SBLOOM_OK);
        uint64_t seed = 99 + l, n = 1200000; /* 3x the plan, over 8,000+ blocks: sampled */
        for (uint64_t i = 0; i < n; i++)
            sbloom_add_hash(f, test_rand(&seed));
        CHECK(sbloom_estimate(f, &sampled) == SBLOOM_OK);
        CHECK(sbloom_get_stats(f, &full) == SBLOOM_OK);
        CHECK(sbloom_items(f) < n * 99 / 100); /* the undercount the estimate corrects */
        CHECK_REL(sampled.estimated_items, (double)n, 0.05);
        CHECK_REL(sampled.fill, full.fill, 0.01);
        CHECK_REL(sampled.estimated_fpp, full.estimated_fpp, 0.1);
        uint64_t positives = 0, probes = 200000;
        for (uint64_t i = 0; i < probes; i++)
            positives += (uint64_t)sbloom_contains_hash(f, test_rand(&seed));
        CHECK_REL(sampled.estimated_fpp, (double)positives / (double)probes, 0.1);
        sbloom_free(f);
    }
}

/* The statistics and the sampled estimate on every layout (the counting filter's 4-bit slots,
 * the scalable filter's stages and the fingerprint filters' lines and spare included), at the plan
 * and past it: the distinct items within 3% of the truth, and the false-positive rate within 10%
 * of the rate measured on fresh keys. A fingerprint filter is planned at the rate its geometry is
 * for (1e-3 .. 1e-9: measured on more probes where they answer often enough to count), and holds
 * only its plan: past it, adds are refused (fingerprint_past_its_plan). */
static void statistics_every_layout(void)
{
    enum { PLANNED = 60000, PROBES = 300000 };
    static uint64_t values[2 * PLANNED];
    TEST_FOR_EVERY_LAYOUT(layout)
    {
        sbloom_t *f = NULL;
        int fingerprint = test_layout_fingerprint(layout);
        double rate = fingerprint ? pow(10.0, -3.0 - (layout - SBLOOM_LAYOUT_FP512_R10)) : 0.01;
        uint64_t probes = layout == SBLOOM_LAYOUT_FP512_R10   ? 10 * PROBES
                          : layout == SBLOOM_LAYOUT_FP512_R13 ? 100 * PROBES
                                                              : PROBES;
        CHECK(sbloom_create_for_layout(&f, PLANNED, rate, layout) == SBLOOM_OK);
        if (!f)
            continue;
        uint64_t seed = 1000 + (uint64_t)layout, added = 0;
        /* a scalable filter grows instead of filling up: twice its first stage's plan is just
         * more stages */
        for (int round = 1; round <= (fingerprint ? 1 : 2); round++) {
            uint64_t n = round * (uint64_t)PLANNED;
            for (; added < n; added++)
                values[added] = test_rand(&seed);
            CHECK(sbloom_add_u64s(f, values, (size_t)n) >= 0);
            sbloom_stats full = sbloom_stats_init(), sampled = sbloom_stats_init();
            CHECK(sbloom_get_stats(f, &full) == SBLOOM_OK);
            CHECK(sbloom_estimate(f, &sampled) == SBLOOM_OK);
            uint64_t positives = 0;
            for (uint64_t i = 0; i < probes; i++)
                positives += (uint64_t)sbloom_contains_u64(f, test_rand(&seed));
            double measured = (double)positives / (double)probes;
            unsigned long failed = check_failed_count;
            CHECK(full.fill > 0.0 && full.fill < 1.0);
            CHECK_REL(full.estimated_items, (double)n, 0.03);
            CHECK_REL(sampled.estimated_items, (double)n, 0.03);
            if (positives >= 1000 || !fingerprint) { /* a fingerprint filter's rare answers */
                CHECK_REL(full.estimated_fpp, measured, 0.1);
                CHECK_REL(sampled.estimated_fpp, measured, 0.1);
            } else { /* at 1e-5 .. 1e-9: no more than a generous Poisson bound on the estimate */
                double expected = full.estimated_fpp * (double)probes;
                CHECK((double)positives <= expected + 6.0 * sqrt(expected) + 3.0);
                CHECK_REL(sampled.estimated_fpp, full.estimated_fpp, 0.1);
            }
            /* at the plan, the planned rate (the spread of filters: 15%); a scalable or
             * windowed filter plans its cores below it, so that their sum stays under it, and
             * a scalable one grows, so that it stays under it past the plan too; a fingerprint
             * filter is planned to its rate at most (its load stops short of a full line) */
            if (round == 1 && !test_layout_composite(layout) && !fingerprint)
                CHECK_REL(full.estimated_fpp, 0.01, 0.15);
            if (round == 1 || layout == SBLOOM_LAYOUT_SCALABLE)
                CHECK(full.estimated_fpp <= rate * 1.15);
            if (check_failed_count != failed)
                fprintf(stderr, "  in: statistics of %s with %llu items\n",
                        sbloom_layout_name(layout), (unsigned long long)n);
        }
        sbloom_free(f);
    }
}

/* String keys hash as xxHash defines them (XXH3_64bits; XXH64 seed 0 for Parquet) at every
 * length from 0 to 1100 bytes, from unaligned starts, one at a time and in a batch: above 240
 * bytes the library runs XXH3's long loop with the CPU's widest vector unit (src/hash_long.c),
 * and this file's own xxHash, compiled for the baseline, is the reference. */
static void string_hashes_are_xxhash(void)
{
    enum { LONGEST = 1100, KEYS = LONGEST + 1 };
    static uint8_t bytes[LONGEST + 64];
    static const void *keys[KEYS];
    static size_t lens[KEYS];
    static uint64_t hashes[KEYS];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (uint8_t)(i * 131 + (i >> 5) * 7 + 1);
    sbloom_t *k8, *parquet;
    CHECK(sbloom_create_bytes(&k8, 64u << 10, SBLOOM_LAYOUT_BLOCK512_K8) == SBLOOM_OK);
    CHECK(sbloom_create_bytes(&parquet, 64u << 10, SBLOOM_LAYOUT_PARQUET) == SBLOOM_OK);
    for (size_t len = 0; len < KEYS; len++) {
        keys[len] = bytes + len % 61;
        lens[len] = len;
        CHECK_EQ_U64(sbloom_hash(k8, keys[len], len), XXH3_64bits(keys[len], len));
        CHECK_EQ_U64(sbloom_hash(parquet, keys[len], len), XXH64(keys[len], len, 0));
    }
    CHECK(sbloom_hash_keys(k8, keys, lens, KEYS, hashes) == KEYS);
    for (size_t len = 0; len < KEYS; len++)
        CHECK_EQ_U64(hashes[len], XXH3_64bits(keys[len], len));
    CHECK(sbloom_add_keys(k8, keys, lens, KEYS) >= 0);
    for (size_t len = 0; len < KEYS; len++)
        CHECK(sbloom_contains_hash(k8, XXH3_64bits(keys[len], len)) == 1);
    /* Parquet's XXH64 in batches (8 keys at once where the kernels can: groups of 8 lengths
     * each, so the lanes take different stripes and tail steps), and with the lengths shuffled
     * and some keys short or NULL (those groups one key at a time) */
    CHECK(sbloom_hash_keys(parquet, keys, lens, KEYS, hashes) == KEYS);
    for (size_t len = 0; len < KEYS; len++)
        CHECK_EQ_U64(hashes[len], XXH64(keys[len], len, 0));
    uint64_t seed = 77;
    for (size_t i = KEYS - 1; i > 0; i--) {
        size_t j = (size_t)(test_rand(&seed) % (i + 1));
        const void *key = keys[i];
        size_t len = lens[i];
        keys[i] = keys[j], lens[i] = lens[j];
        keys[j] = key, lens[j] = len;
    }
    keys[100] = NULL, lens[100] = 0;
    CHECK(sbloom_hash_keys(parquet, keys, lens, KEYS, hashes) == KEYS);
    for (size_t i = 0; i < KEYS; i++)
        CHECK_EQ_U64(hashes[i], XXH64(keys[i] ? keys[i] : "", lens[i], 0));
    sbloom_free(k8);
    sbloom_free(parquet);
}

/* The exported forms of the header's inline struct initializers give what those give, and the
 * structures they make are accepted where an uninitialized one is refused. */
static void exported_initializers(void)
{
    sbloom_plan plan;
    memset(&plan, 0x5A, sizeof plan);
    sbloom_plan_reset(&plan);
    CHECK(plan.size == sizeof plan && plan.layout == 0 && plan.bytes == 0 && plan.k == 0 &&
          plan.bits_per_key == 0.0 && plan.fpp == 0.0);
    CHECK(sbloom_plan_for(1000, 0.01, &plan) == SBLOOM_OK && plan.bytes > 0);
    sbloom_stats stats;
    memset(&stats, 0x5A, sizeof stats);
    sbloom_t *f = NULL;
    CHECK(sbloom_create(&f, 1000, 0.01) == SBLOOM_OK);
    stats.size = 0;
    CHECK(sbloom_get_stats(f, &stats) == SBLOOM_E_INVALID);
    sbloom_stats_reset(&stats);
    CHECK(stats.size == sizeof stats && stats.fill == 0.0 && stats.estimated_fpp == 0.0 &&
          stats.estimated_items == 0.0);
    CHECK(sbloom_get_stats(f, &stats) == SBLOOM_OK && stats.fill == 0.0);
    sbloom_plan_reset(NULL); /* nothing to do, no crash */
    sbloom_stats_reset(NULL);
    sbloom_free(f);
}

/* f and g: the same layout, size, plan, mode and window. */
static int same_filter(const sbloom_t *f, const sbloom_t *g)
{
    sbloom_window wf = sbloom_window_init(), wg = sbloom_window_init();
    int windowed = sbloom_get_window(f, &wf) == SBLOOM_OK;
    if (windowed != (sbloom_get_window(g, &wg) == SBLOOM_OK) ||
        (windowed && memcmp(&wf, &wg, sizeof wf) != 0))
        return 0;
    return f && g && sbloom_get_layout(f) == sbloom_get_layout(g) &&
           sbloom_bytes(f) == sbloom_bytes(g) &&
           sbloom_planned_items(f) == sbloom_planned_items(g) &&
           (sbloom_planned_fpp(f) == sbloom_planned_fpp(g) ||
            (isnan(sbloom_planned_fpp(f)) && isnan(sbloom_planned_fpp(g)))) &&
           sbloom_is_concurrent(f) == sbloom_is_concurrent(g) &&
           sbloom_is_growing(f) == sbloom_is_growing(g);
}

/* sbloom_create_opts: every kind of filter from options, each the same as its constructor's; the
 * struct's size read as libbpf reads its options (a shorter one from an older caller; a longer one
 * whose unknown tail is zero; a set unknown field refused); contradictions refused. */
static void create_from_options(void)
{
    static uint64_t memory_a[4096], memory_b[4096]; /* 32 KiB, 64-byte aligned by alignment below */
    uint8_t *a = (uint8_t *)(((uintptr_t)memory_a + 63) & ~(uintptr_t)63);
    uint8_t *b = (uint8_t *)(((uintptr_t)memory_b + 63) & ~(uintptr_t)63);
    sbloom_t *f = NULL, *g = NULL;
    sbloom_opts o = sbloom_opts_init();
    o.expected = 10000;
    o.fpp = 1e-4;
    CHECK(sbloom_create_opts(&f, &o) == SBLOOM_OK && sbloom_create(&g, 10000, 1e-4) == SBLOOM_OK);
    CHECK(same_filter(f, g));
    sbloom_free(f), sbloom_free(g);
    o.layout = SBLOOM_LAYOUT_PARQUET;
    CHECK(sbloom_create_opts(&f, &o) == SBLOOM_OK &&
          sbloom_create_for_layout(&g, 10000, 1e-4, SBLOOM_LAYOUT_PARQUET) == SBLOOM_OK);
    CHECK(same_filter(f, g));
    sbloom_free(f), sbloom_free(g);
    o = sbloom_opts_init(); /* no expected: it grows from first (1M unless given) */
    CHECK(sbloom_create_opts(&f, &o) == SBLOOM_OK &&
          sbloom_create_scalable(&g, 1000000, 1e-6) == SBLOOM_OK);
    CHECK(same_filter(f, g) && sbloom_is_growing(f));
    sbloom_free(f), sbloom_free(g);
    o.first = 5000;
    o.fpp = 1e-3;
    CHECK(sbloom_create_opts(&f, &o) == SBLOOM_OK &&
          sbloom_create_scalable(&g, 5000, 1e-3) == SBLOOM_OK);
    CHECK(same_filter(f, g));
    sbloom_free(f), sbloom_free(g);
    o = sbloom_opts_init();
    o.bytes = 4096;
    o.layout = SBLOOM_LAYOUT_BLOCK512_K8;
    CHECK(sbloom_create_opts(&f, &o) == SBLOOM_OK &&
          sbloom_create_bytes(&g, 4096, SBLOOM_LAYOUT_BLOCK512_K8) == SBLOOM_OK);
    CHECK(same_filter(f, g));
    sbloom_free(f), sbloom_free(g);
    o = sbloom_opts_init();
    o.expected = 3000;
    o.fpp = 0.01;
    o.periods = 3;
    o.period = 10;
    o.now = 12345;
    CHECK(sbloom_create_opts(&f, &o) == SBLOOM_OK &&
          sbloom_create_windowed(&g, 3000, 0.01, 3, 10, 12345) == SBLOOM_OK);
    CHECK(same_filter(f, g));
    sbloom_free(f), sbloom_free(g);
    o.expected = 0;
    o.first = 700;
    CHECK(sbloom_create_opts(&f, &o) == SBLOOM_OK &&
          sbloom_create_windowed_scalable(&g, 700, 0.01, 3, 10, 12345) == SBLOOM_OK);
    CHECK(same_filter(f, g));
    sbloom_free(f), sbloom_free(g);
    uint16_t probe = 1;
    if (*(uint8_t *)&probe == 1) { /* images in place: little-endian hosts */
        o = sbloom_opts_init();
        o.expected = 1000;
        o.fpp = 1e-3;
        o.memory = a;
        o.memory_size = 16384;
        CHECK(sbloom_create_opts(&f, &o) == SBLOOM_OK &&
              sbloom_create_in_planned(&g, b, 16384, 1000, 1e-3, 0) == SBLOOM_OK);
        CHECK(same_filter(f, g) && sbloom_data(f) == a + 128);
        sbloom_free(f), sbloom_free(g);
        o.memory_size = 64; /* too small: as sbloom_create_in says */
        CHECK(sbloom_create_opts(&f, &o) == SBLOOM_E_TRUNCATED && f == NULL);
        o.memory_size = 16384;
        o.periods = 3; /* a window lives in the library's memory */
        o.period = 1;
        CHECK(sbloom_create_opts(&f, &o) == SBLOOM_E_INVALID && f == NULL);
    }
    o = sbloom_opts_init(); /* concurrent from the start */
    o.expected = 1000;
    o.flags = SBLOOM_OPTS_CONCURRENT;
    CHECK(sbloom_create_opts(&f, &o) == SBLOOM_OK && f && sbloom_is_concurrent(f));
    sbloom_free(f);
    o.layout = SBLOOM_LAYOUT_COUNTING512; /* which cannot be: refused, nothing left */
    CHECK(sbloom_create_opts(&f, &o) == SBLOOM_E_LAYOUT && f == NULL);
    /* contradictions and unknown flags */
    o = sbloom_opts_init();
    o.expected = 10;
    o.bytes = 4096;
    o.layout = SBLOOM_LAYOUT_BLOCK512_K8;
    CHECK(sbloom_create_opts(&f, &o) == SBLOOM_E_INVALID);
    o = sbloom_opts_init();
    o.flags = 1u << 7;
    CHECK(sbloom_create_opts(&f, &o) == SBLOOM_E_INVALID);
    CHECK(sbloom_create_opts(NULL, &o) == SBLOOM_E_NULL &&
          sbloom_create_opts(&f, NULL) == SBLOOM_E_NULL);
    /* the size: an older caller's shorter struct (its fields only), a newer caller's longer one */
    struct {
        sbloom_opts opts;
        uint64_t newer;
    } longer;
    memset(&longer, 0, sizeof longer);
    longer.opts = sbloom_opts_init();
    longer.opts.size = sizeof longer;
    longer.opts.expected = 5000;
    CHECK(sbloom_create_opts(&f, &longer.opts) == SBLOOM_OK && sbloom_planned_items(f) == 5000);
    sbloom_free(f);
    longer.newer = 1; /* an option this library does not know, set */
    CHECK(sbloom_create_opts(&f, &longer.opts) == SBLOOM_E_INVALID && f == NULL);
    o = sbloom_opts_init();
    o.expected = 5000;
    o.fpp = 0.5;
    o.size = offsetof(sbloom_opts, fpp); /* a caller that knew expected only: fpp is its zero */
    CHECK(sbloom_create_opts(&f, &o) == SBLOOM_OK && sbloom_planned_fpp(f) == 1e-6);
    sbloom_free(f);
    o.size = 4; /* not even the size */
    CHECK(sbloom_create_opts(&f, &o) == SBLOOM_E_INVALID && f == NULL);
}

/* sbloom_plan_opts: for every filter with a planned size (plain of each family, windows of each
 * form: slots, adjacent lines, the fingerprint window with its spill bytes), the bytes and layout
 * of what sbloom_create_opts makes of the same options, over rates, counts and windows, for one
 * writer and for many (the same lines, their locks taken); the options it cannot size refused as
 * sbloom_create_opts refuses them, or as having no size yet. */
static void plans_from_options(void)
{
    static const double rates[] = {0.1, 0.01, 1e-4, 1e-6, 1e-8};
    static const uint64_t counts[] = {1000, 60000, 1000000};
    static const uint32_t periods[] = {0, 1, 3, 8};
    int forms[4] = {0, 0, 0, 0}; /* made: plain; slots; adjacent lines; fingerprint window */
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++)
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
            for (size_t w = 0; w < sizeof periods / sizeof periods[0]; w++)
                for (unsigned any = 0; any < 3; any++) { /* 2: many writers as well */
                    sbloom_opts o = sbloom_opts_init();
                    o.expected = counts[c];
                    o.fpp = rates[r];
                    o.periods = periods[w];
                    o.period = periods[w] == 8 ? 7 : 6; /* 6: finer periods of 2 and 3 */
                    o.now = 1000;
                    o.flags = (any ? SBLOOM_OPTS_ANY_FAMILY : 0) |
                              (any == 2 ? SBLOOM_OPTS_CONCURRENT : 0);
                    sbloom_plan plan = sbloom_plan_init();
                    sbloom_t *f = NULL;
                    int planned = sbloom_plan_opts(&o, &plan), made = sbloom_create_opts(&f, &o);
                    CHECK(planned == made);
                    if (planned != SBLOOM_OK || made != SBLOOM_OK) {
                        sbloom_free(f);
                        continue;
                    }
                    CHECK(plan.bytes == sbloom_bytes(f));
                    CHECK(plan.bits_per_key == (double)plan.bytes * 8.0 / (double)counts[c]);
                    CHECK(plan.fpp > 0.0 && plan.fpp <= rates[r]);
                    if (!periods[w]) {
                        CHECK(plan.layout == sbloom_get_layout(f));
                        forms[0]++;
                    } else {
                        const sbloom_t *stage = sbloom_stage(f, 0);
                        int ages = plan.layout >= SBLOOM_LAYOUT_FP512_R10 &&
                                   plan.layout <= SBLOOM_LAYOUT_FP512_R29;
                        /* a ring's generations are its stages, each of the plan's layout; the
                         * fingerprint window has none (its entries are one core) */
                        CHECK(ages ? sbloom_stages(f) == 0
                                   : stage && sbloom_get_layout(stage) == plan.layout);
                        forms[ages ? 3 : plan.layout == SBLOOM_LAYOUT_COUNTING512 ? 1 : 2]++;
                    }
                    sbloom_free(f);
                }
    CHECK(forms[0] > 0 && forms[1] > 0 && forms[2] > 0 && forms[3] > 0);
    sbloom_opts o = sbloom_opts_init();
    sbloom_plan plan = sbloom_plan_init();
    CHECK(sbloom_plan_opts(&o, &plan) == SBLOOM_E_INVALID); /* no expected: it would grow */
    o.expected = 1000;
    o.layout = SBLOOM_LAYOUT_SCALABLE;
    CHECK(sbloom_plan_opts(&o, &plan) == SBLOOM_E_INVALID);
    o.layout = 0;
    o.bytes = 4096;
    CHECK(sbloom_plan_opts(&o, &plan) == SBLOOM_E_INVALID);
    o.bytes = 0;
    o.fpp = 1.5;
    CHECK(sbloom_plan_opts(&o, &plan) == SBLOOM_E_INVALID);
    o.fpp = 0.0; /* 1e-6, as sbloom_create_opts takes it */
    CHECK(sbloom_plan_opts(&o, &plan) == SBLOOM_OK && plan.fpp <= 1e-6 && plan.bytes > 0);
    o.periods = 3; /* a window of period 0 */
    CHECK(sbloom_plan_opts(&o, &plan) == SBLOOM_E_INVALID);
    o.period = 10;
    o.periods = SBLOOM_WINDOW_MAX_PERIODS + 1;
    CHECK(sbloom_plan_opts(&o, &plan) == SBLOOM_E_INVALID);
    o.periods = 3;
    o.flags = 1u << 7; /* a flag this library does not know */
    CHECK(sbloom_plan_opts(&o, &plan) == SBLOOM_E_INVALID);
    o.flags = 0;
    o.expected = UINT64_C(1) << 40; /* past the largest filter */
    CHECK(sbloom_plan_opts(&o, &plan) == SBLOOM_E_TOO_LARGE);
    plan.size = 4; /* a plan struct the caller did not size */
    o.expected = 1000;
    CHECK(sbloom_plan_opts(&o, &plan) == SBLOOM_E_INVALID);
    CHECK(sbloom_plan_opts(NULL, &plan) == SBLOOM_E_NULL &&
          sbloom_plan_opts(&o, NULL) == SBLOOM_E_NULL);
}

/* A filter of several cores reports its arrangement's value (SBLOOM_LAYOUT_SCALABLE, _WINDOWED)
 * through a clone and a reload, while its stages report geometries and its strings hash as every
 * XXH3 layout's do (the object itself holds no layout: docs/ARCHITECTURE.md, "Three axes"). */
static void arrangements_report_their_layout(void)
{
    sbloom_t *made[3] = {NULL, NULL, NULL};
    sbloom_layout reported[3] = {SBLOOM_LAYOUT_SCALABLE, SBLOOM_LAYOUT_WINDOWED,
                                 SBLOOM_LAYOUT_WINDOWED};
    sbloom_opts ages = sbloom_opts_init();
    ages.expected = 20000;
    ages.fpp = 1e-6;
    ages.periods = 3;
    ages.period = 10;
    ages.flags = SBLOOM_OPTS_ANY_FAMILY;
    CHECK(sbloom_create_scalable(&made[0], 1000, 0.001) == SBLOOM_OK);
    CHECK(sbloom_create_windowed(&made[1], 20000, 0.01, 3, 10, 0) == SBLOOM_OK);
    CHECK(sbloom_create_opts(&made[2], &ages) == SBLOOM_OK);
    sbloom_t *plain = NULL;
    CHECK(sbloom_create(&plain, 1000, 0.01) == SBLOOM_OK);
    for (int i = 0; i < 3; i++) {
        sbloom_t *f = made[i], *copy = NULL, *back = NULL;
        if (!f)
            continue;
        CHECK(sbloom_get_layout(f) == reported[i]);
        CHECK(sbloom_hash(f, "https://example.com/a", 21) ==
              sbloom_hash(plain, "https://example.com/a", 21));
        for (uint64_t k = 0; k < 3000; k++)
            CHECK(sbloom_add_u64(f, k) >= 0);
        const sbloom_t *stage = sbloom_stage(f, 0); /* (the ages have no generation views) */
        CHECK(i == 2 || (stage && sbloom_get_layout(stage) != SBLOOM_LAYOUT_SCALABLE &&
                         sbloom_get_layout(stage) != SBLOOM_LAYOUT_WINDOWED &&
                         sbloom_layout_block_bytes(sbloom_get_layout(stage)) > 0));
        CHECK(sbloom_clone(&copy, f) == SBLOOM_OK && sbloom_get_layout(copy) == reported[i]);
        uint64_t size = sbloom_serialized_size(f);
        void *image = size ? malloc(size) : NULL;
        CHECK(image && sbloom_serialize(f, image, size) == SBLOOM_OK &&
              sbloom_deserialize(&back, image, size) == SBLOOM_OK &&
              sbloom_get_layout(back) == reported[i]);
        CHECK(back && sbloom_contains_u64(back, 2999) == 1);
        free(image);
        sbloom_free(copy);
        sbloom_free(back);
        sbloom_free(f);
    }
    sbloom_free(plain);
}

int main(void)
{
    exported_initializers();
    create_from_options();
    plans_from_options();
    arrangements_report_their_layout();
    errors_have_names();
    overload_estimate();
    statistics_every_layout();
    bad_arguments();
    lifecycle_and_introspection();
    no_false_negatives();
    add_if_new();
    answer_counts();
    null_keys_anywhere();
    null_keys_small_writes();
    string_hashes_are_xxhash();
    instruction_sets();
    out_of_memory();
    return check_report();
}
