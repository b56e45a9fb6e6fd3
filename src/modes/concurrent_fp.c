/*
 * The concurrent mode of a fingerprint filter (threads of one process): every operation on a key
 * under the lock of its main line's stripe, and of the spare lines too when it may reach them.
 *
 * A fingerprint add is not a set of bits going from 0 to 1: it shifts a line's remainders to open
 * a slot, and a full line sends keys of its highest quotients to the spare lines, which the keys
 * of every line share. A lookup reading a line mid-shift could miss a key that is there, so
 * lookups lock as adds and removes do. A line is written only by the holders of its stripe's lock;
 * the spare lines only by a holder of the spare lock, which is taken after the stripe's (never
 * before: no two threads wait on each other) when the key's quotient is at or above its line's
 * mark or the line is full (sbloom_core_fp_reaches_spare, read under the stripe's lock). So every
 * operation sees each line whole, and test-and-add answers each key new exactly once.
 *
 * Across processes a writer killed mid-shift would leave a line half moved for the others, where
 * a Bloom filter's half-set bits are harmless; so a fingerprint filter is not shared between
 * processes (sbloom_concurrent_share answers SBLOOM_E_LAYOUT).
 */
#include <string.h>

#include "../os/os.h"
#include "modes.h"

/* Keys ahead whose line and lock word are requested while one key is under its lock. */
#define FP_LOCK_AHEAD 8

static void prefetch_key(const sbloom_core *c, const sbloom_fp_locks *l, uint64_t hash)
{
    uint64_t line = sbloom_core_fp_line(c, hash);
    __builtin_prefetch((const char *)c->blocks + line * 64, 1, 3);
    __builtin_prefetch(l->words + (line & l->mask), 1, 3);
}

/* One key's operation, its locks held: 1 (new, present, removed) or 0; *refused set when an add
 * found no room. */
static uint8_t one_key(const sbloom_core *c, sbloom_batch_op op, uint64_t hash, int *refused)
{
    uint8_t answer = 0;
    switch (op) {
    case SBLOOM_OP_INSERT: {
        int fresh = c->kern->insert_one(c->blocks, c->nblocks, hash);
        *refused |= fresh == SBK_FP_ONE_REFUSED;
        return (uint8_t)(fresh == 1);
    }
    case SBLOOM_OP_REMOVE: c->kern->remove(c->blocks, c->nblocks, &hash, 1, &answer); return answer;
    case SBLOOM_OP_CONTAINS:
    default: return (uint8_t)c->kern->contains_one(c->blocks, c->nblocks, hash);
    }
}

uint64_t sbloom_fp_locked_run(const sbloom_t *f, const sbloom_fp_locks *l, sbloom_batch_op op,
                              const uint64_t *hashes, size_t n, uint8_t *results)
{
    const sbloom_core *c = &f->core;
    uint32_t token = sbloom_lock_token(l->self);
    uint64_t count = 0;
    int refused = 0;
    for (size_t i = 0; i < n && i < FP_LOCK_AHEAD; i++)
        prefetch_key(c, l, hashes[i]);
    for (size_t i = 0; i < n; i++) {
        if (i + FP_LOCK_AHEAD < n)
            prefetch_key(c, l, hashes[i + FP_LOCK_AHEAD]);
        uint32_t *stripe = l->words + (sbloom_core_fp_line(c, hashes[i]) & l->mask);
        int rc = sbloom_lock_word(stripe, token, l->self);
        int spare = rc == SBLOOM_OK && sbloom_core_fp_reaches_spare(c, hashes[i]);
        if (spare && (rc = sbloom_lock_word(l->spare, token, l->self)) != SBLOOM_OK)
            sbloom_unlock_word(stripe);
        if (rc != SBLOOM_OK) { /* (only across processes, which a fingerprint filter is not) */
            sbloom_object_fail(f, rc);
            if (results)
                memset(results + i, 0, n - i);
            break;
        }
        uint8_t answer = one_key(c, op, hashes[i], &refused);
        if (spare)
            sbloom_unlock_word(l->spare);
        sbloom_unlock_word(stripe);
        if (results)
            results[i] = answer;
        count += answer;
    }
    if (refused) /* a key found its line and both spare lines full: not added, said */
        sbloom_object_fail(f, SBLOOM_E_FULL);
    return count;
}
