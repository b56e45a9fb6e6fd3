/*
 * fuzz_keys: arbitrary byte strings (empty, long, with NULs) through the string batch API on
 * every instruction set, and through the hash API on scalar, which must agree: the string API is
 * the hash API applied to sbloom_hash of each key.
 *
 * Input: layout (1 byte), then keys, each a 2-byte length (taken modulo what is left) and that
 * many bytes.
 */
#include "fuzz_common.h"

#define MAX_KEYS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in = {data, size, 0};
    sbloom_layout layout = (sbloom_layout)(1 + fuzz_take(&in, 1) % FUZZ_FIXED_LAYOUTS);
    const void *keys[MAX_KEYS];
    size_t lens[MAX_KEYS], n = 0;
    while (!fuzz_done(&in) && n < MAX_KEYS) {
        size_t left = in.size - in.pos;
        size_t len = (size_t)fuzz_take(&in, 2);
        left = in.size - in.pos;
        len = left ? len % (left + 1) : 0;
        keys[n] = len ? data + in.pos : NULL; /* NULL is allowed for empty keys */
        lens[n++] = len;
        in.pos += len;
    }
    uint64_t bytes = 4 * sbloom_layout_block_bytes(layout); /* small: collisions happen */
    fuzz_filters ff;
    fuzz_filters_create(&ff, bytes, layout);
    sbloom_t *by_hash;
    if (sbloom_set_isa("scalar") != SBLOOM_OK || sbloom_create_bytes(&by_hash, bytes, layout))
        abort();
    sbloom_set_isa(NULL);

    uint8_t want[MAX_KEYS], got[MAX_KEYS];
    for (size_t i = 0; i < n; i++) {
        uint64_t h = sbloom_hash(by_hash, keys[i], lens[i]);
        want[i] = (uint8_t)(sbloom_add_hash(by_hash, h) == 1);
    }
    for (size_t f = 0; f < ff.count; f++) {
        if (sbloom_add_if_new_keys(ff.filter[f], keys, lens, n, got) < 0 ||
            memcmp(want, got, n) != 0)
            abort();
        if (sbloom_contains_keys(ff.filter[f], keys, lens, n, got) != (int64_t)n)
            abort(); /* no false negatives */
        if (memcmp(sbloom_data(ff.filter[f]), sbloom_data(by_hash), bytes) != 0)
            abort();
    }
    fuzz_filters_check_and_free(&ff);
    sbloom_free(by_hash);
    return 0;
}
