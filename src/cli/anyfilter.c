/*
 * A filter file of either kind, plain or counting, for the commands that take both (build, add,
 * query, remove). Each call goes to the one filter that is set.
 */
#include "cli.h"

int any_filter_load(const char *path, any_filter *f, int map)
{
    f->plain = NULL;
    f->counting = NULL;
    int rc = map ? sbloom_map(&f->plain, path, 1) : sbloom_load(&f->plain, path);
    if (rc == SBLOOM_E_KIND)
        rc = sbloom_counting_load(&f->counting, path);
    return rc;
}

int any_filter_save(const any_filter *f, const char *path)
{
    return f->counting ? sbloom_counting_save(f->counting, path) : sbloom_save(f->plain, path);
}

void any_filter_free(any_filter *f)
{
    sbloom_free(f->plain);
    sbloom_counting_free(f->counting);
    f->plain = NULL;
    f->counting = NULL;
}

sbloom_layout any_filter_layout(const any_filter *f)
{
    return f->counting ? SBLOOM_LAYOUT_COUNTING512 : sbloom_get_layout(f->plain);
}

uint64_t any_filter_bytes(const any_filter *f)
{
    return f->counting ? sbloom_counting_bytes(f->counting) : sbloom_bytes(f->plain);
}

uint64_t any_filter_items(const any_filter *f)
{
    return f->counting ? sbloom_counting_items(f->counting) : sbloom_items(f->plain);
}

uint64_t any_filter_planned_items(const any_filter *f)
{
    return f->counting ? sbloom_counting_planned_items(f->counting)
                       : sbloom_planned_items(f->plain);
}

double any_filter_planned_fpp(const any_filter *f)
{
    return f->counting ? sbloom_counting_planned_fpp(f->counting) : sbloom_planned_fpp(f->plain);
}

int64_t any_filter_add_hashes(any_filter *f, const uint64_t *hashes, size_t n)
{
    return f->counting ? sbloom_counting_add_hashes(f->counting, hashes, n, NULL)
                       : sbloom_add_hashes(f->plain, hashes, n);
}

int64_t any_filter_contains_hashes(const any_filter *f, const uint64_t *hashes, size_t n,
                                   uint8_t *results)
{
    return f->counting ? sbloom_counting_contains_hashes(f->counting, hashes, n, results)
                       : sbloom_contains_hashes(f->plain, hashes, n, results);
}

void any_filter_hash_keys(const any_filter *f, const char *const *keys, const size_t *lens,
                          size_t n, uint64_t *out)
{
    if (f->counting) {
        for (size_t i = 0; i < n; i++)
            out[i] = sbloom_counting_hash(f->counting, keys[i], lens[i]);
    } else {
        for (size_t i = 0; i < n; i++)
            out[i] = sbloom_hash(f->plain, keys[i], lens[i]);
    }
}
