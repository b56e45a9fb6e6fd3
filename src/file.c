/*
 * Filter files on disk: crash-safe save, load into memory, read-only map.
 *
 * Save never overwrites in place: it writes a temporary file in the same directory (so the
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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "endian.h"
#include "format.h"
#include "hash.h"

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

/* The payload in file order: the blocks themselves on a little-endian host, else swapped in
 * chunks. */
static int write_payload(int fd, const sbloom_t *f)
{
    if (!sbloom_host_is_big_endian())
        return sbloom_write_all(fd, f->blocks, f->bytes);
    uint8_t chunk[1 << 16];
    for (uint64_t at = 0; at < f->bytes; at += sizeof chunk) {
        uint64_t len = f->bytes - at < sizeof chunk ? f->bytes - at : sizeof chunk;
        sbloom_copy_words(chunk, (const uint8_t *)f->blocks + at, len,
                          sbloom_layout_word_bits(f->layout), 1);
        if (sbloom_write_all(fd, chunk, len) < 0)
            return -1;
    }
    return 0;
}

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

static int write_filter_payload(int fd, const void *filter)
{
    return write_payload(fd, filter);
}

/* A scalable filter's whole image, serialized in memory: the part after the header. */
static int write_image_rest(int fd, const void *image)
{
    const uint8_t *bytes = image;
    return sbloom_write_all(fd, bytes + SBLOOM_HEADER_BYTES, sbloom_header_payload_bytes(bytes));
}

static int save_scalable(const sbloom_t *filter, const char *path)
{
    uint64_t size = sbloom_serialized_size(filter);
    uint8_t *image = sbloom_malloc((size_t)size);
    if (!image)
        return SBLOOM_E_NOMEM;
    int rc = sbloom_serialize(filter, image, (size_t)size);
    if (rc == SBLOOM_OK)
        rc = sbloom_write_file(path, image, SBLOOM_HEADER_BYTES, write_image_rest, image);
    int saved = errno;
    free(image);
    errno = saved;
    return rc;
}

int sbloom_save(const sbloom_t *filter, const char *path)
{
    if (!filter || !path)
        return SBLOOM_E_NULL;
    if (filter->stages)
        return save_scalable(filter, path);
    sbloom_header h;
    uint8_t header[SBLOOM_HEADER_BYTES];
    sbloom_header_of(filter, &h);
    sbloom_header_pack(&h, header);
    return sbloom_write_file(path, header, sizeof header, write_filter_payload, filter);
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

/* A scalable filter's file, read whole and taken apart by sbloom_deserialize. */
static int load_scalable(int fd, const uint8_t *header, const sbloom_header *h, sbloom_t **out,
                         int *saved_errno)
{
    uint64_t size = SBLOOM_HEADER_BYTES + h->payload_bytes;
    uint8_t *image = sbloom_malloc((size_t)size);
    if (!image)
        return SBLOOM_E_NOMEM;
    memcpy(image, header, SBLOOM_HEADER_BYTES);
    int rc = SBLOOM_OK;
    if (sbloom_read_all(fd, image + SBLOOM_HEADER_BYTES, h->payload_bytes) < 0) {
        *saved_errno = errno;
        rc = SBLOOM_E_IO;
    } else {
        rc = sbloom_deserialize(out, image, (size_t)size);
    }
    free(image);
    return rc;
}

int sbloom_load(sbloom_t **out, const char *path)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (!path)
        return SBLOOM_E_NULL;
    int fd;
    uint64_t size;
    int opened = sbloom_open_regular(path, &fd, &size);
    if (opened != SBLOOM_OK)
        return opened;
    uint8_t header[SBLOOM_HEADER_BYTES];
    sbloom_header h;
    sbloom_t *f = NULL;
    int rc = SBLOOM_E_IO, saved_errno = 0;
    uint64_t head = size < sizeof header ? size : sizeof header;
    if (sbloom_read_all(fd, header, head) < 0) {
        saved_errno = errno;
        goto done;
    }
    rc = sbloom_header_parse(header, size, &h);
    if (rc != SBLOOM_OK)
        goto done;
    if (h.layout == SBLOOM_LAYOUT_SCALABLE) {
        rc = load_scalable(fd, header, &h, out, &saved_errno);
        goto done;
    }
    /* The payload size is now known to equal what the file holds: allocate and read it. */
    rc = sbloom_filter_new(&f, h.payload_bytes, h.layout, 0, NAN, 0);
    if (rc != SBLOOM_OK)
        goto done;
    if (sbloom_read_all(fd, f->blocks, h.payload_bytes) < 0) {
        saved_errno = errno;
        rc = SBLOOM_E_IO;
        goto done;
    }
    if (sbloom_xxh3(f->blocks, (size_t)h.payload_bytes) != h.payload_checksum) {
        rc = sbloom_payload_mismatch();
        goto done;
    }
    if (sbloom_host_is_big_endian())
        sbloom_copy_words(f->blocks, f->blocks, f->bytes, sbloom_layout_word_bits(f->layout), 1);
    sbloom_header_apply(&h, f);
    *out = f;
    f = NULL;
    rc = SBLOOM_OK;
done:
    sbloom_free(f);
    close(fd);
    if (saved_errno)
        errno = saved_errno;
    return rc;
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

int sbloom_map(sbloom_t **out, const char *path, unsigned flags)
{
    if (!out)
        return SBLOOM_E_NULL;
    *out = NULL;
    if (!path)
        return SBLOOM_E_NULL;
    if ((flags & ~(unsigned)(SBLOOM_OPEN_VERIFY | SBLOOM_OPEN_WRITE | SBLOOM_OPEN_CONCURRENT)) !=
            0 ||
        ((flags & SBLOOM_OPEN_CONCURRENT) && !(flags & SBLOOM_OPEN_WRITE)))
        return SBLOOM_E_INVALID;
    int verify = (flags & SBLOOM_OPEN_VERIFY) != 0, writable = (flags & SBLOOM_OPEN_WRITE) != 0;
    if (sbloom_host_is_big_endian()) {
        if (writable)
            return SBLOOM_E_UNSUPPORTED; /* the words cannot be changed in place here */
        /* The file's words are little-endian: they cannot be used in place here. Load (which
         * swaps and always verifies) and keep map's read-only contract. */
        int rc = sbloom_load(out, path);
        if (rc == SBLOOM_OK && (*out)->stages) { /* as everywhere: a scalable file is not mapped */
            sbloom_free(*out);
            *out = NULL;
            return SBLOOM_E_LAYOUT;
        }
        if (rc == SBLOOM_OK) {
            (*out)->readonly = 1;
            sbloom_inline_refresh(*out);
        }
        return rc;
    }
    int fd;
    uint64_t size;
    int opened = sbloom_open_regular_mode(path, writable ? O_RDWR : O_RDONLY, &fd, &size);
    if (opened != SBLOOM_OK)
        return opened;
    if (size < SBLOOM_HEADER_BYTES) {
        uint8_t head[SBLOOM_HEADER_BYTES];
        sbloom_header h;
        int rc =
            sbloom_read_all(fd, head, size) < 0 ? SBLOOM_E_IO : sbloom_header_parse(head, size, &h);
        close(fd);
        return rc;
    }
    void *base;
    int mapped = sbloom_map_fd(fd, size, writable, &base);
    if (mapped != SBLOOM_OK)
        return mapped;
    sbloom_header h;
    int rc = sbloom_header_parse(base, size, &h);
    /* Another process of a concurrent mapping may be rewriting the header (a sync, a few
     * nanoseconds): look again before calling it damaged. */
    for (int tries = 0; rc == SBLOOM_E_CORRUPT && (flags & SBLOOM_OPEN_CONCURRENT) && tries < 50;
         tries++) {
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
        rc = sbloom_header_parse(base, size, &h);
    }
    if (rc == SBLOOM_OK && verify &&
        sbloom_xxh3((const uint8_t *)base + SBLOOM_HEADER_BYTES, (size_t)h.payload_bytes) !=
            h.payload_checksum)
        rc = sbloom_payload_mismatch();
    if (rc == SBLOOM_OK && h.layout == SBLOOM_LAYOUT_SCALABLE)
        rc = SBLOOM_E_LAYOUT; /* its stages are loaded, not mapped (sbloom_load) */
    sbloom_t *f = NULL;
    if (rc == SBLOOM_OK) /* the blocks are 64-byte aligned in the image: base is a page */
        rc = sbloom_image_wrap(&f, base, &h, writable);
    if (rc != SBLOOM_OK) {
        munmap(base, (size_t)size);
        return rc;
    }
    f->map_base = base;
    f->map_bytes = size;
    if (flags & SBLOOM_OPEN_CONCURRENT) {
        rc = sbloom_concurrent_share(f, path);
        if (rc != SBLOOM_OK) {
            int saved_errno = errno;
            f->readonly = 1; /* nothing was added: leave the file as it was */
            sbloom_free(f);
            errno = saved_errno;
            return rc;
        }
    }
    *out = f;
    return SBLOOM_OK;
}
