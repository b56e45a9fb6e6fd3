/* What every file of the command uses: the exit statuses, a monotonic clock and sizes in words
 * (the last two in args.c). */
#ifndef SIMDBLOOM_CLI_STATUS_H
#define SIMDBLOOM_CLI_STATUS_H

#include <stddef.h>
#include <stdint.h>

/* Exit codes of every subcommand. */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };
/* --strict: done, but more distinct keys came than the filter was planned for (it warned). */
#define EXIT_OVERFULL 3

/* Seconds on a monotonic clock. */
double now_seconds(void);
/* "1.5 MiB" style; buf of at least 32 bytes. */
const char *human_bytes(uint64_t bytes, char *buf, size_t cap);

#endif /* SIMDBLOOM_CLI_STATUS_H */
