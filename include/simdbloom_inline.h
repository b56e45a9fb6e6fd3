/*
 * simdbloom's single-key calls written out inline for callers compiled with AVX2: the block probe
 * of the bit layouts, so that a loop of sbloom_add_hash / sbloom_contains_hash calls compiles to
 * the probe itself (simdbloom.h, "Single keys, inline", says when they apply and how to turn them
 * off). Included by simdbloom.h only, after the declarations it uses; never on its own.
 */
#ifndef SIMDBLOOM_INLINE_H
#define SIMDBLOOM_INLINE_H

#ifndef SIMDBLOOM_H
#error "simdbloom_inline.h is included by simdbloom.h: include that"
#endif

/* Casts that C and C++ (-Wold-style-cast) both accept. */
#ifdef __cplusplus
#define SBLOOM_CAST_(type, value) static_cast<type>(value)
#define SBLOOM_REINTERPRET_(type, value) reinterpret_cast<type>(value)
#else
#define SBLOOM_CAST_(type, value) ((type)(value))
#define SBLOOM_REINTERPRET_(type, value) ((type)(value))
#endif

/* The bit layouts' definition (docs/FORMAT.md), eight words at a time: the block is the
 * multiply-high of the hash's high 32 bits by the block count; word i of the block gets the bit
 * numbered by the top bits of the low 32 bits times salt i (5 bits for 32-bit words, 6 for
 * 64-bit ones). */
static const uint32_t sbloom_inline_salts_[16] = {
    SBLOOM_SALT0_,  SBLOOM_SALT1_,  SBLOOM_SALT2_,  SBLOOM_SALT3_, SBLOOM_SALT4_,  SBLOOM_SALT5_,
    SBLOOM_SALT6_,  SBLOOM_SALT7_,  SBLOOM_SALT8_,  SBLOOM_SALT9_, SBLOOM_SALT10_, SBLOOM_SALT11_,
    SBLOOM_SALT12_, SBLOOM_SALT13_, SBLOOM_SALT14_, SBLOOM_SALT15_};
/* block512-k8's eight salts paired for one multiply: words 0 and 4, 1 and 5, 2 and 6, 3 and 7. */
static const uint32_t sbloom_inline_k8_salts_[8] = {SBLOOM_SALT0_, SBLOOM_SALT4_, SBLOOM_SALT1_,
                                                    SBLOOM_SALT5_, SBLOOM_SALT2_, SBLOOM_SALT6_,
                                                    SBLOOM_SALT3_, SBLOOM_SALT7_};

/* The block of a hash: the multiply-high of its high 32 bits by the block count. */
static inline uint64_t sbloom_inline_block_(uint64_t hash, uint64_t nblocks)
{
    return ((hash >> 32) * nblocks) >> 32;
}

/* Eight 32-bit words from eight salts (from salt `first`): 1 << ((key * salt) >> 27). */
static inline __m256i sbloom_inline_bits32_(uint32_t key, int first)
{
    __m256i salt =
        _mm256_loadu_si256(SBLOOM_REINTERPRET_(const __m256i *, sbloom_inline_salts_ + first));
    __m256i shift =
        _mm256_srli_epi32(_mm256_mullo_epi32(_mm256_set1_epi32(SBLOOM_CAST_(int, key)), salt), 27);
    return _mm256_sllv_epi32(_mm256_set1_epi32(1), shift);
}

/* block512-k8's eight 64-bit words, in two halves: one multiply leaves word l's product in the
 * low half of 64-bit lane l and word l + 4's in its high half (the salts in that order), so each
 * half's top 6 bits shift a 1 into place with no widening. */
static inline void sbloom_inline_bits_k8_(uint32_t key, __m256i *low, __m256i *high)
{
    __m256i product = _mm256_mullo_epi32(
        _mm256_set1_epi32(SBLOOM_CAST_(int, key)),
        _mm256_loadu_si256(SBLOOM_REINTERPRET_(const __m256i *, sbloom_inline_k8_salts_)));
    __m256i one = _mm256_set1_epi64x(1);
    /* the low half's top 6 bits moved to the top, then down: no mask constant to build */
    *low = _mm256_sllv_epi64(one, _mm256_srli_epi64(_mm256_slli_epi64(product, 32), 58));
    *high = _mm256_sllv_epi64(one, _mm256_srli_epi64(product, 58));
}

/* Each layout's probe: 1 when every bit of the key is set in its block (before the add, with
 * add). One function a layout, so that a caller's loop runs only its own layout's code. */
static inline int sbloom_inline_parquet_(void *blocks, uint64_t nblocks, uint64_t hash, int add)
{
    __m256i *at = SBLOOM_REINTERPRET_(__m256i *, blocks) + sbloom_inline_block_(hash, nblocks);
    __m256i bits = sbloom_inline_bits32_(SBLOOM_CAST_(uint32_t, hash), 0);
    __m256i old = _mm256_load_si256(at);
    if (add)
        _mm256_store_si256(at, _mm256_or_si256(old, bits));
    return _mm256_testc_si256(old, bits); /* no bit of `bits` missing from `old` */
}

/* A 64-byte block as two halves: 1 when every bit of `low` and `high` is set (before the add,
 * with add, which ORs them in). */
static inline int sbloom_inline_halves_(__m256i *at, __m256i low, __m256i high, int add)
{
    __m256i old_low = _mm256_load_si256(at), old_high = _mm256_load_si256(at + 1);
    __m256i lacking =
        _mm256_or_si256(_mm256_andnot_si256(old_low, low), _mm256_andnot_si256(old_high, high));
    if (add) {
        _mm256_store_si256(at, _mm256_or_si256(old_low, low));
        _mm256_store_si256(at + 1, _mm256_or_si256(old_high, high));
    }
    return _mm256_testz_si256(lacking, lacking); /* no bit of the key missing */
}

static inline int sbloom_inline_k8_(void *blocks, uint64_t nblocks, uint64_t hash, int add)
{
    __m256i low, high;
    sbloom_inline_bits_k8_(SBLOOM_CAST_(uint32_t, hash), &low, &high);
    return sbloom_inline_halves_(SBLOOM_REINTERPRET_(__m256i *, blocks) +
                                     2u * sbloom_inline_block_(hash, nblocks),
                                 low, high, add);
}

static inline int sbloom_inline_k16_(void *blocks, uint64_t nblocks, uint64_t hash, int add)
{
    return sbloom_inline_halves_(SBLOOM_REINTERPRET_(__m256i *, blocks) +
                                     2u * sbloom_inline_block_(hash, nblocks),
                                 sbloom_inline_bits32_(SBLOOM_CAST_(uint32_t, hash), 0),
                                 sbloom_inline_bits32_(SBLOOM_CAST_(uint32_t, hash), 8), add);
}

/* A lookup's probe, from the view's blocks and count read beforehand: 1 when every bit of the
 * key is set, 0 when one is missing; *probed is 0 for a layout the lookup leaves to the library.
 * It covers Parquet and block512-k8 only: a compiler then finds a loop of lookups small enough
 * to split into one loop per layout (gcc's -funswitch-loops, at -O3), each as tight as a
 * single-layout filter's. With block512-k16 too it did not (gcc 12). */
static inline int sbloom_inline_lookup_(void *blocks, uint64_t nblocks, uint32_t layout,
                                        uint64_t hash, int *probed)
{
    *probed = 1;
    if (layout == 1u) /* SBLOOM_LAYOUT_PARQUET: 8 words of 32 bits, 32-byte blocks */
        return sbloom_inline_parquet_(blocks, nblocks, hash, 0);
    if (layout == 2u) /* SBLOOM_LAYOUT_BLOCK512_K8: 8 words of 64 bits */
        return sbloom_inline_k8_(blocks, nblocks, hash, 0);
    *probed = 0;
    return 0;
}

/* The library's add, for the filters the inline add leaves to it. Out of line and cold, so that
 * a caller's loop of adds keeps its constants in registers across the call instead of building
 * them again for every key (a loop of adds to a 125 KB Parquet filter, 100K keys: 1.63 -> 1.57
 * ns a key, docs/notes/kernels-history.md). */
#if defined(__GNUC__)
#define SBLOOM_COLD_ static __attribute__((cold, noinline, unused))
#else
#define SBLOOM_COLD_ static inline
#endif
SBLOOM_COLD_ int sbloom_add_hash_call_(sbloom_t *filter, uint64_t hash)
{
    return (sbloom_add_hash)(filter, hash);
}

static inline int sbloom_add_hash_inline_(sbloom_t *filter, uint64_t hash)
{
    sbloom_inline_view *view = SBLOOM_REINTERPRET_(sbloom_inline_view *, filter);
    uint32_t layout;
    if (!filter)
        return sbloom_add_hash_call_(filter, hash);
    layout = view->inline_add;
    if (layout == 1u) {
        if (sbloom_inline_parquet_(view->blocks, view->nblocks, hash, 1))
            return 0;
    } else if (layout == 2u) {
        if (sbloom_inline_k8_(view->blocks, view->nblocks, hash, 1))
            return 0;
    } else if (layout == 3u) {
        if (sbloom_inline_k16_(view->blocks, view->nblocks, hash, 1))
            return 0;
    } else {
        return sbloom_add_hash_call_(filter, hash);
    }
    /* A branch on the key's bits, not items += fresh: the count then waits for the prediction,
     * not for the block's cache miss, and the next keys' probes start meanwhile. */
    view->items++;
    return 1;
}

/* The view's members are read whether or not the filter is NULL (from sbloom_inline_null_view
 * then) and before the layout test, and the library's lookup is declared pure: a compiler then
 * reads them once for a whole loop of lookups, not once a key. */
static inline int sbloom_contains_hash_inline_(const sbloom_t *filter, uint64_t hash)
{
    const sbloom_inline_view *view =
        filter ? SBLOOM_REINTERPRET_(const sbloom_inline_view *, filter) : &sbloom_inline_null_view;
    void *blocks = view->blocks;
    uint64_t nblocks = view->nblocks;
    int probed;
    int present = sbloom_inline_lookup_(blocks, nblocks, view->inline_contains, hash, &probed);
    if (!probed)
        return (sbloom_contains_hash)(filter, hash);
    return present;
}

#define sbloom_add_hash(filter, hash) sbloom_add_hash_inline_((filter), (hash))
#define sbloom_contains_hash(filter, hash) sbloom_contains_hash_inline_((filter), (hash))

#endif /* SIMDBLOOM_INLINE_H */
