/*
 * Public entry points for batches of hashes, strings and integers: each checks its arguments and
 * hands the batch to the driver (src/core/driver.c) with the filter's mode as its chunk function.
 */
#include "../modes/modes.h"

/* The argument checks every batch entry shares: SBLOOM_OK, or the error to return. */
static int check_hashes(const sbloom_t *f, const uint64_t *hashes, size_t n, int write)
{
    if (!f || (!hashes && n))
        return SBLOOM_E_NULL;
    return write && f->readonly ? SBLOOM_E_READONLY : SBLOOM_OK;
}

/* The keys themselves are checked by the driver (sbloom_drive_keys' valid), a write's before it
 * changes anything. */
static int check_keys(const sbloom_t *f, const void *const *keys, const size_t *lens, size_t n,
                      int write)
{
    if (!f || ((!keys || !lens) && n))
        return SBLOOM_E_NULL;
    return write && f->readonly ? SBLOOM_E_READONLY : SBLOOM_OK;
}

static uint64_t drive_hashes(const sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes,
                             size_t n, uint8_t *results)
{
    sbloom_runner r;
    sbloom_object_runner(f, &r);
    return sbloom_drive_hashes(&r, op, hashes, n, results);
}

/* Keys or integers (src); *valid as sbloom_drive_keys sets it. */
static uint64_t drive_keys(const sbloom_t *f, sbloom_batch_op op, const sbloom_key_source *src,
                           size_t n, uint8_t *results, int *valid)
{
    sbloom_runner r;
    sbloom_object_runner(f, &r);
    return sbloom_drive_keys(&r, op, src, n, results, valid);
}

static int64_t insert_hashes(sbloom_t *f, const uint64_t *hashes, size_t n, uint8_t *is_new)
{
    int rc = check_hashes(f, hashes, n, 1);
    if (rc != SBLOOM_OK)
        return rc;
    uint64_t fresh = drive_hashes(f, SBLOOM_OP_INSERT, hashes, n, is_new);
    sbloom_object_count(f, n, fresh);
    return (int64_t)fresh;
}

static int64_t insert_source(sbloom_t *f, const sbloom_key_source *src, size_t n, uint8_t *is_new)
{
    int valid;
    uint64_t fresh = drive_keys(f, SBLOOM_OP_INSERT, src, n, is_new, &valid);
    if (!valid)
        return SBLOOM_E_NULL; /* nothing was added */
    sbloom_object_count(f, n, fresh);
    return (int64_t)fresh;
}

static int64_t insert_keys(sbloom_t *f, const void *const *keys, const size_t *lens, size_t n,
                           uint8_t *is_new)
{
    int rc = check_keys(f, keys, lens, n, 1);
    if (rc != SBLOOM_OK)
        return rc;
    sbloom_key_source src = {keys, lens, NULL};
    return insert_source(f, &src, n, is_new);
}

static int64_t insert_integers(sbloom_t *f, const uint64_t *values, size_t n, uint8_t *is_new)
{
    int rc = check_hashes(f, values, n, 1);
    if (rc != SBLOOM_OK)
        return rc;
    sbloom_key_source src = {NULL, NULL, values};
    return insert_source(f, &src, n, is_new);
}

int64_t sbloom_add_hashes(sbloom_t *filter, const uint64_t *hashes, size_t n)
{
    return insert_hashes(filter, hashes, n, NULL);
}

int64_t sbloom_add_if_new_hashes(sbloom_t *filter, const uint64_t *hashes, size_t n,
                                 uint8_t *is_new)
{
    return insert_hashes(filter, hashes, n, is_new);
}

int64_t sbloom_contains_hashes(const sbloom_t *filter, const uint64_t *hashes, size_t n,
                               uint8_t *results)
{
    int rc = check_hashes(filter, hashes, n, 0);
    if (rc != SBLOOM_OK)
        return rc;
    return (int64_t)drive_hashes(filter, SBLOOM_OP_CONTAINS, hashes, n, results);
}

int64_t sbloom_add_keys(sbloom_t *filter, const void *const *keys, const size_t *lens, size_t n)
{
    return insert_keys(filter, keys, lens, n, NULL);
}

int64_t sbloom_add_if_new_keys(sbloom_t *filter, const void *const *keys, const size_t *lens,
                               size_t n, uint8_t *is_new)
{
    return insert_keys(filter, keys, lens, n, is_new);
}

int64_t sbloom_contains_keys(const sbloom_t *filter, const void *const *keys, const size_t *lens,
                             size_t n, uint8_t *results)
{
    int rc = check_keys(filter, keys, lens, n, 0);
    if (rc != SBLOOM_OK)
        return rc;
    int valid;
    sbloom_key_source src = {keys, lens, NULL};
    uint64_t present = drive_keys(filter, SBLOOM_OP_CONTAINS, &src, n, results, &valid);
    return valid ? (int64_t)present : SBLOOM_E_NULL;
}

int64_t sbloom_add_u64s(sbloom_t *filter, const uint64_t *values, size_t n)
{
    return insert_integers(filter, values, n, NULL);
}

int64_t sbloom_add_if_new_u64s(sbloom_t *filter, const uint64_t *values, size_t n, uint8_t *is_new)
{
    return insert_integers(filter, values, n, is_new);
}

int64_t sbloom_contains_u64s(const sbloom_t *filter, const uint64_t *values, size_t n,
                             uint8_t *results)
{
    int rc = check_hashes(filter, values, n, 0);
    if (rc != SBLOOM_OK)
        return rc;
    int valid;
    sbloom_key_source src = {NULL, NULL, values};
    return (int64_t)drive_keys(filter, SBLOOM_OP_CONTAINS, &src, n, results, &valid);
}

int64_t sbloom_hash_keys(const sbloom_t *filter, const void *const *keys, const size_t *lens,
                         size_t n, uint64_t *hashes)
{
    int rc = check_keys(filter, keys, lens, n, 0);
    if (rc != SBLOOM_OK)
        return rc;
    if (!hashes && n)
        return SBLOOM_E_NULL;
    sbloom_runner r;
    sbloom_object_runner(filter, &r);
    sbloom_key_source src = {keys, lens, NULL};
    return sbloom_drive_hash_only(&r, &src, n, hashes) ? (int64_t)n : SBLOOM_E_NULL;
}

/* ---- Removal (the counting layout) ---- */

int64_t sbloom_remove_hashes(sbloom_t *filter, const uint64_t *hashes, size_t n, uint8_t *removed)
{
    int rc = check_hashes(filter, hashes, n, 1);
    if (rc != SBLOOM_OK)
        return rc;
    if (filter->layout != SBLOOM_LAYOUT_COUNTING512)
        return SBLOOM_E_LAYOUT;
    uint64_t gone = drive_hashes(filter, SBLOOM_OP_REMOVE, hashes, n, removed);
    sbloom_object_uncount(filter, gone);
    return (int64_t)gone;
}

int64_t sbloom_remove_keys(sbloom_t *filter, const void *const *keys, const size_t *lens, size_t n,
                           uint8_t *removed)
{
    int rc = check_keys(filter, keys, lens, n, 1);
    if (rc != SBLOOM_OK)
        return rc;
    if (filter->layout != SBLOOM_LAYOUT_COUNTING512)
        return SBLOOM_E_LAYOUT;
    int valid;
    sbloom_key_source src = {keys, lens, NULL};
    uint64_t gone = drive_keys(filter, SBLOOM_OP_REMOVE, &src, n, removed, &valid);
    if (!valid)
        return SBLOOM_E_NULL; /* nothing was removed */
    sbloom_object_uncount(filter, gone);
    return (int64_t)gone;
}
