/*
 * The benchmark bodies, in C, behind one small interface that bench/shim.cc registers with Google
 * Benchmark. A body is a `bench_case`: built once (untimed), then run pass after pass (timed);
 * each pass processes `keys_per_pass` keys.
 */
#ifndef SIMDBLOOM_BENCH_H
#define SIMDBLOOM_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "simdbloom.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bench_impl {
    IMPL_SIMDBLOOM,  /* this library, on a given ISA and layout */
    IMPL_CLASSIC,    /* classic unblocked Bloom filter, best k, double hashing (scalar) */
    IMPL_BITMAP,     /* single-hash bitmap: one bit per key (the documents' method 4) */
    IMPL_XXH3,       /* physical limit of the string path: XXH3-64 of each key, nothing else */
    IMPL_LINE_READS, /* physical limit of large filters: one random 64-byte line read per key,
                        prefetched in chunks like the batch pipeline */
} bench_impl;

typedef enum bench_op {
    OP_ADD,           /* batch add into a cleared filter */
    OP_CONTAINS_HIT,  /* batch contains, every key present */
    OP_CONTAINS_MISS, /* batch contains, every key absent */
    OP_CONTAINS_MIX,  /* batch contains, half present, in random order */
    OP_ADD_IF_NEW,    /* batch fused test-and-add, half present, into a filled filter */
    OP_SINGLE_ADD,    /* one call per key */
    OP_SINGLE_CONTAINS,
} bench_op;

typedef enum bench_workload {
    WL_HASHES,    /* pre-hashed keys: random 64-bit values */
    WL_URLS,      /* strings: the real URL sample (first half in, second half absent) */
    WL_GENERATED, /* strings: generated realistic URLs */
} bench_workload;

typedef struct bench_spec {
    bench_impl impl;
    bench_op op;
    bench_workload workload;
    const char *isa;       /* IMPL_SIMDBLOOM: "scalar", "avx2", ... */
    sbloom_layout layout;  /* IMPL_SIMDBLOOM */
    uint64_t filter_bytes; /* filter (or array) size */
    double bits_per_key;   /* keys inserted = filter_bytes * 8 / bits_per_key (WL_HASHES) */
    size_t probes;         /* keys per pass, at most */
    const char *url_file;  /* WL_URLS: one URL per line */
    uint64_t generated;    /* WL_GENERATED: how many URLs */
} bench_spec;

typedef struct bench_case bench_case;

/* Builds the case (filter filled, keys ready); NULL with a message in err on failure. */
bench_case *bench_case_new(const bench_spec *spec, char *err, size_t errcap);
/* One timed pass; returns a value derived from the answers (so no work is optimised away). */
uint64_t bench_case_run(bench_case *c);
/* Untimed work before a pass (clearing the filter for OP_ADD). */
void bench_case_prepare(bench_case *c);
size_t bench_case_keys_per_pass(const bench_case *c);
/* Filter bytes per inserted key, and the false-positive rate measured on absent keys (NaN when
 * the case has no absent keys or no filter). */
double bench_case_bytes_per_key(const bench_case *c);
double bench_case_measured_fpp(bench_case *c);
void bench_case_free(bench_case *c);

/* The string keys of a workload, for the C++ baselines (hash sets): first `inserted` keys go in,
 * the rest are absent. NULL on failure. */
typedef struct bench_strings {
    size_t count, inserted;
    const void **keys;
    size_t *lens;
    char *text;
} bench_strings;
bench_strings *bench_strings_load(const bench_spec *spec, char *err, size_t errcap);
void bench_strings_free(bench_strings *s);

/* Frees the filled filters kept between cases of the same size (call when moving on). */
void bench_release_cached_filters(void);

/* The seed-000 scenario: n generated URLs, one at a time in order as a crawler meets them, hashed
 * and test-and-added into a filter of bits_per_url bits per URL. Returns seconds spent in the
 * filter (hashing included, URL generation excluded) and the rates it saw. */
typedef struct bench_crawl_result {
    double seconds;
    double fpp_during; /* distinct URLs wrongly reported as seen, over n */
    double fpp_after;  /* unseen URLs reported present afterwards */
    uint64_t bytes;
    const char *isa;
    const char *layout;
} bench_crawl_result;
int bench_crawl(uint64_t n, double bits_per_url, bench_crawl_result *out);

#ifdef __cplusplus
}
#endif

#endif
