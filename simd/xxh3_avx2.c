/*
 * XXH3-64 compiled with AVX2 (CMake gives this file -mavx2): xxHash picks its long-input loop
 * from the compiler's flags (XXH_VECTOR), so this is XXH3_64bits with 32-byte vectors, the same
 * value as every other build of it. src/base/hash_long.c calls it for keys longer than 240 bytes on
 * CPUs with AVX2; the library itself is compiled for the baseline (SSE2 on x86-64).
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "kernels.h"

uint64_t sbloom_xxh3_avx2(const void *data, size_t len)
{
    return XXH3_64bits(data, len);
}
