/*
 * Sizing: how many bytes a filter needs for n items at false-positive rate p, over every family
 * (each family's exact formula and planner are in its file, src/base/families/), and the classic
 * Bloom filter's formulas that `simdbloom plan --table` sets beside them.
 */
#include <math.h>
#include <string.h>

#include "base.h"

double sbloom_blocked_fpp(sbloom_layout layout, uint64_t bytes, uint64_t n)
{
    return sbloom_family_of(layout)->rate(layout, bytes, n);
}

/*
 * The last plans this thread made. A plan is a pure function of (n, p, layout), and the same
 * one is often asked for again and again (a filter made per test, per batch, per stage of the
 * same size; sbloom_plan_for and sbloom_plan_any each ask every layout), while a Bloom layout's
 * search evaluates its Poisson sum about 32 times (0.16-0.31 ms; 8.5-17 ms under qemu-s390x).
 * A hit returns the very plan computed before, so answers cannot differ. Only successful plans
 * are kept; per thread, so that no lock is taken.
 */
#define RECENT_PLANS 8

typedef struct recent_plan {
    uint64_t n;
    double p;
    sbloom_layout layout; /* 0: an empty entry */
    sbloom_plan plan;
} recent_plan;

static _Thread_local recent_plan recent[RECENT_PLANS];
static _Thread_local unsigned recent_next;

/* *out set to a plan made here (kept, or a candidate), all but its size member. */
static void plan_copy(sbloom_plan *out, const sbloom_plan *kept)
{
    size_t callers_size = out->size; /* a newer caller's struct may be larger */
    *out = *kept;
    out->size = callers_size;
}

int sbloom_plan_for_layout(uint64_t n, double p, sbloom_layout layout, sbloom_plan *out)
{
    if (!out)
        return SBLOOM_E_NULL;
    if (!sbloom_layout_known(layout) || sbloom_layout_composite(layout))
        return SBLOOM_E_LAYOUT; /* a scalable filter has no fixed size (sbloom_create_scalable) */
    if (out->size < sizeof(sbloom_plan) || n == 0 || !(p > 0.0 && p < 1.0)) /* NaN too */
        return SBLOOM_E_INVALID;
    for (unsigned i = 0; i < RECENT_PLANS; i++)
        if (recent[i].layout == layout && recent[i].n == n && recent[i].p == p) {
            plan_copy(out, &recent[i].plan);
            return SBLOOM_OK;
        }
    sbloom_plan made = sbloom_plan_init();
    int rc = sbloom_family_of(layout)->plan(n, p, layout, &made);
    if (rc != SBLOOM_OK)
        return rc;
    recent_plan *slot = &recent[recent_next++ % RECENT_PLANS];
    slot->n = n;
    slot->p = p;
    slot->layout = layout;
    slot->plan = made;
    plan_copy(out, &made);
    return SBLOOM_OK;
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
            plan_copy(out, &candidate);
            best = SBLOOM_OK;
        }
    }
    return best;
}

/* *out (its plan, or `best` its error) replaced by the smallest plan for n keys at p of the
 * layouts of the families in the smallest plan where one is smaller (a tie keeps *out); returns
 * the result's code. */
static int smaller_of_families(uint64_t n, double p, int best, sbloom_plan *out)
{
    for (int layout = 1; layout <= SBLOOM_LAYOUT_COUNT; layout++) {
        const sbloom_family *family = sbloom_family_of((sbloom_layout)layout);
        if (!family->in_smallest_plan)
            continue;
        /* no plan of this layout within the best's bytes holds n keys, so none is smaller and
         * its search need not run */
        uint64_t lines = out->bytes / sbloom_layout_block_bytes((sbloom_layout)layout);
        if (best == SBLOOM_OK && family->max_items((sbloom_layout)layout, lines, out->bytes) < n)
            continue;
        sbloom_plan candidate = sbloom_plan_init();
        if (sbloom_plan_for_layout(n, p, (sbloom_layout)layout, &candidate) == SBLOOM_OK &&
            (best != SBLOOM_OK || candidate.bytes < out->bytes)) {
            plan_copy(out, &candidate);
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
    return smaller_of_families(n, p, best, out);
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
    return smaller_of_families(n, p, rc, out);
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
