/* Realistic URLs, deterministically (urlgen.c). */
#ifndef SIMDBLOOM_URLGEN_H
#define SIMDBLOOM_URLGEN_H

#include <stddef.h>
#include <stdint.h>

typedef struct url_buffer {
    char text[1024];
    size_t len; /* the URL's bytes, then a '\n' counted in len */
} url_buffer;

/* URL number `index` of stream `seed`, newline-terminated, into *u. */
void url_make(uint64_t seed, uint64_t index, url_buffer *u);
/* The splitmix64 step the generator uses, for callers that draw repeats the same way. */
uint64_t url_splitmix(uint64_t *state);

#endif
