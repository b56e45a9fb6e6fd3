/*
 * NEON kernels, written against SIMDe's `simde/arm/neon.h`: on aarch64 these are the native
 * instructions, on x86 SIMDe emulates them, so the fuzzers and differential tests check this file
 * against scalar on any machine (slowly there: it is never picked automatically off Arm).
 *
 * A block is 2 (Parquet) or 4 (512-bit) 128-bit registers. A probe builds the key's mask in the
 * same registers, ORs together the mask bits the block lacks (vbic), and takes the horizontal
 * max: zero means every bit is set. No branch on the answer.
 */
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/arm/neon.h>

#if defined(__aarch64__) || defined(__ARM_NEON)
#define SBK_NATIVE_VECTOR                                                                          \
    1 /* real NEON (not SIMDe on x86): concurrent mode uses the vector probe and insert */
#endif
#include "kernel_loops.h"

static const uint32_t parquet_salts[8] = SBK_PARQUET_SALTS;
static const uint32_t block512_salts[16] = SBK_BLOCK512_SALTS;

/* 4 lanes of (key * salt[i]) >> shift: the bit (or counter) index for 4 words. */
static inline uint32x4_t bit_indexes(uint32x4_t key, const uint32_t *salts, int shift)
{
    uint32x4_t product = vmulq_u32(key, vld1q_u32(salts));
    switch (shift) {
    case 26: return vshrq_n_u32(product, 26);
    case 27: return vshrq_n_u32(product, 27);
    default: return vshrq_n_u32(product, 28);
    }
}

/* 1 << index per 32-bit lane. */
static inline uint32x4_t bit32(uint32x4_t index)
{
    return vshlq_u32(vdupq_n_u32(1), vreinterpretq_s32_u32(index));
}

/* 1 << index per 64-bit lane, from two 32-bit indexes. */
static inline uint64x2_t bit64(uint32x2_t index)
{
    return vshlq_u64(vdupq_n_u64(1), vreinterpretq_s64_u64(vmovl_u32(index)));
}

/*
 * Every layout as G groups of 4 x 32-bit lanes (k8's 64-bit words are handled as their 32-bit
 * halves for loading, testing and storing: the test is bitwise, so the lane width does not
 * matter once the mask is built).
 */
static inline void parquet_mask(uint64_t hash, uint32x4_t mask[2])
{
    uint32x4_t key = vdupq_n_u32((uint32_t)hash);
    mask[0] = bit32(bit_indexes(key, parquet_salts, 27));
    mask[1] = bit32(bit_indexes(key, parquet_salts + 4, 27));
}

static inline void k16_mask(uint64_t hash, uint32x4_t mask[4])
{
    uint32x4_t key = vdupq_n_u32((uint32_t)hash);
    for (int g = 0; g < 4; g++)
        mask[g] = bit32(bit_indexes(key, block512_salts + 4 * g, 27));
}

static inline void k8_mask(uint64_t hash, uint32x4_t mask[4])
{
    uint32x4_t key = vdupq_n_u32((uint32_t)hash);
    uint32x4_t lo = bit_indexes(key, block512_salts, 26);
    uint32x4_t hi = bit_indexes(key, block512_salts + 4, 26);
    mask[0] = vreinterpretq_u32_u64(bit64(vget_low_u32(lo)));
    mask[1] = vreinterpretq_u32_u64(bit64(vget_high_u32(lo)));
    mask[2] = vreinterpretq_u32_u64(bit64(vget_low_u32(hi)));
    mask[3] = vreinterpretq_u32_u64(bit64(vget_high_u32(hi)));
}

/* Probe and insert for a block of G groups, given the layout's mask builder. */
/* The mask as the block's bytes, for the concurrent mode's portable forms (SIMDe on x86). */
#define NEON_MASK_WORDS(NAME, G)                                                                   \
    static inline void NAME##_mask_words(const uint64_t *key, uint64_t *words)                     \
    {                                                                                              \
        uint32x4_t mask[G];                                                                        \
        NAME##_mask(*key, mask);                                                                   \
        for (int g = 0; g < (G); g++)                                                              \
            vst1q_u32((uint32_t *)words + 4 * g, mask[g]);                                         \
    }

#define NEON_PER_KEY(NAME, G)                                                                      \
    NEON_MASK_WORDS(NAME, G)                                                                       \
    static inline uint32_t *NAME##_block(const void *blocks, uint64_t nblocks, uint64_t hash)      \
    {                                                                                              \
        return (uint32_t *)blocks + 4 * (G)*sbk_block_index(hash, nblocks);                        \
    }                                                                                              \
    static inline int NAME##_probe(const void *blocks, uint64_t nblocks, const uint64_t *key)      \
    {                                                                                              \
        uint64_t hash = *key;                                                                      \
        uint32x4_t mask[G];                                                                        \
        NAME##_mask(hash, mask);                                                                   \
        const uint32_t *p = NAME##_block(blocks, nblocks, hash);                                   \
        uint32x4_t lacking = vbicq_u32(mask[0], vld1q_u32(p));                                     \
        for (int g = 1; g < (G); g++)                                                              \
            lacking = vorrq_u32(lacking, vbicq_u32(mask[g], vld1q_u32(p + 4 * g)));                \
        return vmaxvq_u32(lacking) == 0;                                                           \
    }                                                                                              \
    static inline int NAME##_insert(void *blocks, uint64_t nblocks, const uint64_t *key)           \
    {                                                                                              \
        uint64_t hash = *key;                                                                      \
        uint32x4_t mask[G];                                                                        \
        NAME##_mask(hash, mask);                                                                   \
        uint32_t *p = NAME##_block(blocks, nblocks, hash);                                         \
        uint32x4_t lacking = vdupq_n_u32(0);                                                       \
        for (int g = 0; g < (G); g++) {                                                            \
            uint32x4_t block = vld1q_u32(p + 4 * g);                                               \
            lacking = vorrq_u32(lacking, vbicq_u32(mask[g], block));                               \
            vst1q_u32(p + 4 * g, vorrq_u32(block, mask[g]));                                       \
        }                                                                                          \
        return vmaxvq_u32(lacking) != 0;                                                           \
    }                                                                                              \
    SBK_DEFINE_BATCH_KERNELS(NAME)

NEON_PER_KEY(parquet, 2)
NEON_PER_KEY(k8, 4)
NEON_PER_KEY(k16, 4)
SBK_DEFINE_INSERT_UNLESS(k8)
SBK_DEFINE_INSERT_UNLESS(k16)
SBK_DEFINE_LINES_PER_KEY(k8)
SBK_DEFINE_LINES_PER_KEY(k16)
SBK_DEFINE_WINDOW_KERNELS(k8, lines)
SBK_DEFINE_WINDOW_KERNELS(k16, lines)

/* ---- counting512: 8 x 64-bit words of 4-bit counters = four registers of 2 words ---- */

/* Shift amounts (4 * counter index, as signed 64-bit lanes) for words 2g and 2g+1. */
static inline void counting_shifts(uint64_t hash, int64x2_t shift[4])
{
    uint32x4_t key = vdupq_n_u32((uint32_t)hash);
    uint32x4_t lo = vshlq_n_u32(bit_indexes(key, block512_salts, 28), 2);
    uint32x4_t hi = vshlq_n_u32(bit_indexes(key, block512_salts + 4, 28), 2);
    shift[0] = vreinterpretq_s64_u64(vmovl_u32(vget_low_u32(lo)));
    shift[1] = vreinterpretq_s64_u64(vmovl_u32(vget_high_u32(lo)));
    shift[2] = vreinterpretq_s64_u64(vmovl_u32(vget_low_u32(hi)));
    shift[3] = vreinterpretq_s64_u64(vmovl_u32(vget_high_u32(hi)));
}

/* The block's words, and per 64-bit lane the key's counter (a right shift is a negative vshl). */
static inline void counting_load(const uint64_t *p, const int64x2_t shift[4], uint64x2_t block[4],
                                 uint64x2_t counters[4])
{
    for (int g = 0; g < 4; g++) {
        block[g] = vld1q_u64(p + 2 * g);
        counters[g] =
            vandq_u64(vshlq_u64(block[g], vnegq_s64(shift[g])), vdupq_n_u64(SBK_COUNTER_MAX));
    }
}

/* 1 if no lane holds a zero counter: the minimum over the 32-bit halves of (counter != 0). */
static inline int counting_all_nonzero(const uint64x2_t counters[4])
{
    uint64x2_t empty = vceqzq_u64(counters[0]);
    for (int g = 1; g < 4; g++)
        empty = vorrq_u64(empty, vceqzq_u64(counters[g]));
    return vmaxvq_u32(vreinterpretq_u32_u64(empty)) == 0;
}

/* Per lane, 1 << shift where the counter is below 15, else 0. */
static inline uint64x2_t counting_step(int64x2_t shift, uint64x2_t counters)
{
    uint64x2_t full = vceqq_u64(counters, vdupq_n_u64(SBK_COUNTER_MAX));
    return vbicq_u64(vshlq_u64(vdupq_n_u64(1), shift), full);
}

static inline uint64_t *counting_block(const void *blocks, uint64_t nblocks, uint64_t hash)
{
    return (uint64_t *)blocks + 8 * sbk_block_index(hash, nblocks);
}

static inline int counting_probe(const void *blocks, uint64_t nblocks, const uint64_t *key)
{
    uint64_t hash = *key;
    int64x2_t shift[4];
    uint64x2_t block[4], counters[4];
    counting_shifts(hash, shift);
    counting_load(counting_block(blocks, nblocks, hash), shift, block, counters);
    return counting_all_nonzero(counters);
}

static inline int counting_increment(void *blocks, uint64_t nblocks, const uint64_t *key)
{
    uint64_t hash = *key;
    int64x2_t shift[4];
    uint64x2_t block[4], counters[4];
    counting_shifts(hash, shift);
    uint64_t *p = counting_block(blocks, nblocks, hash);
    counting_load(p, shift, block, counters);
    for (int g = 0; g < 4; g++)
        vst1q_u64(p + 2 * g, vaddq_u64(block[g], counting_step(shift[g], counters[g])));
    return !counting_all_nonzero(counters);
}

/* Refuses (changes nothing) when a counter is zero; else one less in each lane below 15. */
static inline int counting_decrement(void *blocks, uint64_t nblocks, const uint64_t *key)
{
    uint64_t hash = *key;
    int64x2_t shift[4];
    uint64x2_t block[4], counters[4];
    counting_shifts(hash, shift);
    uint64_t *p = counting_block(blocks, nblocks, hash);
    counting_load(p, shift, block, counters);
    if (!counting_all_nonzero(counters))
        return 0;
    for (int g = 0; g < 4; g++)
        vst1q_u64(p + 2 * g, vsubq_u64(block[g], counting_step(shift[g], counters[g])));
    return 1;
}

SBK_DEFINE_COUNTING_KERNELS(counting)

/* ---- Generation slots (the windowed mode's one-line form, kernels.h): each 4-bit slot a bitmap
 * of generations; a generation holds the key when its bit is set in all eight slots ---- */

/* The bits the key's eight slots share: the four registers' slots ANDed, then the two lanes. */
static inline uint64_t slots_common(const uint64x2_t slots[4])
{
    uint64x2_t both = vandq_u64(vandq_u64(slots[0], slots[1]), vandq_u64(slots[2], slots[3]));
    return vgetq_lane_u64(both, 0) & vgetq_lane_u64(both, 1);
}

static inline int counting_window_held(const void *blocks, uint64_t groups, uint32_t lines,
                                       uint32_t target, const uint64_t *key)
{
    (void)lines, (void)target;
    int64x2_t shift[4];
    uint64x2_t block[4], slots[4];
    counting_shifts(*key, shift);
    counting_load(counting_block(blocks, groups, *key), shift, block, slots);
    return slots_common(slots) != 0;
}

static inline int counting_window_add(void *blocks, uint64_t groups, uint32_t lines,
                                      uint32_t target, const uint64_t *key)
{
    (void)lines;
    int64x2_t shift[4];
    uint64x2_t block[4], slots[4];
    counting_shifts(*key, shift);
    uint64_t *p = counting_block(blocks, groups, *key);
    counting_load(p, shift, block, slots);
    if (slots_common(slots) != 0)
        return 0;
    uint64x2_t bit = vdupq_n_u64(UINT64_C(1) << target);
    for (int g = 0; g < 4; g++)
        vst1q_u64(p + 2 * g, vorrq_u64(block[g], vshlq_u64(bit, shift[g])));
    return 1;
}

SBK_DEFINE_WINDOW_KERNELS(counting, 1)

/* ---- The fingerprint family (fingerprint.h): the line's main bytes compared with one byte
 * in four 128-bit compares, each byte's answer weighted by its bit and summed pairwise into a
 * 64-bit mask; the rest of each operation is the word-level form ---- */

#include "fingerprint.h"

/* Bit i set when byte i of the line equals `byte`. */
static inline uint64_t fp_matches(const uint64_t *w, uint8_t byte)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return sbk_fp_matches_portable(w, byte);
#else
    static const uint8_t weights[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    const uint8_t *p = (const uint8_t *)w;
    uint8x16_t b = vdupq_n_u8(byte), weight = vld1q_u8(weights);
    uint8x16_t m0 = vandq_u8(vceqq_u8(vld1q_u8(p), b), weight);
    uint8x16_t m1 = vandq_u8(vceqq_u8(vld1q_u8(p + 16), b), weight);
    uint8x16_t m2 = vandq_u8(vceqq_u8(vld1q_u8(p + 32), b), weight);
    uint8x16_t m3 = vandq_u8(vceqq_u8(vld1q_u8(p + 48), b), weight);
    /* pairs, quads, then eights of bytes summed: byte j of the result is bytes 8j .. 8j+7 */
    uint8x16_t quads = vpaddq_u8(vpaddq_u8(m0, m1), vpaddq_u8(m2, m3));
    return vgetq_lane_u64(vreinterpretq_u64_u8(vpaddq_u8(quads, quads)), 0);
#endif
}

SBK_FP_WORD_LINE(fp_line, fp_matches, sbk_fp_put, sbk_fp_drop, sbk_fp_drop_slots)
#define SBK_FP_LINE fp_line
SBK_FP_GEOMETRIES(SBK_FP_KERNELS)

const sbloom_kernels sbloom_kernels_neon = {
    .name = "neon",
    .layout = {[SBK_PARQUET] = SBK_LAYOUT_ENTRY(parquet),
               [SBK_BLOCK512_K8] = SBK_BLOCK512_ENTRY(k8),
               [SBK_BLOCK512_K16] = SBK_BLOCK512_ENTRY(k16),
               [SBK_COUNTING512] = SBK_COUNTING_ENTRY(counting),
               SBK_FP_GEOMETRIES(SBK_FP_TABLE_ENTRY)},
};
