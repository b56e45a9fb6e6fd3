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

/* A batch's count, or the failure a mode said of it (a lock another process kept: some keys may
 * have been added, and are counted). */
static int64_t outcome(const sbloom_t *f, uint64_t count)
{
    int failed = sbloom_object_take_failure(f);
    return failed ? failed : (int64_t)count;
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
    return outcome(f, fresh);
}

static int64_t insert_source(sbloom_t *f, const sbloom_key_source *src, size_t n, uint8_t *is_new)
{
    int valid;
    uint64_t fresh = drive_keys(f, SBLOOM_OP_INSERT, src, n, is_new, &valid);
    if (!valid)
        return SBLOOM_E_NULL; /* nothing was added */
    sbloom_object_count(f, n, fresh);
    return outcome(f, fresh);
}

static int64_t insert_keys(sbloom_t *f, const void *const *keys, const size_t *lens, size_t n,
                           uint8_t *is_new)
{
    int rc = check_keys(f, keys, lens, n, 1);
    if (rc != SBLOOM_OK)
        return rc;
    sbloom_key_source src = {.keys = keys, .lens = lens};
    return insert_source(f, &src, n, is_new);
}

static int64_t insert_integers(sbloom_t *f, const uint64_t *values, size_t n, uint8_t *is_new)
{
    int rc = check_hashes(f, values, n, 1);
    if (rc != SBLOOM_OK)
        return rc;
    sbloom_key_source src = {.values = values};
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
    return outcome(filter, drive_hashes(filter, SBLOOM_OP_CONTAINS, hashes, n, results));
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
    sbloom_key_source src = {.keys = keys, .lens = lens};
    uint64_t present = drive_keys(filter, SBLOOM_OP_CONTAINS, &src, n, results, &valid);
    return valid ? outcome(filter, present) : SBLOOM_E_NULL;
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
    sbloom_key_source src = {.values = values};
    return outcome(filter, drive_keys(filter, SBLOOM_OP_CONTAINS, &src, n, results, &valid));
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
    sbloom_key_source src = {.keys = keys, .lens = lens};
    return sbloom_drive_hash_only(&r, &src, n, hashes) ? (int64_t)n : SBLOOM_E_NULL;
}

/* ---- Strings in one buffer with offsets (Arrow's string and large string layouts) ---- */

/* The header's rules for a buffer-and-offsets batch, checked before anything changes: offsets
 * from a non-negative first that never decrease; data only NULL when every key is empty. */
static int check_spans(const sbloom_t *f, const void *data, const void *offsets, int wide, size_t n,
                       int write)
{
    if (!f || (!offsets && n))
        return SBLOOM_E_NULL;
    if (write && f->readonly)
        return SBLOOM_E_READONLY;
    if (n == 0)
        return SBLOOM_OK;
    int64_t first = sbloom_offset_at(offsets, wide, 0), last = first;
    int decreasing = first < 0;
    for (size_t i = 1; i <= n; i++) {
        int64_t next = sbloom_offset_at(offsets, wide, i);
        decreasing |= next < last;
        last = next;
    }
    if (decreasing)
        return SBLOOM_E_INVALID;
    return !data && last != first ? SBLOOM_E_NULL : SBLOOM_OK;
}

/* One operation over a buffer-and-offsets batch, counted as its pointer form is. */
static int64_t run_spans(const sbloom_t *filter, sbloom_batch_op op, const void *data,
                         const void *offsets, int wide, size_t n, uint8_t *results)
{
    int rc = check_spans(filter, data, offsets, wide, n, op != SBLOOM_OP_CONTAINS);
    if (rc != SBLOOM_OK)
        return rc;
    if (op == SBLOOM_OP_REMOVE && !sbloom_object_removes(filter))
        return SBLOOM_E_LAYOUT;
    if (n == 0)
        return 0;
    sbloom_t *f = (sbloom_t *)filter; /* a lookup's driver only reads */
    sbloom_key_source src = {.data = data, .offsets = offsets, .wide = wide};
    int valid;
    uint64_t count = drive_keys(f, op, &src, n, results, &valid);
    if (op == SBLOOM_OP_INSERT)
        sbloom_object_count(f, n, count);
    else if (op == SBLOOM_OP_REMOVE)
        sbloom_object_uncount(f, count);
    return outcome(f, count);
}

int64_t sbloom_add_strings32(sbloom_t *filter, const void *data, const int32_t *offsets, size_t n)
{
    return run_spans(filter, SBLOOM_OP_INSERT, data, offsets, 0, n, NULL);
}

int64_t sbloom_contains_strings32(const sbloom_t *filter, const void *data, const int32_t *offsets,
                                  size_t n, uint8_t *results)
{
    return run_spans(filter, SBLOOM_OP_CONTAINS, data, offsets, 0, n, results);
}

int64_t sbloom_add_if_new_strings32(sbloom_t *filter, const void *data, const int32_t *offsets,
                                    size_t n, uint8_t *is_new)
{
    return run_spans(filter, SBLOOM_OP_INSERT, data, offsets, 0, n, is_new);
}

int64_t sbloom_remove_strings32(sbloom_t *filter, const void *data, const int32_t *offsets,
                                size_t n, uint8_t *removed)
{
    return run_spans(filter, SBLOOM_OP_REMOVE, data, offsets, 0, n, removed);
}

int64_t sbloom_add_strings64(sbloom_t *filter, const void *data, const int64_t *offsets, size_t n)
{
    return run_spans(filter, SBLOOM_OP_INSERT, data, offsets, 1, n, NULL);
}

int64_t sbloom_contains_strings64(const sbloom_t *filter, const void *data, const int64_t *offsets,
                                  size_t n, uint8_t *results)
{
    return run_spans(filter, SBLOOM_OP_CONTAINS, data, offsets, 1, n, results);
}

int64_t sbloom_add_if_new_strings64(sbloom_t *filter, const void *data, const int64_t *offsets,
                                    size_t n, uint8_t *is_new)
{
    return run_spans(filter, SBLOOM_OP_INSERT, data, offsets, 1, n, is_new);
}

int64_t sbloom_remove_strings64(sbloom_t *filter, const void *data, const int64_t *offsets,
                                size_t n, uint8_t *removed)
{
    return run_spans(filter, SBLOOM_OP_REMOVE, data, offsets, 1, n, removed);
}

/* ---- Removal (the counting and fingerprint layouts) ---- */

int64_t sbloom_remove_hashes(sbloom_t *filter, const uint64_t *hashes, size_t n, uint8_t *removed)
{
    int rc = check_hashes(filter, hashes, n, 1);
    if (rc != SBLOOM_OK)
        return rc;
    if (!sbloom_object_removes(filter))
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
    if (!sbloom_object_removes(filter))
        return SBLOOM_E_LAYOUT;
    int valid;
    sbloom_key_source src = {.keys = keys, .lens = lens};
    uint64_t gone = drive_keys(filter, SBLOOM_OP_REMOVE, &src, n, removed, &valid);
    if (!valid)
        return SBLOOM_E_NULL; /* nothing was removed */
    sbloom_object_uncount(filter, gone);
    return (int64_t)gone;
}
