/*
 * simdbloom-bench-window-peers [--keys N[,N...]] [--fpp P[,P...]] [--reps R]:
 * simdbloom's windows against the two window filters that ship elsewhere, written here from
 * their published descriptions, on the same pre-hashed keys in one run (issue 57):
 *
 *   - rolling: Bitcoin Core's CRollingBloomFilter (src/common/bloom.h): k = log2(1/p) hash
 *     functions over positions of 2 bits (the generation, 1-3, that last set it; 0 empty),
 *     sized for 1.5 N keys; every N / 2 adds the next generation's positions are wiped in one
 *     pass over the array. It holds at least the last N keys.
 *   - apbf: the age-partitioned Bloom filter (Shtul, Baquero, Almeida, 2020; decred's dcrd
 *     container/apbf picks its parameters): k + l slices of a partitioned Bloom filter, k =
 *     ceil(log2(1/p)) and l the most that keeps the paper's rate recursion at or below p; a key
 *     sets a bit in each of the k youngest slices; every g adds the oldest slice is cleared and
 *     becomes the youngest; a lookup looks for k consecutive slices that hold the key, jumping
 *     back k slices at a miss. A key outlives l x g adds (l + 1 generations when it came first in
 *     its own, l when last), so g = N / l here; dcrd's N / (l + 1) missed keys of the last N
 *     that were reported new when added.
 *   - simdbloom's window: sbloom_create_opts with 3 periods of 2 units for N keys a window, with
 *     SBLOOM_OPTS_ANY_FAMILY ("window": the smallest form, the fingerprint ages where they are
 *     smaller) and without ("ring": the ring of Bloom generations); its clock moves a period every
 *     N / 3 adds, so it too holds the last N keys.
 *
 * Each is filled with two windows of keys first (its steady state), then timed, best of R
 * (default 3), the filters alternated: test-and-add of N fresh keys (the peers: a lookup, then an
 * add when absent, key by key, as their APIs offer it; simdbloom: batches of 4,096) and lookups
 * of N absent keys. It checks that every key of the timed window is then found (none may be
 * missed) and prints the rate measured on the absent keys, the bits a window key, ns a key and
 * each filter's time over simdbloom's window's. The peers' hashing is made cheap in their favour:
 * their k indexes come from the key's 64-bit hash by mixing (Bitcoin Core runs MurmurHash3 once
 * an index, dcrd SipHash-128 once a key).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdbloom.h"
#include "window_keys.h"

#define BATCH 4096

__extension__ typedef unsigned __int128 wide; /* GCC and clang; the bench needs no other */

static inline uint64_t reduce(uint64_t x, uint64_t range)
{
    return (uint64_t)(((wide)x * range) >> 64);
}

static inline uint64_t remix(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    return x ^ (x >> 33);
}

/* ---- The rolling filter (Bitcoin Core's design) ---- */

typedef struct rolling {
    uint64_t *words; /* pairs: bit b of words[2i] and of words[2i + 1] are position 64i + b's */
    uint64_t nwords;
    uint32_t k, generation; /* generation 1 .. 3 */
    uint64_t per_generation, in_generation;
} rolling;

static int rolling_init(rolling *f, uint64_t n, double p)
{
    double log_p = log(p);
    long k = lround(log_p / log(0.5));
    f->k = (uint32_t)(k < 1 ? 1 : k > 50 ? 50 : k);
    f->per_generation = (n + 1) / 2;
    double held = 3.0 * (double)f->per_generation;
    double bits = ceil(-1.0 * f->k * held / log(1.0 - exp(log_p / f->k)));
    f->nwords = 2 * (((uint64_t)bits + 63) / 64);
    f->words = calloc(f->nwords, sizeof *f->words);
    f->generation = 1;
    f->in_generation = 0;
    return f->words != NULL;
}

static inline uint64_t rolling_hash(uint64_t key, uint32_t i)
{
    return remix(key + UINT64_C(0x9e3779b97f4a7c15) * (i + 1));
}

static int rolling_contains(const rolling *f, uint64_t key)
{
    for (uint32_t i = 0; i < f->k; i++) {
        uint64_t h = rolling_hash(key, i), pos = reduce(h, f->nwords);
        unsigned bit = (unsigned)(h & 63);
        if (!(((f->words[pos & ~UINT64_C(1)] | f->words[pos | 1]) >> bit) & 1))
            return 0;
    }
    return 1;
}

static void rolling_add(rolling *f, uint64_t key)
{
    if (f->in_generation == f->per_generation) { /* wipe the next generation's positions */
        f->in_generation = 0;
        f->generation = f->generation == 3 ? 1 : f->generation + 1;
        uint64_t low = f->generation & 1 ? ~UINT64_C(0) : 0,
                 high = f->generation >> 1 ? ~UINT64_C(0) : 0;
        for (uint64_t w = 0; w < f->nwords; w += 2) {
            uint64_t keep = (f->words[w] ^ low) | (f->words[w + 1] ^ high);
            f->words[w] &= keep;
            f->words[w + 1] &= keep;
        }
    }
    f->in_generation++;
    uint64_t low = f->generation & 1, high = f->generation >> 1;
    for (uint32_t i = 0; i < f->k; i++) {
        uint64_t h = rolling_hash(key, i), pos = reduce(h, f->nwords);
        unsigned bit = (unsigned)(h & 63);
        uint64_t *pair = f->words + (pos & ~UINT64_C(1));
        pair[0] = (pair[0] & ~(UINT64_C(1) << bit)) | (low << bit);
        pair[1] = (pair[1] & ~(UINT64_C(1) << bit)) | (high << bit);
    }
}

/* ---- The age-partitioned Bloom filter ---- */

typedef struct apbf {
    uint64_t *bits; /* k + l slices of m bits, slice s at bit s x m */
    uint64_t m, per_generation, in_generation;
    uint32_t k, l, base; /* base: the physical slice of logical slice 0 (the youngest) */
} apbf;

/* The paper's rate: F(a, i) = 1 when a = k matches in a row were found, 0 when too few slices
 * are left, else r_i F(a + 1, i + 1) + (1 - r_i) F(0, i + 1), with slice i's fill r_i = (i + 1)
 * / 2k for the k youngest and 1/2 for the rest. */
static double apbf_rate(uint32_t k, uint32_t l)
{
    uint32_t slices = k + l;
    double *next = calloc((size_t)k + 1, sizeof *next), *here = calloc((size_t)k + 1, sizeof *here);
    double rate = 1;
    if (next && here) {
        for (uint32_t i = slices + 1; i-- > 0;) { /* F(., i) from F(., i + 1) */
            for (uint32_t a = 0; a <= k; a++) {
                double fill = i < k ? (double)(i + 1) / (2.0 * k) : 0.5;
                here[a] = a == k ? 1 : i > l + a ? 0 : fill * next[a + 1] + (1 - fill) * next[0];
            }
            memcpy(next, here, ((size_t)k + 1) * sizeof *next);
        }
        rate = next[0];
    }
    free(next);
    free(here);
    return rate;
}

static int apbf_init(apbf *f, uint64_t n, double p)
{
    f->k = (uint32_t)ceil(-log2(p));
    f->l = 1;
    while (f->l < 100 && apbf_rate(f->k, f->l + 1) <= p)
        f->l++;
    f->per_generation = (n + f->l - 1) / f->l; /* l generations: a key outlives l x g adds */
    f->m = (uint64_t)ceil((double)f->k * (double)f->per_generation / log(2.0));
    f->in_generation = 0;
    f->base = 0;
    f->bits = calloc((f->m * (f->k + f->l) + 63) / 64 + 1, sizeof *f->bits);
    return f->bits != NULL;
}

/* The key's bit in physical slice s: enhanced double hashing, h1 + s h2 + (s^3 - s) / 6. */
static inline uint64_t apbf_bit(const apbf *f, uint32_t s, uint64_t h1, uint64_t h2)
{
    uint64_t x = s;
    return (uint64_t)s * f->m + reduce(remix(h1 + x * h2 + (x * x * x - x) / 6), f->m);
}

static inline int apbf_test(const apbf *f, uint32_t logical, uint64_t h1, uint64_t h2)
{
    uint64_t bit = apbf_bit(f, (f->base + logical) % (f->k + f->l), h1, h2);
    return (int)((f->bits[bit / 64] >> (bit % 64)) & 1);
}

static void apbf_add(apbf *f, uint64_t key)
{
    uint32_t slices = f->k + f->l;
    if (f->in_generation == f->per_generation) { /* the oldest slice becomes the youngest */
        f->in_generation = 0;
        f->base = f->base == 0 ? slices - 1 : f->base - 1;
        uint64_t b = (uint64_t)f->base * f->m, end = b + f->m;
        for (; b < end && b % 64; b++) /* to a word's start, whole words, the rest */
            f->bits[b / 64] &= ~(UINT64_C(1) << (b % 64));
        if (end - b >= 64) {
            memset(f->bits + b / 64, 0, (end - b) / 64 * 8);
            b += (end - b) / 64 * 64;
        }
        for (; b < end; b++)
            f->bits[b / 64] &= ~(UINT64_C(1) << (b % 64));
    }
    f->in_generation++;
    uint64_t h2 = remix(key ^ UINT64_C(0x5bd1e9955bd1e995));
    for (uint32_t i = 0; i < f->k; i++) {
        uint64_t bit = apbf_bit(f, (f->base + i) % slices, key, h2);
        f->bits[bit / 64] |= UINT64_C(1) << (bit % 64);
    }
}

/* k logical slices in a row that hold the key: start at slice l (k slices from it to the oldest),
 * count the matches going older, and at a miss jump back k younger, keeping the run found. */
static int apbf_contains(const apbf *f, uint64_t key)
{
    uint64_t h2 = remix(key ^ UINT64_C(0x5bd1e9955bd1e995));
    uint32_t at = f->l, before = 0, run = 0;
    for (;;) {
        if (apbf_test(f, at, key, h2)) {
            if (++run + before >= f->k)
                return 1;
            at++;
            continue;
        }
        if (at < f->k)
            return 0;
        at -= f->k;
        before = run;
        run = 0;
    }
}

/* ---- The run ---- */

enum { WINDOW, RING, ROLLING, APBF, FILTERS };
static const char *const names[FILTERS] = {"window", "ring", "rolling", "apbf"};

typedef struct peers {
    sbloom_t *sb[2];
    rolling roll;
    apbf age;
    uint64_t clock, period, n;
} peers;

static uint64_t bytes_of(const peers *p, int which)
{
    if (which == ROLLING)
        return p->roll.nwords * 8;
    if (which == APBF)
        return (p->age.m * (p->age.k + p->age.l) + 7) / 8;
    return sbloom_bytes(p->sb[which]);
}

/* Test-and-add of keys[0, n): the count of new ones, new[i] = whether key i was. simdbloom's
 * clock moves a period before each third of them. */
static uint64_t add_window(peers *p, int which, const uint64_t *keys, size_t n, uint8_t *new)
{
    uint64_t fresh = 0;
    if (which == ROLLING || which == APBF) {
        for (size_t i = 0; i < n; i++) {
            int held = which == ROLLING ? rolling_contains(&p->roll, keys[i])
                                        : apbf_contains(&p->age, keys[i]);
            new[i] = (uint8_t)!held;
            if (!held) {
                if (which == ROLLING)
                    rolling_add(&p->roll, keys[i]);
                else
                    apbf_add(&p->age, keys[i]);
                fresh++;
            }
        }
        return fresh;
    }
    for (uint32_t q = 0; q < 3; q++) {
        sbloom_advance(p->sb[which], ++p->clock * p->period);
        size_t from = n * q / 3, to = n * (q + 1) / 3;
        for (size_t at = from; at < to; at += BATCH) {
            size_t len = to - at < BATCH ? to - at : BATCH;
            fresh += sbloom_add_if_new_hashes(p->sb[which], keys + at, len, new + at);
        }
    }
    return fresh;
}

/* Lookups of keys[0, n): the count found, found[i] = whether key i was. */
static uint64_t look_up(const peers *p, int which, const uint64_t *keys, size_t n, uint8_t *found)
{
    uint64_t count = 0;
    if (which == ROLLING || which == APBF) {
        for (size_t i = 0; i < n; i++) {
            found[i] = (uint8_t)(which == ROLLING ? rolling_contains(&p->roll, keys[i])
                                                  : apbf_contains(&p->age, keys[i]));
            count += found[i];
        }
        return count;
    }
    for (size_t at = 0; at < n; at += BATCH) {
        size_t len = n - at < BATCH ? n - at : BATCH;
        count += sbloom_contains_hashes(p->sb[which], keys + at, len, found + at);
    }
    return count;
}

/* Keys reported new when added and not found now (a key reported held when added was not
 * added: a false positive then, which may be gone once the keys that made it are forgotten). */
static uint64_t missed_keys(const uint8_t *was_new, const uint8_t *found, size_t n)
{
    uint64_t missed = 0;
    for (size_t i = 0; i < n; i++)
        missed += (uint64_t)(was_new[i] && !found[i]);
    return missed;
}

static int run_size(uint64_t n, double fpp, int reps)
{
    peers p = {.n = n, .period = 2};
    uint64_t *keys = malloc(n * sizeof *keys), *absent = malloc(n * sizeof *absent);
    uint8_t *was_new = malloc(n), *found = malloc(n);
    int ok = keys && absent && was_new && found && rolling_init(&p.roll, n, fpp) &&
             apbf_init(&p.age, n, fpp);
    for (int form = 0; ok && form < 2; form++) {
        sbloom_opts o = sbloom_opts_init();
        o.expected = n;
        o.fpp = fpp;
        o.periods = 3;
        o.period = p.period;
        o.flags = form == WINDOW ? SBLOOM_OPTS_ANY_FAMILY : 0;
        ok = sbloom_create_opts(&p.sb[form], &o) == SBLOOM_OK;
    }
    if (!ok) {
        fprintf(stderr, "simdbloom-bench-window-peers: out of memory at %llu keys\n",
                (unsigned long long)n);
        return 1;
    }
    double best[FILTERS][2], rate[FILTERS] = {0};
    int missed[FILTERS] = {0};
    for (int w = 0; w < FILTERS; w++)
        best[w][0] = best[w][1] = 1e30;
    fill_keys(absent, n, 0xAB5E47 + n);
    for (int rep = 0; rep < reps; rep++) {
        for (int w = 0; w < FILTERS; w++) {
            if (rep == 0)
                for (uint64_t seed = 1; seed <= 2; seed++) { /* two windows behind it */
                    fill_keys(keys, n, 7000 * seed + (uint64_t)w);
                    add_window(&p, w, keys, n, was_new);
                }
            fill_keys(keys, n, 1000 * (uint64_t)rep + 11);
            double t = now();
            add_window(&p, w, keys, n, was_new);
            t = now() - t;
            best[w][0] = t < best[w][0] ? t : best[w][0];
            t = now();
            uint64_t positives = look_up(&p, w, absent, n, found);
            t = now() - t;
            best[w][1] = t < best[w][1] ? t : best[w][1];
            rate[w] = (double)positives / (double)n;
            look_up(&p, w, keys, n, found); /* the window just added: every new key held */
            missed[w] += missed_keys(was_new, found, n) != 0;
        }
    }
    double ns = 1e9 / (double)n;
    printf("%11s  (rolling: %u hashes; apbf: k %u, l %u, its rate %.2e)\n", "", p.roll.k, p.age.k,
           p.age.l, apbf_rate(p.age.k, p.age.l));
    for (int w = 0; w < FILTERS; w++)
        printf("%11llu  %-6g  %-8s %6.2f  %8.2f  %6.2fx  %8.2f  %6.2fx  %9.2e  %s\n",
               (unsigned long long)n, fpp, names[w], (double)bytes_of(&p, w) * 8 / (double)n,
               best[w][0] * ns, best[w][0] / best[WINDOW][0], best[w][1] * ns,
               best[w][1] / best[WINDOW][1], rate[w], missed[w] ? "MISSED KEYS" : "");
    fflush(stdout);
    sbloom_free(p.sb[0]);
    sbloom_free(p.sb[1]);
    free(p.roll.words);
    free(p.age.bits);
    free(keys);
    free(absent);
    free(was_new);
    free(found);
    for (int w = 0; w < FILTERS; w++)
        if (missed[w])
            return 1;
    return 0;
}

static void usage(FILE *to)
{
    fprintf(to,
            "usage: simdbloom-bench-window-peers [--keys N[,N...]] [--fpp P[,P...]] [--reps R]\n"
            "  simdbloom's window and ring against Bitcoin Core's rolling filter and an\n"
            "  age-partitioned Bloom filter, for a window of N keys at rate P (defaults:\n"
            "  --keys 1000000,10000000 --fpp 0.01,0.0001 --reps 3)\n");
}

int main(int argc, char **argv)
{
    const char *sizes = "1000000,10000000", *rates = "0.01,0.0001";
    int reps = 3;
    for (int i = 1; i < argc; i += 2) { /* options and their values */
        const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!value) {
            usage(stderr);
            return 2;
        }
        if (!strcmp(arg, "--keys"))
            sizes = value;
        else if (!strcmp(arg, "--fpp"))
            rates = value;
        else if (!strcmp(arg, "--reps"))
            reps = atoi(value);
        else {
            usage(stderr);
            return 2;
        }
    }
    if (reps < 1) {
        usage(stderr);
        return 2;
    }
    printf("windows of N keys at rate P: test-and-add of a window of fresh keys (steady state) and "
           "lookups of absent ones, ns a key, best of %d; x: over simdbloom's window\n",
           reps);
    printf("%11s  %-6s  %-8s %6s  %8s  %7s  %8s  %7s  %9s\n", "keys", "rate", "filter", "bits",
           "add", "x", "miss", "x", "measured");
    for (const char *s = sizes; *s;) {
        char *end;
        uint64_t n = strtoull(s, &end, 10);
        if (end == s || n < 1000) {
            usage(stderr);
            return 2;
        }
        for (const char *r = rates; *r;) {
            char *rend;
            double fpp = strtod(r, &rend);
            if (rend == r || !(fpp > 0 && fpp < 1)) {
                usage(stderr);
                return 2;
            }
            if (run_size(n, fpp, reps) != 0)
                return 1;
            r = *rend == ',' ? rend + 1 : rend;
        }
        s = *end == ',' ? end + 1 : end;
    }
    return 0;
}
