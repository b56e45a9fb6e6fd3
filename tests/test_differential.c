/*
 * Every instruction set against the scalar reference. For each layout (the counting one too) and
 * each ISA this machine runs (neon through SIMDe on x86), a random sequence of operations (single
 * and batch adds, contains and test-and-adds, on hashes and on byte strings, batch lengths 0, 1,
 * odd and long, keys new and repeated) is applied to two filters, one per ISA. Every answer must be
 * equal and the two filters byte-identical, checked after every phase and at random points. Filter
 * sizes change between phases, the smallest (one block) included. The windowed filter's kernels,
 * both forms, are walked the same way with its clock moving (run_window_pair). Long batches over
 * small filters, a loop of their own, are compared on every ISA, scalar included, with the same
 * keys given one at a time (run_long_batches).
 *
 * SIMDBLOOM_DIFF_OPS sets the operations per layout and ISA (default 1,000,000).
 */
#include <stdlib.h>
#include <string.h>

#include "simdbloom.h"
#include "check.h"

#define MAX_BATCH 300
#define PHASES 20

typedef struct world {
    uint64_t rng;
    uint64_t seen[4096]; /* earlier keys, to be repeated */
    size_t nseen;
    uint64_t hashes[MAX_BATCH];
    char text[MAX_BATCH][40];
    const void *keys[MAX_BATCH];
    size_t lens[MAX_BATCH];
} world;

static size_t batch_length(world *w)
{
    uint64_t r = test_rand(&w->rng) % 100;
    if (r < 40)
        return 1;
    if (r < 45)
        return 0;
    if (r < 85)
        return (size_t)(test_rand(&w->rng) % 33) | 1; /* odd, short */
    return (size_t)(test_rand(&w->rng) % MAX_BATCH);
}

/* Half new random keys, half repeats of earlier ones (so hits and in-batch repeats happen). */
static uint64_t next_hash(world *w)
{
    if (w->nseen > 0 && test_rand(&w->rng) % 2)
        return w->seen[test_rand(&w->rng) % w->nseen];
    uint64_t h = test_rand(&w->rng);
    w->seen[w->nseen < 4096 ? w->nseen++ : test_rand(&w->rng) % 4096] = h;
    return h;
}

static void fill_keys(world *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t h = next_hash(w);
        size_t len = (size_t)(h % 40); /* 0..39 bytes, any byte values, NUL included */
        for (size_t b = 0; b < len; b++)
            w->text[i][b] = (char)(h >> (b % 8 * 8)) ^ (char)b;
        w->keys[i] = w->text[i];
        w->lens[i] = len;
    }
}

/* Phase sizes: the first four tiny (one block included, where counters saturate), two of 8 MiB
 * (past the size where the batch loops start prefetching ahead: their other code path), then
 * random. */
static uint64_t phase_blocks(world *w, int phase, uint32_t block_bytes)
{
    static const uint64_t small[] = {1, 2, 3, 5};
    if (phase < 4)
        return small[phase];
    if (phase < 6)
        return (UINT64_C(8) << 20) / block_bytes + (uint64_t)phase;
    return 1 + test_rand(&w->rng) % 4096;
}

/* The next batch's inputs: n hashes, or n byte strings; both output arrays reset to a value no
 * kernel writes. */
static void next_batch(world *w, int strings, size_t n, uint8_t *ref_out, uint8_t *isa_out)
{
    memset(ref_out, 2, MAX_BATCH);
    memset(isa_out, 2, MAX_BATCH);
    if (strings) {
        fill_keys(w, n);
    } else {
        for (size_t i = 0; i < n; i++)
            w->hashes[i] = next_hash(w);
    }
}

/* 1 (and a message naming the operation) when the two sides disagree: counts, per-key answers,
 * or, at random points, the bytes of the two filters. */
static int differs(world *w, const char *what, const char *isa, int64_t a, int64_t b,
                   const uint8_t *ref_out, const uint8_t *isa_out, const void *ref_bytes,
                   const void *isa_bytes, uint64_t bytes, uint64_t done, int kind, size_t n)
{
    if (a == b && memcmp(ref_out, isa_out, MAX_BATCH) == 0 &&
        (test_rand(&w->rng) % 512 != 0 || memcmp(ref_bytes, isa_bytes, bytes) == 0))
        return 0;
    fprintf(stderr, "%s %s: op %llu (kind %d, %zu keys, %llu-byte filter) differs\n", what, isa,
            (unsigned long long)done, kind, n, (unsigned long long)bytes);
    return 1;
}

static int run_pair(sbloom_layout layout, const char *isa, uint64_t ops, uint64_t seed)
{
    world *w = calloc(1, sizeof *w);
    w->rng = seed;
    uint8_t ref_out[MAX_BATCH], isa_out[MAX_BATCH];
    uint64_t mismatches = 0, done = 0;
    for (int phase = 0; phase < PHASES && mismatches == 0; phase++) {
        uint64_t nblocks = phase_blocks(w, phase, sbloom_layout_block_bytes(layout));
        uint64_t bytes = nblocks * sbloom_layout_block_bytes(layout);
        sbloom_t *ref, *fast;
        sbloom_set_isa("scalar");
        CHECK(sbloom_create_bytes(&ref, bytes, layout) == SBLOOM_OK);
        sbloom_set_isa(isa);
        CHECK(sbloom_create_bytes(&fast, bytes, layout) == SBLOOM_OK);
        CHECK(strcmp(sbloom_filter_isa(fast), isa) == 0);
        w->nseen = 0;
        uint64_t phase_ops = ops / PHASES;
        for (uint64_t op = 0; op < phase_ops; op++, done++) {
            size_t n = batch_length(w);
            int kind = (int)(test_rand(&w->rng) % 6);
            int64_t a = 0, b = 0;
            next_batch(w, kind >= 3, n, ref_out, isa_out);
            switch (kind) {
            case 0:
                a = sbloom_add_hashes(ref, w->hashes, n);
                b = sbloom_add_hashes(fast, w->hashes, n);
                break;
            case 1:
                a = sbloom_contains_hashes(ref, w->hashes, n, ref_out);
                b = sbloom_contains_hashes(fast, w->hashes, n, isa_out);
                break;
            case 2:
                if (n == 1) { /* the single-key entry points */
                    a = sbloom_add_hash(ref, w->hashes[0]) * 2 + sbloom_contains_hash(ref, 1);
                    b = sbloom_add_hash(fast, w->hashes[0]) * 2 + sbloom_contains_hash(fast, 1);
                } else {
                    a = sbloom_add_if_new_hashes(ref, w->hashes, n, ref_out);
                    b = sbloom_add_if_new_hashes(fast, w->hashes, n, isa_out);
                }
                break;
            case 3:
                a = sbloom_add_keys(ref, w->keys, w->lens, n);
                b = sbloom_add_keys(fast, w->keys, w->lens, n);
                break;
            case 4:
                a = sbloom_contains_keys(ref, w->keys, w->lens, n, ref_out);
                b = sbloom_contains_keys(fast, w->keys, w->lens, n, isa_out);
                break;
            default:
                if (n == 1) {
                    a = sbloom_add(ref, w->keys[0], w->lens[0]) * 2 +
                        sbloom_contains(ref, w->keys[0], w->lens[0]);
                    b = sbloom_add(fast, w->keys[0], w->lens[0]) * 2 +
                        sbloom_contains(fast, w->keys[0], w->lens[0]);
                } else {
                    a = sbloom_add_if_new_keys(ref, w->keys, w->lens, n, ref_out);
                    b = sbloom_add_if_new_keys(fast, w->keys, w->lens, n, isa_out);
                }
                break;
            }
            if (differs(w, sbloom_layout_name(layout), isa, a, b, ref_out, isa_out,
                        sbloom_data(ref), sbloom_data(fast), bytes, done, kind, n)) {
                mismatches++;
                break;
            }
        }
        CHECK(memcmp(sbloom_data(ref), sbloom_data(fast), bytes) == 0);
        CHECK(sbloom_items(ref) == sbloom_items(fast));
        sbloom_free(ref);
        sbloom_free(fast);
    }
    sbloom_set_isa(NULL);
    free(w);
    printf("%-12s %-7s %llu operations, %s\n", sbloom_layout_name(layout), isa,
           (unsigned long long)done, mismatches ? "MISMATCH" : "identical to scalar");
    return mismatches == 0;
}

/*
 * Long batches over filters small enough that the kernels request no lines ahead (under 512 KiB):
 * those loops request the hashes ahead instead once a batch has 16,384 keys or more
 * (simd/kernel_loops.h, SBK_HASH_STREAM_MIN), a path the random walk's batches (at most
 * MAX_BATCH keys) never reach. Lengths at the threshold, just past it, past it by less than the
 * request's distance and by more; keys half new, half repeated; add, test-and-add (the counting
 * layout: remove) and contains with and without answers, alone and in the concurrent mode (which
 * hands the kernels shorter rounds), against a scalar filter given the same keys one at a time:
 * counts, answers and the filters' bytes.
 */
#define LONG_BATCH 20011
/* One long batch (kind 0 add, 1 test-and-add or, counting, remove, 2 contains, 3 contains without
 * answers) through the batch entry points. */
static int64_t long_batch(sbloom_t *f, int kind, const uint64_t *hashes, size_t n, uint8_t *out)
{
    int counting = sbloom_get_layout(f) == SBLOOM_LAYOUT_COUNTING512 ||
                   test_layout_fingerprint(sbloom_get_layout(f)); /* kind 1 removes */
    switch (kind) {
    case 0: return sbloom_add_hashes(f, hashes, n);
    case 1:
        return counting ? sbloom_remove_hashes(f, hashes, n, out)
                        : sbloom_add_if_new_hashes(f, hashes, n, out);
    case 2: return sbloom_contains_hashes(f, hashes, n, out);
    default: return sbloom_contains_hashes(f, hashes, n, NULL);
    }
}

/* The same key by key through the single-key entry points, which no batch loop runs: the
 * reference for the loops, which the scalar kernels share with the others (kernel_loops.h). */
static int64_t long_batch_by_key(sbloom_t *f, int kind, const uint64_t *hashes, size_t n,
                                 uint8_t *out)
{
    int counting = sbloom_get_layout(f) == SBLOOM_LAYOUT_COUNTING512 ||
                   test_layout_fingerprint(sbloom_get_layout(f));
    int64_t count = 0, full = 0;
    for (size_t i = 0; i < n; i++) {
        int answer;
        if (kind == 0 || (kind == 1 && !counting))
            answer = sbloom_add_hash(f, hashes[i]);
        else if (kind == 1)
            answer = sbloom_remove_hash(f, hashes[i]) == 1;
        else
            answer = sbloom_contains_hash(f, hashes[i]);
        if (answer == SBLOOM_E_FULL) { /* a full fingerprint filter: the batch goes on, as here */
            full = answer;
            answer = 0;
        }
        if (answer < 0)
            return answer;
        if (kind == 1 || kind == 2)
            out[i] = (uint8_t)answer;
        count += answer;
    }
    return full ? full : count;
}

static int run_long_batches(sbloom_layout layout, const char *isa, uint64_t seed)
{
    static const size_t lengths[] = {16384, 16385, 16447, 16448, 16449, LONG_BATCH};
    static const uint64_t sizes[] = {64, 4096, 65536, 480 * 1024}; /* bytes */
    world *w = calloc(1, sizeof *w);
    uint64_t *hashes = malloc(LONG_BATCH * sizeof *hashes);
    uint8_t *ref_out = malloc(LONG_BATCH), *isa_out = malloc(LONG_BATCH);
    CHECK(w && hashes && ref_out && isa_out);
    w->rng = seed;
    int mismatches = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        uint32_t block = sbloom_layout_block_bytes(layout);
        uint64_t bytes = (sizes[s] + block - 1) / block * block;
        /* the counting and fingerprint layouts have one writer */
        int shared =
            s % 2 == 1 && layout != SBLOOM_LAYOUT_COUNTING512 && !test_layout_fingerprint(layout);
        sbloom_t *ref, *fast;
        sbloom_set_isa("scalar");
        CHECK(sbloom_create_bytes(&ref, bytes, layout) == SBLOOM_OK);
        sbloom_set_isa(isa);
        CHECK(sbloom_create_bytes(&fast, bytes, layout) == SBLOOM_OK);
        if (shared) {
            CHECK(sbloom_set_concurrent(ref, 1) == SBLOOM_OK);
            CHECK(sbloom_set_concurrent(fast, 1) == SBLOOM_OK);
        }
        w->nseen = 0;
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            size_t n = lengths[l];
            for (int kind = 0; kind < 4; kind++) {
                for (size_t i = 0; i < n; i++)
                    hashes[i] = next_hash(w);
                memset(ref_out, 2, n);
                memset(isa_out, 2, n);
                int64_t a = long_batch_by_key(ref, kind, hashes, n, ref_out);
                int64_t b = long_batch(fast, kind, hashes, n, isa_out);
                if ((a < 0 && a != SBLOOM_E_FULL) || a != b || memcmp(ref_out, isa_out, n) != 0 ||
                    memcmp(sbloom_data(ref), sbloom_data(fast), bytes) != 0) {
                    fprintf(stderr,
                            "%s %s: long batch of %zu keys (kind %d, %llu-byte filter%s) differs\n",
                            sbloom_layout_name(layout), isa, n, kind, (unsigned long long)bytes,
                            shared ? ", concurrent" : "");
                    mismatches++;
                }
            }
        }
        sbloom_free(ref);
        sbloom_free(fast);
    }
    sbloom_set_isa(NULL);
    free(w);
    free(hashes);
    free(ref_out);
    free(isa_out);
    printf("%-12s %-7s long batches over cached filters, %s\n", sbloom_layout_name(layout), isa,
           mismatches ? "MISMATCH" : "identical to scalar");
    return mismatches == 0;
}

/*
 * The layouts that remove keys (counting512, the fingerprint layouts): the same random walk of
 * adds, removes (of held keys, of repeats and of keys never added) and contains, on hashes and
 * strings, single and batch, over filters small enough that the counting layout's counters
 * saturate in the small phases and a fingerprint filter's lines and spare fill up (its adds are
 * then refused, SBLOOM_E_FULL, on both sides alike).
 */
static int run_removing_pair(sbloom_layout layout, const char *isa, uint64_t ops, uint64_t seed)
{
    world *w = calloc(1, sizeof *w);
    w->rng = seed;
    uint8_t ref_out[MAX_BATCH], isa_out[MAX_BATCH];
    uint64_t mismatches = 0, done = 0, saturated = 0, refused = 0;
    const char *name = sbloom_layout_name(layout);
    for (int phase = 0; phase < PHASES && mismatches == 0; phase++) {
        uint64_t nblocks = phase_blocks(w, phase, 64);
        uint64_t bytes = nblocks * 64;
        sbloom_t *ref, *fast;
        sbloom_set_isa("scalar");
        CHECK(sbloom_create_bytes(&ref, bytes, layout) == SBLOOM_OK);
        sbloom_set_isa(isa);
        CHECK(sbloom_create_bytes(&fast, bytes, layout) == SBLOOM_OK);
        bytes = sbloom_bytes(ref); /* a fingerprint filter has two lines at least */
        CHECK(strcmp(sbloom_filter_isa(fast), isa) == 0);
        w->nseen = 0;
        uint64_t phase_ops = ops / PHASES;
        for (uint64_t op = 0; op < phase_ops; op++, done++) {
            size_t n = batch_length(w);
            int kind = (int)(test_rand(&w->rng) % 7);
            int64_t a = 0, b = 0;
            next_batch(w, kind >= 3 && kind <= 5, n, ref_out, isa_out);
            switch (kind) {
            case 0:
                a = sbloom_add_if_new_hashes(ref, w->hashes, n, ref_out);
                b = sbloom_add_if_new_hashes(fast, w->hashes, n, isa_out);
                break;
            case 1:
                a = sbloom_remove_hashes(ref, w->hashes, n, ref_out);
                b = sbloom_remove_hashes(fast, w->hashes, n, isa_out);
                break;
            case 2:
                a = sbloom_contains_hashes(ref, w->hashes, n, ref_out);
                b = sbloom_contains_hashes(fast, w->hashes, n, isa_out);
                break;
            case 3:
                a = sbloom_add_if_new_keys(ref, w->keys, w->lens, n, ref_out);
                b = sbloom_add_if_new_keys(fast, w->keys, w->lens, n, isa_out);
                break;
            case 4:
                a = sbloom_remove_keys(ref, w->keys, w->lens, n, ref_out);
                b = sbloom_remove_keys(fast, w->keys, w->lens, n, isa_out);
                break;
            case 5:
                a = sbloom_contains_keys(ref, w->keys, w->lens, n, ref_out);
                b = sbloom_contains_keys(fast, w->keys, w->lens, n, isa_out);
                break;
            default:
                if (n > 0) { /* the single-key entry points */
                    a = sbloom_add_hash(ref, w->hashes[0]) * 4 +
                        sbloom_remove_hash(ref, w->hashes[n - 1]) * 2 +
                        sbloom_contains_hash(ref, w->hashes[0]);
                    b = sbloom_add_hash(fast, w->hashes[0]) * 4 +
                        sbloom_remove_hash(fast, w->hashes[n - 1]) * 2 +
                        sbloom_contains_hash(fast, w->hashes[0]);
                }
                break;
            }
            refused += a == SBLOOM_E_FULL || a == SBLOOM_E_FULL * 4 + SBLOOM_E_FULL;
            if (differs(w, name, isa, a, b, ref_out, isa_out, sbloom_data(ref), sbloom_data(fast),
                        bytes, done, kind, n)) {
                mismatches++;
                break;
            }
        }
        CHECK(memcmp(sbloom_data(ref), sbloom_data(fast), bytes) == 0);
        CHECK(sbloom_items(ref) == sbloom_items(fast));
        if (layout == SBLOOM_LAYOUT_COUNTING512)
            saturated += (uint64_t)sbloom_saturated(ref);
        sbloom_free(ref);
        sbloom_free(fast);
    }
    sbloom_set_isa(NULL);
    free(w);
    /* the walk reached the saturation paths, or the refusals of a full fingerprint filter */
    CHECK(layout == SBLOOM_LAYOUT_COUNTING512 ? saturated > 0 : refused > 0);
    printf("%-12s %-7s %llu operations, %s (%llu saturated counters at phase ends, %llu "
           "refused adds)\n",
           name, isa, (unsigned long long)done, mismatches ? "MISMATCH" : "identical to scalar",
           (unsigned long long)saturated, (unsigned long long)refused);
    return mismatches == 0;
}

/* The image of a filter as sbloom_serialize writes it (malloc'd, *len bytes). */
static uint8_t *image(const sbloom_t *f, size_t *len)
{
    *len = sbloom_serialized_size(f);
    uint8_t *buf = malloc(*len);
    if (buf && sbloom_serialize(f, buf, *len) != SBLOOM_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

/*
 * The windowed filter's kernels (window_insert, window_contains), both forms: a random walk of
 * test-and-adds (batch and single key), lookups and clock steps (none, one period, several, past
 * the window) on two windowed filters, one per ISA; every answer equal, and the two files
 * byte-identical at each phase's end.
 */
static int window_for(sbloom_t **f, uint64_t n, double p, uint32_t periods, uint64_t now, int ages)
{
    if (!ages)
        return sbloom_create_windowed(f, n, p, periods, 10, now);
    sbloom_opts o =
        sbloom_opts_init(); /* the ages form: entries with their period (fingerprints) */
    o.expected = n;
    o.fpp = p;
    o.periods = periods;
    o.period = 10;
    o.now = now;
    o.flags = SBLOOM_OPTS_ANY_FAMILY;
    int rc = sbloom_create_opts(f, &o);
    CHECK(rc != SBLOOM_OK || sbloom_stages(*f) == 0); /* (the ages form has no stages) */
    return rc;
}

static int run_window_pair(const char *isa, uint32_t periods, double p, uint64_t ops, uint64_t seed,
                           int ages)
{
    world *w = calloc(1, sizeof *w);
    w->rng = seed;
    uint8_t ref_out[MAX_BATCH], isa_out[MAX_BATCH];
    uint64_t mismatches = 0, done = 0;
    for (int phase = 0; phase < PHASES / 4 && mismatches == 0; phase++) {
        uint64_t n = 200 + test_rand(&w->rng) % 20000, now = 1000 + test_rand(&w->rng) % 1000;
        sbloom_t *ref, *fast;
        sbloom_set_isa("scalar");
        CHECK(window_for(&ref, n, p, periods, now, ages) == SBLOOM_OK);
        sbloom_set_isa(isa);
        CHECK(window_for(&fast, n, p, periods, now, ages) == SBLOOM_OK);
        w->nseen = 0;
        for (uint64_t op = 0; op < ops / (PHASES / 4); op++, done++) {
            size_t len = batch_length(w);
            int kind = (int)(test_rand(&w->rng) % 8);
            int64_t a = 0, b = 0;
            next_batch(w, 0, len, ref_out, isa_out);
            if (kind < 3) {
                a = sbloom_add_if_new_hashes(ref, w->hashes, len, ref_out);
                b = sbloom_add_if_new_hashes(fast, w->hashes, len, isa_out);
            } else if (kind < 6) {
                a = sbloom_contains_hashes(ref, w->hashes, len, ref_out);
                b = sbloom_contains_hashes(fast, w->hashes, len, isa_out);
            } else if (kind == 6 && len > 0) {
                a = sbloom_add_hash(ref, w->hashes[0]) * 2 + sbloom_contains_hash(ref, 1);
                b = sbloom_add_hash(fast, w->hashes[0]) * 2 + sbloom_contains_hash(fast, 1);
            } else if (kind == 7) {
                uint64_t r = test_rand(&w->rng) % 16;
                now += r < 12 ? r : r == 15 ? 10 * (periods + 2) : 10 * r;
                a = sbloom_advance(ref, now);
                b = sbloom_advance(fast, now);
            }
            if (a != b || memcmp(ref_out, isa_out, len) != 0) {
                fprintf(stderr, "window %u periods at %g, %s: op %llu (kind %d) differs\n", periods,
                        p, isa, (unsigned long long)done, kind);
                mismatches++;
                break;
            }
        }
        size_t ref_len = 0, fast_len = 0;
        uint8_t *ref_image = image(ref, &ref_len), *fast_image = image(fast, &fast_len);
        CHECK(ref_image && fast_image && ref_len == fast_len &&
              memcmp(ref_image, fast_image, ref_len) == 0);
        CHECK(sbloom_items(ref) == sbloom_items(fast));
        free(ref_image);
        free(fast_image);
        sbloom_free(ref);
        sbloom_free(fast);
    }
    sbloom_set_isa(NULL);
    free(w);
    printf("%-12s %-7s %llu operations, %s\n",
           ages                         ? "window-ages"
           : periods == 3 && p >= 0.001 ? "window-slots"
                                        : "window-lines",
           isa, (unsigned long long)done, mismatches ? "MISMATCH" : "identical to scalar");
    return mismatches == 0;
}

/* 1 if the first len characters of name are one of the names listed. */
static int isa_listed(const char *const *names, size_t count, const char *name, size_t len)
{
    for (size_t i = 0; i < count; i++)
        if (strlen(names[i]) == len && strncmp(names[i], name, len) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    /* An argument names the one instruction set to compare (ctest runs one test a set, side by
     * side); exit 77 (ctest's skip) when this binary cannot run it here. None: every set. */
    const char *only = argc > 1 ? argv[1] : NULL;
    /* Half a million random operations a layout (a million before: the seven mutants of
     * ci/mutants.list that only this test catches fail at this count too, and each table's run
     * takes half the time: 17 -> 9 s alone on an AMD EPYC Zen 5); sanitizer and emulator builds
     * set fewer (SIMDBLOOM_DIFF_OPS, tests/CMakeLists.txt). */
    uint64_t ops = 500000;
    const char *env = getenv("SIMDBLOOM_DIFF_OPS");
    if (env && atoll(env) > 0)
        ops = (uint64_t)atoll(env);
    const char *names[16];
    size_t count = sbloom_isa_list(names, 16);
    CHECK(count >= 1);
    if (count > 16)
        count = 16;
    if (only && !isa_listed(names, count, only, strlen(only))) {
        printf("SKIP: instruction set %s is not usable here\n", only);
        return 77;
    }
    /* SIMDBLOOM_DIFF_NATIVE_FIRST=1 (the sanitizer builds): an emulated table ("avx2-simde") is
     * left out where its native one ("avx2") runs: the same kernel source, which the native run
     * checks under the sanitizers; on a CPU without it, the emulated run is that source's only. */
    const char *native_first = getenv("SIMDBLOOM_DIFF_NATIVE_FIRST");
    size_t native_len =
        only && strstr(only, "-simde") ? (size_t)(strstr(only, "-simde") - only) : 0;
    if (native_len && native_first && native_first[0] == '1' &&
        isa_listed(names, count, only, native_len)) {
        printf("SKIP: %s runs natively here (differential@%.*s)\n", only, (int)native_len, only);
        return 77;
    }
    size_t compared = 0;
    for (size_t i = 0; i < count; i++) {
        if (only && strcmp(names[i], only) != 0)
            continue;
        for (int l = 0; l < TEST_NLAYOUTS; l++) /* scalar too: its loops are the others' */
            CHECK(run_long_batches(test_layouts[l], names[i], 99 + (uint64_t)l * 5 + i));
        CHECK(run_long_batches(SBLOOM_LAYOUT_COUNTING512, names[i], 98 + i));
        for (int l = SBLOOM_LAYOUT_FP512_R10; l <= SBLOOM_LAYOUT_FP512_R29; l++)
            CHECK(run_long_batches((sbloom_layout)l, names[i], 97 + (uint64_t)l + i));
        if (strcmp(names[i], "scalar") == 0)
            continue;
        for (int l = 0; l < TEST_NLAYOUTS; l++)
            CHECK(run_pair(test_layouts[l], names[i], ops, 1234 + (uint64_t)l * 77 + i));
        CHECK(run_removing_pair(SBLOOM_LAYOUT_COUNTING512, names[i], ops, 4321 + i));
        for (int l = SBLOOM_LAYOUT_FP512_R10; l <= SBLOOM_LAYOUT_FP512_R29; l++)
            CHECK(run_removing_pair((sbloom_layout)l, names[i], ops / 4, 5321 + (uint64_t)l + i));
        CHECK(run_window_pair(names[i], 3, 0.01, ops / 4, 777 + i, 0)); /* generation slots */
        CHECK(run_window_pair(names[i], 4, 0.01, ops / 4, 778 + i, 0)); /* adjacent lines */
        CHECK(run_window_pair(names[i], 3, 1e-6, ops / 4, 779 + i, 0));
        /* ages (the walk's batches fill them past their plan: more moves and refusals) */
        CHECK(run_window_pair(names[i], 3, 0.01, ops / 16, 780 + i, 1)); /* 6 periods of 5 */
        CHECK(run_window_pair(names[i], 3, 1e-6, ops / 16, 781 + i, 1));
        CHECK(run_window_pair(names[i], 7, 1e-4, ops / 16, 782 + i, 1)); /* 7 of 10 */
        compared++;
    }
    printf("%zu instruction sets compared with scalar\n", compared);
    return check_report();
}
