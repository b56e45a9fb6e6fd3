/* What the simdbloom command's files share. */
#ifndef SIMDBLOOM_CLI_H
#define SIMDBLOOM_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "simdbloom.h"

/* Exit codes of every subcommand. */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

/* Subcommands: each takes its own argv (argv[0] is the subcommand's name). */
int cmd_dedup(int argc, char **argv);
int cmd_gen_urls(int argc, char **argv);
int cmd_plan(int argc, char **argv);

/* args.c: parsing that prints "simdbloom: ..." on failure and returns 0; 1 on success. */
int parse_count(const char *option, const char *text, uint64_t *out); /* 10000, 10k, 5M, 2G */
int parse_rate(const char *option, const char *text, double *out);    /* in (0, 1) */
int parse_fraction(const char *option, const char *text, double *out); /* in [0, 1) */
int parse_layout(const char *option, const char *text, sbloom_layout *out); /* 0 = auto */
/* The value of option argv[*i] ("--x V" or "--x=V"), advancing *i; NULL with a message if absent. */
const char *option_value(int argc, char **argv, int *i, const char *name);
/* 1 if argv[i] is --name or --name=..., the form option_value accepts. */
int is_option(const char *arg, const char *name);
/* Prints "simdbloom: <message>" and a hint to --help; returns EXIT_USAGE. */
int usage_error(const char *command, const char *fmt, ...);
/* Seconds on a monotonic clock. */
double now_seconds(void);
/* "1.5 MiB" style; buf of at least 32 bytes. */
const char *human_bytes(uint64_t bytes, char *buf, size_t cap);

/* lines.c: a reader that hands out batches of complete lines from a file or stdin. A line is
 * what lies between newlines, without the '\n'; a last line without one still counts. Lines of
 * any length (memory permitting) and any bytes, NUL included, come back whole. */
typedef struct line_reader {
    int fd;
    int eof;
    const char *name;
    char *buf;
    size_t cap, start, end;
    uint64_t bytes_read;
} line_reader;

/* Opens path ("-" = standard input); 0 on success, -1 with errno set. */
int line_reader_open(line_reader *r, const char *path);
/* Up to max lines into lines/lens, valid until the next call; returns the count, 0 at the end,
 * -1 with errno set on a read error or when memory runs out. */
long line_reader_next(line_reader *r, const char **lines, size_t *lens, size_t max);
void line_reader_close(line_reader *r);

#endif
