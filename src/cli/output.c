/*
 * Line output for dedup and query. stdio would flush its buffer whenever it fills, cutting a line
 * in two; a command killed just then leaves half a line at the end of its output, and a reader
 * downstream takes it for a URL. Here the buffer only ever goes out whole: a line that does not
 * fit flushes the lines before it, and a line larger than the buffer goes out by itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int line_writer_open(line_writer *w, int fd, size_t cap)
{
    memset(w, 0, sizeof *w);
    w->fd = fd;
    w->cap = cap;
    w->buf = malloc(cap);
    return w->buf ? 0 : -1;
}

/* The first failure is the last: it is reported once, and nothing is written after it. */
static int fail(line_writer *w, int err)
{
    if (!w->failed)
        fprintf(stderr, "simdbloom: cannot write output: %s\n", strerror(err));
    w->failed = 1;
    w->err = err;
    return -1;
}

/* Writes len bytes holding `lines` whole lines; on a failure counts the lines that got out. */
static int write_lines(line_writer *w, const char *data, size_t len, uint64_t lines)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(w->fd, data + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            for (size_t i = 0; i < done; i++) /* lines that reached the file before the failure */
                w->lines_written += data[i] == '\n';
            return fail(w, n < 0 ? errno : ENOSPC);
        }
        done += (size_t)n;
    }
    w->lines_written += lines;
    return 0;
}

int line_writer_flush(line_writer *w)
{
    if (w->failed)
        return -1;
    int rc = write_lines(w, w->buf, w->len, w->lines_pending);
    w->len = 0;
    w->lines_pending = 0;
    return rc;
}

int line_writer_put(line_writer *w, const char *line, size_t len)
{
    if (w->failed)
        return -1;
    if (len + 1 > w->cap - w->len && line_writer_flush(w) < 0)
        return -1;
    if (len + 1 > w->cap) { /* longer than the buffer: out alone, as one line */
        char newline = '\n';
        if (write_lines(w, line, len, 0) < 0 || write_lines(w, &newline, 1, 1) < 0)
            return -1;
        return 0;
    }
    memcpy(w->buf + w->len, line, len);
    w->buf[w->len + len] = '\n';
    w->len += len + 1;
    w->lines_pending++;
    return 0;
}

int line_writer_sync(line_writer *w)
{
    if (line_writer_flush(w) < 0)
        return -1;
    struct stat st;
    if (fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode) && fsync(w->fd) != 0)
        return fail(w, errno);
    return 0;
}

void line_writer_flush_when_idle(void *writer)
{
    line_writer_flush(writer); /* a failure is reported, and the next put returns it */
}

void line_writer_close(line_writer *w)
{
    free(w->buf);
    w->buf = NULL;
}
