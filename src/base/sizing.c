/*
 * Sizing: how many bytes a filter needs for n items at false-positive rate p.
 *
 * Blocked filters pay for their speed: keys land in blocks unevenly (Poisson), and an
 * overloaded block answers "present" far more often than the average load suggests. The classic
 * formula ignores this and underestimates the rate, so we size from the exact blocked formula:
 *
 *   fpp = sum_L  Poisson(L; n / nblocks) * (1 - (1 - 1/w)^L)^k
 *
 * where a block has k words of w bits and each key sets one bit in every word: with L keys in the
 * block, a word has a given bit clear with probability (1 - 1/w)^L, independently per word. (In
 * the counting layout w = 16: a word holds 16 counters, and a key takes one.)
 */
#include <math.h>
#include <string.h>

#include "base.h"

/* Beyond this mean load every layout's block is full to double precision: 1 - (1-1/64)^1e6 == 1. */
#define SATURATED_LOAD 1e6
/* Poisson terms are summed over mean +- this many standard deviations (plus a margin for small
 * means); the mass outside is below 1e-30. */
#define TAIL_SIGMAS 12.0

/* Plans round the block count up to a multiple of this (folding by 2, 4, 8). */
#define FOLD_UNIT 8

/*
 * The fingerprint layouts (simd/fingerprint.h). With L main lines, S spare lines and n keys, a
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
typedef struct {
    double spill; /* E[(X - s)+]: keys a main line sends to the spare */
    double reach; /* the share of absent keys that ask the spare */
} line_load;

static line_load fp_load(double lam, double s, double q)
{
    line_load out = {0.0, 0.0};
    if (lam > SATURATED_LOAD) { /* every line far past full (and the sum below too long) */
        out.spill = lam - s;
        out.reach = 1.0;
        return out;
    }
    double spread = TAIL_SIGMAS * sqrt(lam) + 40.0;
    double first = fmax(s + 1.0, floor(lam - spread)), last = ceil(lam + spread);
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

static double fp_max_load(const sbk_fp_geo *g, double max_spill)
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

/* The spare's load at which two choices leave both lines of a key full with probability below
 * 1e-16 a line (the fluid limit of two-choice allocation with lines of s slots: 0.77 of 16 slots,
 * 0.84 of 23, 0.91 of 42; this line lies under each of them). */
static double fp_spare_load(const sbk_fp_geo *g)
{
    return 0.77 + (g->s - 16.0) * (0.14 / 26.0);
}

static double fp_rate(const sbk_fp_geo *g, uint64_t nblocks, uint64_t n)
{
    uint64_t main = sbk_fp_main_lines(nblocks), spare = nblocks - main;
    double lam = (double)n / (double)main, q = g->q;
    if (lam > g->s) /* more keys than the lines have slots: most would be refused, not held */
        return 1.0;
    line_load load = fp_load(lam, g->s, q);
    double occupied = fmin((double)g->s, (double)main * load.spill / (double)spare);
    double rate = (lam / q + load.reach * 2.0 * occupied / q) * ldexp(1.0, -(int)g->r);
    return fmin(rate, 1.0);
}

/* Whether nblocks lines of a fingerprint layout hold n keys within rate p: the rate, a main load
 * at most fp_max_load, and a spare that holds the mean spill plus six of its standard deviations
 * (a Poisson count's: a small filter's spill varies most) and one line's slots, at
 * fp_spare_load. */
static int fp_holds(const sbk_fp_geo *g, uint64_t nblocks, uint64_t n, double p, double max_load)
{
    uint64_t main = sbk_fp_main_lines(nblocks), spare = nblocks - main;
    double lam = (double)n / (double)main;
    if (lam > max_load || fp_rate(g, nblocks, n) > p)
        return 0;
    double spilled = (double)main * fp_load(lam, g->s, g->q).spill;
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
    double max_load = fp_max_load(&g, age_bits ? AGES_MAX_SPILL : FP_MAX_SPILL);
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

double sbloom_blocked_fpp(sbloom_layout layout, uint64_t bytes, uint64_t n)
{
    sbk_fp_geo g;
    if (sbloom_layout_fp_geometry(layout, &g) == SBLOOM_OK)
        return bytes < 2 * 64 ? NAN : n == 0 ? 0.0 : fp_rate(&g, bytes / 64, n);
    uint32_t block_bytes = sbloom_layout_block_bytes(layout);
    if (block_bytes == 0 || bytes < block_bytes || sbloom_layout_k(layout) == 0)
        return NAN; /* unknown, or scalable: each stage has its own rate */
    double nblocks = (double)(bytes / block_bytes);
    double k = sbloom_layout_k(layout);
    double word_bits = sbloom_layout_slots(layout); /* w: a key's choices in one word */
    double load = (double)n / nblocks;
    if (n == 0)
        return 0.0;
    if (load > SATURATED_LOAD)
        return 1.0;

    double spread = TAIL_SIGMAS * sqrt(load) + 40.0;
    double first = fmax(0.0, floor(load - spread));
    double last = ceil(load + spread);
    double log_clear = log1p(-1.0 / word_bits); /* ln(1 - 1/w) */
    double sum = 0.0;
    for (double l = first; l <= last; l += 1.0) {
        double log_pmf = l * log(load) - load - lgamma(l + 1.0);
        double word_hit = -expm1(l * log_clear); /* 1 - (1-1/w)^L */
        sum += exp(log_pmf + k * log(word_hit));
    }
    return fmin(sum, 1.0);
}

/* The fewest blocks of a known layout (the counting one included) that meet p at n items. */
static int plan_blocks(uint64_t n, double p, sbloom_layout layout, sbloom_plan *out)
{
    if (!out)
        return SBLOOM_E_NULL;
    if (out->size < sizeof(sbloom_plan) || n == 0 || !(p > 0.0 && p < 1.0)) /* NaN too */
        return SBLOOM_E_INVALID;
    if (sbloom_layout_is_fingerprint(layout))
        return plan_fingerprint(n, p, layout, 0, out);

    uint64_t block_bytes = sbloom_layout_block_bytes(layout);
    uint64_t lo = 1, hi = SBLOOM_MAX_BYTES / block_bytes;
    if (sbloom_blocked_fpp(layout, hi * block_bytes, n) > p)
        return SBLOOM_E_TOO_LARGE;
    /* The rate falls as blocks are added: find the fewest blocks that meet p. */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (sbloom_blocked_fpp(layout, mid * block_bytes, n) <= p)
            hi = mid;
        else
            lo = mid + 1;
    }
    /* A multiple of FOLD_UNIT blocks, so that sbloom_fold by 2, 4 and 8 always works: at most 7
     * blocks (448 bytes) more than the fewest that meet p. */
    lo = (lo + FOLD_UNIT - 1) / FOLD_UNIT * FOLD_UNIT;
    if (lo > SBLOOM_MAX_BYTES / block_bytes)
        lo -= FOLD_UNIT;
    out->layout = layout;
    out->bytes = lo * block_bytes;
    out->k = sbloom_layout_k(layout);
    out->bits_per_key = (double)out->bytes * 8.0 / (double)n;
    out->fpp = sbloom_blocked_fpp(layout, out->bytes, n);
    return SBLOOM_OK;
}

int sbloom_plan_for_layout(uint64_t n, double p, sbloom_layout layout, sbloom_plan *out)
{
    if (!out)
        return SBLOOM_E_NULL;
    if (!sbloom_layout_known(layout) || sbloom_layout_composite(layout))
        return SBLOOM_E_LAYOUT; /* a scalable filter has no fixed size (sbloom_create_scalable) */
    /* For the counting layout a counter is "set" when it is non-zero, so it answers like a bit
     * filter whose words have 16 slots: the same formula with w = 16 (docs/SIZING.md).
     * Saturation does not enter: it never turns a zero counter into a non-zero one. */
    return plan_blocks(n, p, layout, out);
}

int sbloom_plan_for(uint64_t n, double p, sbloom_plan *out)
{
    /* Candidates in order of preference on a tie in bytes: fewer bits to set first. */
    static const sbloom_layout order[] = {SBLOOM_LAYOUT_BLOCK512_K8, SBLOOM_LAYOUT_PARQUET,
                                          SBLOOM_LAYOUT_BLOCK512_K16};
    if (!out)
        return SBLOOM_E_NULL;
    if (out->size < sizeof(sbloom_plan))
        return SBLOOM_E_INVALID;
    int best = SBLOOM_E_TOO_LARGE;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        sbloom_plan candidate = sbloom_plan_init();
        int rc = sbloom_plan_for_layout(n, p, order[i], &candidate);
        if (rc == SBLOOM_E_INVALID)
            return rc;
        if (rc == SBLOOM_OK && (best != SBLOOM_OK || candidate.bytes < out->bytes)) {
            size_t callers_size = out->size; /* a newer caller's struct may be larger */
            *out = candidate;
            out->size = callers_size;
            best = SBLOOM_OK;
        }
    }
    return best;
}

/* *out (its plan, or `best` its error) replaced by the smallest fingerprint plan for n keys at p
 * where one is smaller (a tie keeps *out); returns the result's code. */
static int smaller_fingerprint(uint64_t n, double p, int best, sbloom_plan *out)
{
    for (int layout = SBLOOM_LAYOUT_FP512_R10; layout <= SBLOOM_LAYOUT_FP512_R29; layout++) {
        sbloom_plan candidate = sbloom_plan_init();
        if (sbloom_plan_for_layout(n, p, (sbloom_layout)layout, &candidate) == SBLOOM_OK &&
            (best != SBLOOM_OK || candidate.bytes < out->bytes)) {
            size_t callers_size = out->size;
            *out = candidate;
            out->size = callers_size;
            best = SBLOOM_OK;
        }
    }
    return best;
}

int sbloom_plan_any(uint64_t n, double p, sbloom_plan *out)
{
    int best = sbloom_plan_for(n, p, out); /* the bit layouts first: they win a tie */
    if (best == SBLOOM_E_NULL || best == SBLOOM_E_INVALID)
        return best;
    return smaller_fingerprint(n, p, best, out);
}

double sbloom_classic_fpp(double bits_per_key, double k)
{
    if (!(bits_per_key > 0.0) || !(k > 0.0) || isinf(bits_per_key) || isinf(k))
        return NAN;
    return pow(-expm1(-k / bits_per_key), k);
}

uint32_t sbloom_classic_best_k(double bits_per_key)
{
    if (!(bits_per_key > 0.0) || isinf(bits_per_key) || bits_per_key > 1e6)
        return 0;
    /* The rate is unimodal in k with its real minimum at ln 2 * m/n; check the integers around. */
    double ideal = bits_per_key * log(2.0);
    uint32_t first = ideal > 3.0 ? (uint32_t)ideal - 2 : 1;
    uint32_t best = first;
    for (uint32_t k = first; k <= (uint32_t)ideal + 2; k++)
        if (sbloom_classic_fpp(bits_per_key, k) < sbloom_classic_fpp(bits_per_key, best))
            best = k;
    return best;
}

double sbloom_classic_bits_per_key(double p)
{
    if (!(p > 0.0 && p < 1.0))
        return NAN;
    /* With its best integer k the classic rate falls as bits grow: bisect on bits per key. */
    double lo = 1e-3, hi = 1e4;
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (sbloom_classic_fpp(mid, sbloom_classic_best_k(mid)) <= p)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

void sbloom_plan_reset(sbloom_plan *plan)
{
    if (plan) { /* every byte, padding included, as the header's initializer's memset */
        memset(plan, 0, sizeof *plan);
        plan->size = sizeof *plan;
    }
}

int sbloom_plan_block512(uint64_t n, double p, sbloom_plan *out)
{
    sbloom_plan k8 = sbloom_plan_init(), k16 = sbloom_plan_init();
    int rc8 = sbloom_plan_for_layout(n, p, SBLOOM_LAYOUT_BLOCK512_K8, &k8);
    int rc16 = sbloom_plan_for_layout(n, p, SBLOOM_LAYOUT_BLOCK512_K16, &k16);
    if (rc8 != SBLOOM_OK && rc16 != SBLOOM_OK)
        return rc8;
    *out = rc16 != SBLOOM_OK || (rc8 == SBLOOM_OK && k8.bytes <= k16.bytes) ? k8 : k16;
    return SBLOOM_OK;
}

int sbloom_plan_stage(uint64_t n, double p, int any_family, sbloom_plan *out)
{
    int rc = sbloom_plan_block512(n, p, out);
    if (!any_family || rc == SBLOOM_E_INVALID)
        return rc;
    return smaller_fingerprint(n, p, rc, out);
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
        if (plan_fingerprint(n, p, (sbloom_layout)layout, age_bits, &candidate) == SBLOOM_OK &&
            (best != SBLOOM_OK || candidate.bytes < out->bytes)) {
            *out = candidate;
            best = SBLOOM_OK;
        }
    }
    return best;
}
