/*
 * fuzz_normalize: arbitrary bytes as a line for --normalize url. The normal form must fit the
 * len + 1 bytes the threaded path gives each key (the buffer here is exactly that, so ASan sees
 * any write past it), and the same line always gives the same form. (Normalizing is not
 * idempotent on invalid escapes: "%%61" gives "%a", whose "%a7..." the next pass reads as an
 * escape; a stray '%' cannot be written as "%25" within the len + 1 bytes.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/cli/normalize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size ? size : 1), *out = malloc(size + 1);
    if (!in || !out)
        abort();
    memcpy(in, data, size);
    size_t len = url_normalize(in, size, out);
    if (len > size + 1)
        abort();
    if (len > 0) {
        char *again = malloc(size + 1);
        if (!again)
            abort();
        if (url_normalize(in, size, again) != len || memcmp(again, out, len) != 0)
            abort(); /* the same line, another form */
        free(again);
    }
    free(in);
    free(out);
    return 0;
}
