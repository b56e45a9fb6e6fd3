/*
 * The x86 intrinsics the AVX2 and AVX-512 kernels are written with: <immintrin.h> natively, or,
 * when SIMDBLOOM_X86_SIMDE is defined, SIMDe's portable implementations of the same intrinsics
 * under their native names (as libjpeg-turbo's simd/arm/neon-compat.h fills in for NEON). The
 * second form compiles the very same kernel source for any CPU, so the tests compare every x86
 * kernel with scalar on machines without AVX-512 (or without x86 at all). Those tables are named
 * "avx2-simde" and "avx512-simde", exist in test builds only, and are never picked automatically.
 *
 * SIMDe 0.7.4 lacks a few AVX-512 intrinsics the kernels use, and its portable vptest is wrong:
 * simde_mm_testz_si128 (which simde_mm256_testz_si256 uses where vectors are 128 bits) answers 1
 * when either 64-bit half of a AND b is zero, not only when both are (the differential test found
 * it: the counting kernels' "all counters non-zero" test went wrong); its vpmuludq takes the wrong
 * 32-bit half on a big-endian host (the s390x tests found it). Those are written out below in plain
 * C over the vectors' lanes, which is what SIMDe does for the rest.
 */
#ifndef SIMDBLOOM_X86_H
#define SIMDBLOOM_X86_H

#include <stdint.h>
#include <string.h>

#ifndef SIMDBLOOM_X86_SIMDE
#include <immintrin.h>
#define SBK_X86_TABLE(isa) sbloom_kernels_##isa
#define SBK_X86_NAME(isa) #isa
#else
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#define SBK_X86_TABLE(isa) sbloom_kernels_##isa##_simde
#define SBK_X86_NAME(isa) #isa "-simde"

#ifndef __mmask8
#define __mmask8 simde__mmask8
#endif
#ifndef __mmask16
#define __mmask16 simde__mmask16
#endif
#ifndef __mmask64
#define __mmask64 simde__mmask64
#endif

/* vptest: testz is 1 when a AND b is all zero; testc when NOT a AND b is. */
static inline int sbk_simde_testz_si256(simde__m256i a, simde__m256i b)
{
    uint64_t x[4], y[4], any = 0;
    simde_mm256_storeu_si256((simde__m256i *)x, a);
    simde_mm256_storeu_si256((simde__m256i *)y, b);
    for (int i = 0; i < 4; i++)
        any |= x[i] & y[i];
    return any == 0;
}
static inline int sbk_simde_testc_si256(simde__m256i a, simde__m256i b)
{
    uint64_t x[4], y[4], any = 0;
    simde_mm256_storeu_si256((simde__m256i *)x, a);
    simde_mm256_storeu_si256((simde__m256i *)y, b);
    for (int i = 0; i < 4; i++)
        any |= ~x[i] & y[i];
    return any == 0;
}
#undef _mm256_testz_si256
#undef _mm256_testc_si256
#define _mm256_testz_si256(a, b) sbk_simde_testz_si256(a, b)
#define _mm256_testc_si256(a, b) sbk_simde_testc_si256(a, b)

/* Each u32 lane of a, zero-extended to a u64 lane. */
static inline simde__m512i sbk_simde_cvtepu32_epi64(simde__m256i a)
{
    uint32_t in[8];
    uint64_t out[8];
    simde_mm256_storeu_si256((simde__m256i *)in, a);
    for (int i = 0; i < 8; i++)
        out[i] = in[i];
    return simde_mm512_loadu_si512(out);
}
#undef _mm512_cvtepu32_epi64
#define _mm512_cvtepu32_epi64(a) sbk_simde_cvtepu32_epi64(a)

/* Each u64 lane of a truncated to its low byte: bytes 0-7 of the result, the rest zero (vpmovqb,
 * which this SIMDe lacks). */
static inline simde__m128i sbk_simde_cvtepi64_epi8(simde__m512i a)
{
    uint64_t in[8];
    uint8_t out[16] = {0};
    simde_mm512_storeu_si512(in, a);
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)in[i];
    return simde_mm_loadu_si128((const simde__m128i *)out);
}
#undef _mm512_cvtepi64_epi8
#define _mm512_cvtepi64_epi8(a) sbk_simde_cvtepi64_epi8(a)

/* Per u64 lane, the low 32 bits of a times those of b as a 64-bit product (vpmuludq). SIMDe's
 * own takes 32-bit lane 2i, which on a big-endian host is the lane's high half. */
static inline simde__m512i sbk_simde_mul_epu32_512(simde__m512i a, simde__m512i b)
{
    uint64_t x[8], y[8];
    simde_mm512_storeu_si512(x, a);
    simde_mm512_storeu_si512(y, b);
    for (int i = 0; i < 8; i++)
        x[i] = (x[i] & 0xFFFFFFFFu) * (y[i] & 0xFFFFFFFFu);
    return simde_mm512_loadu_si512(x);
}
static inline simde__m256i sbk_simde_mul_epu32_256(simde__m256i a, simde__m256i b)
{
    uint64_t x[4], y[4];
    simde_mm256_storeu_si256((simde__m256i *)x, a);
    simde_mm256_storeu_si256((simde__m256i *)y, b);
    for (int i = 0; i < 4; i++)
        x[i] = (x[i] & 0xFFFFFFFFu) * (y[i] & 0xFFFFFFFFu);
    return simde_mm256_loadu_si256((const simde__m256i *)x);
}
#undef _mm512_mul_epu32
#undef _mm256_mul_epu32
#define _mm512_mul_epu32(a, b) sbk_simde_mul_epu32_512(a, b)
#define _mm256_mul_epu32(a, b) sbk_simde_mul_epu32_256(a, b)

/* Bit i set where u64 lanes i of a and b differ. */
static inline simde__mmask8 sbk_simde_cmpneq_epi64_mask(simde__m512i a, simde__m512i b)
{
    uint64_t x[8], y[8];
    simde_mm512_storeu_si512(x, a);
    simde_mm512_storeu_si512(y, b);
    unsigned mask = 0;
    for (int i = 0; i < 8; i++)
        mask |= (unsigned)(x[i] != y[i]) << i;
    return (simde__mmask8)mask;
}
#undef _mm512_cmpneq_epi64_mask
#define _mm512_cmpneq_epi64_mask(a, b) sbk_simde_cmpneq_epi64_mask(a, b)

/* Stores the lanes of a whose mask bit is set; the other lanes of memory stay as they were. */
static inline void sbk_simde_mask_store_epi32(void *p, simde__mmask16 k, simde__m512i a)
{
    uint32_t lanes[16];
    simde_mm512_storeu_si512(lanes, a);
    for (int i = 0; i < 16; i++)
        if ((k >> i) & 1)
            memcpy((uint32_t *)p + i, &lanes[i], 4);
}
static inline void sbk_simde_mask_store_epi64(void *p, simde__mmask8 k, simde__m512i a)
{
    uint64_t lanes[8];
    simde_mm512_storeu_si512(lanes, a);
    for (int i = 0; i < 8; i++)
        if ((k >> i) & 1)
            memcpy((uint64_t *)p + i, &lanes[i], 8);
}
#undef _mm512_mask_store_epi32
#undef _mm512_mask_store_epi64
#define _mm512_mask_store_epi32(p, k, a) sbk_simde_mask_store_epi32(p, k, a)
#define _mm512_mask_store_epi64(p, k, a) sbk_simde_mask_store_epi64(p, k, a)
#endif

/* The low 32 bits of the hash at `key`, read from memory: set1 of it then compiles to a broadcast
 * load (vpbroadcastd from memory, handled by a load port), not a move from a general register
 * followed by a broadcast (kernel_loops.h says why the per-key functions take an address). In
 * memory the low half is the first four bytes on a little-endian host, the last four on a
 * big-endian one (this file compiled through SIMDe, in test builds). */
static inline int sbk_key_low32(const uint64_t *key)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    const size_t offset = 4;
#else
    const size_t offset = 0;
#endif
    int32_t low;
    memcpy(&low, (const char *)key + offset, sizeof low);
    return low;
}

#endif
