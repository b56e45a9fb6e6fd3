/* Lines in: the reader (lines.c) and what the stop signals do to it (stop.c). */
#ifndef SIMDBLOOM_CLI_LINES_H
#define SIMDBLOOM_CLI_LINES_H

#include <stddef.h>
#include <stdint.h>

/* lines.c: a reader that hands out batches of complete lines from a file or stdin. A line is
 * what lies between newlines, without the '\n'; a last line without one still counts. Lines of
 * any length (memory permitting) and any bytes, NUL included, come back whole. */
typedef struct line_reader {
    int fd;
    int eof;
    const char *name;
    char *buf; /* a reader that reads: its lines are buf[start, end) */
    size_t cap, start, end;
    const char *map; /* a mapped file: map[map_pos, map_len) is still to come */
    size_t map_len, map_pos, map_start;
    int reading_on;      /* the mapped file grew: read on past the mapping */
    uint64_t bytes_read; /* input consumed (read, or mapped and split) */
    /* Called before a read that would wait for input (a pipe or terminal with nothing ready):
     * a command flushes its output there, so a pipeline never waits on lines held back. */
    void (*idle)(void *ctx);
    void *idle_ctx;
} line_reader;

/* The reader's buffer to start with: it grows only for a line longer than itself. */
#define LINE_READER_BUFFER (UINT64_C(4) << 20)
/* Opens path ("-" = standard input); 0 on success, -1 with errno set. */
int line_reader_open(line_reader *r, const char *path);
/* Up to max lines into lines/lens, valid until the next call; returns the count, 0 at the end,
 * -1 with errno set on a read error or when memory runs out. */
long line_reader_next(line_reader *r, const char **lines, size_t *lens, size_t max);
/* A mapped file only: its next whole lines, about `want` bytes (up to the first newline past
 * want), in *begin and *len, valid until the reader is closed; 1, or 0 when no whole line is left
 * in the mapping (line_reader_next then gives the rest: a last line without a newline, or what
 * the file grew by). */
int line_reader_take(line_reader *r, const char **begin, size_t *len, size_t want);
void line_reader_close(line_reader *r);
/* stop.c: 1 once a stop signal arrived (a read interrupted by it then fails with EINTR). */
int line_reader_stop_requested(void);
/* stop.c: while an input is mapped at map[0, len) (NULL: none), a SIGBUS there (the file was
 * truncated under the mapping) stops the command with a message naming path. */
void stop_on_input_truncated(const char *map, size_t len, const char *path);

#endif /* SIMDBLOOM_CLI_LINES_H */
