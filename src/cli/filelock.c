/*
 * Writers of one filter file, one at a time. add, remove, allow and dedup --state read a filter,
 * change it and save it back whole; two of them at once would each save their own copy and one
 * would lose the other's keys. So each takes an exclusive flock(2) for its whole
 * read-modify-write, and dedup --shared processes (which add to one live mapping together) take a
 * shared one. Readers (query, info) take none.
 *
 * The lock is on FILTER.lock (sbloom_lock_file: beside the file links lead to, or a short
 * .sbloom-lock.HASH for names at the length limit), never on the filter itself: a save renames a
 * new file over the filter, so a lock on the filter's inode would be left behind on the old file,
 * and a filter that does not exist yet (dedup --state, --shared) has nothing to lock. The same file
 * holds a one-line note naming the holder (for the message of a writer that waits or gives up), and
 * the library's concurrent-mode locks (SBLOOM_OPEN_CONCURRENT). It is created when absent and never
 * removed: removing a lock file while another process waits on it would let a third lock a new one.
 */
#define _GNU_SOURCE /* O_CLOEXEC, flock in -std=c11 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "filters.h"
#include "locks.h"

/* Bytes of the holder note at the start of FILTER.lock (the library's part starts later). */
#define NOTE_BYTES 256

static void write_note(int fd, const char *command)
{
    char note[NOTE_BYTES];
    memset(note, 0, sizeof note);
    snprintf(note, sizeof note, "pid %ld: simdbloom %s\n", (long)getpid(), command);
    /* best effort: the note only names the holder in other processes' messages */
    if (pwrite(fd, note, sizeof note, 0) < 0)
        return;
}

/* The lock file of path, open (created when absent); EXIT_OK with it in *fd, else a message. */
static int open_lock_file(const char *path, int *fd_out)
{
    char name[PATH_MAX];
    int made = sbloom_lock_file(path, name, sizeof name);
    if (made != SBLOOM_OK)
        return filter_error("lock", path, made);
    int fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
    if (fd < 0) {
        fprintf(stderr, "simdbloom: cannot open the lock file %s: %s\n", name, strerror(errno));
        return EXIT_RUNTIME;
    }
    *fd_out = fd;
    return EXIT_OK;
}

int filter_lock_try(const char *path, const char *command, int mode, int *fd_out)
{
    int fd;
    if (open_lock_file(path, &fd) != EXIT_OK)
        return -1;
    if (flock(fd, (mode == LOCK_FILTER_SHARED ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
        int busy = errno == EWOULDBLOCK;
        if (!busy)
            fprintf(stderr, "simdbloom: cannot lock the lock file of %s: %s\n", path,
                    strerror(errno));
        close(fd);
        return busy ? 0 : -1;
    }
    write_note(fd, command);
    *fd_out = fd;
    return 1;
}

int filter_lock(const char *path, const char *command, int mode, int no_wait, int quiet,
                int *fd_out)
{
    char name[PATH_MAX];
    int fd = -1, made = sbloom_lock_file(path, name, sizeof name);
    if (made != SBLOOM_OK)
        return filter_error("lock", path, made);
    if (open_lock_file(path, &fd) != EXIT_OK)
        return EXIT_RUNTIME;
    int how = mode == LOCK_FILTER_SHARED ? LOCK_SH : LOCK_EX;
    if (flock(fd, how | LOCK_NB) != 0) {
        char holder[NOTE_BYTES];
        lock_note_read(fd, holder, sizeof holder);
        if (errno != EWOULDBLOCK) {
            fprintf(stderr, "simdbloom: cannot lock %s: %s\n", name, strerror(errno));
        } else if (no_wait) {
            fprintf(stderr, "simdbloom %s: %s is in use by %s; not waiting (--no-wait)\n", command,
                    path, holder);
        } else {
            if (!quiet && isatty(STDERR_FILENO))
                fprintf(stderr, "simdbloom %s: waiting for %s to finish with %s ...\n", command,
                        holder, path);
            int rc;
            while ((rc = flock(fd, how)) != 0 && errno == EINTR)
                ;
            if (rc == 0)
                goto locked;
            fprintf(stderr, "simdbloom: cannot lock %s: %s\n", name, strerror(errno));
        }
        close(fd);
        return EXIT_RUNTIME;
    }
locked:
    write_note(fd, command);
    *fd_out = fd;
    return EXIT_OK;
}

int filter_lock_change(int fd, int mode, int no_wait)
{
    int how = mode == LOCK_FILTER_SHARED ? LOCK_SH : LOCK_EX;
    int rc;
    while ((rc = flock(fd, how | (no_wait ? LOCK_NB : 0))) != 0 && errno == EINTR)
        ;
    return rc == 0 ? EXIT_OK : EXIT_RUNTIME;
}

void filter_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* closing the only descriptor releases the flock */
}
