/*
 * The concurrency layer's one loop: keys each tested (and set, or removed) under the lock of its
 * stripe, or a few at a time in a hardware transaction where the CPU and the form's kernels have
 * them. Every concurrent form writes through it: a Bloom core's locked test-and-add
 * (concurrent.c), a fingerprint core's every operation (concurrent_fp.c), and a window's fused
 * pass over its ring, of any family (windowed.c). What differs between them (which lock a key
 * takes, which lines to request ahead, what the key's operation is) comes in an sbloom_locked.
 *
 * Exactly once: every operation on a key takes the same stripe's lock (a function of the key's
 * line) and tests the key under it, so the first to take it finds the key absent and sets it and
 * the others then find it present. A form whose keys may move to lines that every stripe shares
 * (a fingerprint core's spare lines) names a second lock, taken after the stripe's (never before:
 * no two threads wait on each other) when reaches_spare says the key may go there.
 *
 * A transaction (src/modes/concurrent.c says how one stands beside the locks) takes up to
 * SBK_TRANSACTION_KEYS keys; one that does not commit is tried SBLOOM_TRANSACTION_TRIES times, then
 * its keys take the locks alone, and the next group tries a transaction again: one interrupted
 * transaction sends no more than its own keys to the locks, whose writes would abort the other
 * threads' transactions that read them.
 */
#ifndef SIMDBLOOM_LOCKED_H
#define SIMDBLOOM_LOCKED_H

#include <string.h>

#include "../os/os.h"
#include "modes.h"

/* (Inlined into each form's call, its functions with it: called as a function, through the
 * pointers, a locked add on a fingerprint filter ran 15% slower: simdbloom-bench-threads.) */
#define SBLOOM_LOCKED_INLINE static inline __attribute__((always_inline))

/* lock_table.c: a table of stripe lock words (count of them), the spare lines' lock, and who
 * this process is to them: in the heap (alloc), in path's lock file (attach: SBLOOM_STRIPES words,
 * shared by every process mapping it, whatever its build), or in a caller's region laid out as a
 * lock file (borrow); release unmaps, frees or lets go, and leaves it empty (as init). A table in
 * the heap may be versioned (for lookups without locks: a seqlock): each lock word followed by
 * its version, on the same cache line (a writer changes both), and the spare lock's beside it. */
typedef struct sbloom_lock_table {
    uint32_t *words;
    uint32_t count;
    uint32_t stride; /* words a lock: 1, or 2 where each lock word is followed by its version */
    uint32_t spare;
    uint32_t spare_version;
    void *map;    /* the lock file's mapping, or NULL */
    int borrowed; /* the caller's region: not freed */
    sbloom_lock_self self;
} sbloom_lock_table;
void sbloom_lock_table_init(sbloom_lock_table *t);
int sbloom_lock_table_alloc(sbloom_lock_table *t, uint32_t count, int versioned);
int sbloom_lock_table_attach(sbloom_lock_table *t, const char *path);
void sbloom_lock_table_borrow(sbloom_lock_table *t, void *region);
void sbloom_lock_table_release(sbloom_lock_table *t);
/* The words held now, the spare lock's too (tests: none once every batch has returned). */
uint64_t sbloom_lock_table_held(const sbloom_lock_table *t);

/* What a form gives the loop. */
typedef struct sbloom_locked {
    struct sbloom_lock_self *self; /* who this process is to the lock words */
    uint32_t *spare;               /* the lock of lines every stripe shares, or NULL: none */
    const void *ctx;               /* what the functions below read */
    uint64_t (*place)(const void *ctx, uint64_t hash);    /* the key's line or group (one sum) */
    uint32_t *(*stripe)(const void *ctx, uint64_t place); /* its lock word */
    void (*prefetch)(const void *ctx, uint64_t place, int prefetchw); /* its lines, owned */
    int (*reaches_spare)(const void *ctx, uint64_t hash); /* (under the stripe's lock) */
    /* the key's operation, its locks held: 1 (new, present, removed), 0, or
     * SBLOOM_LOCKED_REFUSED (an add found no room: the batch fails f with SBLOOM_E_FULL) */
    int (*one)(const void *ctx, uint64_t hash);
    /* n <= SBK_TRANSACTION_KEYS keys in one transaction, tried once: the count (answers in
     * results), -1 (aborted: may be tried again) or SBK_TRANSACTION_FAILED; NULL: none */
    int (*transaction)(const void *ctx, const uint64_t *hashes, size_t n, uint8_t *results);
    /* For lookups without locks (a seqlock: sbloom_checked_run below), or NULL: the spare lock's
     * version, in a versioned table (each stripe's version the word after its lock word); the
     * key's writer makes its stripe's version (and the spare's, where it takes the spare lock)
     * odd before its operation and even again after. */
    uint32_t *spare_version;
    /* Lookups without locks (NULL: every key locks): m <= SBLOOM_CHECKED_KEYS keys looked up as
     * one writer would, no lock taken (answers in found), checked by the versions where the form
     * has them (spare_version), else right as they stand (a form whose writers only set bits,
     * and whose rotations clear a word's bits at once, read by whole-word loads); a key's line
     * requested for reading (NULL: the lines fit the caches); test-and-add's hint, kept from
     * batch to batch (read and written without order). */
    void (*look_up)(const void *ctx, const uint64_t *hashes, size_t m, uint8_t *found);
    void (*read_ahead)(const void *ctx, uint64_t place);
    unsigned *misses;
    /* test-and-add: the share of a group's keys, in quarters (0: 1), below which the lookups cost
     * more than the locks they spare (a cheap locked pass wants more of them found) */
    unsigned found_quarters;
} sbloom_locked;
#define SBLOOM_LOCKED_REFUSED 2

/* ThreadSanitizer cannot check a seqlock's plain reads, nor plain vector stores of a line written
 * under its lock beside lock-free lookups: under it the forms lock (and set bits atomically). */
#if defined(__SANITIZE_THREAD__)
#define SBLOOM_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SBLOOM_UNDER_TSAN 1
#endif
#endif
#ifndef SBLOOM_UNDER_TSAN
#define SBLOOM_UNDER_TSAN 0
#endif

/* A version, its lock held: odd while its lines are written (the fence orders the writes after
 * the odd version), even again after (the release orders them before it). */
SBLOOM_LOCKED_INLINE void sbloom_version_begin(uint32_t *version)
{
    __atomic_store_n(version, __atomic_load_n(version, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

SBLOOM_LOCKED_INLINE void sbloom_version_end(uint32_t *version)
{
    __atomic_store_n(version, __atomic_load_n(version, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
}

/* Keys ahead whose lines (and lock word) are requested while one key is under its lock: a lock's
 * line was usually last written by another core, and fetching it is a cache miss. */
#define SBLOOM_LOCK_AHEAD 8
#define SBLOOM_TRANSACTION_TRIES 4

/* The key at position q of the batch: hashes[which[q]], or hashes[q] without which. */
SBLOOM_LOCKED_INLINE size_t sbloom_locked_position(const uint16_t *which, size_t q)
{
    return which ? which[q] : q;
}

/* A key's lines requested owned, and with its_lock its lock word (not for a transaction: the
 * other threads' transactions read the lock words, and a request to own one would abort them).
 * Returns the key's lock word. */
SBLOOM_LOCKED_INLINE uint32_t *sbloom_locked_prefetch(const sbloom_locked *l, uint64_t hash,
                                                      int prefetchw, int its_lock)
{
    uint64_t place = l->place(l->ctx, hash);
    uint32_t *stripe = l->stripe(l->ctx, place);
    if (its_lock)
        sbk_prefetch_owned(stripe, prefetchw);
    l->prefetch(l->ctx, place, prefetchw);
    return stripe;
}

/* Keys at positions [from, to) each under its locks; their answers in results (may be NULL).
 * A lock a live process keeps stops the batch there, said to f: the keys after it neither added
 * nor found (their answers 0). */
SBLOOM_LOCKED_INLINE uint64_t sbloom_locked_keys(const sbloom_t *f, const sbloom_locked *l,
                                                 const uint64_t *hashes, const uint16_t *which,
                                                 size_t from, size_t to, uint8_t *results,
                                                 uint32_t token, int prefetchw)
{
    uint64_t count = 0;
    int refused = 0;
    uint32_t *stripes[SBLOOM_LOCK_AHEAD]; /* the lock words of keys q to q + ahead - 1 */
    for (size_t q = from; q < to && q < from + SBLOOM_LOCK_AHEAD; q++)
        stripes[q % SBLOOM_LOCK_AHEAD] =
            sbloom_locked_prefetch(l, hashes[sbloom_locked_position(which, q)], prefetchw, 1);
    for (size_t q = from; q < to; q++) {
        size_t i = sbloom_locked_position(which, q);
        uint32_t *stripe = stripes[q % SBLOOM_LOCK_AHEAD];
        if (q + SBLOOM_LOCK_AHEAD < to)
            stripes[q % SBLOOM_LOCK_AHEAD] = sbloom_locked_prefetch(
                l, hashes[sbloom_locked_position(which, q + SBLOOM_LOCK_AHEAD)], prefetchw, 1);
        int rc = sbloom_lock_word(stripe, token, l->self);
        int spare = rc == SBLOOM_OK && l->spare && l->reaches_spare(l->ctx, hashes[i]);
        if (spare && (rc = sbloom_lock_word(l->spare, token, l->self)) != SBLOOM_OK)
            sbloom_unlock_word(stripe);
        if (rc != SBLOOM_OK) {
            sbloom_object_fail(f, rc);
            for (; results && q < to; q++)
                results[sbloom_locked_position(which, q)] = 0;
            break;
        }
        if (l->spare_version) {
            sbloom_version_begin(stripe + 1);
            if (spare)
                sbloom_version_begin(l->spare_version);
        }
        int answer = l->one(l->ctx, hashes[i]);
        if (l->spare_version) {
            if (spare)
                sbloom_version_end(l->spare_version);
            sbloom_version_end(stripe + 1);
        }
        if (spare)
            sbloom_unlock_word(l->spare);
        sbloom_unlock_word(stripe);
        refused |= answer == SBLOOM_LOCKED_REFUSED;
        answer = answer == 1;
        if (results)
            results[i] = (uint8_t)answer;
        count += (uint64_t)answer;
    }
    if (refused) /* a key found no room: not added, said */
        sbloom_object_fail(f, SBLOOM_E_FULL);
    return count;
}

/* Keys at positions [q, q + len) (len <= SBK_TRANSACTION_KEYS) in one transaction, tried a few
 * times: their count new, answers in results; or -1 (not done: the locks). */
SBLOOM_LOCKED_INLINE int sbloom_locked_transaction(const sbloom_locked *l, const uint64_t *hashes,
                                                   const uint16_t *which, size_t q, size_t len,
                                                   uint8_t *results)
{
    uint64_t group[SBK_TRANSACTION_KEYS];
    uint8_t answers[SBK_TRANSACTION_KEYS];
    for (size_t g = 0; g < len; g++)
        group[g] = hashes[sbloom_locked_position(which, q + g)];
    for (int tries = 0; tries < SBLOOM_TRANSACTION_TRIES; tries++) {
        int done = l->transaction(l->ctx, group, len, answers);
        if (done >= 0) {
            for (size_t g = 0; results && g < len; g++)
                results[sbloom_locked_position(which, q + g)] = answers[g];
            return done;
        }
        if (done == SBK_TRANSACTION_FAILED)
            break;
        sbloom_cpu_relax();
    }
    return -1;
}

/* The keys hashes[which[0..n)] (hashes[0..n) without which), their answers at the same places
 * in results (may be NULL); the count of 1s. A lock another process keeps stops the batch there,
 * said to f (SBLOOM_E_LOCKED), the answers after it 0. token: sbloom_lock_token, taken once a
 * batch by the caller (across processes it is a process ID: a system call). */
SBLOOM_LOCKED_INLINE uint64_t sbloom_locked_run(const sbloom_t *f, const sbloom_locked *l,
                                                const uint64_t *hashes, const uint16_t *which,
                                                size_t n, uint8_t *results, uint32_t token)
{
    int prefetchw = sbk_have_prefetchw();
    if (!(l->transaction && sbk_have_rtm()))
        return sbloom_locked_keys(f, l, hashes, which, 0, n, results, token, prefetchw);
    uint64_t count = 0;
    for (size_t q = 0; q < n && q < SBLOOM_LOCK_AHEAD; q++)
        (void)sbloom_locked_prefetch(l, hashes[sbloom_locked_position(which, q)], prefetchw, 0);
    for (size_t q = 0; q < n; q += SBK_TRANSACTION_KEYS) {
        size_t len = n - q < SBK_TRANSACTION_KEYS ? n - q : SBK_TRANSACTION_KEYS;
        for (size_t g = q; g < q + len && g + SBLOOM_LOCK_AHEAD < n; g++)
            (void)sbloom_locked_prefetch(
                l, hashes[sbloom_locked_position(which, g + SBLOOM_LOCK_AHEAD)], prefetchw, 0);
        int done = sbloom_locked_transaction(l, hashes, which, q, len, results);
        count += done >= 0 ? (uint64_t)done
                           : sbloom_locked_keys(f, l, hashes, which, q, q + len, results, token,
                                                prefetchw);
        if (sbloom_object_failed(f)) { /* the keys after this group: neither added nor found */
            for (size_t g = q + len; results && g < n; g++)
                results[sbloom_locked_position(which, g)] = 0;
            break;
        }
    }
    return count;
}

/*
 * Lookups without locks. Where a form's adds move entries (a fingerprint core's, a window of
 * ages), a lookup reading a line mid-shift could miss a key that is there, so they are checked by
 * the stripes' versions (a seqlock): a batch reads its keys' versions, looks the keys up as one
 * writer would, and reads the versions again; where a key's version was odd or moved, or the
 * spare's did, the answer may rest on a line half moved, and the key is looked up again under its
 * locks. Where adds only set bits (a Bloom window, on kernels that read words whole) the answers
 * stand as read. A test-and-add looks its keys up so first (while enough of them are found) and
 * takes the locks only for the keys not found: a key found was present when its line was read,
 * and a key not found takes the locks, so each key is still answered new exactly once.
 */

/* Keys a lookup without locks takes at a time: the versions of each are read before and after
 * the group's lookups, so a smaller group is retried less often beside busy writers. */
#define SBLOOM_CHECKED_KEYS 32

/* hashes[0, m) looked up without locks (answers in found); the positions whose answer may not
 * hold (a writer was at work on their lines, or on the spare lines) in retry: their count. */
SBLOOM_LOCKED_INLINE size_t sbloom_checked_look_up(const sbloom_locked *l, const uint64_t *hashes,
                                                   size_t m, uint8_t *found, uint16_t *retry)
{
    const uint32_t *versions[SBLOOM_CHECKED_KEYS];
    uint32_t before[SBLOOM_CHECKED_KEYS];
    if (!l->spare_version) { /* (answers that need no check) */
        l->look_up(l->ctx, hashes, m, found);
        (void)retry;
        return 0;
    }
    for (size_t i = 0; i < m; i++) {
        versions[i] = l->stripe(l->ctx, l->place(l->ctx, hashes[i])) + 1;
        before[i] = __atomic_load_n(versions[i], __ATOMIC_ACQUIRE);
    }
    const uint32_t *spare = l->spare_version; /* the spare lines' */
    uint32_t spare_before = __atomic_load_n(spare, __ATOMIC_ACQUIRE);
    l->look_up(l->ctx, hashes, m, found);
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

/* The batch of op: lookups (and test-and-adds, the keys found) without locks where the form has
 * them (look_up), and the rest under the locks. A test-and-add looks its keys up first while
 * enough are found: a group in which fewer than a quarter (found_quarters) were found sends the
 * next 8 straight to the locks, then tries again, and each such group after it twice as many, up
 * to 128 (a stream of new keys looks up one group of 32 keys in 4,128; where it stands is the
 * hint in misses). As in the locked loop, a key refused for want of room fails the batch
 * at its end, and a lock kept stops it there (the answers after it 0). A form calls it from one
 * place only: inlined with its functions (a second copy made gcc 12 call the key's operation
 * through its pointer, 7% slower). */
SBLOOM_LOCKED_INLINE uint64_t sbloom_checked_run(const sbloom_t *f, const sbloom_locked *l,
                                                 sbloom_batch_op op, const uint64_t *hashes,
                                                 size_t n, uint8_t *results)
{
    int insert = op == SBLOOM_OP_INSERT;
    int unlocked = l->look_up && op != SBLOOM_OP_REMOVE;
    uint64_t count = 0;
    /* groups in a row that found few keys (at most 5), and groups still to go straight to the
     * locks: a hint from the batches before (misses + 8 skip) */
    unsigned hint = unlocked && insert ? __atomic_load_n(l->misses, __ATOMIC_RELAXED) : 0;
    unsigned misses = hint % 8 < 5 ? hint % 8 : 5, skip = hint / 8 < 128 ? hint / 8 : 128;
    unsigned quarters = l->found_quarters ? l->found_quarters : 1;
    uint32_t token = 0; /* (taken at the first key that locks: once a batch) */
    for (size_t q = 0, m; q < n; q += m) {
        uint8_t *out = results ? results + q : NULL;
        uint16_t locks[SBLOOM_CHECKED_KEYS]; /* positions to take the locks */
        const uint16_t *which = NULL;        /* (NULL: the m keys from q) */
        size_t nlocks;
        if (!unlocked || (insert && skip)) { /* in one locked pass (its window unbroken) */
            m = !unlocked                            ? n - q
                : n - q < skip * SBLOOM_CHECKED_KEYS ? n - q
                                                     : skip * SBLOOM_CHECKED_KEYS;
            skip -= unlocked ? (unsigned)((m + SBLOOM_CHECKED_KEYS - 1) / SBLOOM_CHECKED_KEYS) : 0;
            nlocks = m;
        } else {
            m = n - q < SBLOOM_CHECKED_KEYS ? n - q : SBLOOM_CHECKED_KEYS;
            for (size_t i = q + m; l->read_ahead && i < n && i < q + 2 * SBLOOM_CHECKED_KEYS; i++)
                l->read_ahead(l->ctx, l->place(l->ctx, hashes[i]));
            uint8_t found[SBLOOM_CHECKED_KEYS];
            uint8_t unsure[SBLOOM_CHECKED_KEYS] = {0};
            size_t present = 0;
            nlocks = sbloom_checked_look_up(l, hashes + q, m, found, locks);
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
            misses = insert && 4 * present < m * quarters ? misses + (misses < 5) : 0;
            skip = misses ? 8u << (misses - 1) : 0;
            which = locks;
        }
        if (nlocks) {
            token = token ? token : sbloom_lock_token(l->self);
            count += sbloom_locked_run(f, l, hashes + q, which, nlocks, out, token);
        }
        int failed = sbloom_object_failed(f);
        if (failed && failed != SBLOOM_E_FULL) {
            for (size_t i = q + m; results && i < n; i++)
                results[i] = 0;
            break;
        }
    }
    if (unlocked && insert)
        __atomic_store_n(l->misses, misses + 8 * skip, __ATOMIC_RELAXED);
    return count;
}

#endif /* SIMDBLOOM_LOCKED_H */
