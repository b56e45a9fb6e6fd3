/*
 * The batch loops every instruction set shares. An ISA file writes, per layout, two per-key
 * functions and lets this macro build the three table entries from them:
 *
 *   static inline int NAME_probe(const void *blocks, uint64_t nblocks, uint64_t hash);
 *       1 if every bit of the key is set in its block, else 0 (no branch on the answer).
 *   static inline int NAME_insert(void *blocks, uint64_t nblocks, uint64_t hash);
 *       sets the key's bits; 1 if at least one was clear before (the key was new).
 *
 * Keys are handled strictly in order, so a key repeated later in a batch sees the earlier one's
 * bits, and two keys of one batch sharing a block never lose an update.
 */
#ifndef SIMDBLOOM_KERNEL_LOOPS_H
#define SIMDBLOOM_KERNEL_LOOPS_H

#include "kernels.h"

#define SBK_DEFINE_BATCH_KERNELS(NAME)                                                             \
    static uint64_t NAME##_contains(const void *blocks, uint64_t nblocks, const uint64_t *hashes,  \
                                    size_t n, uint8_t *results)                                    \
    {                                                                                              \
        uint64_t found = 0;                                                                        \
        if (results) {                                                                             \
            for (size_t j = 0; j < n; j++) {                                                       \
                int present = NAME##_probe(blocks, nblocks, hashes[j]);                            \
                results[j] = (uint8_t)present;                                                     \
                found += (uint64_t)present;                                                        \
            }                                                                                      \
        } else {                                                                                   \
            for (size_t j = 0; j < n; j++)                                                         \
                found += (uint64_t)NAME##_probe(blocks, nblocks, hashes[j]);                       \
        }                                                                                          \
        return found;                                                                              \
    }                                                                                              \
    static uint64_t NAME##_add_if_new(void *blocks, uint64_t nblocks, const uint64_t *hashes,      \
                                      size_t n, uint8_t *is_new)                                   \
    {                                                                                              \
        uint64_t fresh = 0;                                                                        \
        if (is_new) {                                                                              \
            for (size_t j = 0; j < n; j++) {                                                       \
                int absent = NAME##_insert(blocks, nblocks, hashes[j]);                            \
                is_new[j] = (uint8_t)absent;                                                       \
                fresh += (uint64_t)absent;                                                         \
            }                                                                                      \
        } else {                                                                                   \
            for (size_t j = 0; j < n; j++)                                                         \
                fresh += (uint64_t)NAME##_insert(blocks, nblocks, hashes[j]);                      \
        }                                                                                          \
        return fresh;                                                                              \
    }                                                                                              \
    /* A plain add is a test-and-add whose answers are not kept: the count of keys that            \
     * changed the filter is the count of new ones. */                                             \
    static uint64_t NAME##_add(void *blocks, uint64_t nblocks, const uint64_t *hashes, size_t n)   \
    {                                                                                              \
        return NAME##_add_if_new(blocks, nblocks, hashes, n, NULL);                                \
    }

#define SBK_LAYOUT_ENTRY(NAME)                                                                     \
    {                                                                                              \
        NAME##_add, NAME##_contains, NAME##_add_if_new                                             \
    }

#endif
