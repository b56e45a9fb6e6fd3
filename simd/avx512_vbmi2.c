/* The AVX-512 kernels compiled with VBMI and VBMI2 as well (simd/avx512.c: the fingerprint
 * family's byte moves), table "avx512vbmi2": picked where the CPU has them. */
#include "avx512.c"
