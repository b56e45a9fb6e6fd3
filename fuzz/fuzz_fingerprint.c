/*
 * fuzz_fingerprint: the fingerprint layouts' kernels on every instruction set against scalar, on
 * operation sequences the fuzzer chooses.
 *
 * Input: the layout (1 byte: one of the seven fp512-r* geometries), the number of lines (1 byte,
 * 2..65: small, so that lines overflow into the spare and the spare fills, and adds are refused),
 * then operations as fuzz_counting reads them: an opcode byte (low 2 bits: test-and-add, remove,
 * contains, or one key of each by the single-key calls; high 6 bits: batch length) and that many
 * 8-byte hashes. Answers (SBLOOM_E_FULL included) and item counts must be equal after every
 * operation, and the lines byte-identical at the end. The scalar filter also keeps the promise
 * the API makes: a hash whose add answered new, and that no remove has taken out since, is
 * present (until a remove succeeds for a hash that was not held: a collision's entry, which may
 * rightly be another key's).
 */
#include "fuzz_common.h"

#define TRACKED 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in = {data, size, 0};
    sbloom_layout layout = (sbloom_layout)(SBLOOM_LAYOUT_FP512_R10 + fuzz_take(&in, 1) % 7);
    uint64_t bytes = 64 * (2 + fuzz_take(&in, 1) % 64);
    fuzz_filters ff;
    fuzz_filters_create(&ff, bytes, layout);

    uint64_t held[TRACKED]; /* hashes added as new and not removed since */
    size_t nheld = 0;
    int tracking = 1;

    uint64_t hashes[64];
    uint8_t want[64], got[64];
    while (!fuzz_done(&in)) {
        size_t n;
        unsigned op = fuzz_take_op(&in, hashes, &n);
        int64_t want_count = 0;
        for (size_t f = 0; f < ff.count; f++) {
            sbloom_t *filter = ff.filter[f];
            int64_t answer;
            uint8_t *out = f == 0 ? want : got;
            memset(out, 0xee, sizeof want);
            answer = fuzz_removing_op(filter, op, hashes, n, out);
            if (f == 0)
                want_count = answer;
            else if (answer != want_count || memcmp(want, got, sizeof want) != 0 ||
                     sbloom_items(ff.filter[0]) != sbloom_items(filter))
                abort();
        }
        if ((op & 3) == 3 && n) {
            tracking = 0; /* the single form adds one hash and removes another */
        } else if ((op & 3) <= 1) {
            for (size_t i = 0; i < n && tracking; i++) {
                size_t at = 0;
                while (at < nheld && held[at] != hashes[i])
                    at++;
                if ((op & 3) == 0 && want[i] == 1 && at == nheld && nheld < TRACKED)
                    held[nheld++] = hashes[i];
                else if ((op & 3) == 1 && want[i] == 1) {
                    if (at == nheld)
                        tracking = 0;
                    else
                        held[at] = held[--nheld];
                }
            }
        }
        for (size_t i = 0; i < nheld && tracking; i++)
            if (sbloom_contains_hash(ff.filter[0], held[i]) != 1)
                abort(); /* a false negative although only keys added as new were removed */
    }
    fuzz_filters_check_and_free(&ff);
    return 0;
}
