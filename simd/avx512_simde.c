/* The AVX-512 kernels compiled through SIMDe for any CPU (simd/x86.h): test builds only. */
#define SIMDBLOOM_X86_SIMDE 1
#include "avx512.c"
