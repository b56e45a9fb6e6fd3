/*
 * Line output for dedup and query. stdio would flush its buffer whenever it fills, cutting a line
 * in two; a command killed just then leaves half a line at the end of its output, and a reader
 * downstream takes it for a URL. Here output only ever goes out as whole lines: a line that does
 * not fit flushes the lines before it, and a line larger than the buffer goes out by itself.
 *
 * What is pending is a list of pieces (iovecs) written by one writev(2): lines copied into the
 * buffer (line_writer_put), and lines of a mapped input file written from where they lie, with
 * the newline after them (line_writer_put_mapped: no copy; a run of such lines next to each
 * other in the file is one piece). line_writer_put_chosen writes the lines of a batch that its
 * command chose (dedup: the new ones; query: the present, or the absent, ones) either way.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "output.h"
#include "flag_bits.h"

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
    if (!w->failed && err == EFAULT) /* lines written from a mapped input that was cut short */
        fprintf(stderr, "simdbloom: cannot write output: an input file was truncated while "
                        "this run was reading it\n");
    else if (!w->failed)
        fprintf(stderr, "simdbloom: cannot write output: %s\n", strerror(err));
    w->failed = 1;
    w->err = err;
    return -1;
}

/* Writes the pieces: one writev when it takes them all (a pipe or file), else on from where it
 * stopped. */
static int write_pieces(line_writer *w, struct iovec *piece, int count)
{
    size_t left = 0;
    for (int i = 0; i < count; i++)
        left += piece[i].iov_len;
    while (left > 0) {
        ssize_t n = writev(w->fd, piece, count);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return fail(w, n < 0 ? errno : ENOSPC);
        if ((size_t)n == left)
            break;
        left -= (size_t)n;
        for (size_t done = (size_t)n; done > 0;) { /* skip what went out */
            size_t part = done < piece->iov_len ? done : piece->iov_len;
            piece->iov_base = (char *)piece->iov_base + part;
            piece->iov_len -= part;
            done -= part;
            if (piece->iov_len == 0) {
                piece++;
                count--;
            }
        }
    }
    return 0;
}

int line_writer_flush(line_writer *w)
{
    if (w->failed)
        return -1;
    int rc = write_pieces(w, w->pieces, w->npieces);
    w->len = 0;
    w->npieces = 0;
    return rc;
}

/* Adds data[0, len) to the pending pieces: to the last one when it ends where data begins. */
static int add_piece(line_writer *w, const char *data, size_t len)
{
    if (w->npieces > 0) {
        struct iovec *last = &w->pieces[w->npieces - 1];
        if ((const char *)last->iov_base + last->iov_len == data) {
            last->iov_len += len;
            return 0;
        }
    }
    if (w->npieces == LINE_WRITER_PIECES && line_writer_flush(w) < 0)
        return -1;
    w->pieces[w->npieces].iov_base = (void *)(uintptr_t)data;
    w->pieces[w->npieces].iov_len = len;
    w->npieces++;
    return 0;
}

int line_writer_put(line_writer *w, const char *line, size_t len)
{
    if (w->failed)
        return -1;
    if (len + 1 > w->cap - w->len && line_writer_flush(w) < 0)
        return -1;
    if (len + 1 > w->cap) { /* longer than the buffer: out alone, as one line */
        struct iovec alone[2] = {{(void *)(uintptr_t)line, len}, {"\n", 1}};
        return write_pieces(w, alone, 2);
    }
    /* room for a piece before the copy: a flush in add_piece would reuse the buffer under it */
    if (w->npieces == LINE_WRITER_PIECES && line_writer_flush(w) < 0)
        return -1;
    char *at = w->buf + w->len;
    memcpy(at, line, len);
    at[len] = '\n';
    w->len += len + 1;
    return add_piece(w, at, len + 1);
}

int line_writer_put_mapped(line_writer *w, const char *line, size_t len)
{
    return line_writer_put_mapped_run(w, line, len + 1);
}

int line_writer_put_mapped_run(line_writer *w, const char *data, size_t bytes)
{
    return w->failed ? -1 : add_piece(w, data, bytes);
}

int64_t line_writer_put_chosen(line_writer *w, const line_batch *b, const uint8_t *flags, int want)
{
    int64_t written = 0;
    want = want != 0;
    if (!b->in_place) { /* copied, a line at a time */
        for (size_t i = 0; i < b->n; i++) {
            if ((flags[i] != 0) != want)
                continue;
            if (line_writer_put(w, b->lines[i], b->lens[i]) < 0)
                return -1;
            written++;
        }
        return written;
    }
    for (size_t at = 0; at < b->n; at += 64) {
        size_t count = b->n - at < 64 ? b->n - at : 64;
        uint64_t lines = count == 64 ? ~UINT64_C(0) : (UINT64_C(1) << count) - 1;
        uint64_t chosen =
            want ? flag_bits(flags + at, count) : ~flag_bits(flags + at, count) & lines;
        uint64_t first = chosen & ~(chosen << 1), last = chosen & ~(chosen >> 1);
        for (; first; first &= first - 1, last &= last - 1) {
            size_t from = at + (size_t)__builtin_ctzll(first),
                   to = at + (size_t)__builtin_ctzll(last);
            const char *end = b->lines[to] + b->lens[to] + 1; /* after the run's last newline */
            if (line_writer_put_mapped_run(w, b->lines[from], (size_t)(end - b->lines[from])) < 0)
                return -1;
            written += (int64_t)(to - from + 1);
        }
    }
    return written;
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
