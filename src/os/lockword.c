/*
 * Lock words: spin locks in memory that the threads of one process, or the processes mapping one
 * filter file, share (the concurrent mode's stripes, a windowed mapping's clock lock). A word is
 * 0 when free, else its holder's token: 1 between threads, the holder's process ID between
 * processes.
 *
 * A process killed while it holds a word leaves its ID there. Whether that holder still lives is
 * told by the kernel, not guessed from the ID: every process that shares a file's locks holds a
 * read lock (an open file description lock, F_OFD_SETLK) on byte SBLOOM_LIVENESS_AT + its ID of
 * the lock file, which the kernel drops when the process dies, however it dies. A word whose
 * holder has no such lock is stale and is taken over, even when a new process has been given the
 * same ID (IDs are reused) or the ID belongs to another user. Memory shared without a lock file
 * (sbloom_set_concurrent_shared) asks kill(2) instead, where a reused ID looks alive.
 *
 * A wait for a holder that lives (a process stopped or stuck while it holds the word) is bounded:
 * after SIMDBLOOM_LOCK_WAIT seconds (default 30) the lock fails with SBLOOM_E_LOCKED, naming the
 * holder, and so does a wait in which a signal handler ran (a waiting thread sleeps, and the
 * signal ends the sleep), so that a program asked to stop is not held by another.
 */
#define _GNU_SOURCE /* F_OFD_SETLK, F_OFD_GETLK, kill */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../base/fault.h"
#include "os.h"

/* The byte range lock on pid's liveness byte: F_RDLCK to hold, F_WRLCK to ask who holds it. */
static struct flock liveness_byte(uint32_t pid, short type)
{
    struct flock l = {0};
    l.l_type = type;
    l.l_whence = SEEK_SET;
    l.l_start = (off_t)(SBLOOM_LIVENESS_AT + (uint64_t)pid);
    l.l_len = 1;
    return l;
}

int sbloom_lock_file_join(const char *path, int *fd_out)
{
    int fd, rc = sbloom_lock_file_open(path, &fd);
    if (rc != SBLOOM_OK)
        return rc;
    struct flock l = liveness_byte((uint32_t)getpid(), F_RDLCK);
    if (fcntl(fd, F_OFD_SETLK, &l) != 0) {
        /* a kernel without open file description locks (before Linux 3.15): kill(2) then */
        close(fd);
        fd = -1;
    }
    *fd_out = fd;
    return SBLOOM_OK;
}

int sbloom_lock_file_attach(const char *path, void **map, int *liveness_fd)
{
    int fd, rc = sbloom_lock_file_open(path, &fd);
    if (rc == SBLOOM_OK)
        rc = sbloom_map_fd(fd, SBLOOM_LOCK_FILE_BYTES, 1, map); /* (closes fd) */
    if (rc == SBLOOM_OK && (rc = sbloom_lock_file_join(path, liveness_fd)) != SBLOOM_OK) {
        int saved = errno;
        sbloom_unmap_file(*map, SBLOOM_LOCK_FILE_BYTES);
        errno = saved;
    }
    return rc;
}

void sbloom_lock_self_init(sbloom_lock_self *self, int across, int liveness_fd)
{
    self->across = across;
    self->liveness_fd = liveness_fd;
    self->pid = across ? (uint32_t)getpid() : 0;
}

/* A process forked after it joined holds no liveness byte of its own (the lock is its parent's
 * open file description's): it joins now, through a description of its own of the same file. */
static void join_after_fork(sbloom_lock_self *self, uint32_t me)
{
    uint32_t was = __atomic_load_n(&self->pid, __ATOMIC_ACQUIRE);
    if (was == me ||
        !__atomic_compare_exchange_n(&self->pid, &was, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return; /* (another thread of this process joins) */
    int old = self->liveness_fd, fd = -1;
    if (old >= 0) {
        char name[64];
        snprintf(name, sizeof name, "/proc/self/fd/%d", old);
        fd = open(name, O_RDWR | O_CLOEXEC);
        struct flock l = liveness_byte(me, F_RDLCK);
        if (fd >= 0 && fcntl(fd, F_OFD_SETLK, &l) != 0) {
            close(fd);
            fd = -1;
        }
        close(old); /* (the parent's description stays open in the parent, its lock with it) */
    }
    __atomic_store_n(&self->liveness_fd, fd, __ATOMIC_RELEASE);
}

uint32_t sbloom_lock_token(sbloom_lock_self *self)
{
    if (!self->across)
        return 1;
    uint32_t me = (uint32_t)getpid();
    if (me != __atomic_load_n(&self->pid, __ATOMIC_ACQUIRE))
        join_after_fork(self, me);
    return me;
}

/* 1 when the process `pid` no longer holds the word it left (the word's holder is stale). */
static int holder_gone(const sbloom_lock_self *self, uint32_t pid)
{
    int fd = __atomic_load_n(&self->liveness_fd, __ATOMIC_ACQUIRE);
    if (fd >= 0) {
        struct flock l = liveness_byte(pid, F_WRLCK);
        if (fcntl(fd, F_OFD_GETLK, &l) == 0)
            return l.l_type == F_UNLCK; /* nobody holds pid's byte: not a process sharing it */
    }
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* The longest wait for a holder that lives, in seconds: SIMDBLOOM_LOCK_WAIT, else 30. */
static double wait_bound(void)
{
    static double bound; /* (read once; a race only reads the environment twice) */
    if (bound == 0) {
        const char *text = getenv("SIMDBLOOM_LOCK_WAIT");
        char *end;
        double v = text ? strtod(text, &end) : 0;
        bound = text && end != text && *end == '\0' && v > 0 ? v : 30.0;
    }
    return bound;
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Spins a waiter makes before it asks whether the holder lives (critical sections are a few
 * nanoseconds, a rotation's clear of a stripe a few microseconds), then sleeps between asks; on a
 * loaded machine each yield may last a time slice, so the spins end after SPIN_SECONDS too: the
 * sleeps are where a stop signal finds a waiter (src/cli/stop.c gives it a second). */
#define SPINS_FIRST 16384
#define SPIN_SECONDS 0.002
#define SLEEP_NS 1000000

/* A word just taken: across processes, where a test may kill the holder (src/base/fault.h). */
static int taken(const sbloom_lock_self *self)
{
    if (self->across)
        sbloom_fault_point(SBLOOM_FAULT_LOCKED);
    return SBLOOM_OK;
}

/* The last holder this thread found gone. A process that dies holding the stripes leaves its ID
 * in many words; each such word is asked about at once instead of after SPINS_FIRST spins (on a
 * loaded machine those spins, with their yields, took ~7 ms a word: 30 s for 4,096 stripes). The
 * ask itself still decides, so an ID given to a new worker since is waited for as usual. */
static _Thread_local uint32_t last_gone;

int sbloom_lock_word(uint32_t *word, uint32_t token, const sbloom_lock_self *self)
{
    unsigned spins = 0;
    double began = 0, spinning_since = 0;
    for (;;) {
        uint32_t holder = 0; /* (a failed exchange leaves the word's holder here) */
        if (__atomic_compare_exchange_n(word, &holder, token, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return taken(self);
        if (holder == 0)
            continue;
        sbloom_cpu_relax();
        if (++spins % 64 == 0) {
            sched_yield(); /* the holder may be waiting for this core */
            if (self->across && spins < SPINS_FIRST) {
                double now = seconds_now();
                if (spinning_since == 0)
                    spinning_since = now;
                else if (now - spinning_since > SPIN_SECONDS)
                    spins = SPINS_FIRST; /* (a loaded machine: on to the asks and sleeps) */
            }
        }
        if (!self->across || (spins < SPINS_FIRST && holder != last_gone))
            continue;
        /* across processes, a while on: a dead holder's word is taken over; a live holder is
         * waited for in sleeps (where a signal finds the waiter), up to the bound */
        if (holder != token && holder_gone(self, holder)) {
            last_gone = holder;
            if (__atomic_compare_exchange_n(word, &holder, token, 0, __ATOMIC_ACQUIRE,
                                            __ATOMIC_RELAXED))
                return taken(self);
            continue;
        }
        if (holder == last_gone)
            last_gone = 0; /* (its ID went to a live worker: waited for, spins first) */
        double now = seconds_now();
        if (began == 0)
            began = now;
        struct timespec pause = {0, SLEEP_NS};
        int interrupted = nanosleep(&pause, NULL) != 0 && errno == EINTR;
        if (interrupted || now - began > wait_bound())
            return sbloom_fail_with(
                SBLOOM_E_LOCKED,
                "%s process %u, which holds one of the filter's locks and is alive: stopped or "
                "stuck%s",
                interrupted ? "a signal came while waiting for" : "waited too long for", holder,
                interrupted ? "" : " (SIMDBLOOM_LOCK_WAIT sets how long to wait, in seconds)");
    }
}

void sbloom_unlock_word(uint32_t *word)
{
    __atomic_store_n(word, 0, __ATOMIC_RELEASE);
}
