/*
 * The fingerprint family (fp512-r*: simd/fingerprint.h): its sizing, the plans of a window's aged
 * entries, its statistics and bounds; the family table's row (family.c).
 *
 * With L main lines, S spare lines and n keys, a
 * main line's load X is Poisson(lam = n / L). A random absent key collides with a key of its line
 * when quotient and remainder both match: lam / Q * 2^-r on average, whether that key stayed in the
 * line or moved to the spare (its spare place is a function of line, quotient and remainder, so
 * the absent key finds it there). A key whose line overflowed and whose quotient is at or above
 * the line's mark also asks its two spare lines, and may match one of their keys by chance: the
 * line keeps its s lowest quotients, so the mark sits at about the (s+1)-th lowest of X, above a
 * share (X - s) / (X + 1) of the quotients (plus one quotient for rounding), and each spare line
 * holds `occupied` keys at the spill's mean, each matching with 1 / Q * 2^-r.
 *
 *   rate = lam / Q * 2^-r  +  E[X > s: (X - s) / (X + 1) + 1 / Q] * 2 * occupied / Q * 2^-r
 *
 * The second term is about 6% of the first at the loads plans use (docs/SIZING.md).
 */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "../base.h"
#include "poisson.h"

typedef struct {
    double spill; /* E[(X - s)+]: keys a main line sends to the spare */
    double reach; /* the share of absent keys that ask the spare */
} line_load;

static line_load fp_load(double lam, double s, double q)
{
    line_load out = {0.0, 0.0};
    if (lam > SBLOOM_POISSON_SATURATED) {
        out.spill = lam - s;
        out.reach = 1.0;
        return out;
    }
    double first, last;
    sbloom_poisson_span(lam, &first, &last);
    first = fmax(s + 1.0, first); /* (only loads past s spill) */
    for (double x = first; x <= last; x += 1.0) {
        double pmf = exp(x * log(lam) - lam - lgamma(x + 1.0));
        out.spill += pmf * (x - s);
        out.reach += pmf * fmin(1.0, (x - s) / (x + 1.0) + 1.0 / q);
    }
    return out;
}

/* The most keys a main line is planned to hold on average: beyond it more than 4.5% of the keys
 * would live in the spare, and fewer than 95% of the operations would read one line only. */
#define FP_MAX_SPILL 0.045

/* A window's entries (sbloom_plan_aged) are planned fuller by less: a key its line sent to the
 * spare stays there until it is forgotten, while its line empties and fills again period after
 * period, so the spare holds more than one fill's spill. At 4.5% and 3.5% a steady stream of the
 * planned keys (30 windows of 30,000 and of 1M keys, at 1e-2, 1e-4 and 1e-6) found both spare lines
 * of some keys full in most periods from the second window on; at 3% in none. */
#define AGES_MAX_SPILL 0.03

static double fp_max_load_computed(const sbk_fp_geo *g, double max_spill)
{
    double lo = 1.0, hi = g->s;
    for (int i = 0; i < 60; i++) {
        double mid = 0.5 * (lo + hi);
        if (fp_load(mid, g->s, g->q).spill / mid <= max_spill)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* fp_max_load_computed's answers by layout, for plain and for aged entries (the two spill limits),
 * as the double's bits, 0 until known: a plan asks the same value for every n and p, and its 60
 * Poisson sums were 40% of a fingerprint filter's create (most of one under an emulator). Threads
 * that race compute the same bits. */
static _Atomic uint64_t max_loads[SBLOOM_LAYOUT_COUNT + 1][2]; /* (by layout value) */

static double fp_max_load(sbloom_layout layout, const sbk_fp_geo *g, int aged)
{
    double max_spill = aged ? AGES_MAX_SPILL : FP_MAX_SPILL;
    if ((unsigned)layout > SBLOOM_LAYOUT_COUNT)
        return fp_max_load_computed(g, max_spill);
    uint64_t bits = atomic_load_explicit(&max_loads[layout][aged], memory_order_relaxed);
    double load;
    if (bits) {
        memcpy(&load, &bits, sizeof load);
        return load;
    }
    load = fp_max_load_computed(g, max_spill);
    memcpy(&bits, &load, sizeof bits);
    atomic_store_explicit(&max_loads[layout][aged], bits, memory_order_relaxed);
    return load;
}

/* The spare's load at which two choices leave both lines of a key full with probability below
 * 1e-16 a line (the fluid limit of two-choice allocation with lines of s slots: 0.77 of 16 slots,
 * 0.84 of 23, 0.91 of 42; this line lies under each of them). */
static double fp_spare_load(const sbk_fp_geo *g)
{
    return 0.77 + (g->s - 16.0) * (0.14 / 26.0);
}

/* The rate of main lines at load lam (their line_load given) and the spare lines. */
static double fp_rate_at(const sbk_fp_geo *g, uint64_t main, uint64_t spare, double lam,
                         line_load load)
{
    double q = g->q;
    double occupied = fmin((double)g->s, (double)main * load.spill / (double)spare);
    double rate = (lam / q + load.reach * 2.0 * occupied / q) * ldexp(1.0, -(int)g->r);
    return fmin(rate, 1.0);
}

static double fp_rate(const sbk_fp_geo *g, uint64_t nblocks, uint64_t n)
{
    uint64_t main = sbk_fp_main_lines(nblocks), spare = nblocks - main;
    double lam = (double)n / (double)main;
    if (lam > g->s) /* more keys than the lines have slots: most would be refused, not held */
        return 1.0;
    return fp_rate_at(g, main, spare, lam, fp_load(lam, g->s, g->q));
}

/* Whether nblocks lines of a fingerprint layout hold n keys within rate p: the rate, a main load
 * at most fp_max_load, and a spare that holds the mean spill plus six of its standard deviations
 * (a Poisson count's: a small filter's spill varies most) and one line's slots, at
 * fp_spare_load. */
static int fp_holds(const sbk_fp_geo *g, uint64_t nblocks, uint64_t n, double p, double max_load)
{
    uint64_t main = sbk_fp_main_lines(nblocks), spare = nblocks - main;
    double lam = (double)n / (double)main;
    if (lam > max_load) /* (max_load <= s: fp_rate's refusal never applies here) */
        return 0;
    line_load load = fp_load(lam, g->s, g->q); /* (fp_rate's, computed once) */
    if (fp_rate_at(g, main, spare, lam, load) > p)
        return 0;
    double spilled = (double)main * load.spill;
    return spilled + 6.0 * sqrt(spilled) + g->s <= fp_spare_load(g) * g->s * spare;
}

/* The smallest plan of a fingerprint layout for n keys at p; with age_bits of each remainder an
 * age (a window's entries), the rate from the r - age_bits bits left of it. */
static int plan_fingerprint(uint64_t n, double p, sbloom_layout layout, unsigned age_bits,
                            sbloom_plan *out)
{
    sbk_fp_geo g;
    sbloom_layout_fp_geometry(layout, &g);
    g.r -= age_bits;
    double max_load = fp_max_load(layout, &g, age_bits != 0);
    uint64_t lo = 2, hi = SBLOOM_MAX_BYTES / 64;
    if (!fp_holds(&g, hi, n, p, max_load))
        return SBLOOM_E_TOO_LARGE;
    while (lo < hi) { /* every condition eases as lines are added */
        uint64_t mid = lo + (hi - lo) / 2;
        if (fp_holds(&g, mid, n, p, max_load))
            hi = mid;
        else
            lo = mid + 1;
    }
    out->layout = layout;
    out->bytes = lo * 64;
    out->k = 0;
    out->bits_per_key = (double)out->bytes * 8.0 / (double)n;
    out->fpp = fp_rate(&g, lo, n);
    return SBLOOM_OK;
}

static int fp_plan(uint64_t n, double p, sbloom_layout layout, sbloom_plan *out)
{
    return plan_fingerprint(n, p, layout, 0, out);
}

/* Every slot of every line. */
static uint64_t fp_max_items(sbloom_layout layout, uint64_t nlines, uint64_t payload_bytes)
{
    (void)payload_bytes;
    sbk_fp_geo g;
    sbloom_layout_fp_geometry(layout, &g);
    return nlines * g.s;
}

int sbloom_plan_aged(uint64_t n, double p, unsigned age_bits, sbloom_plan *out)
{
    int best = SBLOOM_E_TOO_LARGE;
    if (!(p > 0.0 && p < 1.0) || n == 0)
        return SBLOOM_E_INVALID;
    for (int layout = SBLOOM_LAYOUT_FP512_R10; layout <= SBLOOM_LAYOUT_FP512_R29; layout++) {
        sbk_fp_geo g;
        sbloom_plan candidate = sbloom_plan_init();
        sbloom_layout_fp_geometry((sbloom_layout)layout, &g);
        if (g.r < 8 + age_bits) /* the age must lie in the extra bits */
            continue;
        /* a plan's lines hold its n keys (n <= s a main line, fp_holds): fewer than n in the
         * best's lines means more lines than the best */
        if (best == SBLOOM_OK && fp_max_items((sbloom_layout)layout, out->bytes / 64, 0) < n)
            continue;
        if (plan_fingerprint(n, p, (sbloom_layout)layout, age_bits, &candidate) == SBLOOM_OK &&
            (best != SBLOOM_OK || candidate.bytes < out->bytes)) {
            *out = candidate;
            best = SBLOOM_OK;
        }
    }
    return best;
}

static double fp_lines_rate(sbloom_layout layout, uint64_t bytes, uint64_t n)
{
    sbk_fp_geo g;
    sbloom_layout_fp_geometry(layout, &g);
    return bytes < 2 * 64 ? NAN : n == 0 ? 0.0 : fp_rate(&g, bytes / 64, n);
}

/* What a read of a fingerprint core's lines 0, stride, 2 * stride, ... of each part finds. */
typedef struct line_scan {
    sbk_fp_geo g;
    double main_entries, spare_entries; /* entries in the lines read */
    double asking;                      /* the main lines read: sum of their share at or above
                                           their mark (an absent key there asks the spare) */
    double main_read, spare_read;       /* lines read of each part */
} line_scan;

static line_scan scan_fp_lines(sbloom_layout layout, const uint64_t *w, uint64_t nlines,
                               uint64_t stride)
{
    line_scan s = {.main_entries = 0};
    sbloom_layout_fp_geometry(layout, &s.g);
    uint64_t main = sbk_fp_main_lines(nlines), spare = nlines - main;
    for (uint64_t i = 0; i < main; i += stride, s.main_read++) {
        s.main_entries += sbk_fp_count(w + 8 * i, s.g);
        s.asking += (double)(s.g.q - sbk_fp_mark(w + 8 * i, s.g)) / s.g.q;
    }
    uint64_t spare_stride = stride < spare ? stride : 1;
    for (uint64_t i = main; i < nlines; i += spare_stride, s.spare_read++)
        s.spare_entries += sbk_fp_count(w + 8 * i, s.g);
    return s;
}

/*
 * The fill is the share of slots in use; the items are the entries, main and spare, scaled up
 * from the sampled lines (each distinct key added is one entry, and one that collided with an
 * earlier key's fingerprint none); a random absent key meets its main line's entries with
 * 1 / Q * 2^-r each, and, at or above the line's mark, its two spare lines' entries (at their
 * mean). Lines 0, stride, 2 * stride, ... of each part are read.
 */
static void fp_scan(sbloom_layout layout, const void *lines, uint64_t nlines, uint64_t stride,
                    sbloom_stats *out)
{
    line_scan s = scan_fp_lines(layout, lines, nlines, stride);
    uint64_t main = sbk_fp_main_lines(nlines), spare = nlines - main;
    double per_main = s.main_entries / s.main_read, per_spare = s.spare_entries / s.spare_read;
    double entries = per_main * (double)main + per_spare * (double)spare;
    out->fill = entries / ((double)nlines * s.g.s);
    out->estimated_items = entries;
    out->estimated_fpp =
        (per_main + s.asking / s.main_read * 2.0 * per_spare) / s.g.q * ldexp(1.0, -(int)s.g.r);
}

static void fp_second_line(sbloom_layout layout, const void *lines, uint64_t nlines,
                           double *absent_lookups, double *spare_keys)
{
    line_scan s = scan_fp_lines(layout, lines, nlines, 1); /* every line */
    double entries = s.main_entries + s.spare_entries;
    *absent_lookups = s.main_read > 0 ? s.asking / s.main_read : 0;
    *spare_keys = entries > 0 ? s.spare_entries / entries : 0;
}

const sbloom_family sbloom_family_fingerprints = {
    .name = "fingerprints",
    .min_lines = 2, /* a main line and a spare */
    .moves_entries = 1,
    .combines = 0, /* entries are not bits: no exact meaning */
    .counts_every_add = 0,
    .removes = 1,
    .window_form = SBLOOM_WINDOW_AGES,
    .in_smallest_plan = 1,
    /* a reader before them says "format version 2" (SBLOOM_E_VERSION) rather than meeting an
     * unknown layout in a file it otherwise knows */
    .format_version = SBLOOM_FORMAT_VERSION_FP,
    .plan = fp_plan,
    .rate = fp_lines_rate,
    .scan = fp_scan,
    .second_line = fp_second_line,
    .max_items = fp_max_items,
};
