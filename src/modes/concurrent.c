/*
 * The concurrent mode: many threads (and processes sharing a file mapping) adding to and
 * querying one filter at once.
 *
 * Lookups take no lock. A lookup reads the key's block as it always does (contains_shared:
 * simd/kernels.h says why that is safe beside writers). Bits only go from 0 to 1, so a lookup
 * sees every bit of every add that finished before it began.
 *
 * Test-and-add must report each key new exactly once, and that cannot be done lock-free with
 * word-sized atomics: two threads adding one key may each set half of its missing bits, and each
 * then looks exactly like a thread that set its half while an unrelated key set the other. So a
 * test-and-add that finds the key absent (lock-free, as a lookup) sets it in a hardware
 * transaction where the CPU has them (below), else takes the lock of the key's block in a table
 * of striped spin locks, tests again under it, and sets the bits. Every test-and-add of one key
 * takes the same lock, so the first to get it sees the key absent and sets it, and the others
 * then see it present. A key already present takes no lock and writes nothing (72% of a
 * crawler's stream).
 *
 * How a locked add writes depends on who else may write:
 *   - In one process (sbloom_set_concurrent on a filter whose blocks it allocated), every add of
 *     an absent key, plain or test-and-add, takes its block's lock, and the block is written as
 *     the plain insert writes it (one vector read-modify-write): nobody else writes the block
 *     meanwhile. The table has a word per 64 blocks (4,096 to 65,536 words), so two cores rarely
 *     want one line of it at once. Without transactions the locks there cover regions of the
 *     filter instead, one lock for the many keys of a batch that land in a region (below).
 *   - Across processes (sbloom_map with SBLOOM_OPEN_CONCURRENT, sbloom_set_concurrent_shared) a
 *     plain add takes no lock and ORs each bit its key lacks in with one atomic fetch-or (the
 *     count may then take a racing key twice), and a locked test-and-add sets its bits the same
 *     way. The table is the lock file's 4,096 words: every process mapping the file, whatever
 *     its build, must agree on both. A filter in memory that others may write too (a file
 *     mapping, a caller's image) does the same under sbloom_set_concurrent, and so does every
 *     filter under ThreadSanitizer, which cannot check a plain vector store beside lock-free
 *     lookups.
 * Measured (simdbloom-bench-threads 256, SIMDBLOOM_NO_RTM=1, 2-core Intel Xeon VM,
 * docs/CONCURRENCY.md): new keys 20.6 Mkeys/s on one thread with the fetch-ors, 44-46 written
 * plainly under the lock; two threads 1.9x one either way. An earlier try of the plain writes
 * with the 4,096-word table (AMD EPYC VM) had two threads slower than one, the table's lines
 * bouncing between the cores; with PREFETCHW on the lock words ahead and the larger table they
 * scale.
 *
 * Across processes the lock table lives in the filter's lock file (sbloom_lock_file), mapped
 * shared, and a lock holds the holder's process ID: a waiter that finds the holder dead (killed
 * inside its critical section of a few nanoseconds) takes the lock over, and one whose holder
 * lives but keeps it (stopped) gives up after a bound, failing the batch (src/os/lockword.c). The
 * item count is then the header's (as last synced) plus a delta in the lock file that every process
 * adds to; the header itself is left alone until a sync, so that it stays valid for processes that
 * map the file later.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../base/alloc.h"
#include "../os/os.h"
#include "locked.h"
#include "modes.h"

_Static_assert(SBLOOM_SHARED_LOCKS_BYTES == SBLOOM_LOCK_FILE_BYTES,
               "the caller's lock region is laid out as a lock file");

/* The locks of a concurrent filter: the table (mask + 1 words, in the heap or, SBLOOM_STRIPES of
 * them, in PATH.lock or the caller's region; its spare lock; who this process is to them), and
 * how this mode uses it. */
typedef struct stripes {
    sbloom_lock_table table;
    uint32_t mask;    /* the words' count - 1 (a power of two - 1) */
    int shared;       /* across processes: a lock word holds its holder's process ID */
    int plain_writes; /* every add of an absent key locks, and writes its block plainly */
    /* Where plain_writes holds and the CPU has no transactions: a lock per region of
     * 2^region_shift consecutive blocks (below), each on a cache line of its own. NULL else. */
    uint32_t *regions;
    void *regions_memory;
    unsigned region_shift;
    uint32_t nregions;
    int lookup_first; /* the last round found mostly present keys: look them up first (a hint) */
    int fingerprint;  /* a fingerprint filter's: every write locks (concurrent_fp.c) */
    unsigned misses;  /* its test-and-adds' hint (sbloom_fp_locks) */
} stripes;

/* The lock table of one process's concurrent filter: a word per BLOCKS_PER_STRIPE blocks, from
 * SBLOOM_STRIPES (16 KiB) to MAX_STRIPES (256 KiB, within a core's L2). Two threads adding new
 * keys to a 256 MiB filter without transactions (simdbloom-bench-threads 256, SIMDBLOOM_NO_RTM=1,
 * Intel Xeon VM): 1.75x one thread with 4,096 words, 1.88x with 65,536, 1.59x with a million
 * (a lock word then is a cache miss of its own). */
#define BLOCKS_PER_STRIPE 64
#define MAX_STRIPES 65536u

/* (ThreadSanitizer cannot check the plain vector stores of a block written under its lock beside
 * lock-free lookups; under it every add ORs its bits in atomically, as across processes:
 * SBLOOM_UNDER_TSAN, locked.h.) */
#define UNDER_TSAN SBLOOM_UNDER_TSAN

/* A key's place: its block (ctx: the filter). */
static uint64_t block_of(const void *ctx, uint64_t hash)
{
    return sbk_block_index(hash, ((const sbloom_t *)ctx)->core.nblocks);
}

/* The lock word of a block. */
static uint32_t *stripe_of(const void *ctx, uint64_t block)
{
    const stripes *s = ((const sbloom_t *)ctx)->state;
    return s->table.words + (block & s->mask);
}

/* Keys tested lock-free per round before the absent ones are set under their locks: small
 * enough that their lines are still in the caches for the second step. */
#define ROUND 256

/* The block of a key about to be set, requested owned. */
static void prefetch_block(const void *ctx, uint64_t block, int prefetchw)
{
    const sbloom_core *c = &((const sbloom_t *)ctx)->core;
    sbk_prefetch_owned((const char *)c->blocks + block * c->block_bytes, prefetchw);
}

/* An absent key set under its block's lock. Where every writer locks (plain_writes), the key's
 * block is written as the plain insert writes it: no other writer can touch it meanwhile. Else
 * other processes' adds may OR bits in without the lock, and each word the key lacks takes an
 * atomic fetch-or. */
static int insert_under_lock(const void *ctx, uint64_t hash)
{
    const sbloom_t *f = ctx;
    const sbloom_core *c = &f->core;
    if (((const stripes *)f->state)->plain_writes)
        return c->kern->insert_one(c->blocks, c->nblocks, hash);
    return (int)c->kern->insert_shared(c->blocks, c->nblocks, &hash, 1, NULL);
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
 * fetch-or would make the key new twice. The concurrency layer (locked.c) tries a group's
 * transaction a few times, then sends its keys to the locks.
 */
static int insert_transaction(const void *ctx, const uint64_t *hashes, size_t n, uint8_t *is_new)
{
    const sbloom_t *f = ctx;
    const stripes *locks = f->state;
    return f->core.kern->insert_transaction(f->core.blocks, f->core.nblocks, hashes, n,
                                            locks->table.words, locks->mask, is_new);
}

/* Keys round[which[0..n)] set in transactions or under their blocks' locks; their answers in
 * out. Returns the count new. */
static uint64_t insert_absent(sbloom_t *f, const uint64_t *round, const uint16_t *which, size_t n,
                              uint8_t *out, int transactions)
{
    stripes *s = f->state;
    sbloom_locked locked = {.self = &s->table.self,
                            .ctx = f,
                            .place = block_of,
                            .stripe = stripe_of,
                            .prefetch = prefetch_block,
                            .one = insert_under_lock,
                            .transaction = transactions ? insert_transaction : NULL};
    return sbloom_locked_run(f, &locked, round, which, n, out);
}

/*
 * Regions: where every writer of the filter is a thread of this process writing blocks plainly
 * under a lock (plain_writes) and the CPU has no hardware transactions, a lock per key costs a
 * locked instruction per new key, which also waits for the stores before it: on the device's
 * 16-core Xeon (no TSX) one thread added new keys at 0.31-0.37x the plain filter's speed that way
 * (docs/PERFORMANCE.md). So the locks there cover regions of consecutive blocks (at most
 * MAX_REGIONS), and a batch goes in rounds of REGION_ROUND keys (ROUND, on the stack, for a short
 * batch or when there is no memory for more: every writer must take the region locks), each sorted
 * by region from the hashes alone (no line read): one lock per region that has keys, and the plain
 * insert kernel (which tests each key, and prefetches ahead) over its keys under it. A thread
 * starts at a region that depends on its keys and leaves a region another thread holds for later
 * (trying the rest first), so that threads pass each other rather than queue. Exactly once holds
 * as with the stripes: every add of a key takes the lock of its block's region and tests the key
 * under it. Whether a round looks its keys up lock-free first depends on the last round (a hint
 * kept per filter): after one of mostly new keys it does not, and present keys take the lock too
 * (their blocks written back unchanged), since for new keys the lookup pass costs more than the
 * locks it spares (new keys on one thread: 0.63x the plain add with the lookup before every round,
 * 0.74x with the hint; `SIMDBLOOM_NO_RTM=1 build/release/simdbloom-bench-threads 256`, this
 * project's 2-core Intel Xeon VM); after a round of mostly present keys (a crawler's stream) it
 * does, and only the absent keys are sorted and set. 32 regions: one thread 0.79-0.83x the plain
 * add of new keys there, against 0.78-0.81x with 16 and 0.72-0.76x with 64 (`simdbloom bench
 * --size 256MiB`, batches of 4,096 keys); 0.52x with a lock a key.
 */
#define MAX_REGIONS 32u
#define REGION_ROUND 8192
#define REGION_WORDS 16 /* a lock word per 64-byte line */

static uint32_t *region_lock(const stripes *s, uint32_t region)
{
    return s->regions + (size_t)region * REGION_WORDS;
}

static int region_try_lock(uint32_t *word)
{
    uint32_t free_word = 0;
    return __atomic_load_n(word, __ATOMIC_RELAXED) == 0 &&
           __atomic_compare_exchange_n(word, &free_word, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* Work space of a round of up to `capacity` keys: the keys sorted by region, where each came from,
 * each key's region, the answers in sorted order, and which keys a lookup found present. */
typedef struct region_round {
    uint64_t *keys;
    uint16_t *index;
    uint8_t *region_of, *answers, *present;
    size_t capacity;
} region_round;
#define REGION_KEY_BYTES (sizeof(uint64_t) + sizeof(uint16_t) + 3)

/* The work space laid out in `memory`, REGION_KEY_BYTES a key. */
static void region_round_in(region_round *w, void *memory, size_t capacity)
{
    w->keys = memory;
    w->index = (uint16_t *)(w->keys + capacity);
    w->region_of = (uint8_t *)(w->index + capacity);
    w->answers = w->region_of + capacity;
    w->present = w->answers + capacity;
    w->capacity = capacity;
}

/* Region r's keys set by the plain insert kernel (which tests each and prefetches ahead). */
static uint64_t insert_region(const sbloom_core *c, region_round *w, const uint16_t *start,
                              uint32_t r, int answers)
{
    return c->kern->insert(c->blocks, c->nblocks, w->keys + start[r],
                           (size_t)(start[r + 1] - start[r]),
                           answers ? w->answers + start[r] : NULL);
}

/* One round of up to REGION_ROUND keys: sorted by region (from their hashes alone: no line is
 * read), then each region's keys set by the plain insert kernel under the region's lock; the
 * answers in out (may be NULL). With lookup_first, the keys are looked up lock-free first and
 * only the absent ones are sorted and set. Returns the count new. */
static uint64_t insert_round_by_regions(sbloom_t *f, region_round *w, const uint64_t *round,
                                        size_t len, uint8_t *out, int lookup_first)
{
    const sbloom_core *c = &f->core;
    const stripes *s = f->state;
    uint32_t nregions = s->nregions;
    uint16_t start[MAX_REGIONS + 1] = {0}, fill[MAX_REGIONS];
    if (lookup_first)
        c->kern->contains_shared(c->blocks, c->nblocks, round, len, w->present);
    else
        memset(w->present, 0, len);
    for (size_t i = 0; i < len; i++) {
        uint32_t r = (uint32_t)(sbk_block_index(round[i], c->nblocks) >> s->region_shift);
        w->region_of[i] = (uint8_t)r;
        start[r + 1] = (uint16_t)(start[r + 1] + !w->present[i]);
    }
    for (uint32_t r = 0; r < nregions; r++) {
        start[r + 1] = (uint16_t)(start[r + 1] + start[r]);
        fill[r] = start[r];
    }
    for (size_t i = 0; i < len; i++)
        if (!w->present[i]) {
            uint16_t at = fill[w->region_of[i]]++;
            w->keys[at] = round[i];
            w->index[at] = (uint16_t)i;
        }
    uint32_t later[MAX_REGIONS];
    uint32_t nlater = 0;
    uint64_t fresh = 0;
    uint32_t first = len ? (uint32_t)(round[0] % nregions) : 0;
    for (uint32_t k = 0; k < nregions; k++) {
        uint32_t r = (first + k) % nregions;
        if (start[r] == start[r + 1])
            continue;
        uint32_t *lock = region_lock(s, r);
        if (!region_try_lock(lock)) {
            later[nlater++] = r;
            continue;
        }
        fresh += insert_region(c, w, start, r, out != NULL);
        sbloom_unlock_word(lock);
    }
    /* the regions other threads held: each as soon as it is free, then waiting for the rest */
    for (unsigned spins = 0; nlater > 0; spins++) {
        uint32_t kept = 0;
        for (uint32_t k = 0; k < nlater; k++) {
            uint32_t r = later[k];
            uint32_t *lock = region_lock(s, r);
            /* (threads of this process only: the wait cannot fail) */
            if (spins < 64 ? !region_try_lock(lock)
                           : (sbloom_lock_word(lock, 1, &s->table.self), 0)) {
                later[kept++] = r;
                continue;
            }
            fresh += insert_region(c, w, start, r, out != NULL);
            sbloom_unlock_word(lock);
        }
        nlater = kept;
        sbloom_cpu_relax();
    }
    if (out) {
        if (lookup_first)
            memset(out, 0, len); /* present: not new */
        for (uint32_t at = 0; at < start[nregions]; at++)
            out[w->index[at]] = w->answers[at];
    }
    return fresh;
}

/* The exactly-once test-and-add: lock-free lookups first, then each absent key set in a
 * transaction (where the CPU has them) or under its block's lock. */
static uint64_t insert_once(sbloom_t *f, const uint64_t *hashes, size_t n, uint8_t *is_new)
{
    uint8_t scratch[ROUND];
    uint16_t absent[ROUND];
    const sbloom_core *c = &f->core;
    stripes *locks = f->state;
    int transactions = sbk_have_rtm() && c->kern->insert_transaction;
    int regions = !transactions && locks->regions;
    size_t round_keys = ROUND;
    uint64_t fresh = 0;
    /* the region path's work space: on the stack for ROUND keys (a single key, a short batch, or
     * no memory for more: every writer must take the region locks), else REGION_ROUND */
    region_round work = {0};
    uint64_t small_work[(ROUND * REGION_KEY_BYTES + 7) / 8];
    void *large_work = NULL;
    if (regions) {
        large_work = n > ROUND ? malloc(REGION_ROUND * REGION_KEY_BYTES) : NULL;
        region_round_in(&work, large_work ? large_work : (void *)small_work,
                        large_work ? REGION_ROUND : ROUND);
        round_keys = work.capacity;
    }
    for (size_t at = 0; at < n; at += round_keys) {
        size_t len = n - at < round_keys ? n - at : round_keys;
        const uint64_t *round = hashes + at;
        if (regions) {
            stripes *hint = f->state;
            uint64_t added =
                insert_round_by_regions(f, &work, round, len, is_new ? is_new + at : NULL,
                                        __atomic_load_n(&hint->lookup_first, __ATOMIC_RELAXED));
            fresh += added;
            /* mostly present keys: the next round looks them up first, lock-free */
            __atomic_store_n(&hint->lookup_first, added * 2 < len, __ATOMIC_RELAXED);
            continue;
        }
        uint8_t *out = is_new ? is_new + at : scratch;
        c->kern->contains_shared(c->blocks, c->nblocks, round, len, out);
        size_t nabsent = 0;
        for (size_t i = 0; i < len; i++) {
            absent[nabsent] = (uint16_t)i;
            nabsent += !out[i];
            out[i] = 0; /* present: no lock, not new */
        }
        fresh += insert_absent(f, round, absent, nabsent, out, transactions);
        if (sbloom_object_failed(f))
            break;
    }
    free(large_work);
    return fresh;
}

/* A fingerprint filter's keys, each under its line's lock (concurrent_fp.c). */
static uint64_t fingerprint_run(const sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes,
                                size_t n, uint8_t *results)
{
    stripes *s = f->state;
    sbloom_fp_locks locks = {s->table.words,  s->mask,
                             s->table.stride, &s->table.spare,
                             &s->table.self,  s->table.stride == 2 ? &s->table.spare_version : NULL,
                             &s->misses};
    return sbloom_fp_locked_run(f, &locks, op, hashes, n, results);
}

static uint64_t concurrent_run(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                               uint8_t *results)
{
    if (((const stripes *)f->state)->fingerprint)
        return fingerprint_run(f, op, hashes, n, results);
    if (op == SBLOOM_OP_CONTAINS)
        return sbloom_core_run_shared(&f->core, op, hashes, n, results);
    if (!results && !((const stripes *)f->state)->plain_writes &&
        !(sbk_have_rtm() && f->core.kern->insert_transaction))
        /* a plain add where others may write without the lock: lock-free fetch-ors (the count
         * may take a racing key twice) */
        return sbloom_core_run_shared(&f->core, op, hashes, n, results);
    return insert_once(f, hashes, n, results); /* (plain adds too: transactions or the locks) */
}

static int concurrent_add_one(sbloom_t *f, uint64_t hash)
{
    uint8_t is_new;
    if (((const stripes *)f->state)->fingerprint)
        return (int)fingerprint_run(f, SBLOOM_OP_INSERT, &hash, 1, &is_new);
    return (int)insert_once(f, &hash, 1, &is_new);
}

static int concurrent_contains_one(const sbloom_t *f, uint64_t hash)
{
    if (((const stripes *)f->state)->fingerprint)
        return (int)fingerprint_run(f, SBLOOM_OP_CONTAINS, &hash, 1, NULL);
    return (int)sbloom_core_run_shared(&f->core, SBLOOM_OP_CONTAINS, &hash, 1, NULL);
}

static void release_stripes(stripes *s)
{
    if (!s)
        return;
    sbloom_lock_table_release(&s->table);
    free(s->regions_memory);
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
    .shared_core = 1,
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

/* The region locks of a filter of nblocks blocks: at most MAX_REGIONS regions of 2^shift blocks,
 * each lock word on a cache line of its own. 0 when out of memory. */
static int add_regions(stripes *s, uint64_t nblocks)
{
    unsigned shift = 0;
    while (((nblocks - 1) >> shift) >= MAX_REGIONS)
        shift++;
    uint32_t count = (uint32_t)((nblocks - 1) >> shift) + 1;
    size_t bytes = ((size_t)count * REGION_WORDS + REGION_WORDS) * sizeof(uint32_t);
    char *memory = sbloom_calloc(1, bytes);
    if (!memory)
        return 0;
    s->regions_memory = memory;
    s->regions = (uint32_t *)(memory + (64 - (uintptr_t)memory % 64) % 64);
    s->region_shift = shift;
    s->nregions = count;
    return 1;
}

int sbloom_concurrent_enter(sbloom_t *f)
{
    if (f->mode == &sbloom_mode_concurrent)
        return SBLOOM_OK;
    int fingerprint = sbloom_family_of(f->layout)->moves_entries; /* (concurrent_fp.c) */
    if (!f->core.kern->insert_shared && !fingerprint)
        return SBLOOM_E_LAYOUT; /* the counting layout: counters need one writer */
    /* a fingerprint filter's lookups go without locks (a seqlock: concurrent_fp.c), its lock
     * words each followed by a version, in as many bytes */
    int versioned = fingerprint && !UNDER_TSAN;
    uint32_t count = SBLOOM_STRIPES;
    while (count < (versioned ? MAX_STRIPES / 2 : MAX_STRIPES) &&
           count < f->core.nblocks / BLOCKS_PER_STRIPE)
        count *= 2;
    stripes *s = sbloom_calloc(1, sizeof *s);
    if (!s)
        return SBLOOM_E_NOMEM;
    sbloom_lock_table_init(&s->table);
    if (sbloom_lock_table_alloc(&s->table, count, versioned) != SBLOOM_OK) {
        free(s);
        return SBLOOM_E_NOMEM;
    }
    s->mask = count - 1;
    /* Blocks only this process can write: memory the caller gave (an image, perhaps shared) or
     * a file mapping (which other processes may map with SBLOOM_OPEN_CONCURRENT, adding with
     * fetch-ors) keep the fetch-ors, which lose nothing beside a writer that takes no lock. */
    s->fingerprint = fingerprint;
    s->plain_writes =
        !UNDER_TSAN && !fingerprint &&
        (f->core.owner == SBLOOM_OWNER_HEAP || f->core.owner == SBLOOM_OWNER_ANON_MAP);
    if (s->plain_writes && !add_regions(s, f->core.nblocks)) {
        release_stripes(s);
        return SBLOOM_E_NOMEM;
    }
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
    s->mask = s->table.count - 1; /* the lock file's table; adds stay fetch-ors (plain_writes 0):
                                     every process's binary must agree on both */
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
    sbloom_lock_table_init(&s->table);
    int rc = sbloom_lock_table_attach(&s->table, path);
    if (rc != SBLOOM_OK) {
        int saved = errno;
        free(s);
        errno = saved;
        return rc;
    }
    share(f, s, s->table.map);
    return SBLOOM_OK;
}

int sbloom_concurrent_share_region(sbloom_t *f, void *region)
{
    if (!f->core.kern->insert_shared)
        return SBLOOM_E_LAYOUT;
    stripes *s = sbloom_calloc(1, sizeof *s);
    if (!s)
        return SBLOOM_E_NOMEM;
    sbloom_lock_table_init(&s->table);
    sbloom_lock_table_borrow(&s->table, region);
    share(f, s, region);
    return SBLOOM_OK;
}

uint64_t sbloom_concurrent_locks_held(const sbloom_t *f)
{
    if (f->mode != &sbloom_mode_concurrent)
        return 0;
    const stripes *s = f->state;
    uint64_t held = sbloom_lock_table_held(&s->table);
    for (uint32_t r = 0; s->regions && r < s->nregions; r++)
        held += __atomic_load_n(region_lock(s, r), __ATOMIC_RELAXED) != 0;
    return held;
}
