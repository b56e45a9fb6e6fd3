/*
 * A window's rings and their writers: the fused pass over a ring's lines (one writer), the same
 * under the stripes' locks through the concurrency layer's loop (src/modes/locked.h: many threads,
 * or processes sharing a file), the stripes made, shared and counted, and a generation cleared
 * under them. windowed.c (the mode: the clock, growth, the table) calls these; they call only
 * the core, the lock words and windowed_ring.c.
 */
#include <stdlib.h>
#include <string.h>

#include "../base/alloc.h"
#include "../os/os.h"
#include "locked.h"
#include "windowed_ring.h"

/* Generation `slot` emptied in groups [from, to): its lines zeroed, its bit cleared in every
 * slot (by the kernel table's loop, vectorized for the CPU), or its entries dropped (ages). */
static void clear_groups(windowed *w, uint32_t slot, uint64_t from, uint64_t to)
{
    if (ages_form(w)) {
        sbloom_core_age(&w->lines, w->ngroups, from, to, w->age_bits, slot, SBK_FP_AGE_DROP);
    } else if (slots_form(w)) {
        const uint64_t keep = ~(SLOT_BIT0 << slot), count = (to - from) * 8;
        w->lines.kern->window_clear(words_of(w) + from * 8, count, keep);
    } else {
        for (uint64_t b = from; b < to; b++)
            memset(line_of(w, b, slot), 0, 64);
    }
}

/* Generation `slot` emptied; with many threads, stripe by stripe under each stripe's lock (a
 * lock another process keeps: SBLOOM_E_LOCKED, the generation partly cleared), and for the ages
 * form the spare lines' lock after it (a stripe's span may hold spare lines, which the keys of
 * every stripe write), their versions odd meanwhile (lookups without locks look again). */
int sbloom_ring_clear(windowed *w, uint32_t slot, uint32_t token)
{
    if (!w->table.words) {
        clear_groups(w, slot, 0, w->ngroups);
    } else {
        for (uint64_t from = 0; from < w->ngroups; from += w->per_stripe) {
            uint32_t *lock = w->table.words + from / w->per_stripe * w->table.stride;
            uint64_t to = w->ngroups - from < w->per_stripe ? w->ngroups : from + w->per_stripe;
            int rc = sbloom_lock_word(lock, token, &w->table.self);
            if (rc != SBLOOM_OK)
                return rc;
            int versioned = w->table.stride == 2; /* (the ages form: lookups without locks) */
            if (ages_form(w))                     /* (threads only: this lock cannot fail) */
                sbloom_lock_word(&w->table.spare, token, &w->table.self);
            if (versioned) {
                sbloom_version_begin(lock + 1);
                sbloom_version_begin(&w->table.spare_version);
            }
            clear_groups(w, slot, from, to);
            if (versioned) {
                sbloom_version_end(&w->table.spare_version);
                sbloom_version_end(lock + 1);
            }
            if (ages_form(w))
                sbloom_unlock_word(&w->table.spare);
            sbloom_unlock_word(lock);
        }
    }
    __atomic_store_n(&w->items[slot], 0, __ATOMIC_RELAXED);
    return SBLOOM_OK;
}

/* One fused pass over a ring's lines (its form's kernel): a key no generation holds added to
 * generation `slot` (SBLOOM_OP_INSERT), or whether one holds each key. A key the ages form found
 * no room for is not added, and the batch says SBLOOM_E_FULL to f (the others are added). */
uint64_t sbloom_ring_pass(const sbloom_t *f, const windowed *w, uint32_t slot, sbloom_batch_op op,
                          const uint64_t *hashes, size_t n, uint8_t *results)
{
    if (!ages_form(w))
        return sbloom_core_run_groups(&w->lines, w->per_group, slot, op, hashes, n, results);
    uint64_t count =
        sbloom_core_run_aged(&w->lines, w->ngroups, w->age_bits, slot, op, hashes, n, results);
    if (count & SBK_FP_REFUSED) {
        sbloom_object_fail(f, SBLOOM_E_FULL);
        count &= ~SBK_FP_REFUSED;
    }
    return count;
}

/* What the concurrency layer's loop (locked.h) reads of a ring: the ring, the generation keys go
 * to, the operation, and for the ages form its lines but the spill lines as a fingerprint core
 * (where a key's line is, and whether it may reach the spare lines). */
typedef struct ring_keys {
    const sbloom_t *f;
    const windowed *w;
    sbloom_core entries;
    uint32_t slot;
    sbloom_batch_op op;
} ring_keys;

/* A key's place: its group of lines (the Bloom forms), its main line (ages). */
static uint64_t group_of(const void *ctx, uint64_t hash)
{
    return sbk_block_index(hash, ((const ring_keys *)ctx)->w->ngroups);
}

static uint64_t main_line_of(const void *ctx, uint64_t hash)
{
    return sbloom_core_fp_line(&((const ring_keys *)ctx)->entries, hash);
}

static uint32_t *ring_stripe(const void *ctx, uint64_t group)
{
    const ring_keys *k = ctx;
    return k->w->table.words + group / k->w->per_stripe * k->w->table.stride;
}

static void ring_prefetch(const void *ctx, uint64_t group, int prefetchw)
{
    const ring_keys *k = ctx;
    const char *first = (const char *)k->w->lines.blocks + group * k->w->per_group * 64;
    for (uint32_t g = 0; g < k->w->per_group; g++)
        sbk_prefetch_owned(first + g * 64, prefetchw);
}

static int ring_reaches_spare(const void *ctx, uint64_t hash)
{
    return sbloom_core_fp_reaches_spare(&((const ring_keys *)ctx)->entries, hash);
}

/* One key's fused pass: the Bloom forms', the ages form's (a refused key: f failed). */
static int groups_one(const void *ctx, uint64_t hash)
{
    const ring_keys *k = ctx;
    return (int)sbloom_core_run_groups(&k->w->lines, k->w->per_group, k->slot, k->op, &hash, 1,
                                       NULL);
}

static int ages_one(const void *ctx, uint64_t hash)
{
    const ring_keys *k = ctx;
    return (int)sbloom_ring_pass(k->f, k->w, k->slot, k->op, &hash, 1, NULL);
}

/* The Bloom forms' lookups, no lock taken: their adds only set bits (a vector store of a line
 * that holds every bit it held, under the stripe's lock or in a transaction), and a rotation
 * clears one generation's bits a word at a time, so a load that reads each word whole (native
 * vector kernels) sees every bit of a key added before the lookup began and not dropped since. */
static void groups_look_up(const void *ctx, const uint64_t *hashes, size_t m, uint8_t *found)
{
    const ring_keys *k = ctx;
    sbloom_core_run_groups(&k->w->lines, k->w->per_group, k->slot, SBLOOM_OP_CONTAINS, hashes, m,
                           found);
}

/* A key's lines requested for reading: its group's (the ages form: its main line). */
static void ring_read_ahead(const void *ctx, uint64_t group)
{
    const ring_keys *k = ctx;
    const char *first = (const char *)k->w->lines.blocks + group * k->w->per_group * 64;
    for (uint32_t g = 0; g < k->w->per_group; g++)
        __builtin_prefetch(first + g * 64);
}

/* The ages form's lookups, no lock taken (checked by the stripes' versions: locked.h). */
static void ages_look_up(const void *ctx, const uint64_t *hashes, size_t m, uint8_t *found)
{
    const ring_keys *k = ctx;
    sbloom_ring_pass(k->f, k->w, k->slot, SBLOOM_OP_CONTAINS, hashes, m, found);
}

static int ring_transaction(const void *ctx, const uint64_t *hashes, size_t n, uint8_t *results)
{
    const ring_keys *k = ctx;
    const windowed *w = k->w;
    return w->lines.kern->window_transaction(w->lines.blocks, w->ngroups, w->per_group, k->slot,
                                             k->op != SBLOOM_OP_CONTAINS, hashes, n, w->table.words,
                                             w->per_stripe, results);
}

/* Many threads: each key tested (and set) by the ring's fused pass under the lock of its group's
 * stripe (ages: and the spare lines' lock after it when the key may reach them; lookups, and
 * test-and-adds of keys held, without locks, checked by the stripes' versions); where the CPU
 * has hardware transactions and the form a kernel for them (src/modes/concurrent.c says how they
 * stand beside the locks), SBK_TRANSACTION_KEYS keys at a time in one instead, reading their
 * stripes' locks (a rotation holds them while it clears). */
uint64_t sbloom_ring_run_locked(const sbloom_t *f, windowed *w, uint32_t slot, sbloom_batch_op op,
                                const uint64_t *hashes, size_t n, uint8_t *results)
{
    ring_keys keys = {f, w, sbloom_ring_entries(w), slot, op};
    int ahead = w->lines.bytes >= SBK_PREFETCH_MIN_BYTES; /* lookups' next lines requested */
    if (ages_form(w)) {
        int versioned = w->table.stride == 2;
        sbloom_locked ages = {.self = &w->table.self,
                              .spare = &w->table.spare,
                              .ctx = &keys,
                              .place = main_line_of,
                              .stripe = ring_stripe,
                              .prefetch = ring_prefetch,
                              .reaches_spare = ring_reaches_spare,
                              .one = ages_one,
                              .spare_version = versioned ? &w->table.spare_version : NULL,
                              .look_up = versioned ? ages_look_up : NULL,
                              .read_ahead = ahead ? ring_read_ahead : NULL,
                              .misses = &w->misses};
        return sbloom_checked_run(f, &ages, op, hashes, n, results);
    }
    /* The Bloom forms' lookups need no lock (below) where the kernels' loads read words whole */
    int lock_free = !SBLOOM_UNDER_TSAN && w->lines.whole_words;
    sbloom_locked bloom = {.self = &w->table.self,
                           .ctx = &keys,
                           .place = group_of,
                           .stripe = ring_stripe,
                           .prefetch = ring_prefetch,
                           .one = groups_one,
                           .transaction =
                               w->lines.kern->window_transaction ? ring_transaction : NULL,
                           .look_up = lock_free ? groups_look_up : NULL,
                           .read_ahead = lock_free && ahead ? ring_read_ahead : NULL,
                           .misses = &w->misses,
                           .found_quarters = 2};
    return sbloom_checked_run(f, &bloom, op, hashes, n, results);
}

/* Groups a stripe lock covers: SBLOOM_STRIPES stripes over the ring. The ages form's in whole
 * words of spill bytes (8 lines: an add writes its line's byte in a 64-bit word, so that the
 * lines of one word must share a lock). */
static uint64_t stripe_span(const windowed *w)
{
    uint64_t span = w->ngroups / SBLOOM_STRIPES + (w->ngroups % SBLOOM_STRIPES != 0);
    return ages_form(w) ? (span + 7) / 8 * 8 : span;
}

int sbloom_ring_lock(windowed *w, int on)
{
    if (!on) {
        sbloom_lock_table_release(&w->table);
        return SBLOOM_OK;
    }
    if (w->table.words)
        return SBLOOM_OK;
    int versioned = ages_form(w) && !SBLOOM_UNDER_TSAN; /* (lookups without locks) */
    if (sbloom_lock_table_alloc(&w->table, SBLOOM_STRIPES, versioned) != SBLOOM_OK)
        return SBLOOM_E_NOMEM;
    w->per_stripe = stripe_span(w);
    return SBLOOM_OK;
}

uint64_t sbloom_ring_locks_held(const windowed *w)
{
    return sbloom_lock_table_held(&w->table) +
           (w->table.words && __atomic_load_n(w->advancing, __ATOMIC_RELAXED) != 0);
}

int sbloom_ring_share_locks(windowed *w, const char *path)
{
    int rc = sbloom_lock_table_attach(&w->table, path);
    if (rc != SBLOOM_OK)
        return rc;
    w->advancing = (uint32_t *)((char *)w->table.map + SBLOOM_LOCK_ADVANCE_AT);
    w->per_stripe = stripe_span(w);
    w->across = 1;
    return SBLOOM_OK;
}
