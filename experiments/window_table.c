/*
 * simdbloom-bench-window-table [--keys N[,N...]] [--periods G] [--reps R] [--fpp P] [--load L]:
 * a design measurement for the windowed filter (docs/notes/window.md), not a form of the library:
 * the prototype the library's fingerprint window (the ages form, src/modes/windowed.c) grew from,
 * kept in experiments/ as it was measured.
 *
 * It times a prototype that is not in the library, a table of fingerprints with an age in each
 * entry, beside the library's windowed filter and the plain filter, all planned for N keys per
 * window at rate P (default 1e-6) with a window of G periods (default 3), alternated in one run,
 * best of R (default 5): test-and-add of N fresh keys in the window's steady state (N / G a
 * period, the clock moved between periods: rotations are in the time) and lookups of N absent
 * keys. Pre-hashed 64-bit keys, batches of 4,096, as simdbloom-bench-window.
 *
 * The table: buckets of one 64-byte line, sixteen 32-bit entries each, an entry the top 28 bits of
 * the hash's low half (its fingerprint) and, in its low 4 bits, 1 + the generation that took it
 * (0: empty). A key may sit in two buckets (its block index, and the other one of a cuckoo pair:
 * (H(fingerprint) - bucket) mod buckets, which maps each of the two to the other); a lookup reads
 * both lines and looks for its fingerprint under any live age; an add that finds it nowhere puts
 * it into an empty entry of either, else moves entries to their other buckets (at most 500
 * moves). A new period clears the entries of the generation that leaves the window (one pass).
 * Sized for the keys of G + 1 periods at load L (default 0.9). Its false-positive rate is about
 * 2 x 16 x L / 2^28 (1.1e-7) whatever G. It prints ns a key, the ratios to the plain filter,
 * memory over the plain filter's, and checks: adds that found no room (the table overfull), keys
 * reported new that a lookup no longer finds (false negatives: must be 0), absent keys found.
 *
 * "table2" is a second form of it, the first bucket first (below, at table_add2): a key goes to
 * its own bucket while that has room, and a lookup reads the other bucket only when the first is
 * marked as having sent keys there; 15 entries a bucket, sized at load L2 (--load2, default 0.8).
 * Its ages turn over 16 values and a new period clears a slice of the table, not a generation of
 * all of it (advance2).
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, madvise */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "simdbloom.h"
#include "window_keys.h"

#define BATCH 4096
#define ENTRIES 16    /* a bucket: one 64-byte line */
#define MAX_MOVES 500 /* cuckoo moves an add may take before it gives up */
#define AHEAD 16      /* keys whose two buckets are requested ahead */
#define AGE_BITS 4    /* 1 + generation, 0 for an empty entry: up to 15 generations */
#define AGE_MASK ((1u << AGE_BITS) - 1)
#define FIRST_FORM_PERIODS 14 /* the first form's ages: 1 + generation, G + 1 of them */
#define FIRST_AHEAD 48        /* table2: keys whose first bucket is requested ahead (16 and 8: */
#define SECOND_AHEAD 16       /* 29.5 / 26.0 ns at 100M keys, against 27.5 / 22.0) */
#define SLOTS 15              /* entries a bucket; entry 15 is the marker */
#define SECOND 0x10u          /* in its other bucket */
#define FP2_MASK 0xFFFFFFE0u

/* The second form's live ages (at live_ages): keep[a] is the fingerprint mask for a live age a,
 * else 0; the live ages are also `count` ones from `oldest` on, turning over 16 (the SSE2 form's
 * reading of them). */
typedef struct {
    _Alignas(64) uint32_t keep[16];
    uint32_t oldest, count;
    uint32_t bits; /* a bit per live age, as the markers hold them */
} live_set;

typedef struct {
    uint32_t *restrict entries; /* buckets x ENTRIES (restrict: the counters below are not
                                 * reloaded after every entry written) */
    uint64_t buckets;
    uint32_t periods, generations;
    uint64_t period;   /* the current period */
    uint32_t age;      /* its entries' age bits: 1 + period % generations */
    int primary_first; /* the second form (below): 15 entries and a marker a bucket */
    uint32_t victim;   /* the entry the next move takes, turning */
    uint64_t failed;   /* adds that found no room */
    uint64_t moves;    /* entries moved to their other bucket */
    double sweep_s;    /* seconds spent clearing generations */
    /* the second form's live ages (below, at live_ages), the next bucket its slices clear */
    live_set ages;
    uint64_t sweep_next;
} age_table;

/* ---- the prototype ---- */

static void live_ages(age_table *t, uint64_t to);

static int table_init(age_table *t, uint64_t n, uint32_t periods, double load, int primary_first)
{
    memset(t, 0, sizeof *t);
    t->periods = periods;
    t->generations = periods + 1;
    t->age = primary_first ? 0 : 1; /* period 0's: 1 + generation in the first form */
    t->primary_first = primary_first;
    double keys = (double)n * t->generations / periods; /* G + 1 periods' keys at most */
    t->buckets = (uint64_t)(keys / ((primary_first ? SLOTS : ENTRIES) * load)) + 1;
    /* mapped and backed by huge pages where the kernel agrees, as the library's filters are
     * (src/base/memory.c): page walks would otherwise be what this measures */
    void *p =
        mmap(NULL, t->buckets * 64, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 0;
#ifdef MADV_HUGEPAGE
    madvise(p, t->buckets * 64, MADV_HUGEPAGE);
#endif
    t->entries = p;
    memset(t->entries, 0, t->buckets * 64);
    if (primary_first)
        live_ages(t, 0);
    return 1;
}

static uint32_t fingerprint_of(uint64_t hash)
{
    uint32_t fp = (uint32_t)hash & ~AGE_MASK;
    return fp ? fp : 1u << AGE_BITS;
}

static uint64_t first_bucket(const age_table *t, uint64_t hash)
{
    return ((hash >> 32) * t->buckets) >> 32; /* the library's block index */
}

/* The other bucket of a pair: (H - bucket) mod buckets, so other(other(b)) == b. */
static uint64_t other_bucket(const age_table *t, uint64_t bucket, uint32_t fingerprint)
{
    uint64_t h = ((uint64_t)(uint32_t)(fingerprint * 0x9E3779B1u) * t->buckets) >> 32;
    return h >= bucket ? h - bucket : h + t->buckets - bucket;
}

static uint32_t *bucket_at(const age_table *t, uint64_t bucket)
{
    return t->entries + bucket * ENTRIES;
}

/* One reading of a bucket: whether an entry among `lanes` (a bit per entry) holds the fingerprint
 * (the entry's bits under fp_mask; an empty entry is 0 and no fingerprint is: a fingerprint of 0
 * is taken as another, so a match is a live entry), and a bit per empty entry among them. The
 * first form reads all 16 entries, the second 15 (its 16th is the marker). SSE2 (x86-64's
 * baseline): four entries a compare; else a loop. */
#define ALL_LANES 0xFFFFu
#define ENTRY_LANES 0x7FFFu /* the second form's */
static int bucket_match(const uint32_t *b, uint32_t fingerprint, uint32_t fp_mask, unsigned lanes,
                        unsigned *empty)
{
#if defined(__AVX512F__) /* built with -march=native on such a CPU: the bucket is one register */
    __m512i v = _mm512_load_si512((const void *)b);
    __mmask16 hit = _mm512_mask_cmpeq_epi32_mask(
        (__mmask16)lanes, _mm512_and_si512(v, _mm512_set1_epi32((int)fp_mask)),
        _mm512_set1_epi32((int)fingerprint));
    *empty = _mm512_mask_testn_epi32_mask((__mmask16)lanes, v, v);
    return hit != 0;
#elif defined(__SSE2__)
    const __m128i mask = _mm_set1_epi32((int)fp_mask), want = _mm_set1_epi32((int)fingerprint);
    unsigned hits = 0, free_bits = 0;
    for (int i = 0; i < ENTRIES; i += 4) {
        __m128i v = _mm_load_si128((const __m128i *)(b + i));
        __m128i hit = _mm_cmpeq_epi32(_mm_and_si128(v, mask), want);
        __m128i zero = _mm_cmpeq_epi32(v, _mm_setzero_si128());
        hits |= (unsigned)_mm_movemask_ps(_mm_castsi128_ps(hit)) << i;
        free_bits |= (unsigned)_mm_movemask_ps(_mm_castsi128_ps(zero)) << i;
    }
    *empty = free_bits & lanes;
    return (hits & lanes) != 0;
#else
    unsigned hits = 0, free_bits = 0;
    for (int i = 0; i < ENTRIES; i++) {
        hits |= (unsigned)((b[i] & fp_mask) == fingerprint) << i;
        free_bits |= (unsigned)(b[i] == 0) << i;
    }
    *empty = free_bits & lanes;
    return (hits & lanes) != 0;
#endif
}

static int bucket_read(const uint32_t *b, uint32_t fingerprint, unsigned *empty)
{
    return bucket_match(b, fingerprint, ~AGE_MASK, ALL_LANES, empty);
}

/* Puts entry into an empty entry among lanes: 1, or 0 when there is none. */
static int bucket_put(uint32_t *b, uint32_t entry, unsigned lanes)
{
    unsigned empty;
    bucket_match(b, 0, 0, lanes, &empty);
    if (!empty)
        return 0;
    b[__builtin_ctz(empty)] = entry;
    return 1;
}

static int table_held(const age_table *t, uint64_t hash)
{
    uint32_t fp = fingerprint_of(hash);
    uint64_t b1 = first_bucket(t, hash);
    unsigned empty;
    return bucket_read(bucket_at(t, b1), fp, &empty) |
           bucket_read(bucket_at(t, other_bucket(t, b1, fp)), fp, &empty);
}

/* Test-and-add: both buckets read once; a new key goes into the first with an empty entry (a
 * conditional move, not a branch), or, when both are full, moves entries to their other buckets. */
static int table_add(age_table *t, uint64_t hash)
{
    uint32_t fp = fingerprint_of(hash);
    uint64_t b1 = first_bucket(t, hash), b2 = other_bucket(t, b1, fp);
    unsigned empty1, empty2;
    if (bucket_read(bucket_at(t, b1), fp, &empty1) | bucket_read(bucket_at(t, b2), fp, &empty2))
        return 0;
    uint32_t entry = fp | t->age;
    int second = empty1 == 0;
    unsigned empty = second ? empty2 : empty1;
    if (empty) {
        bucket_at(t, second ? b2 : b1)[__builtin_ctz(empty)] = entry;
        return 1;
    }
    uint64_t b = b1;
    for (int move = 0; move < MAX_MOVES; move++) {
        uint32_t *at = bucket_at(t, b) + (t->victim++ & (ENTRIES - 1));
        uint32_t moved = *at;
        t->moves++;
        *at = entry;
        entry = moved;
        b = other_bucket(t, b, fingerprint_of(moved));
        if (bucket_put(bucket_at(t, b), entry, ALL_LANES))
            return 1;
    }
    t->failed++; /* the last entry moved out has no room: it is lost */
    return 1;
}

/* ---- the second form: the first bucket first ----
 *
 * A key's own bucket (its block index) holds it when it has room; only when that bucket is full
 * does the key go to its other bucket, and the full bucket notes the key's age in a marker (its
 * 16th entry: a bit per age). A lookup reads the other bucket only when the first lacks the key
 * and its marker names a live age: most keys cost one line, as in a plain filter. An entry: 27
 * bits of fingerprint, a bit that says it sits in its other bucket, 4 age bits; an empty entry is
 * 0 (no fingerprint is). Moves (both buckets full) keep the markers: an entry moved out of its
 * own bucket marks that bucket.
 *
 * Ages turn over 16 values (period % 16), not G + 1, and a new period clears nothing at once: an
 * entry whose age is not one of the window's G + 1 live ones reads as empty (an add may take its
 * place) and matches nothing, and a marker's dead bits are ignored. Each new period clears the
 * dead entries and marker bits of a 1 / (16 - G) slice of the table (advance2), so every bucket
 * is cleared between an age's last live period and its return 16 periods after its first: G <=
 * 15. (The first version cleared the whole table each period: 1.5-2.9 ns an add at 1M keys on
 * the dev VM, against 0.2-0.3 so.) */

#define AGES 16 /* ages 0 to 15 turn */

/* The ages of periods from .. to (from <= to, at most AGES of them) as a live set. */
static void live_set_of(live_set *ls, uint64_t from, uint64_t to)
{
    uint32_t bits = 0;
    for (uint64_t q = from; q <= to; q++)
        bits |= 1u << (q % AGES);
    for (uint32_t a = 0; a < 16; a++)
        ls->keep[a] = (bits >> a) & 1 ? FP2_MASK : 0;
    ls->oldest = (uint32_t)(from % AGES);
    ls->count = (uint32_t)(to - from + 1);
    ls->bits = bits;
}

/* The live ages at period `to`: those of periods to - G .. to. */
static void live_ages(age_table *t, uint64_t to)
{
    live_set_of(&t->ages, to >= t->periods ? to - t->periods : 0, to);
}

/* One reading of a second-form bucket: a bit per entry among the 15 holding the fingerprint
 * under a live age, and a bit per entry that is empty or dead into *empty. */
static inline unsigned bucket_read2(const uint32_t *b, const live_set *ls, uint32_t fingerprint,
                                    unsigned *empty)
{
#if defined(__AVX512F__)
    /* each entry's age (its low 4 bits) picks its lane of keep: its fingerprint mask or 0; an
     * empty entry (0) or a dead one leaves 0 */
    __m512i v = _mm512_load_si512((const void *)b);
    __m512i held =
        _mm512_and_si512(v, _mm512_permutexvar_epi32(v, _mm512_load_si512((const void *)ls->keep)));
    *empty = _mm512_mask_testn_epi32_mask((__mmask16)ENTRY_LANES, held, held);
    return _mm512_mask_cmpeq_epi32_mask((__mmask16)ENTRY_LANES, held,
                                        _mm512_set1_epi32((int)fingerprint));
#elif defined(__AVX2__)
    /* eight entries a step: an entry is live when it is not 0 and (its age - oldest) mod 16 <
     * count (the subtraction's borrow runs into the fingerprint's bits, masked off) */
    const __m256i ages = _mm256_set1_epi32(AGE_MASK), oldest = _mm256_set1_epi32((int)ls->oldest),
                  count = _mm256_set1_epi32((int)ls->count),
                  fp_mask = _mm256_set1_epi32((int)FP2_MASK),
                  want = _mm256_set1_epi32((int)fingerprint), zero = _mm256_setzero_si256();
    unsigned hits = 0, live_bits = 0;
    for (int i = 0; i < ENTRIES; i += 8) {
        __m256i v = _mm256_load_si256((const __m256i *)(b + i));
        __m256i since = _mm256_and_si256(_mm256_sub_epi32(v, oldest), ages);
        __m256i live =
            _mm256_andnot_si256(_mm256_cmpeq_epi32(v, zero), _mm256_cmpgt_epi32(count, since));
        __m256i hit =
            _mm256_cmpeq_epi32(_mm256_and_si256(v, _mm256_and_si256(live, fp_mask)), want);
        hits |= (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(hit)) << i;
        live_bits |= (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(live)) << i;
    }
    *empty = ~live_bits & ENTRY_LANES;
    return hits & ENTRY_LANES;
#elif defined(__SSE2__)
    /* four entries a step, as above */
    const __m128i ages = _mm_set1_epi32(AGE_MASK), oldest = _mm_set1_epi32((int)ls->oldest),
                  count = _mm_set1_epi32((int)ls->count), fp_mask = _mm_set1_epi32((int)FP2_MASK),
                  want = _mm_set1_epi32((int)fingerprint), zero = _mm_setzero_si128();
    unsigned hits = 0, live_bits = 0;
    for (int i = 0; i < ENTRIES; i += 4) {
        __m128i v = _mm_load_si128((const __m128i *)(b + i));
        __m128i since = _mm_and_si128(_mm_sub_epi32(v, oldest), ages);
        __m128i live = _mm_andnot_si128(_mm_cmpeq_epi32(v, zero), _mm_cmplt_epi32(since, count));
        __m128i hit = _mm_cmpeq_epi32(_mm_and_si128(v, _mm_and_si128(live, fp_mask)), want);
        hits |= (unsigned)_mm_movemask_ps(_mm_castsi128_ps(hit)) << i;
        live_bits |= (unsigned)_mm_movemask_ps(_mm_castsi128_ps(live)) << i;
    }
    *empty = ~live_bits & ENTRY_LANES;
    return hits & ENTRY_LANES;
#else
    unsigned hits = 0, free_bits = 0;
    for (int i = 0; i < SLOTS; i++) {
        uint32_t held = b[i] & ls->keep[b[i] & AGE_MASK];
        hits |= (unsigned)(held == fingerprint) << i;
        free_bits |= (unsigned)(held == 0) << i;
    }
    *empty = free_bits;
    return hits;
#endif
}

static uint32_t fingerprint2_of(uint64_t hash)
{
    uint32_t fp = (uint32_t)hash & FP2_MASK;
    return fp ? fp : 1u << 5;
}

/* The addresses of keys[0, n), computed before their probes (one pass; an AVX-512 form of it
 * measured no faster, docs/notes/window.md): first buckets, other buckets, fingerprints. */
static void key_places2(const age_table *t, const uint64_t *keys, size_t n, uint32_t *firsts,
                        uint32_t *others, uint32_t *fingerprints)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t fp = fingerprint2_of(keys[i]);
        uint64_t b1 = first_bucket(t, keys[i]);
        firsts[i] = (uint32_t)b1;
        others[i] = (uint32_t)other_bucket(t, b1, fp);
        fingerprints[i] = fp;
    }
}

/* a when `cond` is 0, else b, without a branch: gcc 12 compiles `cond ? b : a` on a marker read
 * from memory to a branch, which goes either way at random (the marker is set in 39% of the
 * buckets at load 0.8); the empty asm keeps it from turning the mask back into one. */
static inline uint64_t select_if(uint64_t cond, uint64_t a, uint64_t b)
{
    uint64_t all = -(uint64_t)(cond != 0);
    __asm__("" : "+r"(all));
    return a ^ ((a ^ b) & all);
}

/* What a batch of the second form reads of its table, copied once so that the compiler keeps it
 * in registers across the entries' stores (read through the table's own fields, the ages and the
 * masks were loaded again after each store). */
typedef struct {
    uint32_t *entries;
    uint32_t age;
    live_set ages;
} view2;

static inline void view2_of(const age_table *t, view2 *v)
{
    v->entries = t->entries;
    v->age = t->age;
    v->ages = t->ages;
}

/* A lookup, the second form: the other bucket is read when the first is marked, else the first
 * again (in the cache), chosen without a branch (select_if). */
static inline int table_held2_at(const view2 *v, uint32_t fp, uint64_t b1, uint64_t b2)
{
    const uint32_t *first = v->entries + b1 * ENTRIES;
    unsigned empty;
    unsigned hit = bucket_read2(first, &v->ages, fp, &empty);
    uint32_t marked = first[SLOTS] & v->ages.bits;
    unsigned hit2 =
        bucket_read2(v->entries + select_if(marked, b1, b2) * ENTRIES, &v->ages, fp, &empty);
    return (hit | (hit2 & -(unsigned)(marked != 0))) != 0;
}

static int table_held2(const age_table *t, uint64_t hash)
{
    uint32_t b1, b2, fp;
    key_places2(t, &hash, 1, &b1, &b2, &fp);
    view2 v;
    view2_of(t, &v);
    return table_held2_at(&v, fp, b1, b2);
}

/* Both buckets full: entries moved on to their other buckets (a dead entry taken ends it). */
static int make_room2(age_table *t, uint64_t b2, uint32_t entry)
{
    uint64_t b = b2;
    for (int move = 0; move < MAX_MOVES; move++) {
        uint32_t *at = bucket_at(t, b) + t->victim++ % SLOTS;
        uint32_t moved = *at;
        t->moves++;
        *at = entry;
        if (!(moved & t->ages.keep[moved & AGE_MASK])) /* empty or dead */
            return 1;
        if (!(moved & SECOND)) /* leaves its own bucket b: b marks its age */
            bucket_at(t, b)[SLOTS] |= 1u << (moved & AGE_MASK);
        entry = moved ^ SECOND;
        b = other_bucket(t, b, moved & FP2_MASK);
        unsigned empty;
        bucket_read2(bucket_at(t, b), &t->ages, 0, &empty);
        if (empty) {
            bucket_at(t, b)[__builtin_ctz(empty)] = entry;
            return 1;
        }
    }
    t->failed++;
    return 1;
}

/* Test-and-add, the second form. The other bucket is read when the first is marked (else the
 * first again, chosen by a mask), and again when the first is full; the entry goes to the first
 * while it has room. A branch-free form (the second line chosen by "marked or full", the entry's
 * place and the marker by masks) took 18.5-19.3 ns an add at 100K keys against 14.2-14.4 for this
 * one (the dev VM, alternated; docs/notes/window.md). */
static inline int table_add2(age_table *t, const view2 *v, uint32_t fp, uint64_t b1, uint64_t b2)
{
    uint32_t *first = v->entries + b1 * ENTRIES;
    unsigned empty1, empty2;
    unsigned hit1 = bucket_read2(first, &v->ages, fp, &empty1);
    uint32_t marked = first[SLOTS] & v->ages.bits;
    uint32_t *second = v->entries + select_if(marked, b1, b2) * ENTRIES;
    unsigned hit2 = bucket_read2(second, &v->ages, fp, &empty2);
    if (hit1 | (hit2 & -(unsigned)(marked != 0)))
        return 0;
    uint32_t entry = fp | v->age;
    if (empty1) {
        first[__builtin_ctz(empty1)] = entry;
        return 1;
    }
    first[SLOTS] |= 1u << v->age; /* a key of this bucket now lives in its other one */
    second = v->entries + b2 * ENTRIES;
    bucket_read2(second, &v->ages, 0, &empty2);
    if (empty2) {
        second[__builtin_ctz(empty2)] = entry | SECOND;
        return 1;
    }
    return make_room2(t, b2, entry | SECOND);
}

/* The clock moved to period `to`: the live ages move, and a slice of the table a period (all of
 * it after 15 - G periods or more) loses its dead entries and marker bits. */
static void advance2(age_table *t, uint64_t to)
{
    if (to <= t->period)
        return;
    double start = now();
    uint64_t slices = AGES - t->periods, steps = to - t->period;
    uint64_t slice = (t->buckets + slices - 1) / slices;
    uint64_t count = steps >= slices ? t->buckets : steps * slice;
    count = count < t->buckets ? count : t->buckets;
    t->period = to;
    t->age = (uint32_t)(to % AGES);
    live_ages(t, to);
    /* what the slices keep: the live ages but the new period's own, whose entries so far are
     * 16 periods old (G = 15 has no other time to clear them) */
    live_set keep;
    live_set_of(&keep, to >= t->periods ? to - t->periods : 0, to - 1);
    for (uint64_t i = 0; i < count; i++) {
        uint32_t *bucket = bucket_at(t, t->sweep_next);
        unsigned dead; /* what reads as empty becomes empty */
        bucket_read2(bucket, &keep, 0, &dead);
#if defined(__AVX512F__)
        _mm512_mask_storeu_epi32(bucket, (__mmask16)dead, _mm512_setzero_si512());
#else
        for (; dead; dead &= dead - 1)
            bucket[__builtin_ctz(dead)] = 0;
#endif
        bucket[SLOTS] &= keep.bits;
        t->sweep_next = t->sweep_next + 1 == t->buckets ? 0 : t->sweep_next + 1;
    }
    t->sweep_s += now() - start;
}

/* The clock moved to period `to`: the generations of the periods that begin are cleared (the
 * first form; the second's at advance2). */
static void table_advance(age_table *t, uint64_t to)
{
    if (t->primary_first) {
        advance2(t, to);
        return;
    }
    if (to <= t->period)
        return;
    double start = now();
    uint64_t from = to - t->period > t->generations ? to - t->generations + 1 : t->period + 1;
    for (uint64_t q = from; q <= to; q++) {
        uint32_t age = (uint32_t)(q % t->generations + 1);
        for (uint64_t b = 0; b < t->buckets; b++) {
            uint32_t *bucket = bucket_at(t, b);
            for (int i = 0; i < ENTRIES; i++)
                bucket[i] = (bucket[i] & AGE_MASK) == age ? 0 : bucket[i];
        }
    }
    t->period = to;
    t->age = (uint32_t)(to % t->generations + 1);
    t->sweep_s += now() - start;
}

/* A key's two buckets requested ahead. always_inline: gcc 12 finds a separate function of two
 * prefetches "pure" and deletes its calls (their result, none, is unused). A read prefetch: the
 * baseline x86-64 build emits nothing for a write one. */
static inline __attribute__((always_inline)) void prefetch_key(const age_table *t, uint64_t hash)
{
    uint64_t b1 = first_bucket(t, hash);
    __builtin_prefetch(bucket_at(t, b1), 0, 3);
    __builtin_prefetch(bucket_at(t, other_bucket(t, b1, fingerprint_of(hash))), 0, 3);
}

/* A batch, each key's two buckets requested AHEAD keys ahead: test-and-add (add) or lookups; the
 * answers into results, their count returned. (One loop: the branch on `add` is the same for every
 * key.) */
static uint64_t table_batch(age_table *t, int add, const uint64_t *keys, size_t n, uint8_t *results)
{
    uint64_t count = 0;
    if (t->primary_first) {
        /* the second form: the first bucket FIRST_AHEAD keys ahead; SECOND_AHEAD keys ahead,
         * where its marker (by then in the cache) names a live age, the other bucket (else the
         * first again). The batch's buckets and fingerprints are computed first, in one pass
         * (before, in a ring of 64 as each key was first requested); whether the other is read
         * is decided at the key's turn, by the marker then. */
        static uint32_t firsts[BATCH], others[BATCH], fingerprints[BATCH];
        key_places2(t, keys, n, firsts, others, fingerprints);
        view2 v;
        view2_of(t, &v);
        for (size_t k = 0; k < n && k < FIRST_AHEAD; k++)
            __builtin_prefetch(v.entries + (uint64_t)firsts[k] * ENTRIES, 0, 3);
        for (size_t j = 0; j < n; j++) {
            size_t k = j + FIRST_AHEAD;
            if (k < n)
                __builtin_prefetch(v.entries + (uint64_t)firsts[k] * ENTRIES, 0, 3);
            k = j + SECOND_AHEAD;
            if (k < n) {
                uint64_t b1 = firsts[k];
                uint32_t marked = v.entries[b1 * ENTRIES + SLOTS] & v.ages.bits;
                __builtin_prefetch(v.entries + select_if(marked, b1, others[k]) * ENTRIES, 0, 3);
            }
            int answer = add ? table_add2(t, &v, fingerprints[j], firsts[j], others[j])
                             : table_held2_at(&v, fingerprints[j], firsts[j], others[j]);
            results[j] = (uint8_t)answer;
            count += (uint64_t)answer;
        }
        return count;
    }
    for (size_t j = 0; j < n; j++) {
        if (j + AHEAD < n)
            prefetch_key(t, keys[j + AHEAD]);
        int answer = add ? table_add(t, keys[j]) : table_held(t, keys[j]);
        results[j] = (uint8_t)answer;
        count += (uint64_t)answer;
    }
    return count;
}

/* ---- the runs: plain filter, the library's window, the table ---- */

enum { PLAIN, WINDOW, TABLE, TABLE2, KINDS };
static const char *const kind_names[KINDS] = {"plain", "window", "table", "table2"};

typedef struct {
    sbloom_t *plain, *window;
    age_table table[2]; /* the two forms: both buckets read, the first bucket first */
} filters;

static int is_table(int kind)
{
    return kind == TABLE || kind == TABLE2;
}

/* Test-and-add of keys[0, n) in batches, `periods` equal shares with the clock moved one period
 * before each, starting at period `first` (the plain filter: one share, no clock); the answers
 * into results[0, n) when all_answers, else into the first BATCH of it, batch by batch. Seconds. */
static double add_keys(filters *f, int kind, const uint64_t *keys, size_t n, uint8_t *results,
                       int all_answers, uint32_t periods, uint64_t first)
{
    double start = now();
    for (uint32_t q = 0; q < periods; q++) {
        if (kind == WINDOW)
            sbloom_advance(f->window, first + q);
        else if (is_table(kind))
            table_advance(&f->table[kind - TABLE], first + q);
        size_t from = n * q / periods, to = n * (q + 1) / periods;
        for (size_t at = from; at < to; at += BATCH) {
            size_t len = to - at < BATCH ? to - at : BATCH;
            uint8_t *answers = all_answers ? results + at : results;
            if (is_table(kind))
                table_batch(&f->table[kind - TABLE], 1, keys + at, len, answers);
            else
                sbloom_add_if_new_hashes(kind == PLAIN ? f->plain : f->window, keys + at, len,
                                         answers);
        }
    }
    return now() - start;
}

static double look_up(filters *f, int kind, const uint64_t *keys, size_t n, uint8_t *results,
                      uint64_t *found)
{
    double start = now();
    for (size_t at = 0; at < n; at += BATCH) {
        size_t len = n - at < BATCH ? n - at : BATCH;
        *found += is_table(kind)
                      ? table_batch(&f->table[kind - TABLE], 0, keys + at, len, results)
                      : (uint64_t)sbloom_contains_hashes(kind == PLAIN ? f->plain : f->window,
                                                         keys + at, len, results);
    }
    return now() - start;
}

/* Keys reported new by the adds (is_new) that a lookup no longer finds: false negatives. A key an
 * add found already held (a false positive) was not added, and may be gone once what matched it
 * leaves the window: the library's promise is about keys reported new (tests/test_window.c). */
static uint64_t lost_keys(const age_table *t, const uint64_t *keys, const uint8_t *is_new, size_t n)
{
    uint64_t lost = 0;
    for (size_t i = 0; i < n; i++)
        lost += is_new[i] && !(t->primary_first ? table_held2(t, keys[i]) : table_held(t, keys[i]));
    return lost;
}

static int run_size(uint64_t n, uint32_t periods, int reps, double p, double load, double load2)
{
    uint64_t *fresh = malloc(n * sizeof *fresh), *absent = malloc(n * sizeof *absent);
    uint8_t results[BATCH], *is_new = malloc(n);
    filters f = {0};
    if (!fresh || !absent || !is_new || sbloom_create(&f.plain, n, p) != SBLOOM_OK ||
        sbloom_create_windowed(&f.window, n, p, periods, 1, 0) != SBLOOM_OK ||
        (periods <= FIRST_FORM_PERIODS && !table_init(&f.table[0], n, periods, load, 0)) ||
        !table_init(&f.table[1], n, periods, load2, 1)) {
        fprintf(stderr, "simdbloom-bench-window-table: out of memory at %llu keys\n",
                (unsigned long long)n);
        return 1;
    }
    fill_keys(absent, n, 0xAB5E47 + n);
    double best[KINDS][2];
    for (int k = 0; k < KINDS; k++)
        best[k][0] = best[k][1] = 1e30;
    uint64_t clock[KINDS] = {0}, missed[2] = {0, 0}, absent_found[KINDS] = {0};
    for (int rep = 0; rep < reps; rep++) {
        for (int kind = 0; kind < KINDS; kind++) {
            if (kind == TABLE && !f.table[0].entries)
                continue; /* more periods than the first form holds */
            double t;
            if (kind == PLAIN) {
                fill_keys(fresh, n, 1000 * (uint64_t)rep + 2);
                sbloom_clear(f.plain);
                t = add_keys(&f, kind, fresh, n, results, 0, 1, 0);
            } else {
                /* the steady state: one window of other keys behind it */
                fill_keys(fresh, n, 1000 * (uint64_t)rep + 1);
                add_keys(&f, kind, fresh, n, results, 0, periods, clock[kind]);
                clock[kind] += periods;
                fill_keys(fresh, n, 1000 * (uint64_t)rep + 2);
                t = add_keys(&f, kind, fresh, n, is_new, is_table(kind), periods, clock[kind]);
                clock[kind] += periods;
            }
            best[kind][0] = t < best[kind][0] ? t : best[kind][0];
            uint64_t found = 0;
            t = look_up(&f, kind, absent, n, results, &found);
            best[kind][1] = t < best[kind][1] ? t : best[kind][1];
            absent_found[kind] += found;
            if (is_table(kind)) /* every key reported new is still there (untimed) */
                missed[kind - TABLE] += lost_keys(&f.table[kind - TABLE], fresh, is_new, n);
        }
    }
    double ns = 1e9 / (double)n;
    double bytes[KINDS] = {(double)sbloom_bytes(f.plain), (double)sbloom_bytes(f.window),
                           (double)f.table[0].buckets * 64, (double)f.table[1].buckets * 64};
    for (int k = 0; k < KINDS; k++)
        if (k != TABLE || f.table[0].entries)
            printf("%11llu  %-7s %7.2f  %5.2fx  %7.2f  %5.2fx  %6.2fx  %9.1f  %12.3g\n",
                   (unsigned long long)n, kind_names[k], best[k][0] * ns,
                   best[k][0] / best[PLAIN][0], best[k][1] * ns, best[k][1] / best[PLAIN][1],
                   bytes[k] / bytes[PLAIN], bytes[k] * 8 / (double)n,
                   (double)absent_found[k] / ((double)n * (double)reps));
    double adds = 2.0 * (double)n * reps; /* the table's adds: two windows a repetition */
    uint64_t marked = 0; /* the second form's buckets whose keys may be in their other one */
    for (uint64_t b = 0; b < f.table[1].buckets; b++)
        marked += (bucket_at(&f.table[1], b)[SLOTS] & f.table[1].ages.bits) != 0;
    for (int k = !f.table[0].entries; k < 2; k++)
        printf("%11s  %s: %.2f moves an add, clearing %.2f ns an add; %llu adds found no room, "
               "%llu keys reported new not found (must be 0)\n",
               "", kind_names[TABLE + k], (double)f.table[k].moves / adds,
               f.table[k].sweep_s * 1e9 / adds, (unsigned long long)f.table[k].failed,
               (unsigned long long)missed[k]);
    printf("%11s  table2: %.1f%% of the buckets marked at the end\n", "",
           100.0 * (double)marked / (double)f.table[1].buckets);
    fflush(stdout);
    sbloom_free(f.plain);
    sbloom_free(f.window);
    for (int k = 0; k < 2; k++)
        if (f.table[k].entries)
            munmap(f.table[k].entries, f.table[k].buckets * 64);
    free(fresh);
    free(absent);
    free(is_new);
    return missed[0] + missed[1] != 0;
}

static void usage(FILE *to)
{
    fprintf(to,
            "usage: simdbloom-bench-window-table [--keys N[,N...]] [--periods G] [--reps R] "
            "[--fpp P]\n                                    [--load L] [--load2 L2]\n"
            "  a design measurement: a fingerprint-and-age table in two forms (prototypes, not\n"
            "  in the library) beside the windowed and the plain filter (defaults: --keys "
            "1000000,100000000\n  --periods 3 --reps 5 --fpp 1e-6 --load 0.9 --load2 0.8); "
            "--periods at most 15,\n"
            "  the first form at most 14\n");
}

int main(int argc, char **argv)
{
    const char *sizes = "1000000,100000000";
    uint32_t periods = 3;
    int reps = 5;
    double p = 1e-6, load = 0.9, load2 = 0.8;
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
        else if (!strcmp(arg, "--periods"))
            periods = (uint32_t)strtoul(value, NULL, 10);
        else if (!strcmp(arg, "--reps"))
            reps = atoi(value);
        else if (!strcmp(arg, "--fpp"))
            p = strtod(value, NULL);
        else if (!strcmp(arg, "--load"))
            load = strtod(value, NULL);
        else if (!strcmp(arg, "--load2"))
            load2 = strtod(value, NULL);
        else {
            usage(stderr);
            return 2;
        }
    }
    if (periods < 1 || periods > 15 || reps < 1 || !(p > 0 && p < 1) || !(load > 0.1 && load < 1) ||
        !(load2 > 0.1 && load2 < 1)) {
        usage(stderr);
        return 2;
    }
    printf("%u periods, rate %g, table load %g; test-and-add of fresh keys (steady state) and "
           "lookups of absent ones, ns a key, best of %d\n",
           periods, p, load, reps);
    printf("%11s  %-7s %7s  %6s  %7s  %6s  %7s  %9s  %12s\n", "keys", "filter", "add", "ratio",
           "miss", "ratio", "memory", "bits/key", "absent found");
    int bad = 0;
    for (const char *s = sizes; *s;) {
        char *end;
        uint64_t n = strtoull(s, &end, 10);
        if (end == s || n < 1000) {
            usage(stderr);
            return 2;
        }
        bad |= run_size(n, periods, reps, p, load, load2);
        s = *end == ',' ? end + 1 : end;
    }
    return bad;
}
