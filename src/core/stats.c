/* Block statistics of a core: fill, the rate a random key meets, and the items the fill implies. */
#include <math.h>

#include "core.h"

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
static void scan_blocks(const sbloom_core *c, uint64_t stride, sbloom_stats *out)
{
    uint32_t word_bits = sbloom_layout_word_bits(c->layout);
    uint32_t slots = sbloom_layout_slots(c->layout);
    uint32_t slot_bits = word_bits / slots;
    uint32_t words = c->k;
    uint64_t used = 0, scanned = 0;
    double fpp_sum = 0.0;
    for (uint64_t b = 0; b < c->nblocks; b += stride, scanned++) {
        const uint8_t *block = (const uint8_t *)c->blocks + b * c->block_bytes;
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
        out->fill >= 1.0 ? INFINITY : -(double)c->nblocks * slots * log1p(-out->fill);
}

/* What a read of a fingerprint core's lines 0, stride, 2 * stride, ... of each part finds. */
typedef struct line_scan {
    sbk_fp_geo g;
    double main_entries, spare_entries; /* entries in the lines read */
    double asking;                      /* the main lines read: sum of their share at or above
                                           their mark (an absent key there asks the spare) */
    double main_read, spare_read;       /* lines read of each part */
} line_scan;

static line_scan scan_fp_lines(const sbloom_core *c, uint64_t stride)
{
    line_scan s = {.main_entries = 0};
    sbloom_layout_fp_geometry(c->layout, &s.g);
    uint64_t main = sbk_fp_main_lines(c->nblocks), spare = c->nblocks - main;
    const uint64_t *w = c->blocks;
    for (uint64_t i = 0; i < main; i += stride, s.main_read++) {
        s.main_entries += sbk_fp_count(w + 8 * i, s.g);
        s.asking += (double)(s.g.q - sbk_fp_mark(w + 8 * i, s.g)) / s.g.q;
    }
    uint64_t spare_stride = stride < spare ? stride : 1;
    for (uint64_t i = main; i < c->nblocks; i += spare_stride, s.spare_read++)
        s.spare_entries += sbk_fp_count(w + 8 * i, s.g);
    return s;
}

/*
 * A fingerprint core (simd/fingerprint.h): the fill is the share of slots in use; the items are
 * the entries, main and spare, scaled up from the sampled lines (each distinct key added is one
 * entry, and one that collided with an earlier key's fingerprint none); a random absent key meets
 * its main line's entries with 1 / Q * 2^-r each, and, at or above the line's mark, its two spare
 * lines' entries (at their mean). Lines 0, stride, 2 * stride, ... of each part are read.
 */
static void scan_lines(const sbloom_core *c, uint64_t stride, sbloom_stats *out)
{
    line_scan s = scan_fp_lines(c, stride);
    uint64_t main = sbk_fp_main_lines(c->nblocks), spare = c->nblocks - main;
    double per_main = s.main_entries / s.main_read, per_spare = s.spare_entries / s.spare_read;
    double entries = per_main * (double)main + per_spare * (double)spare;
    out->fill = entries / ((double)c->nblocks * s.g.s);
    out->estimated_items = entries;
    out->estimated_fpp =
        (per_main + s.asking / s.main_read * 2.0 * per_spare) / s.g.q * ldexp(1.0, -(int)s.g.r);
}

void sbloom_core_second_line(const sbloom_core *c, double *absent_lookups, double *spare_keys)
{
    *absent_lookups = *spare_keys = 0;
    if (!sbloom_layout_is_fingerprint(c->layout) || !c->blocks)
        return;
    line_scan s = scan_fp_lines(c, 1); /* every line */
    double entries = s.main_entries + s.spare_entries;
    *absent_lookups = s.main_read > 0 ? s.asking / s.main_read : 0;
    *spare_keys = entries > 0 ? s.spare_entries / entries : 0;
}

/* Blocks the estimate reads at most: 4096 x 64 bytes = 256 KiB, a few microseconds. */
#define ESTIMATE_BLOCKS 4096

void sbloom_core_stats(const sbloom_core *c, int sampled, sbloom_stats *out)
{
    uint64_t stride = sampled ? c->nblocks / ESTIMATE_BLOCKS : 1;
    if (sbloom_layout_is_fingerprint(c->layout))
        scan_lines(c, stride ? stride : 1, out);
    else
        scan_blocks(c, stride ? stride : 1, out);
}

uint64_t sbloom_core_estimated_items(const sbloom_core *c)
{
    sbloom_stats stats = sbloom_stats_init();
    sbloom_core_stats(c, 0, &stats);
    return isfinite(stats.estimated_items) ? (uint64_t)llround(stats.estimated_items) : 0;
}
