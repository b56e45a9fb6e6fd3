/*
 * The families whose lines are blocks of words, a key taking one slot of every word: bits (the
 * Bloom layouts: Parquet, block512-k8, block512-k16) and counters (counting512: 4-bit slots). Their
 * sizing, their statistics and their bounds; the family table's rows (family.c).
 *
 * Blocked filters pay for their speed: keys land in blocks unevenly (Poisson), and an overloaded
 * block answers "present" far more often than the average load suggests. The classic formula
 * ignores this and underestimates the rate, so we size from the exact blocked formula:
 *
 *   fpp = sum_L  Poisson(L; n / nblocks) * (1 - (1 - 1/w)^L)^k
 *
 * where a block has k words of w bits and each key sets one bit in every word: with L keys in the
 * block, a word has a given bit clear with probability (1 - 1/w)^L, independently per word. (In
 * the counting layout w = 16: a word holds 16 counters, and a key takes one; a counter is "set"
 * when it is non-zero, and saturation never turns a zero counter into a non-zero one.)
 */
#include <math.h>

#include "../base.h"
#include "poisson.h"

/* Plans round the block count up to a multiple of this (folding by 2, 4, 8). */
#define FOLD_UNIT 8

static double blocks_rate(sbloom_layout layout, uint64_t bytes, uint64_t n)
{
    uint32_t block_bytes = sbloom_layout_block_bytes(layout);
    if (block_bytes == 0 || bytes < block_bytes || sbloom_layout_k(layout) == 0)
        return NAN;
    double nblocks = (double)(bytes / block_bytes);
    double k = sbloom_layout_k(layout);
    double word_bits = sbloom_layout_slots(layout); /* w: a key's choices in one word */
    double load = (double)n / nblocks;
    if (n == 0)
        return 0.0;
    if (load > SBLOOM_POISSON_SATURATED)
        return 1.0;

    double first, last;
    sbloom_poisson_span(load, &first, &last);
    double log_clear = log1p(-1.0 / word_bits); /* ln(1 - 1/w) */
    double log_load = log(load);
    double sum = 0.0;
    for (double l = first; l <= last; l += 1.0) {
        double log_pmf = l * log_load - load - lgamma(l + 1.0);
        double word_hit = -expm1(l * log_clear); /* 1 - (1-1/w)^L */
        sum += exp(log_pmf + k * log(word_hit));
    }
    return fmin(sum, 1.0);
}

/* The fewest blocks of the layout that meet p at n items. */
static int blocks_plan(uint64_t n, double p, sbloom_layout layout, sbloom_plan *out)
{
    uint64_t block_bytes = sbloom_layout_block_bytes(layout);
    uint64_t lo = 1, hi = SBLOOM_MAX_BYTES / block_bytes;
    if (blocks_rate(layout, hi * block_bytes, n) > p)
        return SBLOOM_E_TOO_LARGE;
    /* The rate falls as blocks are added: find the fewest blocks that meet p. */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (blocks_rate(layout, mid * block_bytes, n) <= p)
            hi = mid;
        else
            lo = mid + 1;
    }
    /* A multiple of FOLD_UNIT blocks, so that sbloom_fold by 2, 4 and 8 always works: at most 7
     * blocks (448 bytes) more than the fewest that meet p. */
    lo = (lo + FOLD_UNIT - 1) / FOLD_UNIT * FOLD_UNIT;
    if (lo > SBLOOM_MAX_BYTES / block_bytes)
        lo -= FOLD_UNIT;
    out->layout = layout;
    out->bytes = lo * block_bytes;
    out->k = sbloom_layout_k(layout);
    out->bits_per_key = (double)out->bytes * 8.0 / (double)n;
    out->fpp = blocks_rate(layout, out->bytes, n);
    return SBLOOM_OK;
}

/* Non-zero slots of a word: its set bits, or (slot_bits 4) its non-zero 4-bit counters. */
static uint32_t used_slots(uint64_t word, uint32_t slot_bits)
{
    if (slot_bits == 4)
        word = (word | word >> 1 | word >> 2 | word >> 3) & UINT64_C(0x1111111111111111);
    return (uint32_t)__builtin_popcountll(word);
}

/* Word i of a block, read atomically (a concurrent filter may be written meanwhile). */
static uint64_t load_word(const uint8_t *block, uint32_t i, uint32_t word_bits)
{
    if (word_bits == 64)
        return __atomic_load_n((const uint64_t *)block + i, __ATOMIC_RELAXED);
    return __atomic_load_n((const uint32_t *)block + i, __ATOMIC_RELAXED);
}

/*
 * A random key probing a block is a false positive when every one of its k slots is in use; with
 * one slot per word, that happens with probability prod_i used(word_i) / slots. Averaging this
 * over the blocks gives the rate a random negative key meets now. The fill (used slots) also
 * inverts the expected fill 1 - exp(-n / (nblocks * slots)) into an estimate of distinct items.
 * Blocks 0, stride, 2 * stride, ... are read: every block, or an evenly spaced sample.
 */
static void blocks_scan(sbloom_layout layout, const void *lines, uint64_t nblocks, uint64_t stride,
                        sbloom_stats *out)
{
    uint32_t word_bits = sbloom_layout_word_bits(layout);
    uint32_t slots = sbloom_layout_slots(layout);
    uint32_t slot_bits = word_bits / slots;
    uint32_t words = sbloom_layout_k(layout);
    uint32_t block_bytes = sbloom_layout_block_bytes(layout);
    uint64_t used = 0, scanned = 0;
    double fpp_sum = 0.0;
    for (uint64_t b = 0; b < nblocks; b += stride, scanned++) {
        const uint8_t *block = (const uint8_t *)lines + b * block_bytes;
        double block_fpp = 1.0;
        for (uint32_t i = 0; i < words; i++) {
            uint32_t in_use = used_slots(load_word(block, i, word_bits), slot_bits);
            used += in_use;
            block_fpp *= (double)in_use / slots;
        }
        fpp_sum += block_fpp;
    }
    double total_slots = (double)scanned * words * slots;
    out->fill = (double)used / total_slots;
    out->estimated_fpp = fpp_sum / (double)scanned;
    out->estimated_items =
        out->fill >= 1.0 ? INFINITY : -(double)nblocks * slots * log1p(-out->fill);
}

/* A key of a bit layout counts when it sets a bit, so never more than the filter has bits. */
static uint64_t bits_max_items(sbloom_layout layout, uint64_t nblocks, uint64_t payload_bytes)
{
    (void)nblocks;
    return payload_bytes * 8 / (sbloom_layout_word_bits(layout) / sbloom_layout_slots(layout));
}

/* A counting filter counts every add (a duplicate too) and its counters saturate, so no count is
 * impossible; it is bounded far below the point where an add wraps. */
static uint64_t counters_max_items(sbloom_layout layout, uint64_t nblocks, uint64_t payload_bytes)
{
    (void)layout, (void)nblocks, (void)payload_bytes;
    return UINT64_C(1) << 62;
}

const sbloom_family sbloom_family_bits = {
    .name = "bits",
    .min_lines = 1,
    .moves_entries = 0,
    .combines = 1,
    .counts_every_add = 0,
    .removes = 0,
    .window_form = SBLOOM_WINDOW_ADJACENT,
    .format_version = SBLOOM_FORMAT_VERSION,
    .plan = blocks_plan,
    .rate = blocks_rate,
    .scan = blocks_scan,
    .max_items = bits_max_items,
};

const sbloom_family sbloom_family_counters = {
    .name = "counters",
    .min_lines = 1,
    .moves_entries = 0,
    .combines = 0, /* OR and AND of counters are not sums or minimums of counts */
    .counts_every_add = 1,
    .removes = 1,
    .window_form = SBLOOM_WINDOW_SLOTS,
    .format_version = SBLOOM_FORMAT_VERSION,
    .plan = blocks_plan,
    .rate = blocks_rate,
    .scan = blocks_scan,
    .max_items = counters_max_items,
};
