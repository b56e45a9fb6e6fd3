/*
 * Who holds a filter's lock: the one-line note at the start of FILTER.lock (written by
 * filter_lock in filelock.c), and whether the holder is a live dedup --shared worker (whose adds
 * are in the file's bits but not yet in its checksums).
 */
#define _GNU_SOURCE /* O_CLOEXEC, flock in -std=c11 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "locks.h"
#include "simdbloom.h"

/* The holder's note, without its newline ("pid 123: simdbloom add"), or a placeholder. */
void lock_note_read(int fd, char *note, size_t cap)
{
    ssize_t got = pread(fd, note, cap - 1, 0);
    note[got > 0 ? got : 0] = '\0';
    note[strcspn(note, "\n")] = '\0';
    if (!note[0])
        snprintf(note, cap, "another process");
}

int filter_shared_holder(const char *path, char *note, size_t cap)
{
    char name[PATH_MAX];
    if (sbloom_lock_file(path, name, sizeof name) != SBLOOM_OK)
        return 0;
    int fd = open(name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return 0; /* no lock file: nobody ever wrote the filter through it */
    int held = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    if (held)
        lock_note_read(fd, note, cap);
    close(fd);     /* releases the lock if this probe got it */
    char self[32]; /* a note naming this process: it holds the lock itself, and blames no other */
    snprintf(self, sizeof self, "pid %ld:", (long)getpid());
    return held && strstr(note, "--shared") != NULL && strncmp(note, self, strlen(self)) != 0;
}
