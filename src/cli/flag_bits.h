/*
 * A batch's answers (a byte a line, 0 or not) as a bit mask, for the output's runs of chosen
 * lines (line_writer_put_chosen, output.c).
 */
#ifndef SIMDBLOOM_CLI_FLAG_BITS_H
#define SIMDBLOOM_CLI_FLAG_BITS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Bit i set where flags[i] != 0, for i < count (at most 64): eight flags a step, each byte's
 * "not zero" moved to its top bit ((b & 0x7f) + 0x7f carries into it for 1..127; b's own top
 * bit for the rest), then the eight bits gathered into one byte by a multiply (bit 8i of the
 * word lands on bit 56 + i: the partial products of 0x0102040810204080 never overlap there).
 * A flag a step, the loop this replaced took 6% of a query of 10M URL lines (perf;
 * docs/notes/dedup.md). */
static inline uint64_t flag_bits(const uint8_t *flags, size_t count)
{
    const uint64_t low7 = UINT64_C(0x7f7f7f7f7f7f7f7f), tops = UINT64_C(0x8080808080808080);
    uint64_t bits = 0;
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        uint64_t word;
        memcpy(&word, flags + i, sizeof word);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        word = __builtin_bswap64(word); /* flags[i] in the low byte */
#endif
        uint64_t nonzero = ((((word & low7) + low7) | word) & tops) >> 7;
        bits |= (nonzero * UINT64_C(0x0102040810204080)) >> 56 << i;
    }
    for (; i < count; i++)
        bits |= (uint64_t)(flags[i] != 0) << i;
    return bits;
}

#endif
