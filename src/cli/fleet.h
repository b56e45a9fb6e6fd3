/* The fleet's table in Redis (redis.c), and the subcommands that move filters there. */
#ifndef SIMDBLOOM_CLI_FLEET_H
#define SIMDBLOOM_CLI_FLEET_H

#include "options.h"

/* redis.c (where libsimdbloom-redis is built, SIMDBLOOM_WITH_REDIS): the fleet table in Redis.
 * fleet_open opens (or creates, from --expect/--fpp/--layout, default 10M at 1e-6) the filter
 * --name at --redis, and sets *hasher to a local filter that hashes keys as it does; both print
 * their own messages and return an exit status. fleet_add_if_new returns the keys new, or -1
 * (is_new then as sbloom_redis_add_if_new_hashes leaves it on an error; fleet_message says
 * why). */
typedef struct fleet fleet;
int fleet_open(const cli_options *o, fleet **out, sbloom_t **hasher);
int64_t fleet_add_if_new(fleet *f, const uint64_t *hashes, size_t n, uint8_t *is_new);
const char *fleet_message(const fleet *f); /* the last error's message */
/* The fleet filter's line of the summary (when `summary`), and its overload warning. */
int fleet_summary(fleet *f, int summary); /* 1 when it warned of overload */
void fleet_close(fleet *f);
/* A windowed fleet filter's clock moved to now (nothing for another); an exit status. */
int fleet_advance(fleet *f, uint64_t now);
int redis_info(const cli_options *o);
int cmd_push(int argc, char **argv);
int cmd_pull(int argc, char **argv);

#endif /* SIMDBLOOM_CLI_FLEET_H */
