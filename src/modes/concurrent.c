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
 *     filter instead, one lock for the many keys of a batch that land in a region (regions.h).
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
#include "regions.h"

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
    /* Where plain_writes holds and the CPU has no transactions: the region locks (regions.h;
     * words NULL else). */
    sbloom_regions regions;
    int fingerprint; /* a fingerprint filter's: every write locks (concurrent_fp.c) */
    unsigned misses; /* its test-and-adds' hint (sbloom_fp_locks) */
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
                              uint8_t *out, int transactions, uint32_t token)
{
    stripes *s = f->state;
    sbloom_locked locked = {.self = &s->table.self,
                            .ctx = f,
                            .place = block_of,
                            .stripe = stripe_of,
                            .prefetch = prefetch_block,
                            .one = insert_under_lock,
                            .transaction = transactions ? insert_transaction : NULL};
    return sbloom_locked_run(f, &locked, round, which, n, out, token);
}

/* Without transactions, one process's plain writes take region locks (src/modes/regions.h says
 * why and how): the Bloom core's lookups and plain insert are the form they run. */
static void look_up_shared(const void *ctx, const uint64_t *hashes, size_t n, uint8_t *present)
{
    const sbloom_core *c = ctx;
    c->kern->contains_shared(c->blocks, c->nblocks, hashes, n, present);
}

static uint64_t insert_plain(const void *ctx, const uint64_t *keys, size_t n, uint8_t *answers)
{
    const sbloom_core *c = ctx;
    return c->kern->insert(c->blocks, c->nblocks, keys, n, answers);
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
    if (!transactions && locks->regions.words) {
        sbloom_region_form form = {c, c->nblocks, look_up_shared, insert_plain};
        return sbloom_regions_run(&locks->regions, &form, &locks->table.self, hashes, n, is_new);
    }
    uint64_t fresh = 0;
    uint32_t token = sbloom_lock_token(&locks->table.self); /* (once a batch: locked.h) */
    for (size_t at = 0; at < n; at += ROUND) {
        size_t len = n - at < ROUND ? n - at : ROUND;
        const uint64_t *round = hashes + at;
        uint8_t *out = is_new ? is_new + at : scratch;
        c->kern->contains_shared(c->blocks, c->nblocks, round, len, out);
        size_t nabsent = 0;
        for (size_t i = 0; i < len; i++) {
            absent[nabsent] = (uint16_t)i;
            nabsent += !out[i];
            out[i] = 0; /* present: no lock, not new */
        }
        fresh += insert_absent(f, round, absent, nabsent, out, transactions, token);
        if (sbloom_object_failed(f))
            break;
    }
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
    sbloom_regions_release(&s->regions);
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
    if (s->plain_writes && sbloom_regions_alloc(&s->regions, f->core.nblocks) != SBLOOM_OK) {
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
    return sbloom_lock_table_held(&s->table) + sbloom_regions_held(&s->regions);
}
