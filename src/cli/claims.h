/* The claims journal of a worker of a shared table (claims.c), and the steps of its protocol. */
#ifndef SIMDBLOOM_CLI_CLAIMS_H
#define SIMDBLOOM_CLI_CLAIMS_H

#include <stddef.h>
#include <stdint.h>

/* src/cli/claims.c: the journal of the lines a worker of a shared table has claimed and not yet
 * written, so that a rerun after a kill writes them (see the file's comment). claims_open takes
 * the journal named by key in dir, adopting those of dead workers; per window of lines:
 * claims_intend (all its hashes), the test-and-add, claims_taken (those it claimed), the lines
 * handed to the output (with claims_owed true for a line owed by a dead worker: write it), and
 * claims_written. Each returns 0, or -1 with errno. */
typedef struct claims claims;
int claims_open(claims **out, const char *dir, const char *key);
int claims_intend(claims *c, const uint64_t *hashes, size_t n);
int claims_taken(claims *c, const uint64_t *hashes, const uint8_t *is_new, size_t n);
int claims_owed(claims *c, uint64_t hash);
int claims_written(claims *c);
uint64_t claims_adopted(const claims *c);
uint64_t claims_still_owed(const claims *c);
void claims_close(claims *c);

/* The steps of a shared table's claim window (dedup.c): after its intent is journaled
 * ("intent"), the table answered ("claimed"), the claims are journaled ("taken"), its lines are
 * out ("output"), the journal is let go ("written"). Nothing here; the command's traced build
 * (tests/trace_syscalls.c, SIMDBLOOM_TRACE_KILL=STEP:N) kills itself at the Nth pass of a step,
 * so that the tests kill a worker at each step of the protocol rather than at a time. */
void claims_step(const char *step);

#endif /* SIMDBLOOM_CLI_CLAIMS_H */
