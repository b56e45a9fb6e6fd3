/*
 * The file system calls a program makes, recorded in order, with a failure injected on request:
 * durability checked without a power cut. A test program is linked with
 * -Wl,--wrap=open,--wrap=write,... (TRACE_SYSCALLS_WRAP in tests/CMakeLists.txt): every call of
 * those functions from its objects and the static library goes to trace_syscalls.c, which records
 * it and then makes the real call, or fails it.
 *
 * In a C test: trace_start(), the calls under test, trace_stop(), then read the events. In a
 * program (the command line's traced build), from the environment:
 *   SIMDBLOOM_TRACE=FILE              append one line per event to FILE ("fsync /dir/out")
 *   SIMDBLOOM_TRACE_FAIL=OP:N:ERRNO   the Nth call of OP fails with ERRNO (a number)
 *   SIMDBLOOM_TRACE_EXIT=OP:N         _exit(99) just after the Nth call of OP returns: a crash
 *                                     at the worst moment, without buffers flushed
 *   SIMDBLOOM_TRACE_CLOCK_STEP=S      every clock_gettime reads S seconds later than the last:
 *                                     timers (checkpoints) fire at every check
 *   SIMDBLOOM_TRACE_KILL=STEP:N       SIGKILL at the Nth pass of a step of the claims journal's
 *                                     protocol (claims_step in src/cli/cli.h: intent, claimed,
 *                                     taken, output, written)
 * One thread at a time: the calls traced are made by one thread in the programs that use it.
 */
#ifndef SIMDBLOOM_TRACE_SYSCALLS_H
#define SIMDBLOOM_TRACE_SYSCALLS_H

#include <stddef.h>

typedef enum trace_op {
    TRACE_OPEN,   /* path: the file; created: 1 with O_CREAT */
    TRACE_WRITE,  /* fd's path (write, pwrite and writev) */
    TRACE_FSYNC,  /* fd's path (fsync and fdatasync) */
    TRACE_CLOSE,  /* fd's path */
    TRACE_RENAME, /* path -> to */
    TRACE_UNLINK, /* path */
    TRACE_MSYNC,  /* path of the mapping's file if known, else "" */
    TRACE_MUNMAP, /* the same */
    TRACE_NOPS
} trace_op;

typedef struct trace_event {
    trace_op op;
    int fd;      /* the descriptor, or -1 */
    int created; /* TRACE_OPEN with O_CREAT */
    int failed;  /* the call returned an error (injected or real) */
    char path[512];
    char to[512];
} trace_event;

/* Recording: start clears the log. */
void trace_start(void);
void trace_stop(void);
size_t trace_count(void);
const trace_event *trace_at(size_t i);
const char *trace_op_name(trace_op op);
/* The nth call (from 1, counted from trace_start) of op fails with errno err; 0 clears it. */
void trace_fail(trace_op op, unsigned nth, int err);
/* Prints the log, one event a line, to standard error (for a failing test). */
void trace_dump(void);

#endif
