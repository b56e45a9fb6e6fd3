/* --normalize url (normalize.c). */
#ifndef SIMDBLOOM_NORMALIZE_H
#define SIMDBLOOM_NORMALIZE_H

#include <stddef.h>

/* Writes the normal form of the URL in[0, len) to out, which has room for len + 1 bytes, and
 * returns its length; returns 0 (out unspecified) when the line is not "scheme://...". */
size_t url_normalize(const char *in, size_t len, char *out);

#endif
