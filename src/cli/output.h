/* Lines out (output.c). */
#ifndef SIMDBLOOM_CLI_OUTPUT_H
#define SIMDBLOOM_CLI_OUTPUT_H

#include <sys/uio.h>

#include "stream.h"

/* output.c: lines out to a file descriptor, buffered so that every write(2) holds whole lines
 * only: output cut short (a kill, a full disk) ends at a line's end. */
#define LINE_WRITER_PIECES 1024 /* IOV_MAX on Linux */
typedef struct line_writer {
    int fd;
    char *buf;
    size_t len, cap;
    int failed, err; /* a write failed (err: its errno; reported once); nothing written after */
    struct iovec pieces[LINE_WRITER_PIECES]; /* what is pending: in buf, or in a mapped input */
    int npieces;
} line_writer;
/* 0, or -1 when the buffer cannot be allocated. */
int line_writer_open(line_writer *w, int fd, size_t cap);
/* Appends line and a newline; 0, or -1 once a write has failed. */
int line_writer_put(line_writer *w, const char *line, size_t len);
/* The same for a line followed by its newline (line[len] is '\n') that stays where it is until
 * the next line_writer_flush (a mapped input's line: line_batch.in_place): not copied. */
int line_writer_put_mapped(line_writer *w, const char *line, size_t len);
/* The same for whole lines, each with its newline, lying one after another in data[0, bytes). */
int line_writer_put_mapped_run(line_writer *w, const char *data, size_t bytes);
/* The lines of batch b whose flag says `want` ((flags[i] != 0) == want), in order; the count
 * written, or -1 once a write has failed. Lines in place (b->in_place) lie one after another in
 * the mapped file, so each run of chosen lines is one piece, found from a 64-bit mask of 64
 * lines' flags: a branch a run instead of one a line, whose outcome (new or not, present or
 * not) the CPU cannot predict. The caller flushes before its batch function returns. Other
 * lines are copied a line at a time. */
int64_t line_writer_put_chosen(line_writer *w, const line_batch *b, const uint8_t *flags, int want);
/* Writes what is buffered; 0 or -1. */
int line_writer_flush(line_writer *w);
/* For stream_state.idle (ctx: the writer): input would block, so what is buffered goes out. */
void line_writer_flush_when_idle(void *writer);
/* Flushes, then fsyncs when the output is a regular file (so that a saved state never holds
 * lines a power cut could take from the output); 0 or -1. */
int line_writer_sync(line_writer *w);
void line_writer_close(line_writer *w);

#endif /* SIMDBLOOM_CLI_OUTPUT_H */
