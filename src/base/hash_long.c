/*
 * XXH3-64 of inputs longer than its 240-byte short paths (src/base/hash.h, sbloom_xxh3): xxHash's
 * long loop runs with the widest vector unit this CPU has. The library is compiled for the
 * baseline, so that loop would otherwise be SSE2 on x86-64; where the CPU has AVX2 it runs
 * simd/xxh3_avx2.c instead. The value is the same either way (xxHash's guarantee; the tests
 * compare it with their own XXH3_64bits). URLs of more than 240 bytes (1.5% of the peers'
 * sample, 456 bytes on average) hashed in 22.4 ns with SSE2 and 12.8 with AVX2 (AMD EPYC, gcc 12;
 * docs/notes/kernels-history.md). AVX-512 measured no faster than AVX2 there, so it has no build of
 * its own. Over the whole sample the gain is within noise: one later program measured this form
 * 0.09 ns a URL slower than XXH3_64bits inlined whole, and the long keys' own time moved between 12
 * and 17 ns from run to run of one binary (docs/notes/kernels-history.md, "The batch string path").
 */
#include <stdatomic.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "hash.h"
#include "base.h"

typedef uint64_t (*xxh3_fn)(const void *data, size_t len);

static uint64_t xxh3_baseline(const void *data, size_t len)
{
    return XXH3_64bits(data, len);
}

static xxh3_fn xxh3_best_here(void)
{
#ifdef SIMDBLOOM_HAVE_AVX2
    if (sbloom_cpu_has_avx2())
        return sbloom_xxh3_avx2;
#endif
    return xxh3_baseline;
}

/* Chosen on first use; concurrent first calls choose the same function. */
static _Atomic(xxh3_fn) xxh3_chosen;

uint64_t sbloom_xxh3_long(const void *data, size_t len)
{
    xxh3_fn fn = atomic_load_explicit(&xxh3_chosen, memory_order_relaxed);
    if (!fn) {
        fn = xxh3_best_here();
        atomic_store_explicit(&xxh3_chosen, fn, memory_order_relaxed);
    }
    return fn(data, len);
}
