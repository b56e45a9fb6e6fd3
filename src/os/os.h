/*
 * The operating-system layer: whole reads and writes, regular files, shared mappings, the
 * crash-safe write and the lock file. It knows nothing of filters. Nothing here is installed.
 */
#ifndef SIMDBLOOM_OS_H
#define SIMDBLOOM_OS_H

#include "../base/base.h"

/* io.c: whole writes and reads (0, or -1 with errno). */
int sbloom_write_all(int fd, const void *data, uint64_t len);
int sbloom_read_all(int fd, void *data, uint64_t len);
/* Opens path read-only, requires a regular file, and gives its size; SBLOOM_E_IO with errno set
 * (EISDIR for anything but a regular file) and nothing left open on failure. */
int sbloom_open_regular(const char *path, int *fd, uint64_t *size);
/* The same with open(2)'s access mode (O_RDONLY or O_RDWR). */
int sbloom_open_regular_mode(const char *path, int mode, int *fd, uint64_t *size);
/* Maps bytes of fd shared (read-write when writable) and closes fd either way: SBLOOM_OK with
 * *base set, or SBLOOM_E_NOMEM / SBLOOM_E_IO with errno set. */
int sbloom_map_fd(int fd, uint64_t bytes, int writable, void **base);
/* Releases a mapping made by sbloom_map_fd. */
void sbloom_unmap_file(void *base, uint64_t bytes);

/* save.c: the crash-safe write of header + body to path (a temporary file in the same
 * directory, fsync, rename, fsync of the directory). write_body returns 0 or -1 with errno. */
int sbloom_write_file(const char *path, const void *header, size_t header_bytes,
                      int (*write_body)(int fd, const void *ctx), const void *ctx);

/* lockfile.c: PATH.lock holds a note on the holder of the command line's file lock (text, up to
 * 256 bytes), the live item delta of a concurrent mapping (a 64-bit word at 256), the lock of
 * the process moving a windowed mapping's clock (a 32-bit word at 264), and from 4096 the
 * concurrent mode's stripes. */
#define SBLOOM_STRIPES 4096u
#define SBLOOM_LOCK_NOTE_BYTES 256u
#define SBLOOM_LOCK_DELTA_AT 256u
#define SBLOOM_LOCK_ADVANCE_AT 264u
#define SBLOOM_LOCK_STRIPES_AT 4096u
#define SBLOOM_LOCK_FILE_BYTES (SBLOOM_LOCK_STRIPES_AT + SBLOOM_STRIPES * 4u)
/* The lock file of the filter at path, created when absent (0666 less the umask), at least
 * SBLOOM_LOCK_FILE_BYTES long, open read-write in *fd. */
int sbloom_lock_file_open(const char *path, int *fd);

/* lockword.c: spin locks in shared memory (its comment says how a dead holder is told from a
 * live one). Each process sharing a file's lock words holds its liveness byte at
 * SBLOOM_LIVENESS_AT + its process ID of the lock file (a read lock, beyond the file's end). */
#define SBLOOM_LIVENESS_AT (UINT64_C(1) << 30)
typedef struct sbloom_lock_self {
    int across;      /* other processes use the words: a word holds its holder's process ID */
    int liveness_fd; /* the lock file, held open with this process's liveness byte; -1: none */
    uint32_t pid;    /* the process that holds that byte (a fork joins again) */
} sbloom_lock_self;
/* The lock file of the filter at path opened again, this process's liveness byte locked in it:
 * the descriptor to keep open while the process shares the file's locks (-1 where the kernel has
 * no open file description locks: liveness is then asked of kill(2)). */
int sbloom_lock_file_join(const char *path, int *fd);
/* The lock file of the filter at path mapped read-write (SBLOOM_LOCK_FILE_BYTES at *map) and
 * joined (*liveness_fd as sbloom_lock_file_join gives it): what a process that shares the file's
 * lock words holds. Nothing is left mapped or open on failure (errno kept). */
int sbloom_lock_file_attach(const char *path, void **map, int *liveness_fd);
void sbloom_lock_self_init(sbloom_lock_self *self, int across, int liveness_fd);
/* A spinning wait's pause (the core's hint that it spins). */
static inline void sbloom_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}
/* What this thread writes in the words it holds (once per batch: a process ID is a system call):
 * 1, or across processes the process ID (a process forked since joins first). */
uint32_t sbloom_lock_token(sbloom_lock_self *self);
/* Takes the word: SBLOOM_OK, or SBLOOM_E_LOCKED when a live holder kept it past the bound or a
 * signal came while waiting (the detail names the holder); only across processes. */
int sbloom_lock_word(uint32_t *word, uint32_t token, const sbloom_lock_self *self);
void sbloom_unlock_word(uint32_t *word);

#endif /* SIMDBLOOM_OS_H */
