/* The simdbloom command's subcommands, and (for them) every concern of src/cli/ in its header:
 * options.h the command line, filters.h making and loading filters, locks.h a filter file's
 * lock, lines.h and stream.h lines in, output.h lines out, claims.h a shared table's journal,
 * fleet.h the Redis fleet, bench.h the benchmark's rows. The files below the subcommands include
 * only the headers they need. */
#ifndef SIMDBLOOM_CLI_H
#define SIMDBLOOM_CLI_H

#include "bench.h"
#include "claims.h"
#include "filters.h"
#include "fleet.h"
#include "lines.h"
#include "locks.h"
#include "options.h"
#include "output.h"
#include "stream.h"

/* Subcommands: each takes its own argv (argv[0] is the subcommand's name). */
int cmd_dedup(int argc, char **argv);
int cmd_build(int argc, char **argv);
int cmd_add(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_fold(int argc, char **argv);
int cmd_allow(int argc, char **argv);
int cmd_remove(int argc, char **argv);
int cmd_gen_urls(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_bench(int argc, char **argv);

#endif /* SIMDBLOOM_CLI_H */
