/* Parsing and messages shared by the subcommands. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

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

int is_option(const char *arg, const char *name)
{
    size_t len = strlen(name);
    return strncmp(arg, name, len) == 0 && (arg[len] == '\0' || arg[len] == '=');
}

const char *option_value(int argc, char **argv, int *i, const char *name)
{
    const char *arg = argv[*i];
    size_t len = strlen(name);
    if (arg[len] == '=')
        return arg + len + 1;
    if (*i + 1 >= argc) {
        fprintf(stderr, "simdbloom: option %s needs a value\n", name);
        return NULL;
    }
    return argv[++*i];
}

int parse_duration(const char *option, const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(text, &end, 10);
    uint64_t unit = 0;
    if (end != text && text[0] != '-' && errno == 0) {
        if (strcmp(end, "") == 0 || strcmp(end, "s") == 0)
            unit = 1;
        else if (strcmp(end, "m") == 0)
            unit = 60;
        else if (strcmp(end, "h") == 0)
            unit = 3600;
        else if (strcmp(end, "d") == 0)
            unit = 86400;
    }
    if (unit == 0 || n == 0 || n > UINT64_MAX / unit / 2) {
        fprintf(stderr,
                "simdbloom: %s wants a duration: a positive number with s, m, h or d (90m, 12h, "
                "30d), not '%s'\n",
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
            "simdbloom: %s wants auto, parquet, block512-k8, block512-k16, counting512 or "
            "scalable, not '%s'\n",
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

static int accepts(unsigned allowed, unsigned option, const char *command, const char *arg)
{
    if (allowed & option)
        return 1;
    usage_error(command, "option '%s' does not apply here", arg);
    return 0;
}

int parse_options(const char *command, const char *help, int argc, char **argv, unsigned allowed,
                  cli_options *o)
{
    memset(o, 0, sizeof *o);
    o->expect = DEFAULT_EXPECT;
    o->fpp = DEFAULT_FPP;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    o->threads = cores > 0 ? (unsigned)(cores < 32 ? cores : 32) : 1;
    /* Positional arguments are gathered at the front of argv itself: the one written is never
     * ahead of the one read, so nothing is overwritten before it is seen. */
    o->args = argv + 1;
    int only_files = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value;
        if (only_files || arg[0] != '-' || arg[1] == '\0') {
            o->args[o->nargs++] = argv[i];
        } else if (strcmp(arg, "--") == 0) {
            only_files = 1;
        } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fputs(help, stdout);
            return EXIT_OK;
        } else if (strcmp(arg, "--quiet") == 0 || strcmp(arg, "-q") == 0) {
            if (!accepts(allowed, OPT_QUIET, command, arg))
                return EXIT_USAGE;
            o->quiet = 1;
        } else if (strcmp(arg, "--counting") == 0) {
            if (!accepts(allowed, OPT_COUNTING, command, arg))
                return EXIT_USAGE;
            o->counting = 1;
        } else if (strcmp(arg, "--clean") == 0) {
            if (!accepts(allowed, OPT_CLEAN, command, arg))
                return EXIT_USAGE;
            o->clean = 1;
        } else if (strcmp(arg, "--repair") == 0) {
            if (!accepts(allowed, OPT_REPAIR, command, arg))
                return EXIT_USAGE;
            o->repair = 1;
        } else if (strcmp(arg, "--no-wait") == 0) {
            if (!accepts(allowed, OPT_NO_WAIT, command, arg))
                return EXIT_USAGE;
            o->no_wait = 1;
        } else if (strcmp(arg, "--absent") == 0) {
            if (!accepts(allowed, OPT_ABSENT, command, arg))
                return EXIT_USAGE;
            o->absent = 1;
        } else if (is_option(arg, "--expect")) {
            if (!accepts(allowed, OPT_EXPECT, command, arg) ||
                !(value = option_value(argc, argv, &i, "--expect")) ||
                !parse_count("--expect", value, &o->expect))
                return EXIT_USAGE;
            o->expect_given = 1;
        } else if (is_option(arg, "--fpp")) {
            if (!accepts(allowed, OPT_FPP, command, arg) ||
                !(value = option_value(argc, argv, &i, "--fpp")) ||
                !parse_rate("--fpp", value, &o->fpp))
                return EXIT_USAGE;
            o->fpp_given = 1;
        } else if (is_option(arg, "--layout")) {
            if (!accepts(allowed, OPT_LAYOUT, command, arg) ||
                !(value = option_value(argc, argv, &i, "--layout")) ||
                !parse_layout("--layout", value, &o->layout))
                return EXIT_USAGE;
        } else if (strcmp(arg, "-o") == 0 || is_option(arg, "--output")) {
            if (!accepts(allowed, OPT_OUTPUT, command, arg) ||
                !(o->output = option_value(argc, argv, &i, arg[1] == 'o' ? "-o" : "--output")))
                return EXIT_USAGE;
        } else if (is_option(arg, "--normalize")) {
            if (!accepts(allowed, OPT_NORMALIZE, command, arg) ||
                !(value = option_value(argc, argv, &i, "--normalize")))
                return EXIT_USAGE;
            if (strcmp(value, "url") != 0)
                return usage_error(command, "--normalize knows 'url', not '%s'", value);
            o->normalize = 1;
        } else if (is_option(arg, "--threads")) {
            uint64_t threads;
            if (!accepts(allowed, OPT_THREADS, command, arg) ||
                !(value = option_value(argc, argv, &i, "--threads")) ||
                !parse_count("--threads", value, &threads))
                return EXIT_USAGE;
            if (threads > 32)
                return usage_error(command, "--threads takes 1 to 32, not %s", value);
            o->threads = (unsigned)threads;
        } else if (is_option(arg, "--state")) {
            if (!accepts(allowed, OPT_STATE, command, arg) ||
                !(o->state = option_value(argc, argv, &i, "--state")))
                return EXIT_USAGE;
        } else if (is_option(arg, "--shared")) {
            if (!accepts(allowed, OPT_SHARED, command, arg) ||
                !(o->shared = option_value(argc, argv, &i, "--shared")))
                return EXIT_USAGE;
        } else if (is_option(arg, "--redis") || is_option(arg, "--name") ||
                   is_option(arg, "--pass") || is_option(arg, "--retry")) {
            if (!accepts(allowed, OPT_REDIS, command, arg))
                return EXIT_USAGE;
#ifndef SIMDBLOOM_WITH_REDIS
            fprintf(stderr,
                    "simdbloom: %s: this simdbloom was built without Redis support "
                    "(build it with libhiredis-dev installed)\n",
                    arg);
            return EXIT_USAGE;
#endif
            const char *name = is_option(arg, "--redis")  ? "--redis"
                               : is_option(arg, "--name") ? "--name"
                               : is_option(arg, "--pass") ? "--pass"
                                                          : "--retry";
            if (!(value = option_value(argc, argv, &i, name)))
                return EXIT_USAGE;
            if (strcmp(name, "--redis") == 0)
                o->redis = value;
            else if (strcmp(name, "--name") == 0)
                o->redis_name = value;
            else if (strcmp(name, "--pass") == 0)
                o->redis_pass = value;
            else {
                uint64_t seconds;
                if (!parse_count("--retry", value, &seconds))
                    return EXIT_USAGE;
                o->redis_retry = (double)seconds;
            }
        } else if (is_option(arg, "--forget-after")) {
            if (!accepts(allowed, OPT_FORGET, command, arg) ||
                !(value = option_value(argc, argv, &i, "--forget-after")) ||
                !parse_duration("--forget-after", value, &o->forget_after))
                return EXIT_USAGE;
        } else if (is_option(arg, "--checkpoint")) {
            uint64_t seconds;
            if (!accepts(allowed, OPT_CHECKPOINT, command, arg) ||
                !(value = option_value(argc, argv, &i, "--checkpoint")) ||
                !parse_count("--checkpoint", value, &seconds))
                return EXIT_USAGE;
            o->checkpoint = (double)seconds;
        } else {
            return usage_error(command, "unknown option '%s'", arg);
        }
    }
    if (o->redis && !o->redis_name)
        return usage_error(command, "--redis needs --name NAME (the filter's name in Redis)");
    if (!o->redis && (o->redis_name || o->redis_pass || o->redis_retry > 0))
        return usage_error(command, "--name, --pass and --retry go with --redis");
    return -1;
}

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
    int planned = (o->layout ? sbloom_plan_for_layout(o->expect, o->fpp, o->layout, &plan)
                             : sbloom_plan_for(o->expect, o->fpp, &plan)) == SBLOOM_OK;
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

int create_planned(const cli_options *o, sbloom_t **out)
{
    int rc = o->layout ? sbloom_create_for_layout(out, o->expect, o->fpp, o->layout)
                       : sbloom_create(out, o->expect, o->fpp);
    return planned_result(o, rc, "filter");
}

int create_windowed(const cli_options *o, sbloom_t **out)
{
    uint64_t period = o->forget_after / FORGET_PERIODS + (o->forget_after % FORGET_PERIODS != 0);
    int rc = sbloom_create_windowed(out, o->expect, o->fpp, FORGET_PERIODS, period, wall_seconds());
    return planned_result(o, rc, "windowed filter");
}

uint64_t wall_seconds(void)
{
    time_t now = time(NULL);
    return now > 0 ? (uint64_t)now : 0;
}

int load_filter(const char *path, sbloom_t **out)
{
    int rc = sbloom_load(out, path);
    if (rc == SBLOOM_OK && sbloom_get_layout(*out) == SBLOOM_LAYOUT_WINDOWED)
        sbloom_advance(*out, wall_seconds()); /* what fell out of the window since it was saved */
    return rc;
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
