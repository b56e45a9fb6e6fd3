/* Parsing and messages shared by the subcommands. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    case 'k': case 'K': scale = UINT64_C(1000); end++; break;
    case 'm': case 'M': scale = UINT64_C(1000000); end++; break;
    case 'g': case 'G': scale = UINT64_C(1000000000); end++; break;
    case 't': case 'T': scale = UINT64_C(1000000000000); end++; break;
    default: break;
    }
    if (*end || value == 0 || value > UINT64_MAX / scale)
        goto bad;
    *out = (uint64_t)value * scale;
    return 1;
bad:
    fprintf(stderr, "simdbloom: %s wants a positive whole number (suffix k, M, G or T allowed), "
                    "not '%s'\n", option, text);
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
    fprintf(stderr, "simdbloom: %s wants a rate between 0 and 1 (exclusive), such as 1e-6, "
                    "not '%s'\n", option, text);
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
    if (layout > 0) {
        *out = (sbloom_layout)layout;
        return 1;
    }
    fprintf(stderr, "simdbloom: %s wants auto, parquet, block512-k8 or block512-k16, not '%s'\n",
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
