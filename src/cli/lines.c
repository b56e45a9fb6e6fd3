/*
 * Reading lines. A regular file is mapped and its lines point into the mapping, which lasts
 * until the reader is closed: nothing is copied, and several threads can split and hash parts of
 * it at once (line_reader_take, pipeline.c). Anything else (a pipe, a terminal, a file that
 * cannot be mapped) is read in large blocks into a buffer that holds whole lines: a batch points
 * into it, and only the next call moves or refills it. A line longer than the buffer doubles
 * it, so memory is bounded by the longest line, never by the file. A mapped file that grew while
 * it was read is read on past its mapping; one truncated under the mapping stops the command
 * with a message (stop.c: SIGBUS).
 */
#define _GNU_SOURCE /* memrchr */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lines.h"
#include "newlines.h"

#define READ_BLOCK (1u << 20)

/* Maps a regular file that is not empty (files like those in /proc say 0 bytes, and are read).
 * 0 when mapped; -1 when it is to be read instead. */
static int map_input(line_reader *r)
{
    struct stat st;
    if (fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > SIZE_MAX)
        return -1;
    /* standard input may be a file some of which was read before: it goes on from there */
    off_t at = lseek(r->fd, 0, SEEK_CUR);
    if (at < 0 || at >= st.st_size)
        return -1;
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, r->fd, 0);
    if (map == MAP_FAILED)
        return -1;
    posix_madvise(map, (size_t)st.st_size, POSIX_MADV_SEQUENTIAL); /* a hint: failure is harmless */
    r->map = map;
    r->map_len = (size_t)st.st_size;
    r->map_pos = r->map_start = (size_t)at;
    stop_on_input_truncated(r->map, r->map_len, r->name);
    return 0;
}

/* The buffer of a reader that reads: 0, or -1 with errno ENOMEM. */
static int allocate_buffer(line_reader *r)
{
    r->cap = (size_t)LINE_READER_BUFFER;
    r->buf = malloc(r->cap);
    if (!r->buf) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

int line_reader_open(line_reader *r, const char *path)
{
    memset(r, 0, sizeof *r);
    r->name = path;
    if (strcmp(path, "-") == 0) {
        r->fd = STDIN_FILENO;
        r->name = "standard input";
    } else {
        r->fd = open(path, O_RDONLY);
        if (r->fd < 0)
            return -1;
    }
    if (map_input(r) == 0)
        return 0;
    if (allocate_buffer(r) < 0) {
        if (r->fd != STDIN_FILENO)
            close(r->fd);
        errno = ENOMEM; /* after close */
        return -1;
    }
    return 0;
}

void line_reader_close(line_reader *r)
{
    if (r->map) {
        if (r->fd == STDIN_FILENO && !r->reading_on) /* what was read, as a read would leave it */
            lseek(r->fd, (off_t)r->map_pos, SEEK_SET);
        stop_on_input_truncated(NULL, 0, NULL);
        munmap((void *)(uintptr_t)r->map, r->map_len);
        r->map = NULL;
    }
    if (r->fd >= 0 && r->fd != STDIN_FILENO)
        close(r->fd);
    r->fd = -1;
    free(r->buf);
    r->buf = NULL;
}

/* n bytes of the mapping consumed. */
static void consume_mapped(line_reader *r, size_t n)
{
    r->map_pos += n;
    r->bytes_read = r->map_pos - r->map_start;
}

int line_reader_take(line_reader *r, const char **begin, size_t *len, size_t want)
{
    if (!r->map || r->reading_on)
        return 0;
    const char *from = r->map + r->map_pos;
    size_t left = r->map_len - r->map_pos;
    const char *newline = left > want ? memchr(from + want, '\n', left - want) : NULL;
    if (!newline) /* the last piece: up to the mapping's last newline */
        newline = memrchr(from, '\n', left);
    if (!newline)
        return 0;
    *begin = from;
    *len = (size_t)(newline + 1 - from);
    consume_mapped(r, *len);
    return 1;
}

/* Reads more input after the unconsumed tail, moving it to the front and growing the buffer when
 * one line fills it. 0 on success (eof set at end of input), -1 on error. */
static int refill(line_reader *r)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
    }
    if (r->cap - r->end < READ_BLOCK) {
        size_t cap = r->cap * 2;
        char *grown = realloc(r->buf, cap);
        if (!grown) {
            errno = ENOMEM;
            return -1;
        }
        r->buf = grown;
        r->cap = cap;
    }
    if (r->idle) {
        struct pollfd ready = {.fd = r->fd, .events = POLLIN};
        if (poll(&ready, 1, 0) == 0)
            r->idle(r->idle_ctx); /* nothing to read yet: let the command flush its output */
    }
    for (;;) {
        ssize_t got = read(r->fd, r->buf + r->end, r->cap - r->end);
        if (got < 0 && errno == EINTR && !line_reader_stop_requested())
            continue;
        if (got < 0)
            return -1;
        if (got == 0)
            r->eof = 1;
        r->end += (size_t)got;
        r->bytes_read += (uint64_t)got;
        return 0;
    }
}

/* line_reader_next on a mapped file: its lines, then (no newline left in the mapping) the rest.
 * A file that grew since it was mapped is read on from the start of the mapping's last partial
 * line; else that partial line is the file's last line. 1 when the lines came from here (the
 * count in *count), 0 when the reader now reads (nothing consumed). */
static int next_mapped(line_reader *r, const char **lines, size_t *lens, size_t max, long *count)
{
    size_t used = 0;
    size_t found =
        split_lines(r->map + r->map_pos, r->map_len - r->map_pos, lines, lens, max, &used);
    consume_mapped(r, used);
    *count = (long)found;
    if (found > 0)
        return 1;
    struct stat st;
    if (fstat(r->fd, &st) == 0 && (uint64_t)st.st_size > r->map_len &&
        lseek(r->fd, (off_t)r->map_pos, SEEK_SET) == (off_t)r->map_pos) {
        if (allocate_buffer(r) < 0) {
            *count = -1;
            return 1;
        }
        r->reading_on = 1;
        return 0;
    }
    if (r->map_pos == r->map_len)
        return 1; /* the end */
    /* The last line has no newline: it is still a line. */
    lines[0] = r->map + r->map_pos;
    lens[0] = r->map_len - r->map_pos;
    consume_mapped(r, lens[0]);
    *count = 1;
    return 1;
}

long line_reader_next(line_reader *r, const char **lines, size_t *lens, size_t max)
{
    long mapped_count;
    if (r->map && !r->reading_on && next_mapped(r, lines, lens, max, &mapped_count))
        return mapped_count;
    size_t count = 0;
    while (count == 0) {
        if (r->start < r->end) {
            size_t used = 0;
            count = split_lines(r->buf + r->start, r->end - r->start, lines, lens, max, &used);
            r->start += used;
        }
        if (count > 0)
            break;
        if (r->eof) {
            if (r->start == r->end)
                return 0;
            /* The last line has no newline: it is still a line. */
            lines[0] = r->buf + r->start;
            lens[0] = r->end - r->start;
            r->start = r->end;
            return 1;
        }
        if (refill(r) < 0)
            return -1;
    }
    return (long)count;
}
