/* A filter file's lock: one writer at a time (filelock.c), and who holds it (holder.c). */
#ifndef SIMDBLOOM_CLI_LOCKS_H
#define SIMDBLOOM_CLI_LOCKS_H

#include <stddef.h>

#include "status.h"

/* filelock.c: one writer of a filter file at a time (flock on FILTER.lock, created when absent).
 * filter_lock waits for the holder (saying so on a terminal unless quiet) or, with no_wait,
 * fails naming it; it prints its own message and returns EXIT_RUNTIME on failure, else EXIT_OK
 * with the lock's descriptor in *fd. filter_lock_change turns a held lock into the other mode;
 * filter_unlock releases it. */
enum { LOCK_FILTER_EXCLUSIVE = 0, LOCK_FILTER_SHARED = 1 };
int filter_lock(const char *path, const char *command, int mode, int no_wait, int quiet, int *fd);
int filter_lock_change(int fd, int mode, int no_wait);
/* The lock taken at once or not at all: 1 taken (*fd set), 0 another process holds it (nothing
 * said), -1 an error (said). */
int filter_lock_try(const char *path, const char *command, int mode, int *fd);
void filter_unlock(int fd);
/* holder.c: 1 if dedup --shared workers hold FILTER's lock now (the file is live: its header and
 * checksum are brought up to date when the last one ends), with the holder's note in note; and
 * the holder's note read from an open FILTER.lock, without its newline ("pid 123: simdbloom
 * add"), or "another process". */
int filter_shared_holder(const char *path, char *note, size_t cap);
void lock_note_read(int fd, char *note, size_t cap);

#endif /* SIMDBLOOM_CLI_LOCKS_H */
