/* simdbloom info: what a filter file holds, and whether it is intact. */
#include <stdio.h>
#include <time.h>

#include "cli.h"

static const char info_help[] =
    "usage: simdbloom info [--clean] FILTER...\n"
    "       simdbloom info --rewind FILTER...\n"
    "       simdbloom info --redis HOST:PORT[,...] --name NAME [--pass P] [--retry S]\n"
    "                      [--timeout S] [--repair]\n"
    "\n"
    "Prints, for each filter file: layout, size, bits per key (k), items added, fill, distinct\n"
    "items estimated from the fill, the false-positive rate planned and the one estimated now,\n"
    "the checksum status and the instruction set that would run it. For a counting filter the\n"
    "items are adds less removes, the fill counts non-zero counters, and saturated counters\n"
    "are shown; for a scalable filter, each stage; for fingerprint lines, the shares of lookups\n"
    "of absent keys and of keys that read a spare line too (about 5% at their plan, more past\n"
    "it). Temporary files an interrupted save left beside a filter (NAME.tmp.XXXXXX) are\n"
    "named on standard error.\n"
    "  --clean   remove those temporary files (only while no other command is saving the filter)\n"
    "  --rewind  a windowed filter whose window is ahead of this clock (a clock once set ahead,\n"
    "            or set back since: the commands that write it refuse it, naming both times)\n"
    "            is brought back to this clock, saved in place: every line it holds is then\n"
    "            held a whole window from now (longer than promised, never shorter)\n"
    "With --redis, the fleet filter NAME in Redis: its plan, shards, items reported new by all\n"
    "clients, fill, the false-positive rate now, the memory it takes in Redis, and the shards\n"
    "that are missing or damaged (evicted, deleted or overwritten).\n"
    "  --repair  with --redis: reset the damaged shards to empty ones, so that the filter can be\n"
    "            used again; the keys they held are written once more when they come again\n"
    "Exit status 1 if a file cannot be read or is damaged (with --redis: a damaged shard that\n"
    "--repair did not reset).\n";

/* The fraction of a generation's bits that are set. */
static double generation_fill(const sbloom_t *g)
{
    sbloom_stats st = sbloom_stats_init();
    return sbloom_get_stats(g, &st) == SBLOOM_OK ? st.fill : 0.0;
}

static int info_one(const char *path)
{
    sbloom_t *f;
    int rc = load_for_reading(path, &f);
    if (rc != SBLOOM_OK) /* one line, on standard error only */
        return filter_error("read", path, rc);
    window_to_now(path, f, 0); /* (a window ahead of this clock: a warning) */
    sbloom_stats st = sbloom_stats_init();
    sbloom_get_stats(f, &st);
    int counting = sbloom_get_layout(f) == SBLOOM_LAYOUT_COUNTING512;
    int scalable = sbloom_get_layout(f) == SBLOOM_LAYOUT_SCALABLE;
    sbloom_window w = sbloom_window_init();
    int windowed = sbloom_get_window(f, &w) == SBLOOM_OK;
    /* (a scalable filter's stages too; a window of no stages is one of fingerprint entries) */
    int fingerprint = all_stages_fingerprint(f) || (windowed && sbloom_stages(f) == 0);
    char size[32];
    printf("%s:\n", path);
    /* a growing window: its windows (rings) alive, each of the generations; the newest takes keys
     */
    uint32_t rings = windowed ? sbloom_stages(f) / w.generations : 0; /* (0: ages, one) */
    if (windowed)
        printf("  layout            windowed (forgets after %llu s: %u periods of %llu s, %u "
               "generations%s)\n",
               (unsigned long long)(w.period * w.periods), w.periods, (unsigned long long)w.period,
               w.generations,
               sbloom_is_growing(f) ? "; grows as lines come"
               : rings == 0         ? "; fingerprint entries, each with its period"
                                    : "");
    if (windowed && sbloom_is_growing(f))
        printf("  windows           %u alive (the newest takes the lines; an older one answers "
               "until its lines are forgotten)\n",
               rings);
    if (windowed)
        ; /* its layout line is above */
    else if (scalable)
        printf("  layout            scalable (%u stages, grows as keys come)\n", sbloom_stages(f));
    else if (fingerprint)
        printf("  layout            %s (fingerprints: one remainder a key in 64-byte lines; "
               "removes keys)\n",
               sbloom_layout_name(sbloom_get_layout(f)));
    else
        printf("  layout            %s (k = %u %s per key)\n",
               sbloom_layout_name(sbloom_get_layout(f)), sbloom_k(f),
               counting ? "4-bit counters" : "bits");
    printf("  size              %s (%llu bytes)\n", human_bytes(sbloom_bytes(f), size, sizeof size),
           (unsigned long long)sbloom_bytes(f));
    if (counting) {
        printf("  items held        %llu (adds less removes)\n",
               (unsigned long long)sbloom_items(f));
        printf("  saturated         %lld counters stuck at 15\n", (long long)sbloom_saturated(f));
    } else if (fingerprint) {
        printf("  items held        %llu (keys added as new less keys removed)\n",
               (unsigned long long)sbloom_items(f));
    } else {
        printf("  items added       %llu\n", (unsigned long long)sbloom_items(f));
    }
    printf("  fill              %.4f of %s\n", st.fill,
           counting      ? "counters non-zero"
           : fingerprint ? "slots in use"
                         : "bits set");
    printf("  estimated items   %.0f (%s)\n", st.estimated_items,
           fingerprint ? "the entries, counted" : "from the fill");
    for (uint32_t i = 0; scalable && i < sbloom_stages(f); i++) {
        const sbloom_t *stage = sbloom_stage(f, i);
        printf("  stage %-2u          %s, %s, %llu of %llu items, rate %.3g\n", i,
               sbloom_layout_name(sbloom_get_layout(stage)),
               human_bytes(sbloom_bytes(stage), size, sizeof size),
               (unsigned long long)sbloom_items(stage),
               (unsigned long long)sbloom_planned_items(stage), sbloom_planned_fpp(stage));
    }
    for (uint32_t i = 0; windowed && i < w.generations; i++) {
        char began[64] = "not yet in use";
        time_t start = (time_t)w.generation_start[i];
        struct tm tm;
        if (w.generation_start[i] != UINT64_MAX && gmtime_r(&start, &tm))
            strftime(began, sizeof began, "began %Y-%m-%d %H:%M:%S UTC", &tm);
        if (rings == 0) { /* ages: the generations share the lines */
            printf("  generation %-2u     %s, %llu items\n", i, began,
                   (unsigned long long)w.generation_items[i]);
            continue;
        }
        const sbloom_t *g = sbloom_stage(f, (rings - 1) * w.generations + i); /* the newest's */
        printf("  generation %-2u     %s, %s, %llu items, fill %.4f\n", i, began,
               human_bytes(sbloom_bytes(g), size, sizeof size),
               (unsigned long long)w.generation_items[i], generation_fill(g));
    }
    if (windowed && sbloom_is_growing(f))
        printf("  planned           room for %llu items a window so far (the newest window), "
               "false-positive rate %.3g in all\n",
               (unsigned long long)sbloom_planned_items(f), sbloom_planned_fpp(f));
    else if (windowed)
        printf("  planned           %llu items a window at false-positive rate %.3g\n",
               (unsigned long long)sbloom_planned_items(f), sbloom_planned_fpp(f));
    else if (scalable)
        printf("  planned           room for %llu items so far, false-positive rate %.3g in all\n",
               (unsigned long long)sbloom_planned_items(f), sbloom_planned_fpp(f));
    else if (sbloom_planned_items(f))
        printf("  planned           %llu items at false-positive rate %.3g\n",
               (unsigned long long)sbloom_planned_items(f), sbloom_planned_fpp(f));
    else
        printf("  planned           (made by size, no plan)\n");
    printf("  fpp now           %.3g (estimated from the %s)\n", st.estimated_fpp,
           fingerprint ? "lines' entries" : "bits");
    double absent = 0, spare = 0; /* (from a scan of every line) */
    if (fingerprint && sbloom_second_line_shares(f, &absent, &spare) == SBLOOM_OK)
        printf("  second line       %.2f%% of lookups of absent keys, %.2f%% of the keys (read "
               "a spare line too)\n",
               100 * absent, 100 * spare);
    printf("  checksums         header and bits verified\n");
    printf("  isa               %s\n", sbloom_filter_isa(f));
    sbloom_free(f);
    return EXIT_OK;
}

/* --rewind: a windowed filter whose window is ahead of this clock brought back to it, and saved
 * (under the filter's lock: no other writer meanwhile). */
static int rewind_one(const char *path)
{
    int lock;
    int rc = filter_lock(path, "info --rewind", LOCK_FILTER_EXCLUSIVE, 0, 0, &lock);
    if (rc != EXIT_OK)
        return rc;
    sbloom_t *f;
    if ((rc = load_filter(path, &f)) != SBLOOM_OK) {
        filter_unlock(lock);
        return filter_error("load", path, rc);
    }
    sbloom_window before = sbloom_window_init(), after = sbloom_window_init();
    uint64_t now = wall_seconds();
    if (sbloom_get_window(f, &before) != SBLOOM_OK) {
        fprintf(stderr, "simdbloom: %s is a %s filter, which never forgets: nothing to rewind\n",
                path, sbloom_layout_name(sbloom_get_layout(f)));
        rc = EXIT_RUNTIME;
    } else if (before.now <= now) {
        printf("%s: the window is not ahead of this clock: left as it is\n", path);
        rc = EXIT_OK;
    } else if ((rc = sbloom_rewind(f, now)) != SBLOOM_OK ||
               (rc = sbloom_save(f, path)) != SBLOOM_OK) {
        rc = filter_error("rewind", path, rc);
    } else {
        sbloom_get_window(f, &after);
        printf("%s: the window moved back %llu s, to this clock; its %llu lines are held a whole "
               "window from now\n",
               path, (unsigned long long)(before.now - after.now),
               (unsigned long long)sbloom_items(f));
        rc = EXIT_OK;
    }
    sbloom_free(f);
    filter_unlock(lock);
    return rc;
}

int cmd_info(int argc, char **argv)
{
    cli_options o;
    int rc = parse_options("info", info_help, argc, argv,
                           OPT_CLEAN | OPT_REDIS | OPT_REPAIR | OPT_REWIND, &o);
    if (rc >= 0)
        return rc;
#ifdef SIMDBLOOM_WITH_REDIS
    if (o.redis) {
        if (o.nargs)
            return usage_error("info", "--redis takes no FILTER file");
        if (o.clean || o.rewind)
            return usage_error("info", "--clean and --rewind are for filter files; --redis takes "
                                       "--repair");
        return redis_info(&o);
    }
#endif
    if (o.repair)
        return usage_error("info", "--repair goes with --redis");
    if (o.nargs < 1)
        return usage_error("info", "FILTER is missing");
    if (o.rewind && o.clean)
        return usage_error("info", "--rewind and --clean are two runs");
    rc = EXIT_OK;
    for (int i = 0; o.rewind && i < o.nargs; i++)
        if (rewind_one(o.args[i]) != EXIT_OK)
            rc = EXIT_RUNTIME;
    if (o.rewind)
        return rc;
    for (int i = 0; i < o.nargs; i++) {
        if (info_one(o.args[i]) != EXIT_OK)
            rc = EXIT_RUNTIME;
        if (o.clean)
            stale_temporaries_clean(o.args[i]);
        else
            stale_temporaries_warn(o.args[i]);
    }
    return rc;
}
