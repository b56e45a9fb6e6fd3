/*
 * The concurrency layer's lock tables: stripe lock words in this process's heap, in a filter's
 * lock file (mapped shared: every process mapping the file takes the same words), or in a
 * caller's region laid out as a lock file; with the spare lock (locked.h) and who this process
 * is to the words (src/os/lockword.c). The concurrent and windowed modes hold one each.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../base/alloc.h"
#include "locked.h"

void sbloom_lock_table_init(sbloom_lock_table *t)
{
    t->words = NULL;
    t->count = 0;
    t->stride = 1;
    t->spare = 0;
    t->spare_version = 0;
    t->map = NULL;
    t->borrowed = 0;
    sbloom_lock_self_init(&t->self, 0, -1);
}

int sbloom_lock_table_alloc(sbloom_lock_table *t, uint32_t count, int versioned)
{
    uint32_t stride = versioned ? 2 : 1;
    uint32_t *words = sbloom_calloc((size_t)count * stride, sizeof *words);
    if (!words)
        return SBLOOM_E_NOMEM;
    sbloom_lock_table_release(t);
    t->words = words;
    t->count = count;
    t->stride = stride;
    return SBLOOM_OK;
}

/* The table laid out in `base` as in a lock file, shared between processes. */
static void across(sbloom_lock_table *t, void *base, int liveness_fd)
{
    t->words = (uint32_t *)((char *)base + SBLOOM_LOCK_STRIPES_AT);
    t->count = SBLOOM_STRIPES;
    sbloom_lock_self_init(&t->self, 1, liveness_fd);
}

int sbloom_lock_table_attach(sbloom_lock_table *t, const char *path)
{
    int live = -1;
    void *map = NULL;
    int rc = sbloom_lock_file_attach(path, &map, &live);
    if (rc != SBLOOM_OK)
        return rc;
    sbloom_lock_table_release(t);
    t->map = map;
    across(t, map, live);
    return SBLOOM_OK;
}

void sbloom_lock_table_borrow(sbloom_lock_table *t, void *region)
{
    sbloom_lock_table_release(t);
    t->borrowed = 1;
    across(t, region, -1); /* (no lock file: liveness is asked of kill(2)) */
}

void sbloom_lock_table_release(sbloom_lock_table *t)
{
    if (t->map)
        munmap(t->map, SBLOOM_LOCK_FILE_BYTES);
    else if (!t->borrowed)
        free(t->words);
    if (t->self.liveness_fd >= 0)
        close(t->self.liveness_fd); /* this process no longer shares the file's locks */
    sbloom_lock_table_init(t);
}

uint64_t sbloom_lock_table_held(const sbloom_lock_table *t)
{
    uint64_t held = __atomic_load_n(&t->spare, __ATOMIC_RELAXED) != 0;
    for (uint32_t i = 0; t->words && i < t->count; i++)
        held += __atomic_load_n(&t->words[(size_t)i * t->stride], __ATOMIC_RELAXED) != 0;
    return held;
}
