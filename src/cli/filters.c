/* Filters as the subcommands make, load and check them: from the command line's plan, growing
 * or windowed; loaded (a window brought to the wall clock); refused with one line where a
 * command cannot take their layout; and the library's errors on a file said in one line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "filters.h"
#include "locks.h"

/* What a path that is not a regular file is, for messages ("a FIFO"). */
static const char *file_kind(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return "not a regular file";
    if (S_ISDIR(st.st_mode))
        return "a directory";
    if (S_ISFIFO(st.st_mode))
        return "a FIFO";
    if (S_ISCHR(st.st_mode))
        return "a character device";
    if (S_ISBLK(st.st_mode))
        return "a block device";
    if (S_ISSOCK(st.st_mode))
        return "a socket";
    return "not a regular file";
}

int filter_error(const char *doing, const char *path, int rc)
{
    char holder[256];
    if (rc == SBLOOM_E_CORRUPT && filter_shared_holder(path, holder, sizeof holder))
        fprintf(stderr,
                "simdbloom: cannot %s %s: in use by %s, whose changes are not yet in the file's "
                "checksums (they are when the last --shared worker ends)\n",
                doing, path, holder);
    else if (rc == SBLOOM_E_NOT_REGULAR)
        fprintf(stderr, "simdbloom: cannot %s %s: it is %s, not a regular file\n", doing, path,
                file_kind(path));
    else if (rc == SBLOOM_E_IO)
        fprintf(stderr, "simdbloom: cannot %s %s: %s\n", doing, path, strerror(errno));
    else if (sbloom_error_detail()[0]) /* what the file has wrong, naming the field */
        fprintf(stderr, "simdbloom: cannot %s %s: %s: %s\n", doing, path, sbloom_strerror(rc),
                sbloom_error_detail());
    else
        fprintf(stderr, "simdbloom: cannot %s %s: %s\n", doing, path, sbloom_strerror(rc));
    return EXIT_RUNTIME;
}

/* The exit status for a constructor's result, with the message on failure. */
static int planned_result(const cli_options *o, int rc, const char *what)
{
    if (rc == SBLOOM_OK)
        return EXIT_OK;
    sbloom_plan plan = sbloom_plan_init();
    char size[32];
    int planned = (o->layout         ? sbloom_plan_for_layout(o->expect, o->fpp, o->layout, &plan)
                   : o->bloom_layout ? sbloom_plan_for(o->expect, o->fpp, &plan)
                                     : sbloom_plan_any(o->expect, o->fpp, &plan)) == SBLOOM_OK;
    if (rc == SBLOOM_E_NOMEM && planned) /* the size is what the user can act on */
        fprintf(stderr, "simdbloom: not enough memory for a %s %s (%llu items at rate %g)\n",
                human_bytes(plan.bytes, size, sizeof size), what, (unsigned long long)o->expect,
                o->fpp);
    else
        fprintf(stderr, "simdbloom: cannot create a %s for %llu items at rate %g: %s\n", what,
                (unsigned long long)o->expect, o->fpp, sbloom_strerror(rc));
    /* Out of memory or an unusable SIMDBLOOM_ISA is the machine's fault, not the command's. */
    return rc == SBLOOM_E_NOMEM || rc == SBLOOM_E_ISA ? EXIT_RUNTIME : EXIT_USAGE;
}

/* A layout --layout named that takes this many times the memory of the smallest for the plan
 * (or more) is made as asked, with a warning: a fingerprint layout asked for a rate below its
 * remainder's reach keeps it with nearly empty lines (fp512-r19 at 1e-8: 2,385 bits a key, 65x
 * fp512-r27's 36.8). */
#define LAYOUT_WARN_TIMES 4

static void warn_if_oversized(const cli_options *o, const sbloom_t *f, int any_family)
{
    sbloom_plan smallest = sbloom_plan_init();
    if (!o->layout || o->quiet ||
        (any_family ? sbloom_plan_any(o->expect, o->fpp, &smallest)
                    : sbloom_plan_for(o->expect, o->fpp, &smallest)) != SBLOOM_OK)
        return;
    uint64_t bytes = sbloom_bytes(f);
    if ((double)bytes < LAYOUT_WARN_TIMES * (double)smallest.bytes)
        return;
    char have[32], need[32];
    fprintf(stderr,
            "simdbloom: warning: %s needs %s for %llu items at rate %g, %.0fx the %s of the "
            "smallest layout for that plan (%s)\n",
            sbloom_layout_name(o->layout), human_bytes(bytes, have, sizeof have),
            (unsigned long long)o->expect, o->fpp, (double)bytes / (double)smallest.bytes,
            human_bytes(smallest.bytes, need, sizeof need), sbloom_layout_name(smallest.layout));
}

int create_planned(const cli_options *o, sbloom_t **out, int any_family)
{
    sbloom_opts opts = sbloom_opts_init();
    opts.expected = o->expect;
    opts.fpp = o->fpp;
    opts.layout = o->layout;
    opts.flags = any_family && !o->bloom_layout ? SBLOOM_OPTS_ANY_FAMILY : 0;
    int rc = sbloom_create_opts(out, &opts);
    if (rc == SBLOOM_OK)
        warn_if_oversized(o, *out, any_family);
    return planned_result(o, rc, "filter");
}

int create_growing(const cli_options *o, sbloom_t **out, uint64_t first)
{
    sbloom_opts opts = sbloom_opts_init();
    opts.first = first;
    opts.fpp = o->fpp;
    opts.flags = o->bloom_layout ? 0 : SBLOOM_OPTS_ANY_FAMILY;
    int rc = sbloom_create_opts(out, &opts);
    if (rc == SBLOOM_OK)
        return EXIT_OK;
    return filter_error("create", "a scalable filter", rc);
}

uint64_t forget_period(const cli_options *o)
{
    return o->forget_after / FORGET_PERIODS + (o->forget_after % FORGET_PERIODS != 0);
}

int create_windowed(const cli_options *o, sbloom_t **out, int any_family)
{
    sbloom_opts opts = sbloom_opts_init();
    opts.expected = o->expect_given ? o->expect : 0;
    opts.first = o->expect_given ? 0 : FORGET_FIRST_WINDOW;
    opts.fpp = o->fpp;
    opts.periods = FORGET_PERIODS;
    opts.period = forget_period(o);
    opts.now = wall_seconds();
    opts.flags = any_family && !o->bloom_layout ? SBLOOM_OPTS_ANY_FAMILY : 0;
    return planned_result(o, sbloom_create_opts(out, &opts), "windowed filter");
}

int check_forget_after(const cli_options *o, const char *path, const sbloom_t *f)
{
    if (!o->forget_after)
        return EXIT_OK;
    sbloom_window w = sbloom_window_init();
    if (sbloom_get_window(f, &w) != SBLOOM_OK) {
        fprintf(stderr,
                "simdbloom: %s is a %s filter, which never forgets; --forget-after %llu s asks "
                "for a windowed one (made by build or dedup --state with --forget-after)\n",
                path, sbloom_layout_name(sbloom_get_layout(f)),
                (unsigned long long)o->forget_after);
        return EXIT_RUNTIME;
    }
    /* (a fingerprint window keeps finer periods: 6 of half the period, say) */
    if (w.periods % FORGET_PERIODS == 0 &&
        w.period * (w.periods / FORGET_PERIODS) == forget_period(o))
        return EXIT_OK;
    fprintf(stderr,
            "simdbloom: %s forgets after %llu s (%u periods of %llu s); this run asks for %llu s "
            "(%u periods of %llu s): leave out --forget-after to use the file as it is\n",
            path, (unsigned long long)(w.period * w.periods), w.periods,
            (unsigned long long)w.period, (unsigned long long)o->forget_after, FORGET_PERIODS,
            (unsigned long long)forget_period(o));
    return EXIT_RUNTIME;
}

uint64_t wall_seconds(void)
{
    time_t now = time(NULL);
    return now > 0 ? (uint64_t)now : 0;
}

int load_filter(const char *path, sbloom_t **out)
{
    return sbloom_load(out, path);
}

/* t (seconds since the epoch) as "2026-11-29 10:00:00 UTC". */
static void utc_text(uint64_t t, char *out, size_t cap)
{
    time_t when = (time_t)(t > (uint64_t)INT64_MAX ? INT64_MAX : t);
    struct tm tm;
    if (!gmtime_r(&when, &tm) || strftime(out, cap, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
        snprintf(out, cap, "%llu s after the epoch", (unsigned long long)t);
}

int window_to_now(const char *path, sbloom_t *f, int refuse)
{
    sbloom_window w = sbloom_window_init();
    if (sbloom_get_window(f, &w) != SBLOOM_OK)
        return EXIT_OK;
    uint64_t now = wall_seconds(), tolerance = w.period / 4 + (w.period % 4 != 0);
    if (w.now > now && w.now - now > tolerance) {
        char file[64], clock[64];
        utc_text(w.now, file, sizeof file);
        utc_text(now, clock, sizeof clock);
        fprintf(stderr,
                "simdbloom: %s%s's window is ahead of this clock: its current period began at %s, "
                "and this clock says %s (a clock once set ahead, or set back since); nothing "
                "would be forgotten until this clock got there. If this clock is right, 'simdbloom "
                "info --rewind %s' brings the window back to it (every line it holds is then held "
                "a whole window from now)\n",
                refuse ? "" : "warning: ", path, file, clock, path);
        if (refuse)
            return EXIT_RUNTIME;
    }
    sbloom_advance(f, now); /* what fell out of the window since it was saved */
    return EXIT_OK;
}

/* Read, not mapped: a mapping would die of SIGBUS if another program truncated the file while
 * the command runs (cp onto it does); a read copy cannot. Loading verifies every checksum. */
int load_for_reading(const char *path, sbloom_t **out)
{
    return load_filter(path, out);
}

int require_bit_layout(const char *command, const char *path, const sbloom_t *f)
{
    sbloom_layout layout = sbloom_get_layout(f);
    if (layout == SBLOOM_LAYOUT_COUNTING512)
        fprintf(stderr, "simdbloom: %s is a counting filter: %s takes bit filters only\n", path,
                command);
    else if (is_fingerprint_layout(layout))
        fprintf(stderr,
                "simdbloom: %s is a fingerprint filter (%s): %s takes bit filters only (two "
                "filters' fingerprints have no exact union or fold)\n",
                path, sbloom_layout_name(layout), command);
    else if (layout == SBLOOM_LAYOUT_SCALABLE && fingerprint_stages(f) > 0)
        fprintf(stderr,
                "simdbloom: %s is a scalable filter with fingerprint stages: %s takes bit "
                "filters only (two filters' fingerprints have no exact union or fold)\n",
                path, command);
    else if (layout == SBLOOM_LAYOUT_SCALABLE && strcmp(command, "merge") != 0)
        fprintf(stderr, "simdbloom: %s is a scalable filter: %s takes fixed-size filters only\n",
                path, command);
    else if (layout == SBLOOM_LAYOUT_WINDOWED && strcmp(command, "merge") != 0)
        fprintf(stderr, "simdbloom: %s is a windowed filter: %s takes fixed-size filters only\n",
                path, command);
    else
        return SBLOOM_OK;
    return EXIT_RUNTIME;
}

char *allowlist_path(const char *filter_path)
{
    size_t len = strlen(filter_path);
    char *path = malloc(len + 7);
    if (path) {
        memcpy(path, filter_path, len);
        memcpy(path + len, ".allow", 7);
    }
    return path;
}
