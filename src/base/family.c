/*
 * The families: the ways a layout stores keys in its lines (bits, counters, fingerprints), and
 * what each does that the layers above ask of it. The modes and arrangements ask these facts of
 * a core's layout instead of naming a family (docs/ARCHITECTURE.md, "Three axes"). A new family
 * is one more row here and its layouts in layout.c.
 */
#include "base.h"

static const sbloom_family bits = {
    .name = "bits",
    .min_lines = 1,
    .moves_entries = 0,
    .combines = 1,
    .counts_every_add = 0,
    .window_form = SBLOOM_WINDOW_ADJACENT,
};

static const sbloom_family counters = {
    .name = "counters",
    .min_lines = 1,
    .moves_entries = 0,
    .combines = 0, /* OR and AND of counters are not sums or minimums of counts */
    .counts_every_add = 1,
    .window_form = SBLOOM_WINDOW_SLOTS,
};

static const sbloom_family fingerprints = {
    .name = "fingerprints",
    .min_lines = 2, /* a main line and a spare */
    .moves_entries = 1,
    .combines = 0, /* entries are not bits: no exact meaning */
    .counts_every_add = 0,
    .window_form = SBLOOM_WINDOW_AGES,
};

/* No layout (a composite object: its cores have theirs), the ABI's names of arrangements and
 * unknown values: lines of no family, so that every fact reads no. */
static const sbloom_family none = {
    .name = "none",
    .min_lines = 1,
    .window_form = SBLOOM_WINDOW_NONE,
};

const sbloom_family *sbloom_family_of(sbloom_layout layout)
{
    if (sbloom_layout_is_fingerprint(layout))
        return &fingerprints;
    if (layout == SBLOOM_LAYOUT_COUNTING512)
        return &counters;
    return sbloom_layout_is_bits(layout) ? &bits : &none;
}

sbloom_window_form sbloom_window_form_of(sbloom_layout layout)
{
    /* (a window's groups are of 64-byte lines: not Parquet's 32-byte blocks) */
    if (sbloom_layout_block_bytes(layout) != 64)
        return SBLOOM_WINDOW_NONE;
    return sbloom_family_of(layout)->window_form;
}

int sbloom_plan_window_lines(uint64_t n, double p, sbloom_window_form form, sbloom_plan *out)
{
    switch (form) {
    case SBLOOM_WINDOW_ADJACENT: return sbloom_plan_block512(n, p, out);
    case SBLOOM_WINDOW_SLOTS: return sbloom_plan_for_layout(n, p, SBLOOM_LAYOUT_COUNTING512, out);
    case SBLOOM_WINDOW_AGES:
    case SBLOOM_WINDOW_NONE:
    default: return SBLOOM_E_LAYOUT; /* (ages: sbloom_plan_aged, one plan for every generation) */
    }
}

uint32_t sbloom_window_group_lines(sbloom_window_form form, uint32_t ngens)
{
    return form == SBLOOM_WINDOW_ADJACENT ? ngens : 1;
}

uint64_t sbloom_window_generation_bits(sbloom_window_form form)
{
    switch (form) {
    case SBLOOM_WINDOW_ADJACENT: return 512; /* a line of its own */
    case SBLOOM_WINDOW_SLOTS: return 128;    /* one bit of each 4-bit slot */
    case SBLOOM_WINDOW_AGES: return 64;      /* fewer entries than 64 a line */
    case SBLOOM_WINDOW_NONE:
    default: return 0;
    }
}
