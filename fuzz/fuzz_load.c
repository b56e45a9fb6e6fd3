/*
 * fuzz_load: arbitrary bytes as a filter file image (plain and counting) and as a Parquet bitset.
 * Nothing may crash or leak, no allocation may exceed the input's size plus a constant (libFuzzer's
 * -malloc_limit_mb catches one that does), and whatever loads must serialize back to exactly the
 * input bytes and answer queries on every instruction set alike.
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "fuzz_common.h"

static void check_image(const uint8_t *data, size_t size);
static void check_counting_image(const uint8_t *data, size_t size, int plain_loaded);

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

/* What loaded (one of the two kinds) must serialize back to exactly the input bytes. */
static void require_round_trip(const uint8_t *data, size_t size, const sbloom_t *plain,
                               const sbloom_counting_t *counting)
{
    uint64_t want =
        plain ? sbloom_serialized_size(plain) : sbloom_counting_serialized_size(counting);
    uint8_t *again = want == size ? malloc(size) : NULL;
    if (!again)
        abort();
    int rc = plain ? sbloom_serialize(plain, again, size)
                   : sbloom_counting_serialize(counting, again, size);
    if (rc != SBLOOM_OK || memcmp(again, data, size) != 0)
        abort();
    free(again);
}

/* The keys every loaded filter is probed with, on each instruction set. */
static void fixed_probes(uint64_t probes[16])
{
    for (int i = 0; i < 16; i++)
        probes[i] = (uint64_t)i * 0x9e3779b97f4a7c15ULL;
}

static void check_image(const uint8_t *data, size_t size)
{
    sbloom_t *f = NULL;
    int plain_loaded = sbloom_deserialize(&f, data, size) == SBLOOM_OK;
    check_counting_image(data, size, plain_loaded);
    if (plain_loaded) {
        require_round_trip(data, size, f, NULL);
        uint64_t probes[16];
        fixed_probes(probes);
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

/* A counting file image: never both kinds; what loads serializes back to the input, and answers
 * alike on every instruction set (each loads its own copy). */
static void check_counting_image(const uint8_t *data, size_t size, int plain_loaded)
{
    sbloom_counting_t *c = NULL;
    int rc = sbloom_counting_deserialize(&c, data, size);
    if (rc != SBLOOM_OK) {
        if (c != NULL || (plain_loaded && rc != SBLOOM_E_KIND))
            abort();
        return;
    }
    if (plain_loaded)
        abort();
    require_round_trip(data, size, NULL, c);
    uint64_t probes[16];
    fixed_probes(probes);
    int64_t found = sbloom_counting_contains_hashes(c, probes, 16, NULL);
    int64_t removed = sbloom_counting_remove_hashes(c, probes, 16, NULL);
    const char *names[FUZZ_MAX_ISAS];
    size_t count = sbloom_isa_list(names, FUZZ_MAX_ISAS);
    for (size_t i = 0; i < count && i < FUZZ_MAX_ISAS; i++) {
        sbloom_counting_t *copy = NULL;
        if (sbloom_set_isa(names[i]) != SBLOOM_OK ||
            sbloom_counting_deserialize(&copy, data, size) != SBLOOM_OK ||
            sbloom_counting_contains_hashes(copy, probes, 16, NULL) != found ||
            sbloom_counting_remove_hashes(copy, probes, 16, NULL) != removed ||
            memcmp(sbloom_counting_data(copy), sbloom_counting_data(c), size - 128) != 0)
            abort();
        sbloom_counting_free(copy);
    }
    sbloom_set_isa(NULL);
    sbloom_counting_free(c);
}
