/* Where a key lives in a fingerprint core, for the concurrent mode's locks: its main line, and
 * whether an operation on it may read or write the spare lines as its line stands now. */
#include "core.h"

/* The key as the kernels split it: its main line's words, and the key's quotient. */
static const uint64_t *home_line(const sbloom_core *c, uint64_t hash, sbk_fp_geo *g, unsigned *q,
                                 uint64_t *line)
{
    sbloom_layout_fp_geometry(c->layout, g);
    sbk_fp_key k = sbk_fp_split(hash, sbk_fp_main_lines(c->nblocks), *g);
    *q = k.q;
    *line = k.line;
    return (const uint64_t *)((const char *)c->blocks + k.line * 64);
}

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
    unsigned q;
    uint64_t line;
    const uint64_t *w = home_line(c, hash, &g, &q, &line);
    return q >= sbk_fp_mark(w, g) || sbk_fp_count(w, g) >= g.s;
}
