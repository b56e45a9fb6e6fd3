/* The concurrency layer's region locks (regions.h): made, released, counted. */
#include "regions.h"

#include "../base/alloc.h"

int sbloom_regions_alloc(sbloom_regions *r, uint64_t lines)
{
    unsigned shift = 0;
    while (((lines - 1) >> shift) >= SBLOOM_MAX_REGIONS)
        shift++;
    uint32_t count = (uint32_t)((lines - 1) >> shift) + 1;
    size_t bytes = ((size_t)count * SBLOOM_REGION_WORDS + SBLOOM_REGION_WORDS) * sizeof(uint32_t);
    char *memory = sbloom_calloc(1, bytes);
    if (!memory)
        return SBLOOM_E_NOMEM;
    r->memory = memory;
    r->words = (uint32_t *)(memory + (64 - (uintptr_t)memory % 64) % 64);
    r->shift = shift;
    r->count = count;
    r->lookup_first = 0;
    return SBLOOM_OK;
}

void sbloom_regions_release(sbloom_regions *r)
{
    free(r->memory);
    memset(r, 0, sizeof *r);
}

uint64_t sbloom_regions_held(const sbloom_regions *r)
{
    uint64_t held = 0;
    for (uint32_t i = 0; r->words && i < r->count; i++)
        held += __atomic_load_n(sbloom_region_lock(r, i), __ATOMIC_RELAXED) != 0;
    return held;
}
