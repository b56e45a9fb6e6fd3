/*
 * AVX2 kernels (compiled with -mavx2 -mbmi2). Each key's whole block is one or two 256-bit
 * registers, so a probe is: build the key's bit mask in a register, load the block, and test
 * "every mask bit is set in the block" with one vptest, no branch on the answer.
 *
 * Why no gathers: in every layout here a key touches every word of its block, so the words it
 * needs are contiguous; one aligned load fetches them all, where a gather of the same words
 * would cost 8-16 element loads. Gathers pay off for layouts where a key touches a few words
 * scattered over a large block (Lang et al.'s register-blocked variants), not for these.
 */
#include "x86.h"

#if !defined(SIMDBLOOM_X86_SIMDE)
#define SBK_NATIVE_VECTOR 1 /* real AVX2: concurrent mode uses the vector probe and insert */
/* A YMM value live from inside a transaction to past its end (kernel_loops.h, transactions) */
#define SBK_UPPER_LIVE_FROM(n)                                                                     \
    __m256i upper_ = _mm256_set1_epi64x((long long)(n));                                           \
    __asm__ volatile("" : "+v"(upper_))
#define SBK_UPPER_LIVE_TO() __asm__ volatile("" : : "v"(upper_))
#endif
#include "kernel_loops.h"

static const uint32_t parquet_salts[8] = SBK_PARQUET_SALTS;
static const uint32_t block512_salts[16] = SBK_BLOCK512_SALTS;

/* 8 lanes of (k * salt[i]) >> shift, k = low 32 bits of the hash: each lane's bit index. */
static inline __m256i bit_indexes(const uint64_t *key, const uint32_t *salts, int shift)
{
    __m256i k = _mm256_set1_epi32(sbk_key_low32(key));
    __m256i salt = _mm256_loadu_si256((const __m256i *)salts);
    return _mm256_srli_epi32(_mm256_mullo_epi32(k, salt), shift);
}

/* 8 x 32-bit lanes, lane i = 1 << index_i. */
static inline __m256i mask32(__m256i index)
{
    return _mm256_sllv_epi32(_mm256_set1_epi32(1), index);
}

/* "every bit of mask is set in block": vptest's carry flag is ((~block & mask) == 0). */
static inline int covers(__m256i block, __m256i mask)
{
    return _mm256_testc_si256(block, mask);
}

/* ---- parquet: one block = one 256-bit register of 8 x 32-bit words ---- */

static inline __m256i *parquet_block(const void *blocks, uint64_t nblocks, uint64_t hash)
{
    return (__m256i *)blocks + sbk_block_index(hash, nblocks);
}

static inline int parquet_probe(const void *blocks, uint64_t nblocks, const uint64_t *key)
{
    __m256i mask = mask32(bit_indexes(key, parquet_salts, 27));
    return covers(_mm256_load_si256(parquet_block(blocks, nblocks, *key)), mask);
}

static inline int parquet_insert(void *blocks, uint64_t nblocks, const uint64_t *key)
{
    __m256i mask = mask32(bit_indexes(key, parquet_salts, 27));
    __m256i *p = parquet_block(blocks, nblocks, *key);
    __m256i block = _mm256_load_si256(p);
    int absent = !covers(block, mask);
    _mm256_store_si256(p, _mm256_or_si256(block, mask));
    return absent;
}

/* ---- block512-k8: 8 x 64-bit words = two registers of 4 words ---- */

static inline __m256i *block512(const void *blocks, uint64_t nblocks, uint64_t hash)
{
    return (__m256i *)blocks + 2 * sbk_block_index(hash, nblocks);
}

/* k8's eight salts paired (words 0 and 4, 1 and 5, ...), so that one vpmulld leaves the product
 * of word l in the low half of 64-bit lane l and that of word l + 4 in its high half. On a
 * big-endian host (this file compiled through SIMDe, in test builds) a 64-bit lane's low half is
 * the higher-numbered 32-bit lane, so each pair is swapped. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
static const uint32_t k8_paired_salts[8] = {SBK_SALT4, SBK_SALT0, SBK_SALT5, SBK_SALT1,
                                            SBK_SALT6, SBK_SALT2, SBK_SALT7, SBK_SALT3};
#else
static const uint32_t k8_paired_salts[8] = {SBK_SALT0, SBK_SALT4, SBK_SALT1, SBK_SALT5,
                                            SBK_SALT2, SBK_SALT6, SBK_SALT3, SBK_SALT7};
#endif

/* Word i's bit index is the top 6 bits of key * salt[i] (32-bit product). Words 0-3 take bits
 * 26-31 of each 64-bit lane (its low product), words 4-7 the lane's top 6 bits (its high
 * product): no widening and no extract, 6 vector operations after the multiply instead of 9
 * (`simdbloom bench --isa avx2 --size 1250k`, before and after, alternated twice on an AMD EPYC:
 * add 2.07-2.11 -> 1.54-1.70 ns, contains 1.48-1.52 -> 1.25-1.53; docs/notes/kernels-history.md).
 */
static inline void k8_masks(const uint64_t *key, __m256i *lo, __m256i *hi)
{
    __m256i k = _mm256_set1_epi32(sbk_key_low32(key));
    __m256i salts = _mm256_loadu_si256((const __m256i *)k8_paired_salts);
    __m256i product = _mm256_mullo_epi32(k, salts);
    __m256i one = _mm256_set1_epi64x(1);
    *lo = _mm256_sllv_epi64(
        one, _mm256_and_si256(_mm256_srli_epi64(product, 26), _mm256_set1_epi64x(63)));
    *hi = _mm256_sllv_epi64(one, _mm256_srli_epi64(product, 58));
}

/* The mask bits the block lacks, both halves in one register: zero when the key is present. */
static inline __m256i lacking_halves(__m256i b0, __m256i b1, __m256i lo, __m256i hi)
{
    return _mm256_or_si256(_mm256_andnot_si256(b0, lo), _mm256_andnot_si256(b1, hi));
}

/* A 512-bit block as two registers: probe, and test-and-set, given the key's two mask halves. */
static inline int probe_halves(const void *blocks, uint64_t nblocks, uint64_t hash, __m256i lo,
                               __m256i hi)
{
    const __m256i *p = block512(blocks, nblocks, hash);
    __m256i lacking = lacking_halves(_mm256_load_si256(p), _mm256_load_si256(p + 1), lo, hi);
    return _mm256_testz_si256(lacking, lacking);
}

static inline int insert_halves(void *blocks, uint64_t nblocks, uint64_t hash, __m256i lo,
                                __m256i hi)
{
    __m256i *p = block512(blocks, nblocks, hash);
    __m256i b0 = _mm256_load_si256(p), b1 = _mm256_load_si256(p + 1);
    __m256i lacking = lacking_halves(b0, b1, lo, hi);
    _mm256_store_si256(p, _mm256_or_si256(b0, lo));
    _mm256_store_si256(p + 1, _mm256_or_si256(b1, hi));
    return !_mm256_testz_si256(lacking, lacking);
}

/* ---- block512-k16: 16 x 32-bit words = two registers of 8 words ---- */

static inline void k16_masks(const uint64_t *key, __m256i *lo, __m256i *hi)
{
    *lo = mask32(bit_indexes(key, block512_salts, 27));
    *hi = mask32(bit_indexes(key, block512_salts + 8, 27));
}

/* Probe and insert for the 512-bit layouts: their mask halves, then the shared two-register
 * code. */
static inline int k8_probe(const void *blocks, uint64_t nblocks, const uint64_t *key)
{
    __m256i lo, hi;
    k8_masks(key, &lo, &hi);
    return probe_halves(blocks, nblocks, *key, lo, hi);
}

static inline int k16_probe(const void *blocks, uint64_t nblocks, const uint64_t *key)
{
    __m256i lo, hi;
    k16_masks(key, &lo, &hi);
    return probe_halves(blocks, nblocks, *key, lo, hi);
}

/* Test-and-add; with `held` (another line of its window group holds the key, kernel_loops.h's
 * SBK_DEFINE_LINES_PER_KEY) the mask emptied, so that nothing new is stored, without a branch. */
static inline int k8_insert_unless(void *blocks, uint64_t nblocks, const uint64_t *key, int held)
{
    __m256i lo, hi, keep = _mm256_set1_epi64x((long long)held - 1);
    k8_masks(key, &lo, &hi);
    return insert_halves(blocks, nblocks, *key, _mm256_and_si256(lo, keep),
                         _mm256_and_si256(hi, keep));
}

static inline int k16_insert_unless(void *blocks, uint64_t nblocks, const uint64_t *key, int held)
{
    __m256i lo, hi, keep = _mm256_set1_epi64x((long long)held - 1);
    k16_masks(key, &lo, &hi);
    return insert_halves(blocks, nblocks, *key, _mm256_and_si256(lo, keep),
                         _mm256_and_si256(hi, keep));
}

static inline int k8_insert(void *blocks, uint64_t nblocks, const uint64_t *key)
{
    return k8_insert_unless(blocks, nblocks, key, 0);
}

static inline int k16_insert(void *blocks, uint64_t nblocks, const uint64_t *key)
{
    return k16_insert_unless(blocks, nblocks, key, 0);
}

/* The masks as the block's bytes, for the concurrent mode's portable forms (kernel_loops.h). */
static inline void parquet_mask_words(const uint64_t *key, uint64_t *words)
{
    _mm256_store_si256((__m256i *)words, mask32(bit_indexes(key, parquet_salts, 27)));
}

static inline void k8_mask_words(const uint64_t *key, uint64_t *words)
{
    __m256i lo, hi;
    k8_masks(key, &lo, &hi);
    _mm256_store_si256((__m256i *)words, lo);
    _mm256_store_si256((__m256i *)words + 1, hi);
}

static inline void k16_mask_words(const uint64_t *key, uint64_t *words)
{
    __m256i lo, hi;
    k16_masks(key, &lo, &hi);
    _mm256_store_si256((__m256i *)words, lo);
    _mm256_store_si256((__m256i *)words + 1, hi);
}

/* The batch kernels of each layout, from its per-key functions above (kernel_loops.h). */
SBK_DEFINE_BATCH_KERNELS(parquet)
SBK_DEFINE_BATCH_KERNELS(k8)
SBK_DEFINE_BATCH_KERNELS(k16)
SBK_DEFINE_LINES_PER_KEY(k8)
SBK_DEFINE_LINES_PER_KEY(k16)
SBK_DEFINE_WINDOW_KERNELS(k8, lines)
SBK_DEFINE_WINDOW_KERNELS(k16, lines)

/* ---- counting512: 8 x 64-bit words of 4-bit counters = two registers of 4 words ---- */

/* The first eight block512 salts, each in a 64-bit lane (for vpmuludq, below). */
static const uint64_t block512_salts64[8] = {SBK_SALT0, SBK_SALT1, SBK_SALT2, SBK_SALT3,
                                             SBK_SALT4, SBK_SALT5, SBK_SALT6, SBK_SALT7};

/* The bit offsets of the key's counters in words 0-3 and 4-7: 4 * top 4 bits of the 32-bit
 * product key * salt. vpmuludq multiplies the low 32 bits of each 64-bit lane into a 64-bit
 * product whose low 32 bits are that product, so an offset is bits 26-29 of its lane's product
 * masked with 0x3C: in 64-bit lanes from the start, no widening. */
static inline void counting_shifts(const uint64_t *key, __m256i shift[2])
{
    __m256i k = _mm256_set1_epi64x((long long)*key);
    for (int h = 0; h < 2; h++) {
        __m256i salts = _mm256_loadu_si256((const __m256i *)(block512_salts64 + 4 * h));
        shift[h] = _mm256_and_si256(_mm256_srli_epi64(_mm256_mul_epu32(k, salts), 26),
                                    _mm256_set1_epi64x(0x3C));
    }
}

/* The block's two halves, and per 64-bit lane the key's counter (0 .. 15). */
static inline void counting_load(const __m256i *p, const __m256i shift[2], __m256i block[2],
                                 __m256i counters[2])
{
    for (int h = 0; h < 2; h++) {
        block[h] = _mm256_load_si256(p + h);
        counters[h] = _mm256_and_si256(_mm256_srlv_epi64(block[h], shift[h]),
                                       _mm256_set1_epi64x(SBK_COUNTER_MAX));
    }
}

/* 1 if no lane of either half holds a zero counter. */
static inline int counting_all_nonzero(const __m256i counters[2])
{
    __m256i zero = _mm256_setzero_si256();
    __m256i empty = _mm256_or_si256(_mm256_cmpeq_epi64(counters[0], zero),
                                    _mm256_cmpeq_epi64(counters[1], zero));
    return _mm256_testz_si256(empty, empty);
}

/* Per lane, 1 << shift where the counter is below 15, else 0: the step a saturated counter
 * does not take. */
static inline __m256i counting_step(__m256i shift, __m256i counters)
{
    __m256i full = _mm256_cmpeq_epi64(counters, _mm256_set1_epi64x(SBK_COUNTER_MAX));
    return _mm256_andnot_si256(full, _mm256_sllv_epi64(_mm256_set1_epi64x(1), shift));
}

static inline int counting_probe(const void *blocks, uint64_t nblocks, const uint64_t *key)
{
    __m256i shift[2], block[2], counters[2];
    counting_shifts(key, shift);
    counting_load(block512(blocks, nblocks, *key), shift, block, counters);
    return counting_all_nonzero(counters);
}

static inline int counting_increment(void *blocks, uint64_t nblocks, const uint64_t *key)
{
    __m256i shift[2], block[2], counters[2];
    counting_shifts(key, shift);
    __m256i *p = block512(blocks, nblocks, *key);
    counting_load(p, shift, block, counters);
    for (int h = 0; h < 2; h++)
        _mm256_store_si256(p + h, _mm256_add_epi64(block[h], counting_step(shift[h], counters[h])));
    return !counting_all_nonzero(counters);
}

/* Refuses (changes nothing) when a counter is zero; else one less in each lane below 15. */
static inline int counting_decrement(void *blocks, uint64_t nblocks, const uint64_t *key)
{
    __m256i shift[2], block[2], counters[2];
    counting_shifts(key, shift);
    __m256i *p = block512(blocks, nblocks, *key);
    counting_load(p, shift, block, counters);
    if (!counting_all_nonzero(counters))
        return 0;
    for (int h = 0; h < 2; h++)
        _mm256_store_si256(p + h, _mm256_sub_epi64(block[h], counting_step(shift[h], counters[h])));
    return 1;
}

SBK_DEFINE_COUNTING_KERNELS(counting)

/* ---- Generation slots (the windowed mode's one-line form, kernels.h): each 4-bit slot a bitmap
 * of generations; a generation holds the key when its bit is set in all eight slots ---- */

/* The bits the key's eight slots share: the words of both halves shifted so that each lane starts
 * with its slot, ANDed lane by lane, the four lanes folded to one, then the low 4 bits (masked once
 * at the end: ANDing the bits above the slots does not touch the slots'). */
static inline uint64_t slots_common(const __m256i block[2], const __m256i shift[2])
{
    __m256i four = _mm256_and_si256(_mm256_srlv_epi64(block[0], shift[0]),
                                    _mm256_srlv_epi64(block[1], shift[1]));
    __m128i two = _mm_and_si128(_mm256_castsi256_si128(four), _mm256_extracti128_si256(four, 1));
    uint64_t one = (uint64_t)_mm_cvtsi128_si64(_mm_and_si128(two, _mm_unpackhi_epi64(two, two)));
    return one & SBK_COUNTER_MAX;
}

static inline int counting_window_held(const void *blocks, uint64_t groups, uint32_t lines,
                                       uint32_t target, const uint64_t *key)
{
    (void)lines, (void)target;
    __m256i shift[2];
    counting_shifts(key, shift);
    const __m256i *p = block512(blocks, groups, *key);
    __m256i block[2] = {_mm256_load_si256(p), _mm256_load_si256(p + 1)};
    return slots_common(block, shift) != 0;
}

/* The target's bit ORed into the key's slots when no generation held the key (stored either way,
 * unchanged when held: no branch on whether the key is new, as in avx512.c). */
static inline int counting_window_add(void *blocks, uint64_t groups, uint32_t lines,
                                      uint32_t target, const uint64_t *key)
{
    (void)lines;
    __m256i shift[2];
    counting_shifts(key, shift);
    __m256i *p = block512(blocks, groups, *key);
    __m256i block[2] = {_mm256_load_si256(p), _mm256_load_si256(p + 1)};
    uint64_t is_new = slots_common(block, shift) == 0;
    __m256i bit = _mm256_set1_epi64x((long long)(is_new << target));
    for (int h = 0; h < 2; h++)
        _mm256_store_si256(p + h, _mm256_or_si256(block[h], _mm256_sllv_epi64(bit, shift[h])));
    return (int)is_new;
}

SBK_DEFINE_WINDOW_KERNELS(counting, 1)

/* ---- The fingerprint family (fingerprint.h): the line's main bytes compared with one byte
 * in two YMM compares; put and drop on the line held in two YMM registers ---- */

#include "fingerprint.h"

/* Bit i set when byte i of the line equals `byte`. */
static inline uint64_t fp_matches(const uint64_t *w, uint8_t byte)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return sbk_fp_matches_portable(w, byte); /* SIMDe on a big-endian host: bytes are not bits */
#else
    __m256i b = _mm256_set1_epi8((char)byte);
    uint32_t low =
        (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_load_si256((const __m256i *)w), b));
    uint32_t high = (uint32_t)_mm256_movemask_epi8(
        _mm256_cmpeq_epi8(_mm256_load_si256((const __m256i *)w + 1), b));
    return (uint64_t)high << 32 | low;
#endif
}

/* The line as one 512-bit number in two YMM registers: lo holds words 0..3 (bits 0 .. 255), hi
 * words 4..7; lane j of a half holds bits 64j .. 64j+63 of it. */
typedef struct fp_line2 {
    __m256i lo, hi;
} fp_line2;

SBK_FP_INLINE fp_line2 fp_load2(const uint64_t *w)
{
    return (fp_line2){_mm256_load_si256((const __m256i *)w),
                      _mm256_load_si256((const __m256i *)w + 1)};
}

SBK_FP_INLINE void fp_store2(uint64_t *w, fp_line2 v)
{
    _mm256_store_si256((__m256i *)w, v.lo);
    _mm256_store_si256((__m256i *)w + 1, v.hi);
}

/* (m ? a : b), bit by bit. */
SBK_FP_INLINE fp_line2 fp_select2(fp_line2 m, fp_line2 a, fp_line2 b)
{
    return (fp_line2){
        _mm256_or_si256(_mm256_and_si256(m.lo, a.lo), _mm256_andnot_si256(m.lo, b.lo)),
        _mm256_or_si256(_mm256_and_si256(m.hi, a.hi), _mm256_andnot_si256(m.hi, b.hi))};
}

SBK_FP_INLINE fp_line2 fp_and2(fp_line2 a, fp_line2 b)
{
    return (fp_line2){_mm256_and_si256(a.lo, b.lo), _mm256_and_si256(a.hi, b.hi)};
}

/* v shifted up (toward bit 511) by k bits, 1 <= k <= 63: each word's bits up k, the word
 * below's top k bits into its bottom (word 0: zeros). */
SBK_FP_INLINE fp_line2 fp_up2(fp_line2 v, unsigned k)
{
    __m128i up = _mm_cvtsi32_si128((int)k), down = _mm_cvtsi32_si128((int)(64 - k));
    __m256i below_lo = _mm256_blend_epi32(_mm256_permute4x64_epi64(v.lo, 0x90),
                                          _mm256_setzero_si256(), 0x03); /* 0, lo0, lo1, lo2 */
    __m256i below_hi =
        _mm256_blend_epi32(_mm256_permute4x64_epi64(v.hi, 0x90),
                           _mm256_permute4x64_epi64(v.lo, 0xFF), 0x03); /* lo3, hi0, hi1, hi2 */
    return (fp_line2){
        _mm256_or_si256(_mm256_sll_epi64(v.lo, up), _mm256_srl_epi64(below_lo, down)),
        _mm256_or_si256(_mm256_sll_epi64(v.hi, up), _mm256_srl_epi64(below_hi, down))};
}

/* v shifted down by k bits, 1 <= k <= 63 (word 7's top: zeros). */
SBK_FP_INLINE fp_line2 fp_down2(fp_line2 v, unsigned k)
{
    __m128i down = _mm_cvtsi32_si128((int)k), up = _mm_cvtsi32_si128((int)(64 - k));
    __m256i above_lo =
        _mm256_blend_epi32(_mm256_permute4x64_epi64(v.lo, 0xF9),
                           _mm256_permute4x64_epi64(v.hi, 0x00), 0xC0); /* lo1, lo2, lo3, hi0 */
    __m256i above_hi = _mm256_blend_epi32(_mm256_permute4x64_epi64(v.hi, 0xF9),
                                          _mm256_setzero_si256(), 0xC0); /* hi1, hi2, hi3, 0 */
    return (fp_line2){
        _mm256_or_si256(_mm256_srl_epi64(v.lo, down), _mm256_sll_epi64(above_lo, up)),
        _mm256_or_si256(_mm256_srl_epi64(v.hi, down), _mm256_sll_epi64(above_hi, up))};
}

/* The first bit of each word: 0, 64, .. 192 in lo; 256 .. 448 in hi. */
SBK_FP_INLINE __m256i fp_word_bits(int high)
{
    return high ? _mm256_setr_epi64x(256, 320, 384, 448) : _mm256_setr_epi64x(0, 64, 128, 192);
}

/* Bits a and above of one half: a word wholly above a all ones (its count negative), one wholly
 * below none (a variable shift by 64 or more gives 0), the word of a ones from a up. */
SBK_FP_INLINE __m256i fp_from_half(unsigned a, int high)
{
    __m256i count = _mm256_sub_epi64(_mm256_set1_epi64x(a), fp_word_bits(high));
    __m256i above = _mm256_cmpgt_epi64(_mm256_setzero_si256(), count);
    return _mm256_or_si256(_mm256_sllv_epi64(_mm256_set1_epi64x(-1), count), above);
}

/* Bits [a, b). */
SBK_FP_INLINE fp_line2 fp_span2(unsigned a, unsigned b)
{
    return (fp_line2){_mm256_andnot_si256(fp_from_half(b, 0), fp_from_half(a, 0)),
                      _mm256_andnot_si256(fp_from_half(b, 1), fp_from_half(a, 1))};
}

/* A value (up to 64 bits) placed at bit `at`: its low part in at's word, the rest in the next
 * (a shift count that is negative is a huge one, and gives 0; at a word's first bit both halves
 * are the whole value, in that word). */
SBK_FP_INLINE __m256i fp_place_half(uint64_t value, unsigned at, int high)
{
    __m256i v = _mm256_set1_epi64x((long long)value), base = fp_word_bits(high);
    __m256i up = _mm256_sub_epi64(_mm256_set1_epi64x(at), base);
    __m256i down = _mm256_sub_epi64(base, _mm256_set1_epi64x(at));
    return _mm256_or_si256(_mm256_sllv_epi64(v, up), _mm256_srlv_epi64(v, down));
}

/* Bytes [a, b) of the line as a byte mask (0 <= a, b <= 64). */
SBK_FP_INLINE fp_line2 fp_bytes2(unsigned a, unsigned b)
{
    __m256i lo = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
                                  19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
    __m256i hi = _mm256_add_epi8(lo, _mm256_set1_epi8(32));
    __m256i first = _mm256_set1_epi8((char)((int)a - 1)), end = _mm256_set1_epi8((char)b);
    return (fp_line2){_mm256_and_si256(_mm256_cmpgt_epi8(lo, first), _mm256_cmpgt_epi8(end, lo)),
                      _mm256_and_si256(_mm256_cmpgt_epi8(hi, first), _mm256_cmpgt_epi8(end, hi))};
}

/* The directory's bits (mask: which bits are the directory's) in words 0 and 1. */
SBK_FP_INLINE fp_line2 fp_directory2(sbk_u128 d)
{
    return (fp_line2){_mm256_setr_epi64x((long long)d, (long long)(d >> 64), 0, 0),
                      _mm256_setzero_si256()};
}

/* sbk_fp_put in two registers: the directory updated, main bytes head + end + 1 .. head + count
 * take the byte below and byte head + end the new key's, the extras from the new key's up e bits
 * with the new key's placed, the line stored once. */
SBK_FP_INLINE void fp_put256(uint64_t *w, sbk_fp_geo g, unsigned q, uint32_t rem)
{
    unsigned e = sbk_fp_extra_bits(g), head = g.head_bytes, x = sbk_fp_extra_at(g);
    sbk_u128 d = sbk_fp_directory(w, g);
    unsigned count = sbk_fp_count_of(d, g), end;
    d = sbk_fp_directory_with(d, g, q, &end);
    fp_line2 v = fp_load2(w);
    fp_line2 out =
        fp_select2(fp_directory2((((sbk_u128)1 << (g.q + g.s)) - 1)), fp_directory2(d), v);
    out = fp_select2(fp_bytes2(head + end + 1, head + count + 1), fp_up2(v, 8), out);
    __m256i byte = _mm256_set1_epi8((char)(rem >> e));
    out = fp_select2(fp_bytes2(head + end, head + end + 1), (fp_line2){byte, byte}, out);
    /* the extras from x + e end up, taken whole (as fp_put512: the bits past them are 0) */
    fp_line2 from = {fp_from_half(x + e * end, 0), fp_from_half(x + e * end, 1)};
    fp_line2 moved = fp_up2(fp_and2(v, from), e);
    uint64_t extra = rem & ((UINT32_C(1) << e) - 1);
    moved.lo = _mm256_or_si256(moved.lo, fp_place_half(extra, x + e * end, 0));
    moved.hi = _mm256_or_si256(moved.hi, fp_place_half(extra, x + e * end, 1));
    fp_store2(w, fp_select2(from, moved, out));
}

/* sbk_fp_drop in two registers: slot i and its directory bit taken out, main bytes and extras
 * after them moved down (the last slot's zeroed). */
SBK_FP_INLINE void fp_drop256(uint64_t *w, sbk_fp_geo g, unsigned q, unsigned i)
{
    unsigned e = sbk_fp_extra_bits(g), head = g.head_bytes, x = sbk_fp_extra_at(g);
    sbk_u128 d = sbk_fp_directory(w, g);
    unsigned count = sbk_fp_count_of(d, g), at = q + i;
    sbk_u128 low = ((sbk_u128)1 << at) - 1;
    d = (d & low) | ((d >> 1) & ~low);
    fp_line2 v = fp_load2(w);
    fp_line2 out =
        fp_select2(fp_directory2((((sbk_u128)1 << (g.q + g.s)) - 1)), fp_directory2(d), v);
    fp_line2 above = fp_and2(v, fp_bytes2(head + i + 1, head + count));
    out = fp_select2(fp_bytes2(head + i, head + count), fp_down2(above, 8), out);
    fp_line2 source = fp_and2(v, fp_span2(x + e * (i + 1), x + e * count));
    fp_store2(w, fp_select2(fp_span2(x + e * i, x + e * count), fp_down2(source, e), out));
}

SBK_FP_INLINE fp_line2 fp_or2(fp_line2 a, fp_line2 b)
{
    return (fp_line2){_mm256_or_si256(a.lo, b.lo), _mm256_or_si256(a.hi, b.hi)};
}

/* fp_place_half over the line. */
SBK_FP_INLINE fp_line2 fp_place2(uint64_t value, unsigned at)
{
    return (fp_line2){fp_place_half(value, at, 0), fp_place_half(value, at, 1)};
}

/* fp_compact512 (avx512.c) in the two registers: the kept main bytes and the kept extras
 * gathered 64 bits at a time by pext and placed at their new bits by fp_place_half, the line
 * loaded and stored once, no branch on the slots. */
SBK_FP_INLINE void fp_compact256(uint64_t *w, sbk_fp_geo g, uint64_t slots)
{
    const unsigned e = sbk_fp_extra_bits(g), m = sbk_fp_main_at(g), x = sbk_fp_extra_at(g);
    sbk_u128 d = sbk_fp_directory_without(sbk_fp_directory(w, g), slots);
    fp_line2 out = fp_and2(fp_select2(fp_directory2((((sbk_u128)1 << (g.q + g.s)) - 1)),
                                      fp_directory2(d), fp_load2(w)),
                           fp_span2(0, m)); /* the head; main bytes and extras placed below */
    unsigned filled = 0;
    for (unsigned c = 0; 8 * c < g.s; c++) { /* slots 8c .. 8c + 7: a byte each */
        uint64_t keep = sbk_fp_main_kept(g, slots, c);
        out = fp_or2(out, fp_place2(sbk_fp_pext(sbk_fp_word_at(w, m + 64 * c), keep), m + filled));
        filled += (unsigned)__builtin_popcountll(keep);
    }
    uint64_t carried = 0;
    filled = 0;
    for (unsigned c = 0; 64 * c < e * g.s; c++) { /* bits [64c, 64c + 64) of the extras */
        uint64_t keep = sbk_fp_extras_kept(g, slots, c, &carried);
        out = fp_or2(out, fp_place2(sbk_fp_pext(sbk_fp_word_at(w, x + 64 * c), keep), x + filled));
        filled += (unsigned)__builtin_popcountll(keep);
    }
    fp_store2(w, out);
}

/* The slots in `slots` taken out (a rotation's): where many go, in the two registers
 * (fp_compact256); in other lines of more than 24 slots in one pass (sbk_fp_compact); else
 * fp_drop256's moves for each, the highest first, in the two registers, the directory squeezed
 * once and the line stored once (as fp_drop_slots512). On an Intel Xeon, 75,000 lines 80% full,
 * one rotation (docs/notes/window.md): fp512-r10 with 2 age bits 43-45 ns a line in the
 * registers against 54-57 in one pass, but fp512-r13 and -r16 with 3 age bits 53-58 against
 * 45-52. */
SBK_FP_INLINE void fp_drop_slots256(uint64_t *w, sbk_fp_geo g, uint64_t slots, int many)
{
    if (SBK_FP_COMPACTS && many) {
        fp_compact256(w, g, slots);
        return;
    }
    if (SBK_FP_COMPACTS && g.s > 24) {
        sbk_fp_compact(w, g, slots);
        return;
    }
    unsigned e = sbk_fp_extra_bits(g), head = g.head_bytes, x = sbk_fp_extra_at(g);
    sbk_u128 d = sbk_fp_directory(w, g);
    unsigned count = sbk_fp_count_of(d, g);
    d = sbk_fp_directory_without(d, slots);
    fp_line2 v = fp_load2(w);
    while (slots) { /* as fp_drop256, the line in v */
        unsigned i = 63 - (unsigned)__builtin_clzll(slots);
        slots &= ~(UINT64_C(1) << i);
        fp_line2 above = fp_and2(v, fp_bytes2(head + i + 1, head + count));
        v = fp_select2(fp_bytes2(head + i, head + count), fp_down2(above, 8), v);
        fp_line2 source = fp_and2(v, fp_span2(x + e * (i + 1), x + e * count));
        v = fp_select2(fp_span2(x + e * i, x + e * count), fp_down2(source, e), v);
        count--;
    }
    fp_store2(w,
              fp_select2(fp_directory2((((sbk_u128)1 << (g.q + g.s)) - 1)), fp_directory2(d), v));
}

SBK_FP_VECTOR_LINE(fp_line, fp_matches, fp_put256, fp_drop256, fp_drop_slots256)
#define SBK_FP_LINE fp_line
SBK_FP_GEOMETRIES(SBK_FP_KERNELS)

const sbloom_kernels SBK_X86_TABLE(avx2) = {
    .name = SBK_X86_NAME(avx2),
    .layout = {[SBK_PARQUET] = SBK_LAYOUT_ENTRY(parquet),
               [SBK_BLOCK512_K8] = SBK_BLOCK512_ENTRY(k8),
               [SBK_BLOCK512_K16] = SBK_BLOCK512_ENTRY(k16),
               [SBK_COUNTING512] = SBK_COUNTING_ENTRY(counting),
               SBK_FP_GEOMETRIES(SBK_FP_TABLE_ENTRY)},
};
