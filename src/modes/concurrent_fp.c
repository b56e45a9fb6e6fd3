/*
 * The concurrent mode of a fingerprint filter (threads of one process): every operation on a key
 * under the lock of its main line's stripe, and of the spare lines too when it may reach them.
 *
 * A fingerprint add is not a set of bits going from 0 to 1: it shifts a line's remainders to open
 * a slot, and a full line sends keys of its highest quotients to the spare lines, which the keys
 * of every line share. A line is written only by the holders of its stripe's lock; the spare
 * lines only by a holder of the spare lock, which is taken after the stripe's (never before: no
 * two threads wait on each other) when the key's quotient is at or above its line's mark or the
 * line is full (sbloom_core_fp_reaches_spare, read under the stripe's lock). Lookups, and a
 * test-and-add's keys already held, go without locks, checked by each stripe's version (a
 * seqlock: sbloom_checked_run in locked.h), so every operation sees each line whole, and
 * test-and-add answers each key new exactly once. Under ThreadSanitizer every operation locks.
 *
 * Across processes a writer killed mid-shift would leave a line half moved for the others, where
 * a Bloom filter's half-set bits are harmless; so a fingerprint filter is not shared between
 * processes (sbloom_concurrent_share answers SBLOOM_E_LAYOUT).
 */
#include <string.h>

#include "locked.h"
#include "modes.h"

/* What the locked loop reads: the core, and the operation. */
typedef struct fp_keys {
    const sbloom_core *core;
    const sbloom_fp_locks *locks;
    sbloom_batch_op op;
} fp_keys;

/* A key's place: its main line. */
static uint64_t line_of(const void *ctx, uint64_t hash)
{
    return sbloom_core_fp_line(((const fp_keys *)ctx)->core, hash);
}

/* Its stripe's lock word (followed by its version where lookups go without locks). */
static uint32_t *stripe_of(const void *ctx, uint64_t line)
{
    const sbloom_fp_locks *l = ((const fp_keys *)ctx)->locks;
    return l->words + (line & l->mask) * l->stride;
}

static void prefetch_line(const void *ctx, uint64_t line, int prefetchw)
{
    const sbloom_core *c = ((const fp_keys *)ctx)->core;
    sbk_prefetch_owned((const char *)c->blocks + line * 64, prefetchw);
}

static int reaches_spare(const void *ctx, uint64_t hash)
{
    return sbloom_core_fp_reaches_spare(((const fp_keys *)ctx)->core, hash);
}

/* One key's operation, its locks held: 1 (new, present, removed), 0, or SBLOOM_LOCKED_REFUSED. */
static int one_key(const void *ctx, uint64_t hash)
{
    const fp_keys *k = ctx;
    const sbloom_core *c = k->core;
    uint8_t answer = 0;
    switch (k->op) {
    case SBLOOM_OP_INSERT: {
        int fresh = c->kern->insert_one(c->blocks, c->nblocks, hash);
        return fresh == SBK_FP_ONE_REFUSED ? SBLOOM_LOCKED_REFUSED : fresh == 1;
    }
    case SBLOOM_OP_REMOVE: c->kern->remove(c->blocks, c->nblocks, &hash, 1, &answer); return answer;
    case SBLOOM_OP_CONTAINS:
    default: return c->kern->contains_one(c->blocks, c->nblocks, hash);
    }
}

/* The keys' plain lookups, no lock taken (locked.h checks them by the stripes' versions). */
static void look_up(const void *ctx, const uint64_t *hashes, size_t m, uint8_t *found)
{
    sbloom_core_run(((const fp_keys *)ctx)->core, SBLOOM_OP_CONTAINS, hashes, m, found);
}

static void read_line(const void *ctx, uint64_t line)
{
    __builtin_prefetch((const char *)((const fp_keys *)ctx)->core->blocks + 64 * line);
}

uint64_t sbloom_fp_locked_run(const sbloom_t *f, const sbloom_fp_locks *l, sbloom_batch_op op,
                              const uint64_t *hashes, size_t n, uint8_t *results)
{
    fp_keys keys = {&f->core, l, op};
    int ahead = f->core.bytes >= SBK_PREFETCH_MIN_BYTES; /* the next group's lines requested */
    sbloom_locked locked = {.self = l->self,
                            .spare = l->spare,
                            .ctx = &keys,
                            .place = line_of,
                            .stripe = stripe_of,
                            .prefetch = prefetch_line,
                            .reaches_spare = reaches_spare,
                            .one = one_key,
                            .spare_version = l->spare_version,
                            .look_up = l->spare_version ? look_up : NULL, /* (versioned) */
                            .read_ahead = ahead ? read_line : NULL,
                            .misses = l->misses};
    return sbloom_checked_run(f, &locked, op, hashes, n, results);
}
