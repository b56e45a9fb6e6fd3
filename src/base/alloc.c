/* The library's allocation functions and their failure-injection hook (alloc.h). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

static atomic_long fail_at = -1; /* allocations still to succeed before one fails, or -1 */
static atomic_long made;

int sbloom_may_allocate(void)
{
    atomic_fetch_add_explicit(&made, 1, memory_order_relaxed);
    if (atomic_load_explicit(&fail_at, memory_order_relaxed) < 0)
        return 1;
    return atomic_fetch_sub_explicit(&fail_at, 1, memory_order_relaxed) != 0;
}

long sbloom_test_fail_allocation(long n)
{
    atomic_store(&fail_at, n < 0 ? -1 : n);
    return atomic_exchange(&made, 0);
}

void *sbloom_malloc(size_t bytes)
{
    return sbloom_may_allocate() ? malloc(bytes) : NULL;
}

void *sbloom_calloc(size_t count, size_t size)
{
    return sbloom_may_allocate() ? calloc(count, size) : NULL;
}

void *sbloom_realloc(void *p, size_t bytes)
{
    return sbloom_may_allocate() ? realloc(p, bytes) : NULL;
}

void *sbloom_aligned_alloc(size_t alignment, size_t bytes)
{
    return sbloom_may_allocate() ? aligned_alloc(alignment, bytes) : NULL;
}

char *sbloom_strdup(const char *s)
{
    size_t len = strlen(s) + 1;
    char *copy = sbloom_malloc(len);
    return copy ? memcpy(copy, s, len) : NULL;
}
