/*
 * The crash-safe write of a file, and the name of a filter's lock file.
 *
 * A save never overwrites in place: it writes a temporary file in the same directory (so the
 * rename cannot cross file systems), fsyncs it, renames it over the target, and fsyncs the
 * directory so the rename itself survives a power cut. At every instant the path holds either
 * the old complete file or the new complete file. A crash can leave a `NAME.tmp.XXXXXX` (or, for
 * names near NAME_MAX, `.sbloom-tmp.XXXXXX`) file behind; it is never read. A symbolic link is
 * written through (its target replaced, the link kept); a target that is not a regular file is
 * refused; the new file keeps the old one's permissions, and a new file gets 0666 less the
 * umask. A hard link to the old file keeps the old contents: rename makes a new inode.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../base/alloc.h"
#include "../base/hash.h"
#include "os.h"

/* The file a save replaces: path itself, or, when path is a symbolic link, the file the chain of
 * links ends at (relative links resolve against their own directory; at most 40 links, as the
 * kernel allows), so that a save writes through a link instead of replacing it. A new string,
 * or NULL with errno set. */
static char *save_target(const char *path)
{
    char *target = sbloom_strdup(path);
    for (int hops = 0; target && hops <= 40; hops++) {
        struct stat st;
        if (lstat(target, &st) != 0 || !S_ISLNK(st.st_mode))
            return target; /* a file, or nothing yet: this is where the save goes */
        char link[PATH_MAX];
        ssize_t n = readlink(target, link, sizeof link - 1);
        if (n < 0) {
            free(target);
            return NULL;
        }
        link[n] = '\0';
        const char *slash = strrchr(target, '/');
        size_t dir_len = link[0] == '/' || !slash ? 0 : (size_t)(slash - target) + 1;
        char *next = sbloom_malloc(dir_len + (size_t)n + 1);
        if (next) {
            memcpy(next, target, dir_len);
            memcpy(next + dir_len, link, (size_t)n + 1);
        }
        free(target);
        target = next;
    }
    if (target) {
        free(target);
        errno = ELOOP;
    } else {
        errno = ENOMEM;
    }
    return NULL;
}

/* The directory part of path ("." when there is none), in a new string. */
static char *directory_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return sbloom_strdup(".");
    size_t len = slash == path ? 1 : (size_t)(slash - path);
    char *dir = sbloom_malloc(len + 1);
    if (dir) {
        memcpy(dir, path, len);
        dir[len] = '\0';
    }
    return dir;
}

int sbloom_lock_file(const char *path, char *out, size_t cap)
{
    if (!path || !out)
        return SBLOOM_E_NULL;
    char *target = save_target(path); /* beside the file a save replaces: links share it */
    if (!target)
        return SBLOOM_E_IO;
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    size_t dir_len = slash ? (size_t)(slash - target) + 1 : 0;
    int n;
    if (strlen(base) + sizeof ".lock" - 1 <= NAME_MAX)
        n = snprintf(out, cap, "%s.lock", target);
    else /* too long a name with the suffix: a short one derived from it */
        n = snprintf(out, cap, "%.*s.sbloom-lock.%016llx", (int)dir_len, target,
                     (unsigned long long)sbloom_xxh3(base, strlen(base)));
    free(target);
    return n >= 0 && (size_t)n < cap ? SBLOOM_OK : SBLOOM_E_TOO_LARGE;
}

/* Creates the temporary file of a save of target, in its directory: "NAME.tmp.XXXXXX", or, when
 * that name would be too long for the file system (NAME_MAX), ".sbloom-tmp.XXXXXX". Opened with
 * mode 0666, so the umask applies as to any new file. Returns the descriptor (-1 with errno) and
 * the name in *tmp_out. */
static int create_temporary(const char *target, const char *dir, char **tmp_out)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    int short_name = strlen(base) + 11 > NAME_MAX;
    size_t dir_len = strlen(dir);
    char *tmp = sbloom_malloc(dir_len + strlen(base) + 32);
    if (!tmp) {
        errno = ENOMEM;
        return -1;
    }
    char *suffix;
    if (short_name) {
        suffix = tmp + sprintf(tmp, "%s/.sbloom-tmp.", dir);
    } else {
        suffix = tmp + sprintf(tmp, "%s/%s.tmp.", dir, base);
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t seed = (uint64_t)now.tv_nsec ^ ((uint64_t)now.tv_sec << 20) ^
                    ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)tmp;
    for (int attempt = 0; attempt < 1000; attempt++) {
        uint64_t r = seed += UINT64_C(0x9e3779b97f4a7c15);
        r = (r ^ (r >> 31)) * UINT64_C(0xbf58476d1ce4e5b9);
        for (int i = 0; i < 6; i++, r /= 62)
            suffix[i] = alphabet[r % 62];
        suffix[6] = '\0';
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) {
            if (fd >= 0)
                *tmp_out = tmp;
            else
                free(tmp);
            return fd;
        }
    }
    free(tmp);
    errno = EEXIST;
    return -1;
}

int sbloom_write_file(const char *path, const void *header, size_t header_bytes,
                      int (*write_body)(int fd, const void *ctx), const void *ctx)
{
    char *target = save_target(path);
    if (!target)
        return errno == ENOMEM ? SBLOOM_E_NOMEM : SBLOOM_E_IO;
    struct stat old;
    int replacing = stat(target, &old) == 0;
    if (replacing && !S_ISREG(old.st_mode)) {
        free(target); /* a directory, FIFO, device or socket is never replaced by a file */
        errno = S_ISDIR(old.st_mode) ? EISDIR : EINVAL;
        return SBLOOM_E_NOT_REGULAR;
    }
    char *dir = directory_of(target), *tmp = NULL;
    if (!dir) {
        free(target);
        return SBLOOM_E_NOMEM;
    }
    int rc = SBLOOM_E_IO, saved_errno = 0;
    int fd = create_temporary(target, dir, &tmp);
    if (fd < 0) {
        saved_errno = errno;
        rc = errno == ENOMEM ? SBLOOM_E_NOMEM : SBLOOM_E_IO;
        goto done;
    }
    if (replacing) { /* the new file keeps the old one's permissions and, where allowed, owner */
        fchmod(fd, old.st_mode & 07777);
        if (old.st_uid != geteuid() || old.st_gid != getegid()) {
            if (fchown(fd, old.st_uid, old.st_gid) != 0) {
                /* not ours to give away: the file stays ours, with the old permissions */
            }
        }
    }
    if (sbloom_write_all(fd, header, header_bytes) < 0 || write_body(fd, ctx) < 0 ||
        fsync(fd) < 0) {
        saved_errno = errno;
        close(fd);
        unlink(tmp);
        goto done;
    }
    if (close(fd) < 0 || rename(tmp, target) < 0) {
        saved_errno = errno;
        unlink(tmp);
        goto done;
    }
    int dfd = open(dir, O_RDONLY);
    if (dfd >= 0) {
        fsync(dfd); /* makes the rename durable; some file systems refuse, which is harmless */
        close(dfd);
    }
    rc = SBLOOM_OK;
done:
    free(tmp);
    free(dir);
    free(target);
    if (saved_errno)
        errno = saved_errno;
    return rc;
}
