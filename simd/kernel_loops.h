/*
 * The batch loops every instruction set shares. An ISA file writes, per layout, two per-key
 * functions and lets SBK_DEFINE_BATCH_KERNELS build the three table entries from them:
 *
 *   static inline int NAME_probe(const void *blocks, uint64_t nblocks, const uint64_t *key);
 *       1 if every bit of the key is set in its block, else 0 (no branch on the answer).
 *   static inline int NAME_insert(void *blocks, uint64_t nblocks, const uint64_t *key);
 *       sets the key's bits; 1 if at least one was clear before (the key was new).
 *
 * `key` is the address of the key's 64-bit hash, not its value: a vector kernel then loads the
 * hash's low half straight into every lane (a broadcast load, done by a load port), where a value
 * in a register must first cross to the vector unit (vmovd, then vpbroadcastd). On the AMD EPYC
 * of docs/notes/kernels-history.md a standalone AVX2 loop of Parquet lookups in L2, compiled at 32
 * placements, took a median 0.65 ns a key that way against 0.69, and 0.51-0.55 against 0.60-0.62
 * unrolled.
 *
 * For the counting layout it writes three per-key functions (NAME_probe as above, counters
 * non-zero for set bits; NAME_increment, 1 if a counter was zero; NAME_decrement, 1 if removed)
 * and SBK_DEFINE_COUNTING_KERNELS builds the counting entries.
 *
 * Keys are handled strictly in order, so a key repeated later in a batch sees the earlier one's
 * bits, and two keys of one batch sharing a block never lose an update.
 */
#ifndef SIMDBLOOM_KERNEL_LOOPS_H
#define SIMDBLOOM_KERNEL_LOOPS_H

#include <string.h>

#include "kernels.h"

/* Bytes per block of each layout's per-key functions (NAME in the macros below). */
#define SBK_BLOCK_BYTES_parquet 32
#define SBK_BLOCK_BYTES_k8 64
#define SBK_BLOCK_BYTES_k16 64
#define SBK_BLOCK_BYTES_counting 64

/* The same blocks as 64-bit words, for the concurrent mode's atomic accesses. */
#define SBK_WORDS64_parquet 4
#define SBK_WORDS64_k8 8
#define SBK_WORDS64_k16 8

/* Software prefetch as a sliding window (sbk_prefetch_ahead, SBK_PREFETCH_MIN_BYTES in
 * kernels.h): while key j is probed, the line of key j + ahead is requested. */

/* WRITE: 0 for loops that read, 1 for plain writes, 2 for the concurrent mode's atomic writes
 * (sbk_prefetch_owned, with the loop's prefetchw_ read once per batch). */
#define SBK_PREFETCH_LINE(BLOCKS, NBLOCKS, HASH, BLOCK_BYTES, WRITE)                               \
    do {                                                                                           \
        const char *line_ =                                                                        \
            (const char *)(BLOCKS) + sbk_block_index(HASH, NBLOCKS) * (BLOCK_BYTES);               \
        if ((WRITE) == 2)                                                                          \
            sbk_prefetch_owned(line_, prefetchw_);                                                 \
        else                                                                                       \
            __builtin_prefetch(line_, (WRITE) != 0, 3);                                            \
    } while (0)

/* A long batch over a filter small enough to need no prefetch of its lines reads its hashes
 * from memory and nothing else: the loop requests them SBK_HASH_AHEAD keys ahead (8 lines). The
 * hardware's own prefetch did not keep up on this project's Intel Xeon VM: 4M hashes (32 MB) into
 * a 32 KiB block512-k8 filter, adds took 2.1-4.6 ns a key from one run to the next, 1.5-1.6 with
 * the request (docs/notes/kernels-history.md). Batches shorter than SBK_HASH_STREAM_MIN keys
 * (hashes of 128 KiB) are left as they were: theirs are usually in the caches already. Loops with
 * a window of lines do not request hashes: it gained nothing there. */
#define SBK_HASH_AHEAD 64
#define SBK_HASH_STREAM_MIN 16384

/* The per-key loops run four keys an iteration (SBK_UNROLL). On the AMD EPYC of
 * docs/notes/kernels-history.md the speed of a loop this short depends on where its code lands in
 * memory: with avx2.c compiled at 16 different offsets, one key an iteration, the Parquet lookup
 * loop took 0.67-0.74 ns a key at 12 of them and 1.08-1.17 at the other 4; unrolled by four (and
 * with the broadcast load above), 0.52-0.58 at all 16 (100K keys in 125 KB of blocks, best of 30;
 * `bash bench/placement` measures it again). Compilers without the pragma run one key at a time,
 * and so does the scalar reference, which defines SBK_UNROLL empty: it is written for reading, and
 * unrolled its code was four times the size. */
#ifndef SBK_UNROLL
#if defined(__GNUC__)
#define SBK_UNROLL _Pragma("GCC unroll 4")
#else
#define SBK_UNROLL
#endif
#endif

/* How many of n answers (0 or 1 each) are 1. The batch loops below store each answer and count
 * them here afterwards: adding each answer as it is stored made a loop of Parquet adds with
 * results 1.07-1.09 ns a key against 0.76 for the same loop that only counted, and storing
 * without adding took 0.92 with a byte loop here (100K keys, 125 KB of blocks, AVX2, best of 101;
 * docs/notes/kernels-history.md).
 *
 * Eight answers a step, as the bytes of one 64-bit word: each byte of `columns` counts its own
 * column of answers, and is emptied into the total after at most 255 steps, before it could
 * overflow. The byte loop it replaces took 0.09-0.12 ns an answer (gcc widened every byte to 64
 * bits), this 0.01-0.06; block512-k8 test-and-add with AVX2, 100K keys, went 1.18-1.20 -> 1.10
 * ns a key (AMD EPYC, gcc 12; docs/notes/kernels-history.md). The scalar reference defines
 * SBK_COUNT_BYTES to keep the byte loop, so the differential tests compare this count with a plain
 * one. */
static inline uint64_t sbk_count_answers(const uint8_t *results, size_t n)
{
    uint64_t count = 0;
    size_t j = 0;
#ifndef SBK_COUNT_BYTES
    while (n - j >= 8) {
        size_t steps = (n - j) / 8 < 255 ? (n - j) / 8 : 255;
        uint64_t columns = 0;
        for (size_t step = 0; step < steps; step++, j += 8) {
            uint64_t eight;
            memcpy(&eight, results + j, sizeof eight);
            columns += eight;
        }
        /* the eight column counts summed: in pairs (16-bit lanes, at most 510 each), then the
         * four pairs by one multiply into the top lane (at most 2040) */
        uint64_t pairs = (columns & UINT64_C(0x00ff00ff00ff00ff)) +
                         ((columns >> 8) & UINT64_C(0x00ff00ff00ff00ff));
        count += (pairs * UINT64_C(0x0001000100010001)) >> 48;
    }
#endif
    for (; j < n; j++)
        count += results[j];
    return count;
}

/* One batch loop over a per-key function returning 0 or 1: the answers go to `results` when it
 * is not NULL, and their sum is returned. Separate loops, so that neither the results pointer
 * nor the prefetch decision is tested per key. WRITE as for SBK_PREFETCH_LINE. */
#define SBK_DEFINE_LOOP(LOOP, PER_KEY, BLOCKS, BLOCK_BYTES, WRITE)                                 \
    static uint64_t LOOP(BLOCKS blocks, uint64_t nblocks, const uint64_t *hashes, size_t n,        \
                         uint8_t *results)                                                         \
    {                                                                                              \
        uint64_t count = 0;                                                                        \
        size_t j = 0;                                                                              \
        const int prefetchw_ = (WRITE) == 2 && sbk_have_prefetchw();                               \
        (void)prefetchw_;                                                                          \
        const uint64_t bytes_ = nblocks * (BLOCK_BYTES);                                           \
        const size_t ahead_ = sbk_prefetch_ahead(bytes_); /* 0: none */                            \
        if (n > ahead_ && ahead_ > 0 && bytes_ >= SBK_PREFETCH_MIN_BYTES) {                        \
            for (size_t k = 0; k < ahead_; k++)                                                    \
                SBK_PREFETCH_LINE(blocks, nblocks, hashes[k], BLOCK_BYTES, WRITE);                 \
            size_t steady = n - ahead_;                                                            \
            if (results) {                                                                         \
                SBK_UNROLL                                                                         \
                for (; j < steady; j++) {                                                          \
                    SBK_PREFETCH_LINE(blocks, nblocks, hashes[j + ahead_], BLOCK_BYTES, WRITE);    \
                    results[j] = (uint8_t)PER_KEY(blocks, nblocks, hashes + j);                    \
                }                                                                                  \
            } else {                                                                               \
                SBK_UNROLL                                                                         \
                for (; j < steady; j++) {                                                          \
                    SBK_PREFETCH_LINE(blocks, nblocks, hashes[j + ahead_], BLOCK_BYTES, WRITE);    \
                    count += (uint64_t)PER_KEY(blocks, nblocks, hashes + j);                       \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        if (n - j >= SBK_HASH_STREAM_MIN) { /* a filter in the caches, a long batch */             \
            const size_t streamed_ = n - SBK_HASH_AHEAD;                                           \
            if (results) {                                                                         \
                SBK_UNROLL                                                                         \
                for (; j < streamed_; j++) {                                                       \
                    __builtin_prefetch(hashes + j + SBK_HASH_AHEAD, 0, 3);                         \
                    results[j] = (uint8_t)PER_KEY(blocks, nblocks, hashes + j);                    \
                }                                                                                  \
            } else {                                                                               \
                SBK_UNROLL                                                                         \
                for (; j < streamed_; j++) {                                                       \
                    __builtin_prefetch(hashes + j + SBK_HASH_AHEAD, 0, 3);                         \
                    count += (uint64_t)PER_KEY(blocks, nblocks, hashes + j);                       \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        if (results) {                                                                             \
            SBK_UNROLL                                                                             \
            for (; j < n; j++)                                                                     \
                results[j] = (uint8_t)PER_KEY(blocks, nblocks, hashes + j);                        \
            return sbk_count_answers(results, n);                                                  \
        } else {                                                                                   \
            SBK_UNROLL                                                                             \
            for (; j < n; j++)                                                                     \
                count += (uint64_t)PER_KEY(blocks, nblocks, hashes + j);                           \
        }                                                                                          \
        return count;                                                                              \
    }

/*
 * The concurrent mode's per-key functions (kernels.h: contains_shared, insert_shared). An ISA
 * file whose vector loads and stores are native defines SBK_NATIVE_VECTOR 1 before including
 * this header: they are then its own probe and insert. Otherwise they come from one more per-key
 * function of the ISA file,
 *
 *   static inline void NAME_mask_words(const uint64_t *key, uint64_t *mask);
 *       the key's bits as the block's bytes would hold them, read as 64-bit words
 *       (SBK_WORDS64_NAME of them; mask is 64-byte aligned),
 *
 * and each word of the block is read with a relaxed atomic load, and written (under the caller's
 * lock, only where it lacks a bit) with a relaxed atomic store.
 */
#ifndef SBK_NATIVE_VECTOR
#define SBK_NATIVE_VECTOR 0
#endif
/* The atomic OR of the words a key lacks: safe beside any other writer. A native vector kernel
 * first tests the whole block with its own probe (a present key then costs what a lookup does). */
#define SBK_DEFINE_OR_LACKING(NAME)                                                                \
    static inline int NAME##_insert_shared_key(void *blocks, uint64_t nblocks,                     \
                                               const uint64_t *key)                                \
    {                                                                                              \
        if (SBK_NATIVE_VECTOR && NAME##_probe(blocks, nblocks, key))                               \
            return 0; /* present: one vector test, nothing written */                              \
        _Alignas(64) uint64_t mask[SBK_WORDS64_##NAME];                                            \
        NAME##_mask_words(key, mask);                                                              \
        uint64_t *block =                                                                          \
            (uint64_t *)blocks + SBK_WORDS64_##NAME * sbk_block_index(*key, nblocks);              \
        int absent = 0;                                                                            \
        for (int i = 0; i < SBK_WORDS64_##NAME; i++) {                                             \
            uint64_t lacking = mask[i] & ~__atomic_load_n(block + i, __ATOMIC_RELAXED);            \
            if (lacking) {                                                                         \
                __atomic_fetch_or(block + i, lacking, __ATOMIC_RELAXED);                           \
                absent = 1;                                                                        \
            }                                                                                      \
        }                                                                                          \
        return absent;                                                                             \
    }
#if SBK_NATIVE_VECTOR
#define SBK_DEFINE_SHARED_PER_KEY(NAME)                                                            \
    static inline int NAME##_probe_shared(const void *blocks, uint64_t nblocks,                    \
                                          const uint64_t *key)                                     \
    {                                                                                              \
        return NAME##_probe(blocks, nblocks, key);                                                 \
    }                                                                                              \
    SBK_DEFINE_OR_LACKING(NAME)
#else
#define SBK_DEFINE_SHARED_PER_KEY(NAME)                                                            \
    static inline int NAME##_probe_shared(const void *blocks, uint64_t nblocks,                    \
                                          const uint64_t *key)                                     \
    {                                                                                              \
        _Alignas(64) uint64_t mask[SBK_WORDS64_##NAME];                                            \
        NAME##_mask_words(key, mask);                                                              \
        const uint64_t *block =                                                                    \
            (const uint64_t *)blocks + SBK_WORDS64_##NAME * sbk_block_index(*key, nblocks);        \
        uint64_t lacking = 0;                                                                      \
        for (int i = 0; i < SBK_WORDS64_##NAME; i++)                                               \
            lacking |= mask[i] & ~__atomic_load_n(block + i, __ATOMIC_RELAXED);                    \
        return lacking == 0;                                                                       \
    }                                                                                              \
    SBK_DEFINE_OR_LACKING(NAME)
#endif

/* The single-key entries: the per-key functions themselves, behind one call. */
#define SBK_DEFINE_ONE_KEY(NAME, INSERT)                                                           \
    static int NAME##_insert_one(void *blocks, uint64_t nblocks, uint64_t hash)                    \
    {                                                                                              \
        return INSERT(blocks, nblocks, &hash);                                                     \
    }                                                                                              \
    static int NAME##_contains_one(const void *blocks, uint64_t nblocks, uint64_t hash)            \
    {                                                                                              \
        return NAME##_probe(blocks, nblocks, &hash);                                               \
    }

/*
 * The test-and-add of keys as one hardware transaction (kernels.h: insert_transaction): the
 * layout's own per-key insert, inlined between XBEGIN and XEND. Written in each ISA file (through
 * this macro) rather than called from the mode, because the kernels end with VZEROUPPER, which
 * aborts a transaction on the CPU measured (every transaction around a call of an AVX2 or AVX-512
 * kernel aborted; around the scalar one's, they committed). GCC also puts a VZEROUPPER before
 * XEND when the vector work is a loop: so an ISA file with 256/512-bit registers defines
 * SBK_UPPER_LIVE_FROM / _TO, which keep one such register live from inside the transaction to
 * past its end, and the compiler's VZEROUPPER then comes after XEND. x86 native builds only, and
 * not under ThreadSanitizer, which cannot see a transaction's atomicity.
 */
#ifndef SBK_UPPER_LIVE_FROM
#define SBK_UPPER_LIVE_FROM(n) (void)(n)
#define SBK_UPPER_LIVE_TO() (void)0
#endif
#if defined(__SANITIZE_THREAD__)
#define SBK_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SBK_UNDER_TSAN 1
#endif
#endif
#if (defined(__x86_64__) || defined(__i386__)) && !defined(SIMDBLOOM_X86_SIMDE) &&                 \
    !defined(SBK_UNDER_TSAN)
#include <immintrin.h>
/* The body both transactions share, over keys [0, n): each key's stripe lock (LOCK_OF, an
 * expression of i_) read first, then its answer (ONE_KEY, 0 or 1) into RESULTS[i_]; returns the
 * count on a commit, else what the abort says. */
#define SBK_TRANSACTION_BODY(LOCK_OF, ONE_KEY, RESULTS)                                            \
    unsigned status_ = _xbegin();                                                                  \
    if (status_ == _XBEGIN_STARTED) {                                                              \
        SBK_UPPER_LIVE_FROM(n);                                                                    \
        int count_ = 0;                                                                            \
        for (size_t i_ = 0; i_ < n; i_++) {                                                        \
            if (*(const volatile uint32_t *)(LOCK_OF) != 0)                                        \
                _xabort(0xff); /* another path holds the key's stripe */                           \
            int one_ = (ONE_KEY);                                                                  \
            (RESULTS)[i_] = (uint8_t)one_;                                                         \
            count_ += one_;                                                                        \
        }                                                                                          \
        _xend();                                                                                   \
        SBK_UPPER_LIVE_TO();                                                                       \
        return count_;                                                                             \
    }                                                                                              \
    return status_ & (_XABORT_RETRY | _XABORT_CONFLICT | _XABORT_EXPLICIT)                         \
               ? SBK_TRANSACTION_RETRY                                                             \
               : SBK_TRANSACTION_FAILED
#define SBK_DEFINE_TRANSACTION(NAME)                                                               \
    __attribute__((target("rtm"))) static int NAME##_insert_transaction(                           \
        void *blocks, uint64_t nblocks, const uint64_t *hashes, size_t n, const uint32_t *stripes, \
        uint32_t stripe_mask, uint8_t *is_new)                                                     \
    {                                                                                              \
        SBK_TRANSACTION_BODY(stripes + (sbk_block_index(hashes[i_], nblocks) & stripe_mask),       \
                             NAME##_insert(blocks, nblocks, hashes + i_), is_new);                 \
    }
#define SBK_TRANSACTION(NAME) NAME##_insert_transaction
/* The same for the windowed mode's per-key functions (kernels.h: window_transaction). */
#define SBK_DEFINE_WINDOW_TRANSACTION(NAME, LINES)                                                 \
    __attribute__((target("rtm"))) static int NAME##_window_transaction(                           \
        void *blocks, uint64_t groups, uint32_t lines, uint32_t target, int add,                   \
        const uint64_t *hashes, size_t n, const uint32_t *stripes, uint64_t per_stripe,            \
        uint8_t *results)                                                                          \
    {                                                                                              \
        (void)lines;                                                                               \
        SBK_TRANSACTION_BODY(stripes + sbk_block_index(hashes[i_], groups) / per_stripe,           \
                             add ? NAME##_window_add(blocks, groups, LINES, target, hashes + i_)   \
                                 : NAME##_window_held(blocks, groups, LINES, target, hashes + i_), \
                             results);                                                             \
    }
#define SBK_WINDOW_TRANSACTION(NAME) NAME##_window_transaction
#else
#define SBK_DEFINE_TRANSACTION(NAME)
#define SBK_TRANSACTION(NAME) NULL
#define SBK_DEFINE_WINDOW_TRANSACTION(NAME, LINES)
#define SBK_WINDOW_TRANSACTION(NAME) NULL
#endif

#define SBK_DEFINE_BATCH_KERNELS(NAME)                                                             \
    SBK_DEFINE_ONE_KEY(NAME, NAME##_insert)                                                        \
    SBK_DEFINE_TRANSACTION(NAME)                                                                   \
    SBK_DEFINE_LOOP(NAME##_contains, NAME##_probe, const void *, SBK_BLOCK_BYTES_##NAME, 0)        \
    SBK_DEFINE_LOOP(NAME##_insert_batch, NAME##_insert, void *, SBK_BLOCK_BYTES_##NAME, 1)         \
    SBK_DEFINE_SHARED_PER_KEY(NAME)                                                                \
    SBK_DEFINE_LOOP(NAME##_contains_shared, NAME##_probe_shared, const void *,                     \
                    SBK_BLOCK_BYTES_##NAME, 0)                                                     \
    SBK_DEFINE_LOOP(NAME##_insert_shared, NAME##_insert_shared_key, void *,                        \
                    SBK_BLOCK_BYTES_##NAME, 2)

/*
 * The windowed mode's kernels (kernels.h: window_insert, window_contains). Per layout two per-key
 * functions with one signature,
 *
 *   static inline int NAME_window_held(const void *blocks, uint64_t groups, uint32_t lines,
 *                                      uint32_t target, const uint64_t *key);
 *       1 if some generation holds the key (target unused);
 *   static inline int NAME_window_add(void *blocks, uint64_t groups, uint32_t lines,
 *                                     uint32_t target, const uint64_t *key);
 *       if no generation holds the key, sets its bits in generation target and returns 1;
 *
 * from which SBK_DEFINE_WINDOW_KERNELS(NAME, LINES) builds the loops (LINES: `lines`, or 1 for
 * slots). The 512-bit layouts get theirs (adjacent lines) from SBK_DEFINE_LINES_PER_KEY below;
 * the counting layout's (generation slots) are written in each ISA file.
 */
#define SBK_GROUP_OF(BLOCKS, GROUPS, LINES, HASH)                                                  \
    ((const char *)(BLOCKS) + sbk_block_index(HASH, GROUPS) * (uint64_t)(LINES)*64)

/* Adjacent lines, from the layout's own probe and insert: a probe of the block at `line` with
 * nblocks = 1 reads exactly that block (sbk_block_index(hash, 1) is 0), and the compiler computes
 * the key's mask once for all the lines of its group. Every line is tested, no early exit. */
#define SBK_DEFINE_LINES_PER_KEY(NAME)                                                             \
    static inline int NAME##_lines_held(const void *blocks, uint64_t groups, uint32_t lines,       \
                                        uint32_t skip, const uint64_t *key)                        \
    {                                                                                              \
        const char *group = SBK_GROUP_OF(blocks, groups, lines, *key);                             \
        int held = 0;                                                                              \
        for (uint32_t g = 0; g < lines; g++)                                                       \
            held |= (g != skip) & NAME##_probe(group + 64 * (size_t)g, 1, key);                    \
        return held;                                                                               \
    }                                                                                              \
    static inline int NAME##_window_held(const void *blocks, uint64_t groups, uint32_t lines,      \
                                         uint32_t target, const uint64_t *key)                     \
    {                                                                                              \
        (void)target;                                                                              \
        return NAME##_lines_held(blocks, groups, lines, lines, key);                               \
    }                                                                                              \
    /* no other line holds it, and the target line's own test-and-add says new (the ISA's          \
     * NAME##_insert_unless: held, nothing is added; SBK_DEFINE_INSERT_UNLESS where a branch does) \
     */                                                                                            \
    static inline int NAME##_window_add(void *blocks, uint64_t groups, uint32_t lines,             \
                                        uint32_t target, const uint64_t *key)                      \
    {                                                                                              \
        char *group = (char *)SBK_GROUP_OF(blocks, groups, lines, *key);                           \
        return NAME##_insert_unless(group + 64 * (size_t)target, 1, key,                           \
                                    NAME##_lines_held(blocks, groups, lines, target, key));        \
    }

/* The insert of a key unless another line of its group holds it, with a branch (the scalar and
 * NEON tables; the x86 ones write theirs without one, since a stream of repeats and new keys
 * mixed mispredicts it: 10.6 against 3.5 ns a key at half repeats, docs/notes/window.md). */
#define SBK_DEFINE_INSERT_UNLESS(NAME)                                                             \
    static inline int NAME##_insert_unless(void *blocks, uint64_t nblocks, const uint64_t *key,    \
                                           int held)                                               \
    {                                                                                              \
        return held ? 0 : NAME##_insert(blocks, nblocks, key);                                     \
    }

/* Every line of a key's group requested ahead, as SBK_PREFETCH_LINE does for one. The window is
 * the plain loops' divided by the lines a key takes, so that about as many lines are in flight. */
#define SBK_WINDOW_PREFETCH(BLOCKS, GROUPS, LINES, HASH, WRITE)                                    \
    do {                                                                                           \
        const char *group_ = SBK_GROUP_OF(BLOCKS, GROUPS, LINES, HASH);                            \
        for (uint32_t g_ = 0; g_ < (LINES); g_++)                                                  \
            __builtin_prefetch(group_ + 64 * (size_t)g_, (WRITE), 3);                              \
    } while (0)

/* LINES: the lines a group, `lines` or a constant 1 (slots: the compiler drops the line loops). */
#define SBK_DEFINE_WINDOW_LOOP(LOOP, PER_KEY, WRITE, LINES)                                        \
    static uint64_t LOOP(void *blocks, uint64_t groups, uint32_t lines, uint32_t target,           \
                         const uint64_t *hashes, size_t n, uint8_t *results)                       \
    {                                                                                              \
        uint64_t count = 0;                                                                        \
        size_t j = 0;                                                                              \
        (void)lines;                                                                               \
        const uint64_t bytes_ = groups * (LINES)*64;                                               \
        const size_t window_ = sbk_prefetch_ahead(bytes_); /* 0: none */                           \
        const size_t ahead_ = window_ ? window_ / (LINES) + 2 : 0;                                 \
        if (n > ahead_ && ahead_ > 0 && bytes_ >= SBK_PREFETCH_MIN_BYTES) {                        \
            for (size_t k = 0; k < ahead_; k++)                                                    \
                SBK_WINDOW_PREFETCH(blocks, groups, LINES, hashes[k], WRITE);                      \
            for (; j < n - ahead_; j++) {                                                          \
                SBK_WINDOW_PREFETCH(blocks, groups, LINES, hashes[j + ahead_], WRITE);             \
                int answer = PER_KEY(blocks, groups, LINES, target, hashes + j);                   \
                if (results)                                                                       \
                    results[j] = (uint8_t)answer;                                                  \
                count += (uint64_t)answer;                                                         \
            }                                                                                      \
        }                                                                                          \
        for (; j < n; j++) {                                                                       \
            int answer = PER_KEY(blocks, groups, LINES, target, hashes + j);                       \
            if (results)                                                                           \
                results[j] = (uint8_t)answer;                                                      \
            count += (uint64_t)answer;                                                             \
        }                                                                                          \
        return count;                                                                              \
    }

#define SBK_DEFINE_WINDOW_KERNELS(NAME, LINES)                                                     \
    SBK_DEFINE_WINDOW_LOOP(NAME##_window_insert, NAME##_window_add, 1, LINES)                      \
    SBK_DEFINE_WINDOW_LOOP(NAME##_window_contains, NAME##_window_held, 0, LINES)                   \
    SBK_DEFINE_WINDOW_TRANSACTION(NAME, LINES)

/* The generation slots' rotation (kernels.h, window_clear): a plain loop, which each instruction
 * set's file compiles with its own flags, so that the compiler vectorizes it at that width (the
 * portable layer's build vectorizes with SSE2 only). On the project's Intel Xeon VM a rotation of a
 * 1M-key window (2.6 MB) took 0.094-0.108 ms against 0.100-0.145 from the portable layer
 * (`simdbloom-bench-window --keys 1000000`, "rotate ms", the builds alternated 8 times;
 * docs/notes/window.md). */
static inline void sbk_window_clear(uint64_t *restrict words, uint64_t count, uint64_t keep)
{
    for (uint64_t i = 0; i < count; i++)
        words[i] &= keep;
}

/* The table entry of a bit layout: insert, contains, no remove, and the concurrent forms. */
#define SBK_LAYOUT_ENTRY(NAME)                                                                     \
    {                                                                                              \
        NAME##_insert_batch, NAME##_contains, NULL, NAME##_insert_shared, NAME##_contains_shared,  \
            NAME##_insert_one, NAME##_contains_one, NULL, NULL, SBK_TRANSACTION(NAME), NULL, NULL, \
            NULL, NULL                                                                             \
    }

/* A 512-bit layout's entry: the same, and the windowed mode's adjacent lines. */
#define SBK_BLOCK512_ENTRY(NAME)                                                                   \
    {                                                                                              \
        NAME##_insert_batch, NAME##_contains, NULL, NAME##_insert_shared, NAME##_contains_shared,  \
            NAME##_insert_one, NAME##_contains_one, NAME##_window_insert, NAME##_window_contains,  \
            SBK_TRANSACTION(NAME), SBK_WINDOW_TRANSACTION(NAME), NULL, NULL, NULL                  \
    }

#define SBK_DEFINE_COUNTING_KERNELS(NAME)                                                          \
    SBK_DEFINE_ONE_KEY(NAME, NAME##_increment)                                                     \
    SBK_DEFINE_LOOP(NAME##_contains, NAME##_probe, const void *, SBK_BLOCK_BYTES_##NAME, 0)        \
    SBK_DEFINE_LOOP(NAME##_add, NAME##_increment, void *, SBK_BLOCK_BYTES_##NAME, 1)               \
    SBK_DEFINE_LOOP(NAME##_remove, NAME##_decrement, void *, SBK_BLOCK_BYTES_##NAME, 1)

/* The counting layout's entry: insert increments, contains, remove. */
#define SBK_COUNTING_ENTRY(NAME)                                                                   \
    {                                                                                              \
        NAME##_add, NAME##_contains, NAME##_remove, NULL, NULL, NAME##_insert_one,                 \
            NAME##_contains_one, NAME##_window_insert, NAME##_window_contains, NULL,               \
            SBK_WINDOW_TRANSACTION(NAME), sbk_window_clear, NULL, NULL                             \
    }

#endif
