/*
 * Reading lines in large blocks. The buffer holds whole lines: a batch points into it, and only
 * the next call moves or refills it. A line longer than the buffer doubles it, so memory is
 * bounded by the longest line, never by the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define READ_BLOCK (1u << 20)

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
    r->cap = (size_t)LINE_READER_BUFFER;
    r->buf = malloc(r->cap);
    if (!r->buf) {
        if (r->fd != STDIN_FILENO)
            close(r->fd);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void line_reader_close(line_reader *r)
{
    if (r->fd >= 0 && r->fd != STDIN_FILENO)
        close(r->fd);
    r->fd = -1;
    free(r->buf);
    r->buf = NULL;
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

long line_reader_next(line_reader *r, const char **lines, size_t *lens, size_t max)
{
    size_t count = 0;
    while (count == 0) {
        while (count < max && r->start < r->end) {
            char *begin = r->buf + r->start;
            char *newline = memchr(begin, '\n', r->end - r->start);
            if (!newline)
                break;
            lines[count] = begin;
            lens[count] = (size_t)(newline - begin);
            count++;
            r->start += lens[count - 1] + 1;
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
