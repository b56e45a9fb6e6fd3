/*
 * fuzz_counting: the counting filter's kernels on every instruction set against scalar, on
 * operation sequences the fuzzer chooses.
 *
 * Input: number of blocks (1 byte, 1..64: small, so that counters saturate), then operations: an
 * opcode byte (kind = low 2 bits: add, remove, contains, single add/remove/contains; batch length
 * = high 6 bits) followed by that many 8-byte hashes. Answers and item counts must be equal after
 * every operation and the counter arrays byte-identical at the end. The scalar filter also keeps
 * the promise the API makes: a hash added and not yet removed is present.
 */
#include "fuzz_common.h"

#define TRACKED 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in = {data, size, 0};
    uint64_t bytes = 64 * (1 + fuzz_take(&in, 1) % 64);
    const char *isa[FUZZ_MAX_ISAS];
    sbloom_t *filter[FUZZ_MAX_ISAS];
    size_t count = sbloom_isa_list(isa, FUZZ_MAX_ISAS);
    for (size_t i = 0; i < count; i++)
        if (sbloom_set_isa(isa[i]) != SBLOOM_OK ||
            sbloom_create_bytes(&filter[i], bytes, SBLOOM_LAYOUT_COUNTING512) != SBLOOM_OK)
            abort();
    sbloom_set_isa(NULL);

    /* The multiset of hashes added and not removed, for the first TRACKED distinct ones. */
    uint64_t held[TRACKED];
    uint32_t times[TRACKED];
    size_t nheld = 0;
    int tracking = 1; /* until a remove the tracking cannot vouch for (see below) */

    uint64_t hashes[64];
    uint8_t want[64], got[64];
    while (!fuzz_done(&in)) {
        size_t n;
        unsigned op = fuzz_take_op(&in, hashes, &n);
        int64_t want_count = 0;
        for (size_t f = 0; f < count; f++) {
            int64_t answer;
            uint8_t *out = f == 0 ? want : got;
            memset(out, 0xee, sizeof want);
            answer = fuzz_removing_op(filter[f], op, hashes, n, out);
            if (f == 0)
                want_count = answer;
            else if (answer != want_count || memcmp(want, got, sizeof want) != 0 ||
                     sbloom_items(filter[0]) != sbloom_items(filter[f]))
                abort();
        }
        /* Track adds and removes. A successful remove of a hash not held (a false positive,
         * or one beyond TRACKED) may rightly take counts from others: the check stops there. */
        if ((op & 3) == 0 || (op & 3) == 1) {
            for (size_t i = 0; i < n && tracking; i++) {
                size_t at = 0;
                while (at < nheld && held[at] != hashes[i])
                    at++;
                if ((op & 3) == 0) {
                    if (at == nheld && nheld < TRACKED) {
                        held[nheld] = hashes[i];
                        times[nheld++] = 0;
                    }
                    if (at < nheld)
                        times[at]++;
                } else if (want[i] == 1) {
                    if (at < nheld && times[at] > 0)
                        times[at]--;
                    else
                        tracking = 0;
                }
            }
        } else if ((op & 3) == 3 && n) {
            tracking = 0; /* the single form adds one hash and removes another */
        }
        for (size_t i = 0; i < nheld && tracking; i++)
            if (times[i] > 0 && sbloom_contains_hash(filter[0], held[i]) != 1)
                abort(); /* a false negative although only added keys were removed */
    }
    for (size_t f = 1; f < count; f++)
        if (memcmp(sbloom_data(filter[0]), sbloom_data(filter[f]), bytes) != 0)
            abort();
    for (size_t f = 0; f < count; f++)
        sbloom_free(filter[f]);
    return 0;
}
