/* Where a key lives in a fingerprint core, for the concurrent mode's locks: its main line, and
 * whether an operation on it may read or write the spare lines as its line stands now. */
#include "core.h"

uint64_t sbloom_core_fp_line(const sbloom_core *c, uint64_t hash)
{
    return sbk_fp_home(hash, c->nblocks);
}

/* The kernel's (its geometry's constants folded in, and the ISA's popcount: the generic build's
 * called libgcc's, and with the geometry looked up a key this took a quarter of a concurrent
 * add's time). */
int sbloom_core_fp_reaches_spare(const sbloom_core *c, uint64_t hash)
{
    return c->kern->reaches_spare(c->blocks, c->nblocks, hash);
}

uint64_t sbloom_core_fp_spill_lines(uint64_t lines)
{
    return sbk_fp_spill_lines(lines);
}
