/*
 * Every batch form the library exports, on every layout, checked key by key against the one-key
 * form it stands for. A batch is a loop of single-key calls that is allowed to be fast; nothing
 * else may differ: the answers, the count returned, the filter's bytes and item count.
 *
 * The sizes are chosen to be multiples of nothing: primes, one either side of every chunk size of
 * the drivers (64, 512, 1024, 4096, the parallel threshold 65,536) and n = t - 1, t, t + 1 for
 * every thread count, on filters in the caches and filters large enough to be prefetched, on 1 to
 * 7 threads, plain and in concurrent mode. batch_forms_listed.sh checks that every batch form of
 * the header is named here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "simdbloom.h"
#include "check.h"

#define MAX_KEYS 100003u /* a prime above the parallel threshold */

/* One batch of keys in all its shapes: 64-bit hashes, byte strings (by pointer and length, and
 * the same strings in one buffer with 32- and 64-bit offsets) and integers. About one key in five
 * repeats an earlier key of the same batch, so that test-and-add sees repeats inside it. */
typedef struct keyset {
    uint64_t hashes[MAX_KEYS];
    uint64_t values[MAX_KEYS];
    const void *keys[MAX_KEYS];
    size_t lens[MAX_KEYS];
    char text[MAX_KEYS][40];
    char blob[MAX_KEYS * 40];
    int32_t offsets32[MAX_KEYS + 1];
    int64_t offsets64[MAX_KEYS + 1];
} keyset;

static void make_keys(keyset *s, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = test_rand(&seed);
        size_t from = i >= 5 && r % 5 == 0 ? (size_t)(r >> 8) % i : i;
        if (from != i) { /* a repeat inside the batch */
            s->hashes[i] = s->hashes[from];
            s->values[i] = s->values[from];
            s->keys[i] = s->keys[from];
            s->lens[i] = s->lens[from];
            continue;
        }
        s->hashes[i] = test_rand(&seed);
        s->values[i] = test_rand(&seed);
        /* lengths 0 to 39: the empty key, short keys and keys past one 16-byte lane */
        size_t len = (size_t)(r >> 32) % 40;
        for (size_t j = 0; j < len; j++)
            s->text[i][j] = (char)('a' + (test_rand(&seed) % 26));
        s->keys[i] = len ? (const void *)s->text[i] : NULL; /* NULL is allowed with length 0 */
        s->lens[i] = len;
    }
    /* the buffer starts with 3 bytes no key uses: offsets[0] is not 0, as in a slice */
    size_t at = 3;
    for (size_t i = 0; i < n; i++) {
        s->offsets32[i] = (int32_t)at;
        s->offsets64[i] = (int64_t)at;
        if (s->lens[i])
            memcpy(s->blob + at, s->keys[i], s->lens[i]);
        at += s->lens[i];
    }
    s->offsets32[n] = (int32_t)at;
    s->offsets64[n] = (int64_t)at;
}

static keyset batch_keys, probe_keys;
static uint8_t answers[MAX_KEYS];

static sbloom_t *make_filter(sbloom_layout layout, uint64_t items, unsigned threads, int concurrent)
{
    sbloom_t *f = NULL;
    if (sbloom_create_for_layout(&f, items, 0.01, layout) != SBLOOM_OK)
        return NULL;
    CHECK(sbloom_set_threads(f, threads) == SBLOOM_OK);
    if (concurrent && sbloom_set_concurrent(f, 1) != SBLOOM_OK) {
        sbloom_free(f);
        return NULL;
    }
    return f;
}

/* Both filters hold the same stages, each with the same bits and item count. */
static int same_filter(const sbloom_t *a, const sbloom_t *b)
{
    if (sbloom_stages(a) != sbloom_stages(b) || sbloom_items(a) != sbloom_items(b))
        return 0;
    for (uint32_t i = 0; i < sbloom_stages(a); i++) {
        const sbloom_t *x = sbloom_stage(a, i), *y = sbloom_stage(b, i);
        if (sbloom_get_layout(x) != sbloom_get_layout(y) || sbloom_bytes(x) != sbloom_bytes(y) ||
            sbloom_items(x) != sbloom_items(y) ||
            memcmp(sbloom_data(x), sbloom_data(y), (size_t)sbloom_bytes(x)) != 0)
            return 0;
    }
    return 1;
}

enum key_kind { HASHES, KEYS, VALUES, STRINGS32, STRINGS64 };
static const char *const kind_names[] = {"hashes", "keys", "u64s", "strings32", "strings64"};

static int single_add(sbloom_t *f, enum key_kind kind, const keyset *s, size_t i)
{
    switch (kind) {
    case HASHES: return sbloom_add_hash(f, s->hashes[i]);
    case VALUES: return sbloom_add_u64(f, s->values[i]);
    default: return sbloom_add(f, s->keys[i], s->lens[i]); /* a string, in any batch shape */
    }
}

static int single_contains(const sbloom_t *f, enum key_kind kind, const keyset *s, size_t i)
{
    switch (kind) {
    case HASHES: return sbloom_contains_hash(f, s->hashes[i]);
    case VALUES: return sbloom_contains_u64(f, s->values[i]);
    default: return sbloom_contains(f, s->keys[i], s->lens[i]);
    }
}

static int64_t batch_add(sbloom_t *f, enum key_kind kind, const keyset *s, size_t n)
{
    switch (kind) {
    case HASHES: return sbloom_add_hashes(f, s->hashes, n);
    case KEYS: return sbloom_add_keys(f, s->keys, s->lens, n);
    case STRINGS32: return sbloom_add_strings32(f, s->blob, s->offsets32, n);
    case STRINGS64: return sbloom_add_strings64(f, s->blob, s->offsets64, n);
    default: return sbloom_add_u64s(f, s->values, n);
    }
}

static int64_t batch_add_if_new(sbloom_t *f, enum key_kind kind, const keyset *s, size_t n,
                                uint8_t *is_new)
{
    switch (kind) {
    case HASHES: return sbloom_add_if_new_hashes(f, s->hashes, n, is_new);
    case KEYS: return sbloom_add_if_new_keys(f, s->keys, s->lens, n, is_new);
    case STRINGS32: return sbloom_add_if_new_strings32(f, s->blob, s->offsets32, n, is_new);
    case STRINGS64: return sbloom_add_if_new_strings64(f, s->blob, s->offsets64, n, is_new);
    default: return sbloom_add_if_new_u64s(f, s->values, n, is_new);
    }
}

static int64_t batch_contains(const sbloom_t *f, enum key_kind kind, const keyset *s, size_t n,
                              uint8_t *results)
{
    switch (kind) {
    case HASHES: return sbloom_contains_hashes(f, s->hashes, n, results);
    case KEYS: return sbloom_contains_keys(f, s->keys, s->lens, n, results);
    case STRINGS32: return sbloom_contains_strings32(f, s->blob, s->offsets32, n, results);
    case STRINGS64: return sbloom_contains_strings64(f, s->blob, s->offsets64, n, results);
    default: return sbloom_contains_u64s(f, s->values, n, results);
    }
}

typedef struct setting {
    sbloom_layout layout;
    uint64_t items; /* the plan: small filters live in the caches, large ones are prefetched */
    unsigned threads;
    int concurrent;
} setting;

static void report(const setting *c, const char *form, size_t n)
{
    fprintf(stderr, "  in: %s on %s, n %zu, plan %llu, %u threads%s\n", form,
            sbloom_layout_name(c->layout), n, (unsigned long long)c->items, c->threads,
            c->concurrent ? ", concurrent" : "");
}

/* The writes: a batch into one filter, the same keys one at a time into another. */
static void writes_match(const setting *c, enum key_kind kind, size_t n)
{
    sbloom_t *batch = make_filter(c->layout, c->items, c->threads, c->concurrent);
    sbloom_t *single = make_filter(c->layout, c->items, c->threads, c->concurrent);
    sbloom_t *fused = make_filter(c->layout, c->items, c->threads, c->concurrent);
    if (!batch || !single || !fused) { /* a layout without concurrent mode */
        CHECK(c->concurrent && !batch && !single && !fused);
        sbloom_free(batch);
        sbloom_free(single);
        sbloom_free(fused);
        return;
    }
    unsigned long failed = check_failed_count;
    /* a first half, so that the second batch meets keys already present */
    CHECK(batch_add(batch, kind, &batch_keys, n / 2) >= 0);
    CHECK(batch_add(fused, kind, &batch_keys, n / 2) >= 0);
    for (size_t i = 0; i < n / 2; i++)
        single_add(single, kind, &batch_keys, i);

    int64_t new_singles = 0, matches = 1;
    memset(answers, 0xAA, n);
    int64_t new_fused = batch_add_if_new(fused, kind, &batch_keys, n, answers);
    int64_t new_batch = batch_add(batch, kind, &batch_keys, n);
    for (size_t i = 0; i < n; i++) {
        int one = single_add(single, kind, &batch_keys, i);
        new_singles += one;
        matches &= answers[i] == one;
    }
    CHECK(matches);
    CHECK(new_fused == new_singles);
    CHECK(new_batch == new_singles);
    CHECK(same_filter(batch, single));
    CHECK(same_filter(fused, single));
    /* test-and-add without answers counts the same */
    sbloom_t *quiet = make_filter(c->layout, c->items, c->threads, c->concurrent);
    CHECK(quiet && batch_add(quiet, kind, &batch_keys, n / 2) >= 0);
    CHECK(quiet && batch_add_if_new(quiet, kind, &batch_keys, n, NULL) == new_singles);
    CHECK(quiet && same_filter(quiet, single));
    sbloom_free(quiet);

    /* The reads, on the same filter: absent and present keys, with and without answers. */
    size_t m = n;
    int64_t present = 0;
    matches = 1;
    memset(answers, 0xAA, m);
    int64_t got = batch_contains(single, kind, &probe_keys, m, answers);
    for (size_t i = 0; i < m; i++) {
        int one = single_contains(single, kind, &probe_keys, i);
        present += one;
        matches &= answers[i] == one;
    }
    CHECK(matches && got == present);
    CHECK(batch_contains(single, kind, &probe_keys, m, NULL) == present);
    CHECK(batch_contains(single, kind, &batch_keys, n, answers) == (int64_t)n); /* all added */

    if (kind == KEYS) { /* sbloom_hash_keys is sbloom_hash key by key */
        static uint64_t hashes[MAX_KEYS];
        CHECK(sbloom_hash_keys(single, batch_keys.keys, batch_keys.lens, n, hashes) == (int64_t)n);
        int same = 1;
        for (size_t i = 0; i < n; i++)
            same &= hashes[i] == sbloom_hash(single, batch_keys.keys[i], batch_keys.lens[i]);
        CHECK(same);
    }
    if (check_failed_count != failed)
        report(c, kind_names[kind], n);
    sbloom_free(batch);
    sbloom_free(single);
    sbloom_free(fused);
}

/* The allow-list's batch lookup: a key is present when the filter has it and the list does not. */
static void allowing_matches(const setting *c, size_t n)
{
    sbloom_t *f = make_filter(c->layout, c->items, c->threads, 0);
    sbloom_allowlist_t *allow = NULL;
    CHECK(f && sbloom_allowlist_create(&allow) == SBLOOM_OK);
    if (!f || !allow) {
        sbloom_free(f);
        sbloom_allowlist_free(allow);
        return;
    }
    unsigned long failed = check_failed_count;
    CHECK(sbloom_add_keys(f, batch_keys.keys, batch_keys.lens, n) >= 0);
    /* every third added key, and the last one, are listed as known false positives */
    for (size_t i = 0; i < n; i += 3)
        sbloom_allowlist_add(allow, batch_keys.keys[i], batch_keys.lens[i]);
    if (n)
        sbloom_allowlist_add(allow, batch_keys.keys[n - 1], batch_keys.lens[n - 1]);
    int64_t want = 0;
    int matches = 1;
    memset(answers, 0xAA, n);
    int64_t got =
        sbloom_contains_keys_allowing(f, allow, batch_keys.keys, batch_keys.lens, n, answers);
    for (size_t i = 0; i < n; i++) {
        int one = sbloom_contains(f, batch_keys.keys[i], batch_keys.lens[i]) == 1 &&
                  sbloom_allowlist_contains(allow, batch_keys.keys[i], batch_keys.lens[i]) == 0;
        want += one;
        matches &= answers[i] == one;
    }
    CHECK(matches && got == want);
    CHECK(n == 0 || answers[n - 1] == 0); /* the last key is listed */
    if (check_failed_count != failed)
        report(c, "contains_keys_allowing", n);
    sbloom_allowlist_free(allow);
    sbloom_free(f);
}

/* Removal: on the counting layout a batch removes exactly what single removes do, refusals
 * included; every other layout refuses both forms alike. */
static void removes_match(const setting *c, size_t n)
{
    sbloom_t *batch = make_filter(c->layout, c->items, c->threads, 0);
    sbloom_t *single = make_filter(c->layout, c->items, c->threads, 0);
    CHECK(batch && single);
    if (!batch || !single) {
        sbloom_free(batch);
        sbloom_free(single);
        return;
    }
    unsigned long failed = check_failed_count;
    /* the first half of the keys added (twice for every fourth key), then all of them removed: a
     * key of the second half is refused unless a false positive lets it through */
    for (size_t i = 0; i < n / 2; i++) {
        for (int twice = 0; twice <= (i % 4 == 0); twice++) {
            single_add(batch, KEYS, &batch_keys, i);
            single_add(single, KEYS, &batch_keys, i);
        }
    }
    /* the layouts that remove: counting512 (counts) and the fingerprint layouts (entries) */
    int counting = c->layout == SBLOOM_LAYOUT_COUNTING512 || test_layout_fingerprint(c->layout);
    for (int form = 0; form < 4; form++) { /* strings, hashes, then the buffer forms */
        for (size_t i = 0; form > 0 && i < n / 2; i++) { /* the first half again */
            if (form == 1) {
                sbloom_add_hash(batch, batch_keys.hashes[i]);
                sbloom_add_hash(single, batch_keys.hashes[i]);
            } else {
                single_add(batch, KEYS, &batch_keys, i);
                single_add(single, KEYS, &batch_keys, i);
            }
        }
        int64_t removed = 0;
        int matches = 1, refused_alike = 1;
        memset(answers, 0xAA, n);
        const keyset *k = &batch_keys;
        int64_t got = form == 0   ? sbloom_remove_keys(batch, k->keys, k->lens, n, answers)
                      : form == 1 ? sbloom_remove_hashes(batch, k->hashes, n, answers)
                      : form == 2
                          ? sbloom_remove_strings32(batch, k->blob, k->offsets32, n, answers)
                          : sbloom_remove_strings64(batch, k->blob, k->offsets64, n, answers);
        for (size_t i = 0; i < n; i++) {
            int one = form == 1 ? sbloom_remove_hash(single, k->hashes[i])
                                : sbloom_remove(single, k->keys[i], k->lens[i]);
            if (counting) {
                removed += one == 1;
                matches &= answers[i] == (one == 1);
            } else {
                refused_alike &= one == SBLOOM_E_LAYOUT;
            }
        }
        if (counting) {
            CHECK(matches && got == removed);
            CHECK(n < 8 || removed > 0);
            CHECK(same_filter(batch, single));
        } else {
            CHECK(refused_alike && got == SBLOOM_E_LAYOUT);
        }
    }
    if (counting && n) { /* and the integer form, one key */
        CHECK(sbloom_add_u64(single, batch_keys.values[0]) >= 0);
        CHECK(sbloom_remove_u64(single, batch_keys.values[0]) == 1);
    }
    if (check_failed_count != failed)
        report(c, "remove_keys/remove_hashes/remove_strings32/remove_strings64", n);
    sbloom_free(batch);
    sbloom_free(single);
}

/* The buffer forms' own rules, each refused before anything changes: offsets that decrease or
 * start below 0 (SBLOOM_E_INVALID), a NULL buffer with a key that has bytes or NULL offsets
 * (SBLOOM_E_NULL); empty keys; and a slice (offsets + i) is the keys from i on. */
static void buffer_rules(sbloom_layout layout)
{
    sbloom_t *f = make_filter(layout, 2000, 1, 0);
    CHECK(f != NULL);
    if (!f)
        return;
    static int32_t off32[8];
    static int64_t off64[8];
    static const int32_t good32[4] = {0, 2, 2, 5};
    static const int64_t good64[4] = {0, 2, 2, 5};
    memcpy(off32, good32, sizeof good32);
    memcpy(off64, good64, sizeof good64);
    off32[2] = 1; /* 0, 2, 1, 5: decreasing */
    off64[2] = 1;
    CHECK(sbloom_add_strings32(f, "abcde", off32, 3) == SBLOOM_E_INVALID);
    CHECK(sbloom_add_if_new_strings64(f, "abcde", off64, 3, answers) == SBLOOM_E_INVALID);
    CHECK(sbloom_contains_strings32(f, "abcde", off32, 3, answers) == SBLOOM_E_INVALID);
    off32[0] = -1;
    off32[2] = 2;
    CHECK(sbloom_add_strings32(f, "abcde", off32, 3) == SBLOOM_E_INVALID);
    CHECK(sbloom_items(f) == 0);
    CHECK(sbloom_add_strings32(f, NULL, good32, 3) == SBLOOM_E_NULL);
    CHECK(sbloom_add_strings64(f, "abcde", NULL, 3) == SBLOOM_E_NULL);
    CHECK(sbloom_add_strings32(NULL, "abcde", good32, 3) == SBLOOM_E_NULL);
    CHECK(sbloom_add_strings32(f, NULL, NULL, 0) == 0);
    static const int32_t empties[3] = {4, 4, 4};
    CHECK(sbloom_add_if_new_strings32(f, NULL, empties, 2, answers) == 1); /* the empty key */
    CHECK(answers[0] == 1 && answers[1] == 0 && sbloom_contains(f, "", 0) == 1);
    CHECK(sbloom_add_strings64(f, "abcde", good64, 3) == 2); /* "ab", "" (seen), "cde" */
    CHECK(sbloom_contains(f, "ab", 2) == 1 && sbloom_contains(f, "cde", 3) == 1);
    CHECK(sbloom_items(f) == (layout == SBLOOM_LAYOUT_COUNTING512 ? 5u : 3u));
    /* a slice: keys 5 .. 5 + m of the batch, through offsets + 5 */
    size_t m = 200;
    CHECK(sbloom_add_keys(f, batch_keys.keys + 5, batch_keys.lens + 5, m) >= 0);
    CHECK(sbloom_contains_strings32(f, batch_keys.blob, batch_keys.offsets32 + 5, m, answers) ==
          (int64_t)m);
    CHECK(sbloom_contains_strings64(f, batch_keys.blob, batch_keys.offsets64 + 5, m, NULL) ==
          (int64_t)m);
    sbloom_free(f);
}

/* The plan of a filter past the batch drivers' prefetch threshold (512 KiB) in every layout:
 * about 700 KiB (at 600,000 keys the fingerprint and counting layouts take 1 to 3.3 MiB, which
 * every check here writes, zeroes and compares in whole, thousands of times), with room for twice
 * the longest batch (a fingerprint filter refuses keys past its plan). */
static uint64_t large_plan(sbloom_layout layout)
{
    const uint64_t most = 600000, fewest = 2 * (uint64_t)MAX_KEYS;
    sbloom_t *f = make_filter(layout, most, 1, 0);
    CHECK(f != NULL);
    if (!f)
        return most;
    uint64_t plan = (uint64_t)((double)most * (700u << 10) / (double)sbloom_bytes(f));
    sbloom_free(f);
    plan = plan < fewest ? fewest : plan > most ? most : plan;
    f = make_filter(layout, plan, 1, 0);
    CHECK(f && sbloom_bytes(f) >= (600u << 10)); /* prefetched, whatever the layout */
    sbloom_free(f);
    return plan;
}

static void run_setting(const setting *c, size_t n)
{
    for (int kind = HASHES; kind <= STRINGS64; kind++)
        writes_match(c, (enum key_kind)kind, n);
    if (!c->concurrent) {
        allowing_matches(c, n);
        removes_match(c, n);
    }
}

int main(int argc, char **argv)
{
    /* An argument "bloom" or "fingerprint" runs that family's layouts only (ctest runs the two
     * halves side by side, so that neither runs past its time under an emulator); none runs all. */
    const char *family = argc > 1 ? argv[1] : "";
    if (family[0] && strcmp(family, "bloom") != 0 && strcmp(family, "fingerprint") != 0) {
        fprintf(stderr, "usage: %s [bloom|fingerprint]\n", argv[0]);
        return 2;
    }
#ifdef __GLIBC__
    /* Freed filters stay in the heap for the next ones: glibc would give each back to the kernel
     * and fault its successor in page by page, 60% of this test's time on a VM whose page faults
     * are dear (an AMD EPYC Zen 5 under PVM). */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
    /* SIMDBLOOM_BATCH_FORMS_QUICK (set under sanitizers and emulators, where each key costs 10 to
     * 100 times more): the edge sizes and one parallel size, not all of them. */
    const char *quick_env = getenv("SIMDBLOOM_BATCH_FORMS_QUICK");
    int quick = quick_env && quick_env[0] == '1';
    make_keys(&batch_keys, MAX_KEYS, 1);
    make_keys(&probe_keys, MAX_KEYS, 2);
    /* Small batches, single-threaded, on a filter in the caches and on a prefetched one: every
     * size around the drivers' chunks (64 keys prefetched, 512 in the caches, 1024 gathered per
     * thread, 4096). The first nine are the quick run's. */
    static const size_t small[] = {0, 1, 63, 65, 511, 513, 1023, 1025, 4097, 2,   3,
                                   5, 7, 8,  9,  31,  64,  127,  512,  1024, 4095};
    size_t nsmall = quick ? 9 : sizeof small / sizeof *small;
    /* Parallel batches: sizes above the threshold that no thread count divides, on 2 to 7
     * threads, plain and concurrent. */
    static const struct {
        size_t n;
        unsigned threads;
    } large[] = {{65537, 3}, {65537, 2}, {MAX_KEYS, 4}, {MAX_KEYS, 7}}; /* n % t: 2, 1, 3, 1 */
    size_t nlarge = quick ? 1 : sizeof large / sizeof *large;
    TEST_FOR_EVERY_LAYOUT(layout)
    {
        if (family[0] && test_layout_fingerprint(layout) != (family[0] == 'f'))
            continue;
        buffer_rules(layout);
        /* in the caches (2,000 keys, about 2.4 KiB at 1%; a fingerprint filter refuses keys
         * past its plan: 5,000 hold the longest small batch) and prefetched */
        const uint64_t plans[] = {test_layout_fingerprint(layout) ? 5000 : 2000,
                                  large_plan(layout)};
        for (size_t p = 0; p < 2; p++)
            for (size_t i = 0; i < nsmall; i++)
                for (int concurrent = 0; concurrent <= 1; concurrent++) {
                    setting c = {layout, plans[p], 1, concurrent};
                    run_setting(&c, small[i]);
                }
        /* n = t - 1, t, t + 1 on t threads: below the parallel threshold, so serial, but the
         * thread count must not change a thing. */
        for (unsigned t = 2; t <= (quick ? 3u : 7u); t++)
            for (size_t n = t - 1; n <= t + 1; n++) {
                setting c = {layout, plans[1], t, 0};
                run_setting(&c, n);
            }
        for (size_t i = 0; i < nlarge; i++)
            for (int concurrent = 0; concurrent <= 1; concurrent++) {
                setting c = {layout, plans[1], large[i].threads, concurrent};
                run_setting(&c, large[i].n);
            }
    }
    return check_report();
}
