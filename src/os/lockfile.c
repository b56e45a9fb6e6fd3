/*
 * A filter's lock file (PATH.lock, named by sbloom_lock_file in save.c): opened or created, at
 * least SBLOOM_LOCK_FILE_BYTES long. The command line takes its flock; the concurrent mode maps
 * its item delta and stripes (os.h gives the offsets).
 */
#define _GNU_SOURCE /* O_CLOEXEC, O_NOFOLLOW, ftruncate in -std=c11 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "os.h"

/* The lock file of a filter (sbloom_lock_file), created when absent (0666 less the umask), at
 * least SBLOOM_LOCK_FILE_BYTES long. */
int sbloom_lock_file_open(const char *path, int *fd_out)
{
    char name[PATH_MAX];
    int rc = sbloom_lock_file(path, name, sizeof name);
    if (rc != SBLOOM_OK)
        return rc;
    int fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
    if (fd < 0)
        return SBLOOM_E_IO;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EISDIR;
        return SBLOOM_E_NOT_REGULAR;
    }
    if (st.st_size < (off_t)SBLOOM_LOCK_FILE_BYTES &&
        ftruncate(fd, (off_t)SBLOOM_LOCK_FILE_BYTES) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return SBLOOM_E_IO;
    }
    *fd_out = fd;
    return SBLOOM_OK;
}
