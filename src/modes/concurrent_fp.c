/*
 * The concurrent mode of a fingerprint filter (threads of one process): every operation on a key
 * under the lock of its main line's stripe, and of the spare lines too when it may reach them.
 *
 * A fingerprint add is not a set of bits going from 0 to 1: it shifts a line's remainders to open
 * a slot, and a full line sends keys of its highest quotients to the spare lines, which the keys
 * of every line share. A lookup reading a line mid-shift could miss a key that is there, so a
 * lookup without locks checks that no writer was at work (a seqlock): each stripe has a version,
 * which a writer holding the stripe's lock makes odd before it changes the key's lines and even
 * again after (the spare lines' version likewise, under the spare lock, where the key may reach
 * them). A batch of lookups reads its keys' versions, looks the keys up as the plain filter does,
 * and reads the versions again: where a key's version was odd or moved, or the spare's did, the
 * answer may rest on a line half moved, and the key is looked up again under its locks. A
 * test-and-add looks its keys up so first (while most of them are found) and takes the locks
 * only for the keys not found. A line is written only by the holders of its stripe's lock;
 * the spare lines only by a holder of the spare lock, which is taken after the stripe's (never
 * before: no two threads wait on each other) when the key's quotient is at or above its line's
 * mark or the line is full (sbloom_core_fp_reaches_spare, read under the stripe's lock). So every
 * operation sees each line whole, and test-and-add answers each key new exactly once (a key
 * found without locks was present when its line was read, and a key not found takes the locks).
 * Under ThreadSanitizer, which cannot check a seqlock's reads, every operation locks.
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
    return l->words + (line & l->mask) * (l->spare_version ? 2 : 1);
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

/* Keys a lookup without locks takes at a time: the versions of each are read before and after
 * the group's lookups, so a smaller group is retried less often beside busy writers. */
#define UNLOCKED_KEYS 32

/* hashes[0, m) looked up without locks (answers in found); the positions whose answer may not
 * hold (a writer was at work on their lines, or on the spare lines) in retry: their count. */
SBLOOM_LOCKED_INLINE size_t look_up_unlocked(const fp_keys *k, const uint64_t *hashes, size_t m,
                                             uint8_t *found, uint16_t *retry)
{
    const uint32_t *versions[UNLOCKED_KEYS];
    uint32_t before[UNLOCKED_KEYS];
    for (size_t i = 0; i < m; i++) {
        versions[i] = stripe_of(k, sbloom_core_fp_line(k->core, hashes[i])) + 1;
        before[i] = __atomic_load_n(versions[i], __ATOMIC_ACQUIRE);
    }
    const uint32_t *spare = k->locks->spare_version; /* the spare lines' */
    uint32_t spare_before = __atomic_load_n(spare, __ATOMIC_ACQUIRE);
    sbloom_core_run(k->core, SBLOOM_OP_CONTAINS, hashes, m, found);
    __atomic_thread_fence(__ATOMIC_ACQUIRE); /* the lines' reads before the versions' again */
    int spare_moved =
        (spare_before & 1) || __atomic_load_n(spare, __ATOMIC_RELAXED) != spare_before;
    size_t n = 0;
    for (size_t i = 0; i < m; i++)
        if (spare_moved || (before[i] & 1) ||
            __atomic_load_n(versions[i], __ATOMIC_RELAXED) != before[i])
            retry[n++] = (uint16_t)i;
    return n;
}

/* The batch: lookups (and test-and-adds, the keys found) without locks where `unlocked`, and
 * the rest under the locks. A test-and-add looks its keys up first while they are mostly found:
 * a group in which fewer than a quarter were found sends the next 8 straight to the locks, then
 * tries again, and each such group after it twice as many, up to 128 (a stream of new keys looks
 * up one group of 32 keys in 4,128; where it stands is a hint kept from batch to batch). As in
 * the locked loop, a key refused for want of room fails the batch at its end, and a lock kept
 * stops it there (the answers after it 0). The locked loop is called from one place only: inlined
 * with its functions (a second copy made gcc 12 call one_key through its pointer, 7% slower). */
SBLOOM_LOCKED_INLINE uint64_t run_keys(const sbloom_t *f, const fp_keys *keys,
                                       const sbloom_locked *locked, const uint64_t *hashes,
                                       size_t n, uint8_t *results, int unlocked)
{
    int insert = keys->op == SBLOOM_OP_INSERT;
    uint64_t count = 0;
    /* groups in a row that found few keys (at most 5), and groups still to go straight to the
     * locks: a hint from the batches before (misses + 8 skip) */
    unsigned hint = unlocked ? __atomic_load_n(keys->locks->misses, __ATOMIC_RELAXED) : 0;
    unsigned misses = hint % 8 < 5 ? hint % 8 : 5, skip = hint / 8 < 128 ? hint / 8 : 128;
    const sbloom_core *c = keys->core;
    int ahead = c->bytes >= SBK_PREFETCH_MIN_BYTES; /* the next group's lines requested */
    for (size_t q = 0, m; q < n; q += m) {
        uint8_t *out = results ? results + q : NULL;
        uint16_t locks[UNLOCKED_KEYS]; /* positions to take the locks */
        const uint16_t *which = NULL;  /* (NULL: the m keys from q) */
        size_t nlocks;
        if (!unlocked || (insert && skip)) { /* in one locked pass (its window unbroken) */
            m = !unlocked ? n - q : n - q < skip * UNLOCKED_KEYS ? n - q : skip * UNLOCKED_KEYS;
            skip -= unlocked ? (unsigned)((m + UNLOCKED_KEYS - 1) / UNLOCKED_KEYS) : 0;
            nlocks = m;
        } else {
            m = n - q < UNLOCKED_KEYS ? n - q : UNLOCKED_KEYS;
            for (size_t i = q + m; ahead && i < n && i < q + 2 * UNLOCKED_KEYS; i++)
                __builtin_prefetch((const char *)c->blocks +
                                   64 * sbloom_core_fp_line(c, hashes[i]));
            uint8_t found[UNLOCKED_KEYS];
            uint8_t unsure[UNLOCKED_KEYS] = {0};
            size_t present = 0;
            nlocks = look_up_unlocked(keys, hashes + q, m, found, locks);
            for (size_t r = 0; r < nlocks; r++)
                unsure[locks[r]] = 1;
            for (size_t i = 0; i < m; i++) {
                if (unsure[i])
                    continue;
                present += found[i];
                if (insert && !found[i])
                    locks[nlocks++] = (uint16_t)i; /* absent: added under the locks */
                else if (out)
                    out[i] = insert ? 0 : found[i];
            }
            count += insert ? 0 : present;
            misses = insert && 4 * present < m ? misses + (misses < 5) : 0;
            skip = misses ? 8u << (misses - 1) : 0;
            which = locks;
        }
        if (nlocks)
            count += sbloom_locked_run(f, locked, hashes + q, which, nlocks, out);
        int failed = sbloom_object_failed(f);
        if (failed && failed != SBLOOM_E_FULL) {
            for (size_t i = q + m; results && i < n; i++)
                results[i] = 0;
            break;
        }
    }
    if (unlocked && insert)
        __atomic_store_n(keys->locks->misses, misses + 8 * skip, __ATOMIC_RELAXED);
    return count;
}

uint64_t sbloom_fp_locked_run(const sbloom_t *f, const sbloom_fp_locks *l, sbloom_batch_op op,
                              const uint64_t *hashes, size_t n, uint8_t *results)
{
    fp_keys keys = {&f->core, l, op};
    sbloom_locked locked = {.self = l->self,
                            .spare = l->spare,
                            .ctx = &keys,
                            .place = line_of,
                            .stripe = stripe_of,
                            .prefetch = prefetch_line,
                            .reaches_spare = reaches_spare,
                            .one = one_key,
                            .spare_version = l->spare_version};
    int unlocked = l->spare_version && (op == SBLOOM_OP_CONTAINS || op == SBLOOM_OP_INSERT);
    return run_keys(f, &keys, &locked, hashes, n, results, unlocked);
}
