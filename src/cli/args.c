/* The command line: the options the subcommands share, parsed, and its messages. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "options.h"

int usage_error(const char *command, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "simdbloom: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see 'simdbloom %s --help')\n", command);
    return EXIT_USAGE;
}

/* The longest window --forget-after takes: 100 years (a fleet's expiry times, in milliseconds,
 * must fit Redis's 64-bit signed ones, and no crawl recrawls less often). */
#define LONGEST_WINDOW (UINT64_C(36500) * 86400)

int parse_duration(const char *option, const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(text, &end, 10);
    uint64_t unit = 0;
    if (end != text && text[0] != '-' && text[0] != '+' && errno == 0) {
        if (strcmp(end, "s") == 0) /* a unit is always given: a bare 30 could be days or seconds */
            unit = 1;
        else if (strcmp(end, "m") == 0)
            unit = 60;
        else if (strcmp(end, "h") == 0)
            unit = 3600;
        else if (strcmp(end, "d") == 0)
            unit = 86400;
    }
    if (unit == 0 || n == 0) {
        fprintf(stderr,
                "simdbloom: %s wants a duration: a positive number with its unit, s, m, h or d "
                "(90m, 12h, 30d), not '%s'\n",
                option, text);
        return 0;
    }
    if (n > LONGEST_WINDOW / unit) {
        fprintf(stderr, "simdbloom: %s %s: the longest window is 36500d (100 years)\n", option,
                text);
        return 0;
    }
    /* 3 periods of whole seconds: a line is then held at least D and at most 4/3 D, exactly */
    if ((uint64_t)n * unit % FORGET_PERIODS != 0) {
        fprintf(stderr,
                "simdbloom: %s %s: in seconds, a multiple of 3 (the window is 3 periods of whole "
                "seconds, so that a line is held at most 4/3 of it): 3s, 6s, ..., or in minutes\n",
                option, text);
        return 0;
    }
    *out = (uint64_t)n * unit;
    return 1;
}

int parse_count(const char *option, const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!*text || *text == '-' || *text == '+')
        goto bad;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno || end == text)
        goto bad;
    uint64_t scale = 1;
    switch (*end) {
    case 'k':
    case 'K':
        scale = UINT64_C(1000);
        end++;
        break;
    case 'm':
    case 'M':
        scale = UINT64_C(1000000);
        end++;
        break;
    case 'g':
    case 'G':
        scale = UINT64_C(1000000000);
        end++;
        break;
    case 't':
    case 'T':
        scale = UINT64_C(1000000000000);
        end++;
        break;
    default: break;
    }
    if (*end || value == 0 || value > UINT64_MAX / scale)
        goto bad;
    *out = (uint64_t)value * scale;
    return 1;
bad:
    fprintf(stderr,
            "simdbloom: %s wants a positive whole number (suffix k, M, G or T allowed), "
            "not '%s'\n",
            option, text);
    return 0;
}

int parse_size(const char *option, const char *text, uint64_t *out)
{
    size_t len = strlen(text);
    static const struct {
        const char *suffix;
        unsigned shift;
    } binary[] = {{"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}};
    for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++) {
        if (len > 3 && strcmp(text + len - 3, binary[i].suffix) == 0) {
            char digits[32];
            uint64_t n;
            snprintf(digits, sizeof digits, "%.*s", (int)(len - 3), text);
            if (len - 3 >= sizeof digits || !parse_count(option, digits, &n) ||
                n > UINT64_MAX >> binary[i].shift)
                return 0;
            *out = n << binary[i].shift;
            return 1;
        }
    }
    return parse_count(option, text, out);
}

static int parse_double(const char *text, double *out)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(value))
        return 0;
    *out = value;
    return 1;
}

int parse_rate(const char *option, const char *text, double *out)
{
    if (parse_double(text, out) && *out > 0.0 && *out < 1.0)
        return 1;
    fprintf(stderr,
            "simdbloom: %s wants a rate between 0 and 1 (exclusive), such as 1e-6, "
            "not '%s'\n",
            option, text);
    return 0;
}

int parse_fraction(const char *option, const char *text, double *out)
{
    if (parse_double(text, out) && *out >= 0.0 && *out < 1.0)
        return 1;
    fprintf(stderr, "simdbloom: %s wants a fraction in [0, 1), not '%s'\n", option, text);
    return 0;
}

int parse_layout(const char *option, const char *text, sbloom_layout *out)
{
    if (strcmp(text, "auto") == 0) {
        *out = (sbloom_layout)0;
        return 1;
    }
    int layout = sbloom_layout_from_name(text);
    if (layout == SBLOOM_LAYOUT_WINDOWED) {
        fprintf(stderr,
                "simdbloom: %s: a windowed filter is made by --forget-after, not a layout\n",
                option);
        return 0;
    }
    if (layout > 0 && layout <= SBLOOM_LAYOUT_COUNT) {
        *out = (sbloom_layout)layout;
        return 1;
    }
    fprintf(stderr,
            "simdbloom: %s wants auto, bloom, parquet, block512-k8, block512-k16, counting512, "
            "fp512-r10 .. fp512-r29 or scalable, not '%s'\n",
            option, text);
    return 0;
}

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *human_bytes(uint64_t bytes, char *buf, size_t cap)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = (double)bytes;
    int unit = 0;
    while (value >= 1024.0 && unit < 4) {
        value /= 1024.0;
        unit++;
    }
    if (unit == 0)
        snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, cap, "%.1f %s", value, units[unit]);
    return buf;
}

/* The options every command takes, after each command's own help. */
static const char common_help[] =
    "\n"
    "Every command takes:\n"
    "  -q, --quiet     errors only: no summary, progress or warning on standard error\n"
    "  -v, --verbose   the summary even when standard error is not a terminal (by default a\n"
    "                  summary goes to a terminal only, so pipelines and scripts see nothing)\n"
    "  -h, --help      this text\n";

static int accepts(unsigned allowed, unsigned option, const char *command, const char *arg)
{
    if (allowed & option)
        return 1;
    usage_error(command, "option '%s' does not apply here", arg);
    return 0;
}

/* Every option the commands know. getopt_long (glibc) gives what its users expect: unambiguous
 * abbreviations of long options (--exp 1M), --opt=VALUE, combined short options (-qo FILE),
 * -oFILE, options after the files, and -- ending the options. An option that another command
 * takes is recognized everywhere and then refused by name ("does not apply here"). */
enum {
    KEY_EXPECT = 256,
    KEY_FPP,
    KEY_LAYOUT,
    KEY_STATE,
    KEY_CHECKPOINT,
    KEY_ABSENT,
    KEY_NORMALIZE,
    KEY_THREADS,
    KEY_COUNTING,
    KEY_CLEAN,
    KEY_NO_WAIT,
    KEY_SHARED,
    KEY_REDIS,
    KEY_NAME,
    KEY_PASS,
    KEY_RETRY,
    KEY_TIMEOUT,
    KEY_FORGET,
    KEY_REPAIR,
    KEY_TABLE,
    KEY_SEED,
    KEY_REPEAT,
    KEY_QUICK,
    KEY_JSON,
    KEY_SIZE,
    KEY_ISA,
    KEY_URLS,
    KEY_WINDOW_KEYS,
    KEY_STRICT,
    KEY_REWIND
};
static const struct option long_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"output", required_argument, NULL, 'o'},
    {"expect", required_argument, NULL, KEY_EXPECT},
    {"fpp", required_argument, NULL, KEY_FPP},
    {"layout", required_argument, NULL, KEY_LAYOUT},
    {"state", required_argument, NULL, KEY_STATE},
    {"checkpoint", required_argument, NULL, KEY_CHECKPOINT},
    {"absent", no_argument, NULL, KEY_ABSENT},
    {"normalize", required_argument, NULL, KEY_NORMALIZE},
    {"threads", required_argument, NULL, KEY_THREADS},
    {"counting", no_argument, NULL, KEY_COUNTING},
    {"clean", no_argument, NULL, KEY_CLEAN},
    {"no-wait", no_argument, NULL, KEY_NO_WAIT},
    {"shared", required_argument, NULL, KEY_SHARED},
    {"redis", required_argument, NULL, KEY_REDIS},
    {"name", required_argument, NULL, KEY_NAME},
    {"pass", required_argument, NULL, KEY_PASS},
    {"retry", required_argument, NULL, KEY_RETRY},
    {"timeout", required_argument, NULL, KEY_TIMEOUT},
    {"forget-after", required_argument, NULL, KEY_FORGET},
    {"repair", no_argument, NULL, KEY_REPAIR},
    {"table", no_argument, NULL, KEY_TABLE},
    {"seed", required_argument, NULL, KEY_SEED},
    {"repeat", required_argument, NULL, KEY_REPEAT},
    {"quick", no_argument, NULL, KEY_QUICK},
    {"json", no_argument, NULL, KEY_JSON},
    {"size", required_argument, NULL, KEY_SIZE},
    {"isa", required_argument, NULL, KEY_ISA},
    {"urls", required_argument, NULL, KEY_URLS},
    {"window-keys", required_argument, NULL, KEY_WINDOW_KEYS},
    {"strict", no_argument, NULL, KEY_STRICT},
    {"rewind", no_argument, NULL, KEY_REWIND},
    {NULL, 0, NULL, 0},
};

/* The OPT_* flag an option needs (0: every command takes it). */
static unsigned flag_of(int key)
{
    switch (key) {
    case 'o': return OPT_OUTPUT;
    case KEY_EXPECT: return OPT_EXPECT;
    case KEY_FPP: return OPT_FPP;
    case KEY_LAYOUT: return OPT_LAYOUT;
    case KEY_STATE: return OPT_STATE;
    case KEY_CHECKPOINT: return OPT_CHECKPOINT;
    case KEY_ABSENT: return OPT_ABSENT;
    case KEY_NORMALIZE: return OPT_NORMALIZE;
    case KEY_THREADS: return OPT_THREADS;
    case KEY_COUNTING: return OPT_COUNTING;
    case KEY_CLEAN: return OPT_CLEAN;
    case KEY_NO_WAIT: return OPT_NO_WAIT;
    case KEY_SHARED: return OPT_SHARED;
    case KEY_REDIS:
    case KEY_NAME:
    case KEY_PASS:
    case KEY_RETRY:
    case KEY_TIMEOUT: return OPT_REDIS;
    case KEY_FORGET: return OPT_FORGET;
    case KEY_REPAIR: return OPT_REPAIR;
    case KEY_TABLE: return OPT_TABLE;
    case KEY_SEED:
    case KEY_REPEAT: return OPT_GEN;
    case KEY_QUICK:
    case KEY_JSON:
    case KEY_SIZE:
    case KEY_ISA:
    case KEY_URLS:
    case KEY_WINDOW_KEYS: return OPT_BENCH;
    case KEY_STRICT: return OPT_STRICT;
    case KEY_REWIND: return OPT_REWIND;
    default: return 0;
    }
}

/* The option's name as the user should read it: "--expect", or "-o". */
static const char *name_of(int key)
{
    static char name[40];
    for (const struct option *o = long_options; o->name; o++)
        if (o->val == key) {
            snprintf(name, sizeof name, "--%s", o->name);
            return name;
        }
    snprintf(name, sizeof name, "-%c", key);
    return name;
}

/* One option and its value into o: EXIT_OK, or EXIT_USAGE after a message. */
static int take_option(const char *command, int key, const char *value, cli_options *o)
{
    const char *name = name_of(key);
    uint64_t count;
    switch (key) {
    case 'q': o->quiet = 1; break;
    case 'v': o->verbose = 1; break;
    case 'o': o->output = value; break;
    case KEY_EXPECT:
        if (!parse_count(name, value, &o->expect))
            return EXIT_USAGE;
        o->expect_given = 1;
        break;
    case KEY_FPP:
        if (!parse_rate(name, value, &o->fpp))
            return EXIT_USAGE;
        o->fpp_given = 1;
        break;
    case KEY_LAYOUT:
        o->bloom_layout = strcmp(value, "bloom") == 0;
        if (o->bloom_layout)
            o->layout = (sbloom_layout)0; /* (planned: the smallest Bloom layout) */
        else if (!parse_layout(name, value, &o->layout))
            return EXIT_USAGE;
        break;
    case KEY_STATE: o->state = value; break;
    case KEY_CHECKPOINT:
        if (!parse_count(name, value, &count))
            return EXIT_USAGE;
        o->checkpoint = (double)count;
        break;
    case KEY_ABSENT: o->absent = 1; break;
    case KEY_NORMALIZE:
        if (strcmp(value, "url") != 0)
            return usage_error(command, "--normalize knows 'url', not '%s'", value);
        o->normalize = 1;
        break;
    case KEY_THREADS: {
        /* 0: every core, as in the library (sbloom_set_threads) */
        char *end;
        errno = 0;
        unsigned long long threads = strtoull(value, &end, 10);
        if (!*value || *value == '-' || *end || errno || threads > 32)
            return usage_error(command, "--threads takes 0 (every core) to 32, not '%s'", value);
        if (threads == 0) {
            long cores = sysconf(_SC_NPROCESSORS_ONLN);
            threads = cores > 0 ? (unsigned long long)(cores < 32 ? cores : 32) : 1;
        }
        o->threads = (unsigned)threads;
        break;
    }
    case KEY_COUNTING: o->counting = 1; break;
    case KEY_CLEAN: o->clean = 1; break;
    case KEY_NO_WAIT: o->no_wait = 1; break;
    case KEY_SHARED: o->shared = value; break;
    case KEY_REDIS:
    case KEY_NAME:
    case KEY_PASS:
    case KEY_RETRY:
    case KEY_TIMEOUT:
#ifndef SIMDBLOOM_WITH_REDIS
        fprintf(stderr,
                "simdbloom: %s: this simdbloom was built without Redis support (build it with "
                "libhiredis-dev installed)\n",
                name);
        return EXIT_USAGE;
#endif
        if (key == KEY_REDIS)
            o->redis = value;
        else if (key == KEY_NAME)
            o->redis_name = value;
        else if (key == KEY_PASS)
            o->redis_pass = value;
        else if (!parse_count(name, value, &count)) /* seconds, at least 1 */
            return EXIT_USAGE;
        else
            *(key == KEY_RETRY ? &o->redis_retry : &o->redis_timeout) = (double)count;
        break;
    case KEY_FORGET:
        if (!parse_duration(name, value, &o->forget_after))
            return EXIT_USAGE;
        break;
    case KEY_REPAIR: o->repair = 1; break;
    case KEY_REWIND: o->rewind = 1; break;
    case KEY_TABLE: o->table = 1; break;
    case KEY_SEED:
        if (!parse_count(name, value, &o->seed))
            return EXIT_USAGE;
        break;
    case KEY_REPEAT:
        if (!parse_fraction(name, value, &o->repeat))
            return EXIT_USAGE;
        break;
    case KEY_QUICK: o->quick = 1; break;
    case KEY_JSON: o->json = 1; break;
    case KEY_SIZE:
        if (!parse_size(name, value, &o->size))
            return EXIT_USAGE;
        break;
    case KEY_ISA: o->isa = value; break;
    case KEY_URLS: o->urls = value; break;
    case KEY_WINDOW_KEYS:
        if (!parse_count(name, value, &o->window_keys))
            return EXIT_USAGE;
        break;
    case KEY_STRICT: o->strict = 1; break;
    default: break;
    }
    return EXIT_OK;
}

int parse_options(const char *command, const char *help, int argc, char **argv, unsigned allowed,
                  cli_options *o)
{
    memset(o, 0, sizeof *o);
    o->expect = DEFAULT_EXPECT;
    o->fpp = DEFAULT_FPP;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    o->threads = cores > 0 ? (unsigned)(cores < 32 ? cores : 32) : 1;
    o->seed = 1;
    opterr = 0; /* the messages are ours, naming the command */
    optind = 1;
    int key;
    while ((key = getopt_long(argc, argv, ":hqvo:", long_options, NULL)) != -1) {
        const char *arg = argv[optind - 1];
        if (key == 'h') {
            fputs(help, stdout);
            fputs(common_help, stdout);
            return EXIT_OK;
        }
        if (key == '?') {
            if (optopt && optopt < 256)
                return usage_error(command, "unknown option '-%c'", optopt);
            return usage_error(command, "unknown or ambiguous option '%s'", arg);
        }
        if (key == ':') {
            fprintf(stderr, "simdbloom: option %s needs a value\n",
                    optopt && optopt < 256 ? name_of(optopt) : arg);
            return EXIT_USAGE;
        }
        if (flag_of(key) && !accepts(allowed, flag_of(key), command, name_of(key)))
            return EXIT_USAGE;
        int rc = take_option(command, key, optarg, o);
        if (rc != EXIT_OK)
            return rc;
    }
    o->args = argv + optind; /* getopt put the files last, in their order */
    o->nargs = argc - optind;
    /* summaries are for a person: on a terminal, or when asked for (zstd and cp are silent) */
    o->summary = !o->quiet && (o->verbose || isatty(STDERR_FILENO));
    if (o->redis && !o->redis_name)
        return usage_error(command, "--redis needs --name NAME (the filter's name in Redis)");
    if (!o->redis && (o->redis_name || o->redis_pass || o->redis_retry > 0 || o->redis_timeout > 0))
        return usage_error(command, "--name, --pass, --retry and --timeout go with --redis");
    return -1;
}
