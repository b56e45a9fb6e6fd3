/*
 * fuzz_load: arbitrary bytes as a filter file image (every layout, loaded and attached in place)
 * and as a Parquet bitset.
 * Nothing may crash or leak, no allocation may exceed the input's size plus a constant (libFuzzer's
 * -malloc_limit_mb catches one that does), and whatever loads must serialize back to exactly the
 * input bytes and answer queries on every instruction set alike.
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

/* What loaded must serialize back to exactly the input bytes. */
static void require_round_trip(const uint8_t *data, size_t size, const sbloom_t *f)
{
    uint8_t *again = sbloom_serialized_size(f) == size ? malloc(size) : NULL;
    if (!again)
        abort();
    if (sbloom_serialize(f, again, size) != SBLOOM_OK || memcmp(again, data, size) != 0)
        abort();
    free(again);
}

/* The keys every loaded filter is probed with, on each instruction set. */
static void fixed_probes(uint64_t probes[16])
{
    for (int i = 0; i < 16; i++)
        probes[i] = (uint64_t)i * 0x9e3779b97f4a7c15ULL;
}

/* Attaching to a copy of the image in place (verified) succeeds exactly when deserializing did,
 * and answers the same. */
static void require_attach_agrees(const uint8_t *data, size_t size, const sbloom_t *loaded,
                                  const uint64_t probes[16], int64_t found)
{
    void *image = NULL;
    if (posix_memalign(&image, 64, size ? size : 1) != 0)
        return;
    memcpy(image, data, size);
    sbloom_t *attached = NULL;
    int rc = sbloom_attach(&attached, image, size, SBLOOM_OPEN_VERIFY);
    if (rc == SBLOOM_E_UNSUPPORTED) { /* big-endian host: in-place images are not offered */
        free(image);
        return;
    }
    if ((rc == SBLOOM_OK) != (loaded != NULL) || (rc != SBLOOM_OK && attached != NULL))
        abort();
    if (attached && sbloom_contains_hashes(attached, probes, 16, NULL) != found)
        abort();
    sbloom_free(attached);
    free(image);
}

static void check_image(const uint8_t *data, size_t size)
{
    sbloom_t *f = NULL;
    uint64_t probes[16];
    fixed_probes(probes);
    if (sbloom_deserialize(&f, data, size) != SBLOOM_OK) {
        if (f != NULL)
            abort(); /* a failed load must leave *out NULL */
        require_attach_agrees(data, size, NULL, probes, 0);
    } else {
        require_round_trip(data, size, f);
        int counting = sbloom_get_layout(f) == SBLOOM_LAYOUT_COUNTING512;
        int64_t found = sbloom_contains_hashes(f, probes, 16, NULL);
        require_attach_agrees(data, size, f, probes, found);
        int64_t removed = counting ? sbloom_remove_hashes(f, probes, 16, NULL) : 0;
        const char *names[FUZZ_MAX_ISAS];
        size_t count = sbloom_isa_list(names, FUZZ_MAX_ISAS);
        for (size_t i = 0; i < count && i < FUZZ_MAX_ISAS; i++) {
            sbloom_t *copy = NULL;
            if (sbloom_set_isa(names[i]) != SBLOOM_OK ||
                sbloom_deserialize(&copy, data, size) != SBLOOM_OK ||
                sbloom_contains_hashes(copy, probes, 16, NULL) != found)
                abort();
            if (counting && (sbloom_remove_hashes(copy, probes, 16, NULL) != removed ||
                             memcmp(sbloom_data(copy), sbloom_data(f), size - 128) != 0))
                abort();
            sbloom_free(copy);
        }
        sbloom_set_isa(NULL);
        sbloom_free(f);
    }
    if (sbloom_parquet_import(&f, data, size) == SBLOOM_OK) {
        /* Exported again, the bitset is the input (in file order on any host). */
        uint8_t *again = malloc(size);
        if (!again || sbloom_bytes(f) != size ||
            sbloom_parquet_export(f, again, size) != SBLOOM_OK || memcmp(again, data, size) != 0)
            abort();
        free(again);
        sbloom_free(f);
    }
}
