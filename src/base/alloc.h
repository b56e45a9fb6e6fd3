/*
 * Every allocation and mapping of the library goes through these, so that a test can make the
 * Nth one fail and check that each entry point answers SBLOOM_E_NOMEM, leaks nothing and leaves
 * no partial state (as SQLite tests its out-of-memory paths). Nothing here is installed.
 */
#ifndef SIMDBLOOM_ALLOC_H
#define SIMDBLOOM_ALLOC_H

#include <stddef.h>

void *sbloom_malloc(size_t bytes);
void *sbloom_calloc(size_t count, size_t size);
void *sbloom_realloc(void *p, size_t bytes);
void *sbloom_aligned_alloc(size_t alignment, size_t bytes);
char *sbloom_strdup(const char *s);
/* 0 when the next allocation is to fail: the sites that map memory ask before mmap. */
int sbloom_may_allocate(void);

/* Test hook (hidden: only programs linked with the static library reach it). After the call,
 * allocation number `n` from now fails (0: the very next one), and every later one succeeds;
 * n < 0 turns failing off. Returns the number of allocations made since the previous call. */
long sbloom_test_fail_allocation(long n);

#endif
