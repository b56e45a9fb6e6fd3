/* Where a key lives in a fingerprint core, for the concurrent mode's locks: its main line, and
 * whether an operation on it may read or write the spare lines as its line stands now. */
#include "core.h"

uint64_t sbloom_core_fp_line(const sbloom_core *c, uint64_t hash)
{
    return sbk_fp_home(hash, c->nblocks);
}

/* A key at or above its line's mark may be in the spare (a lookup reads it there, a remove takes
 * it from there, an add looks there first and puts it there); an add to a full line sends a key
 * out to the spare. */
int sbloom_core_fp_reaches_spare(const sbloom_core *c, uint64_t hash)
{
    sbk_fp_geo g;
    sbloom_layout_fp_geometry(c->layout, &g);
    sbk_fp_key k = sbk_fp_split(hash, sbk_fp_main_lines(c->nblocks), g); /* as the kernels split */
    const uint64_t *w = (const uint64_t *)((const char *)c->blocks + k.line * 64);
    return k.q >= sbk_fp_mark(w, g) || sbk_fp_count(w, g) >= g.s;
}

uint64_t sbloom_core_fp_spill_lines(uint64_t lines)
{
    return sbk_fp_spill_lines(lines);
}
