/* The command line (args.c): the options the subcommands share, and their parsing. */
#ifndef SIMDBLOOM_CLI_OPTIONS_H
#define SIMDBLOOM_CLI_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "simdbloom.h"
#include "status.h"

/* args.c: the options the subcommands share. Options may come anywhere before "--"; every other
 * argument is collected, in order, into args. */
enum {
    OPT_EXPECT = 1 << 0,     /* --expect N */
    OPT_FPP = 1 << 1,        /* --fpp P */
    OPT_LAYOUT = 1 << 2,     /* --layout L */
    OPT_QUIET = 1 << 3,      /* --quiet, -q */
    OPT_OUTPUT = 1 << 4,     /* -o FILE, --output FILE */
    OPT_STATE = 1 << 5,      /* --state FILTER */
    OPT_CHECKPOINT = 1 << 6, /* --checkpoint SECONDS */
    OPT_ABSENT = 1 << 7,     /* --absent */
    OPT_NORMALIZE = 1 << 8,  /* --normalize url */
    OPT_THREADS = 1 << 9,    /* --threads N */
    OPT_COUNTING = 1 << 10,  /* --counting */
    OPT_CLEAN = 1 << 11,     /* --clean */
    OPT_NO_WAIT = 1 << 12,   /* --no-wait */
    OPT_SHARED = 1 << 13,    /* --shared FILTER */
    OPT_REDIS = 1 << 14,     /* --redis NODES --name NAME [--pass P] [--retry S] [--timeout S] */
    OPT_FORGET = 1 << 15,    /* --forget-after DURATION */
    OPT_REPAIR = 1 << 16,    /* --repair */
    OPT_TABLE = 1 << 17,     /* --table (plan) */
    OPT_GEN = 1 << 18,       /* --seed S --repeat FRACTION (gen-urls) */
    OPT_BENCH = 1 << 19,     /* --quick --json --size --isa --urls --window-keys (bench) */
    OPT_STRICT = 1 << 20,    /* --strict */
    OPT_REWIND = 1 << 21,    /* --rewind (info) */
};
/* The periods of a window --forget-after makes: a key is forgotten between the duration and
 * 4/3 of it. Three periods keep four generations, the windowed filter's one-line form (a lookup
 * reads one cache line, as a plain filter's does: src/modes/windowed.c). */
#define FORGET_PERIODS 3
/* --forget-after without --expect: a window that grows (sbloom_create_windowed_scalable) from
 * this many lines a window, as dedup's scalable filter grows from 1M lines. */
#define FORGET_FIRST_WINDOW UINT64_C(1000000)

#define DEFAULT_EXPECT UINT64_C(10000000)
#define DEFAULT_FPP 1e-6

typedef struct cli_options {
    uint64_t expect;
    double fpp;
    sbloom_layout layout; /* 0 = auto */
    int bloom_layout;     /* --layout bloom: the smallest Bloom (bit) layout of the plan */
    int quiet, absent, fpp_given, expect_given, normalize, counting, clean, no_wait, repair;
    int rewind;
    int verbose;            /* -v: the summary even when standard error is not a terminal */
    int strict;             /* --strict: exit 3 when more distinct keys came than planned */
    int table;              /* plan --table */
    uint64_t seed;          /* gen-urls --seed (default 1) */
    double repeat;          /* gen-urls --repeat */
    int quick, json;        /* bench --quick, --json */
    uint64_t size;          /* bench --size (0: none) */
    const char *isa, *urls; /* bench --isa, --urls */
    uint64_t window_keys;   /* bench --window-keys (0: 1M, and 100M in a full run) */
    int summary;      /* print the summary: not quiet, and verbose or standard error a terminal */
    unsigned threads; /* default: the cores online */
    const char *output, *state, *shared;
    double checkpoint;                           /* seconds, 0 = only at the end */
    uint64_t forget_after;                       /* --forget-after, in seconds; 0: never */
    const char *redis, *redis_name, *redis_pass; /* --redis, --name, --pass */
    double redis_retry;                          /* --retry SECONDS (0: the library's 30) */
    double redis_timeout;                        /* --timeout SECONDS (0: the library's 5) */
    int nargs;
    char **args;
} cli_options;

/* Parses argv for `command`, accepting the options in `allowed`. Returns -1 to go on, or the exit
 * status to return at once (0 after --help, EXIT_USAGE after a message). */
int parse_options(const char *command, const char *help, int argc, char **argv, unsigned allowed,
                  cli_options *o);
/* Whether --layout named a layout, or asked for a Bloom one (--layout bloom). */
static inline int layout_given(const cli_options *o)
{
    return o->layout || o->bloom_layout;
}

/* args.c: parsing that prints "simdbloom: ..." on failure and returns 0; 1 on success. */
int parse_count(const char *option, const char *text, uint64_t *out); /* 10000, 10k, 5M, 2G */
/* A size in bytes: parse_count's suffixes (powers of 1000), or KiB, MiB, GiB, TiB (of 1024). */
int parse_size(const char *option, const char *text, uint64_t *out);
int parse_duration(const char *option, const char *text,
                   uint64_t *out);                                     /* 90m, 12h, 30d: seconds */
int parse_rate(const char *option, const char *text, double *out);     /* in (0, 1) */
int parse_fraction(const char *option, const char *text, double *out); /* in [0, 1) */
int parse_layout(const char *option, const char *text, sbloom_layout *out); /* 0 = auto */
/* Prints "simdbloom: <message>" and a hint to --help; returns EXIT_USAGE. */
int usage_error(const char *command, const char *fmt, ...);

#endif /* SIMDBLOOM_CLI_OPTIONS_H */
