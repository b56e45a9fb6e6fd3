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
#define _GNU_SOURCE /* kill, O_CLOEXEC, O_NOFOLLOW, ftruncate in -std=c11 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "internal.h"

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

static void stripe_lock(uint32_t *word, uint32_t token, int across_processes)
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

static void stripe_unlock(uint32_t *word)
{
    __atomic_store_n(word, 0, __ATOMIC_RELEASE);
}

static uint32_t *stripe_of(const sbloom_t *f, uint64_t hash)
{
    return f->stripes + (sbk_block_index(hash, f->nblocks) & (SBLOOM_STRIPES - 1));
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
    sbk_prefetch_owned((const char *)f->blocks + sbk_block_index(hash, f->nblocks) * f->block_bytes,
                       prefetchw);
}

/* The exactly-once test-and-add: lock-free lookups first, then each absent key set under its
 * block's lock. */
static uint64_t insert_once(sbloom_t *f, const uint64_t *hashes, size_t n, uint8_t *is_new)
{
    uint8_t scratch[ROUND];
    uint16_t absent[ROUND];
    const sbloom_layout_kernels *k = f->kern;
    uint32_t token = f->stripes_shared ? (uint32_t)getpid() : 1;
    int prefetchw = sbk_have_prefetchw();
    uint64_t fresh = 0;
    for (size_t at = 0; at < n; at += ROUND) {
        size_t len = n - at < ROUND ? n - at : ROUND;
        const uint64_t *round = hashes + at;
        uint8_t *out = is_new ? is_new + at : scratch;
        k->contains_shared(f->blocks, f->nblocks, round, len, out);
        size_t nabsent = 0;
        for (size_t i = 0; i < len; i++) {
            absent[nabsent] = (uint16_t)i;
            nabsent += !out[i];
            out[i] = 0; /* present: no lock, not new */
        }
        for (size_t q = 0; q < nabsent && q < LOCK_AHEAD; q++)
            prefetch_for_locked_insert(f, round[absent[q]], prefetchw);
        for (size_t q = 0; q < nabsent; q++) {
            if (q + LOCK_AHEAD < nabsent)
                prefetch_for_locked_insert(f, round[absent[q + LOCK_AHEAD]], prefetchw);
            size_t i = absent[q];
            uint32_t *lock = stripe_of(f, round[i]);
            stripe_lock(lock, token, f->stripes_shared);
            out[i] = (uint8_t)k->insert_shared(f->blocks, f->nblocks, round + i, 1, NULL);
            stripe_unlock(lock);
            fresh += out[i];
        }
    }
    return fresh;
}

uint64_t sbloom_concurrent_run(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                               uint8_t *results)
{
    if (op == SBLOOM_OP_CONTAINS)
        return f->kern->contains_shared(f->blocks, f->nblocks, hashes, n, results);
    if (!results) /* a plain add: lock-free, the count may take a racing key twice */
        return f->kern->insert_shared(f->blocks, f->nblocks, hashes, n, NULL);
    return insert_once(f, hashes, n, results);
}

int sbloom_concurrent_add_one(sbloom_t *f, uint64_t hash)
{
    uint8_t is_new;
    return (int)insert_once(f, &hash, 1, &is_new);
}

void sbloom_concurrent_release(sbloom_t *f)
{
    if (f->stripes && f->stripes_shared)
        munmap(f->stripes_map, SBLOOM_LOCK_FILE_BYTES);
    else
        free(f->stripes);
    f->stripes = NULL;
    f->stripes_map = NULL;
    f->items_delta = NULL;
    f->stripes_shared = 0;
}

int sbloom_set_concurrent(sbloom_t *filter, int on)
{
    if (!filter)
        return SBLOOM_E_NULL;
    if (!on) {
        if (filter->stripes_shared)
            return SBLOOM_E_INVALID; /* a concurrent mapping stays concurrent */
        filter->concurrent = 0;
        sbloom_inline_refresh(filter);
        return SBLOOM_OK;
    }
    if (!filter->kern->insert_shared)
        return SBLOOM_E_LAYOUT; /* the counting layout: counters need one writer */
    if (!filter->stripes) {
        filter->stripes = sbloom_calloc(SBLOOM_STRIPES, sizeof *filter->stripes);
        if (!filter->stripes)
            return SBLOOM_E_NOMEM;
    }
    filter->concurrent = 1;
    sbloom_inline_refresh(filter);
    return SBLOOM_OK;
}

int sbloom_is_concurrent(const sbloom_t *filter)
{
    return filter ? filter->concurrent : 0;
}

/* The lock file of a filter (sbloom_lock_file), created when absent (0666 less the umask), at
 * least SBLOOM_LOCK_FILE_BYTES long. */
int sbloom_lock_file_open(const char *path, int *fd_out)
{
    char name[PATH_MAX];
    int rc = sbloom_lock_file(path, name, sizeof name);
    if (rc != SBLOOM_OK)
        return rc;
    int fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
    if (fd < 0)
        return SBLOOM_E_IO;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EISDIR;
        return SBLOOM_E_NOT_REGULAR;
    }
    if (st.st_size < (off_t)SBLOOM_LOCK_FILE_BYTES &&
        ftruncate(fd, (off_t)SBLOOM_LOCK_FILE_BYTES) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return SBLOOM_E_IO;
    }
    *fd_out = fd;
    return SBLOOM_OK;
}

int sbloom_concurrent_share(sbloom_t *f, const char *path)
{
    if (!f->kern->insert_shared)
        return SBLOOM_E_LAYOUT;
    int fd;
    int rc = sbloom_lock_file_open(path, &fd);
    if (rc != SBLOOM_OK)
        return rc;
    void *map;
    if ((rc = sbloom_map_fd(fd, SBLOOM_LOCK_FILE_BYTES, 1, &map)) != SBLOOM_OK)
        return rc;
    f->stripes_map = map;
    f->stripes = (uint32_t *)((char *)map + SBLOOM_LOCK_STRIPES_AT);
    f->items_delta = (uint64_t *)((char *)map + SBLOOM_LOCK_DELTA_AT);
    f->stripes_shared = 1;
    f->concurrent = 1;
    sbloom_inline_refresh(f);
    return SBLOOM_OK;
}

/* Bits of the hash that do not choose the block: the block index is the multiply-high of the
 * top 32 bits, and the bits inside the block come from the low 32 times fixed salts, so every
 * bit of the hash is spoken for. A shard taken from any of them sends each shard's filter a
 * biased slice of blocks or bit patterns (routing by the top 3 bits fills an eighth of each
 * shard's blocks). The shard is instead the multiply-high of a full 64-bit avalanche of the hash
 * (XXH3's), whose every output bit depends on every input bit. */
uint32_t sbloom_shard(uint64_t hash, uint32_t nshards)
{
    uint64_t h = hash ^ (hash >> 37);
    h *= UINT64_C(0x165667919E3779F9);
    h ^= h >> 32;
    return (uint32_t)(((h >> 32) * nshards) >> 32);
}
