/*
 * The fingerprint family (fp512-r10 .. fp512-r29): its plans against the bit layouts', exact
 * removal, what happens past the plan (refused adds, and a filter that stays right), the spare
 * paths at a full plan, files, and the operations it refuses. The kernels are compared with scalar
 * in test_differential and fuzz_fingerprint; the rates are measured in test_fpp.
 *
 * usage: test_fingerprint [DATA_DIR]   (with it, the golden files v1-fp512-r*.sbloom there)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simdbloom.h"
#include "check.h"

static const double rates[] = {1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9};

/* Every rate from 1e-3 to 1e-9: the smallest plan of all families is a fingerprint layout, fewer
 * bytes than the smallest bit layout's, within 1.4 times the information limit log2(1/p) (the
 * one-line design's cost, docs/SIZING.md), and meeting the rate; sbloom_plan_for keeps to the
 * bit layouts (what callers of sbloom_create relied on); the options pick a fingerprint filter
 * only when asked (SBLOOM_OPTS_ANY_FAMILY). */
static void plans(void)
{
    const uint64_t n = 1000000;
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        sbloom_plan any = sbloom_plan_init(), bits = sbloom_plan_init();
        CHECK(sbloom_plan_any(n, rates[i], &any) == SBLOOM_OK);
        CHECK(sbloom_plan_for(n, rates[i], &bits) == SBLOOM_OK);
        CHECK(test_layout_fingerprint(any.layout));
        CHECK(!test_layout_fingerprint(bits.layout));
        CHECK(any.bytes < bits.bytes);
        CHECK(any.fpp <= rates[i] && any.k == 0);
        CHECK(any.bits_per_key <= 1.4 * log2(1.0 / rates[i]));
        CHECK_REL(any.fpp, sbloom_blocked_fpp(any.layout, any.bytes, n), 1e-12);
        /* the smallest of every bit and fingerprint layout's own plan (the layouts it passes
         * over without a search among them) */
        uint64_t least = UINT64_MAX;
        for (int l = 1; l <= SBLOOM_LAYOUT_COUNT; l++) {
            sbloom_plan one = sbloom_plan_init();
            if ((test_layout_fingerprint((sbloom_layout)l) || sbloom_layout_k((sbloom_layout)l)) &&
                l != SBLOOM_LAYOUT_COUNTING512 &&
                sbloom_plan_for_layout(n, rates[i], (sbloom_layout)l, &one) == SBLOOM_OK &&
                one.bytes < least)
                least = one.bytes;
        }
        CHECK(any.bytes == least);
        printf("rate %-6g %-10s %5.2f bits a key (limit %5.2f, %-12s %5.2f)\n", rates[i],
               sbloom_layout_name(any.layout), any.bits_per_key, log2(1.0 / rates[i]),
               sbloom_layout_name(bits.layout), bits.bits_per_key);
    }
    /* at 1e-2 the bit layouts are smaller, and sbloom_plan_any says so */
    sbloom_plan any = sbloom_plan_init();
    CHECK(sbloom_plan_any(n, 1e-2, &any) == SBLOOM_OK && !test_layout_fingerprint(any.layout));
    CHECK(sbloom_plan_any(n, 1e-6, NULL) == SBLOOM_E_NULL);
    CHECK(sbloom_plan_any(0, 1e-6, &any) == SBLOOM_E_INVALID);

    sbloom_opts o = sbloom_opts_init();
    o.expected = n;
    o.fpp = 1e-6;
    sbloom_t *f = NULL;
    CHECK(sbloom_create_opts(&f, &o) == SBLOOM_OK &&
          !test_layout_fingerprint(sbloom_get_layout(f)));
    sbloom_free(f);
    o.flags = SBLOOM_OPTS_ANY_FAMILY;
    CHECK(sbloom_create_opts(&f, &o) == SBLOOM_OK &&
          sbloom_get_layout(f) == SBLOOM_LAYOUT_FP512_R19);
    sbloom_free(f);
}

/* A filter's keys added, then every key whose add answered new taken out again: each remove
 * answers 1, the count goes back to 0, no key answers present (no entry is left to match), and a
 * second remove is refused (SBLOOM_E_ABSENT). Done at the full plan, so that lines overflowed
 * and keys live in the spare too. */
static void removes_exactly(sbloom_layout layout, double rate)
{
    enum { N = 50000 };
    static uint64_t keys[N];
    static uint8_t fresh[N], removed[N];
    sbloom_t *f = NULL;
    CHECK(sbloom_create_for_layout(&f, N, rate, layout) == SBLOOM_OK);
    if (!f)
        return;
    uint64_t seed = 77 + (uint64_t)layout;
    for (size_t i = 0; i < N; i++)
        keys[i] = test_rand(&seed);
    int64_t added = sbloom_add_if_new_hashes(f, keys, N, fresh);
    CHECK(added > N - 100 && (uint64_t)added == sbloom_items(f));
    CHECK(sbloom_contains_hashes(f, keys, N, NULL) == N);
    size_t removed_count = 0;
    for (size_t i = 0; i < N; i++) {
        if (!fresh[i])
            continue; /* it shares an earlier key's entry: that key's remove takes it */
        int rc = sbloom_remove_hash(f, keys[i]);
        removed_count += rc == 1;
        if (rc != 1) {
            fprintf(stderr, "  key %zu: remove answered %d\n", i, rc);
            break;
        }
    }
    CHECK(removed_count == (size_t)added);
    CHECK(sbloom_items(f) == 0);
    CHECK(sbloom_contains_hashes(f, keys, N, NULL) == 0);
    CHECK(sbloom_remove_hash(f, keys[0]) == SBLOOM_E_ABSENT);
    /* batches remove as single calls do, with their answers */
    CHECK(sbloom_add_if_new_hashes(f, keys, N, fresh) == added);
    CHECK(sbloom_remove_hashes(f, keys, N, removed) == added);
    CHECK(memcmp(fresh, removed, N) == 0);
    CHECK(sbloom_items(f) == 0);
    sbloom_free(f);
}

/* Interleaved adds and removes against a set kept beside the filter (the keys whose add answered
 * new, less those removed): every key of the set answers present after every round, and a
 * removed key answers absent unless another held key has its fingerprint (rare: at most a
 * handful). */
static void removes_interleaved(void)
{
    enum { KEYS = 20000, ROUNDS = 40 };
    static uint64_t keys[KEYS];
    static uint8_t held[KEYS];
    sbloom_t *f = NULL;
    CHECK(sbloom_create_for_layout(&f, KEYS, 1e-4, SBLOOM_LAYOUT_FP512_R13) == SBLOOM_OK);
    if (!f)
        return;
    uint64_t seed = 4242;
    for (size_t i = 0; i < KEYS; i++)
        keys[i] = test_rand(&seed);
    uint64_t missing = 0, lingering = 0;
    for (int round = 0; round < ROUNDS; round++) {
        for (size_t j = 0; j < KEYS / 4; j++) {
            size_t i = (size_t)(test_rand(&seed) % KEYS);
            if (held[i]) {
                CHECK(sbloom_remove_hash(f, keys[i]) == 1);
                held[i] = 0;
            } else {
                held[i] = sbloom_add_hash(f, keys[i]) == 1;
            }
        }
        for (size_t i = 0; i < KEYS; i++) {
            int in = sbloom_contains_hash(f, keys[i]);
            missing += held[i] && in != 1;
            lingering += !held[i] && in == 1;
        }
    }
    CHECK(missing == 0);
    CHECK(lingering < 20);
    uint64_t count = 0;
    for (size_t i = 0; i < KEYS; i++)
        count += held[i];
    CHECK(sbloom_items(f) == count);
    sbloom_free(f);
}

/* Past the plan: a filter planned for N keys given 3N. Adds go on until a key finds its line and
 * both spare lines full; then a batch answers SBLOOM_E_FULL, its other keys added (is_new says
 * which), a single add answers SBLOOM_E_FULL and leaves the key out, and every key that was added
 * as new still answers present. Lookups and removes keep working. */
static void past_the_plan(void)
{
    enum { N = 20000 };
    static uint64_t keys[3 * N];
    static uint8_t fresh[3 * N];
    sbloom_t *f = NULL;
    CHECK(sbloom_create_for_layout(&f, N, 1e-6, SBLOOM_LAYOUT_FP512_R19) == SBLOOM_OK);
    if (!f)
        return;
    uint64_t seed = 99;
    for (size_t i = 0; i < 3 * N; i++)
        keys[i] = test_rand(&seed);
    CHECK(sbloom_add_if_new_hashes(f, keys, N, fresh) == N); /* the plan: no refusal */
    int64_t rc = sbloom_add_if_new_hashes(f, keys + N, 2 * N, fresh + N);
    CHECK(rc == SBLOOM_E_FULL);
    uint64_t added = 0, present = 0;
    for (size_t i = 0; i < 3 * N; i++) {
        added += fresh[i];
        present += fresh[i] && sbloom_contains_hash(f, keys[i]) == 1;
    }
    CHECK(present == added && added == sbloom_items(f));
    CHECK(added > N && added < 3 * N);
    printf("past the plan: %llu of %d keys held, %s\n", (unsigned long long)added, 3 * N,
           sbloom_strerror(SBLOOM_E_FULL));
    /* a refused key, one at a time: answers SBLOOM_E_FULL and is not held */
    size_t refused = 0;
    while (refused < 3 * N && fresh[refused])
        refused++;
    CHECK(refused < 3 * N);
    int single = sbloom_add_hash(f, keys[refused]);
    CHECK(single == SBLOOM_E_FULL || single == 0); /* 0: a false positive found it */
    CHECK(sbloom_items(f) == added);
    /* room made by removes takes keys again */
    for (size_t i = 0; i < N; i++)
        if (fresh[i])
            CHECK(sbloom_remove_hash(f, keys[i]) == 1);
    CHECK(sbloom_add_hash(f, keys[refused]) == 1);
    sbloom_free(f);
}

/* sbloom_second_line_shares: none before any key; at the plan, under the design's 5% of
 * operations on a second line (docs/SIZING.md); more past it; the spare keys a whole count of the
 * items; none for a Bloom layout. */
static void second_line(void)
{
    enum { N = 50000 };
    static uint64_t keys[3 * N];
    sbloom_t *f = NULL, *bloom = NULL;
    CHECK(sbloom_create_for_layout(&f, N, 1e-6, SBLOOM_LAYOUT_FP512_R19) == SBLOOM_OK);
    CHECK(sbloom_create_for_layout(&bloom, N, 1e-6, SBLOOM_LAYOUT_BLOCK512_K16) == SBLOOM_OK);
    if (!f || !bloom)
        return;
    double absent = -1, spare = -1;
    CHECK(sbloom_second_line_shares(f, &absent, &spare) == SBLOOM_OK && absent == 0 && spare == 0);
    uint64_t seed = 7;
    for (size_t i = 0; i < 3 * N; i++)
        keys[i] = test_rand(&seed);
    CHECK(sbloom_add_hashes(f, keys, N) > 0 && sbloom_add_hashes(bloom, keys, N) > 0);
    CHECK(sbloom_second_line_shares(f, &absent, &spare) == SBLOOM_OK);
    printf("second line at the plan: %.4f of absent lookups, %.4f of the keys\n", absent, spare);
    CHECK(absent > 0 && absent < 0.05 && spare > 0 && spare < 0.05);
    double held = spare * (double)sbloom_items(f);
    CHECK(fabs(held - round(held)) < 1e-6);
    double absent_full = 0, spare_full = 0;
    CHECK(sbloom_add_hashes(f, keys + N, 2 * N) == SBLOOM_E_FULL);
    CHECK(sbloom_second_line_shares(f, &absent_full, &spare_full) == SBLOOM_OK);
    printf("second line when full: %.4f of absent lookups, %.4f of the keys\n", absent_full,
           spare_full);
    CHECK(absent_full > absent && spare_full > spare);
    CHECK(sbloom_second_line_shares(bloom, &absent, &spare) == SBLOOM_OK && absent == 0 &&
          spare == 0);
    CHECK(sbloom_second_line_shares(NULL, &absent, &spare) == SBLOOM_E_NULL);
    CHECK(sbloom_second_line_shares(f, NULL, &spare) == SBLOOM_E_NULL);
    sbloom_free(f);
    sbloom_free(bloom);
}

/* The operations a fingerprint filter has no exact meaning for refuse, changing nothing:
 * union, intersection, fold, the bit exports, the counting layout's saturated counters, and the
 * concurrent mode across processes (test_concurrent.c: in one process the mode works). */
static void refusals(void)
{
    sbloom_t *a = NULL, *b = NULL;
    CHECK(sbloom_create_for_layout(&a, 1000, 1e-6, SBLOOM_LAYOUT_FP512_R19) == SBLOOM_OK);
    CHECK(sbloom_create_for_layout(&b, 1000, 1e-6, SBLOOM_LAYOUT_FP512_R19) == SBLOOM_OK);
    CHECK(sbloom_add(a, "k", 1) == 1);
    CHECK(sbloom_union(a, b) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_intersect(a, b) == SBLOOM_E_LAYOUT);
    sbloom_t *folded = NULL;
    CHECK(sbloom_fold(&folded, a, 2) == SBLOOM_E_LAYOUT && folded == NULL);
    CHECK(sbloom_saturated(a) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_set_concurrent(a, 1) == SBLOOM_OK && sbloom_is_concurrent(a) == 1);
    CHECK(sbloom_set_concurrent(a, 0) == SBLOOM_OK && sbloom_is_concurrent(a) == 0);
    uint8_t bits[64];
    CHECK(sbloom_export_bits(a, bits, sizeof bits) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_contains(a, "k", 1) == 1 && sbloom_items(a) == 1);
    sbloom_free(a);
    sbloom_free(b);
}

/* A filter saved, loaded and mapped: the same bytes, answers and count; sbloom_clone too. */
static void files(void)
{
    char dir[] = "/tmp/simdbloom-fp-XXXXXX", path[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/f.sbloom", dir);
    for (int layout = SBLOOM_LAYOUT_FP512_R10; layout <= SBLOOM_LAYOUT_FP512_R29; layout++) {
        sbloom_t *f = NULL, *g = NULL, *m = NULL, *c = NULL;
        CHECK(sbloom_create_for_layout(&f, 3000, 1e-3, (sbloom_layout)layout) == SBLOOM_OK);
        if (!f)
            continue;
        for (uint64_t v = 0; v < 3000; v++)
            sbloom_add_u64(f, v);
        CHECK(sbloom_save(f, path) == SBLOOM_OK);
        CHECK(sbloom_load(&g, path) == SBLOOM_OK);
        CHECK(sbloom_map(&m, path, 0) == SBLOOM_OK);
        CHECK(sbloom_clone(&c, f) == SBLOOM_OK);
        sbloom_t *copies[] = {g, m, c};
        for (int k = 0; k < 3; k++) {
            sbloom_t *x = copies[k];
            CHECK(x && sbloom_get_layout(x) == (sbloom_layout)layout);
            CHECK(x && memcmp(sbloom_data(x), sbloom_data(f), (size_t)sbloom_bytes(f)) == 0);
            CHECK(x && sbloom_items(x) == sbloom_items(f));
            uint64_t found = 0;
            for (uint64_t v = 0; x && v < 3000; v++)
                found += sbloom_contains_u64(x, v) == 1;
            CHECK(found == 3000);
        }
        CHECK(m && sbloom_add_u64(m, 1) == SBLOOM_E_READONLY);
        sbloom_free(f);
        sbloom_free(g);
        sbloom_free(m);
        sbloom_free(c);
    }
    unlink(path);
    rmdir(dir);
}

/* The golden files: each geometry planned for the 200 keys of tests/data/v1-keys.txt at its rate,
 * the keys added, the first 50 removed (made by this commit's code, the same on every
 * instruction set). The same keys today must give the same bytes, so a changed decomposition of
 * the hash, line form or spare rule cannot pass unseen, and the files load and answer. */
static void golden(const char *dir)
{
    char path[512];
    static char lines[TEST_GOLDEN_KEYS][64];
    int nlines = test_golden_keys(dir, lines);
    CHECK(nlines == TEST_GOLDEN_KEYS);
    if (nlines != TEST_GOLDEN_KEYS)
        return;
    int write = getenv("SIMDBLOOM_WRITE_GOLDEN") != NULL; /* to make them again, on purpose */
    for (int layout = SBLOOM_LAYOUT_FP512_R10; layout <= SBLOOM_LAYOUT_FP512_R29; layout++) {
        double rate = rates[layout - SBLOOM_LAYOUT_FP512_R10];
        sbloom_t *made = NULL, *loaded = NULL;
        CHECK(sbloom_create_for_layout(&made, 200, rate, (sbloom_layout)layout) == SBLOOM_OK);
        if (!made)
            continue;
        for (int i = 0; i < nlines; i++)
            sbloom_add(made, lines[i], strlen(lines[i]));
        for (int i = 0; i < 50; i++)
            sbloom_remove(made, lines[i], strlen(lines[i]));
        snprintf(path, sizeof path, "%s/v1-%s.sbloom", dir,
                 sbloom_layout_name((sbloom_layout)layout));
        if (write)
            CHECK(sbloom_save(made, path) == SBLOOM_OK);
        CHECK(sbloom_load(&loaded, path) == SBLOOM_OK);
        if (loaded) {
            CHECK(sbloom_bytes(loaded) == sbloom_bytes(made));
            CHECK(memcmp(sbloom_data(loaded), sbloom_data(made), (size_t)sbloom_bytes(made)) == 0);
            CHECK(sbloom_items(loaded) == sbloom_items(made) && sbloom_items(made) >= 149);
            int present = 0;
            for (int i = 50; i < nlines; i++)
                present += sbloom_contains(loaded, lines[i], strlen(lines[i])) == 1;
            CHECK(present == 150);
        }
        sbloom_free(made);
        sbloom_free(loaded);
    }
}

int main(int argc, char **argv)
{
    plans();
    for (int layout = SBLOOM_LAYOUT_FP512_R10; layout <= SBLOOM_LAYOUT_FP512_R29; layout++)
        removes_exactly((sbloom_layout)layout, rates[layout - SBLOOM_LAYOUT_FP512_R10]);
    removes_interleaved();
    past_the_plan();
    second_line();
    refusals();
    files();
    if (argc > 1)
        golden(argv[1]);
    return check_report();
}
