/*
 * fuzz_kernels: every instruction set against scalar on operation sequences the fuzzer chooses.
 *
 * Input: layout (1 byte), number of blocks (2 bytes, 1..1024), then operations: an opcode byte
 * (kind = low 2 bits: add, contains, test-and-add, single add+contains; batch length = high 6
 * bits) followed by that many 8-byte hashes. Hashes come straight from the input, so the fuzzer
 * can aim at edge blocks and bit patterns. Answers must be equal after every operation and the
 * filters byte-identical at the end.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in = {data, size, 0};
    sbloom_layout layout = (sbloom_layout)(1 + fuzz_take(&in, 1) % FUZZ_FIXED_LAYOUTS);
    uint64_t nblocks = 1 + fuzz_take(&in, 2) % 1024;
    fuzz_filters ff;
    fuzz_filters_create(&ff, nblocks * sbloom_layout_block_bytes(layout), layout);

    uint64_t hashes[64];
    uint8_t want[64], got[64];
    while (!fuzz_done(&in)) {
        size_t n;
        unsigned op = fuzz_take_op(&in, hashes, &n);
        int64_t want_count = 0;
        for (size_t f = 0; f < ff.count; f++) {
            int64_t count;
            uint8_t *out = f == 0 ? want : got;
            memset(out, 0xee, sizeof want);
            switch (op & 3) {
            case 0: count = sbloom_add_hashes(ff.filter[f], hashes, n); break;
            case 1: count = sbloom_contains_hashes(ff.filter[f], hashes, n, out); break;
            case 2: count = sbloom_add_if_new_hashes(ff.filter[f], hashes, n, out); break;
            default:
                count = n ? sbloom_add_hash(ff.filter[f], hashes[0]) * 2 +
                                sbloom_contains_hash(ff.filter[f], hashes[n - 1])
                          : 0;
                break;
            }
            if (count < 0)
                abort();
            if (f == 0)
                want_count = count;
            else if (count != want_count || memcmp(want, got, sizeof want) != 0)
                abort();
        }
    }
    fuzz_filters_check_and_free(&ff);
    return 0;
}
