/*
 * The families: the ways a layout stores keys in its lines (bits, counters, fingerprints), and
 * what each does that the layers above ask of it. The modes and arrangements ask these facts of
 * a core's layout instead of naming a family (docs/ARCHITECTURE.md, "Three axes"). Each family's
 * row, with its operations, is in its file under families/; a new family is one such file, one
 * more row here, and its layouts in layout.c.
 */
#include <math.h>

#include "base.h"

/* No layout (a composite object: its cores have theirs), the ABI's names of arrangements and
 * unknown values: lines of no family, so that every fact reads no. */
static int no_plan(uint64_t n, double p, sbloom_layout layout, sbloom_plan *out)
{
    (void)n, (void)p, (void)layout, (void)out;
    return SBLOOM_E_LAYOUT;
}

static double no_rate(sbloom_layout layout, uint64_t bytes, uint64_t n)
{
    (void)layout, (void)bytes, (void)n;
    return NAN; /* a scalable filter: each stage has its own rate */
}

static void no_scan(sbloom_layout layout, const void *lines, uint64_t nlines, uint64_t stride,
                    sbloom_stats *out)
{
    (void)layout, (void)lines, (void)nlines, (void)stride;
    out->fill = out->estimated_fpp = out->estimated_items = 0.0;
}

/* A composite filter's header: its parts are checked one by one. */
static uint64_t no_max_items(sbloom_layout layout, uint64_t nlines, uint64_t payload_bytes)
{
    (void)layout, (void)nlines, (void)payload_bytes;
    return UINT64_C(1) << 62;
}

static const sbloom_family none = {
    .name = "none",
    .min_lines = 1,
    .window_form = SBLOOM_WINDOW_NONE,
    .format_version = SBLOOM_FORMAT_VERSION,
    .plan = no_plan,
    .rate = no_rate,
    .scan = no_scan,
    .max_items = no_max_items,
};

const sbloom_family *sbloom_family_of(sbloom_layout layout)
{
    static const sbloom_family *const rows[SBLOOM_FAMILY_COUNT] = {
        [SBLOOM_FAMILY_NONE] = &none,
        [SBLOOM_FAMILY_BITS] = &sbloom_family_bits,
        [SBLOOM_FAMILY_COUNTERS] = &sbloom_family_counters,
        [SBLOOM_FAMILY_FINGERPRINTS] = &sbloom_family_fingerprints,
    };
    return rows[sbloom_layout_family(layout)];
}

sbloom_window_form sbloom_window_form_of(sbloom_layout layout)
{
    /* (a window's groups are of 64-byte lines: not Parquet's 32-byte blocks) */
    if (sbloom_layout_block_bytes(layout) != 64)
        return SBLOOM_WINDOW_NONE;
    return sbloom_family_of(layout)->window_form;
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
