/*
 * simdbloom-weakhash: the source documents' string hashes in a classic Bloom filter, on real URLs,
 * against XXH3 and this library at the same number of bits.
 *
 *   simdbloom-weakhash URL_FILE      (one URL per line; the first half goes in, the rest probes)
 *
 * Deterministic: the same file gives the same table. Each document's filter is reproduced as its
 * code is written, and where the code has a slip, also as it was evidently meant:
 *   seed 000: six hashes h = seed * h + c (seeds 7, 11, 13, 31, 37, 61), 32-bit, masked to m bits;
 *   seed 002: hash1 (h = 31h + c) called three times, where hash1, hash2, hash3 (31, 33, 37) were
 *             meant;
 *   seed 003: BKDR, AP and DJB, each taken modulo the buffer's length in bytes, so only the first
 *             m/8 bits are ever used; meant: modulo m bits.
 * Characters are the URL's bytes, unsigned (the Java code reads UTF-16 chars, which equal the
 * bytes for ASCII; seed 003's C reads `char`, signed on x86: the same for ASCII URLs).
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bench.h"

#define BITS (UINT32_C(1) << 19) /* m: 2^19 bits, about 10.5 bits per URL of the sample's half */

typedef uint32_t (*hash_fn)(const uint8_t *s, size_t len, uint32_t param);

static uint32_t multiplicative(const uint8_t *s, size_t len, uint32_t seed)
{
    uint32_t h = 0; /* Java int arithmetic: wraps modulo 2^32 */
    for (size_t i = 0; i < len; i++)
        h = h * seed + s[i];
    return h;
}

static uint32_t bkdr(const uint8_t *s, size_t len, uint32_t unused)
{
    (void)unused;
    uint32_t h = 0;
    for (size_t i = 0; i < len; i++)
        h = h * 13131 + s[i];
    return h & 0x7fffffff;
}

static uint32_t ap(const uint8_t *s, size_t len, uint32_t unused)
{
    (void)unused;
    uint32_t h = 0;
    for (size_t i = 0; i < len; i++)
        h ^= (i & 1) == 0 ? ((h << 7) ^ s[i] ^ (h >> 3)) : ~((h << 11) ^ s[i] ^ (h >> 5));
    return h & 0x7fffffff;
}

static uint32_t djb(const uint8_t *s, size_t len, uint32_t unused)
{
    (void)unused;
    uint32_t h = 5381;
    for (size_t i = 0; i < len; i++)
        h += (h << 5) + s[i];
    return h & 0x7fffffff;
}

/* XXH3 with double hashing, the textbook way to get k good functions from one hash. */
static uint32_t xxh3_double(const uint8_t *s, size_t len, uint32_t i)
{
    uint64_t h = XXH3_64bits(len ? (const void *)s : "", len);
    return (uint32_t)h + i * ((uint32_t)(h >> 32) | 1);
}

typedef struct design {
    const char *name;
    uint32_t k;
    hash_fn fn[6];
    uint32_t param[6];
    uint32_t reach; /* positions are taken modulo this (m, or m/8 for seed 003 as written) */
} design;

static uint8_t bits[BITS / 8];

static uint32_t position(const design *d, int i, const void *key, size_t len)
{
    uint32_t h = d->fn[i](key, len, d->param[i]);
    return (d->reach & (d->reach - 1)) == 0 ? h & (d->reach - 1) : h % d->reach;
}

int main(int argc, char **argv)
{
    char err[256] = "";
    bench_spec spec = {.workload = WL_URLS, .url_file = argc == 2 ? argv[1] : NULL};
    bench_strings *urls = argc == 2 ? bench_strings_load(&spec, err, sizeof err) : NULL;
    if (!urls) {
        fprintf(stderr,
                "usage: simdbloom-weakhash URL_FILE (one URL per line, at least two; "
                ".xz read through xz -dc)%s%s\n",
                *err ? ": " : "", err);
        return 2;
    }
    size_t half = urls->inserted, probes = urls->count - half;
    const design designs[] = {
        {"seed 000: h = seed*h + c, six seeds",
         6,
         {multiplicative, multiplicative, multiplicative, multiplicative, multiplicative,
          multiplicative},
         {7, 11, 13, 31, 37, 61},
         BITS},
        {"seed 002 as written: hash1 three times",
         3,
         {multiplicative, multiplicative, multiplicative},
         {31, 31, 31},
         BITS},
        {"seed 002 as meant: multipliers 31, 33, 37",
         3,
         {multiplicative, multiplicative, multiplicative},
         {31, 33, 37},
         BITS},
        {"seed 003 as written: BKDR, AP, DJB mod bytes", 3, {bkdr, ap, djb}, {0, 0, 0}, BITS / 8},
        {"seed 003 as meant: BKDR, AP, DJB mod bits", 3, {bkdr, ap, djb}, {0, 0, 0}, BITS},
        {"XXH3, double hashing, k = 3",
         3,
         {xxh3_double, xxh3_double, xxh3_double},
         {0, 1, 2},
         BITS},
        {"XXH3, double hashing, k = 6",
         6,
         {xxh3_double, xxh3_double, xxh3_double, xxh3_double, xxh3_double, xxh3_double},
         {0, 1, 2, 3, 4, 5},
         BITS},
    };
    double per_key = (double)BITS / (double)half;
    printf("%zu real URLs in, %zu others probed; every filter has m = %u bits (%.1f bits per URL)."
           "\n\n",
           half, probes, BITS, per_key);
    printf("| filter | k | measured false-positive rate | ideal for the bits it reaches, n, k |\n"
           "|---|---|---|---|\n");
    for (size_t d = 0; d < sizeof designs / sizeof designs[0]; d++) {
        const design *ds = &designs[d];
        memset(bits, 0, sizeof bits);
        for (size_t u = 0; u < half; u++)
            for (uint32_t i = 0; i < ds->k; i++) {
                uint32_t b = position(ds, (int)i, urls->keys[u], urls->lens[u]);
                bits[b / 8] |= (uint8_t)(1u << (b % 8));
            }
        uint64_t positives = 0;
        for (size_t u = half; u < urls->count; u++) {
            int all = 1;
            for (uint32_t i = 0; i < ds->k && all; i++) {
                uint32_t b = position(ds, (int)i, urls->keys[u], urls->lens[u]);
                all = (bits[b / 8] >> (b % 8)) & 1;
            }
            positives += (uint64_t)all;
        }
        /* The ideal over the bits the design reaches; three identical functions are one. */
        uint32_t distinct_k = d == 1 ? 1 : ds->k;
        printf("| %s | %u | %.4g | %.4g |\n", ds->name, ds->k, (double)positives / (double)probes,
               sbloom_classic_fpp((double)ds->reach / (double)half, distinct_k));
    }
    sbloom_t *f;
    sbloom_create_bytes(&f, BITS / 8, SBLOOM_LAYOUT_BLOCK512_K8);
    sbloom_add_keys(f, urls->keys, urls->lens, half);
    int64_t positives = sbloom_contains_keys(f, urls->keys + half, urls->lens + half, probes, NULL);
    printf("| simdbloom block512-k8 (blocked, XXH3) | 8 | %.4g | %.4g (blocked formula) |\n",
           (double)positives / (double)probes,
           sbloom_blocked_fpp(SBLOOM_LAYOUT_BLOCK512_K8, BITS / 8, half));
    sbloom_free(f);
    bench_strings_free(urls);
    return 0;
}
