/*
 * The benchmark cases: set up (untimed) and run (timed) one implementation, operation and
 * workload.
 *
 * Filled filters are expensive at 256 MiB and up (hundreds of millions of adds), so a filter is
 * filled once per (layout, size, workload) on the best instruction set and copied with
 * sbloom_clone() onto each instruction set measured: every ISA probes identical bits.
 */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include <math.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bench.h"
#include "workloads.h"

#define SEED_INSERTED 1
#define SEED_ABSENT 2

struct bench_case;
static size_t fastest_window(struct bench_case *c);

struct bench_case {
    bench_spec spec;
    sbloom_t *filter;       /* IMPL_SIMDBLOOM */
    sbloom_t *pristine;     /* IMPL_SIMDBLOOM, OP_ADD_IF_NEW: the state to restore per pass */
    classic_filter classic; /* IMPL_CLASSIC, IMPL_BITMAP */
    uint8_t *array;         /* IMPL_LINE_READS */
    size_t ahead;           /* IMPL_LINE_READS: the prefetch distance that read fastest */
    bench_strings *strings; /* string workloads */
    uint64_t inserted;      /* keys in the filter */
    size_t n;               /* keys per pass */
    uint64_t *hashes;       /* the pass's keys, pre-hashed workloads */
    const void **keys;      /* the pass's keys, string workloads */
    size_t *lens;
    char *pass_text; /* the pass's string keys, contiguous in pass order */
    uint8_t *results;
    size_t absent_from; /* the pass's keys at index >= absent_from... */
    uint8_t *absent;    /* ...or, for mixes, absent[i] = 1 for absent keys */
};

/* ---- the cache of filled filters ---- */

static struct {
    sbloom_layout layout;
    uint64_t bytes;
    bench_workload workload;
    double bits_per_key;
    sbloom_t *filter;
} cached;

void bench_release_cached_filters(void)
{
    sbloom_free(cached.filter);
    memset(&cached, 0, sizeof cached);
}

static uint64_t inserted_count(const bench_spec *spec)
{
    return (uint64_t)((double)spec->filter_bytes * 8.0 / spec->bits_per_key);
}

static void fill_hashes_into(sbloom_t *f, uint64_t count)
{
    enum { STEP = 1 << 16 };
    uint64_t *batch = malloc(STEP * sizeof *batch);
    for (uint64_t i = 0; i < count; i += STEP) {
        size_t len = count - i < STEP ? (size_t)(count - i) : STEP;
        for (size_t j = 0; j < len; j++)
            batch[j] = bench_key(SEED_INSERTED, i + j);
        sbloom_add_hashes(f, batch, len);
    }
    free(batch);
}

static sbloom_t *filled_filter(const bench_spec *spec, const bench_strings *strings)
{
    if (cached.filter && cached.layout == spec->layout && cached.bytes == spec->filter_bytes &&
        cached.workload == spec->workload && cached.bits_per_key == spec->bits_per_key)
        return cached.filter;
    bench_release_cached_filters();
    sbloom_set_isa(NULL);
    sbloom_t *f;
    if (sbloom_create_bytes(&f, spec->filter_bytes, spec->layout) != SBLOOM_OK)
        return NULL;
    if (strings)
        sbloom_add_keys(f, strings->keys, strings->lens, strings->inserted);
    else
        fill_hashes_into(f, inserted_count(spec));
    cached.layout = spec->layout;
    cached.bytes = spec->filter_bytes;
    cached.workload = spec->workload;
    cached.bits_per_key = spec->bits_per_key;
    cached.filter = f;
    return f;
}

/* ---- the keys of a pass ---- */

static int is_present_probe(bench_op op, size_t i, uint64_t *rng)
{
    switch (op) {
    case OP_CONTAINS_HIT:
    case OP_SINGLE_CONTAINS: return 1;
    case OP_CONTAINS_MISS:
    case OP_ADD:
    case OP_SINGLE_ADD: return 0;
    default: (void)i; return (int)(bench_key(99, (*rng)++) & 1); /* half and half, unpredictably */
    }
}

static int make_pass_keys(bench_case *c)
{
    const bench_spec *s = &c->spec;
    uint64_t rng = 0;
    c->results = malloc(c->n ? c->n : 1);
    c->absent = malloc(c->n ? c->n : 1);
    if (!c->results || !c->absent)
        return 0;
    if (c->strings) {
        c->keys = malloc(c->n * sizeof *c->keys);
        c->lens = malloc(c->n * sizeof *c->lens);
        if (!c->keys || !c->lens)
            return 0;
        size_t absent_count = c->strings->count - c->strings->inserted, total = 0;
        for (size_t i = 0; i < c->n; i++) {
            int present = is_present_probe(s->op, i, &rng);
            size_t pick =
                (size_t)(bench_key(5, i) % (present ? c->strings->inserted : absent_count));
            if (!present)
                pick += c->strings->inserted;
            if (s->op == OP_ADD || s->op == OP_SINGLE_ADD)
                pick = i; /* adds take every key in order */
            c->keys[i] = c->strings->keys[pick];
            c->lens[i] = c->strings->lens[pick];
            c->absent[i] = (uint8_t)!present;
            total += c->lens[i];
        }
        /* Keys arrive one after another in a stream: lay them out so, or every key would pay a
         * cache miss before hashing and the string path would measure the allocator. */
        c->pass_text = malloc(total ? total : 1);
        if (!c->pass_text)
            return 0;
        for (size_t i = 0, at = 0; i < c->n; at += c->lens[i], i++) {
            memcpy(c->pass_text + at, c->keys[i], c->lens[i]);
            c->keys[i] = c->pass_text + at;
        }
    } else {
        c->hashes = malloc(c->n * sizeof *c->hashes);
        if (!c->hashes)
            return 0;
        for (size_t i = 0; i < c->n; i++) {
            int present = is_present_probe(s->op, i, &rng) && c->inserted > 0;
            c->hashes[i] = present ? bench_key(SEED_INSERTED, bench_key(5, i) % c->inserted)
                                   : bench_key(SEED_ABSENT, i);
            c->absent[i] = (uint8_t)!present;
        }
    }
    return 1;
}

/* ---- set-up ---- */

bench_case *bench_case_new(const bench_spec *spec, char *err, size_t errcap)
{
    bench_case *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->spec = *spec;
    bench_spec *s = &c->spec;
    if (s->workload != WL_HASHES) {
        c->strings = bench_strings_load(s, err, errcap);
        if (!c->strings)
            goto fail;
        c->inserted = c->strings->inserted;
        if (s->filter_bytes == 0)
            s->filter_bytes = (uint64_t)ceil((double)c->inserted * s->bits_per_key / 8.0);
        c->n = c->strings->count;
    } else {
        c->inserted = inserted_count(s);
        c->n = s->probes;
    }
    if (s->probes && c->n > s->probes)
        c->n = s->probes;

    switch (s->impl) {
    case IMPL_SIMDBLOOM: {
        sbloom_t *base = filled_filter(s, c->strings);
        int rc = base ? sbloom_set_isa(s->isa) : SBLOOM_E_NOMEM;
        if (rc == SBLOOM_OK)
            rc = sbloom_clone(&c->filter, base);
        sbloom_set_isa(NULL);
        if (rc != SBLOOM_OK) {
            snprintf(err, errcap, "%s: %s", s->isa, sbloom_strerror(rc));
            goto fail;
        }
        if (s->op == OP_ADD_IF_NEW)
            c->pristine = base;
        break;
    }
    case IMPL_CLASSIC:
    case IMPL_BITMAP: {
        uint32_t k = s->impl == IMPL_BITMAP ? 1 : sbloom_classic_best_k(s->bits_per_key);
        if (!classic_init(&c->classic, s->filter_bytes, k)) {
            snprintf(err, errcap, "out of memory");
            goto fail;
        }
        if (c->strings)
            for (size_t i = 0; i < c->strings->inserted; i++)
                classic_add(&c->classic, XXH3_64bits(c->strings->keys[i], c->strings->lens[i]));
        else
            for (uint64_t i = 0; i < c->inserted; i++)
                classic_add(&c->classic, bench_key(SEED_INSERTED, i));
        break;
    }
    case IMPL_LINE_READS: {
        /* Memory as the filters get it (src/base/memory.c): 2 MiB-aligned and on huge pages where
         * the kernel grants them. On 4 KiB pages a 256 MiB array pays a page walk per line, and the
         * limit read 58-63 ns a key in two of three full runs of bench/report (9 ns alone). */
        size_t huge = (size_t)2 << 20, bytes = (size_t)((s->filter_bytes + 63) & ~UINT64_C(63));
        c->array = aligned_alloc(bytes >= huge ? huge : 64,
                                 bytes >= huge ? (bytes + huge - 1) / huge * huge : bytes);
        if (!c->array) {
            snprintf(err, errcap, "out of memory");
            goto fail;
        }
#ifdef MADV_HUGEPAGE
        if (bytes >= huge)
            madvise(c->array, (bytes + huge - 1) / huge * huge, MADV_HUGEPAGE); /* a hint */
#endif
        memset(c->array, 1, (size_t)s->filter_bytes);
        break;
    }
    case IMPL_XXH3: break;
    }
    if (!make_pass_keys(c)) {
        snprintf(err, errcap, "out of memory");
        goto fail;
    }
    if (s->impl == IMPL_LINE_READS)
        c->ahead = fastest_window(c);
    return c;
fail:
    bench_case_free(c);
    return NULL;
}

void bench_case_free(bench_case *c)
{
    if (!c)
        return;
    sbloom_free(c->filter);
    classic_free(&c->classic);
    free(c->array);
    bench_strings_free(c->strings);
    free(c->hashes);
    free(c->keys);
    free(c->lens);
    free(c->pass_text);
    free(c->results);
    free(c->absent);
    free(c);
}

size_t bench_case_keys_per_pass(const bench_case *c)
{
    return c->n;
}

double bench_case_bytes_per_key(const bench_case *c)
{
    if (c->spec.impl == IMPL_XXH3 || c->spec.impl == IMPL_LINE_READS)
        return NAN; /* limits hold no keys */
    return c->inserted ? (double)c->spec.filter_bytes / (double)c->inserted : NAN;
}

void bench_case_prepare(bench_case *c)
{
    if (c->spec.impl == IMPL_SIMDBLOOM && (c->spec.op == OP_ADD || c->spec.op == OP_SINGLE_ADD))
        sbloom_clear(c->filter);
    if (c->spec.impl == IMPL_SIMDBLOOM && c->pristine) {
        /* Test-and-add changes the filter: each pass starts from the filled state again. */
        sbloom_set_isa(c->spec.isa);
        sbloom_t *fresh;
        if (sbloom_clone(&fresh, c->pristine) == SBLOOM_OK) {
            sbloom_free(c->filter);
            c->filter = fresh;
        }
        sbloom_set_isa(NULL);
    }
    if ((c->spec.impl == IMPL_CLASSIC || c->spec.impl == IMPL_BITMAP) &&
        (c->spec.op == OP_ADD || c->spec.op == OP_SINGLE_ADD))
        memset(c->classic.words, 0, (size_t)((c->classic.nbits + 63) / 64 * 8));
}

/* ---- the timed pass ---- */

static uint64_t run_simdbloom(bench_case *c)
{
    sbloom_t *f = c->filter;
    size_t n = c->n;
    uint64_t sum = 0;
    if (c->strings) {
        switch (c->spec.op) {
        case OP_ADD: return (uint64_t)sbloom_add_keys(f, c->keys, c->lens, n);
        case OP_ADD_IF_NEW:
            return (uint64_t)sbloom_add_if_new_keys(f, c->keys, c->lens, n, c->results);
        case OP_SINGLE_ADD:
            for (size_t i = 0; i < n; i++)
                sum += (uint64_t)sbloom_add(f, c->keys[i], c->lens[i]);
            return sum;
        case OP_SINGLE_CONTAINS:
            for (size_t i = 0; i < n; i++)
                sum += (uint64_t)sbloom_contains(f, c->keys[i], c->lens[i]);
            return sum;
        default: return (uint64_t)sbloom_contains_keys(f, c->keys, c->lens, n, c->results);
        }
    }
    switch (c->spec.op) {
    case OP_ADD: return (uint64_t)sbloom_add_hashes(f, c->hashes, n);
    case OP_ADD_IF_NEW: return (uint64_t)sbloom_add_if_new_hashes(f, c->hashes, n, c->results);
    case OP_SINGLE_ADD:
        for (size_t i = 0; i < n; i++)
            sum += (uint64_t)sbloom_add_hash(f, c->hashes[i]);
        return sum;
    case OP_SINGLE_CONTAINS:
        for (size_t i = 0; i < n; i++)
            sum += (uint64_t)sbloom_contains_hash(f, c->hashes[i]);
        return sum;
    default: return (uint64_t)sbloom_contains_hashes(f, c->hashes, n, c->results);
    }
}

static inline uint64_t key_hash(const bench_case *c, size_t i)
{
    return c->strings ? XXH3_64bits(c->keys[i], c->lens[i]) : c->hashes[i];
}

uint64_t bench_case_run(bench_case *c)
{
    uint64_t sum = 0;
    switch (c->spec.impl) {
    case IMPL_SIMDBLOOM: return run_simdbloom(c);
    case IMPL_CLASSIC:
    case IMPL_BITMAP:
        if (c->spec.op == OP_ADD || c->spec.op == OP_SINGLE_ADD) {
            for (size_t i = 0; i < c->n; i++)
                classic_add(&c->classic, key_hash(c, i));
            return c->n;
        }
        for (size_t i = 0; i < c->n; i++)
            sum += (uint64_t)classic_contains(&c->classic, key_hash(c, i));
        return sum;
    case IMPL_XXH3:
        for (size_t i = 0; i < c->n; i++)
            sum += key_hash(c, i);
        return sum;
    case IMPL_LINE_READS:
        return line_reads(c->array, c->spec.filter_bytes, c->hashes, c->n, c->ahead);
    }
    return sum;
}

double bench_case_measured_fpp(bench_case *c)
{
    bench_op op = c->spec.op;
    if (op == OP_ADD || op == OP_SINGLE_ADD || op == OP_ADD_IF_NEW)
        return NAN; /* the pass added its absent keys */
    uint64_t absent = 0, positives = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (!c->absent[i])
            continue;
        absent++;
        int present = 0;
        if (c->spec.impl == IMPL_SIMDBLOOM)
            present = c->strings ? sbloom_contains(c->filter, c->keys[i], c->lens[i])
                                 : sbloom_contains_hash(c->filter, c->hashes[i]);
        else if (c->spec.impl == IMPL_CLASSIC || c->spec.impl == IMPL_BITMAP)
            present = classic_contains(&c->classic, key_hash(c, i));
        else
            return NAN;
        positives += present == 1;
    }
    return absent ? (double)positives / (double)absent : NAN;
}

/* The line-read limit's prefetch distance: of 16, 32, 64, 128 and 256 keys ahead, the one that
 * read the pass's keys fastest (best of 3 each), as the peer harness takes the best of its
 * "BASE line" rows. */
static size_t fastest_window(struct bench_case *c)
{
    static const size_t windows[] = {16, 32, 64, 128, 256};
    size_t best = 16;
    double best_ns = 1e300;
    volatile uint64_t sink = 0;
    for (size_t w = 0; w < sizeof windows / sizeof *windows; w++)
        for (int rep = 0; rep < 3; rep++) {
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            sink += line_reads(c->array, c->spec.filter_bytes, c->hashes, c->n, windows[w]);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
            if (ns < best_ns) {
                best_ns = ns;
                best = windows[w];
            }
        }
    (void)sink;
    return best;
}
