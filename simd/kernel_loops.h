/*
 * The batch loops every instruction set shares. An ISA file writes, per layout, two per-key
 * functions and lets SBK_DEFINE_BATCH_KERNELS build the three table entries from them:
 *
 *   static inline int NAME_probe(const void *blocks, uint64_t nblocks, uint64_t hash);
 *       1 if every bit of the key is set in its block, else 0 (no branch on the answer).
 *   static inline int NAME_insert(void *blocks, uint64_t nblocks, uint64_t hash);
 *       sets the key's bits; 1 if at least one was clear before (the key was new).
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

#include "kernels.h"

/* One batch loop over a per-key function returning 0 or 1: the answers go to `results` when it
 * is not NULL, and their sum is returned. Two loops, so that the common no-results case does not
 * test the pointer per key. */
#define SBK_DEFINE_LOOP(LOOP, PER_KEY, BLOCKS)                                                     \
    static uint64_t LOOP(BLOCKS blocks, uint64_t nblocks, const uint64_t *hashes, size_t n,        \
                         uint8_t *results)                                                         \
    {                                                                                              \
        uint64_t count = 0;                                                                        \
        if (results) {                                                                             \
            for (size_t j = 0; j < n; j++) {                                                       \
                int answer = PER_KEY(blocks, nblocks, hashes[j]);                                  \
                results[j] = (uint8_t)answer;                                                      \
                count += (uint64_t)answer;                                                         \
            }                                                                                      \
        } else {                                                                                   \
            for (size_t j = 0; j < n; j++)                                                         \
                count += (uint64_t)PER_KEY(blocks, nblocks, hashes[j]);                            \
        }                                                                                          \
        return count;                                                                              \
    }

#define SBK_DEFINE_BATCH_KERNELS(NAME)                                                             \
    SBK_DEFINE_LOOP(NAME##_contains, NAME##_probe, const void *)                                   \
    SBK_DEFINE_LOOP(NAME##_insert_batch, NAME##_insert, void *)

/* The table entry of a bit layout: insert, contains, no remove. */
#define SBK_LAYOUT_ENTRY(NAME)                                                                     \
    {                                                                                              \
        NAME##_insert_batch, NAME##_contains, NULL                                                 \
    }

#define SBK_DEFINE_COUNTING_KERNELS(NAME)                                                          \
    SBK_DEFINE_LOOP(NAME##_contains, NAME##_probe, const void *)                                   \
    SBK_DEFINE_LOOP(NAME##_add, NAME##_increment, void *)                                          \
    SBK_DEFINE_LOOP(NAME##_remove, NAME##_decrement, void *)

/* The counting layout's entry: insert increments, contains, remove. */
#define SBK_COUNTING_ENTRY(NAME)                                                                   \
    {                                                                                              \
        NAME##_add, NAME##_contains, NAME##_remove                                                 \
    }

#endif
