/*
 * fuzz_load: arbitrary bytes as a filter file image and as a Parquet bitset. Nothing may crash or
 * leak, no allocation may exceed the input's size plus a constant (libFuzzer's -malloc_limit_mb
 * catches one that does), and whatever loads must serialize back to exactly the input bytes and
 * answer queries on every instruction set alike.
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "fuzz_common.h"

static void check_image(const uint8_t *data, size_t size);

/* Checksums stop almost every mutated input at the door; a copy whose checksums are recomputed
 * (as a buggy writer's would be) lets the fuzzer reach the field and geometry checks behind. */
static void check_resigned(const uint8_t *data, size_t size)
{
    if (size < 128)
        return;
    uint8_t *copy = malloc(size);
    if (!copy)
        return;
    memcpy(copy, data, size);
    uint64_t payload_sum = XXH3_64bits(copy + 128, size - 128);
    for (int i = 0; i < 8; i++)
        copy[80 + i] = (uint8_t)(payload_sum >> (8 * i));
    uint64_t header_sum = XXH3_64bits(copy, 120);
    for (int i = 0; i < 8; i++)
        copy[120 + i] = (uint8_t)(header_sum >> (8 * i));
    check_image(copy, size);
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_image(data, size);
    check_resigned(data, size);
    return 0;
}

static void check_image(const uint8_t *data, size_t size)
{
    sbloom_t *f = NULL;
    if (sbloom_deserialize(&f, data, size) == SBLOOM_OK) {
        if (sbloom_serialized_size(f) != size)
            abort();
        uint8_t *again = malloc(size);
        if (!again || sbloom_serialize(f, again, size) != SBLOOM_OK ||
            memcmp(again, data, size) != 0)
            abort();
        free(again);
        uint64_t probes[16];
        for (int i = 0; i < 16; i++)
            probes[i] = (uint64_t)i * 0x9e3779b97f4a7c15ULL;
        int64_t found = sbloom_contains_hashes(f, probes, 16, NULL);
        const char *names[FUZZ_MAX_ISAS];
        size_t count = sbloom_isa_list(names, FUZZ_MAX_ISAS);
        for (size_t i = 0; i < count && i < FUZZ_MAX_ISAS; i++) {
            sbloom_t *copy = NULL;
            if (sbloom_set_isa(names[i]) != SBLOOM_OK || sbloom_clone(&copy, f) != SBLOOM_OK ||
                sbloom_contains_hashes(copy, probes, 16, NULL) != found)
                abort();
            sbloom_free(copy);
        }
        sbloom_set_isa(NULL);
        sbloom_free(f);
    } else if (f != NULL) {
        abort(); /* a failed load must leave *out NULL */
    }
    if (sbloom_parquet_import(&f, data, size) == SBLOOM_OK) {
        if (sbloom_bytes(f) != size || memcmp(sbloom_data(f), data, size) != 0)
            abort();
        sbloom_free(f);
    }
}
