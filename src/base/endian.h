/*
 * Byte order. Files are little-endian; blocks in memory are host-order words (32 or 64 bits, as
 * the layout says). On a little-endian host conversion is a copy; on a big-endian host every word
 * is swapped. `swap` forces the swapping path so that it is tested on little-endian machines too.
 */
#ifndef SIMDBLOOM_ENDIAN_H
#define SIMDBLOOM_ENDIAN_H

#include <stdint.h>
#include <string.h>

static inline int sbloom_host_is_big_endian(void)
{
    const uint16_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    return first == 0;
}

static inline void sbloom_put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void sbloom_put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t sbloom_get_le32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static inline uint64_t sbloom_get_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Copies `bytes` of words of word_bits (32 or 64) from src to dst, reversing the bytes of each
 * word when swap is set (dst and src may be the same buffer). */
static inline void sbloom_copy_words(void *dst, const void *src, uint64_t bytes, uint32_t word_bits,
                                     int swap)
{
    if (!swap) {
        if (dst != src)
            memmove(dst, src, (size_t)bytes);
        return;
    }
    uint32_t w = word_bits / 8;
    uint8_t *d = dst;
    const uint8_t *s = src;
    for (uint64_t at = 0; at + w <= bytes; at += w) {
        uint8_t word[8];
        memcpy(word, s + at, w);
        for (uint32_t i = 0; i < w; i++)
            d[at + i] = word[w - 1 - i];
    }
}

#endif
