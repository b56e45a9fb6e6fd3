/*
 * The concurrency layer's region locks: where every writer of a core is a thread of this process
 * writing its lines plainly under a lock and the CPU has no hardware transactions, a lock per key
 * costs a locked instruction per new key, which also waits for the stores before it: on the
 * device's 16-core Xeon (no TSX) one thread added new keys at 0.31-0.37x the plain filter's speed
 * that way (docs/PERFORMANCE.md). So the locks there cover regions of consecutive lines (at most
 * SBLOOM_MAX_REGIONS), and a batch goes in rounds of SBLOOM_REGION_ROUND keys (SBLOOM_ROUND, on
 * the stack, for a short batch or when there is no memory for more: every writer must take the
 * region locks), each sorted by region from the hashes alone (no line read): one lock per region
 * that has keys, and the form's plain insert (which tests each key, and prefetches ahead) over its
 * keys under it. A thread starts at a region that depends on its keys and leaves a region another
 * thread holds for later (trying the rest first), so that threads pass each other rather than
 * queue. Exactly once holds as with the stripes: every add of a key takes the lock of its line's
 * region and tests the key under it. Whether a round looks its keys up lock-free first depends on
 * the last round (a hint kept per filter): after one of mostly new keys it does not, and present
 * keys take the lock too (their lines written back unchanged), since for new keys the lookup pass
 * costs more than the locks it spares (new keys on one thread: 0.63x the plain add with the lookup
 * before every round, 0.74x with the hint; `SIMDBLOOM_NO_RTM=1
 * build/release/simdbloom-bench-threads 256`, this project's 2-core Intel Xeon VM); after a round
 * of mostly present keys (a crawler's stream) it does, and only the absent keys are sorted and set.
 * 32 regions: one thread 0.79-0.83x the plain add of new keys there, against 0.78-0.81x with 16 and
 * 0.72-0.76x with 64 (`simdbloom bench --size 256MiB`, batches of 4,096 keys); 0.52x with a lock a
 * key.
 *
 * The concurrent mode's Bloom cores use them (src/modes/concurrent.c); a form gives its lines'
 * count, a lock-free lookup and its plain insert (sbloom_region_form), inlined into its one call.
 */
#ifndef SIMDBLOOM_REGIONS_H
#define SIMDBLOOM_REGIONS_H

#include <stdlib.h>
#include <string.h>

#include "locked.h"

#define SBLOOM_MAX_REGIONS 32u
#define SBLOOM_REGION_ROUND 8192
#define SBLOOM_REGION_WORDS 16 /* a lock word per 64-byte line */
#define SBLOOM_ROUND 256       /* a round's keys on the stack */

/* regions.c: the locks of a core of `lines` lines, at most SBLOOM_MAX_REGIONS regions of 2^shift
 * consecutive lines, each lock word on a cache line of its own (alloc: SBLOOM_E_NOMEM, or OK);
 * released (freed, and left empty); the words held now (tests). */
typedef struct sbloom_regions {
    uint32_t *words; /* NULL: none */
    void *memory;
    unsigned shift;
    uint32_t count;
    int lookup_first; /* the last round found mostly present keys: look them up first (a hint) */
} sbloom_regions;
int sbloom_regions_alloc(sbloom_regions *r, uint64_t lines);
void sbloom_regions_release(sbloom_regions *r);
uint64_t sbloom_regions_held(const sbloom_regions *r);

/* What a form gives the regions: its ctx, its lines' count (a key's line: sbk_block_index of its
 * hash), its lookups without locks (answers in present) and its plain insert of keys, which tests
 * each (the count new; answers in `answers` where not NULL). */
typedef struct sbloom_region_form {
    const void *ctx;
    uint64_t lines;
    void (*look_up)(const void *ctx, const uint64_t *hashes, size_t n, uint8_t *present);
    uint64_t (*insert)(const void *ctx, const uint64_t *keys, size_t n, uint8_t *answers);
} sbloom_region_form;

SBLOOM_LOCKED_INLINE uint32_t *sbloom_region_lock(const sbloom_regions *r, uint32_t region)
{
    return r->words + (size_t)region * SBLOOM_REGION_WORDS;
}

SBLOOM_LOCKED_INLINE int sbloom_region_try_lock(uint32_t *word)
{
    uint32_t free_word = 0;
    return __atomic_load_n(word, __ATOMIC_RELAXED) == 0 &&
           __atomic_compare_exchange_n(word, &free_word, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* Work space of a round of up to `capacity` keys: the keys sorted by region, where each came from,
 * each key's region, the answers in sorted order, and which keys a lookup found present. */
typedef struct sbloom_region_round {
    uint64_t *keys;
    uint16_t *index;
    uint8_t *region_of, *answers, *present;
    size_t capacity;
} sbloom_region_round;
#define SBLOOM_REGION_KEY_BYTES (sizeof(uint64_t) + sizeof(uint16_t) + 3)

/* The work space laid out in `memory`, SBLOOM_REGION_KEY_BYTES a key. */
SBLOOM_LOCKED_INLINE void sbloom_region_round_in(sbloom_region_round *w, void *memory,
                                                 size_t capacity)
{
    w->keys = memory;
    w->index = (uint16_t *)(w->keys + capacity);
    w->region_of = (uint8_t *)(w->index + capacity);
    w->answers = w->region_of + capacity;
    w->present = w->answers + capacity;
    w->capacity = capacity;
}

/* Region r's keys set by the form's plain insert. */
SBLOOM_LOCKED_INLINE uint64_t sbloom_region_insert(const sbloom_region_form *form,
                                                   sbloom_region_round *w, const uint16_t *start,
                                                   uint32_t r, int answers)
{
    return form->insert(form->ctx, w->keys + start[r], (size_t)(start[r + 1] - start[r]),
                        answers ? w->answers + start[r] : NULL);
}

/* One round of up to SBLOOM_REGION_ROUND keys: sorted by region (from their hashes alone: no
 * line is read), then each region's keys set by the plain insert under the region's lock; the
 * answers in out (may be NULL). With lookup_first, the keys are looked up lock-free first and
 * only the absent ones are sorted and set. Returns the count new. */
SBLOOM_LOCKED_INLINE uint64_t sbloom_region_round_run(const sbloom_regions *rg,
                                                      const sbloom_region_form *form,
                                                      struct sbloom_lock_self *self,
                                                      sbloom_region_round *w, const uint64_t *round,
                                                      size_t len, uint8_t *out, int lookup_first)
{
    uint32_t nregions = rg->count;
    uint16_t start[SBLOOM_MAX_REGIONS + 1] = {0}, fill[SBLOOM_MAX_REGIONS];
    if (lookup_first)
        form->look_up(form->ctx, round, len, w->present);
    else
        memset(w->present, 0, len);
    for (size_t i = 0; i < len; i++) {
        uint32_t r = (uint32_t)(sbk_block_index(round[i], form->lines) >> rg->shift);
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
    uint32_t later[SBLOOM_MAX_REGIONS];
    uint32_t nlater = 0;
    uint64_t fresh = 0;
    uint32_t first = len ? (uint32_t)(round[0] % nregions) : 0;
    for (uint32_t k = 0; k < nregions; k++) {
        uint32_t r = (first + k) % nregions;
        if (start[r] == start[r + 1])
            continue;
        uint32_t *lock = sbloom_region_lock(rg, r);
        if (!sbloom_region_try_lock(lock)) {
            later[nlater++] = r;
            continue;
        }
        fresh += sbloom_region_insert(form, w, start, r, out != NULL);
        sbloom_unlock_word(lock);
    }
    /* the regions other threads held: each as soon as it is free, then waiting for the rest */
    for (unsigned spins = 0; nlater > 0; spins++) {
        uint32_t kept = 0;
        for (uint32_t k = 0; k < nlater; k++) {
            uint32_t r = later[k];
            uint32_t *lock = sbloom_region_lock(rg, r);
            /* (threads of this process only: the wait cannot fail) */
            if (spins < 64 ? !sbloom_region_try_lock(lock) : (sbloom_lock_word(lock, 1, self), 0)) {
                later[kept++] = r;
                continue;
            }
            fresh += sbloom_region_insert(form, w, start, r, out != NULL);
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

/* The batch's test-and-add under the region locks, in rounds (SBLOOM_REGION_ROUND keys in a work
 * space from the heap, or SBLOOM_ROUND on the stack for a short batch or without memory for
 * more): the count new, answers in is_new (may be NULL). */
SBLOOM_LOCKED_INLINE uint64_t sbloom_regions_run(sbloom_regions *rg, const sbloom_region_form *form,
                                                 struct sbloom_lock_self *self,
                                                 const uint64_t *hashes, size_t n, uint8_t *is_new)
{
    sbloom_region_round work;
    uint64_t small_work[(SBLOOM_ROUND * SBLOOM_REGION_KEY_BYTES + 7) / 8];
    void *large_work =
        n > SBLOOM_ROUND ? malloc(SBLOOM_REGION_ROUND * SBLOOM_REGION_KEY_BYTES) : NULL;
    sbloom_region_round_in(&work, large_work ? large_work : (void *)small_work,
                           large_work ? SBLOOM_REGION_ROUND : SBLOOM_ROUND);
    uint64_t fresh = 0;
    for (size_t at = 0; at < n; at += work.capacity) {
        size_t len = n - at < work.capacity ? n - at : work.capacity;
        uint64_t added = sbloom_region_round_run(
            rg, form, self, &work, hashes + at, len, is_new ? is_new + at : NULL,
            __atomic_load_n(&rg->lookup_first, __ATOMIC_RELAXED));
        fresh += added;
        /* mostly present keys: the next round looks them up first, lock-free */
        __atomic_store_n(&rg->lookup_first, added * 2 < len, __ATOMIC_RELAXED);
    }
    free(large_work);
    return fresh;
}

#endif /* SIMDBLOOM_REGIONS_H */
