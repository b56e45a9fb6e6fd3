/*
 * Whole reads and writes, opening a regular file, and shared mappings: the system calls the
 * library makes on files, each retried or reported the same way (0 / SBLOOM_OK, or an error with
 * errno set).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/alloc.h"
#include "os.h"

int sbloom_write_all(int fd, const void *data, uint64_t len)
{
    const uint8_t *p = data;
    while (len > 0) {
        size_t step = len > (UINT64_C(1) << 30) ? (size_t)1 << 30 : (size_t)len;
        ssize_t wrote = write(fd, p, step);
        if (wrote < 0 && errno == EINTR)
            continue;
        if (wrote <= 0) {
            if (wrote == 0)
                errno = ENOSPC;
            return -1;
        }
        p += wrote;
        len -= (uint64_t)wrote;
    }
    return 0;
}

int sbloom_read_all(int fd, void *data, uint64_t len)
{
    uint8_t *p = data;
    while (len > 0) {
        size_t step = len > (UINT64_C(1) << 30) ? (size_t)1 << 30 : (size_t)len;
        ssize_t got = read(fd, p, step);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (got == 0)
                errno = EIO; /* the file shrank under us */
            return -1;
        }
        p += got;
        len -= (uint64_t)got;
    }
    return 0;
}

int sbloom_open_regular(const char *path, int *fd, uint64_t *size)
{
    return sbloom_open_regular_mode(path, O_RDONLY, fd, size);
}

int sbloom_open_regular_mode(const char *path, int mode, int *fd, uint64_t *size)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; the type is checked before any
     * read, and a regular file ignores the flag. */
    *fd = open(path, mode | O_NONBLOCK | O_CLOEXEC);
    if (*fd < 0)
        return SBLOOM_E_IO;
    struct stat st;
    int saved = 0, rc = SBLOOM_E_IO;
    if (fstat(*fd, &st) < 0) {
        saved = errno;
    } else if (!S_ISREG(st.st_mode)) {
        saved = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        rc = SBLOOM_E_NOT_REGULAR;
    }
    if (saved) {
        close(*fd);
        *fd = -1;
        errno = saved;
        return rc;
    }
    *size = (uint64_t)st.st_size;
    return SBLOOM_OK;
}

void sbloom_unmap_file(void *base, uint64_t bytes)
{
    munmap(base, (size_t)bytes);
}

int sbloom_map_fd(int fd, uint64_t bytes, int writable, void **base)
{
    void *map = MAP_FAILED;
    if (sbloom_may_allocate())
        map = mmap(NULL, (size_t)bytes, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED,
                   fd, 0);
    else
        errno = ENOMEM;
    int saved = errno;
    close(fd);
    if (map == MAP_FAILED) {
        errno = saved;
        return saved == ENOMEM ? SBLOOM_E_NOMEM : SBLOOM_E_IO;
    }
    *base = map;
    return SBLOOM_OK;
}
