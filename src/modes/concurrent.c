/*
 * The concurrent mode: many threads (and processes sharing a file mapping) adding to and
 * querying one filter at once.
 *
 * Adds and lookups take no lock. A lookup reads the key's block as it always does
 * (contains_shared: simd/kernels.h says why that is safe beside writers). An add
 * (insert_shared) tests each word first and ORs its bit in with one atomic fetch-or only where the
 * word lacks it, so a key already present (72% of a crawler's stream) writes nothing. Bits only
 * go from 0 to 1, so a lookup sees every bit of every add that finished before it began.
 *
 * Test-and-add must report each key new exactly once, and that cannot be done lock-free with
 * word-sized atomics: two threads adding one key may each set half of its missing bits, and each
 * then looks exactly like a thread that set its half while an unrelated key set the other. So a
 * test-and-add that finds the key absent (lock-free, as a lookup) takes the lock of the key's
 * block in a table of 4,096 striped spin locks, tests again under it, and sets the bits. Every
 * test-and-add of one key takes the same lock, so the first to get it sees the key absent and
 * sets it, and the others then see it present. A key already present takes no lock.
 *
 * Tried and measured (bench/threads.c, 2-core AMD EPYC VM, docs/CONCURRENCY.md): every add
 * under the block's lock, writing plainly (one compare-and-swap per new key instead of up to 8
 * fetch-ors) ran 2.3-3x faster on one thread, but in most runs two threads were slower than
 * one: the lock table's cache lines bounced between the cores (perf: 92% of the cycles on the
 * lock's cmpxchg). The fetch-ors touch only the key's own line, and lookups and plain adds stay
 * lock-free, as the header promises.
 *
 * Across processes (sbloom_map with SBLOOM_OPEN_CONCURRENT) the lock table lives in the filter's
 * lock file (sbloom_lock_file), mapped shared, and a lock holds the holder's process ID: a waiter
 * that finds the holder dead (killed inside its critical section of a few nanoseconds) takes the
 * lock over. The item count is then the header's (as last synced) plus a delta in the lock file
 * that every process adds to; the header itself is left alone until a sync, so that it stays
 * valid for processes that map the file later.
 */
#define _GNU_SOURCE /* kill in -std=c11 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../base/alloc.h"
#include "../os/os.h"
#include "modes.h"

_Static_assert(SBLOOM_SHARED_LOCKS_BYTES == SBLOOM_LOCK_FILE_BYTES,
               "the caller's lock region is laid out as a lock file");

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* A holder process that no longer exists (its lock word outlived it). */
static int holder_gone(uint32_t pid)
{
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

void sbloom_stripe_lock(uint32_t *word, uint32_t token, int across_processes)
{
    unsigned spins = 0;
    for (;;) {
        uint32_t holder = 0;
        if (__atomic_compare_exchange_n(word, &holder, token, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return;
        while ((holder = __atomic_load_n(word, __ATOMIC_RELAXED)) != 0) {
            cpu_relax();
            if (++spins % 64 == 0)
                sched_yield(); /* the holder may be waiting for this core */
            if (across_processes && spins % 1024 == 0 && holder_gone(holder) &&
                __atomic_compare_exchange_n(word, &holder, token, 0, __ATOMIC_ACQUIRE,
                                            __ATOMIC_RELAXED))
                return;
        }
    }
}

void sbloom_stripe_unlock(uint32_t *word)
{
    __atomic_store_n(word, 0, __ATOMIC_RELEASE);
}

/* The lock table of a concurrent filter: SBLOOM_STRIPES words, in the heap or in PATH.lock. */
typedef struct stripes {
    uint32_t *words;
    void *map;    /* the PATH.lock mapping, or NULL */
    int shared;   /* across processes: a lock word holds its holder's process ID */
    int borrowed; /* in the caller's memory (sbloom_set_concurrent_shared): not freed */
} stripes;

static uint32_t *stripe_of(const sbloom_t *f, uint64_t hash)
{
    const stripes *s = f->state;
    return s->words + (sbk_block_index(hash, f->core.nblocks) & (SBLOOM_STRIPES - 1));
}

/* Keys tested lock-free per round before the absent ones are set under their locks: small
 * enough that their lines are still in the caches for the second step. */
#define ROUND 256
/* Absent keys ahead whose lock word (and block) is requested for writing while one key is set:
 * a lock's line was usually last written by another core, and fetching it is a cache miss. */
#define LOCK_AHEAD 8

/* The lock word and the block of a key about to be set under its lock, requested owned. */
static inline void prefetch_for_locked_insert(const sbloom_t *f, uint64_t hash, int prefetchw)
{
    sbk_prefetch_owned(stripe_of(f, hash), prefetchw);
    const sbloom_core *c = &f->core;
    sbk_prefetch_owned((const char *)c->blocks + sbk_block_index(hash, c->nblocks) * c->block_bytes,
                       prefetchw);
}

/*
 * Hardware transactions (Intel TSX RTM, where the CPU has them: sbk_have_rtm, and the kernels
 * their insert_transaction). An absent key's test-and-add runs as one transaction around the
 * plain one-key insert: the block is read, tested and written back whole, and the transaction
 * commits only if no other core wrote the block (or the key's lock word) meanwhile, else it
 * aborts and nothing of it happened. So it is atomic against other transactions and against the
 * fetch-ors of the locked path, and costs what the plain insert does plus the transaction: no
 * atomic read-modify-write of every word, no lock. It also reads the key's stripe lock and gives
 * way while a thread of the locked path holds it: that thread tests under the lock and then sets
 * the bits one fetch-or at a time, and a transaction committing between its test and its last
 * fetch-or would make the key new twice. A transaction that aborts is tried again a few times
 * (TRANSACTION_TRIES), then the key takes the locked path.
 */
#define TRANSACTION_TRIES 4

/* Keys [0, n) (at most SBK_TRANSACTION_KEYS) in transactions; their answers in is_new. Returns
 * the count new, or -1: not done, take the locked path. */
static int insert_transaction(const sbloom_core *c, const uint32_t *stripes, const uint64_t *hashes,
                              size_t n, uint8_t *is_new)
{
    for (int tries = 0; tries < TRANSACTION_TRIES; tries++) {
        int done = c->kern->insert_transaction(c->blocks, c->nblocks, hashes, n, stripes,
                                               SBLOOM_STRIPES - 1, is_new);
        if (done >= 0)
            return done;
        if (done == SBK_TRANSACTION_FAILED)
            break;
        cpu_relax();
    }
    return -1;
}

/* The exactly-once test-and-add: lock-free lookups first, then each absent key set in a
 * transaction (where the CPU has them) or under its block's lock. */
static uint64_t insert_once(sbloom_t *f, const uint64_t *hashes, size_t n, uint8_t *is_new)
{
    uint8_t scratch[ROUND];
    uint16_t absent[ROUND];
    const sbloom_core *c = &f->core;
    const sbloom_layout_kernels *k = c->kern;
    int shared = ((const stripes *)f->state)->shared;
    uint32_t token = shared ? (uint32_t)getpid() : 1;
    int prefetchw = sbk_have_prefetchw();
    int transactions = sbk_have_rtm() && k->insert_transaction;
    uint64_t fresh = 0;
    for (size_t at = 0; at < n; at += ROUND) {
        size_t len = n - at < ROUND ? n - at : ROUND;
        const uint64_t *round = hashes + at;
        uint8_t *out = is_new ? is_new + at : scratch;
        k->contains_shared(c->blocks, c->nblocks, round, len, out);
        size_t nabsent = 0;
        for (size_t i = 0; i < len; i++) {
            absent[nabsent] = (uint16_t)i;
            nabsent += !out[i];
            out[i] = 0; /* present: no lock, not new */
        }
        for (size_t q = 0; q < nabsent && q < LOCK_AHEAD; q++)
            prefetch_for_locked_insert(f, round[absent[q]], prefetchw);
        size_t q = 0;
        while (transactions && q < nabsent) { /* groups of absent keys, one transaction each */
            uint64_t group[SBK_TRANSACTION_KEYS];
            uint8_t answers[SBK_TRANSACTION_KEYS];
            size_t len = nabsent - q < SBK_TRANSACTION_KEYS ? nabsent - q : SBK_TRANSACTION_KEYS;
            for (size_t g = 0; g < len; g++) {
                group[g] = round[absent[q + g]];
                if (q + g + LOCK_AHEAD < nabsent)
                    prefetch_for_locked_insert(f, round[absent[q + g + LOCK_AHEAD]], prefetchw);
            }
            if (insert_transaction(c, ((const stripes *)f->state)->words, group, len, answers) < 0)
                break; /* this group and the rest: the locked path */
            for (size_t g = 0; g < len; g++) {
                out[absent[q + g]] = answers[g];
                fresh += answers[g];
            }
            q += len;
        }
        for (; q < nabsent; q++) {
            if (q + LOCK_AHEAD < nabsent)
                prefetch_for_locked_insert(f, round[absent[q + LOCK_AHEAD]], prefetchw);
            size_t i = absent[q];
            uint32_t *lock = stripe_of(f, round[i]);
            sbloom_stripe_lock(lock, token, shared);
            out[i] = (uint8_t)k->insert_shared(c->blocks, c->nblocks, round + i, 1, NULL);
            sbloom_stripe_unlock(lock);
            fresh += out[i];
        }
    }
    return fresh;
}

static uint64_t concurrent_run(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                               uint8_t *results)
{
    if (op == SBLOOM_OP_CONTAINS)
        return sbloom_core_run_shared(&f->core, op, hashes, n, results);
    if (!results && !(sbk_have_rtm() && f->core.kern->insert_transaction))
        /* a plain add: lock-free fetch-ors (the count may take a racing key twice) */
        return sbloom_core_run_shared(&f->core, op, hashes, n, results);
    return insert_once(f, hashes, n, results); /* (plain adds too, with transactions) */
}

static int concurrent_add_one(sbloom_t *f, uint64_t hash)
{
    uint8_t is_new;
    return (int)insert_once(f, &hash, 1, &is_new);
}

static int concurrent_contains_one(const sbloom_t *f, uint64_t hash)
{
    return (int)sbloom_core_run_shared(&f->core, SBLOOM_OP_CONTAINS, &hash, 1, NULL);
}

static void release_stripes(stripes *s)
{
    if (!s)
        return;
    if (s->map)
        munmap(s->map, SBLOOM_LOCK_FILE_BYTES);
    else if (!s->borrowed)
        free(s->words);
    free(s);
}

/* The blocks first (a file mapping's unmap), then the locks other processes may wait on. */
static void concurrent_release(sbloom_t *f)
{
    sbloom_core_release(&f->core);
    release_stripes(f->state);
    f->state = NULL;
}

const sbloom_mode sbloom_mode_concurrent = {
    SBLOOM_ONE_CORE_OPERATIONS,
    .name = "concurrent",
    .takes_inline = 0,
    .run = concurrent_run,
    .add_one = concurrent_add_one,
    .contains_one = concurrent_contains_one,
    .release = concurrent_release,
};

/* f becomes concurrent with this lock table. */
static void enter(sbloom_t *f, stripes *s)
{
    f->state = s;
    f->mode = &sbloom_mode_concurrent;
    f->counting = f->counting == SBLOOM_COUNT_SHARED ? SBLOOM_COUNT_SHARED : SBLOOM_COUNT_ATOMIC;
    sbloom_object_show_core(f);
}

int sbloom_concurrent_enter(sbloom_t *f)
{
    if (f->mode == &sbloom_mode_concurrent)
        return SBLOOM_OK;
    if (!f->core.kern->insert_shared)
        return SBLOOM_E_LAYOUT; /* the counting layout: counters need one writer */
    stripes *s = sbloom_calloc(1, sizeof *s);
    uint32_t *words = s ? sbloom_calloc(SBLOOM_STRIPES, sizeof *words) : NULL;
    if (!words) {
        free(s);
        return SBLOOM_E_NOMEM;
    }
    s->words = words;
    enter(f, s);
    return SBLOOM_OK;
}

int sbloom_concurrent_leave(sbloom_t *f)
{
    if (f->mode != &sbloom_mode_concurrent)
        return SBLOOM_OK;
    if (((const stripes *)f->state)->shared)
        return SBLOOM_E_INVALID; /* a concurrent mapping stays concurrent */
    release_stripes(f->state);
    f->state = NULL;
    f->mode = &sbloom_mode_plain;
    f->counting = SBLOOM_COUNT_PLAIN;
    sbloom_object_show_core(f);
    return SBLOOM_OK;
}

/* f becomes concurrent across processes with the lock table and item delta laid out in `base`
 * as in a lock file: the delta at SBLOOM_LOCK_DELTA_AT, the stripes at SBLOOM_LOCK_STRIPES_AT. */
static void share(sbloom_t *f, stripes *s, void *base)
{
    s->words = (uint32_t *)((char *)base + SBLOOM_LOCK_STRIPES_AT);
    s->shared = 1;
    f->items_delta = (uint64_t *)((char *)base + SBLOOM_LOCK_DELTA_AT);
    f->counting = SBLOOM_COUNT_SHARED;
    if (f->mode == &sbloom_mode_concurrent)
        release_stripes(f->state); /* (a plain filter being shared has none) */
    enter(f, s);
}

int sbloom_concurrent_share(sbloom_t *f, const char *path)
{
    if (!f->core.kern->insert_shared)
        return SBLOOM_E_LAYOUT;
    stripes *s = sbloom_calloc(1, sizeof *s);
    if (!s)
        return SBLOOM_E_NOMEM;
    int fd;
    int rc = sbloom_lock_file_open(path, &fd);
    void *map = NULL;
    if (rc == SBLOOM_OK)
        rc = sbloom_map_fd(fd, SBLOOM_LOCK_FILE_BYTES, 1, &map);
    if (rc != SBLOOM_OK) {
        int saved = errno;
        free(s);
        errno = saved;
        return rc;
    }
    s->map = map;
    share(f, s, map);
    return SBLOOM_OK;
}

int sbloom_concurrent_share_region(sbloom_t *f, void *region)
{
    if (!f->core.kern->insert_shared)
        return SBLOOM_E_LAYOUT;
    stripes *s = sbloom_calloc(1, sizeof *s);
    if (!s)
        return SBLOOM_E_NOMEM;
    s->borrowed = 1;
    share(f, s, region);
    return SBLOOM_OK;
}
