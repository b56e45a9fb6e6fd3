/*
 * The scalar reference kernels: plain C, written to be read. Every other instruction set must
 * give the same answers and leave the same bytes.
 *
 * All three layouts share one rule: the key's block comes from the hash's high 32 bits
 * (sbk_block_index), and word i of that block gets exactly one bit, chosen by the top bits of
 * the low 32 bits of the hash multiplied by salt i.
 *
 *   layout        block    words          bit index in word i
 *   parquet       32 B     8 x uint32     (key * salt[i]) >> 27
 *   block512-k8   64 B     8 x uint64     (key * salt[i]) >> 26
 *   block512-k16  64 B     16 x uint32    (key * salt[i]) >> 27
 *   counting512   64 B     8 x uint64     4-bit counter (key * salt[i]) >> 28 of word i
 *
 * Words are little-endian in memory (the Parquet format's order); a big-endian host would need
 * byte swaps here, and none is supported yet.
 */
#include <string.h>

/* One key a loop iteration, and answers counted one at a time: the reference is written for
 * reading (kernel_loops.h: SBK_UNROLL, sbk_count_answers). */
#define SBK_UNROLL
#define SBK_COUNT_BYTES
#include "kernel_loops.h"

static const uint32_t parquet_salts[8] = SBK_PARQUET_SALTS;
static const uint32_t block512_salts[16] = SBK_BLOCK512_SALTS;

/* ---- Parquet split block: 8 x 32-bit words ---- */

static void parquet_mask(uint64_t hash, uint32_t mask[8])
{
    uint32_t key = (uint32_t)hash;
    for (int i = 0; i < 8; i++)
        mask[i] = UINT32_C(1) << ((key * parquet_salts[i]) >> 27);
}

static uint32_t *parquet_block(const void *blocks, uint64_t nblocks, uint64_t hash)
{
    return (uint32_t *)blocks + 8 * sbk_block_index(hash, nblocks);
}

/* Every mask bit set in its word: no bit of the mask is missing from the block. Written without
 * an early exit, so that a negative key costs what a positive one does (no mispredicted branch). */
static int parquet_test(const uint32_t *block, const uint32_t mask[8])
{
    uint32_t missing = 0;
    for (int i = 0; i < 8; i++)
        missing |= mask[i] & ~block[i];
    return missing == 0;
}

static void parquet_set(uint32_t *block, const uint32_t mask[8])
{
    for (int i = 0; i < 8; i++)
        block[i] |= mask[i];
}

/* ---- 512-bit blocks, 8 x 64-bit words ---- */

static void k8_mask(uint64_t hash, uint64_t mask[8])
{
    uint32_t key = (uint32_t)hash;
    for (int i = 0; i < 8; i++)
        mask[i] = UINT64_C(1) << ((key * block512_salts[i]) >> 26);
}

static uint64_t *k8_block(const void *blocks, uint64_t nblocks, uint64_t hash)
{
    return (uint64_t *)blocks + 8 * sbk_block_index(hash, nblocks);
}

static int k8_test(const uint64_t *block, const uint64_t mask[8])
{
    uint64_t missing = 0;
    for (int i = 0; i < 8; i++)
        missing |= mask[i] & ~block[i];
    return missing == 0;
}

static void k8_set(uint64_t *block, const uint64_t mask[8])
{
    for (int i = 0; i < 8; i++)
        block[i] |= mask[i];
}

/* ---- 512-bit blocks, 16 x 32-bit words ---- */

static void k16_mask(uint64_t hash, uint32_t mask[16])
{
    uint32_t key = (uint32_t)hash;
    for (int i = 0; i < 16; i++)
        mask[i] = UINT32_C(1) << ((key * block512_salts[i]) >> 27);
}

static uint32_t *k16_block(const void *blocks, uint64_t nblocks, uint64_t hash)
{
    return (uint32_t *)blocks + 16 * sbk_block_index(hash, nblocks);
}

static int k16_test(const uint32_t *block, const uint32_t mask[16])
{
    uint32_t missing = 0;
    for (int i = 0; i < 16; i++)
        missing |= mask[i] & ~block[i];
    return missing == 0;
}

static void k16_set(uint32_t *block, const uint32_t mask[16])
{
    for (int i = 0; i < 16; i++)
        block[i] |= mask[i];
}

/* ---- Per-key probe and insert, from which kernel_loops.h builds the batch loops ---- */

/* The concurrent mode reads the mask as the block's bytes, in 64-bit words (memcpy: the same
 * bytes, whatever the word size). */
#define SCALAR_PER_KEY(NAME, WORD, W)                                                              \
    static inline void NAME##_mask_words(const uint64_t *key, uint64_t *words)                     \
    {                                                                                              \
        WORD mask[W];                                                                              \
        NAME##_mask(*key, mask);                                                                   \
        memcpy(words, mask, sizeof mask);                                                          \
    }                                                                                              \
    static inline int NAME##_probe(const void *blocks, uint64_t nblocks, const uint64_t *key)      \
    {                                                                                              \
        uint64_t hash = *key;                                                                      \
        WORD mask[W];                                                                              \
        NAME##_mask(hash, mask);                                                                   \
        return NAME##_test(NAME##_block(blocks, nblocks, hash), mask);                             \
    }                                                                                              \
    static inline int NAME##_insert(void *blocks, uint64_t nblocks, const uint64_t *key)           \
    {                                                                                              \
        uint64_t hash = *key;                                                                      \
        WORD mask[W];                                                                              \
        NAME##_mask(hash, mask);                                                                   \
        WORD *block = NAME##_block(blocks, nblocks, hash);                                         \
        int absent = !NAME##_test(block, mask);                                                    \
        NAME##_set(block, mask);                                                                   \
        return absent;                                                                             \
    }                                                                                              \
    SBK_DEFINE_BATCH_KERNELS(NAME)

SCALAR_PER_KEY(parquet, uint32_t, 8)
SCALAR_PER_KEY(k8, uint64_t, 8)
SCALAR_PER_KEY(k16, uint32_t, 16)
SBK_DEFINE_INSERT_UNLESS(k8)
SBK_DEFINE_INSERT_UNLESS(k16)
SBK_DEFINE_LINES_PER_KEY(k8)
SBK_DEFINE_LINES_PER_KEY(k16)
SBK_DEFINE_WINDOW_KERNELS(k8, lines)
SBK_DEFINE_WINDOW_KERNELS(k16, lines)

/* ---- Counting: 8 x 64-bit words of sixteen 4-bit counters ---- */

/* Bit offset of the key's counter in word i: counter (key * salt[i]) >> 28, 4 bits each. */
static void counting_shifts(uint64_t hash, unsigned shift[8])
{
    uint32_t key = (uint32_t)hash;
    for (int i = 0; i < 8; i++)
        shift[i] = 4 * ((key * block512_salts[i]) >> 28);
}

static unsigned counter(const uint64_t *block, int i, unsigned shift)
{
    return (unsigned)(block[i] >> shift) & SBK_COUNTER_MAX;
}

static inline int counting_probe(const void *blocks, uint64_t nblocks, const uint64_t *key)
{
    uint64_t hash = *key;
    unsigned shift[8];
    counting_shifts(hash, shift);
    const uint64_t *block = k8_block(blocks, nblocks, hash);
    int zero = 0; /* no early exit: negatives cost what positives do */
    for (int i = 0; i < 8; i++)
        zero |= counter(block, i, shift[i]) == 0;
    return !zero;
}

static inline int counting_increment(void *blocks, uint64_t nblocks, const uint64_t *key)
{
    uint64_t hash = *key;
    unsigned shift[8];
    counting_shifts(hash, shift);
    uint64_t *block = k8_block(blocks, nblocks, hash);
    int absent = 0;
    for (int i = 0; i < 8; i++) {
        unsigned c = counter(block, i, shift[i]);
        if (c == 0)
            absent = 1;
        if (c < SBK_COUNTER_MAX) /* a saturated counter stays at 15 */
            block[i] += UINT64_C(1) << shift[i];
    }
    return absent;
}

static inline int counting_decrement(void *blocks, uint64_t nblocks, const uint64_t *key)
{
    uint64_t hash = *key;
    if (!counting_probe(blocks, nblocks, key))
        return 0; /* a zero counter: the key was never added; refuse and change nothing */
    unsigned shift[8];
    counting_shifts(hash, shift);
    uint64_t *block = k8_block(blocks, nblocks, hash);
    for (int i = 0; i < 8; i++)
        if (counter(block, i, shift[i]) < SBK_COUNTER_MAX) /* saturated: its true count is lost */
            block[i] -= UINT64_C(1) << shift[i];
    return 1;
}

SBK_DEFINE_COUNTING_KERNELS(counting)

/* ---- Generation slots (the windowed mode's one-line form, kernels.h): the counting geometry,
 * each 4-bit slot a bitmap of the generations that set it ---- */

/* The generations holding the key: the bits its eight slots share. */
static unsigned slots_common(const uint64_t *block, const unsigned shift[8])
{
    unsigned common = SBK_COUNTER_MAX;
    for (int i = 0; i < 8; i++)
        common &= counter(block, i, shift[i]);
    return common;
}

static inline int counting_window_held(const void *blocks, uint64_t groups, uint32_t lines,
                                       uint32_t target, const uint64_t *key)
{
    (void)lines, (void)target;
    unsigned shift[8];
    counting_shifts(*key, shift);
    return slots_common(k8_block(blocks, groups, *key), shift) != 0;
}

static inline int counting_window_add(void *blocks, uint64_t groups, uint32_t lines,
                                      uint32_t target, const uint64_t *key)
{
    (void)lines;
    unsigned shift[8];
    counting_shifts(*key, shift);
    uint64_t *block = k8_block(blocks, groups, *key);
    if (slots_common(block, shift) != 0)
        return 0;
    for (int i = 0; i < 8; i++)
        block[i] |= (UINT64_C(1) << target) << shift[i];
    return 1;
}

SBK_DEFINE_WINDOW_KERNELS(counting, 1)

/* ---- The fingerprint family (fingerprint.h): its reference line operations ---- */

#include "fingerprint.h"

#define SBK_FP_LINE sbk_fp_ref
SBK_FP_GEOMETRIES(SBK_FP_KERNELS)

const sbloom_kernels sbloom_kernels_scalar = {
    .name = "scalar",
    .layout = {[SBK_PARQUET] = SBK_LAYOUT_ENTRY(parquet),
               [SBK_BLOCK512_K8] = SBK_BLOCK512_ENTRY(k8),
               [SBK_BLOCK512_K16] = SBK_BLOCK512_ENTRY(k16),
               [SBK_COUNTING512] = SBK_COUNTING_ENTRY(counting),
               SBK_FP_GEOMETRIES(SBK_FP_TABLE_ENTRY)},
};
