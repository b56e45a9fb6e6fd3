/*
 * Public entry points for filter files: crash-safe save (src/os/save.c), load into memory,
 * read-only or read-write map.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../base/alloc.h"
#include "../base/endian.h"
#include "../base/hash.h"
#include "../modes/modes.h"
#include "../os/os.h"

static int write_core_payload(int fd, const void *core)
{
    return sbloom_core_payload_write(fd, core);
}

/* A whole image serialized in memory (a filter of stages): the part after the header. */
static int write_image_rest(int fd, const void *image)
{
    const uint8_t *bytes = image;
    return sbloom_write_all(fd, bytes + SBLOOM_HEADER_BYTES, sbloom_header_payload_bytes(bytes));
}

static int save_image(const sbloom_t *filter, const char *path)
{
    uint64_t size = filter->mode->image_bytes(filter);
    uint8_t *image = sbloom_malloc((size_t)size);
    if (!image)
        return SBLOOM_E_NOMEM;
    int rc = filter->mode->write_image(filter, image);
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
    if (!filter->mode->has_core)
        return save_image(filter, path);
    /* one core: its blocks are written straight from memory, never copied */
    sbloom_header h;
    uint8_t header[SBLOOM_HEADER_BYTES];
    sbloom_object_header(filter, &h);
    sbloom_header_pack(&h, header);
    return sbloom_write_file(path, header, sizeof header, write_core_payload, &filter->core);
}

/* A scalable filter's file, read whole and taken apart by sbloom_deserialize. */
static int load_image(int fd, const uint8_t *header, const sbloom_header *h, sbloom_t **out,
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
    if (sbloom_layout_composite(h.layout)) {
        rc = load_image(fd, header, &h, out, &saved_errno);
        goto done;
    }
    /* The payload size is now known to equal what the file holds: allocate and read it. */
    rc = sbloom_plain_new(&f, h.payload_bytes, h.layout, 0, NAN, SBLOOM_OWNER_HEAP);
    if (rc != SBLOOM_OK)
        goto done;
    if (sbloom_read_all(fd, f->core.blocks, h.payload_bytes) < 0) {
        saved_errno = errno;
        rc = SBLOOM_E_IO;
        goto done;
    }
    if (sbloom_xxh3(f->core.blocks, (size_t)h.payload_bytes) != h.payload_checksum) {
        rc = sbloom_payload_mismatch();
        goto done;
    }
    if (sbloom_host_is_big_endian())
        sbloom_copy_words(f->core.blocks, f->core.blocks, f->core.bytes,
                          sbloom_layout_word_bits(f->layout), 1);
    sbloom_plain_apply_header(f, &h);
    *out = f;
    f = NULL;
    rc = SBLOOM_OK;
done:
    if (f)
        sbloom_object_free(f);
    close(fd);
    if (saved_errno)
        errno = saved_errno;
    return rc;
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
        if (rc == SBLOOM_OK &&
            !(*out)->mode->has_core) { /* as everywhere: a scalable file is not mapped */
            sbloom_object_free(*out);
            *out = NULL;
            return SBLOOM_E_LAYOUT;
        }
        if (rc == SBLOOM_OK) {
            (*out)->readonly = 1;
            sbloom_object_show_core(*out);
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
    int windowed = rc == SBLOOM_OK && h.layout == SBLOOM_LAYOUT_WINDOWED;
    if (rc == SBLOOM_OK && !windowed && sbloom_layout_composite(h.layout))
        rc = SBLOOM_E_LAYOUT; /* its stages are loaded, not mapped (sbloom_load) */
    sbloom_t *f = NULL;
    if (rc == SBLOOM_OK && windowed) /* the record's clock and the lines in place */
        rc = sbloom_windowed_map(&f, base, size, &h, writable);
    else if (rc == SBLOOM_OK) /* the blocks are 64-byte aligned in the image: base is a page */
        rc = sbloom_plain_wrap(&f, base, &h, writable);
    if (rc != SBLOOM_OK) {
        sbloom_unmap_file(base, size);
        return rc;
    }
    if (!windowed) {
        f->core.owner = SBLOOM_OWNER_FILE_MAP; /* released with the filter: synced, unmapped */
        f->core.map_base = base;
        f->core.map_bytes = size;
    }
    if (flags & SBLOOM_OPEN_CONCURRENT) {
        rc = windowed ? sbloom_windowed_share(f, path) : sbloom_concurrent_share(f, path);
        if (rc != SBLOOM_OK) {
            int saved_errno = errno;
            f->readonly = 1; /* nothing was added: leave the file as it was */
            sbloom_object_free(f);
            errno = saved_errno;
            return rc;
        }
    }
    *out = f;
    return SBLOOM_OK;
}
