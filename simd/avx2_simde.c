/* The AVX2 kernels compiled through SIMDe for any CPU (simd/x86.h): test builds only. */
#define SIMDBLOOM_X86_SIMDE 1
#include "avx2.c"
