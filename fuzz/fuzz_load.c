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

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Writes the payload checksum (offset 80) and the header checksum (offset 120) of the image at
 * p, len bytes. */
static void sign(uint8_t *p, size_t len)
{
    uint64_t payload_sum = XXH3_64bits(p + 128, len - 128);
    for (int i = 0; i < 8; i++)
        p[80 + i] = (uint8_t)(payload_sum >> (8 * i));
    uint64_t header_sum = XXH3_64bits(p, 120);
    for (int i = 0; i < 8; i++)
        p[120 + i] = (uint8_t)(header_sum >> (8 * i));
}

/* Checksums stop almost every mutated input at the door; a copy whose checksums are recomputed
 * (as a buggy or hostile writer's would be) lets the fuzzer reach the field and geometry checks
 * behind. A scalable file (layout 5) holds whole filter images, and a windowed one (layout 6) a
 * 192-byte window record and then whole images: each is re-signed first, as far as the sizes its
 * headers claim fit, then the file. */
static void check_resigned(const uint8_t *data, size_t size)
{
    if (size < 128)
        return;
    uint8_t *copy = malloc(size);
    if (!copy)
        return;
    memcpy(copy, data, size);
    int composite =
        (copy[16] == 5 || copy[16] == 6) && copy[17] == 0 && copy[18] == 0 && copy[19] == 0;
    size_t first = copy[16] == 6 ? 128 + 192 : 128;
    if (composite && size >= first) {
        for (size_t at = first; size - at >= 128;) {
            uint64_t stage_payload = le64(copy + at + 72);
            if (stage_payload > size - at - 128)
                break;
            sign(copy + at, (size_t)(128 + stage_payload));
            at += (size_t)(128 + stage_payload);
        }
    }
    sign(copy, size);
    check_image(copy, size);
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_image(data, size);
    check_resigned(data, size);
    return 0;
}

/* A windowed file that loads as another image: one written before the form byte, with at most 3
 * periods (an image per generation, which today's writer puts as one image of the lines: the
 * record's form byte, at 184, is 0), or one whose rotation a kill cut short (the record's target
 * at 176 set: a load finishes the rotation). */
static int windowed_of_old_form(const uint8_t *data, size_t size, const sbloom_t *f)
{
    return sbloom_get_layout(f) == SBLOOM_LAYOUT_WINDOWED && size >= 128 + 192 &&
           ((data[128 + 184] == 0 && le64(data + 128 + 8) % (UINT64_C(1) << 32) <= 3) ||
            (data[128 + 184] != 2 && le64(data + 128 + 176) != 0));
}

/* What loaded must serialize back to exactly the input bytes; a windowed file of the old form
 * comes back in today's, which must then be stable and answer the same. */
static void require_round_trip(const uint8_t *data, size_t size, const sbloom_t *f)
{
    size_t len = sbloom_serialized_size(f);
    uint8_t *again = len ? malloc(len) : NULL;
    if (!again || sbloom_serialize(f, again, len) != SBLOOM_OK)
        abort();
    if (!windowed_of_old_form(data, size, f)) {
        if (len != size || memcmp(again, data, size) != 0)
            abort();
        free(again);
        return;
    }
    sbloom_t *back = NULL;
    uint8_t *twice = malloc(len);
    uint64_t probes[16];
    for (int i = 0; i < 16; i++)
        probes[i] = (uint64_t)i * 0x9e3779b97f4a7c15ULL;
    if (!twice || sbloom_deserialize(&back, again, len) != SBLOOM_OK ||
        sbloom_serialize(back, twice, len) != SBLOOM_OK || memcmp(again, twice, len) != 0 ||
        sbloom_items(back) != sbloom_items(f) ||
        sbloom_contains_hashes(back, probes, 16, NULL) !=
            sbloom_contains_hashes(f, probes, 16, NULL))
        abort();
    sbloom_free(back);
    free(twice);
    free(again);
}

/* Whatever loads has fields that no arithmetic can trip on: statistics are numbers, a rate is at
 * most 1, a fold ends (its capacity search once spun on a plan of 2^64 - 1 items), and an add
 * does not wrap the item count. */
static void require_sane_fields(const sbloom_t *f)
{
    /* a plan its bytes can carry (each stage's, for a scalable filter) */
    for (uint32_t i = 0; i < sbloom_stages(f); i++) {
        const sbloom_t *stage = sbloom_stage(f, i);
        uint64_t planned = sbloom_planned_items(stage);
        if (planned && !(sbloom_blocked_fpp(sbloom_get_layout(stage), sbloom_bytes(stage),
                                            planned) <= sbloom_planned_fpp(stage) * 1.000001))
            abort();
    }
    sbloom_stats stats = sbloom_stats_init();
    if (sbloom_get_stats(f, &stats) != SBLOOM_OK || !(stats.estimated_fpp >= 0.0) ||
        stats.estimated_fpp > 1.0 || !(stats.fill >= 0.0) || stats.fill > 1.0)
        abort();
    uint64_t factors[4];
    if (sbloom_fold_factors(f, factors, 4) > 0) {
        sbloom_t *folded = NULL;
        if (sbloom_fold(&folded, f, factors[0]) != SBLOOM_OK ||
            sbloom_planned_items(folded) > sbloom_planned_items(f))
            abort();
        sbloom_free(folded);
    }
    sbloom_t *copy = NULL;
    if (sbloom_clone(&copy, f) == SBLOOM_OK) {
        uint64_t before = sbloom_items(copy);
        int added = sbloom_add_u64(copy, 12345); /* a full fingerprint filter may refuse it */
        if ((added < 0 && added != SBLOOM_E_FULL) || sbloom_items(copy) < before)
            abort();
        sbloom_free(copy);
    }
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
    /* a scalable or windowed filter's cores are separate filters: loaded, never attached in place
     */
    int attachable = loaded != NULL && sbloom_get_layout(loaded) != SBLOOM_LAYOUT_SCALABLE &&
                     sbloom_get_layout(loaded) != SBLOOM_LAYOUT_WINDOWED;
    if ((rc == SBLOOM_OK) != attachable || (rc != SBLOOM_OK && attached != NULL))
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
        require_sane_fields(f);
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
