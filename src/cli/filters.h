/* Filters as the subcommands make, load and check them (filters.c), the overload and full
 * messages (overload.c), and the temporaries an interrupted save left (stale.c). */
#ifndef SIMDBLOOM_CLI_FILTERS_H
#define SIMDBLOOM_CLI_FILTERS_H

#include "options.h"

/* FILTER.allow, the allow-list beside a filter file (a new string; NULL when out of memory). */
char *allowlist_path(const char *filter_path);
/* Prints a one-line message for a library error on a file ("cannot load F: ..."), with errno's
 * text for SBLOOM_E_IO; returns EXIT_RUNTIME. */
int filter_error(const char *doing, const char *path, int rc);
/* 1 for the fingerprint layouts (fp512-r*): those that set no bits (k 0) and are one core. */
static inline int is_fingerprint_layout(sbloom_layout layout)
{
    return layout >= SBLOOM_LAYOUT_FP512_R10 && layout <= SBLOOM_LAYOUT_FP512_R29;
}
/* The stages of the filter (its one core, or a scalable filter's stages) of a fingerprint
 * layout; all of them: it removes keys, and its fill counts slots. */
static inline uint32_t fingerprint_stages(const sbloom_t *f)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < sbloom_stages(f); i++)
        n += is_fingerprint_layout(sbloom_get_layout(sbloom_stage(f, i)));
    return n;
}
static inline int all_stages_fingerprint(const sbloom_t *f)
{
    return sbloom_stages(f) > 0 && fingerprint_stages(f) == sbloom_stages(f);
}
/* A new filter from the options' plan (expect, fpp, layout): without a layout the smallest bit
 * layout, or with any_family the smallest of every family (a fingerprint layout at low rates);
 * returns an exit status (EXIT_OK, or EXIT_USAGE / EXIT_RUNTIME after a message). */
int create_planned(const cli_options *o, sbloom_t **out, int any_family);
/* A new filter that grows from `first` lines at --fpp (no --expect): its stages the smallest of
 * every family (fingerprint stages at low rates), or with --layout bloom Bloom ones; returns an
 * exit status (EXIT_RUNTIME after a message). */
int create_growing(const cli_options *o, sbloom_t **out, uint64_t first);
/* The period --forget-after D asks for: D / FORGET_PERIODS, rounded up. */
uint64_t forget_period(const cli_options *o);
/* A windowed filter for --forget-after (FORGET_PERIODS periods), its clock the wall clock:
 * planned for --expect lines a window (with any_family, and no --layout bloom, a fingerprint
 * window where it is smaller), or without it growing from FORGET_FIRST_WINDOW. */
int create_windowed(const cli_options *o, sbloom_t **out, int any_family);
/* With --forget-after: EXIT_OK when the filter at path is windowed with the window the option
 * asks for, else a message naming both and EXIT_RUNTIME. EXIT_OK without the option. */
int check_forget_after(const cli_options *o, const char *path, const sbloom_t *f);
/* The wall clock, in seconds since the epoch: the clock of the command's windowed filters. */
uint64_t wall_seconds(void);
/* sbloom_load (a windowed filter's clock is moved by window_to_now, after). */
int load_filter(const char *path, sbloom_t **out);
/* A windowed filter's clock moved to now (what its window let go of since it was saved is
 * forgotten before the command uses it); nothing for another filter. A window ahead of this
 * clock by more than a quarter period (a clock once set ahead, or set back since: nothing would
 * be forgotten until this clock caught up) is named with both times and the repair (info
 * --rewind): an error (EXIT_RUNTIME) when `refuse`, else a warning (and EXIT_OK). */
int window_to_now(const char *path, sbloom_t *f, int refuse);

/* overload.c: if the filter holds clearly more distinct keys than planned (estimated from its
 * fill), a warning with the rate now expected and advice that works: for a state file (path not
 * NULL) how to rebuild it, else how to plan. `what` names the keys ("lines"); keys_seen (keys
 * read, repeats included) bounds the advice when the filter is too full to count. */
int warn_if_overloaded(const sbloom_t *filter, const char *what, const char *path,
                       uint64_t keys_seen); /* 1 when it warned */
/* The message for a fingerprint filter that refused a key (SBLOOM_E_FULL): what it was planned
 * for and holds, what `done` says became of the input, and what to do. Returns EXIT_RUNTIME. */
int report_full(const sbloom_t *filter, const char *command, const char *done);

/* stale.c: temporary files an interrupted save left beside the filter at path (NAME.tmp.XXXXXX,
 * and .sbloom-tmp.XXXXXX for long names, in the directory of the file a link points to). warn
 * prints one line naming them and how to remove them; clean removes them, printing each; both
 * return how many there were. */
size_t stale_temporaries_warn(const char *path);
size_t stale_temporaries_clean(const char *path);

/* The filter file at path for a command that only reads it (query, info, allow): loaded and
 * verified. */
int load_for_reading(const char *path, sbloom_t **out);
/* SBLOOM_OK when f has a bit layout (a scalable filter passes for merge only); else prints
 * "PATH is a counting filter: COMMAND takes bit filters only" (or the scalable form) and returns
 * EXIT_RUNTIME. */
int require_bit_layout(const char *command, const char *path, const sbloom_t *f);

#endif /* SIMDBLOOM_CLI_FILTERS_H */
