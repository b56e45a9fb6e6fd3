/*
 * The overload warning of the commands that add keys: more distinct keys than the filter was
 * planned for, and so a false-positive rate above the promise.
 *
 * It counts distinct keys from the filter's fill (sbloom_estimate, a sample of at most 4,096
 * blocks), not from sbloom_items: that counts keys whose add changed the filter, and an
 * overloaded filter takes more and more new keys for old ones, so it undercounts exactly when
 * the warning matters (1M lines into a filter planned for 100K: 758,479 by the item count).
 */
#include <math.h>
#include <stdio.h>

#include "filters.h"

/* A planned window's overload: its plan of n lines a window is n / G a period (each generation's
 * share); a burst of more in one period passes the rate even when the window as a whole holds
 * fewer than n. Counted from each generation's keys (those reported new). A growing window
 * grows instead. 1 when it warned. */
static int window_overloaded(const sbloom_t *filter, const sbloom_window *w, const char *what,
                             const char *path)
{
    if (sbloom_is_growing(filter))
        return 0;
    uint64_t planned = sbloom_planned_items(filter);
    uint64_t share = planned / w->periods + (planned % w->periods != 0), most = 0;
    for (uint32_t i = 0; i < w->generations; i++)
        most = w->generation_items[i] > most ? w->generation_items[i] : most;
    if (!((double)most > 1.02 * (double)share))
        return 0;
    sbloom_stats est = sbloom_stats_init();
    sbloom_estimate(filter, &est);
    uint64_t window = w->period * w->periods;
    char length[32]; /* as --forget-after takes it: in days, hours, minutes or seconds */
    static const struct {
        uint64_t seconds;
        char unit;
    } units[] = {{86400, 'd'}, {3600, 'h'}, {60, 'm'}, {1, 's'}};
    for (int i = 0; i < 4; i++)
        if (window % units[i].seconds == 0) {
            snprintf(length, sizeof length, "%llu%c",
                     (unsigned long long)(window / units[i].seconds), units[i].unit);
            break;
        }
    fprintf(stderr,
            "warning: one period took %llu distinct %s, more than its share of the %llu planned "
            "a window (%llu a period: the window is %u periods); the false-positive rate is now "
            "about %.3g (planned %.3g): that share of new %s is taken for repeats.\n",
            (unsigned long long)most, what, (unsigned long long)planned, (unsigned long long)share,
            w->periods, est.estimated_fpp, sbloom_planned_fpp(filter), what);
    unsigned long long more = (unsigned long long)(2 * most * w->periods);
    if (path)
        fprintf(stderr,
                "  %s cannot grow in place. Start a new state planned for more, "
                "'--state NEW --forget-after %s --expect %llu' (lines a window, at most a third "
                "of them in one period), or without --expect: the window then grows as lines "
                "come.\n",
                path, length, more);
    else
        fprintf(stderr,
                "  Plan for more (--expect %llu: lines a window, at most a third of them in one "
                "period), or leave --expect out: the window then grows as lines come.\n",
                more);
    return 1;
}

int warn_if_overloaded(const sbloom_t *filter, const char *what, const char *path,
                       uint64_t keys_seen)
{
    sbloom_window w = sbloom_window_init();
    if (sbloom_get_window(filter, &w) == SBLOOM_OK)
        return window_overloaded(filter, &w, what, path);
    uint64_t planned = sbloom_planned_items(filter);
    sbloom_stats est = sbloom_stats_init();
    if (!planned || sbloom_get_layout(filter) == SBLOOM_LAYOUT_SCALABLE ||
        sbloom_estimate(filter, &est) != SBLOOM_OK)
        return 0;
    /* 2% over: the sample's error stays well inside that at any fill worth warning about */
    if (!(est.estimated_items > 1.02 * (double)planned))
        return 0;
    double fpp = sbloom_planned_fpp(filter);
    if (isfinite(est.estimated_items))
        fprintf(stderr,
                "warning: about %.0f distinct %s (estimated from the filter's fill) exceed the "
                "%llu planned; the false-positive rate is now about %.3g (planned %.3g): that "
                "share of new %s is taken for repeats.\n",
                est.estimated_items, what, (unsigned long long)planned, est.estimated_fpp, fpp,
                what);
    else /* every bit set: the fill no longer tells how many */
        fprintf(stderr,
                "warning: far more distinct %s than the %llu planned (every bit of the filter is "
                "set); the false-positive rate is now about %.3g (planned %.3g): every new one "
                "is taken for a repeat.\n",
                what, (unsigned long long)planned, est.estimated_fpp, fpp);
    /* room for twice what came, as far as it can be told */
    double came = isfinite(est.estimated_items) ? est.estimated_items : (double)keys_seen;
    uint64_t more = (uint64_t)(2.0 * fmax(came, (double)keys_seen / 2.0));
    if (path)
        fprintf(stderr,
                "  %s cannot grow in place. Rebuild it with room to spare from the lines it has "
                "seen:\n"
                "    simdbloom build --expect %llu --fpp %g -o %s.new SEEN-LINES... && mv %s.new "
                "%s\n"
                "  or start a new state without --expect, which grows as keys come "
                "(simdbloom dedup --state NEW).\n",
                path, (unsigned long long)more, fpp, path, path, path);
    else
        fprintf(stderr,
                "  Plan for more (--expect %llu), or leave --expect out: the filter then grows "
                "as keys come.\n",
                (unsigned long long)more);
    return 1;
}

int report_full(const sbloom_t *filter, const char *command, const char *done)
{
    sbloom_window w = sbloom_window_init();
    if (sbloom_get_window(filter, &w) == SBLOOM_OK) {
        fprintf(stderr,
                "simdbloom %s: the window is full: a fingerprint window planned for %llu keys a "
                "window takes about a %u-th of them a period (%llu s) and a little more, then "
                "refuses keys; %s. Plan for more (--expect), or use a Bloom window (--layout "
                "bloom), whose rate rises past its plan instead.\n",
                command, (unsigned long long)sbloom_planned_items(filter), w.periods,
                (unsigned long long)w.period, done);
        return EXIT_RUNTIME;
    }
    fprintf(stderr,
            "simdbloom %s: the filter is full: %s, planned for %llu keys, holds %llu, and a key "
            "found no room (a fingerprint filter takes its plan and a little more, then refuses "
            "keys); %s. Plan for more (--expect), or use a Bloom layout (--layout "
            "block512-k16), whose rate rises past its plan instead.\n",
            command, sbloom_layout_name(sbloom_get_layout(filter)),
            (unsigned long long)sbloom_planned_items(filter),
            (unsigned long long)sbloom_items(filter), done);
    return EXIT_RUNTIME;
}
