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
 * File form (docs/FORMAT.md): the header with layout 6, a 192-byte window record (periods,
 * period, current period, each generation's first period; with one image, each generation's keys
 * and the form byte), then for G <= 3 the lines as one image, exactly as they lie in memory, so
 * that a file mapping (sbloom_map) uses the record's clock and counts and the lines in place, and
 * processes mapping it concurrently share them (the locks in PATH.lock); for more periods each
 * generation's complete image in ring order (gathered from the lines, spread back when read).
 */
#define _POSIX_C_SOURCE 200809L /* getpid, msync in -std=c11 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../base/alloc.h"
#include "../base/endian.h"
#include "../base/hash.h"
#include "../os/os.h"
#include "modes.h"
#include "parts.h"

#define MAX_GENERATIONS (SBLOOM_WINDOW_MAX_PERIODS + 1)
#define RECORD_BYTES 192
#define NOT_STARTED UINT64_MAX
static const uint8_t record_magic[8] = {'S', 'B', 'W', 'I', 'N', 'D', 'O', 'W'};

/* The record's fields (docs/FORMAT.md), at their offsets in the record. */
#define RECORD_CURRENT_AT 24
#define RECORD_STARTS_AT 32
#define RECORD_FORM_AT                                                                             \
    184 /* 1: the lines as one image (G <= 3), 0: an image per generation,                         \
         * FORM_RINGS: a growing window's rings, each a whole windowed image */
#define FORM_RINGS 2

typedef struct windowed {
    sbloom_core lines;       /* ngroups groups of per_group lines (the comment above) */
    uint64_t ngroups;        /* blocks per generation */
    uint32_t per_group;      /* lines a group: ngens (adjacent lines), 1 (slots) */
    uint32_t periods, ngens; /* G, G + 1 */
    uint64_t period;         /* P, in the caller's unit */
    /* The clock and the counts: the filter's own words (own), or in a file mapping the window
     * record's, which every process mapping the file shares. */
    uint64_t *current; /* the current period's number: now / P */
    uint64_t *started; /* per generation (ring slot): the period it began in, or NOT_STARTED */
    uint64_t *items;   /* per generation: the keys it took */
    uint64_t own[1 + 2 * MAX_GENERATIONS];
    sbloom_part views[MAX_GENERATIONS]; /* copies of generations for sbloom_stage, on demand */
    /* Many threads (or processes): SBLOOM_STRIPES stripe locks, each over per_stripe adjacent
     * groups, and the lock of the thread moving the clock; in the heap, or in PATH.lock */
    uint32_t *locks;
    uint64_t per_stripe;
    uint32_t *advancing;
    uint32_t own_advancing;
    uint32_t token; /* a lock holder's: 1, or across processes the process ID */
    int across;     /* the locks are shared between processes */
    void *lock_map; /* the PATH.lock mapping, or NULL */
    uint8_t *image; /* a file mapping's bytes, header first, or NULL */
    /* This ring's plan: keys a window and the rate (the filter's, unless it grows) */
    uint64_t plan_items;
    double plan_fpp;
    /* A growing window (sbloom_create_windowed_scalable; "Growing" below): this ring's step
     * (planned for first * 2^step keys a window at p / 2^(step + 1)) and the ring before this one
     * (NULL: none) */
    int growing;
    uint32_t step;
    struct windowed *older;
} windowed;

static windowed *state_of(const sbloom_t *f)
{
    return f->state;
}

/* Each generation's plan: n / G keys (rounded up) at p / (G + 1). */
static uint64_t generation_items(uint64_t n, uint32_t periods)
{
    return n / periods + (n % periods != 0);
}

static double generation_rate(double p, uint32_t periods)
{
    return p / (double)(periods + 1);
}

/* The current period (another thread may be moving it: read atomically). */
static uint64_t current_period(const windowed *w)
{
    return __atomic_load_n(w->current, __ATOMIC_ACQUIRE);
}

static uint32_t current_slot(const windowed *w)
{
    return (uint32_t)(current_period(w) % w->ngens);
}

/* Generation slots hold at most 4 generations (a 4-bit bitmap each); 3 periods at most. */
#define SLOT_GENERATIONS 4
#define SLOT_BIT0 UINT64_C(0x1111111111111111) /* bit 0 of every 4-bit slot */

static int slots_form(const windowed *w)
{
    return w->lines.layout == SBLOOM_LAYOUT_COUNTING512;
}

/* ---- Generations in the lines: gathered into a core of their own, spread back, cleared ---- */

static char *line_of(const windowed *w, uint64_t block, uint32_t slot)
{
    return (char *)w->lines.blocks + (block * w->ngens + slot) * 64;
}

static uint64_t *words_of(const windowed *w)
{
    return w->lines.blocks;
}

/* A heap core of one generation's geometry, no keys. */
static int generation_core(const windowed *w, sbloom_core *out)
{
    return sbloom_core_init(out, w->ngroups * 64, w->lines.layout, SBLOOM_OWNER_HEAP);
}

/* Generation `slot` as a filter of its own: its lines (adjacent lines), or its bit of every slot
 * as a counter of 0 or 1 (slots: a counting filter that answers as the generation does). */
static void gather(const windowed *w, uint32_t slot, sbloom_core *into)
{
    if (slots_form(w)) {
        const uint64_t *from = words_of(w);
        uint64_t *to = into->blocks;
        for (uint64_t i = 0; i < w->ngroups * 8; i++)
            to[i] = (from[i] >> slot) & SLOT_BIT0;
        return;
    }
    for (uint64_t b = 0; b < w->ngroups; b++)
        memcpy((char *)into->blocks + b * 64, line_of(w, b, slot), 64);
}

/* The reverse (a generation read from a file with adjacent lines). */
static void spread(windowed *w, uint32_t slot, const sbloom_core *from)
{
    for (uint64_t b = 0; b < w->ngroups; b++)
        memcpy(line_of(w, b, slot), (const char *)from->blocks + b * 64, 64);
}

/* Generation `slot` emptied in groups [from, to): its lines zeroed, or its bit cleared in every
 * slot. */
static void clear_groups(windowed *w, uint32_t slot, uint64_t from, uint64_t to)
{
    if (slots_form(w)) {
        uint64_t *restrict words = words_of(w) + from * 8;
        const uint64_t keep = ~(SLOT_BIT0 << slot), count = (to - from) * 8;
        for (uint64_t i = 0; i < count; i++) /* locals only: the compiler vectorizes it */
            words[i] &= keep;
    } else {
        for (uint64_t b = from; b < to; b++)
            memset(line_of(w, b, slot), 0, 64);
    }
}

/* Generation `slot` emptied; with many threads, stripe by stripe under each stripe's lock. */
static void clear_slot(windowed *w, uint32_t slot)
{
    if (!w->locks) {
        clear_groups(w, slot, 0, w->ngroups);
    } else {
        for (uint64_t from = 0; from < w->ngroups; from += w->per_stripe) {
            uint32_t *lock = w->locks + from / w->per_stripe;
            uint64_t to = w->ngroups - from < w->per_stripe ? w->ngroups : from + w->per_stripe;
            sbloom_stripe_lock(lock, w->token, w->across);
            clear_groups(w, slot, from, to);
            sbloom_stripe_unlock(lock);
        }
    }
    __atomic_store_n(&w->items[slot], 0, __ATOMIC_RELAXED);
}

static int windowed_sync(sbloom_t *f);

/* A ring's memory: its lines, its views, its locks; then the ring itself and those before it. */
static void ring_free(windowed *w)
{
    while (w) {
        windowed *older = w->older;
        sbloom_core_release(&w->lines);
        if (w->lock_map)
            munmap(w->lock_map, SBLOOM_LOCK_FILE_BYTES);
        else
            free(w->locks);
        for (uint32_t i = 0; i < MAX_GENERATIONS; i++)
            sbloom_core_release(&w->views[i].core);
        free(w);
        w = older;
    }
}

static void windowed_release(sbloom_t *f)
{
    windowed *w = state_of(f);
    /* a file mapping first (synced, then unmapped), then the locks others may wait on */
    if (w && w->image && !f->readonly && !w->across)
        windowed_sync(f);
    ring_free(w);
    f->state = NULL;
}

/* A ring of the window with its plan and clock, no memory yet (NULL without memory). */
static windowed *ring_alloc(uint64_t n, double p, uint32_t periods, uint64_t period,
                            uint64_t current)
{
    windowed *w = sbloom_calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->periods = periods;
    w->ngens = periods + 1;
    w->period = period;
    w->plan_items = n;
    w->plan_fpp = p;
    w->current = w->own;
    w->started = w->own + 1;
    w->items = w->own + 1 + MAX_GENERATIONS;
    *w->current = current;
    w->advancing = &w->own_advancing;
    w->token = 1;
    for (uint32_t i = 0; i < MAX_GENERATIONS; i++) {
        w->started[i] = NOT_STARTED;
        w->views[i].core.owner = SBLOOM_OWNER_CALLER; /* empty: nothing to release */
    }
    w->lines.owner = SBLOOM_OWNER_CALLER;
    return w;
}

/* An object over a ring (the newest); the filter's plan is n, p. */
static int object_over(sbloom_t **out, windowed *w, uint64_t n, double p)
{
    sbloom_t *f;
    int rc = sbloom_object_new(&f, &sbloom_mode_windowed, SBLOOM_LAYOUT_WINDOWED);
    if (rc != SBLOOM_OK)
        return rc;
    f->state = w;
    f->counting = SBLOOM_COUNT_NONE; /* each generation counts the keys it took */
    f->planned_items = n;
    f->planned_fpp = p;
    f->isa = w->lines.blocks ? w->lines.isa : f->isa;
    *out = f;
    return SBLOOM_OK;
}

/* The lines for ngroups blocks a generation, zeroed: of the counting layout, generation slots
 * (one line a group); of a 512-bit layout, adjacent lines (G + 1 lines a group). */
static int make_lines(windowed *w, uint64_t ngroups, sbloom_layout layout)
{
    uint32_t per_group = layout == SBLOOM_LAYOUT_COUNTING512 ? 1 : w->ngens;
    if (ngroups > UINT32_MAX || ngroups > SBLOOM_MAX_BYTES / 64 / per_group)
        return SBLOOM_E_TOO_LARGE;
    int rc = sbloom_core_init(&w->lines, ngroups * per_group * 64, layout, SBLOOM_OWNER_HEAP);
    if (rc != SBLOOM_OK)
        return rc;
    w->ngroups = ngroups;
    w->per_group = per_group;
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
        sbloom_plan_for_layout(per, rate, SBLOOM_LAYOUT_COUNTING512, &slots) != SBLOOM_OK)
        return 0;
    return (double)slots.bytes <= 1.25 * (double)lines->bytes * ngens;
}

/* A new ring for its plan, the current period's generation begun (NULL: *rc says why). */
static windowed *ring_new(uint64_t n, double p, uint32_t periods, uint64_t period, uint64_t current,
                          int *rc)
{
    windowed *w = ring_alloc(n, p, periods, period, current);
    if (!w) {
        *rc = SBLOOM_E_NOMEM;
        return NULL;
    }
    sbloom_plan plan = sbloom_plan_init();
    uint64_t per = generation_items(n, periods);
    double rate = generation_rate(p, periods);
    *rc = sbloom_plan_block512(per, rate, &plan);
    if (*rc == SBLOOM_OK && slots_pay(&plan, per, rate, periods + 1))
        *rc = sbloom_plan_for_layout(per, rate, SBLOOM_LAYOUT_COUNTING512, &plan);
    if (*rc == SBLOOM_OK)
        *rc = make_lines(w, plan.bytes / 64, plan.layout);
    if (*rc != SBLOOM_OK) {
        ring_free(w);
        return NULL;
    }
    w->started[current_slot(w)] = current;
    return w;
}

int sbloom_windowed_new(sbloom_t **out, uint64_t n, double p, uint32_t periods, uint64_t period,
                        uint64_t now)
{
    int rc;
    windowed *w = ring_new(n, p, periods, period, now / period, &rc);
    if (w && (rc = object_over(out, w, n, p)) != SBLOOM_OK)
        ring_free(w);
    return rc;
}

static uint64_t ring_items(const windowed *w);

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

#define GROWTH_STEPS 40 /* as the scalable filter's stages: first * 2^40 keys at most */

static uint64_t ring_items_for(uint64_t first, uint32_t step)
{
    return step < 64 && first <= (UINT64_MAX >> step) ? first << step : UINT64_MAX;
}

static double ring_rate_for(double p, uint32_t step)
{
    return ldexp(p, -(int)step - 1);
}

int sbloom_windowed_new_growing(sbloom_t **out, uint64_t first, double p, uint32_t periods,
                                uint64_t period, uint64_t now)
{
    int rc;
    windowed *w =
        ring_new(ring_items_for(first, 0), ring_rate_for(p, 0), periods, period, now / period, &rc);
    if (!w)
        return rc;
    w->growing = 1;
    if ((rc = object_over(out, w, first, p)) != SBLOOM_OK)
        ring_free(w);
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
                 w->periods, w->period, current_period(w), &rc);
    if (!next)
        return;
    next->growing = 1;
    next->step = step;
    next->older = w;
    f->state = next;
    f->isa = next->lines.isa;
}
/* The ring's clock moved to period `to` (later than its own): the generations of the periods that
 * begin cleared, then the period published. */
static void ring_advance(windowed *w, uint64_t to)
{
    uint64_t current = current_period(w); /* no other thread moves it now */
    /* periods current + 1 .. to begin; only the last G + 1 of them can hold keys */
    uint64_t from = to - current > w->ngens ? to - w->ngens + 1 : current + 1;
    for (uint64_t q = from; q <= to; q++) {
        clear_slot(w, (uint32_t)(q % w->ngens));
        w->started[q % w->ngens] = q;
    }
    __atomic_store_n(w->current, to, __ATOMIC_RELEASE); /* cleared first, then published */
}

int sbloom_windowed_advance(sbloom_t *f, uint64_t now)
{
    windowed *w = state_of(f);
    uint64_t to = now / w->period;
    if (to <= current_period(w))
        return SBLOOM_OK; /* the same period, or a clock that went back: nothing to forget */
    if (w->locks)
        sbloom_stripe_lock(w->advancing, w->token, w->across);
    if (to > current_period(w))
        ring_advance(w, to);
    if (w->locks)
        sbloom_stripe_unlock(w->advancing);
    /* a growing window's older rings: cleared alike, and freed once every generation that took
     * keys has been cleared (a generation with no keys has no bits: keys are written only when
     * new, and each new key is counted) */
    for (windowed **link = &w->older; *link;) {
        windowed *r = *link;
        ring_advance(r, to);
        if (ring_items(r) == 0) {
            *link = r->older;
            r->older = NULL;
            ring_free(r);
        } else {
            link = &r->older;
        }
    }
    return SBLOOM_OK;
}

int sbloom_windowed_set_concurrent(sbloom_t *f, int on)
{
    windowed *w = state_of(f);
    if (w->across)
        return on ? SBLOOM_OK : SBLOOM_E_INVALID; /* a concurrent mapping stays concurrent */
    if (!on) {
        free(w->locks);
        w->locks = NULL;
        return SBLOOM_OK;
    }
    if (w->growing)
        return sbloom_fail_with(SBLOOM_E_LAYOUT, "a growing windowed filter takes one writer at "
                                                 "a time: plan one (n keys a window) for many");
    if (w->locks)
        return SBLOOM_OK;
    w->locks = sbloom_calloc(SBLOOM_STRIPES, sizeof *w->locks);
    if (!w->locks)
        return SBLOOM_E_NOMEM;
    w->per_stripe = w->ngroups / SBLOOM_STRIPES + (w->ngroups % SBLOOM_STRIPES != 0);
    return SBLOOM_OK;
}

int sbloom_windowed_is_concurrent(const sbloom_t *f)
{
    return state_of(f)->locks != NULL;
}

/* Generation i, oldest first: the one of period current - G + i. */
static uint32_t slot_of(const windowed *w, uint32_t i)
{
    return (uint32_t)((current_period(w) + 1 + i) % w->ngens);
}

/* The rings of a growing window (1 for a planned one), and ring k of them, oldest first. */
static uint32_t ring_count(const windowed *w)
{
    uint32_t n = 0;
    for (; w; w = w->older)
        n++;
    return n;
}

static windowed *ring_at(const windowed *w, uint32_t k)
{
    for (uint32_t i = ring_count(w) - 1; i > k; i--)
        w = w->older;
    return (windowed *)w;
}

/* A ring's keys: its generations' counts. */
static uint64_t ring_items(const windowed *w)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < w->ngens; i++)
        sum += __atomic_load_n(&w->items[i], __ATOMIC_RELAXED);
    return sum;
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
    return w->ngens * ring_count(w);
}

/* Generation i (oldest first, ring by ring) as a part of its own: a copy of its lines as they are
 * now, kept for sbloom_stage's views (each stays at its address) until the filter is freed. NULL
 * without memory for it. */
static const sbloom_part *windowed_core_at(const sbloom_t *f, uint32_t i)
{
    windowed *w = ring_at(state_of(f), i / state_of(f)->ngens);
    uint32_t slot = slot_of(w, i % w->ngens);
    sbloom_part *view = &w->views[slot];
    if (!view->core.blocks && generation_core(w, &view->core) != SBLOOM_OK)
        return NULL;
    gather(w, slot, &view->core);
    view->items = w->items[slot];
    view->planned_items = generation_items(w->plan_items, w->periods);
    view->planned_fpp = generation_rate(w->plan_fpp, w->periods);
    return view;
}

static uint64_t windowed_items(const sbloom_t *f)
{
    uint64_t sum = 0;
    for (const windowed *r = state_of(f); r; r = r->older)
        sum += ring_items(r);
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

/* Keys ahead whose group is requested while one key is tested under its stripe's lock. */
#define LOCKED_AHEAD 8

static void prefetch_group(const windowed *w, uint64_t group)
{
    for (uint32_t g = 0; g < w->per_group; g++)
        __builtin_prefetch(line_of(w, group, g), 1, 3);
}

#define TRANSACTION_TRIES 4

/* Keys [0, n) (at most SBK_TRANSACTION_KEYS) in one hardware transaction, retried: their count,
 * or -1 (not done: the locked path). */
static int run_transaction(windowed *w, uint32_t slot, sbloom_batch_op op, const uint64_t *hashes,
                           size_t n, uint8_t *results)
{
    const sbloom_core *c = &w->lines;
    for (int tries = 0; tries < TRANSACTION_TRIES; tries++) {
        int done = c->kern->window_transaction(c->blocks, w->ngroups, w->per_group, slot,
                                               op != SBLOOM_OP_CONTAINS, hashes, n, w->locks,
                                               w->per_stripe, results);
        if (done >= 0)
            return done;
        if (done == SBK_TRANSACTION_FAILED)
            break;
    }
    return -1;
}

/* Keys [0, n) each tested (and set) under the lock of its group's stripe. */
static uint64_t run_under_locks(windowed *w, uint32_t slot, sbloom_batch_op op,
                                const uint64_t *hashes, size_t n, uint8_t *results)
{
    uint64_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + LOCKED_AHEAD < n)
            prefetch_group(w, sbk_block_index(hashes[i + LOCKED_AHEAD], w->ngroups));
        uint32_t *lock = w->locks + sbk_block_index(hashes[i], w->ngroups) / w->per_stripe;
        sbloom_stripe_lock(lock, w->token, w->across); /* the key's stripe */
        count += sbloom_core_run_groups(&w->lines, w->per_group, slot, op, hashes + i, 1,
                                        results ? results + i : NULL);
        sbloom_stripe_unlock(lock);
    }
    return count;
}

/* Many threads: each key tested (and set) by the same fused kernel under the lock of its group's
 * stripe; where the CPU has hardware transactions (src/modes/concurrent.c says how they stand
 * beside the locks), SBK_TRANSACTION_KEYS keys at a time in one instead, reading their stripes'
 * locks (a rotation holds them while it clears). A group whose transaction does not commit takes
 * the locks alone: the next group tries a transaction again (each lock taken is a write that
 * aborts the other threads' transactions which read its line). */
static uint64_t run_locked(windowed *w, uint32_t slot, sbloom_batch_op op, const uint64_t *hashes,
                           size_t n, uint8_t *results)
{
    for (size_t i = 0; i < n && i < LOCKED_AHEAD; i++)
        prefetch_group(w, sbk_block_index(hashes[i], w->ngroups));
    if (!(sbk_have_rtm() && w->lines.kern->window_transaction))
        return run_under_locks(w, slot, op, hashes, n, results);
    uint64_t count = 0;
    uint8_t scratch[SBK_TRANSACTION_KEYS];
    for (size_t at = 0; at < n; at += SBK_TRANSACTION_KEYS) {
        size_t len = n - at < SBK_TRANSACTION_KEYS ? n - at : SBK_TRANSACTION_KEYS;
        for (size_t i = at; i < at + len && i + LOCKED_AHEAD < n; i++)
            prefetch_group(w, sbk_block_index(hashes[i + LOCKED_AHEAD], w->ngroups));
        int done = run_transaction(w, slot, op, hashes + at, len, results ? results + at : scratch);
        count += done >= 0 ? (uint64_t)done
                           : run_under_locks(w, slot, op, hashes + at, len,
                                             results ? results + at : NULL);
    }
    return count;
}

/* Keys [0, n) (n <= SBLOOM_PART_STEP) held by a ring older than the newest: held[j]. */
static void probe_older(const windowed *w, const uint64_t *hashes, size_t n, uint8_t *held)
{
    uint8_t answer[SBLOOM_PART_STEP];
    memset(held, 0, n);
    for (const windowed *r = w->older; r; r = r->older) {
        sbloom_core_run_groups(&r->lines, r->per_group, 0, SBLOOM_OP_CONTAINS, hashes, n, answer);
        for (size_t j = 0; j < n; j++)
            held[j] |= answer[j];
    }
}

/* One step of a growing window's batch (n <= SBLOOM_PART_STEP): lookups ask every ring; a key no
 * older ring holds goes through the newest ring's fused pass, the others are not new. */
static uint64_t growing_step(windowed *w, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                             uint8_t *results)
{
    uint8_t held[SBLOOM_PART_STEP], answer[SBLOOM_PART_STEP];
    uint64_t absent[SBLOOM_PART_STEP];
    size_t where[SBLOOM_PART_STEP], m = 0;
    uint32_t slot = current_slot(w);
    probe_older(w, hashes, n, held);
    if (op == SBLOOM_OP_CONTAINS) {
        uint64_t found = 0;
        sbloom_core_run_groups(&w->lines, w->per_group, slot, op, hashes, n, answer);
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
    uint64_t fresh = sbloom_core_run_groups(&w->lines, w->per_group, slot, op, absent, m, answer);
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
        count += growing_step(state_of(f), op, hashes + at, len, results ? results + at : NULL);
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
    uint64_t count =
        w->locks ? run_locked(w, slot, op, hashes, n, results)
                 : sbloom_core_run_groups(&w->lines, w->per_group, slot, op, hashes, n, results);
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
        return (int)growing_step(w, SBLOOM_OP_CONTAINS, &hash, 1, NULL);
    if (w->locks)
        return (int)run_locked(w, 0, SBLOOM_OP_CONTAINS, &hash, 1, NULL);
    return (int)sbloom_core_run_groups(&w->lines, w->per_group, 0, SBLOOM_OP_CONTAINS, &hash, 1,
                                       NULL);
}

/* Each generation gathered in turn into one buffer (a generation's size), its statistics added. */
static int windowed_stats(const sbloom_t *f, int sampled, sbloom_stats *out)
{
    sbloom_parts_tally tally = {0};
    for (const windowed *w = state_of(f); w; w = w->older) {
        sbloom_core one;
        int rc = generation_core(w, &one);
        if (rc != SBLOOM_OK)
            return rc;
        for (uint32_t slot = 0; slot < w->ngens; slot++) {
            gather(w, slot, &one);
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
    windowed *to = ring_alloc(from->plan_items, from->plan_fpp, from->periods, from->period,
                              current_period(from));
    if (!to)
        return NULL;
    if (sbloom_core_copy(&to->lines, &from->lines) != SBLOOM_OK ||
        (from->older && !(to->older = ring_copy(from->older)))) {
        ring_free(to);
        return NULL;
    }
    to->ngroups = from->ngroups;
    to->per_group = from->per_group;
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
        ring_free(w);
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
    ring_free(w->older);
    w->older = NULL;
    memset(w->lines.blocks, 0, (size_t)w->lines.bytes);
    for (uint32_t i = 0; i < w->ngens; i++) {
        w->items[i] = 0;
        w->started[i] = NOT_STARTED;
    }
    w->started[current_slot(w)] = *w->current;
}

/* Line by line, when both have the same plan and window and stand at the same period (advance
 * both to one time first), and (growing) one ring each of the same step: a key of either is then
 * in the same generation of the union, which began when the earlier of the two did; each
 * generation's count is estimated from its fill. */
static int windowed_combine(sbloom_t *dst, const sbloom_t *src, int intersect)
{
    if (intersect)
        return SBLOOM_E_LAYOUT;
    if (src->mode != &sbloom_mode_windowed)
        return SBLOOM_E_INCOMPATIBLE;
    windowed *d = state_of(dst);
    const windowed *s = state_of(src);
    if (dst->planned_items != src->planned_items || dst->planned_fpp != src->planned_fpp ||
        d->plan_items != s->plan_items || d->plan_fpp != s->plan_fpp || d->older || s->older ||
        d->periods != s->periods || d->period != s->period || *d->current != *s->current ||
        d->lines.bytes != s->lines.bytes || d->lines.layout != s->lines.layout)
        return SBLOOM_E_INCOMPATIBLE;
    sbloom_core one;
    int rc = generation_core(d, &one);
    if (rc != SBLOOM_OK)
        return rc;
    sbloom_core_combine(&d->lines, &s->lines, 0);
    for (uint32_t i = 0; i < d->ngens; i++) {
        gather(d, i, &one);
        d->items[i] = sbloom_core_estimated_items(&one);
        d->started[i] = d->started[i] < s->started[i] ? d->started[i] : s->started[i];
    }
    sbloom_core_release(&one);
    return SBLOOM_OK;
}

/* ---- File form: the header, the window record, the generations' images ---- */

/* G <= 3 (slots, or adjacent lines of at most 4 generations): the lines are written as they lie,
 * one image, and each generation's keys go in the record; a file mapping uses them in place.
 * More generations: an image per generation, gathered from the lines. */
static int one_image(const windowed *w)
{
    return w->ngens <= SLOT_GENERATIONS;
}

/* A ring's image: the header, the record, the generations. */
static uint64_t ring_image_bytes(const windowed *w)
{
    uint32_t images = one_image(w) ? 1 : w->ngens;
    return SBLOOM_HEADER_BYTES + RECORD_BYTES + images * SBLOOM_HEADER_BYTES + w->lines.bytes;
}

/* A growing window: the header, a record of form 2 (the rings' count), each ring's image. */
static uint64_t windowed_image_bytes(const sbloom_t *f)
{
    const windowed *w = state_of(f);
    if (!w->growing)
        return ring_image_bytes(w);
    uint64_t sum = SBLOOM_HEADER_BYTES + RECORD_BYTES;
    for (; w; w = w->older)
        sum += ring_image_bytes(w);
    return sum;
}

/* The image header of the lines as one image: each generation's plan, the keys of all. */
static void describe_lines(const windowed *w, sbloom_header *h)
{
    sbloom_header_describe(h, &w->lines, ring_items(w), generation_items(w->plan_items, w->periods),
                           generation_rate(w->plan_fpp, w->periods));
}

/* The images after the record (the record's counts with one image), to out; the end, or NULL
 * without memory. */
static uint8_t *write_generations(const windowed *w, uint8_t *record, uint8_t *out)
{
    if (one_image(w)) {
        record[RECORD_FORM_AT] = 1;
        for (uint32_t i = 0; i < w->ngens; i++)
            sbloom_put_le64(record + RECORD_STARTS_AT + 8 * w->ngens + 8 * i,
                            __atomic_load_n(&w->items[i], __ATOMIC_RELAXED));
        sbloom_header h;
        describe_lines(w, &h);
        sbloom_header_pack(&h, out);
        sbloom_core_payload_out(&w->lines, out + SBLOOM_HEADER_BYTES);
        return out + SBLOOM_HEADER_BYTES + w->lines.bytes;
    }
    sbloom_part one = {.planned_items = generation_items(w->plan_items, w->periods),
                       .planned_fpp = generation_rate(w->plan_fpp, w->periods)};
    if (generation_core(w, &one.core) != SBLOOM_OK)
        return NULL;
    for (uint32_t slot = 0; slot < w->ngens; slot++) {
        gather(w, slot, &one.core);
        one.items = w->items[slot];
        out = sbloom_parts_write_images(&one, 1, out);
    }
    sbloom_core_release(&one.core);
    return out;
}

/* The outer header of a windowed file (items keys, planned for n at p) whose payload (record and
 * images) is at payload. */
static void describe_file(uint64_t items, uint64_t n, double p, const uint8_t *payload,
                          uint64_t payload_bytes, sbloom_header *h)
{
    sbloom_header_start(h, SBLOOM_LAYOUT_WINDOWED, items, n, p);
    h->payload_bytes = payload_bytes;
    h->nblocks = payload_bytes / 64; /* 64-byte units: the record and each image are multiples */
    h->payload_checksum = sbloom_xxh3(payload, (size_t)payload_bytes);
}

/* The window record's first fields (the rest zero): magic, periods, generations, period, clock. */
static void write_record_head(const windowed *w, uint8_t *record)
{
    memset(record, 0, RECORD_BYTES);
    memcpy(record, record_magic, sizeof record_magic);
    sbloom_put_le32(record + 8, w->periods);
    sbloom_put_le32(record + 12, w->ngens);
    sbloom_put_le64(record + 16, w->period);
    sbloom_put_le64(record + RECORD_CURRENT_AT, current_period(w));
}

/* A ring's whole image at out (ring_image_bytes long): the end, or NULL without memory. */
static uint8_t *ring_write_image(const windowed *w, uint8_t *out)
{
    uint8_t *payload = out + SBLOOM_HEADER_BYTES;
    write_record_head(w, payload);
    for (uint32_t i = 0; i < w->ngens; i++)
        sbloom_put_le64(payload + RECORD_STARTS_AT + 8 * i, w->started[i]);
    uint8_t *end = write_generations(w, payload, payload + RECORD_BYTES);
    if (!end)
        return NULL;
    sbloom_header h;
    describe_file(ring_items(w), w->plan_items, w->plan_fpp, payload, (uint64_t)(end - payload),
                  &h);
    sbloom_header_pack(&h, out);
    return end;
}

static int windowed_write_image(const sbloom_t *f, uint8_t *out)
{
    const windowed *w = state_of(f);
    if (!w->growing)
        return ring_write_image(w, out) ? SBLOOM_OK : SBLOOM_E_NOMEM;
    uint8_t *payload = out + SBLOOM_HEADER_BYTES, *end = payload + RECORD_BYTES;
    uint32_t rings = ring_count(w);
    write_record_head(w, payload);
    payload[RECORD_FORM_AT] = FORM_RINGS;
    sbloom_put_le32(payload + RECORD_STARTS_AT, rings);
    for (uint32_t k = 0; k < rings && end; k++) /* oldest first */
        end = ring_write_image(ring_at(w, k), end);
    if (!end)
        return SBLOOM_E_NOMEM;
    sbloom_header h;
    describe_file(windowed_items(f), f->planned_items, f->planned_fpp, payload,
                  (uint64_t)(end - payload), &h);
    sbloom_header_pack(&h, out);
    return SBLOOM_OK;
}

/* A file mapping brought up to date: the counts of the lines' image and of the file, their
 * checksums, then msync. The clock and counts in the record are live already. */
static int windowed_sync(sbloom_t *f)
{
    windowed *w = state_of(f);
    if (!w->image || f->readonly)
        return SBLOOM_OK;
    uint8_t *payload = w->image + SBLOOM_HEADER_BYTES;
    sbloom_header h;
    describe_lines(w, &h);
    sbloom_header_pack(&h, payload + RECORD_BYTES);
    describe_file(ring_items(w), w->plan_items, w->plan_fpp, payload,
                  RECORD_BYTES + SBLOOM_HEADER_BYTES + w->lines.bytes, &h);
    sbloom_header_pack(&h, w->image);
    if (msync(w->lines.map_base, (size_t)w->lines.map_bytes, MS_SYNC) != 0)
        return SBLOOM_E_IO;
    return SBLOOM_OK;
}

/* The window record as read: the window, the clock, each generation's start and (one image)
 * keys, and the form. */
typedef struct window_record {
    uint32_t periods, ngens;
    uint64_t period, current;
    uint64_t started[MAX_GENERATIONS], items[MAX_GENERATIONS];
    int one_image;
    uint32_t rings; /* FORM_RINGS (a growing window): its rings; else 0 */
} window_record;

/* The window record, checked field by field: SBLOOM_OK with it in rec. */
static int read_record(window_record *rec, const uint8_t *r, uint64_t left)
{
    if (left < RECORD_BYTES || memcmp(r, record_magic, sizeof record_magic) != 0)
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "no window record");
    uint32_t periods = sbloom_get_le32(r + 8), ngens = sbloom_get_le32(r + 12);
    uint64_t period = sbloom_get_le64(r + 16), current = sbloom_get_le64(r + RECORD_CURRENT_AT);
    if (periods == 0 || periods > SBLOOM_WINDOW_MAX_PERIODS || ngens != periods + 1 ||
        period == 0 || current > UINT64_MAX / period)
        return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                "window record: %u periods, %u generations, period %llu, at "
                                "period %llu",
                                periods, ngens, (unsigned long long)period,
                                (unsigned long long)current);
    uint8_t form = r[RECORD_FORM_AT];
    if (form > FORM_RINGS || (form == 1 && ngens > SLOT_GENERATIONS))
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "window record: form %u for %u periods", form,
                                periods);
    uint32_t rings = form == FORM_RINGS ? sbloom_get_le32(r + RECORD_STARTS_AT) : 0;
    if (form == FORM_RINGS && (rings == 0 || rings > GROWTH_STEPS))
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "window record: %u rings", rings);
    /* the rings' count; or the starts, then (one image) the keys */
    uint32_t used =
        form == FORM_RINGS ? RECORD_STARTS_AT + 4 : RECORD_STARTS_AT + 8 * ngens * (form ? 2 : 1);
    for (uint32_t at = used; at < RECORD_BYTES; at++)
        if (r[at] != 0 && at != RECORD_FORM_AT)
            return sbloom_fail_with(SBLOOM_E_CORRUPT, "window record: byte %u is set", at);
    rec->periods = periods;
    rec->ngens = ngens;
    rec->period = period;
    rec->current = current;
    rec->one_image = form == 1;
    rec->rings = rings;
    for (uint32_t i = 0; rings && i < ngens; i++) { /* each ring's record has its own */
        rec->started[i] = NOT_STARTED;
        rec->items[i] = 0;
    }
    for (uint32_t i = 0; !rings && i < ngens; i++) {
        uint64_t q = sbloom_get_le64(r + RECORD_STARTS_AT + 8 * i);
        /* a generation began in one of the last G + 1 periods, in its own slot, or not yet;
         * the current one has begun */
        int fits = q == NOT_STARTED ? i != current % ngens
                                    : q <= current && current - q < ngens && q % ngens == i;
        if (!fits)
            return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                    "window record: generation %u began at period %llu, now %llu",
                                    i, (unsigned long long)q, (unsigned long long)current);
        rec->started[i] = q;
        rec->items[i] = form ? sbloom_get_le64(r + RECORD_STARTS_AT + 8 * ngens + 8 * i) : 0;
        if (q == NOT_STARTED && rec->items[i] != 0)
            return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                    "window record: generation %u has keys and never began", i);
    }
    return SBLOOM_OK;
}

/* The lines' image (one image) checked against the plan: the layout and count of lines one
 * generation's plan gives for it (counting: slots, a line a group; 512-bit: G + 1 lines a group),
 * its count the record's. SBLOOM_OK with the groups and lines a group. */
static int check_lines_image(const sbloom_header *ih, const window_record *rec, uint64_t per,
                             double rate, uint64_t *ngroups, uint32_t *per_group)
{
    *per_group = ih->layout == SBLOOM_LAYOUT_COUNTING512 ? 1 : rec->ngens;
    sbloom_plan plan = sbloom_plan_init();
    uint64_t items = 0;
    for (uint32_t i = 0; i < rec->ngens; i++)
        items += rec->items[i] > UINT64_MAX - items ? UINT64_MAX - items : rec->items[i];
    int rc = sbloom_plan_for_layout(per, rate, ih->layout, &plan);
    if (rc != SBLOOM_OK || ih->nblocks % *per_group != 0 ||
        ih->nblocks / *per_group != plan.bytes / 64)
        return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                "generations: %llu blocks of %s, not %u x %llu for %llu items at "
                                "rate %g",
                                (unsigned long long)ih->nblocks, sbloom_layout_name(ih->layout),
                                *per_group, (unsigned long long)(plan.bytes / 64),
                                (unsigned long long)per, rate);
    if (items != ih->items)
        return sbloom_fail_with(SBLOOM_E_CORRUPT,
                                "generations: their image counts %llu items, the record %llu",
                                (unsigned long long)ih->items, (unsigned long long)items);
    *ngroups = ih->nblocks / *per_group;
    return SBLOOM_OK;
}

/* One image: the lines as written, checked, become the ring's. */
static int read_one_image(windowed *w, const sbloom_header *h, const window_record *rec,
                          const uint8_t *payload)
{
    sbloom_part one;
    uint64_t size = 0, per = generation_items(h->planned_items, rec->periods), ngroups;
    double rate = generation_rate(h->planned_fpp, rec->periods);
    uint32_t per_group;
    sbloom_header ih;
    int rc = sbloom_part_read_image(&one, "generations", payload + RECORD_BYTES,
                                    h->payload_bytes - RECORD_BYTES, 0, per, rate, 1, &size);
    if (rc != SBLOOM_OK)
        return rc;
    sbloom_header_parse(payload + RECORD_BYTES, size, &ih); /* (parsed above already) */
    rc = check_lines_image(&ih, rec, per, rate, &ngroups, &per_group);
    if (rc == SBLOOM_OK && (RECORD_BYTES + size != h->payload_bytes || ih.items != h->items))
        rc = sbloom_fail_with(SBLOOM_E_CORRUPT,
                              "header counts %llu items in %llu bytes, the generations %llu in "
                              "%llu",
                              (unsigned long long)h->items, (unsigned long long)h->payload_bytes,
                              (unsigned long long)ih.items,
                              (unsigned long long)(RECORD_BYTES + size));
    if (rc != SBLOOM_OK) {
        sbloom_core_release(&one.core);
        return rc;
    }
    w->lines = one.core; /* the image's blocks become the lines */
    w->ngroups = ngroups;
    w->per_group = per_group;
    return SBLOOM_OK;
}

/* An image per generation (G > 3, and files written before the form byte): each spread into
 * its lines. */
static int read_images(windowed *w, const sbloom_header *h, const uint8_t *payload)
{
    uint64_t at = RECORD_BYTES, size = 0, items = 0;
    uint64_t per = generation_items(h->planned_items, w->periods);
    double rate = generation_rate(h->planned_fpp, w->periods);
    int rc = SBLOOM_OK;
    for (uint32_t i = 0; rc == SBLOOM_OK && i < w->ngens; i++) {
        sbloom_part one;
        rc = sbloom_part_read_image(&one, "generation", payload + at, h->payload_bytes - at, i, per,
                                    rate, 0, &size);
        if (rc != SBLOOM_OK)
            break;
        if (i == 0)
            rc = make_lines(w, one.core.nblocks, one.core.layout);
        if (rc == SBLOOM_OK &&
            (one.core.nblocks != w->ngroups || one.core.layout != w->lines.layout))
            rc = sbloom_fail_with(
                SBLOOM_E_CORRUPT, "generation %u: %llu blocks of %s, generation 0 %llu of %s", i,
                (unsigned long long)one.core.nblocks, sbloom_layout_name(one.core.layout),
                (unsigned long long)w->ngroups, sbloom_layout_name(w->lines.layout));
        if (rc == SBLOOM_OK) {
            spread(w, i, &one.core);
            w->items[i] = one.items;
            items += one.items;
            at += size;
        }
        sbloom_core_release(&one.core);
    }
    if (rc == SBLOOM_OK && (at != h->payload_bytes || items != h->items))
        rc = sbloom_fail_with(SBLOOM_E_CORRUPT,
                              "header counts %llu items in %llu bytes, its generations %llu in "
                              "%llu",
                              (unsigned long long)h->items, (unsigned long long)h->payload_bytes,
                              (unsigned long long)items, (unsigned long long)at);
    return rc;
}

/* A ring for a validated header and record: the window, the clock and the starts (NULL without
 * memory). */
static windowed *ring_for(const sbloom_header *h, const window_record *rec)
{
    windowed *w =
        ring_alloc(h->planned_items, h->planned_fpp, rec->periods, rec->period, rec->current);
    for (uint32_t i = 0; w && i < rec->ngens; i++) {
        w->started[i] = rec->started[i];
        w->items[i] = rec->items[i];
    }
    return w;
}

static int read_header_and_record(const sbloom_header *h, const uint8_t *payload,
                                  window_record *rec)
{
    if (!(h->flags & 1u)) /* a windowed filter always has its plan */
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "inconsistent header: a windowed filter "
                                                  "without its plan");
    return read_record(rec, payload, h->payload_bytes);
}

/* A ring from its validated header and checksummed payload (of form 0 or 1). */
static int ring_from_payload(windowed **out, const sbloom_header *h, const window_record *rec,
                             const uint8_t *payload)
{
    windowed *w = ring_for(h, rec);
    if (!w)
        return SBLOOM_E_NOMEM;
    int rc = rec->one_image ? read_one_image(w, h, rec, payload) : read_images(w, h, payload);
    if (rc != SBLOOM_OK) {
        ring_free(w);
        return rc;
    }
    *out = w;
    return SBLOOM_OK;
}

/* Ring k of a growing window at `at` (left bytes remain): a whole windowed image, checksummed,
 * of the window and clock of the file's record, planned as step `step` of the file's plan. */
static int read_ring(windowed **out, const sbloom_header *h, const window_record *outer, uint32_t k,
                     uint32_t step, const uint8_t *at, uint64_t left, uint64_t *size)
{
    if (left < SBLOOM_HEADER_BYTES)
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "ring %u: truncated", k);
    uint64_t payload_bytes = sbloom_header_payload_bytes(at);
    if (payload_bytes > left - SBLOOM_HEADER_BYTES)
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "ring %u: %llu bytes, more than is left", k,
                                (unsigned long long)payload_bytes);
    *size = SBLOOM_HEADER_BYTES + payload_bytes;
    sbloom_header rh;
    window_record rec;
    const uint8_t *payload = at + SBLOOM_HEADER_BYTES;
    int rc = sbloom_header_parse(at, *size, &rh);
    if (rc == SBLOOM_OK && rh.layout != SBLOOM_LAYOUT_WINDOWED)
        rc = sbloom_fail_with(SBLOOM_E_CORRUPT, "layout %s", sbloom_layout_name(rh.layout));
    if (rc == SBLOOM_OK && sbloom_xxh3(payload, (size_t)rh.payload_bytes) != rh.payload_checksum)
        rc = sbloom_fail_with(SBLOOM_E_CORRUPT, "its checksum does not match");
    if (rc == SBLOOM_OK)
        rc = read_header_and_record(&rh, payload, &rec);
    if (rc == SBLOOM_OK && (rec.rings || rec.periods != outer->periods ||
                            rec.period != outer->period || rec.current != outer->current ||
                            rh.planned_items != ring_items_for(h->planned_items, step) ||
                            rh.planned_fpp != ring_rate_for(h->planned_fpp, step)))
        rc =
            sbloom_fail_with(SBLOOM_E_CORRUPT,
                             "%llu items a window at rate %g, %u periods of %llu at period %llu: "
                             "not step %u of the file's plan and window",
                             (unsigned long long)rh.planned_items, rh.planned_fpp, rec.periods,
                             (unsigned long long)rec.period, (unsigned long long)rec.current, step);
    if (rc == SBLOOM_OK)
        rc = ring_from_payload(out, &rh, &rec, payload);
    if (rc != SBLOOM_OK) {
        char why[200];
        snprintf(why, sizeof why, "%s", sbloom_error_detail());
        return sbloom_fail_with(rc, "ring %u: %s", k, why[0] ? why : sbloom_strerror(rc));
    }
    return SBLOOM_OK;
}

/* The step whose plan is `items` keys a window for a growing window that began at `first`: 1
 * with it in *step, 0 for none. */
static int step_of(uint64_t first, uint64_t items, uint32_t *step)
{
    for (uint32_t i = 0; i < GROWTH_STEPS; i++)
        if (ring_items_for(first, i) == items) {
            *step = i;
            return 1;
        }
    return 0;
}

/* A growing window's rings, oldest first, each of a later step than the one before: the newest
 * takes the keys. */
static int read_rings(windowed **out, const sbloom_header *h, const window_record *rec,
                      const uint8_t *payload)
{
    windowed *newest = NULL;
    uint64_t at = RECORD_BYTES, size = 0, items = 0;
    int rc = SBLOOM_OK;
    for (uint32_t k = 0; rc == SBLOOM_OK && k < rec->rings; k++) {
        windowed *w = NULL;
        uint32_t step = 0;
        /* the ring's step, from its plan (read_ring checks the rest of it) */
        uint64_t ring_plan = h->payload_bytes - at >= SBLOOM_HEADER_BYTES
                                 ? sbloom_header_planned_items(payload + at)
                                 : 0;
        if (!step_of(h->planned_items, ring_plan, &step) || (newest && step <= newest->step))
            rc = sbloom_fail_with(SBLOOM_E_CORRUPT,
                                  "ring %u: planned for %llu items a window, not a later step of "
                                  "%llu",
                                  k, (unsigned long long)ring_plan,
                                  (unsigned long long)h->planned_items);
        else
            rc = read_ring(&w, h, rec, k, step, payload + at, h->payload_bytes - at, &size);
        if (rc == SBLOOM_OK) {
            w->growing = 1;
            w->step = step;
            w->older = newest;
            newest = w;
            items += ring_items(w);
            at += size;
        }
    }
    if (rc == SBLOOM_OK && (at != h->payload_bytes || items != h->items))
        rc = sbloom_fail_with(SBLOOM_E_CORRUPT,
                              "header counts %llu items in %llu bytes, its rings %llu in %llu",
                              (unsigned long long)h->items, (unsigned long long)h->payload_bytes,
                              (unsigned long long)items, (unsigned long long)at);
    if (rc != SBLOOM_OK) {
        ring_free(newest);
        return rc;
    }
    *out = newest;
    return SBLOOM_OK;
}

int sbloom_windowed_from_payload(sbloom_t **out, const sbloom_header *h, const uint8_t *payload)
{
    *out = NULL;
    window_record rec;
    windowed *w = NULL;
    int rc = read_header_and_record(h, payload, &rec);
    if (rc == SBLOOM_OK)
        rc = rec.rings ? read_rings(&w, h, &rec, payload) : ring_from_payload(&w, h, &rec, payload);
    if (rc == SBLOOM_OK &&
        (rc = object_over(out, w, h->planned_items, h->planned_fpp)) != SBLOOM_OK)
        ring_free(w);
    return rc == SBLOOM_E_TRUNCATED || rc == SBLOOM_E_FORMAT ? SBLOOM_E_CORRUPT : rc;
}

int sbloom_windowed_map(sbloom_t **out, uint8_t *base, uint64_t size, const sbloom_header *h,
                        int writable)
{
    *out = NULL;
    uint8_t *payload = base + SBLOOM_HEADER_BYTES;
    window_record rec;
    int rc = read_header_and_record(h, payload, &rec);
    if (rc != SBLOOM_OK)
        return rc;
    if (rec.rings)
        return sbloom_fail_with(SBLOOM_E_LAYOUT, "a growing windowed filter is loaded, not "
                                                 "mapped (its rings come and go)");
    if (!rec.one_image)
        return sbloom_fail_with(SBLOOM_E_LAYOUT,
                                "a windowed filter of %u periods is loaded, not "
                                "mapped (3 at most)",
                                rec.periods);
    uint64_t per = generation_items(h->planned_items, rec.periods), ngroups;
    double rate = generation_rate(h->planned_fpp, rec.periods);
    uint32_t per_group;
    sbloom_header ih;
    uint8_t *at = payload + RECORD_BYTES;
    uint64_t left = size - SBLOOM_HEADER_BYTES - RECORD_BYTES;
    if (h->payload_bytes < RECORD_BYTES + SBLOOM_HEADER_BYTES)
        return sbloom_fail_with(SBLOOM_E_CORRUPT, "generations: truncated");
    rc = sbloom_header_parse(at, left, &ih);
    if (rc == SBLOOM_OK && ih.layout != SBLOOM_LAYOUT_COUNTING512 &&
        ih.layout != SBLOOM_LAYOUT_BLOCK512_K8 && ih.layout != SBLOOM_LAYOUT_BLOCK512_K16)
        rc = sbloom_fail_with(SBLOOM_E_CORRUPT, "generations: layout %s",
                              sbloom_layout_name(ih.layout));
    /* the counts in the record are live while processes add: the headers catch up at a sync */
    for (uint32_t i = 0; rc == SBLOOM_OK && i < rec.ngens; i++)
        rec.items[i] = 0;
    ih.items = 0;
    if (rc == SBLOOM_OK)
        rc = check_lines_image(&ih, &rec, per, rate, &ngroups, &per_group);
    sbloom_t *f = NULL;
    windowed *w = NULL;
    if (rc == SBLOOM_OK && !(w = ring_for(h, &rec)))
        rc = SBLOOM_E_NOMEM;
    if (rc == SBLOOM_OK && (rc = object_over(&f, w, h->planned_items, h->planned_fpp)) != SBLOOM_OK)
        ring_free(w);
    if (rc != SBLOOM_OK)
        return rc;
    rc = sbloom_core_init(&w->lines, ih.payload_bytes, ih.layout, SBLOOM_OWNER_CALLER);
    if (rc != SBLOOM_OK) {
        sbloom_object_free(f);
        return rc;
    }
    w->lines.blocks = at + SBLOOM_HEADER_BYTES;
    w->lines.owner = SBLOOM_OWNER_FILE_MAP; /* unmapped with the filter */
    w->lines.map_base = base;
    w->lines.map_bytes = size;
    w->ngroups = ngroups;
    w->per_group = per_group;
    w->image = base;
    /* the clock, the starts and the counts: the record's own words from now on */
    w->current = (uint64_t *)(payload + RECORD_CURRENT_AT);
    w->started = (uint64_t *)(payload + RECORD_STARTS_AT);
    w->items = (uint64_t *)(payload + RECORD_STARTS_AT + 8 * rec.ngens);
    f->isa = w->lines.isa;
    f->readonly = !writable;
    *out = f;
    return SBLOOM_OK;
}

int sbloom_windowed_share(sbloom_t *f, const char *path)
{
    windowed *w = state_of(f);
    int fd;
    int rc = sbloom_lock_file_open(path, &fd);
    void *map = NULL;
    if (rc == SBLOOM_OK)
        rc = sbloom_map_fd(fd, SBLOOM_LOCK_FILE_BYTES, 1, &map);
    if (rc != SBLOOM_OK)
        return rc;
    free(w->locks);
    w->lock_map = map;
    w->locks = (uint32_t *)((char *)map + SBLOOM_LOCK_STRIPES_AT);
    w->advancing = (uint32_t *)((char *)map + SBLOOM_LOCK_ADVANCE_AT);
    w->per_stripe = w->ngroups / SBLOOM_STRIPES + (w->ngroups % SBLOOM_STRIPES != 0);
    w->token = (uint32_t)getpid();
    w->across = 1;
    return SBLOOM_OK;
}

const sbloom_mode sbloom_mode_windowed = {
    .name = "windowed",
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
    .sync = windowed_sync,
};
