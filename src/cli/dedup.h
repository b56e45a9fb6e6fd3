/*
 * Where dedup's table lives (dedup_tables.c): in memory, in a --state file, in a --shared
 * mapping, or in a Redis fleet (--redis). dedup.c runs the lines through whichever the options
 * name, by this one small interface; each back-end locks, opens, checkpoints, finishes and closes
 * its own table. Nothing here is installed.
 */
#ifndef SIMDBLOOM_CLI_DEDUP_H
#define SIMDBLOOM_CLI_DEDUP_H

#include <sys/stat.h>

#include "cli.h"

/* The first stage of the scalable filter dedup grows when no --expect is given. */
#define DEDUP_FIRST_STAGE UINT64_C(1000000)

typedef struct dedup_table dedup_table;

typedef struct dedup_table_ops {
    const char *name;
    int shared; /* other workers write the table too: this worker journals its claims */
    /* Locks and opens (or creates) the table: t->filter (and t->fleet); an exit status, every
     * failure said in one line and nothing left open. */
    int (*open)(dedup_table *t);
    /* After a batch's lines were handed to out: a checkpoint where the table keeps one; NULL:
     * nothing. */
    int (*after_batch)(dedup_table *t, line_writer *out);
    /* At the end of the input, the output flushed (written: every line went out): the table
     * saved or synced; NULL: nothing. An exit status. */
    int (*finish)(dedup_table *t, line_writer *out, int written);
    /* Frees what open made and lets go of the lock. */
    void (*close)(dedup_table *t);
} dedup_table_ops;

struct dedup_table {
    const dedup_table_ops *ops;
    const cli_options *o;
    sbloom_t *filter; /* the table, or with --redis the local filter that hashes lines */
    fleet *fleet;     /* --redis: the table in Redis */
    const char *path; /* the --state or --shared file, or NULL */
    int lock;         /* the file's lock (-1: none) */
    double last_saved;
    struct stat mapped; /* --shared: the file mapped, to tell whether it was replaced */
};

/* The back-end the options ask for (--state, --shared, --redis, or memory). */
const dedup_table_ops *dedup_table_for(const cli_options *o);

#endif /* SIMDBLOOM_CLI_DEDUP_H */
