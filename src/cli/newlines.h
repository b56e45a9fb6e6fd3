/* Finding line ends in a buffer (newlines.c). */
#ifndef SIMDBLOOM_NEWLINES_H
#define SIMDBLOOM_NEWLINES_H

#include <stddef.h>

/* A line's key: the line without a trailing CR (a line of length 0 has none). */
static inline size_t line_key_length(const char *line, size_t len)
{
    return len - (len > 0 && line[len - 1] == '\r');
}

/* The lines of buf[0, len) that end in '\n', up to max of them: lines[i] is where each begins and
 * lens[i] its length without the '\n'. Returns the count; *used is the bytes they take with their
 * newlines (where the next line begins). */
size_t split_lines(const char *buf, size_t len, const char **lines, size_t *lens, size_t max,
                   size_t *used);

/* The same, and each line's key length: its length without a trailing '\r' (key_lens[i]). */
size_t split_keys(const char *buf, size_t len, const char **lines, size_t *lens, size_t *key_lens,
                  size_t max, size_t *used);

/* The same two on the portable path only (memchr), for the differential test. */
size_t split_lines_scalar(const char *buf, size_t len, const char **lines, size_t *lens, size_t max,
                          size_t *used);
size_t split_keys_scalar(const char *buf, size_t len, const char **lines, size_t *lens,
                         size_t *key_lens, size_t max, size_t *used);

#endif
