/*
 * The family table (src/base/family.c, src/base/families/): every layout's row holds every
 * operation, its operations agree with the public planner and statistics, and its facts with what
 * a filter of the layout does through the public API. A new family's row is checked here.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../src/base/base.h"
#include "check.h"

#define KEYS 20000

/* Every known layout has a row with its operations; the arrangements' values and no layout the
 * row of no family, which plans nothing and reads no. */
static void rows_are_whole(void)
{
    for (int v = 0; v <= SBLOOM_LAYOUT_COUNT; v++) {
        sbloom_layout layout = (sbloom_layout)v;
        const sbloom_family *family = sbloom_family_of(layout);
        CHECK(family != NULL);
        if (!family)
            continue;
        CHECK(family->name && family->plan && family->rate && family->scan && family->max_items);
        CHECK(family->min_lines >= 1);
        CHECK(family->format_version == 1 || family->format_version == 2);
        int composite = v == 0 || sbloom_layout_composite(layout);
        CHECK(composite == (sbloom_layout_family(layout) == SBLOOM_FAMILY_NONE));
        if (composite) {
            sbloom_plan plan = sbloom_plan_init();
            CHECK(family->plan(KEYS, 1e-3, layout, &plan) == SBLOOM_E_LAYOUT);
            CHECK(isnan(family->rate(layout, 1 << 20, KEYS)));
            CHECK(!family->moves_entries && !family->combines && !family->removes);
            CHECK(family->window_form == SBLOOM_WINDOW_NONE && !family->in_smallest_plan);
        }
    }
}

/* A layout's row plans what sbloom_plan_for_layout plans; its rate at the plan's bytes is the
 * plan's and within the promise, and higher in half the bytes; a header may count the planned
 * keys in the planned lines; zeroed lines scan as empty. */
static void operations_agree(sbloom_layout layout, double p)
{
    const sbloom_family *family = sbloom_family_of(layout);
    sbloom_plan planned = sbloom_plan_init(), row = sbloom_plan_init();
    CHECK(sbloom_plan_for_layout(KEYS, p, layout, &planned) == SBLOOM_OK);
    CHECK(family->plan(KEYS, p, layout, &row) == SBLOOM_OK);
    CHECK_EQ_U64(row.bytes, planned.bytes);
    CHECK(row.layout == layout);
    double rate = family->rate(layout, planned.bytes, KEYS);
    CHECK_REL(rate, planned.fpp, 1e-12);
    CHECK(rate <= p);
    CHECK(family->rate(layout, planned.bytes / 2, KEYS) > rate);
    CHECK_REL(sbloom_blocked_fpp(layout, planned.bytes, KEYS), rate, 1e-12);
    uint64_t lines = planned.bytes / sbloom_layout_block_bytes(layout);
    CHECK(family->max_items(layout, lines, planned.bytes) >= KEYS);
    void *zeroed = calloc(1, planned.bytes);
    CHECK(zeroed != NULL);
    if (zeroed) {
        sbloom_stats stats = sbloom_stats_init();
        family->scan(layout, zeroed, lines, 1, &stats);
        CHECK(stats.fill == 0.0 && stats.estimated_items == 0.0 && stats.estimated_fpp == 0.0);
        free(zeroed);
    }
}

/* The facts against a filter of the layout with KEYS keys: the count, removes, union (exact where
 * allowed), the statistics the row computes. */
static void facts_hold(sbloom_layout layout)
{
    const sbloom_family *family = sbloom_family_of(layout);
    sbloom_plan plan = sbloom_plan_init();
    CHECK(sbloom_plan_for_layout(KEYS, 1e-3, layout, &plan) == SBLOOM_OK);
    sbloom_t *f = NULL, *g = NULL;
    CHECK(sbloom_create_bytes(&f, plan.bytes, layout) == SBLOOM_OK);
    CHECK(sbloom_create_bytes(&g, plan.bytes, layout) == SBLOOM_OK);
    if (!f || !g) {
        sbloom_free(f), sbloom_free(g);
        return;
    }
    uint64_t state = 42 + (uint64_t)layout, hashes[KEYS];
    for (int i = 0; i < KEYS; i++)
        hashes[i] = test_rand(&state);
    int64_t fresh = sbloom_add_hashes(f, hashes, KEYS);
    CHECK(fresh > KEYS - KEYS / 100 && fresh <= KEYS);
    CHECK(sbloom_add_hashes(f, hashes, 100) == 0); /* 100 keys again */
    uint64_t counted = sbloom_items(f);
    if (family->counts_every_add)
        CHECK(counted == KEYS + 100);
    else
        CHECK(counted == (uint64_t)fresh);
    CHECK((sbloom_remove(f, "absent?", 7) != SBLOOM_E_LAYOUT) == family->removes);
    /* g holds other keys; where union is allowed it must be exact: with removes, taking f's
     * keys out of the union leaves every one of g's found */
    uint64_t others[KEYS / 4];
    for (int i = 0; i < KEYS / 4; i++)
        others[i] = test_rand(&state);
    sbloom_add_hashes(g, others, KEYS / 4);
    int united = sbloom_union(g, f) == SBLOOM_OK;
    CHECK(united == family->combines);
    if (united && family->removes) {
        for (int i = 0; i < KEYS; i++)
            sbloom_remove_hash(g, hashes[i]);
        CHECK(sbloom_contains_hashes(g, others, KEYS / 4, NULL) == KEYS / 4);
    }
    sbloom_stats stats = sbloom_stats_init();
    CHECK(sbloom_get_stats(f, &stats) == SBLOOM_OK);
    CHECK(stats.fill > 0.0 && stats.fill < 1.0);
    CHECK_REL(stats.estimated_items, KEYS, 0.05);
    printf("%-13s %-12s fill %.3f, estimate %.0f of %d keys, rate now %.2g\n",
           sbloom_layout_name(layout), family->name, stats.fill, stats.estimated_items, KEYS,
           stats.estimated_fpp);
    sbloom_free(f);
    sbloom_free(g);
}

/* The smallest plan of every family takes a layout of a family in it where that is smaller. */
static void smallest_plan_reaches_the_families(void)
{
    sbloom_plan any = sbloom_plan_init();
    CHECK(sbloom_plan_any(1000000, 1e-6, &any) == SBLOOM_OK);
    CHECK(sbloom_family_of(any.layout)->in_smallest_plan);
    sbloom_plan bloom = sbloom_plan_init();
    CHECK(sbloom_plan_for(1000000, 1e-6, &bloom) == SBLOOM_OK);
    CHECK(any.bytes < bloom.bytes);
}

int main(void)
{
    rows_are_whole();
    for (int v = 1; v <= SBLOOM_LAYOUT_COUNT; v++) {
        sbloom_layout layout = (sbloom_layout)v;
        if (sbloom_layout_composite(layout))
            continue;
        operations_agree(layout, 1e-3);
        operations_agree(layout, 1e-6);
        facts_hold(layout);
    }
    smallest_plan_reaches_the_families();
    return check_report();
}
