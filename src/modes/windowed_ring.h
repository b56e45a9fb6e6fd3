/*
 * The windowed filter's rings (src/modes/windowed.c says what they are): the structure, and what
 * its four files share, each calling only those below it: windowed.c (the mode: the clock,
 * growth, batches, the table), windowed_file.c (the file form: images, the window record,
 * mappings), windowed_locks.c (a ring's fused pass, alone or under the stripes' locks, and a
 * generation cleared), windowed_ring.c (a ring's memory, its generations copied out and back,
 * the list of rings). Nothing here is installed.
 */
#ifndef SIMDBLOOM_WINDOWED_H
#define SIMDBLOOM_WINDOWED_H

#include <math.h>

#include "../os/os.h"
#include "modes.h"
#include "locked.h"
#include "parts.h"

#define MAX_GENERATIONS (SBLOOM_WINDOW_MAX_PERIODS + 1)
#define NOT_STARTED UINT64_MAX

typedef struct windowed {
    sbloom_core lines;       /* ngroups groups of per_group lines (windowed.c's comment) */
    uint64_t ngroups;        /* blocks per generation (ages: the lines but the spill lines) */
    uint32_t per_group;      /* lines a group: ngens (adjacent lines), 1 (slots, ages) */
    uint32_t age_bits;       /* ages: the bits of each entry's age (0: another form) */
    uint32_t periods, ngens; /* G, G + 1 */
    uint64_t period;         /* P, in the caller's unit */
    /* The clock and the counts: the filter's own words (own), or in a file mapping the window
     * record's, which every process mapping the file shares. */
    uint64_t *current; /* the current period's number: now / P */
    uint64_t *started; /* per generation (ring slot): the period it began in, or NOT_STARTED */
    uint64_t *items;   /* per generation: the keys it took */
    /* The period a rotation in progress moves to, or 0: set before the first generation is
     * cleared and reset after the new period is published, so that a rotation a kill cut short
     * is seen, and finished, by whoever opens the file next (windowed.c, ring_advance). */
    uint64_t *rotating;
    uint64_t own[2 + 2 * MAX_GENERATIONS];
    sbloom_part views[MAX_GENERATIONS]; /* copies of generations for sbloom_stage, on demand */
    /* Many threads (or processes): SBLOOM_STRIPES stripe locks (table.words, NULL with one
     * writer), each over per_stripe adjacent groups, in the heap or in PATH.lock; the spare
     * lines' lock (ages); and the lock of the thread moving the clock. The ages form's table
     * is versioned (threads only): its lookups go without locks (locked.h), and misses is its
     * test-and-adds' hint there. */
    sbloom_lock_table table;
    uint64_t per_stripe;
    unsigned misses;
    uint32_t *advancing;
    uint32_t own_advancing;
    int across;     /* the locks are shared between processes */
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

static inline windowed *state_of(const sbloom_t *f)
{
    return f->state;
}

/* Each generation's plan: n / G keys (rounded up) at p / (G + 1). */
static inline uint64_t generation_items(uint64_t n, uint32_t periods)
{
    return n / periods + (n % periods != 0);
}

static inline double generation_rate(double p, uint32_t periods)
{
    return p / (double)(periods + 1);
}

/* The current period (another thread may be moving it: read atomically). */
static inline uint64_t current_period(const windowed *w)
{
    return __atomic_load_n(w->current, __ATOMIC_ACQUIRE);
}

static inline uint32_t current_slot(const windowed *w)
{
    return (uint32_t)(current_period(w) % w->ngens);
}

/* Generation slots hold at most 4 generations (a 4-bit bitmap each); 3 periods at most. */
#define SLOT_GENERATIONS 4
#define SLOT_BIT0 UINT64_C(0x1111111111111111) /* bit 0 of every 4-bit slot */

static inline int slots_form(const windowed *w)
{
    return sbloom_window_form_of(w->lines.layout) == SBLOOM_WINDOW_SLOTS;
}

/* Ages (a fingerprint layout's lines, windowed.c's "Ages"): an entry's age is its generation's
 * ring slot, in the fewest bits that hold every slot. */
static inline int ages_form(const windowed *w)
{
    return w->age_bits != 0;
}

static inline uint32_t age_bits_for(uint32_t ngens)
{
    uint32_t bits = 1;
    while ((UINT32_C(1) << bits) < ngens)
        bits++;
    return bits;
}

/* The ages form keeps at most 8 generations (3 bits of age): its file's record holds each
 * generation's count beside its start for that many (windowed_file.c). */
#define AGES_MAX_GENERATIONS 8

#define GROWTH_STEPS 40 /* as the scalable filter's stages: first * 2^40 keys at most */

static inline uint64_t ring_items_for(uint64_t first, uint32_t step)
{
    return step < 64 && first <= (UINT64_MAX >> step) ? first << step : UINT64_MAX;
}

static inline double ring_rate_for(double p, uint32_t step)
{
    return ldexp(p, -(int)step - 1);
}

/* Line `slot` of group `block` (adjacent lines), and the lines as 64-bit words (slots). */
static inline char *line_of(const windowed *w, uint64_t block, uint32_t slot)
{
    return (char *)w->lines.blocks + (block * w->ngens + slot) * 64;
}

/* The ages form's lines but the spill lines, as a fingerprint core (its statistics, its keys'
 * lines). */
static inline sbloom_core sbloom_ring_entries(const windowed *w)
{
    sbloom_core entries = w->lines;
    entries.nblocks = w->ngroups;
    entries.bytes = w->ngroups * 64;
    return entries;
}

static inline uint64_t *words_of(const windowed *w)
{
    return w->lines.blocks;
}

/* ---- windowed_ring.c ---- */

/* windowed_locks.c: one fused pass over a ring's lines (its form's kernel; a key the ages form
 * found no room for fails f with SBLOOM_E_FULL, the others are added); the same with many
 * writers, each key under its stripe's lock (locked.h); generation `slot` emptied (stripe by
 * stripe under their locks when it has them: SBLOOM_E_LOCKED when a process keeps one); the
 * stripes made or freed (on), shared through path's lock file, and counted while held. */
uint64_t sbloom_ring_pass(const sbloom_t *f, const windowed *w, uint32_t slot, sbloom_batch_op op,
                          const uint64_t *hashes, size_t n, uint8_t *results);
uint64_t sbloom_ring_run_locked(const sbloom_t *f, windowed *w, uint32_t slot, sbloom_batch_op op,
                                const uint64_t *hashes, size_t n, uint8_t *results);
int sbloom_ring_clear(windowed *w, uint32_t slot, uint32_t token);
int sbloom_ring_lock(windowed *w, int on);
int sbloom_ring_share_locks(windowed *w, const char *path);
uint64_t sbloom_ring_locks_held(const windowed *w);

/* A ring of the window with its plan and clock, no memory yet (NULL without memory). */
windowed *sbloom_ring_alloc(uint64_t n, double p, uint32_t periods, uint64_t period,
                            uint64_t current);
/* A ring's memory: its lines, its views, its locks; then the ring itself and those before it. */
void sbloom_ring_free(windowed *w);
/* The lines for ngroups blocks a generation, zeroed: of the counting layout, generation slots
 * (one line a group); of a 512-bit layout, adjacent lines (G + 1 lines a group); of a fingerprint
 * layout, ages (ngroups lines for every generation's entries, then their spill lines). */
int sbloom_ring_make_lines(windowed *w, uint64_t ngroups, sbloom_layout layout);
/* The bytes sbloom_ring_make_lines takes for ngroups groups of `layout` lines in a ring of ngens
 * generations (the ages form's spill lines included), or SBLOOM_E_TOO_LARGE. */
int sbloom_ring_lines_bytes(uint64_t ngroups, sbloom_layout layout, uint32_t ngens,
                            uint64_t *bytes);
/* A heap core of one generation's geometry, no keys. */
int sbloom_ring_generation_core(const windowed *w, sbloom_core *out);
/* Generation `slot` copied into a core of its own (gather), or back into the lines (spread). */
void sbloom_ring_gather(const windowed *w, uint32_t slot, sbloom_core *into);
void sbloom_ring_spread(windowed *w, uint32_t slot, const sbloom_core *from);
/* Every generation's keys gathered into generation `slot`, the others emptied (counts and starts
 * are the caller's). */
void sbloom_ring_merge_into(windowed *w, uint32_t slot);
/* The ages form's lines for n keys a window of G periods at p: every generation's share of
 * entries, (G + 1) x n / G (windowed.c, "Ages"). */
int sbloom_ring_ages_plan(uint64_t n, double p, uint32_t periods, sbloom_plan *plan);
/* A ring's keys: its generations' counts. */
uint64_t sbloom_ring_items(const windowed *w);
/* The rings of a growing window (1 for a planned one), and ring k of them, oldest first. */
uint32_t sbloom_ring_count(const windowed *w);
windowed *sbloom_ring_at(const windowed *w, uint32_t k);

/* ---- windowed_file.c: the file form ---- */

/* The file of a window whose newest ring is w (a growing one: every ring) planned for n keys a
 * window at p (the filter's plan): its bytes, and writing them at out. */
uint64_t sbloom_ring_image_bytes(const windowed *w);
int sbloom_ring_write_image(const windowed *w, uint64_t n, double p, uint8_t *out);
/* A file mapping's headers brought up to date from the record's live counts, then msynced. */
int sbloom_ring_sync(windowed *w);
/* The ring(s) of a windowed file: from its validated header and checksummed payload, or mapped
 * in place (G <= 3 and one image; SBLOOM_E_LAYOUT for others) from the file at base (size
 * bytes): the record's clock and counts and the lines used where they lie. */
int sbloom_ring_read(windowed **out, const sbloom_header *h, const uint8_t *payload);
int sbloom_ring_map(windowed **out, uint8_t *base, uint64_t size, const sbloom_header *h);

#endif /* SIMDBLOOM_WINDOWED_H */
