/*
 * The kernel table: what every instruction set implements, and the layout math they share.
 *
 * A kernel works on 64-bit hashes and a block array; it knows nothing of strings, sizing or
 * files. src/ calls kernels only through a `sbloom_kernels` table picked by src/base/dispatch.c.
 * Every table must give results and leave filters byte-identical to the scalar table.
 */
#ifndef SIMDBLOOM_KERNELS_H
#define SIMDBLOOM_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* The salts (SBLOOM_SALT0_ ...), without the header's inline single-key calls: a kernel file
 * built alone (bench/placement) has no library to call. */
#ifndef SIMDBLOOM_NO_INLINE
#define SIMDBLOOM_NO_INLINE
#endif
#include "simdbloom.h"

/* Layout indexes in a kernel table: the public enum value minus one. */
enum {
    SBK_PARQUET = 0,
    SBK_BLOCK512_K8 = 1,
    SBK_BLOCK512_K16 = 2,
    SBK_COUNTING512 = 3,
    /* 4 and 5 are the scalable and windowed layouts: stages and rings, no kernels of their own */
    SBK_FP512_R10 = 6, /* the fingerprint family (fingerprint.h) */
    SBK_FP512_R13 = 7,
    SBK_FP512_R16 = 8,
    SBK_FP512_R19 = 9,
    SBK_FP512_R22 = 10,
    SBK_FP512_R27 = 11,
    SBK_FP512_R29 = 12,
    SBK_LAYOUTS = 13
};

/* Block index from the high 32 bits by multiply-high: uniform over [0, nblocks) without a
 * modulo, for nblocks <= 2^32 (the Parquet rule). */
static inline uint64_t sbk_block_index(uint64_t hash, uint64_t nblocks)
{
    return ((hash >> 32) * nblocks) >> 32;
}

/* 1 when this CPU has PREFETCHW (x86: CPUID 0x80000001, ECX bit 8, which every AVX-512 CPU and
 * every AMD64 CPU reports, and Intel's before Broadwell do not). src/base/dispatch.c sets it before
 * any kernel table is handed out; callers read it once per batch (sbk_have_prefetchw). */
extern int sbk_cpu_prefetchw;

static inline int sbk_have_prefetchw(void)
{
    return __atomic_load_n(&sbk_cpu_prefetchw, __ATOMIC_RELAXED);
}

/* 1 when this CPU runs hardware transactions (Intel TSX RTM: CPUID 7, EBX bit 11) and
 * SIMDBLOOM_NO_RTM is not set; set with sbk_cpu_prefetchw. The concurrent mode's adds use them
 * (src/modes/concurrent.c). */
extern int sbk_cpu_rtm;

static inline int sbk_have_rtm(void)
{
    return __atomic_load_n(&sbk_cpu_rtm, __ATOMIC_RELAXED);
}

/* Request the line at p for writing, so that it arrives owned by this core: with PREFETCHW when
 * `prefetchw` (sbk_have_prefetchw), else the ordinary write-prefetch hint. An atomic
 * read-modify-write on a line that arrived shared (an ordinary prefetch, then a load) must first
 * take ownership, and as a full barrier it stalls the core meanwhile: with two threads adding
 * to one 256 MiB filter, PREFETCHW ahead of the concurrent add's fetch-ors took it from 17-27 to
 * 36-45 Mkeys/s in a throwaway program's runs (docs/CONCURRENCY.md). */
static inline void sbk_prefetch_owned(const void *p, int prefetchw)
{
#if defined(__x86_64__) || defined(__i386__)
    if (prefetchw) {
        __asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
        return;
    }
#else
    (void)prefetchw;
#endif
    __builtin_prefetch(p, 1, 3);
}

/* The salts, one by one, from their one definition in the public header: Parquet's eight (the
 * kernels take them as SBK_PARQUET_SALTS, and avx2.c also pairs them for block512-k8), then the
 * eight more of the 512-bit layouts. The bit of word i is the top bits of (uint32)hash * salt[i].
 */
#define SBK_SALT0 SBLOOM_SALT0_
#define SBK_SALT1 SBLOOM_SALT1_
#define SBK_SALT2 SBLOOM_SALT2_
#define SBK_SALT3 SBLOOM_SALT3_
#define SBK_SALT4 SBLOOM_SALT4_
#define SBK_SALT5 SBLOOM_SALT5_
#define SBK_SALT6 SBLOOM_SALT6_
#define SBK_SALT7 SBLOOM_SALT7_
#define SBK_PARQUET_SALTS                                                                          \
    {                                                                                              \
        SBK_SALT0, SBK_SALT1, SBK_SALT2, SBK_SALT3, SBK_SALT4, SBK_SALT5, SBK_SALT6, SBK_SALT7     \
    }
#define SBK_BLOCK512_SALTS                                                                         \
    {                                                                                              \
        SBK_SALT0, SBK_SALT1, SBK_SALT2, SBK_SALT3, SBK_SALT4, SBK_SALT5, SBK_SALT6, SBK_SALT7,    \
            SBLOOM_SALT8_, SBLOOM_SALT9_, SBLOOM_SALT10_, SBLOOM_SALT11_, SBLOOM_SALT12_,          \
            SBLOOM_SALT13_, SBLOOM_SALT14_, SBLOOM_SALT15_                                         \
    }

/*
 * One layout's operations over a block array of `nblocks` blocks (64-byte aligned). Keys are
 * handled strictly in order, so a key repeated later in a batch sees the earlier one.
 *   insert:   adds every key (sets its bits, or increments its counters below 15); was_absent[i]
 *             = 1 if key i was absent just before (was_absent may be NULL); returns that count.
 *             For the bit layouts this is the fused test-and-add, and a plain add.
 *   contains: results[i] = 1 if key i is present (results may be NULL); returns the count.
 *   remove:   counting layout only, NULL for the bit layouts: if none of the key's counters is
 *             zero, decrements each that is below 15 and sets removed[i] = 1; otherwise changes
 *             nothing and sets 0. Returns the count removed.
 *
 * The fingerprint layouts (SBK_FP512_*, fingerprint.h): insert is the test-and-add (a present
 * key is not stored again) and adds SBK_FP_REFUSED to its count when a key found its line and
 * both spare lines full (that key was not added; results[i] 0); remove takes out one matching
 * entry. No shared or transaction forms; their window's entries carry an age (window_age).
 *
 * The counting layout (SBK_COUNTING512): 64-byte blocks of 8 x 64-bit words, each word sixteen
 * 4-bit counters (counter j in bits 4j..4j+3). A key counts in counter
 * ((uint32)hash * salt[i]) >> 28 of word i, with the first eight block512 salts. A counter at 15
 * is saturated: never incremented or decremented again.
 */
/* Added to an insert kernel's count when it refused a key (fingerprint layouts: its line and
 * both spare lines full): that key was not added, every other key of the batch was. insert_one
 * answers SBK_FP_ONE_REFUSED for such a key. */
#define SBK_FP_REFUSED (UINT64_C(1) << 63)
#define SBK_FP_ONE_REFUSED 2

typedef uint64_t (*sbk_batch_fn)(void *blocks, uint64_t nblocks, const uint64_t *hashes, size_t n,
                                 uint8_t *results);
typedef uint64_t (*sbk_probe_fn)(const void *blocks, uint64_t nblocks, const uint64_t *hashes,
                                 size_t n, uint8_t *results);
/* One key, without a batch loop: the single-key calls (sbloom_add_hash, sbloom_contains_hash). */
typedef int (*sbk_insert_one_fn)(void *blocks, uint64_t nblocks, uint64_t hash);
typedef int (*sbk_probe_one_fn)(const void *blocks, uint64_t nblocks, uint64_t hash);

/* The windowed mode's kernels (src/modes/windowed.c): up to 16 generations of one filter, a
 * key's bits in each generation side by side, so that one pass tests them all. Two forms:
 *   - adjacent lines (the 512-bit layouts): the blocks are `groups` groups of `lines` 64-byte
 *     blocks; a key's group is sbk_block_index(hash, groups), and line g of it is the key's
 *     block in generation g (the same bits in each). One key's lines are adjacent in memory: DRAM
 *     serves them from one page, and one prefetch pass requests them all.
 *   - generation slots (the counting layout, lines = 1): the counting geometry, each 4-bit slot
 *     a bitmap of the generations that set it (bit g: generation g); a generation holds a key
 *     when bit g is set in all eight of its slots. Four generations in the one line of a key.
 *   window_insert:   a key that no generation holds gets its bits in generation `target`;
 *                    was_absent[i] = 1 for those (may be NULL); returns that count.
 *   window_contains: results[i] = 1 if some generation holds key i; returns the count (target
 *                    unused, nothing written).
 * NULL for Parquet. */
typedef uint64_t (*sbk_window_fn)(void *blocks, uint64_t groups, uint32_t lines, uint32_t target,
                                  const uint64_t *hashes, size_t n, uint8_t *results);

/* The concurrent mode's test-and-add of up to SBK_TRANSACTION_KEYS keys as one hardware
 * transaction (Intel TSX RTM; kernel_loops.h, src/modes/concurrent.c): the layout's plain insert
 * of each key's block, in order, inside one transaction, which first reads each key's stripe
 * lock (stripes[block index & stripe_mask]) and gives way while one is held. On a commit,
 * is_new[i] = 1 for the keys that were absent and the count is returned; else
 * SBK_TRANSACTION_RETRY (aborted by a conflict or a held lock: another try may commit) or
 * SBK_TRANSACTION_FAILED (aborted for another reason: take the locked path), and nothing of it
 * happened. NULL where the build or the ISA has none (non-x86, NEON, SIMDe, ThreadSanitizer, the
 * counting layout); called only where sbk_have_rtm(). */
#define SBK_TRANSACTION_KEYS 8
typedef int (*sbk_transaction_fn)(void *blocks, uint64_t nblocks, const uint64_t *hashes, size_t n,
                                  const uint32_t *stripes, uint32_t stripe_mask, uint8_t *is_new);
#define SBK_TRANSACTION_RETRY (-1)
#define SBK_TRANSACTION_FAILED (-2)

/* The windowed mode's form (src/modes/windowed.c, many threads): up to SBK_TRANSACTION_KEYS keys
 * of window_insert (add) or window_contains (!add) as one transaction, each key's stripe lock
 * (stripes[group / per_stripe]) read first; results and the return as insert_transaction's. */
typedef int (*sbk_window_transaction_fn)(void *blocks, uint64_t groups, uint32_t lines,
                                         uint32_t target, int add, const uint64_t *hashes, size_t n,
                                         const uint32_t *stripes, uint64_t per_stripe,
                                         uint8_t *results);

/* The generation slots' rotation (the counting layout's entry, NULL for the others): `count`
 * 64-bit words from a 64-byte aligned start, each ANDed with `keep` (one generation's bit cleared
 * in every slot: src/modes/windowed.c). Every table's is the same loop (kernel_loops.h), compiled
 * for its instruction set. */
typedef void (*sbk_window_clear_fn)(uint64_t *words, uint64_t count, uint64_t keep);

/* The fingerprint layouts' window (fingerprint.h, "A window's entries"; NULL for the others):
 * its blocks are `lines` main and spare lines and then the spill lines (sbk_fp_spill_lines).
 * window_insert and window_contains take `lines` as `groups`, the age's bits as `lines` and the
 * current period's age as `target`; window_age changes the entries of one age in lines
 * [from, to): dropped (to_age SBK_FP_AGE_DROP) or given to_age. */
#define SBK_FP_AGE_DROP UINT32_MAX
typedef void (*sbk_window_age_fn)(void *blocks, uint64_t lines, uint64_t from, uint64_t to,
                                  uint32_t age_bits, uint32_t age, uint32_t to_age);

typedef struct sbloom_layout_kernels {
    sbk_batch_fn insert;
    sbk_probe_fn contains;
    sbk_batch_fn remove;
    /* The concurrent mode's forms (bit layouts only, NULL for counting: src/modes/concurrent.c),
     * safe while other threads and processes run them on the same blocks: insert_shared:   tests
     * each word of the key's block and ORs the key's bit in with one atomic fetch-or only where the
     * word lacks it (a key already present writes nothing); was_absent[i] = 1 if this call found a
     * bit missing. contains_shared: contains. Native vector kernels (AVX2, AVX-512, NEON on Arm)
     * are their plain contains: an aligned vector load reads every aligned 8-byte word whole, and
     * bits only go from 0 to 1, so it sees each word as it was before or after any fetch-or, never
     * a mixture that clears a bit. Portable kernels (scalar, and the SIMDe emulations, whose vector
     * loads are byte copies) read each 64-bit word with a relaxed atomic load instead, which is
     * what C11 (and ThreadSanitizer) can check. */
    sbk_batch_fn insert_shared;
    sbk_probe_fn contains_shared;
    sbk_insert_one_fn insert_one; /* insert and contains of one key (the plain forms) */
    sbk_probe_one_fn contains_one;
    sbk_window_fn window_insert; /* the windowed mode's forms (above) */
    sbk_window_fn window_contains;
    sbk_transaction_fn insert_transaction; /* (above) */
    sbk_window_transaction_fn window_transaction;
    sbk_window_clear_fn window_clear; /* (above) */
    sbk_window_age_fn window_age;
    /* Fingerprint layouts: 1 where an operation on the key may read or write the spare lines as
     * its line stands now (its quotient at or above the line's mark, or the line full), for the
     * concurrent forms' spare lock (src/modes/locked.h); NULL for the others. */
    sbk_probe_one_fn reaches_spare;
} sbloom_layout_kernels;

#define SBK_COUNTER_MAX 15

/* The batch loops' software prefetch, a sliding window: while key j is probed, the line of key
 * j + AHEAD is requested, so about AHEAD misses are in flight at every moment instead of a burst
 * per chunk followed by a stall. Only on filters of at least MIN_BYTES: smaller ones live in L2,
 * where a prefetch is instructions for nothing. A batch of at most AHEAD keys is not prefetched
 * (the string driver in src/core/driver.c prefetches its own and calls in such pieces).
 * 512 KiB rather than 4 MiB: filters between the two live in L3 at best. In three A/B runs of
 * ../shared/peers/run.sh (REPS=3, --only sb,boost; SIZES=1M,10M once, SIZES=1M,2M twice; AMD
 * EPYC) block512-k8 AVX2 positive queries at 1M keys (1.25 MB) took 1.50-1.54 ns with 512 KiB
 * against 1.79-2.23 with 4 MiB, Parquet 1.03-1.04 against 1.12-1.39 (Boost's bulk multiblock64
 * and multiblock32: 1.64-1.81 and 1.20-1.50 in the same runs).
 * 32 rather than 16: in two runs of ../shared/peers/run.sh at 100M keys (SIZES=100M REPS=3),
 * block512-k8 AVX2 insert/contains/miss measured 1.41/1.31/1.31x the run's "BASE line pf16" with
 * 16, and 1.19/0.99/1.03x with 32 (AMD EPYC, noisy: compare within a run). Tune with
 * -DSBK_PREFETCH_AHEAD=N. */
#ifndef SBK_PREFETCH_AHEAD
#define SBK_PREFETCH_AHEAD 32
#endif
#define SBK_PREFETCH_MIN_BYTES (UINT64_C(512) << 10)

/* Filters of 64 MiB and more are served from DRAM on the CPU this was measured on (the peer
 * harness's line-read limit there: 0.9-1.0 ns a line at 1.25 MB, 6.8-12.5 at 125 MB, run
 * peers-20261123T113319Z; this VM does not report its cache sizes), so the window is twice as
 * deep there. In two runs of
 * ../shared/peers/run.sh at 100M keys (SIZES=100M REPS_LARGE=3, --only avx2,bulk,BASE; AMD
 * EPYC), block512-k8 AVX2 insert / positive / negative over Boost's bulk multiblock64 measured
 * 1.14 / 1.11 / 1.13 with 32 and 0.95 / 0.88 / 1.07 with 64. The string driver's pieces
 * (src/core/driver.c) stay SBK_PREFETCH_AHEAD long, shorter than either window. */
#ifndef SBK_PREFETCH_AHEAD_DRAM
#define SBK_PREFETCH_AHEAD_DRAM 64
#endif
#define SBK_PREFETCH_DRAM_BYTES (UINT64_C(64) << 20)

/* The windows in force, by size class: a filter of at least 2^(19 + c) bytes and less than
 * 2^(20 + c) is in class c (class 0 holds the smaller ones too, the last every larger one). Each
 * starts at SBK_PREFETCH_AHEAD, or SBK_PREFETCH_AHEAD_DRAM from SBK_PREFETCH_DRAM_BYTES up, and
 * the first large batches on a filter of the class fit it to the CPU (src/core/prefetch_fit.c),
 * unless the environment sets it when the kernels are first picked (src/base/dispatch.c):
 * SIMDBLOOM_PREFETCH_AHEAD below SBK_PREFETCH_DRAM_BYTES, SIMDBLOOM_PREFETCH_AHEAD_DRAM from
 * there up, each 1 to 512 keys. Only speed depends on a window, never an answer. */
#define SBK_PREFETCH_CLASSES 14
extern size_t sbk_prefetch_window[SBK_PREFETCH_CLASSES];
extern unsigned sbk_prefetch_fixed; /* a bit per class whose window the environment set */

/* The size class of a filter of `bytes`. */
static inline unsigned sbk_prefetch_class(uint64_t bytes)
{
    if (bytes < (UINT64_C(1) << 20))
        return 0;
    unsigned c = (unsigned)(63 - __builtin_clzll(bytes)) - 19;
    return c < SBK_PREFETCH_CLASSES ? c : SBK_PREFETCH_CLASSES - 1;
}

/* Whether class cls holds filters of SBK_PREFETCH_DRAM_BYTES and more (served from DRAM). */
static inline int sbk_prefetch_class_dram(unsigned cls)
{
    return (UINT64_C(1) << (19 + cls)) >= SBK_PREFETCH_DRAM_BYTES;
}

/* The window a class starts with. */
static inline size_t sbk_prefetch_default(unsigned cls)
{
    return sbk_prefetch_class_dram(cls) ? SBK_PREFETCH_AHEAD_DRAM : SBK_PREFETCH_AHEAD;
}

/* The prefetch distance, in keys, for a filter of `bytes`. */
static inline size_t sbk_prefetch_ahead(uint64_t bytes)
{
    return __atomic_load_n(&sbk_prefetch_window[sbk_prefetch_class(bytes)], __ATOMIC_RELAXED);
}

/* XXH64 (seed 0, bit-exact) of 8 byte strings at once, each at least 4 bytes long (the
 * Parquet layout's hash of string keys: src/core/keys.c takes it for groups of 8 such keys). */
typedef void (*sbk_xxh64_fn)(const uint8_t *const keys[8], const size_t lens[8], uint64_t out[8]);

typedef struct sbloom_kernels {
    const char *name; /* "scalar", "avx2", "avx512", "avx512vbmi2", "neon" */
    sbloom_layout_kernels layout[SBK_LAYOUTS];
    sbk_xxh64_fn xxh64_x8; /* NULL: one key at a time (XXH64) */
} sbloom_kernels;

/* Tables each instruction-set file exports (only those built into this binary exist). */
extern const sbloom_kernels sbloom_kernels_scalar;
extern const sbloom_kernels sbloom_kernels_avx2;
extern const sbloom_kernels sbloom_kernels_avx512;
extern const sbloom_kernels sbloom_kernels_avx512vbmi2; /* the same with VBMI and VBMI2 */
extern const sbloom_kernels sbloom_kernels_neon;
extern const sbloom_kernels sbloom_kernels_avx2_simde; /* test builds: x86 kernels via SIMDe */
extern const sbloom_kernels sbloom_kernels_avx512_simde;

/* xxh3_avx2.c (x86 builds): XXH3_64bits compiled with AVX2, for src/base/hash_long.c. */
uint64_t sbloom_xxh3_avx2(const void *data, size_t len);

/* The table with that name if it is built in and this CPU runs it, else NULL (src/base/dispatch.c).
 * Tests and fuzzers use it to reach one kernel directly. */
const sbloom_kernels *sbloom_kernels_by_name(const char *name);

#endif /* SIMDBLOOM_KERNELS_H */
