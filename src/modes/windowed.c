/*
 * The windowed filter (SBLOOM_LAYOUT_WINDOWED): "seen within the last W?", for recrawls and
 * dedup windows. The window is G periods of P time units; the filter keeps a ring of G + 1
 * generations, each a 512-bit-block filter planned for n / G keys at rate p / (G + 1), so that the
 * G + 1 a lookup probes together keep the rate at most p. Period q (time q * P to (q + 1) * P)
 * writes generation q mod (G + 1); a key is added to it only when no live generation holds it.
 * When time reaches period q + G + 1 that generation is cleared and reused: a key added at time t
 * in period q is held until (q + G + 1) * P, which is after t + W and at most t + W + P.
 *
 * A key's bits in all generations lie in one place, tested by one fused kernel pass
 * (simd/kernels.h, window_insert and window_contains), in one of two forms:
 *   - Generation slots, for G <= 3 (up to 4 generations) where they pay (slots_pay: rates of about
 *     1% to 0.1%): one 64-byte line a key, the counting layout's geometry with each 4-bit slot a
 *     bitmap of generations (bit g: generation g set it). A lookup reads one line, like the plain
 *     filter. Each generation is a 128-slot-a-line filter: planned as the counting layout for
 *     n / G keys at p / (G + 1). Rotating clears one bit of every slot (a sweep of the memory,
 *     once a period).
 *   - Adjacent lines, otherwise: groups of G + 1 adjacent 64-byte lines, line g of group b being
 *     block b of generation g (a 512-bit layout planned for n / G at p / (G + 1)). A lookup reads
 *     G + 1 lines, adjacent (one DRAM page, prefetched together). Rotating clears one line of
 *     every group.
 * Measured (simdbloom-bench-window, docs/notes/window.md; docs/SIZING.md for the memory): test-
 * and-add with slots 1.3-1.8x the plain filter's, with adjacent lines about G + 1 times at 100M
 * keys; adjacent lines take less memory (1.7x a plain filter planned for the window's keys at 1%
 * against 2.1x). The first version probed G + 1 separate filters, one kernel pass each. Epoch
 * stamps in every slot (one line a key, about 4x the memory, stamps to sweep before they wrap)
 * were not built: slots as bitmaps are the same idea at 4 bits.
 *
 * Many threads (sbloom_set_concurrent): every access to a group of lines is made under the lock
 * of its stripe (SBLOOM_STRIPES spin locks, each over a run of adjacent groups): a test-and-add's
 * test and set, a lookup, and a rotation's clear of the stripe's groups. Where the CPU has
 * hardware transactions, keys go 8 at a time in one instead, which reads their stripes' locks and
 * so cannot commit while a stripe is held (as in src/modes/concurrent.c). So a key is reported new
 * once, by the first of the threads adding it, and no thread reads lines half cleared. A rotation
 * (one thread at a time: sbloom_advance takes a lock of its own) clears the reused generation
 * stripe by stripe, then publishes the new period: an add racing it lands in the generation that
 * was current when its batch began (still live) or, once published, the new one; a lookup racing
 * it sees each stripe before or after its clear. Only a clock jumping a whole window at once can
 * clear the generation an add in flight writes to: that key then counts as added in the new
 * period (held longer, never shorter).
 *
 * Ages (sbloom_create_opts with SBLOOM_OPTS_ANY_FAMILY, where it is smaller): one fingerprint
 * filter (simd/fingerprint.h) whose entries carry their generation's ring slot in the low bits
 * of the remainder ("A window's entries" there), planned for every generation's share of keys,
 * (G + 1) x n / G entries, at p from the bits an age leaves. A key is held when an entry of any
 * age has its fingerprint; a new key is added with the current period's age; rotating drops the
 * entries of the reused age (a pass over the lines, once a period). A lookup reads one line, as
 * the plain fingerprint filter's does. Where the period divides, the window is kept as finer
 * periods (G k periods of P / k: a key held at least G x P and at most (G + 1/k) x P), so that it
 * holds (G k + 1) / (G k) of n entries instead of (G + 1) / G, for log2 of more ages: the
 * planner takes the k of the fewest bytes. Threads take a key's main-line stripe and, where it
 * may reach the spare lines, the spare lock after it (src/modes/locked.h); processes may not
 * share it (a writer killed mid-move would leave a line half written: docs/CONCURRENCY.md). No
 * views of the generations and no union (an entry keeps r - a bits of its key, not a
 * generation's bits).
 *
 * File form: src/modes/windowed_file.c (and docs/FORMAT.md).
 */
#include <stdlib.h>
#include <string.h>

#include "../base/alloc.h"
#include "../base/fault.h"
#include "../os/os.h"
#include "windowed_ring.h"

static int windowed_sync(sbloom_t *f);

static void windowed_release(sbloom_t *f)
{
    windowed *w = state_of(f);
    /* a file mapping first (synced, then unmapped), then the locks others may wait on */
    if (w && w->image && !f->readonly && !w->across)
        windowed_sync(f);
    sbloom_ring_free(w);
    f->state = NULL;
}

/* An object over a ring (the newest); the filter's plan is n, p. */
static int object_over(sbloom_t **out, windowed *w, uint64_t n, double p)
{
    sbloom_t *f;
    int rc = sbloom_object_new(&f, &sbloom_mode_windowed, SBLOOM_NO_LAYOUT);
    if (rc != SBLOOM_OK)
        return rc;
    f->state = w;
    f->counting = SBLOOM_COUNT_NONE; /* each generation counts the keys it took */
    f->planned_items = n;
    f->planned_fpp = p;
    f->isa = w->lines.isa;
    *out = f;
    return SBLOOM_OK;
}

/* Slots (one line a key) when they fit the generations (at most 4) and take at most 1.25 times the
 * memory of adjacent lines (G + 1 lines a key) for the same plan: at rates of 1% to 0.1% they do
 * (2.1x a plain filter's memory against 1.75x at 1%); at lower rates a generation's 128 slots a
 * line are too few (4.8x against 1.5x at 1e-6: docs/SIZING.md). `lines` is one generation's
 * plan as a 512-bit layout. */
static int slots_pay(const sbloom_plan *lines, uint64_t per, double rate, uint32_t ngens)
{
    sbloom_plan slots = sbloom_plan_init();
    if (ngens > SLOT_GENERATIONS ||
        sbloom_plan_window_lines(per, rate, SBLOOM_WINDOW_SLOTS, &slots) != SBLOOM_OK)
        return 0;
    return (double)slots.bytes <= 1.25 * (double)lines->bytes * ngens;
}

/* The lines of a ring of generations for n keys a window of G periods at p: slots or adjacent
 * lines (*lines_per_group lines a group of plan->bytes / 64). */
static int generations_plan(uint64_t n, double p, uint32_t periods, sbloom_plan *plan,
                            uint32_t *lines_per_group)
{
    uint64_t per = generation_items(n, periods);
    double rate = generation_rate(p, periods);
    int rc = sbloom_plan_window_lines(per, rate, SBLOOM_WINDOW_ADJACENT, plan);
    *lines_per_group = sbloom_window_group_lines(SBLOOM_WINDOW_ADJACENT, periods + 1);
    if (rc == SBLOOM_OK && slots_pay(plan, per, rate, periods + 1)) {
        *lines_per_group = sbloom_window_group_lines(SBLOOM_WINDOW_SLOTS, periods + 1);
        rc = sbloom_plan_window_lines(per, rate, SBLOOM_WINDOW_SLOTS, plan);
    }
    return rc;
}

/* A new ring for its plan (ages: the ages form's), the current period's generation begun (NULL:
 * *rc says why). */
static windowed *ring_new(uint64_t n, double p, uint32_t periods, uint64_t period, uint64_t current,
                          int ages, int *rc)
{
    windowed *w = sbloom_ring_alloc(n, p, periods, period, current);
    if (!w) {
        *rc = SBLOOM_E_NOMEM;
        return NULL;
    }
    sbloom_plan plan = sbloom_plan_init();
    uint32_t lines_per_group;
    *rc = ages ? sbloom_ring_ages_plan(n, p, periods, &plan)
               : generations_plan(n, p, periods, &plan, &lines_per_group);
    if (*rc == SBLOOM_OK)
        *rc = sbloom_ring_make_lines(w, plan.bytes / 64, plan.layout);
    if (*rc != SBLOOM_OK) {
        sbloom_ring_free(w);
        return NULL;
    }
    w->started[current_slot(w)] = current;
    return w;
}

/* Finer periods for the ages form: G k periods of P / k for the k (P a multiple of it, G k + 1
 * ages at most AGES_MAX_GENERATIONS) of the fewest bytes; 0 when the ages form is not smaller than
 * the ring of generations at its best. */
static uint32_t ages_split(uint64_t n, double p, uint32_t periods, uint64_t period)
{
    sbloom_plan plan = sbloom_plan_init();
    uint32_t lines_per_group, best = 0;
    if (generations_plan(n, p, periods, &plan, &lines_per_group) != SBLOOM_OK)
        return 0;
    double least = (double)plan.bytes * lines_per_group;
    for (uint32_t k = 1; periods * k + 1 <= AGES_MAX_GENERATIONS; k++) {
        if (period % k != 0 || sbloom_ring_ages_plan(n, p, periods * k, &plan) != SBLOOM_OK)
            continue;
        if ((double)plan.bytes < least) {
            least = (double)plan.bytes;
            best = k;
        }
    }
    return best;
}

int sbloom_windowed_plan(uint64_t n, double p, uint32_t periods, uint64_t period, int any_family,
                         sbloom_plan *out)
{
    uint32_t split = any_family ? ages_split(n, p, periods, period) : 0;
    uint32_t ngens = periods * (split ? split : 1) + 1, per_group; /* (counted by the bytes) */
    sbloom_plan plan = sbloom_plan_init();
    int rc = split ? sbloom_ring_ages_plan(n, p, ngens - 1, &plan)
                   : generations_plan(n, p, periods, &plan, &per_group);
    if (rc == SBLOOM_OK) /* (as ring_new makes them) */
        rc = sbloom_ring_lines_bytes(plan.bytes / 64, plan.layout, ngens, &out->bytes);
    if (rc != SBLOOM_OK)
        return rc;
    out->layout = plan.layout;
    out->k = plan.k;
    out->bits_per_key = (double)out->bytes * 8.0 / (double)n;
    out->fpp = p;
    return SBLOOM_OK;
}

int sbloom_windowed_new(sbloom_t **out, uint64_t n, double p, uint32_t periods, uint64_t period,
                        uint64_t now, int any_family)
{
    int rc;
    uint32_t split = any_family ? ages_split(n, p, periods, period) : 0;
    if (split) {
        periods *= split;
        period /= split;
    }
    windowed *w = ring_new(n, p, periods, period, now / period, split != 0, &rc);
    if (w && (rc = object_over(out, w, n, p)) != SBLOOM_OK)
        sbloom_ring_free(w);
    return rc;
}

/* ---- Growing: a window planned without a count ----
 *
 * Like the scalable filter's stages: the filter is a list of rings, each a whole window (its
 * generations in its own lines). Ring `step` is planned for first * 2^step keys a window at rate
 * p / 2^(step + 1), so the rates of every ring there may ever be add up to less than p. The newest
 * ring takes the keys; when its current generation holds its share (one period's keys: the plan
 * over G), a ring twice as large begins and the older one only answers lookups, its generations
 * still cleared as periods begin, until the last period it took keys in has fallen out of the
 * window (all its generations cleared): then it is freed. A steady stream thus ends with one ring
 * of the size it needs; a burst leaves a larger ring behind, as a scalable filter keeps its larger
 * stage. One writer at a time (no concurrent mode, no file mapping): the rings come and go. */

int sbloom_windowed_new_growing(sbloom_t **out, uint64_t first, double p, uint32_t periods,
                                uint64_t period, uint64_t now)
{
    int rc;
    windowed *w = ring_new(ring_items_for(first, 0), ring_rate_for(p, 0), periods, period,
                           now / period, 0, &rc);
    if (!w)
        return rc;
    w->growing = 1;
    if ((rc = object_over(out, w, first, p)) != SBLOOM_OK)
        sbloom_ring_free(w);
    return rc;
}

/* The newest ring is full when its current generation holds one period's share of its plan. */
static int ring_full(const windowed *w)
{
    return w->items[current_slot(w)] >= generation_items(w->plan_items, w->periods);
}

/* A ring twice as large becomes the newest (the old one answers lookups until it expires); an
 * error (memory, the last step) leaves the newest taking more keys than planned. */
static void grow(sbloom_t *f)
{
    windowed *w = state_of(f);
    if (w->step + 1 >= GROWTH_STEPS)
        return;
    int rc;
    uint32_t step = w->step + 1;
    windowed *next =
        ring_new(ring_items_for(f->planned_items, step), ring_rate_for(f->planned_fpp, step),
                 w->periods, w->period, current_period(w), 0, &rc);
    if (!next)
        return;
    next->growing = 1;
    next->step = step;
    next->older = w;
    f->state = next;
    f->isa = next->lines.isa;
}

/* A rotation begun and not finished (a kill cut it short: windowed_file.c reads the record with
 * it), or 0. */
static uint64_t rotation_pending(const windowed *w)
{
    return __atomic_load_n(w->rotating, __ATOMIC_ACQUIRE);
}

/* The ring's clock moved to period `to`, or to the target of a rotation a kill cut short if that
 * is later: the generations of the periods that begin cleared, then the period published.
 * Crash-safe for a file mapping, whose record other processes (and a rerun) read: the target is
 * written first, then each generation is cleared before its start is written, then the period
 * is published and the target reset. A kill at any step leaves a record that reads as valid
 * (windowed_file.c accepts starts up to the target while one is set) and whoever opens the file
 * next finishes the rotation: clearing a generation twice loses nothing, as no key was added to
 * it in between (adds go to the current period's generation, which a rotation clears only when
 * the whole window has passed). A stripe lock another process keeps stops it there
 * (SBLOOM_E_LOCKED), as a kill would: the next advance finishes it. */
static int ring_advance(windowed *w, uint64_t to, uint32_t token)
{
    uint64_t current = current_period(w); /* no other thread moves it now */
    uint64_t pending = rotation_pending(w);
    if (pending > to)
        to = pending;
    if (to <= current)
        return SBLOOM_OK;
    __atomic_store_n(w->rotating, to, __ATOMIC_RELEASE);
    /* periods current + 1 .. to begin; only the last G + 1 of them can hold keys (counted down,
     * so that a clock at UINT64_MAX cannot wrap the loop) */
    uint64_t begin = to - current < w->ngens ? to - current : w->ngens;
    for (uint64_t left = begin; left > 0; left--) {
        uint64_t q = to - (left - 1);
        int rc = sbloom_ring_clear(w, (uint32_t)(q % w->ngens), token);
        if (rc != SBLOOM_OK)
            return rc;
        __atomic_store_n(&w->started[q % w->ngens], q, __ATOMIC_RELEASE);
        sbloom_fault_point(SBLOOM_FAULT_ROTATION);
    }
    __atomic_store_n(w->current, to, __ATOMIC_RELEASE); /* cleared first, then published */
    __atomic_store_n(w->rotating, 0, __ATOMIC_RELEASE);
    return SBLOOM_OK;
}

int sbloom_windowed_advance(sbloom_t *f, uint64_t now)
{
    windowed *w = state_of(f);
    uint64_t to = now / w->period;
    if (to <= current_period(w) && !rotation_pending(w))
        return SBLOOM_OK; /* the same period, or a clock that went back: nothing to forget */
    uint32_t token = sbloom_lock_token(&w->table.self);
    int rc = w->table.words ? sbloom_lock_word(w->advancing, token, &w->table.self) : SBLOOM_OK;
    if (rc != SBLOOM_OK)
        return rc;
    rc = ring_advance(w, to, token); /* (another thread may have moved the clock: then nothing) */
    if (w->table.words)
        sbloom_unlock_word(w->advancing);
    if (rc != SBLOOM_OK)
        return rc;
    /* a growing window's older rings: cleared alike, and freed once every generation that took
     * keys has been cleared (a generation with no keys has no bits: keys are written only when
     * new, and each new key is counted) */
    for (windowed **link = &w->older; *link;) {
        windowed *r = *link;
        ring_advance(r, current_period(w), token); /* (one writer: no lock to wait for) */
        if (sbloom_ring_items(r) == 0) {
            *link = r->older;
            r->older = NULL;
            sbloom_ring_free(r);
        } else {
            link = &r->older;
        }
    }
    return SBLOOM_OK;
}

/* The ring's clock moved back to period `to` (earlier than its own): every key it holds becomes a
 * key of that period, held a whole window from it. */
static void ring_rewind(windowed *w, uint64_t to)
{
    uint32_t slot = (uint32_t)(to % w->ngens);
    uint64_t items = sbloom_ring_items(w);
    sbloom_ring_merge_into(w, slot);
    for (uint32_t i = 0; i < w->ngens; i++) {
        w->items[i] = i == slot ? items : 0;
        w->started[i] = i == slot ? to : NOT_STARTED;
    }
    __atomic_store_n(w->current, to, __ATOMIC_RELEASE);
    __atomic_store_n(w->rotating, 0, __ATOMIC_RELEASE);
}

int sbloom_windowed_rewind(sbloom_t *f, uint64_t now)
{
    windowed *w = state_of(f);
    uint64_t to = now / w->period;
    if (w->table.words)
        return sbloom_fail_with(SBLOOM_E_INVALID, "a windowed filter in concurrent mode is not "
                                                  "rewound: its other writers would not see it");
    if (to >= current_period(w))
        return SBLOOM_OK; /* not ahead of now: nothing to do */
    for (windowed *r = w; r; r = r->older)
        ring_rewind(r, to);
    return SBLOOM_OK;
}

int sbloom_windowed_set_concurrent(sbloom_t *f, int on)
{
    windowed *w = state_of(f);
    if (w->across)
        return on ? SBLOOM_OK : SBLOOM_E_INVALID; /* a concurrent mapping stays concurrent */
    if (on && w->growing)
        return sbloom_fail_with(SBLOOM_E_LAYOUT, "a growing windowed filter takes one writer at "
                                                 "a time: plan one (n keys a window) for many");
    return sbloom_ring_lock(w, on);
}

uint64_t sbloom_windowed_locks_held(const sbloom_t *f)
{
    return sbloom_ring_locks_held(state_of(f));
}

int sbloom_windowed_is_concurrent(const sbloom_t *f)
{
    return state_of(f)->table.words != NULL;
}

/* Generation i, oldest first: the one of period current - G + i. */
static uint32_t slot_of(const windowed *w, uint32_t i)
{
    return (uint32_t)((current_period(w) + 1 + i) % w->ngens);
}

/* The window, each generation's keys summed over the rings (they share the clock: a generation
 * begun in any ring began in the same period there; a newer ring has not begun those before it). */
void sbloom_windowed_describe(const sbloom_t *f, sbloom_window *out)
{
    const windowed *w = state_of(f);
    out->periods = w->periods;
    out->generations = w->ngens;
    out->period = w->period;
    out->now = current_period(w) * w->period;
    for (uint32_t i = 0; i < MAX_GENERATIONS; i++) {
        uint32_t slot = i < w->ngens ? slot_of(w, i) : 0;
        uint64_t began = NOT_STARTED, items = 0;
        for (const windowed *r = w; i < w->ngens && r; r = r->older) {
            began = r->started[slot] != NOT_STARTED ? r->started[slot] : began;
            items += r->items[slot];
        }
        out->generation_start[i] = began != NOT_STARTED ? began * w->period : NOT_STARTED;
        out->generation_items[i] = items;
    }
}

int sbloom_windowed_growing(const sbloom_t *f)
{
    return state_of(f)->growing;
}

/* Every ring's generations, oldest ring first. */
static uint32_t windowed_cores(const sbloom_t *f)
{
    const windowed *w = state_of(f);
    return ages_form(w) ? 0 : w->ngens * sbloom_ring_count(w); /* (ages: no generation's own) */
}

/* Generation i (oldest first, ring by ring) as a part of its own: a copy of its lines as they are
 * now, kept for sbloom_stage's views (each stays at its address) until the filter is freed. NULL
 * without memory for it. */
static const sbloom_part *windowed_core_at(const sbloom_t *f, uint32_t i)
{
    windowed *w = sbloom_ring_at(state_of(f), i / state_of(f)->ngens);
    uint32_t slot = slot_of(w, i % w->ngens);
    sbloom_part *view = &w->views[slot];
    if (!view->core.blocks && sbloom_ring_generation_core(w, &view->core) != SBLOOM_OK)
        return NULL;
    sbloom_ring_gather(w, slot, &view->core);
    view->items = w->items[slot];
    view->planned_items = generation_items(w->plan_items, w->periods);
    view->planned_fpp = generation_rate(w->plan_fpp, w->periods);
    return view;
}

/* The ages form's rings (their lines but the spill lines); none in the ring of Bloom
 * generations, whose keys each read one line. */
static void windowed_second_line(const sbloom_t *f, double *absent_lookups, double *spare_keys)
{
    sbloom_second_line_sum sum = sbloom_second_line_none();
    for (const windowed *r = state_of(f); r; r = r->older)
        if (ages_form(r)) {
            sbloom_core entries = sbloom_ring_entries(r);
            sbloom_second_line_add(&sum, &entries, sbloom_ring_items(r));
        }
    sbloom_second_line_shares_of(&sum, absent_lookups, spare_keys);
}

static uint64_t windowed_items(const sbloom_t *f)
{
    uint64_t sum = 0;
    for (const windowed *r = state_of(f); r; r = r->older)
        sum += sbloom_ring_items(r);
    return sum;
}

static uint64_t windowed_bytes(const sbloom_t *f)
{
    uint64_t sum = 0;
    for (const windowed *r = state_of(f); r; r = r->older)
        sum += r->lines.bytes;
    return sum;
}

static uint64_t windowed_capacity(const sbloom_t *f)
{
    return state_of(f)->plan_items; /* keys per window (the newest ring's, growing) */
}

/* Keys [0, n) (n <= SBLOOM_PART_STEP) held by a ring older than the newest: held[j]. */
static void probe_older(const sbloom_t *f, const windowed *w, const uint64_t *hashes, size_t n,
                        uint8_t *held)
{
    uint8_t answer[SBLOOM_PART_STEP];
    memset(held, 0, n);
    for (const windowed *r = w->older; r; r = r->older) {
        sbloom_ring_pass(f, r, 0, SBLOOM_OP_CONTAINS, hashes, n, answer);
        for (size_t j = 0; j < n; j++)
            held[j] |= answer[j];
    }
}

/* One step of a growing window's batch (n <= SBLOOM_PART_STEP): lookups ask every ring; a key no
 * older ring holds goes through the newest ring's fused pass, the others are not new. */
static uint64_t growing_step(const sbloom_t *f, windowed *w, sbloom_batch_op op,
                             const uint64_t *hashes, size_t n, uint8_t *results)
{
    uint8_t held[SBLOOM_PART_STEP], answer[SBLOOM_PART_STEP];
    uint64_t absent[SBLOOM_PART_STEP];
    size_t where[SBLOOM_PART_STEP], m = 0;
    uint32_t slot = current_slot(w);
    probe_older(f, w, hashes, n, held);
    if (op == SBLOOM_OP_CONTAINS) {
        uint64_t found = 0;
        sbloom_ring_pass(f, w, slot, op, hashes, n, answer);
        for (size_t j = 0; j < n; j++)
            found += answer[j] |= held[j];
        if (results)
            memcpy(results, answer, n);
        return found;
    }
    for (size_t j = 0; j < n; j++)
        if (!held[j]) {
            absent[m] = hashes[j];
            where[m++] = j;
        }
    uint64_t fresh = sbloom_ring_pass(f, w, slot, op, absent, m, answer);
    w->items[slot] += fresh;
    if (results) {
        memset(results, 0, n);
        for (size_t j = 0; j < m; j++)
            results[where[j]] = answer[j];
    }
    return fresh;
}

/* A growing window's batch, in steps: before each, a full newest ring gives way to a larger
 * one, and a step takes no more keys than the newest ring's current generation has room for. */
static uint64_t growing_run(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                            uint8_t *results)
{
    uint64_t count = 0;
    for (size_t at = 0; at < n;) {
        size_t len = n - at < SBLOOM_PART_STEP ? n - at : SBLOOM_PART_STEP;
        if (op != SBLOOM_OP_CONTAINS) {
            if (ring_full(state_of(f)))
                grow(f);
            const windowed *w = state_of(f);
            uint64_t share = generation_items(w->plan_items, w->periods);
            uint64_t have = w->items[current_slot(w)];
            if (share > have && share - have < len)
                len = (size_t)(share - have);
        }
        count += growing_step(f, state_of(f), op, hashes + at, len, results ? results + at : NULL);
        at += len;
    }
    return count;
}

/* One fused pass: a key new to the window (no live generation holds it) goes to the current one. */
static uint64_t windowed_run(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                             uint8_t *results)
{
    windowed *w = state_of(f);
    if (w->growing)
        return growing_run(f, op, hashes, n, results);
    uint32_t slot = current_slot(w);
    uint64_t count = w->table.words ? sbloom_ring_run_locked(f, w, slot, op, hashes, n, results)
                                    : sbloom_ring_pass(f, w, slot, op, hashes, n, results);
    if (op != SBLOOM_OP_CONTAINS)
        __atomic_fetch_add(&w->items[slot], count, __ATOMIC_RELAXED);
    return count;
}

static int windowed_add_one(sbloom_t *f, uint64_t hash)
{
    uint8_t is_new;
    return (int)windowed_run(f, SBLOOM_OP_INSERT, &hash, 1, &is_new);
}

static int windowed_contains_one(const sbloom_t *f, uint64_t hash)
{
    windowed *w = state_of(f);
    if (w->older)
        return (int)growing_step(f, w, SBLOOM_OP_CONTAINS, &hash, 1, NULL);
    if (w->table.words)
        return (int)sbloom_ring_run_locked(f, w, 0, SBLOOM_OP_CONTAINS, &hash, 1, NULL);
    return (int)sbloom_ring_pass(f, w, 0, SBLOOM_OP_CONTAINS, &hash, 1, NULL);
}

/* The ages form's statistics: the fingerprint filter's, its rate from the bits an age leaves
 * (each entry matches an absent key 2^age_bits times as often as a plain entry of r bits). */
static int ages_stats(const windowed *w, int sampled, sbloom_stats *out)
{
    sbloom_core entries = sbloom_ring_entries(w);
    sbloom_core_stats(&entries, sampled, out);
    out->estimated_fpp = fmin(1.0, ldexp(out->estimated_fpp, (int)w->age_bits));
    return SBLOOM_OK;
}

/* Each generation gathered in turn into one buffer (a generation's size), its statistics added. */
static int windowed_stats(const sbloom_t *f, int sampled, sbloom_stats *out)
{
    sbloom_parts_tally tally = {0};
    if (ages_form(state_of(f)))
        return ages_stats(state_of(f), sampled, out);
    for (const windowed *w = state_of(f); w; w = w->older) {
        sbloom_core one;
        int rc = sbloom_ring_generation_core(w, &one);
        if (rc != SBLOOM_OK)
            return rc;
        for (uint32_t slot = 0; slot < w->ngens; slot++) {
            sbloom_ring_gather(w, slot, &one);
            sbloom_parts_tally_add(&tally, &one, sampled);
        }
        sbloom_core_release(&one);
    }
    sbloom_parts_tally_end(&tally, out);
    return SBLOOM_OK;
}

/* A heap copy of a ring and the rings before it (NULL without memory). */
static windowed *ring_copy(const windowed *from)
{
    windowed *to = sbloom_ring_alloc(from->plan_items, from->plan_fpp, from->periods, from->period,
                                     current_period(from));
    if (!to)
        return NULL;
    if (sbloom_core_copy(&to->lines, &from->lines) != SBLOOM_OK ||
        (from->older && !(to->older = ring_copy(from->older)))) {
        sbloom_ring_free(to);
        return NULL;
    }
    to->ngroups = from->ngroups;
    to->per_group = from->per_group;
    to->age_bits = from->age_bits;
    to->growing = from->growing;
    to->step = from->step;
    for (uint32_t i = 0; i < from->ngens; i++) {
        to->items[i] = __atomic_load_n(&from->items[i], __ATOMIC_RELAXED);
        to->started[i] = from->started[i];
    }
    return to;
}

static int windowed_clone(sbloom_t **out, const sbloom_t *f)
{
    windowed *w = ring_copy(state_of(f));
    if (!w)
        return SBLOOM_E_NOMEM;
    sbloom_t *copy = NULL;
    int rc = object_over(&copy, w, f->planned_items, f->planned_fpp);
    if (rc != SBLOOM_OK) {
        sbloom_ring_free(w);
        return rc;
    }
    copy->isa = f->isa;
    copy->threads = f->threads;
    *out = copy;
    return SBLOOM_OK;
}

/* Every key forgotten: the older rings freed, the newest emptied (a growing window keeps the size
 * it grew to). */
static void windowed_clear(sbloom_t *f)
{
    windowed *w = state_of(f);
    sbloom_ring_free(w->older);
    w->older = NULL;
    memset(w->lines.blocks, 0, (size_t)w->lines.bytes);
    for (uint32_t i = 0; i < w->ngens; i++) {
        w->items[i] = 0;
        w->started[i] = NOT_STARTED;
    }
    w->started[current_slot(w)] = *w->current;
}

/* 1 when two windows have rings alike, ring by ring (plan, step, geometry) at the same period. */
static int rings_alike(const windowed *d, const windowed *s)
{
    for (; d && s; d = d->older, s = s->older)
        if (d->plan_items != s->plan_items || d->plan_fpp != s->plan_fpp || d->step != s->step ||
            d->periods != s->periods || d->period != s->period ||
            current_period(d) != current_period(s) || d->lines.bytes != s->lines.bytes ||
            d->lines.layout != s->lines.layout)
            return 0;
    return !d && !s;
}

/* d |= s line by line; each generation's count estimated from its fill (at least 1 where either
 * had keys: an older ring with no keys is freed, so one with bits must count some). */
static int ring_union(windowed *d, const windowed *s)
{
    sbloom_core one;
    int rc = sbloom_ring_generation_core(d, &one);
    if (rc != SBLOOM_OK)
        return rc;
    sbloom_core_combine(&d->lines, &s->lines, 0);
    for (uint32_t i = 0; i < d->ngens; i++) {
        sbloom_ring_gather(d, i, &one);
        uint64_t estimate = sbloom_core_estimated_items(&one);
        int had = d->items[i] || s->items[i];
        d->items[i] = estimate ? estimate : (uint64_t)had;
        d->started[i] = d->started[i] < s->started[i] ? d->started[i] : s->started[i];
    }
    sbloom_core_release(&one);
    return SBLOOM_OK;
}

/* Line by line, when both have the same plan and window, stand at the same period (advance both
 * to one time first) and (growing) grew alike, ring by ring: a key of either is then in the same
 * generation of the same ring of the union, which began when the earlier of the two did. */
static int windowed_combine(sbloom_t *dst, const sbloom_t *src, int intersect)
{
    if (intersect)
        return SBLOOM_E_LAYOUT;
    if (src->mode != &sbloom_mode_windowed)
        return SBLOOM_E_INCOMPATIBLE;
    windowed *d = state_of(dst);
    const windowed *s = state_of(src);
    if (ages_form(d) || ages_form(s))
        return sbloom_fail_with(SBLOOM_E_LAYOUT, "a fingerprint window has no union: its entries "
                                                 "keep part of each key, not its bits");
    if (dst->planned_items != src->planned_items || dst->planned_fpp != src->planned_fpp ||
        d->growing != s->growing || !rings_alike(d, s))
        return SBLOOM_E_INCOMPATIBLE;
    int rc = SBLOOM_OK;
    for (; rc == SBLOOM_OK && d; d = d->older, s = s->older)
        rc = ring_union(d, s);
    return rc;
}

/* ---- The file form (windowed_file.c), through the mode ---- */

static uint64_t windowed_image_bytes(const sbloom_t *f)
{
    return sbloom_ring_image_bytes(state_of(f));
}

static int windowed_write_image(const sbloom_t *f, uint8_t *out)
{
    return sbloom_ring_write_image(state_of(f), f->planned_items, f->planned_fpp, out);
}

static int windowed_sync(sbloom_t *f)
{
    return f->readonly ? SBLOOM_OK : sbloom_ring_sync(state_of(f));
}

int sbloom_windowed_from_payload(sbloom_t **out, const sbloom_header *h, const uint8_t *payload)
{
    windowed *w;
    int rc = sbloom_ring_read(&w, h, payload);
    if (rc == SBLOOM_OK)
        ring_advance(w, 0, 1); /* a rotation the file's writer did not finish, finished here */
    if (rc == SBLOOM_OK &&
        (rc = object_over(out, w, h->planned_items, h->planned_fpp)) != SBLOOM_OK)
        sbloom_ring_free(w);
    return rc;
}

int sbloom_windowed_map(sbloom_t **out, uint8_t *base, uint64_t size, const sbloom_header *h,
                        int writable)
{
    *out = NULL;
    windowed *w;
    int rc = sbloom_ring_map(&w, base, size, h);
    if (rc == SBLOOM_OK &&
        (rc = object_over(out, w, h->planned_items, h->planned_fpp)) != SBLOOM_OK)
        sbloom_ring_free(w);
    if (rc == SBLOOM_OK)
        (*out)->readonly = !writable;
    return rc;
}

int sbloom_windowed_share(sbloom_t *f, const char *path)
{
    if (ages_form(state_of(f)))
        return sbloom_fail_with(SBLOOM_E_LAYOUT, "a fingerprint window is not shared between "
                                                 "processes: map it with one writer");
    return sbloom_ring_share_locks(state_of(f), path);
}

const sbloom_mode sbloom_mode_windowed = {
    .name = "windowed",
    .reports_as = SBLOOM_LAYOUT_WINDOWED,
    .has_core = 0,
    .takes_inline = 0,
    .run = windowed_run,
    .add_one = windowed_add_one,
    .contains_one = windowed_contains_one,
    .items = windowed_items,
    .bytes = windowed_bytes,
    .capacity = windowed_capacity,
    .clone = windowed_clone,
    .clear = windowed_clear,
    .stats = windowed_stats,
    .combine = windowed_combine,
    .image_bytes = windowed_image_bytes,
    .write_image = windowed_write_image,
    .release = windowed_release,
    .cores = windowed_cores,
    .core_at = windowed_core_at,
    .second_line = windowed_second_line,
    .sync = windowed_sync,
};
