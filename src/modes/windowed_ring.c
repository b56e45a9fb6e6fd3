/*
 * A windowed filter's ring (src/modes/windowed_ring.h): its memory and lines, a generation copied
 * out of the lines or back into them, and the list of rings of a growing window. The lowest of the
 * windowed files: windowed_file.c and windowed.c build on it.
 */
#define _POSIX_C_SOURCE 200809L /* munmap in -std=c11 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../base/alloc.h"
#include "../os/os.h"
#include "windowed_ring.h"

/* A heap core of one generation's geometry, no keys. */
int sbloom_ring_generation_core(const windowed *w, sbloom_core *out)
{
    return sbloom_core_init(out, w->ngroups * 64, w->lines.layout, SBLOOM_OWNER_HEAP);
}

/* Generation `slot` as a filter of its own: its lines (adjacent lines), or its bit of every slot
 * as a counter of 0 or 1 (slots: a counting filter that answers as the generation does). */
void sbloom_ring_gather(const windowed *w, uint32_t slot, sbloom_core *into)
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
void sbloom_ring_spread(windowed *w, uint32_t slot, const sbloom_core *from)
{
    for (uint64_t b = 0; b < w->ngroups; b++)
        memcpy(line_of(w, b, slot), (const char *)from->blocks + b * 64, 64);
}

/* Every generation's keys gathered into generation `slot`, the others emptied: in each slot of
 * the slots form, any generation's bit becomes `slot`'s; in adjacent lines, the lines of a group
 * ORed into its line `slot`; with ages, every entry's age made `slot`. */
void sbloom_ring_merge_into(windowed *w, uint32_t slot)
{
    if (ages_form(w)) { /* every entry's age becomes slot */
        for (uint32_t age = 0; age < w->ngens; age++)
            if (age != slot)
                sbloom_core_age(&w->lines, w->ngroups, 0, w->ngroups, w->age_bits, age, slot);
        return;
    }
    if (slots_form(w)) {
        uint64_t *words = words_of(w);
        for (uint64_t i = 0; i < w->ngroups * 8; i++) {
            uint64_t x = words[i];
            words[i] = ((x | x >> 1 | x >> 2 | x >> 3) & SLOT_BIT0) << slot;
        }
        return;
    }
    for (uint64_t b = 0; b < w->ngroups; b++) {
        uint64_t *into = (uint64_t *)(void *)line_of(w, b, slot);
        for (uint32_t g = 0; g < w->ngens; g++) {
            uint64_t *from = (uint64_t *)(void *)line_of(w, b, g);
            if (g == slot)
                continue;
            for (int j = 0; j < 8; j++)
                into[j] |= from[j];
            memset(from, 0, 64);
        }
    }
}

/* A ring's memory: its lines, its views, its locks; then the ring itself and those before it. */
void sbloom_ring_free(windowed *w)
{
    while (w) {
        windowed *older = w->older;
        sbloom_core_release(&w->lines);
        sbloom_lock_table_release(&w->table);
        for (uint32_t i = 0; i < MAX_GENERATIONS; i++)
            sbloom_core_release(&w->views[i].core);
        free(w);
        w = older;
    }
}

/* A ring of the window with its plan and clock, no memory yet (NULL without memory). */
windowed *sbloom_ring_alloc(uint64_t n, double p, uint32_t periods, uint64_t period,
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
    w->rotating = w->own + 1 + 2 * MAX_GENERATIONS;
    *w->current = current;
    w->advancing = &w->own_advancing;
    sbloom_lock_table_init(&w->table);
    for (uint32_t i = 0; i < MAX_GENERATIONS; i++) {
        w->started[i] = NOT_STARTED;
        w->views[i].core.owner = SBLOOM_OWNER_CALLER; /* empty: nothing to release */
    }
    w->lines.owner = SBLOOM_OWNER_CALLER;
    return w;
}

int sbloom_ring_lines_bytes(uint64_t ngroups, sbloom_layout layout, uint32_t ngens, uint64_t *bytes)
{
    sbloom_window_form form = sbloom_window_form_of(layout);
    uint32_t per_group = sbloom_window_group_lines(form, ngens);
    if (ngroups > UINT32_MAX || ngroups > SBLOOM_MAX_BYTES / 64 / per_group)
        return SBLOOM_E_TOO_LARGE;
    uint64_t spill = form == SBLOOM_WINDOW_AGES ? sbloom_core_fp_spill_lines(ngroups) : 0;
    if (ngroups * per_group + spill > SBLOOM_MAX_BYTES / 64)
        return SBLOOM_E_TOO_LARGE;
    *bytes = (ngroups * per_group + spill) * 64; /* (ages: the spill lines after the lines) */
    return SBLOOM_OK;
}

/* The lines for ngroups blocks a generation, zeroed: of the counting layout, generation slots
 * (one line a group); of a 512-bit layout, adjacent lines (G + 1 lines a group). */
int sbloom_ring_make_lines(windowed *w, uint64_t ngroups, sbloom_layout layout)
{
    sbloom_window_form form = sbloom_window_form_of(layout);
    int ages = form == SBLOOM_WINDOW_AGES;
    uint32_t per_group = sbloom_window_group_lines(form, w->ngens);
    uint64_t bytes;
    int rc = sbloom_ring_lines_bytes(ngroups, layout, w->ngens, &bytes);
    if (rc == SBLOOM_OK)
        rc = sbloom_core_init(&w->lines, bytes, layout, SBLOOM_OWNER_HEAP);
    if (rc != SBLOOM_OK)
        return rc;
    w->ngroups = ngroups;
    w->per_group = per_group;
    w->age_bits = ages ? age_bits_for(w->ngens) : 0;
    return SBLOOM_OK;
}

/* The rings of a growing window (1 for a planned one), and ring k of them, oldest first. */
uint32_t sbloom_ring_count(const windowed *w)
{
    uint32_t n = 0;
    for (; w; w = w->older)
        n++;
    return n;
}

windowed *sbloom_ring_at(const windowed *w, uint32_t k)
{
    for (uint32_t i = sbloom_ring_count(w) - 1; i > k; i--)
        w = w->older;
    return (windowed *)w;
}

/* A ring's keys: its generations' counts. */
uint64_t sbloom_ring_items(const windowed *w)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < w->ngens; i++)
        sum += __atomic_load_n(&w->items[i], __ATOMIC_RELAXED);
    return sum;
}

int sbloom_ring_ages_plan(uint64_t n, double p, uint32_t periods, sbloom_plan *plan)
{
    uint64_t per = generation_items(n, periods);
    if (periods + 1 > AGES_MAX_GENERATIONS || per > UINT64_MAX / (periods + 1))
        return SBLOOM_E_TOO_LARGE;
    return sbloom_plan_aged(per * (periods + 1), p, age_bits_for(periods + 1), plan);
}
