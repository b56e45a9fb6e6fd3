/*
 * AVX-512 kernels (compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq). A 512-bit block is
 * exactly one ZMM register: a probe builds the key's 512-bit mask, loads the line, and asks
 * "is any mask bit clear in the block" with one andnot and one test into a mask register, no
 * branch on the answer. Parquet's 256-bit blocks take the AVX2 form on YMM registers.
 *
 * As in avx2.c, no gathers: every key needs every word of its (contiguous) block.
 */
#include "x86.h"

#if !defined(SIMDBLOOM_X86_SIMDE)
#define SBK_NATIVE_VECTOR 1 /* real AVX-512: concurrent mode uses the vector probe and insert */
/* A ZMM value live from inside a transaction to past its end (kernel_loops.h, transactions) */
#define SBK_UPPER_LIVE_FROM(n)                                                                     \
    __m512i upper_ = _mm512_set1_epi64((long long)(n));                                            \
    __asm__ volatile("" : "+v"(upper_))
#define SBK_UPPER_LIVE_TO() __asm__ volatile("" : : "v"(upper_))
#endif
#include "kernel_loops.h"

static const uint32_t parquet_salts[8] = SBK_PARQUET_SALTS;
static const uint32_t block512_salts[16] = SBK_BLOCK512_SALTS;

/* ---- parquet: 8 x 32-bit words in one YMM register ---- */

static inline __m256i parquet_mask(const uint64_t *key)
{
    __m256i k = _mm256_set1_epi32(sbk_key_low32(key));
    __m256i salt = _mm256_loadu_si256((const __m256i *)parquet_salts);
    __m256i index = _mm256_srli_epi32(_mm256_mullo_epi32(k, salt), 27);
    return _mm256_sllv_epi32(_mm256_set1_epi32(1), index);
}

static inline __m256i *parquet_block(const void *blocks, uint64_t nblocks, uint64_t hash)
{
    return (__m256i *)blocks + sbk_block_index(hash, nblocks);
}

static inline int parquet_probe(const void *blocks, uint64_t nblocks, const uint64_t *key)
{
    return _mm256_testc_si256(_mm256_load_si256(parquet_block(blocks, nblocks, *key)),
                              parquet_mask(key));
}

static inline int parquet_insert(void *blocks, uint64_t nblocks, const uint64_t *key)
{
    __m256i mask = parquet_mask(key);
    __m256i *p = parquet_block(blocks, nblocks, *key);
    __m256i block = _mm256_load_si256(p);
    int absent = !_mm256_testc_si256(block, mask);
    _mm256_store_si256(p, _mm256_or_si256(block, mask));
    return absent;
}

/* ---- 512-bit blocks: one ZMM register ---- */

static inline __m512i *block512(const void *blocks, uint64_t nblocks, uint64_t hash)
{
    return (__m512i *)blocks + sbk_block_index(hash, nblocks);
}

/* k8: the 8 products key * salt[i] in 32-bit lanes, top 6 bits widened to 64-bit lanes, and
 * lane i = 1 << index_i. */
static inline __m512i k8_mask(const uint64_t *key)
{
    __m256i k = _mm256_set1_epi32(sbk_key_low32(key));
    __m256i salt = _mm256_loadu_si256((const __m256i *)block512_salts);
    __m256i index = _mm256_srli_epi32(_mm256_mullo_epi32(k, salt), 26);
    return _mm512_sllv_epi64(_mm512_set1_epi64(1), _mm512_cvtepu32_epi64(index));
}

/* k16: 16 products in 32-bit lanes, top 5 bits, lane i = 1 << index_i. */
static inline __m512i k16_mask(const uint64_t *key)
{
    __m512i k = _mm512_set1_epi32(sbk_key_low32(key));
    __m512i salt = _mm512_loadu_si512((const void *)block512_salts);
    __m512i index = _mm512_srli_epi32(_mm512_mullo_epi32(k, salt), 27);
    return _mm512_sllv_epi32(_mm512_set1_epi32(1), index);
}

/* Lanes where the mask has a bit the block lacks: zero means the key is present. */
static inline __mmask16 missing(__m512i block, __m512i mask)
{
    __m512i clear = _mm512_andnot_si512(block, mask);
    return _mm512_test_epi32_mask(clear, clear);
}

#define BLOCK512_PER_KEY(NAME)                                                                     \
    static inline int NAME##_probe(const void *blocks, uint64_t nblocks, const uint64_t *key)      \
    {                                                                                              \
        __m512i block = _mm512_load_si512(block512(blocks, nblocks, *key));                        \
        return missing(block, NAME##_mask(key)) == 0;                                              \
    }                                                                                              \
    /* test-and-add; with `held` (another line of its window group holds the key, kernel_loops.h's \
     * SBK_DEFINE_LINES_PER_KEY) nothing is added, without a branch. Only the lanes that gain a    \
     * bit are written: a key already present stores nothing, so its cache line stays clean and    \
     * need not be written back to memory. */                                                      \
    static inline int NAME##_insert_unless(void *blocks, uint64_t nblocks, const uint64_t *key,    \
                                           int held)                                               \
    {                                                                                              \
        __m512i mask = NAME##_mask(key);                                                           \
        __m512i *p = block512(blocks, nblocks, *key);                                              \
        __m512i block = _mm512_load_si512(p);                                                      \
        __mmask16 lacking = missing(block, mask) & (__mmask16)(held - 1);                          \
        _mm512_mask_store_epi32(p, lacking, _mm512_or_si512(block, mask));                         \
        return lacking != 0;                                                                       \
    }                                                                                              \
    static inline int NAME##_insert(void *blocks, uint64_t nblocks, const uint64_t *key)           \
    {                                                                                              \
        return NAME##_insert_unless(blocks, nblocks, key, 0);                                      \
    }

BLOCK512_PER_KEY(k8)
BLOCK512_PER_KEY(k16)

/* The masks as the block's bytes, for the concurrent mode's portable forms (kernel_loops.h). */
static inline void parquet_mask_words(const uint64_t *key, uint64_t *words)
{
    _mm256_store_si256((__m256i *)words, parquet_mask(key));
}

static inline void k8_mask_words(const uint64_t *key, uint64_t *words)
{
    _mm512_store_si512(words, k8_mask(key));
}

static inline void k16_mask_words(const uint64_t *key, uint64_t *words)
{
    _mm512_store_si512(words, k16_mask(key));
}

SBK_DEFINE_BATCH_KERNELS(parquet)
SBK_DEFINE_BATCH_KERNELS(k8)
SBK_DEFINE_BATCH_KERNELS(k16)
SBK_DEFINE_LINES_PER_KEY(k8)
SBK_DEFINE_LINES_PER_KEY(k16)
SBK_DEFINE_WINDOW_KERNELS(k8, lines)
SBK_DEFINE_WINDOW_KERNELS(k16, lines)

/* ---- counting512: 8 x 64-bit words of sixteen 4-bit counters, one ZMM register ---- */

/* The first eight block512 salts, each in a 64-bit lane (for vpmuludq, below). */
static const uint64_t block512_salts64[8] = {SBK_SALT0, SBK_SALT1, SBK_SALT2, SBK_SALT3,
                                             SBK_SALT4, SBK_SALT5, SBK_SALT6, SBK_SALT7};

/* Lane i = the 64-bit product of the hash's low 32 bits and salt[i] (vpmuludq multiplies the low
 * 32 bits of each 64-bit lane): its low 32 bits are the layouts' 32-bit product key * salt[i]. */
static inline __m512i block512_products(const uint64_t *key)
{
    return _mm512_mul_epu32(_mm512_set1_epi64((long long)*key),
                            _mm512_loadu_si512((const void *)block512_salts64));
}

/* Lane i = bit offset of the key's counter in word i: 4 * top 4 bits of the 32-bit product
 * key * salt[i], i.e. bits 26-29 of the lane's product masked with 0x3C: one multiply, a shift and
 * an AND in 64-bit lanes from the start (a 32-bit multiply takes two uops, the widening one more).
 */
static inline __m512i counting_shifts(const uint64_t *key)
{
    return _mm512_and_si512(_mm512_srli_epi64(block512_products(key), 26), _mm512_set1_epi64(0x3C));
}

/* Lane i = the key's counter in word i (0 .. 15). */
static inline __m512i counting_counters(__m512i block, __m512i shifts)
{
    return _mm512_and_si512(_mm512_srlv_epi64(block, shifts), _mm512_set1_epi64(SBK_COUNTER_MAX));
}

/* One bit per lane: the key's counter is non-zero / below 15 in that word. */
static inline __mmask8 counting_nonzero(__m512i counters)
{
    return _mm512_test_epi64_mask(counters, counters);
}

static inline __mmask8 counting_below_max(__m512i counters)
{
    return _mm512_cmpneq_epi64_mask(counters, _mm512_set1_epi64(SBK_COUNTER_MAX));
}

static inline int counting_probe(const void *blocks, uint64_t nblocks, const uint64_t *key)
{
    __m512i block = _mm512_load_si512(block512(blocks, nblocks, *key));
    return counting_nonzero(counting_counters(block, counting_shifts(key))) == 0xFF;
}

/* One more at the key's counter in each lane below 15: the masked store leaves saturated
 * counters (and their words) untouched. */
static inline int counting_increment(void *blocks, uint64_t nblocks, const uint64_t *key)
{
    __m512i shifts = counting_shifts(key);
    __m512i *p = block512(blocks, nblocks, *key);
    __m512i block = _mm512_load_si512(p);
    __m512i counters = counting_counters(block, shifts);
    __m512i one = _mm512_sllv_epi64(_mm512_set1_epi64(1), shifts);
    _mm512_mask_store_epi64(p, counting_below_max(counters), _mm512_add_epi64(block, one));
    return counting_nonzero(counters) != 0xFF;
}

/* Refuses (changes nothing) when a counter is zero; else one less in each lane below 15. */
static inline int counting_decrement(void *blocks, uint64_t nblocks, const uint64_t *key)
{
    __m512i shifts = counting_shifts(key);
    __m512i *p = block512(blocks, nblocks, *key);
    __m512i block = _mm512_load_si512(p);
    __m512i counters = counting_counters(block, shifts);
    if (counting_nonzero(counters) != 0xFF)
        return 0;
    __m512i one = _mm512_sllv_epi64(_mm512_set1_epi64(1), shifts);
    _mm512_mask_store_epi64(p, counting_below_max(counters), _mm512_sub_epi64(block, one));
    return 1;
}

SBK_DEFINE_COUNTING_KERNELS(counting)

/* ---- Generation slots (the windowed mode's one-line form, kernels.h): each 4-bit slot a bitmap
 * of generations; a generation holds the key when its bit is set in all eight slots ---- */

/* The bits the key's eight slots share: the words shifted so that lane i starts with its slot of
 * word i, each lane's low byte packed into one integer (vpmovqb), its eight bytes ANDed (halves
 * folded: 8, 4, 2, 1), then the low 4 bits (masked once at the end: ANDing the bits above the
 * slot does not touch the slot's). The fold runs on integer ports, beside the vector work of the
 * next keys. */
static inline uint64_t slots_common(__m512i block, __m512i shifts)
{
    __m512i slots = _mm512_srlv_epi64(block, shifts);
    uint64_t bytes = (uint64_t)_mm_cvtsi128_si64(_mm512_cvtepi64_epi8(slots));
    bytes &= bytes >> 32;
    bytes &= bytes >> 16;
    bytes &= bytes >> 8;
    return bytes & SBK_COUNTER_MAX;
}

static inline int counting_window_held(const void *blocks, uint64_t groups, uint32_t lines,
                                       uint32_t target, const uint64_t *key)
{
    (void)lines, (void)target;
    __m512i block = _mm512_load_si512(block512(blocks, groups, *key));
    return slots_common(block, counting_shifts(key)) != 0;
}

/* The target's bit ORed into the key's slots when no generation held the key (the line stored
 * either way, unchanged when held: no branch on whether the key is new, which a stream of
 * repeats and new keys mixed would mispredict). */
static inline int counting_window_add(void *blocks, uint64_t groups, uint32_t lines,
                                      uint32_t target, const uint64_t *key)
{
    (void)lines;
    __m512i shifts = counting_shifts(key);
    __m512i *p = block512(blocks, groups, *key);
    __m512i block = _mm512_load_si512(p);
    uint64_t is_new = slots_common(block, shifts) == 0;
    __m512i bits = _mm512_sllv_epi64(_mm512_set1_epi64((long long)(is_new << target)), shifts);
    _mm512_store_si512(p, _mm512_or_si512(block, bits));
    return (int)is_new;
}

SBK_DEFINE_WINDOW_KERNELS(counting, 1)

/* ---- XXH64 of 8 keys, one a 64-bit lane (the Parquet layout's string hash) ----
 *
 * xxHash's XXH64 with seed 0, step for step, each lane its own key: the 32-byte stripes, the
 * merge, the length, the 8-byte, 4-byte and 1-byte tail steps and the avalanche, each step done
 * in the lanes whose key still has it (a mask) and the others left as they are. Words are
 * gathered from the keys' own bytes, never past a key's end: the 1-byte steps take their bytes
 * from the key's last 4 bytes (hence at least 4 bytes a key). Scalar XXH64 runs its steps one
 * after another, each multiply waiting on the one before (about 19 ns a 61-byte URL on the dev
 * VM, docs/notes/kernels-history.md); here 8 keys' chains run side by side. Little-endian only
 * (x86): the gathers read the words as XXH64 does. */
#if !defined(SIMDBLOOM_X86_SIMDE)
#define XXH64_P1 UINT64_C(0x9E3779B185EBCA87)
#define XXH64_P2 UINT64_C(0xC2B2AE3D27D4EB4F)
#define XXH64_P3 UINT64_C(0x165667B19E3779F9)
#define XXH64_P4 UINT64_C(0x85EBCA77C2B2AE63)
#define XXH64_P5 UINT64_C(0x27D4EB2F165667C5)

static inline __m512i xxh64_mul(__m512i a, uint64_t prime)
{
    return _mm512_mullo_epi64(a, _mm512_set1_epi64((long long)prime));
}

/* XXH64_round: acc + input * P2, rotated left 31, times P1. */
static inline __m512i xxh64_round(__m512i acc, __m512i input)
{
    acc = _mm512_add_epi64(acc, xxh64_mul(input, XXH64_P2));
    return xxh64_mul(_mm512_rol_epi64(acc, 31), XXH64_P1);
}

/* XXH64_mergeRound: (h ^ round(0, v)) * P1 + P4. */
static inline __m512i xxh64_merge(__m512i h, __m512i v)
{
    h = _mm512_xor_si512(h, xxh64_round(_mm512_setzero_si512(), v));
    return _mm512_add_epi64(xxh64_mul(h, XXH64_P1), _mm512_set1_epi64((long long)XXH64_P4));
}

/* The 8-byte words at the lanes' addresses (lanes outside `m`: 0, not read). */
static inline __m512i xxh64_words(__mmask8 m, __m512i at)
{
    return _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), m, at, NULL, 1);
}

/* The 4-byte words at the lanes' addresses, zero-extended (lanes outside `m`: 0, not read). */
static inline __m512i xxh64_words32(__mmask8 m, __m512i at)
{
    __m256i w = _mm512_mask_i64gather_epi32(_mm256_setzero_si256(), m, at, NULL, 1);
    return _mm512_cvtepu32_epi64(w);
}

static void xxh64_x8(const uint8_t *const keys[8], const size_t lens[8], uint64_t out[8])
{
    const __m512i len = _mm512_loadu_si512((const void *)lens);
    __m512i at = _mm512_loadu_si512((const void *)keys);
    const __m512i zero = _mm512_setzero_si512();
    /* the stripes: lanes of 32 bytes or more, while a whole stripe is left */
    __m512i v1 = _mm512_set1_epi64((long long)(XXH64_P1 + XXH64_P2));
    __m512i v2 = _mm512_set1_epi64((long long)XXH64_P2), v3 = zero;
    __m512i v4 = _mm512_set1_epi64((long long)(0 - XXH64_P1));
    const __mmask8 long_keys = _mm512_cmpge_epu64_mask(len, _mm512_set1_epi64(32));
    __m512i left = len;
    for (__mmask8 m = long_keys; m;
         m = _mm512_mask_cmpge_epu64_mask(m, left, _mm512_set1_epi64(32))) {
        v1 = _mm512_mask_mov_epi64(v1, m, xxh64_round(v1, xxh64_words(m, at)));
        v2 = _mm512_mask_mov_epi64(
            v2, m, xxh64_round(v2, xxh64_words(m, _mm512_add_epi64(at, _mm512_set1_epi64(8)))));
        v3 = _mm512_mask_mov_epi64(
            v3, m, xxh64_round(v3, xxh64_words(m, _mm512_add_epi64(at, _mm512_set1_epi64(16)))));
        v4 = _mm512_mask_mov_epi64(
            v4, m, xxh64_round(v4, xxh64_words(m, _mm512_add_epi64(at, _mm512_set1_epi64(24)))));
        at = _mm512_mask_add_epi64(at, m, at, _mm512_set1_epi64(32));
        left = _mm512_mask_sub_epi64(left, m, left, _mm512_set1_epi64(32));
    }
    __m512i merged =
        _mm512_add_epi64(_mm512_add_epi64(_mm512_rol_epi64(v1, 1), _mm512_rol_epi64(v2, 7)),
                         _mm512_add_epi64(_mm512_rol_epi64(v3, 12), _mm512_rol_epi64(v4, 18)));
    merged = xxh64_merge(xxh64_merge(xxh64_merge(xxh64_merge(merged, v1), v2), v3), v4);
    __m512i h = _mm512_mask_mov_epi64(_mm512_set1_epi64((long long)XXH64_P5), long_keys, merged);
    h = _mm512_add_epi64(h, len);
    /* the tail (len mod 32 bytes): 8-byte steps, a 4-byte step, 1-byte steps */
    for (__mmask8 m = _mm512_cmpge_epu64_mask(left, _mm512_set1_epi64(8)); m;
         m = _mm512_mask_cmpge_epu64_mask(m, left, _mm512_set1_epi64(8))) {
        __m512i k = xxh64_round(zero, xxh64_words(m, at));
        __m512i step = _mm512_xor_si512(h, k);
        step = _mm512_add_epi64(xxh64_mul(_mm512_rol_epi64(step, 27), XXH64_P1),
                                _mm512_set1_epi64((long long)XXH64_P4));
        h = _mm512_mask_mov_epi64(h, m, step);
        at = _mm512_mask_add_epi64(at, m, at, _mm512_set1_epi64(8));
        left = _mm512_mask_sub_epi64(left, m, left, _mm512_set1_epi64(8));
    }
    __mmask8 four = _mm512_cmpge_epu64_mask(left, _mm512_set1_epi64(4));
    if (four) {
        __m512i step = _mm512_xor_si512(h, xxh64_mul(xxh64_words32(four, at), XXH64_P1));
        step = _mm512_add_epi64(xxh64_mul(_mm512_rol_epi64(step, 23), XXH64_P2),
                                _mm512_set1_epi64((long long)XXH64_P3));
        h = _mm512_mask_mov_epi64(h, four, step);
        at = _mm512_mask_add_epi64(at, four, at, _mm512_set1_epi64(4));
        left = _mm512_mask_sub_epi64(left, four, left, _mm512_set1_epi64(4));
    }
    /* 0 to 3 bytes are left: they are the last of the key's last 4 bytes (read as one word) */
    __mmask8 bytes = _mm512_test_epi64_mask(left, left);
    if (bytes) {
        const __m512i ends = _mm512_add_epi64(at, left); /* the key's end */
        __m512i last4 = xxh64_words32(bytes, _mm512_sub_epi64(ends, _mm512_set1_epi64(4)));
        /* the first byte left is byte 4 - left of that word */
        __m512i word = _mm512_srlv_epi64(
            last4, _mm512_slli_epi64(_mm512_sub_epi64(_mm512_set1_epi64(4), left), 3));
        for (__mmask8 m = bytes; m; m = _mm512_mask_cmpgt_epu64_mask(m, left, zero)) {
            __m512i b = _mm512_and_si512(word, _mm512_set1_epi64(0xFF));
            __m512i step = _mm512_xor_si512(h, xxh64_mul(b, XXH64_P5));
            step = xxh64_mul(_mm512_rol_epi64(step, 11), XXH64_P1);
            h = _mm512_mask_mov_epi64(h, m, step);
            word = _mm512_srli_epi64(word, 8);
            left = _mm512_mask_sub_epi64(left, m, left, _mm512_set1_epi64(1));
        }
    }
    /* the avalanche */
    h = _mm512_xor_si512(h, _mm512_srli_epi64(h, 33));
    h = xxh64_mul(h, XXH64_P2);
    h = _mm512_xor_si512(h, _mm512_srli_epi64(h, 29));
    h = xxh64_mul(h, XXH64_P3);
    h = _mm512_xor_si512(h, _mm512_srli_epi64(h, 32));
    _mm512_storeu_si512((void *)out, h);
}
#define SBK_XXH64_X8 xxh64_x8
#else
#define SBK_XXH64_X8 NULL /* SIMDe: the gathers' byte order is the host's */
#endif

/* ---- The fingerprint family (fingerprint.h): the line's main bytes compared with one byte
 * in one ZMM compare into a mask register; the rest of each operation is the word-level form ----
 */

/* VBMI and VBMI2 (simd/avx512_vbmi2.c compiles this file with them, for the CPUs that have them:
 * src/base/dispatch.c checks): a line's bytes moved by one byte permute or compress, its bits
 * across lanes by one funnel shift, and a rotation's ages read by a byte permute and a multishift
 * (fp_age_scan512, below). */
#if defined(__AVX512VBMI__) && defined(__AVX512VBMI2__) && !defined(SIMDBLOOM_X86_SIMDE)
#define SBK_FP_VBMI2 1
#define SBK_FP_AGE_SCAN fp_age_scan512
#define SBK_FP_AGE_SCAN_INIT fp_age_scan512_init
#define SBK_FP_SLOTS_OF_AGE fp_slots_of_age512
#else
#define SBK_FP_VBMI2 0
#endif

#include "fingerprint.h"

/* Bit i set when byte i of the line equals `byte`. */
SBK_FP_INLINE uint64_t fp_matches(const uint64_t *w, uint8_t byte)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return sbk_fp_matches_portable(w, byte); /* SIMDe on a big-endian host: bytes are not bits */
#else
    return (uint64_t)_mm512_cmpeq_epi8_mask(_mm512_load_si512((const void *)w),
                                            _mm512_set1_epi8((char)byte));
#endif
}

/* The line as one 512-bit number in a ZMM register (lane j: bits 64j .. 64j+63). */

/* v shifted up (toward bit 511) across the lanes, lane j's bits by k_j (1 .. 63) and taking
 * the top k_j bits of lane j-1. */
SBK_FP_INLINE __m512i fp_up_lanes(__m512i v, __m512i k)
{
    __m512i below = _mm512_maskz_permutexvar_epi64(0xFE, _mm512_setr_epi64(0, 0, 1, 2, 3, 4, 5, 6),
                                                   v); /* lane j: v's lane j-1, lane 0 zero */
#if SBK_FP_VBMI2
    /* lane j: the high half of (v_j : below_j) << k_j, one funnel shift */
    return _mm512_shldv_epi64(v, below, k);
#else
    return _mm512_or_si512(_mm512_sllv_epi64(v, k),
                           _mm512_srlv_epi64(below, _mm512_sub_epi64(_mm512_set1_epi64(64), k)));
#endif
}

/* v shifted up (toward bit 511) or down by k bits, 1 <= k <= 63, across the lanes. */
SBK_FP_INLINE __m512i fp_up(__m512i v, unsigned k)
{
    return fp_up_lanes(v, _mm512_set1_epi64(k));
}

SBK_FP_INLINE __m512i fp_down(__m512i v, unsigned k)
{
    __m512i above = _mm512_maskz_permutexvar_epi64(0x7F, _mm512_setr_epi64(1, 2, 3, 4, 5, 6, 7, 7),
                                                   v); /* lane j: v's lane j+1, lane 7 zero */
#if SBK_FP_VBMI2
    /* lane j: the low half of (above_j : v_j) >> k, one funnel shift */
    return _mm512_shrdv_epi64(v, above, _mm512_set1_epi64(k));
#else
    return _mm512_or_si512(_mm512_srli_epi64(v, k), _mm512_slli_epi64(above, 64 - k));
#endif
}

#if SBK_FP_VBMI2
/* Byte indexes for a byte permute: byte i of the result takes byte i + delta (vpermb reads the
 * low 6 bits of each index, so i + delta outside 0 .. 63 wraps: callers mask those bytes). */
SBK_FP_INLINE __m512i fp_byte_index(int delta)
{
    static const uint8_t iota[64] = {
        0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
        22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
        44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};
    return _mm512_add_epi8(_mm512_loadu_si512((const void *)iota), _mm512_set1_epi8((char)delta));
}
#endif

SBK_FP_INLINE __m512i fp_lane_bits(void)
{
    return _mm512_setr_epi64(0, 64, 128, 192, 256, 320, 384, 448);
}

/* Bits a_j and above in each lane j (a lane wholly above a_j: all ones; one wholly below it:
 * none), by a variable shift per lane, whose counts of 64 and more give 0. */
SBK_FP_INLINE __m512i fp_from_lanes(__m512i a)
{
    __m512i count = _mm512_max_epi64(_mm512_sub_epi64(a, fp_lane_bits()), _mm512_setzero_si512());
    return _mm512_sllv_epi64(_mm512_set1_epi64(-1), count);
}

/* Bits a and above (none for a >= 512). */
SBK_FP_INLINE __m512i fp_from(unsigned a)
{
    return fp_from_lanes(_mm512_set1_epi64(a));
}

/* Bits [a, b). */
SBK_FP_INLINE __m512i fp_span(unsigned a, unsigned b)
{
    return _mm512_andnot_si512(fp_from(b), fp_from(a));
}

/* A value (up to 64 bits) placed at bit `at`: its low part in at's lane, the rest in the next
 * (a negative shift count is a huge one, and gives 0; at a lane's first bit both halves are the
 * whole value, in that lane). */
SBK_FP_INLINE __m512i fp_place_lanes(__m512i value, __m512i at)
{
    __m512i up = _mm512_sub_epi64(at, fp_lane_bits());
    return _mm512_or_si512(_mm512_sllv_epi64(value, up),
                           _mm512_srlv_epi64(value, _mm512_sub_epi64(_mm512_setzero_si512(), up)));
}

SBK_FP_INLINE __m512i fp_place(uint64_t value, unsigned at)
{
    return fp_place_lanes(_mm512_set1_epi64((long long)value), _mm512_set1_epi64(at));
}

/* The directory's bits as a vector, for a bit select into the line. */
SBK_FP_INLINE __m512i fp_directory_lanes(sbk_u128 d)
{
    return _mm512_setr_epi64((long long)d, (long long)(d >> 64), 0, 0, 0, 0, 0, 0);
}

/* sbk_fp_put in one register. The new key's directory 1 goes at the end of its run (bit `at`)
 * and its extra bits at its slot (bit x + e end); the bits from each of them to the end of their
 * region (the directory's in lanes 0-1, the line's in the others) move up, 1 bit in lanes 0-1
 * and e in the others: one funnel shift with a count a lane, and one variable shift pair places
 * both new values. The main bytes after its slot move up a byte; the line is stored once. (The
 * directory made as a 128-bit number in general registers and moved over took up to 1.3x the
 * time an insert on an Intel Xeon, about 1.05x when its other core was idle:
 * docs/notes/fingerprints.md, "A put in the vector alone".) */
SBK_FP_INLINE void fp_put512(uint64_t *w, sbk_fp_geo g, unsigned q, uint32_t rem)
{
    unsigned e = sbk_fp_extra_bits(g), head = g.head_bytes, x = sbk_fp_extra_at(g);
    sbk_u128 d = sbk_fp_directory(w, g);
    unsigned end = sbk_fp_run_end(d, g, q), at = q + end;
    __m512i v = _mm512_load_si512((const void *)w);
    /* per lane: the first bit that moves, how far, and the value placed there */
    __m512i start = _mm512_mask_set1_epi64(_mm512_set1_epi64(x + e * end), 0x03, at);
    __m512i by = _mm512_setr_epi64(1, 1, e, e, e, e, e, e);
    __m512i value = _mm512_mask_set1_epi64(_mm512_setr_epi64(1, 1, 0, 0, 0, 0, 0, 0), 0xFC,
                                           (long long)(rem & ((UINT32_C(1) << e) - 1)));
    sbk_u128 directory = ((sbk_u128)1 << (g.q + g.s)) - 1;
    __m512i region = _mm512_setr_epi64((long long)directory, (long long)(directory >> 64), -1, -1,
                                       -1, -1, -1, -1);
    __m512i from = _mm512_and_si512(region, fp_from_lanes(start));
    __m512i shifted = fp_up_lanes(_mm512_and_si512(v, from), by);
    __m512i placed = fp_place_lanes(value, start);
    __m512i out = _mm512_ternarylogic_epi64(from, _mm512_or_si512(shifted, placed), v, 0xCA);
    /* main bytes: byte head + end takes the new key's, those above it to the last slot the one
     * below (past the line's keys those are 0s) */
    __mmask64 moved = ((UINT64_C(1) << (head + g.s)) - 1) & ~((UINT64_C(2) << (head + end)) - 1);
#if SBK_FP_VBMI2
    out = _mm512_mask_permutexvar_epi8(out, moved, fp_byte_index(-1), v); /* byte i: byte i - 1 */
#else
    out = _mm512_mask_mov_epi8(out, moved, fp_up(v, 8));
#endif
    out =
        _mm512_mask_mov_epi8(out, UINT64_C(1) << (head + end), _mm512_set1_epi8((char)(rem >> e)));
    _mm512_store_si512((void *)w, out);
}

/* sbk_fp_drop in one register: slot i and its directory bit taken out, everything after them
 * moved down. */
SBK_FP_INLINE void fp_drop512(uint64_t *w, sbk_fp_geo g, unsigned q, unsigned i)
{
    unsigned e = sbk_fp_extra_bits(g), head = g.head_bytes, x = sbk_fp_extra_at(g);
    sbk_u128 d = sbk_fp_directory(w, g);
    unsigned count = sbk_fp_count_of(d, g), at = q + i;
    sbk_u128 low = ((sbk_u128)1 << at) - 1;
    d = (d & low) | ((d >> 1) & ~low);
    __m512i v = _mm512_load_si512((const void *)w);
    __m512i dir_bits = fp_directory_lanes((((sbk_u128)1 << (g.q + g.s)) - 1));
    __m512i out = _mm512_ternarylogic_epi64(dir_bits, fp_directory_lanes(d), v, 0xCA);
    /* main bytes head + i .. head + count - 1 take the byte above (the last one a 0) */
    __mmask64 moved = ((UINT64_C(1) << (head + count)) - 1) & ~((UINT64_C(1) << (head + i)) - 1);
#if SBK_FP_VBMI2
    __mmask64 top = UINT64_C(1) << (head + count - 1); /* byte i: byte i + 1, the top one 0 */
    out = _mm512_mask_mov_epi8(out, moved,
                               _mm512_maskz_permutexvar_epi8(moved & ~top, fp_byte_index(1), v));
#else
    __m512i above = _mm512_maskz_mov_epi8(moved & ~(UINT64_C(1) << (head + i)), v);
    out = _mm512_mask_mov_epi8(out, moved, fp_down(above, 8));
#endif
    /* extras: bits [x + e i, x + e count) take those e above them, the top e zero */
    __m512i span = fp_span(x + e * i, x + e * count);
    __m512i source = _mm512_and_si512(v, fp_span(x + e * (i + 1), x + e * count));
    out = _mm512_ternarylogic_epi64(span, fp_down(source, e), out, 0xCA);
    _mm512_store_si512((void *)w, out);
}

/* sbk_fp_compact in one register, without a branch on the slots: the directory squeezed as
 * there; then 64 bits of the main bytes at a time, the kept bytes (sbk_fp_main_kept) gathered
 * by pext and placed at their new bit by fp_place, and the same for 64 bits of the extras at a
 * time (sbk_fp_extras_kept); the line loaded and stored once. */
SBK_FP_INLINE void fp_compact512(uint64_t *w, sbk_fp_geo g, uint64_t slots)
{
    const unsigned e = sbk_fp_extra_bits(g), m = sbk_fp_main_at(g), x = sbk_fp_extra_at(g);
    sbk_u128 d = sbk_fp_directory_without(sbk_fp_directory(w, g), slots);
    __m512i v = _mm512_load_si512((const void *)w);
    __m512i dir_bits = fp_directory_lanes((((sbk_u128)1 << (g.q + g.s)) - 1));
    __m512i out = _mm512_ternarylogic_epi64(dir_bits, fp_directory_lanes(d), v, 0xCA);
    unsigned filled = 0;
#if SBK_FP_VBMI2
    /* the head and the kept main bytes, in order, from byte 0 (one byte compress); 0s after */
    __mmask64 kept =
        ((UINT64_C(1) << m / 8) - 1) | ((((UINT64_C(1) << g.s) - 1) & ~slots) << m / 8);
    out = _mm512_maskz_compress_epi8(kept, out);
#else
    out = _mm512_and_si512(out, fp_span(0, m)); /* the head; main bytes and extras placed below */
    for (unsigned c = 0; 8 * c < g.s; c++) {    /* slots 8c .. 8c + 7: a byte each */
        uint64_t keep = sbk_fp_main_kept(g, slots, c);
        out = _mm512_or_si512(
            out, fp_place(sbk_fp_pext(sbk_fp_word_at(w, m + 64 * c), keep), m + filled));
        filled += (unsigned)__builtin_popcountll(keep);
    }
#endif
    uint64_t carried = 0;
    filled = 0;
    for (unsigned c = 0; 64 * c < e * g.s; c++) { /* bits [64c, 64c + 64) of the extras */
        uint64_t keep = sbk_fp_extras_kept(g, slots, c, &carried);
        out = _mm512_or_si512(
            out, fp_place(sbk_fp_pext(sbk_fp_word_at(w, x + 64 * c), keep), x + filled));
        filled += (unsigned)__builtin_popcountll(keep);
    }
    _mm512_store_si512((void *)w, out);
}

#if SBK_FP_VBMI2
/* Slots' extras unpacked into units of `width` bytes, `per` slots a 64-bit lane (the extras start
 * at bit x, e bits a slot; 7 + per x e <= 64, with the unit's own bits): lane `lane` gets the 8
 * line bytes from the one holding its first slot's extras (one byte permute by the index), and
 * unit j the 8 x width bits from slot j's first (one multishift by the shift). fp_unpack512 and
 * a rotation's scan (fp_age_scan512) build their controls with these. */
SBK_FP_INLINE long long fp_unpack_index(unsigned x, unsigned e, unsigned per, unsigned lane)
{
    uint64_t base = (x + per * e * lane) / 8; /* (vpermb reads its low 6 bits) */
    return (long long)(UINT64_C(0x0101010101010101) * base + UINT64_C(0x0706050403020100));
}

SBK_FP_INLINE long long fp_unpack_shift(unsigned x, unsigned e, unsigned per, unsigned width,
                                        unsigned lane)
{
    unsigned first = (x + per * e * lane) % 8;
    uint64_t shift = 0;
    for (unsigned j = 0; j < per; j++)
        for (unsigned byte = 0; byte < width; byte++)
            shift |= (uint64_t)((first + e * j + 8 * byte) & 63) << (8 * (width * j + byte));
    return (long long)shift;
}

/* F(..., lane) for the 8 lanes of a ZMM register */
#define FP_LANES(F, ...)                                                                           \
    _mm512_setr_epi64(F(__VA_ARGS__, 0), F(__VA_ARGS__, 1), F(__VA_ARGS__, 2), F(__VA_ARGS__, 3),  \
                      F(__VA_ARGS__, 4), F(__VA_ARGS__, 5), F(__VA_ARGS__, 6), F(__VA_ARGS__, 7))

/* The geometries whose extras unpack into one register: e <= 6 (a byte a slot, 64 slots at most),
 * or e <= 14 with at most 32 slots (a 16-bit word a slot): all but fp512-r27 and -r29. */
#define FP_UNPACKS(G) (sbk_fp_extra_bits(G) <= 6 || (sbk_fp_extra_bits(G) <= 14 && (G).s <= 32))

/* Every slot's extras in a unit of its own (byte i for e <= 6, else 16-bit word i: slot i's e
 * bits), by one byte permute and one multishift. */
SBK_FP_INLINE __m512i fp_unpack512(__m512i v, unsigned x, unsigned e)
{
    const unsigned width = e <= 6 ? 1 : 2;
    __m512i units = _mm512_multishift_epi64_epi8(
        FP_LANES(fp_unpack_shift, x, e, 8 / width, width),
        _mm512_permutexvar_epi8(FP_LANES(fp_unpack_index, x, e, 8 / width), v));
    return width == 1 ? _mm512_and_si512(units, _mm512_set1_epi8((char)((1u << e) - 1)))
                      : _mm512_and_si512(units, _mm512_set1_epi16((short)((1u << e) - 1)));
}

/* The units (fp_unpack512's) in `kept`, in order, packed back: e bits a slot from bit 0, 0s after
 * them. Pairs of units go into 2e bits of the next wider unit by one multiply-add (bytes into
 * words, words into 32-bit lanes) until a 64-bit lane holds 8e (bytes) or 4e bits (words: two
 * lanes then joined into the low e bytes of their 128-bit lane); then one byte compress gathers
 * the e bytes of every 64- or 128-bit lane. */
SBK_FP_INLINE __m512i fp_pack_kept512(__m512i units, unsigned e, uint64_t kept)
{
    if (e <= 6) {
        __m512i bytes = _mm512_maskz_compress_epi8(kept, units);
        __m512i words = _mm512_maddubs_epi16(bytes, _mm512_set1_epi16((short)(1u | 1u << e << 8)));
        __m512i pairs = _mm512_madd_epi16(words, _mm512_set1_epi32((int)(1u | 1u << 2 * e << 16)));
        __m512i eights = _mm512_ternarylogic_epi64(_mm512_set1_epi64((1ll << 4 * e) - 1), pairs,
                                                   _mm512_srli_epi64(pairs, 32 - 4 * e), 0xCA);
        return _mm512_maskz_compress_epi8(
            (__mmask64)(UINT64_C(0x0101010101010101) * ((1u << e) - 1)), eights);
    }
    __m512i words = _mm512_maskz_compress_epi16((__mmask32)kept, units);
    __m512i pairs = _mm512_madd_epi16(words, _mm512_set1_epi32((int)(1u | (1u << e) << 16)));
    __m512i quads = _mm512_ternarylogic_epi64(_mm512_set1_epi64((1ll << 2 * e) - 1), pairs,
                                              _mm512_srli_epi64(pairs, 32 - 2 * e), 0xCA);
    /* 128-bit lane: the even 64-bit lane's 4e bits, then the odd one's: 8e bits, e bytes */
    __m512i low = _mm512_or_si512(quads, _mm512_bsrli_epi128(_mm512_slli_epi64(quads, 4 * e), 8));
    __m512i eights = _mm512_mask_mov_epi64(low, 0xAA, _mm512_srli_epi64(quads, 64 - 4 * e));
    return _mm512_maskz_compress_epi8((__mmask64)(UINT64_C(0x0001000100010001) * ((1u << e) - 1)),
                                      eights);
}

/* sbk_fp_compact with VBMI2 for the geometries of FP_UNPACKS, in a few instructions whatever
 * goes: the directory squeezed as there; the head and the kept main bytes by one byte compress;
 * the kept extras (fp_unpack512, fp_pack_kept512) placed from the extras' first byte by one byte
 * expand. */
SBK_FP_INLINE void fp_squeeze512(uint64_t *w, sbk_fp_geo g, uint64_t slots)
{
    const unsigned e = sbk_fp_extra_bits(g), m = sbk_fp_main_at(g), x = sbk_fp_extra_at(g);
    sbk_u128 d = sbk_fp_directory(w, g);
    uint64_t kept_slots = ((UINT64_C(1) << sbk_fp_count_of(d, g)) - 1) & ~slots;
    d = sbk_fp_directory_without(d, slots);
    __m512i v = _mm512_load_si512((const void *)w);
    __m512i extras = fp_pack_kept512(fp_unpack512(v, x, e), e, kept_slots);
    __m512i dir_bits = fp_directory_lanes((((sbk_u128)1 << (g.q + g.s)) - 1));
    __m512i out = _mm512_ternarylogic_epi64(dir_bits, fp_directory_lanes(d), v, 0xCA);
    __mmask64 kept = ((UINT64_C(1) << m / 8) - 1) | (kept_slots << m / 8);
    out = _mm512_maskz_compress_epi8(kept, out);
    out = _mm512_mask_expand_epi8(out, ~((UINT64_C(1) << x / 8) - 1), extras);
    _mm512_store_si512((void *)w, out);
}
#endif

/* The slots in `slots` taken out (a rotation's): with VBMI2 at once (fp_squeeze512) where the
 * geometry's extras unpack; else where a line loses many (`many`), in one
 * register (fp_compact512); else fp_drop512's moves for each, the highest first, in one
 * register, with the directory squeezed once (sbk_fp_directory_without) and the line loaded and
 * stored once. On the AMD Zen 4 VM, 20,000-75,000 lines at 80% (a throwaway program over this
 * code, the scan included): 31-41 ns a line against 38-53 with fp_drop512 for each, in every
 * geometry but fp512-r10 with 4 ages (8 slots a line go: 69 against 50 with sbk_fp_compact's one
 * pass). fp_compact512 costs about the same whatever goes (40-58 ns a line on an Intel Xeon,
 * 75,000 lines), so it replaced sbk_fp_compact where many go and no more: docs/notes/window.md. */
SBK_FP_INLINE void fp_drop_slots512(uint64_t *w, sbk_fp_geo g, uint64_t slots, int many)
{
#if SBK_FP_VBMI2
    if (FP_UNPACKS(g)) {
        fp_squeeze512(w, g, slots);
        return;
    }
#endif
    if (SBK_FP_COMPACTS && many) {
        fp_compact512(w, g, slots);
        return;
    }
    unsigned e = sbk_fp_extra_bits(g), head = g.head_bytes, x = sbk_fp_extra_at(g);
    sbk_u128 d = sbk_fp_directory(w, g);
    unsigned count = sbk_fp_count_of(d, g);
    d = sbk_fp_directory_without(d, slots);
    __m512i v = _mm512_load_si512((const void *)w);
#if SBK_FP_VBMI2
    /* the main bytes at once: bytes [0, head + count) without the slots', in order (one byte
     * compress), 0s after them */
    __mmask64 used = (UINT64_C(1) << (head + count)) - 1;
    v = _mm512_mask_mov_epi8(v, used, _mm512_maskz_compress_epi8(used & ~(slots << head), v));
#endif
    while (slots) { /* as fp_drop512, the line in v */
        unsigned i = 63 - (unsigned)__builtin_clzll(slots);
        slots &= ~(UINT64_C(1) << i);
#if !SBK_FP_VBMI2
        __mmask64 moved =
            ((UINT64_C(1) << (head + count)) - 1) & ~((UINT64_C(1) << (head + i)) - 1);
        __m512i above = _mm512_maskz_mov_epi8(moved & ~(UINT64_C(1) << (head + i)), v);
        v = _mm512_mask_mov_epi8(v, moved, fp_down(above, 8));
#endif
        __m512i span = fp_span(x + e * i, x + e * count);
        __m512i source = _mm512_and_si512(v, fp_span(x + e * (i + 1), x + e * count));
        v = _mm512_ternarylogic_epi64(span, fp_down(source, e), v, 0xCA);
        count--;
    }
    __m512i dir_bits = fp_directory_lanes((((sbk_u128)1 << (g.q + g.s)) - 1));
    v = _mm512_ternarylogic_epi64(dir_bits, fp_directory_lanes(d), v, 0xCA);
    _mm512_store_si512((void *)w, v);
}

#if SBK_FP_VBMI2
/* A rotation's scan with VBMI: every slot's age bits in a byte of their own, by one byte permute
 * (each 64-bit lane gets the 8 line bytes from the one holding its first slot's extras) and one
 * multishift (byte j of lane L: the 8 bits from slot kL + j's extras, k slots a lane, as many as
 * fit: (k - 1) e + 7 + a <= 64), then one byte test against the age; pext keeps the k bytes of
 * each lane. k is 3 (fp512-r27, r29) to 8 (r10, r13): one register holds every slot of a line. */
typedef struct fp_age_scan512 {
    __m512i index;  /* the permute: byte 8L + t takes line byte b_L + t */
    __m512i shift;  /* the multishift: byte 8L + j takes bits from slot kL + j's first */
    __m512i age;    /* the sought age in every byte */
    __m512i bits;   /* the age's bits, a - 1 .. 0, in every byte */
    uint64_t lanes; /* the k low bits of every byte: the slots' bytes */
} fp_age_scan512;

SBK_FP_INLINE void fp_age_scan512_init(fp_age_scan512 *scan, sbk_fp_geo g, unsigned a, uint32_t age)
{
    unsigned e = sbk_fp_extra_bits(g), x = sbk_fp_extra_at(g), k = 8;
    while (k > 1 && (k - 1) * e + 7 + a > 64)
        k--;
    /* (lanes past the line's slots read bytes that fp_slots_of_age512's count mask drops) */
    scan->index = FP_LANES(fp_unpack_index, x, e, k);
    scan->shift = FP_LANES(fp_unpack_shift, x, e, k, 1);
    scan->age = _mm512_set1_epi8((char)age);
    scan->bits = _mm512_set1_epi8((char)((1u << a) - 1));
    scan->lanes = UINT64_C(0x0101010101010101) * ((1u << k) - 1);
}

SBK_FP_INLINE uint64_t fp_slots_of_age512(const fp_age_scan512 *scan, const uint64_t *w,
                                          sbk_fp_geo g, unsigned count)
{
    (void)g;
    __m512i bytes = _mm512_permutexvar_epi8(scan->index, _mm512_load_si512((const void *)w));
    __m512i ages = _mm512_multishift_epi64_epi8(scan->shift, bytes);
    uint64_t same = _mm512_testn_epi8_mask(_mm512_xor_si512(ages, scan->age), scan->bits);
    return sbk_fp_pext(same, scan->lanes) & ((UINT64_C(1) << count) - 1);
}
#endif

SBK_FP_VECTOR_LINE(fp_line, fp_matches, fp_put512, fp_drop512, fp_drop_slots512)
#define SBK_FP_LINE fp_line
SBK_FP_GEOMETRIES(SBK_FP_KERNELS)

#if SBK_FP_VBMI2
#define SBK_AVX512_TABLE avx512vbmi2
#else
#define SBK_AVX512_TABLE avx512
#endif
#define SBK_AVX512_NAMED(macro, isa) macro(isa) /* (isa expanded first) */

const sbloom_kernels SBK_AVX512_NAMED(SBK_X86_TABLE, SBK_AVX512_TABLE) = {
    .name = SBK_AVX512_NAMED(SBK_X86_NAME, SBK_AVX512_TABLE),
    .layout = {[SBK_PARQUET] = SBK_LAYOUT_ENTRY(parquet),
               [SBK_BLOCK512_K8] = SBK_BLOCK512_ENTRY(k8),
               [SBK_BLOCK512_K16] = SBK_BLOCK512_ENTRY(k16),
               [SBK_COUNTING512] = SBK_COUNTING_ENTRY(counting),
               SBK_FP_GEOMETRIES(SBK_FP_TABLE_ENTRY)},
    .xxh64_x8 = SBK_XXH64_X8,
};
