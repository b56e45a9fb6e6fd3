/*
 * Run-time choice of the kernel table.
 *
 * The best table this CPU runs is picked once, on first use: on x86 from cpuid *and* xgetbv (the
 * CPU may have AVX-512 while the OS does not save ZMM registers, and then it must not be used),
 * on aarch64 NEON is architectural. SIMDBLOOM_ISA=scalar|avx2|avx512|avx512vbmi2|neon forces a
 * table; sbloom_set_isa() does the same from code. The choice is one atomic pointer, so
 * concurrent first calls are harmless: they compute the same answer.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* XCR0 bits the OS sets when it saves that register state on context switches. */
#define XCR0_SSE_AVX 0x6u /* XMM | YMM */
#define XCR0_AVX512 0xe6u /* XMM | YMM | opmask | ZMM_Hi256 | Hi16_ZMM */

static uint64_t read_xcr0(void)
{
    uint32_t eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((uint64_t)edx << 32) | eax;
}

static int os_saves(uint64_t mask)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
        return 0;
    return (read_xcr0() & mask) == mask;
}

/* PREFETCHW (CPUID 0x80000001, ECX bit 8, "3DNowPrefetch" in AMD's name). */
static int cpu_has_prefetchw(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c & (1u << 8));
}

__attribute__((unused)) static int cpu_has_avx2(void)
{
    unsigned a, b, c, d;
    if (!os_saves(XCR0_SSE_AVX) || !__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    return (b & bit_AVX2) && (b & bit_BMI2);
}

/* Intel TSX's restricted transactional memory (CPUID 7, EBX bit 11), unless SIMDBLOOM_NO_RTM is
 * set (to measure or test the path without it). */
static int cpu_has_rtm(void)
{
    unsigned a, b, c, d;
    const char *off = getenv("SIMDBLOOM_NO_RTM");
    if ((off && *off && strcmp(off, "0") != 0) || !__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    return (b & (1u << 11)) != 0;
}

__attribute__((unused)) static int cpu_has_avx512(void)
{
    unsigned a, b, c, d;
    if (!cpu_has_avx2() || !os_saves(XCR0_AVX512) || !__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    const unsigned need = bit_AVX512F | bit_AVX512DQ | bit_AVX512BW | bit_AVX512VL;
    return (b & need) == need;
}

/* AVX-512 with VBMI and VBMI2 (CPUID 7, ECX bits 1 and 6: byte permutes, compresses and funnel
 * shifts). */
__attribute__((unused)) static int cpu_has_avx512_vbmi2(void)
{
    unsigned a, b, c, d;
    if (!cpu_has_avx512() || !__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    return (c & (1u << 1)) && (c & (1u << 6));
}
#endif

static int always(void)
{
    return 1;
}

int sbloom_cpu_has_avx2(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return cpu_has_avx2();
#else
    return 0;
#endif
}

int sbk_cpu_prefetchw;
int sbk_cpu_rtm;
size_t sbk_prefetch_window[SBK_PREFETCH_CLASSES];
unsigned sbk_prefetch_fixed; /* a bit per class whose window the environment set */

/* A window from the environment (1 to 512 keys), or 0. */
static size_t window_from_env(const char *name)
{
    const char *text = getenv(name);
    char *end;
    unsigned long v = text ? strtoul(text, &end, 10) : 0;
    return text && end != text && *end == '\0' && v >= 1 && v <= 512 ? (size_t)v : 0;
}

/* The prefetch windows: the environment's, or each class's default (which the first large batches
 * may then fit to the CPU: src/core/prefetch_fit.c). */
static void read_prefetch_windows(void)
{
    size_t cache = window_from_env("SIMDBLOOM_PREFETCH_AHEAD");
    size_t dram = window_from_env("SIMDBLOOM_PREFETCH_AHEAD_DRAM");
    unsigned fixed = 0;
    for (unsigned c = 0; c < SBK_PREFETCH_CLASSES; c++) {
        size_t env = sbk_prefetch_class_dram(c) ? dram : cache;
        fixed |= env ? 1u << c : 0;
        __atomic_store_n(&sbk_prefetch_window[c], env ? env : sbk_prefetch_default(c),
                         __ATOMIC_RELAXED);
    }
    __atomic_store_n(&sbk_prefetch_fixed, fixed, __ATOMIC_RELEASE);
}

/* Once per process; a thread that comes while another sets them waits until they are set (it would
 * otherwise run its first batches with no prefetch at all). */
static void set_prefetch_windows(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, read_prefetch_windows);
}

/* CPU facts the kernels read besides their table (simd/kernels.h), noted before a table is
 * handed out. */
static void note_cpu_facts(void)
{
    set_prefetch_windows();
#if defined(__x86_64__) || defined(__i386__)
    __atomic_store_n(&sbk_cpu_prefetchw, cpu_has_prefetchw(), __ATOMIC_RELAXED);
    __atomic_store_n(&sbk_cpu_rtm, cpu_has_rtm(), __ATOMIC_RELAXED);
#endif
}

/* Candidates from least to most preferred; only those compiled into this binary are listed. */
static const struct {
    const sbloom_kernels *table;
    int (*runs_here)(void);
} candidates[] = {
    {&sbloom_kernels_scalar, always},
#ifdef SIMDBLOOM_HAVE_NEON
    /* On x86 the NEON table runs through SIMDe's portable emulation: correct, not fast. It can be
     * forced (tests, fuzzers) but is never picked automatically there. */
    {&sbloom_kernels_neon, always},
#endif
#ifdef SIMDBLOOM_HAVE_X86_SIMDE
    /* The x86 kernels through SIMDe's portable intrinsics: run anywhere, forced only. */
    {&sbloom_kernels_avx2_simde, always},
    {&sbloom_kernels_avx512_simde, always},
#endif
#ifdef SIMDBLOOM_HAVE_AVX2
    {&sbloom_kernels_avx2, cpu_has_avx2},
#endif
#ifdef SIMDBLOOM_HAVE_AVX512
    {&sbloom_kernels_avx512, cpu_has_avx512},
#endif
#ifdef SIMDBLOOM_HAVE_AVX512_VBMI2
    {&sbloom_kernels_avx512vbmi2, cpu_has_avx512_vbmi2},
#endif
};

#define NCANDIDATES (sizeof candidates / sizeof candidates[0])

/* A table that runs through SIMDe's emulation here (test builds): never picked automatically. */
static int emulated(const sbloom_kernels *table)
{
#ifdef SIMDBLOOM_HAVE_X86_SIMDE
    if (table == &sbloom_kernels_avx2_simde || table == &sbloom_kernels_avx512_simde)
        return 1;
#endif
#if defined(SIMDBLOOM_HAVE_NEON) && !defined(__aarch64__) && !defined(__ARM_NEON)
    if (table == &sbloom_kernels_neon)
        return 1;
#endif
    (void)table;
    return 0;
}

static int auto_pickable(size_t i)
{
    return !emulated(candidates[i].table) && candidates[i].runs_here();
}

static const sbloom_kernels *best_here(void)
{
    note_cpu_facts();
    const sbloom_kernels *best = &sbloom_kernels_scalar;
    for (size_t i = 0; i < NCANDIDATES; i++)
        if (auto_pickable(i))
            best = candidates[i].table;
    return best;
}

const sbloom_kernels *sbloom_kernels_by_name(const char *name)
{
    if (!name)
        return NULL;
    note_cpu_facts();
    for (size_t i = 0; i < NCANDIDATES; i++)
        if (strcmp(candidates[i].table->name, name) == 0 && candidates[i].runs_here())
            return candidates[i].table;
    return NULL;
}

static _Atomic(const sbloom_kernels *) active;
static atomic_int active_error;  /* SBLOOM_E_ISA while SIMDBLOOM_ISA names an unusable table */
static atomic_int active_forced; /* named by SIMDBLOOM_ISA or sbloom_set_isa */
static atomic_int decided;

static void decide_once(void)
{
    if (atomic_load_explicit(&decided, memory_order_acquire))
        return;
    const char *forced = getenv("SIMDBLOOM_ISA");
    const sbloom_kernels *table = NULL;
    int err = SBLOOM_OK;
    if (forced && *forced && strcmp(forced, "auto") != 0) {
        table = sbloom_kernels_by_name(forced);
        if (!table)
            err = SBLOOM_E_ISA;
    } else {
        table = best_here();
    }
    atomic_store_explicit(&active, table, memory_order_release);
    atomic_store_explicit(&active_error, err, memory_order_release);
    atomic_store_explicit(&active_forced, forced && *forced && strcmp(forced, "auto") != 0,
                          memory_order_release);
    atomic_store_explicit(&decided, 1, memory_order_release);
}

const sbloom_kernels *sbloom_kernels_active(int *err)
{
    decide_once();
    const sbloom_kernels *table = atomic_load_explicit(&active, memory_order_acquire);
    if (!table && err)
        *err = atomic_load_explicit(&active_error, memory_order_acquire);
    return table;
}

int sbloom_kernels_inline_ok(const sbloom_kernels *table)
{
    if (!atomic_load_explicit(&active_forced, memory_order_acquire))
        return 1;
    return table != &sbloom_kernels_scalar && !emulated(table);
}

int sbloom_kernels_whole_words(const sbloom_kernels *table)
{
    return table != &sbloom_kernels_scalar && !emulated(table);
}

const char *sbloom_isa(void)
{
    const sbloom_kernels *table = sbloom_kernels_active(NULL);
    return table ? table->name : "invalid SIMDBLOOM_ISA";
}

int sbloom_set_isa(const char *name)
{
    decide_once();
    const sbloom_kernels *table =
        (!name || strcmp(name, "auto") == 0) ? best_here() : sbloom_kernels_by_name(name);
    if (!table)
        return SBLOOM_E_ISA;
    atomic_store_explicit(&active, table, memory_order_release);
    atomic_store_explicit(&active_error, SBLOOM_OK, memory_order_release);
    atomic_store_explicit(&active_forced, name && strcmp(name, "auto") != 0, memory_order_release);
    return SBLOOM_OK;
}

/* Emulated tables (test builds) first, then the native ones in order of preference, so that
 * the last name is the one picked automatically. */
size_t sbloom_isa_list(const char **names, size_t cap)
{
    size_t count = 0;
    for (int native = 0; native <= 1; native++) {
        for (size_t i = 0; i < NCANDIDATES; i++) {
            if (!candidates[i].runs_here() || auto_pickable(i) != native)
                continue;
            if (names && count < cap)
                names[count] = candidates[i].table->name;
            count++;
        }
    }
    return count;
}
