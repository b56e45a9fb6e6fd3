/*
 * The fingerprint family: a key is a line (one 64-byte bucket, from the hash's high bits), a
 * quotient (one of Q mini-buckets of the line) and a remainder of r bits; the line stores the
 * remainders, in order of their quotient, and a unary directory that says which quotient each
 * has. A lookup reads one line; a line that overflowed sends the keys of its highest quotients to
 * a spare, and only lookups at or above its mark (the lowest quotient it ever sent) read the spare
 * too (docs/SIZING.md derives the rate and the loads; docs/FORMAT.md the bytes).
 *
 * A line, as 512 bits (bit b is bit b % 64 of 64-bit word b / 64, so on a little-endian host byte
 * i of the line holds bits 8i .. 8i+7):
 *
 *   bits 0 .. Q+s-1        the directory: for each quotient j in turn, a 1 per key of quotient j
 *                          and then a 0. With c keys the first Q + c bits are used, the rest 0.
 *   bits Q+s .. +mark_bits Q - mark: 0 while the line never overflowed (mark = Q)
 *   bytes head_bytes ..    s main bytes: the top 8 bits of each slot's remainder
 *   after them             s extras of r - 8 bits: the rest of each remainder, packed
 *
 * Slot i (the i-th key in directory order) holds the remainder (main[i] << extra_bits) |
 * extra[i]; unused slots are 0, so an empty line is all zero bytes and a filter starts as zeros.
 *
 * The filter's blocks are main lines followed by spare lines, one spare line for every 20 main
 * lines (sbk_fp_spare_lines). A spare line has the same form (its mark unused); a key that leaves
 * its main line is identified by (line, quotient, remainder) alone, which choose two spare lines
 * and a quotient and remainder in them (sbk_fp_spare); it goes to the emptier of the two. When
 * both are full the add is refused (SBK_FP_REFUSED) and nothing changes.
 *
 * This header holds the geometry, the hash's decomposition, the line operations twice (a
 * reference written for reading, used by the scalar table; and word-level forms for the vector
 * tables, which give the same bytes), and the key operations and batch loops over either.
 */
#ifndef SIMDBLOOM_FINGERPRINT_H
#define SIMDBLOOM_FINGERPRINT_H

#include <stdint.h>
#include <string.h>

#include "kernels.h"

/* The geometries: X(NAME, INDEX, R, S, Q, MARK_BITS, HEAD_BYTES): remainder bits, slots a line,
 * quotients a line, the mark's bits (enough for 0 .. Q) and the bytes of directory and mark
 * (Q + S + MARK_BITS bits, rounded up). Every one fits 512 bits: HEAD_BYTES * 8 + S * R <= 512.
 * experiments/fingerprint_model/model.py chose them: the fewest bits a key for rates 1e-3 .. 1e-9
 * (docs/notes/fingerprints.md). */
#define SBK_FP_GEOMETRIES(X)                                                                       \
    X(fp10, SBK_FP512_R10, 10, 42, 40, 6, 11)                                                      \
    X(fp13, SBK_FP512_R13, 13, 33, 41, 6, 10)                                                      \
    X(fp16, SBK_FP512_R16, 16, 27, 47, 6, 10)                                                      \
    X(fp19, SBK_FP512_R19, 19, 23, 43, 6, 9)                                                       \
    X(fp22, SBK_FP512_R22, 22, 20, 46, 6, 9)                                                       \
    X(fp27, SBK_FP512_R27, 27, 17, 26, 5, 6)                                                       \
    X(fp29, SBK_FP512_R29, 29, 16, 27, 5, 6)

/* The line operations are inlined into each geometry's kernels, whatever the compiler's size
 * heuristics say: with the geometry's constants folded in (a put or lookup of fp512-r19 knows its
 * field offsets), an insert into a 1M-key fp512-r19 filter went from ~24 to ~16 ns a key on an
 * AMD Zen 4 (AVX-512; docs/notes/fingerprints.md). The spare's path, about 5% of
 * operations, stays out of line (SBK_FP_COLD), so that the common path keeps its registers. */
#define SBK_FP_INLINE static inline __attribute__((always_inline))
#define SBK_FP_COLD static __attribute__((noinline))

typedef struct sbk_fp_geo {
    unsigned r, s, q, mark_bits, head_bytes;
} sbk_fp_geo;

#define SBK_FP_GEO(R, S, Q, MARK_BITS, HEAD_BYTES) ((sbk_fp_geo){R, S, Q, MARK_BITS, HEAD_BYTES})

/* Bits of a remainder beyond its main byte, and where the main bytes and the extras begin. */
SBK_FP_INLINE unsigned sbk_fp_extra_bits(sbk_fp_geo g)
{
    return g.r - 8;
}
SBK_FP_INLINE unsigned sbk_fp_main_at(sbk_fp_geo g)
{
    return g.head_bytes * 8;
}
SBK_FP_INLINE unsigned sbk_fp_extra_at(sbk_fp_geo g)
{
    return (g.head_bytes + g.s) * 8;
}

/* One spare line for every SBK_FP_SPARE_EVERY - 1 main lines (rounded up: at least one). The
 * spare takes the keys past a full line, 4.5% of them at the most a plan loads a line with; at
 * that load 20 main lines send 0.85 s keys a spare line on average, where two choices keep the
 * chance that both of a key's spare lines are full below 1e-16 a line (docs/SIZING.md). */
#define SBK_FP_SPARE_EVERY 21

SBK_FP_INLINE uint64_t sbk_fp_spare_lines(uint64_t nblocks)
{
    return (nblocks + SBK_FP_SPARE_EVERY - 1) / SBK_FP_SPARE_EVERY;
}

SBK_FP_INLINE uint64_t sbk_fp_main_lines(uint64_t nblocks)
{
    return nblocks - sbk_fp_spare_lines(nblocks);
}

/* ---- The hash's decomposition ---- */

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 sbk_u128;
#else
#error "the fingerprint kernels need a 64 x 64 -> 128-bit multiply (unsigned __int128)"
#endif

/* The high 64 bits of a * b; the low 64 in *low. */
SBK_FP_INLINE uint64_t sbk_mul_high(uint64_t a, uint64_t b, uint64_t *low)
{
    sbk_u128 p = (sbk_u128)a * b;
    *low = (uint64_t)p;
    return (uint64_t)(p >> 64);
}

typedef struct sbk_fp_key {
    uint64_t line; /* main line, 0 .. lines - 1 */
    uint32_t q;    /* quotient, 0 .. Q - 1 */
    uint32_t rem;  /* remainder, r bits */
} sbk_fp_key;

/* hash / 2^64 as a point in [0, lines): its whole part is the line; the fraction, times Q, gives
 * the quotient as its whole part and the remainder as the top r bits of what is left. Each step
 * keeps the rest of the hash's entropy, so line, quotient and remainder are uniform and
 * independent for a uniform hash (64 bits are enough: lines * Q * 2^r < 2^64 for any filter up to
 * SBLOOM_MAX_BYTES). */
SBK_FP_INLINE sbk_fp_key sbk_fp_split(uint64_t hash, uint64_t lines, sbk_fp_geo g)
{
    sbk_fp_key k;
    uint64_t fraction, rest;
    k.line = sbk_mul_high(hash, lines, &fraction);
    k.q = (uint32_t)sbk_mul_high(fraction, g.q, &rest);
    k.rem = (uint32_t)(rest >> (64 - g.r));
    return k;
}

/* The key's main line, for a prefetch. */
SBK_FP_INLINE uint64_t sbk_fp_home(uint64_t hash, uint64_t nblocks)
{
    uint64_t unused;
    return sbk_mul_high(hash, sbk_fp_main_lines(nblocks), &unused);
}

/* MurmurHash3's 64-bit finalizer: a bijection that mixes every input bit into every output bit. */
SBK_FP_INLINE uint64_t sbk_fp_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

typedef struct sbk_fp_spare_key {
    uint64_t a, b; /* the two spare lines it may be in, 0 .. spare lines - 1 */
    uint32_t q, rem;
} sbk_fp_spare_key;

/* Where a key that left main line k.line lives in the spare: a function of (line, quotient,
 * remainder) only, since that is all a line keeps of a key it moves out. */
SBK_FP_INLINE sbk_fp_spare_key sbk_fp_spare(sbk_fp_key k, uint64_t spare_lines, sbk_fp_geo g)
{
    uint64_t fingerprint = ((uint64_t)k.q << g.r) | k.rem;
    uint64_t id = sbk_fp_mix(k.line ^ sbk_fp_mix(fingerprint + UINT64_C(0x9e3779b97f4a7c15)));
    uint64_t unused;
    sbk_fp_spare_key s;
    s.a = sbk_mul_high(id, spare_lines, &unused);
    s.b = sbk_mul_high(sbk_fp_mix(id + UINT64_C(0x632be59bd9b4e019)), spare_lines, &unused);
    sbk_fp_key inner = sbk_fp_split(sbk_fp_mix(id + UINT64_C(0x85ebca77c2b2ae63)), 1, g);
    s.q = inner.q;
    s.rem = inner.rem;
    return s;
}

/* A lookup between its two steps (SBK_FP_DEFINE_KEY_OPS: probe_start, probe_finish). */
typedef struct sbk_fp_probe {
    const uint64_t *w; /* the main line */
    sbk_fp_key k;
    uint64_t hits;      /* the slots whose main byte matches (word-level forms) */
    int ask_spare;      /* the quotient is at or above the line's mark */
    sbk_fp_spare_key s; /* then: where it would be in the spare (its lines requested) */
} sbk_fp_probe;

/* ---- Bits of a line (512 bits in 8 native 64-bit words) ---- */

/* len bits (1 .. 57) from bit `at`. */
SBK_FP_INLINE uint64_t sbk_fp_bits(const uint64_t *w, unsigned at, unsigned len)
{
    unsigned i = at / 64, o = at % 64;
    uint64_t v = w[i] >> o;
    if (o + len > 64)
        v |= w[i + 1] << (64 - o);
    return v & ((UINT64_C(1) << len) - 1);
}

SBK_FP_INLINE void sbk_fp_set_bits(uint64_t *w, unsigned at, unsigned len, uint64_t v)
{
    unsigned i = at / 64, o = at % 64;
    uint64_t mask = (UINT64_C(1) << len) - 1;
    w[i] = (w[i] & ~(mask << o)) | (v << o);
    if (o + len > 64) {
        unsigned spill = 64 - o;
        w[i + 1] = (w[i + 1] & ~(mask >> spill)) | (v >> spill);
    }
}

/* The directory (Q + s bits, at most 89) and the mark. */
SBK_FP_INLINE sbk_u128 sbk_fp_directory(const uint64_t *w, sbk_fp_geo g)
{
    sbk_u128 d = (sbk_u128)w[0] | (sbk_u128)w[1] << 64;
    return d & (((sbk_u128)1 << (g.q + g.s)) - 1);
}

SBK_FP_INLINE void sbk_fp_set_directory(uint64_t *w, sbk_fp_geo g, sbk_u128 d)
{
    sbk_u128 keep = ~(((sbk_u128)1 << (g.q + g.s)) - 1);
    sbk_u128 v = (((sbk_u128)w[0] | (sbk_u128)w[1] << 64) & keep) | d;
    w[0] = (uint64_t)v;
    w[1] = (uint64_t)(v >> 64);
}

/* Keys in a line from its directory: its ones, at most s (a damaged line's count is taken as s,
 * so that no operation reaches past the line: it answers wrongly, as a damaged Bloom block does,
 * and the payload's checksum is what guards a file against that). */
SBK_FP_INLINE unsigned sbk_fp_count_of(sbk_u128 d, sbk_fp_geo g)
{
    unsigned ones =
        (unsigned)(__builtin_popcountll((uint64_t)d) + __builtin_popcountll((uint64_t)(d >> 64)));
    return ones < g.s ? ones : g.s;
}

SBK_FP_INLINE unsigned sbk_fp_count(const uint64_t *w, sbk_fp_geo g)
{
    return sbk_fp_count_of(sbk_fp_directory(w, g), g);
}

/* The line's mark: quotients at or above it may have keys in the spare (Q: none can). */
SBK_FP_INLINE unsigned sbk_fp_mark(const uint64_t *w, sbk_fp_geo g)
{
    return g.q - (unsigned)sbk_fp_bits(w, g.q + g.s, g.mark_bits);
}

SBK_FP_INLINE void sbk_fp_lower_mark(uint64_t *w, sbk_fp_geo g, unsigned q)
{
    if (q < sbk_fp_mark(w, g))
        sbk_fp_set_bits(w, g.q + g.s, g.mark_bits, g.q - q);
}

/* ---- The reference line operations: slot by slot, bit by bit ---- */

SBK_FP_INLINE uint32_t sbk_fp_ref_slot(const uint64_t *w, sbk_fp_geo g, unsigned i)
{
    unsigned e = sbk_fp_extra_bits(g);
    uint32_t main_byte = (uint32_t)sbk_fp_bits(w, sbk_fp_main_at(g) + 8 * i, 8);
    return (main_byte << e) | (uint32_t)sbk_fp_bits(w, sbk_fp_extra_at(g) + e * i, e);
}

SBK_FP_INLINE void sbk_fp_ref_set_slot(uint64_t *w, sbk_fp_geo g, unsigned i, uint32_t rem)
{
    unsigned e = sbk_fp_extra_bits(g);
    sbk_fp_set_bits(w, sbk_fp_main_at(g) + 8 * i, 8, rem >> e);
    sbk_fp_set_bits(w, sbk_fp_extra_at(g) + e * i, e, rem & ((UINT32_C(1) << e) - 1));
}

SBK_FP_INLINE unsigned sbk_fp_ref_bit(const uint64_t *w, unsigned b)
{
    return (unsigned)(w[b / 64] >> (b % 64)) & 1;
}

SBK_FP_INLINE void sbk_fp_ref_set_bit(uint64_t *w, unsigned b, unsigned v)
{
    w[b / 64] = (w[b / 64] & ~(UINT64_C(1) << (b % 64))) | ((uint64_t)v << (b % 64));
}

/* Directory bit b, 0 past the directory's Q + s bits. */
SBK_FP_INLINE unsigned sbk_fp_ref_dir_bit(const uint64_t *w, sbk_fp_geo g, unsigned b)
{
    return b < g.q + g.s ? sbk_fp_ref_bit(w, b) : 0;
}

/* The slots of quotient q: [*start, *end). Walk the directory: a 1 is a key, a 0 ends a
 * quotient's run. (Bounded by the line's count, for a damaged line's sake.) */
SBK_FP_INLINE void sbk_fp_ref_run(const uint64_t *w, sbk_fp_geo g, unsigned q, unsigned *start,
                                  unsigned *end)
{
    unsigned b = 0, slot = 0, zeros = 0, count = sbk_fp_count(w, g);
    while (zeros < q && b < g.q + g.s) {
        if (sbk_fp_ref_dir_bit(w, g, b))
            slot++;
        else
            zeros++;
        b++;
    }
    *start = slot < count ? slot : count;
    while (sbk_fp_ref_dir_bit(w, g, b)) {
        slot++;
        b++;
    }
    *end = slot < count ? slot : count;
}

/* The slot holding (q, rem), or -1. */
SBK_FP_INLINE int sbk_fp_ref_find(const uint64_t *w, sbk_fp_geo g, unsigned q, uint32_t rem)
{
    unsigned start, end;
    sbk_fp_ref_run(w, g, q, &start, &end);
    for (unsigned i = start; i < end; i++)
        if (sbk_fp_ref_slot(w, g, i) == rem)
            return (int)i;
    return -1;
}

/* The slot of quotient q whose remainder equals rem but for its low `age_bits` (a window's
 * entry: src/modes/windowed.c, "Ages"), or -1. */
SBK_FP_INLINE int sbk_fp_ref_find_aged(const uint64_t *w, sbk_fp_geo g, unsigned q, uint32_t rem,
                                       unsigned age_bits)
{
    unsigned start, end;
    sbk_fp_ref_run(w, g, q, &start, &end);
    for (unsigned i = start; i < end; i++)
        if (((sbk_fp_ref_slot(w, g, i) ^ rem) >> age_bits) == 0)
            return (int)i;
    return -1;
}

/* The two steps of a batch's lookups (sbk_fp_probe): the reference does all in the second. */
SBK_FP_INLINE uint64_t sbk_fp_ref_candidates(const uint64_t *w, sbk_fp_geo g, uint32_t rem)
{
    (void)w, (void)g, (void)rem;
    return 0;
}

SBK_FP_INLINE int sbk_fp_ref_confirm(const uint64_t *w, sbk_fp_geo g, unsigned q, uint32_t rem,
                                     uint64_t hits)
{
    (void)hits;
    return sbk_fp_ref_find(w, g, q, rem);
}

/* Adds (q, rem) at the end of quotient q's run; the line has room. */
SBK_FP_INLINE void sbk_fp_ref_put(uint64_t *w, sbk_fp_geo g, unsigned q, uint32_t rem)
{
    unsigned count = sbk_fp_count(w, g), start, end;
    sbk_fp_ref_run(w, g, q, &start, &end);
    for (unsigned i = count; i > end; i--) /* the later slots move up one */
        sbk_fp_ref_set_slot(w, g, i, sbk_fp_ref_slot(w, g, i - 1));
    sbk_fp_ref_set_slot(w, g, end, rem);
    /* a 1 at directory bit q + end (end keys and q zeros before it), the bits above move up */
    for (unsigned b = g.q + count; b > q + end; b--)
        sbk_fp_ref_set_bit(w, b, sbk_fp_ref_bit(w, b - 1));
    sbk_fp_ref_set_bit(w, q + end, 1);
}

/* Takes out slot i, of quotient q. */
SBK_FP_INLINE void sbk_fp_ref_drop(uint64_t *w, sbk_fp_geo g, unsigned q, unsigned i)
{
    unsigned count = sbk_fp_count(w, g);
    for (unsigned j = i; j + 1 < count; j++) /* the later slots move down one */
        sbk_fp_ref_set_slot(w, g, j, sbk_fp_ref_slot(w, g, j + 1));
    sbk_fp_ref_set_slot(w, g, count - 1, 0);
    for (unsigned b = q + i; b + 1 < g.q + count; b++)
        sbk_fp_ref_set_bit(w, b, sbk_fp_ref_bit(w, b + 1));
    sbk_fp_ref_set_bit(w, g.q + count - 1, 0);
}

/* The quotient of slot i: the zeros in the directory before its 1, the i-th. */
SBK_FP_INLINE unsigned sbk_fp_ref_quotient_of(const uint64_t *w, sbk_fp_geo g, unsigned i)
{
    unsigned ones = 0, zeros = 0;
    for (unsigned b = 0; b < g.q + g.s; b++) {
        if (!sbk_fp_ref_bit(w, b))
            zeros++;
        else if (ones++ == i)
            break;
    }
    return zeros;
}

/* Takes out every slot in `slots` (bit i: slot i), the highest first, so that the slots below
 * keep their places and their quotients (`many`: the faster forms' hint, unused here). */
SBK_FP_INLINE void sbk_fp_ref_drop_slots(uint64_t *w, sbk_fp_geo g, uint64_t slots, int many)
{
    (void)many;
    for (unsigned i = 64; i-- > 0;)
        if (slots >> i & 1)
            sbk_fp_ref_drop(w, g, sbk_fp_ref_quotient_of(w, g, i), i);
}

/* The quotient of the last slot of a full line: the zeros before its directory bit, the
 * highest 1. */
SBK_FP_INLINE unsigned sbk_fp_ref_last_quotient(const uint64_t *w, sbk_fp_geo g)
{
    unsigned b = g.q + g.s - 1;
    while (b > 0 && !sbk_fp_ref_bit(w, b))
        b--;
    return b >= g.s - 1 && b - (g.s - 1) < g.q ? b - (g.s - 1) : g.q - 1; /* (damaged: Q - 1) */
}

/* ---- Word-level line operations (the vector tables'): the same bytes as the reference ---- */

/* Bits [lo, hi) of word j of a 512-bit line, as a mask. */
SBK_FP_INLINE uint64_t sbk_fp_span(unsigned lo, unsigned hi, unsigned j)
{
    unsigned a = j * 64, b = a + 64;
    lo = lo > a ? lo : a;
    hi = hi < b ? hi : b;
    if (lo >= hi)
        return 0;
    uint64_t upto = hi - a == 64 ? ~UINT64_C(0) : (UINT64_C(1) << (hi - a)) - 1;
    return upto & ~((UINT64_C(1) << (lo - a)) - 1);
}

/* Bits [at, end) move up k (1 .. 63) to [at + k, end + k); [at, at + k) becomes 0. The bits
 * [end, end + k) it overwrites are unused slots (0). */
SBK_FP_INLINE void sbk_fp_open(uint64_t *w, unsigned at, unsigned end, unsigned k)
{
    unsigned first = at / 64, last = (end + k - 1) / 64;
    for (unsigned j = last + 1; j-- > first;) {
        uint64_t shifted = (w[j] << k) | (j > first ? w[j - 1] >> (64 - k) : 0);
        uint64_t moved = sbk_fp_span(at + k, end + k, j), cleared = sbk_fp_span(at, at + k, j);
        w[j] = (w[j] & ~(moved | cleared)) | (shifted & moved);
    }
}

/* Bits [at + k, end) move down k to [at, end - k); [end - k, end) becomes 0. */
SBK_FP_INLINE void sbk_fp_close(uint64_t *w, unsigned at, unsigned end, unsigned k)
{
    unsigned first = at / 64, last = (end - 1) / 64;
    for (unsigned j = first; j <= last; j++) {
        uint64_t shifted = (w[j] >> k) | (j < last ? w[j + 1] << (64 - k) : 0);
        uint64_t moved = sbk_fp_span(at, end - k, j), cleared = sbk_fp_span(end - k, end, j);
        w[j] = (w[j] & ~(moved | cleared)) | (shifted & moved);
    }
}

/* The position of the j-th 0 (from 0) of a 64-bit word x, or 64 + something when x has no more
 * than j zeros (the caller then takes the next word's answer). */
SBK_FP_INLINE unsigned sbk_fp_select0_64(uint64_t x, unsigned j)
{
#if defined(__BMI2__)
    uint64_t bit = __builtin_ia32_pdep_di(UINT64_C(1) << (j & 63), ~x);
    return bit ? (unsigned)__builtin_ctzll(bit) : 64;
#else
    x = ~x;
    for (unsigned i = 0; i < j && x; i++)
        x &= x - 1; /* drop the lowest set bit j times */
    return x ? (unsigned)__builtin_ctzll(x) : 64;
#endif
}

/* The position of the j-th 0 of the directory (it has one for every j < Q): in the low word, or
 * the high word's (j - zeros of the low word)-th. Both are computed and one kept, without a
 * branch: which word holds it depends on the line, and a wrong guess costs more than the work. */
SBK_FP_INLINE unsigned sbk_fp_select0(sbk_u128 d, unsigned j, int one_word)
{
    uint64_t low = (uint64_t)d;
    unsigned in_low = sbk_fp_select0_64(low, j);
    if (one_word)
        return in_low;
    unsigned zeros_low = 64 - (unsigned)__builtin_popcountll(low);
    unsigned in_high = 64 + sbk_fp_select0_64((uint64_t)(d >> 64), (j - zeros_low) & 63);
    return j < zeros_low ? in_low : in_high;
}

/* The slot after quotient q's last: its run ends at zero number q, q + end (end ones and q zeros
 * before it). A new key of quotient q goes there. */
SBK_FP_INLINE unsigned sbk_fp_run_end(sbk_u128 d, sbk_fp_geo g, unsigned q)
{
    unsigned end = sbk_fp_select0(d, q, g.q + g.s <= 64) - q, count = sbk_fp_count_of(d, g);
    return end < count ? end : count; /* (a damaged line's could be past it) */
}

/* The directory with a 1 added at the end of quotient q's run (the bits from there up move up
 * one), and in *end that slot (sbk_fp_run_end). With BMI2, from the one-hot bit of zero number q
 * (pdep in either word) by adds alone: d + (d's bits from it up) + it, each of d's bits there
 * counted twice (moved up one) and the new 1 on the 0 they leave; else by shifts. */
SBK_FP_INLINE sbk_u128 sbk_fp_directory_with(sbk_u128 d, sbk_fp_geo g, unsigned q, unsigned *end)
{
#if defined(__BMI2__)
    unsigned count = sbk_fp_count_of(d, g);
    uint64_t low = (uint64_t)d, high = (uint64_t)(d >> 64);
    unsigned zeros_low = 64 - (unsigned)__builtin_popcountll(low);
    uint64_t in_low = __builtin_ia32_pdep_di(UINT64_C(1) << (q & 63), ~low);
    uint64_t in_high = __builtin_ia32_pdep_di(UINT64_C(1) << ((q - zeros_low) & 63), ~high);
    in_high = q < zeros_low || g.q + g.s <= 64 ? 0 : in_high; /* (in_low is 0 past its zeros) */
    unsigned at =
        in_low ? (unsigned)__builtin_ctzll(in_low) : 64 + (unsigned)__builtin_ctzll(in_high);
    if (at - q <= count) { /* (always, but in a damaged line: below) */
        sbk_u128 bit = (sbk_u128)in_high << 64 | in_low;
        *end = at - q;
        return d + (d & -bit) + bit;
    }
#endif
    unsigned e = sbk_fp_run_end(d, g, q), at2 = q + e;
    sbk_u128 below = ((sbk_u128)1 << at2) - 1;
    *end = e;
    return (d & below) | ((sbk_u128)1 << at2) | ((d & ~below) << 1);
}

/* Quotient q's slots [*start, *end) from the directory: its run ends at zero number q (q + end:
 * end ones and q zeros before it) and begins after zero number q - 1 (or at slot 0). */
SBK_FP_INLINE void sbk_fp_run(sbk_u128 d, sbk_fp_geo g, unsigned q, unsigned *start, unsigned *end)
{
    int one_word = g.q + g.s <= 64;
    *end = sbk_fp_select0(d, q, one_word) - q;
    unsigned before = sbk_fp_select0(d, q - 1, one_word) + 1 - q; /* q > 0: ones before it */
    *start = q ? before : 0;
}

/* The position of the j-th 1 (from 0) of a 64-bit word, 64 or more when it has no more than j. */
SBK_FP_INLINE unsigned sbk_fp_select1_64(uint64_t x, unsigned j)
{
#if defined(__BMI2__)
    uint64_t bit = __builtin_ia32_pdep_di(UINT64_C(1) << (j & 63), x);
    return bit ? (unsigned)__builtin_ctzll(bit) : 64;
#else
    for (unsigned k = 0; k < j && x; k++)
        x &= x - 1;
    return x ? (unsigned)__builtin_ctzll(x) : 64;
#endif
}

/* The quotient of slot i: the zeros before its 1 in the directory (the i-th 1, at position
 * quotient + i). */
SBK_FP_INLINE unsigned sbk_fp_quotient_of(sbk_u128 d, sbk_fp_geo g, unsigned i)
{
    uint64_t low = (uint64_t)d;
    unsigned at = sbk_fp_select1_64(low, i);
    if (g.q + g.s > 64) {
        unsigned ones_low = (unsigned)__builtin_popcountll(low);
        unsigned in_high = 64 + sbk_fp_select1_64((uint64_t)(d >> 64), (i - ones_low) & 63);
        at = i < ones_low ? at : in_high;
    }
    return at - i;
}

/* x's bits below bit n (all of them from n = 64 up). */
SBK_FP_INLINE uint64_t sbk_fp_low_bits(uint64_t x, unsigned n)
{
#if defined(__BMI2__)
    return __builtin_ia32_bzhi_di(x, n); /* (an index of 64 to 255 keeps every bit) */
#else
    return n >= 64 ? x : x & ((UINT64_C(1) << n) - 1);
#endif
}

/* Whether slot i of line w holds a key of quotient q: its 1 would be directory bit q + i, with
 * exactly i ones below it (false for a slot past the line's keys, which has fewer). Read from the
 * line's first two words, a word at a time (bit q + i is below Q + S, the directory's end): in
 * a 4,000-key fp512-r13, -r19 or -r27 filter, positive lookups took 0.87-0.91x the time of the
 * 128-bit form's (the directory's shifts and masks; docs/notes/fingerprints.md). */
SBK_FP_INLINE int sbk_fp_slot_is(const uint64_t *w, unsigned q, unsigned i)
{
    unsigned at = q + i;
    unsigned ones = (unsigned)(__builtin_popcountll(sbk_fp_low_bits(w[0], at)) +
                               __builtin_popcountll(sbk_fp_low_bits(w[1], at > 64 ? at - 64 : 0)));
    return (unsigned)(w[at / 64] >> (at % 64)) & (ones == i);
}

/* A slot's extra bits, without a branch on whether they cross a word: the word after is read
 * too (the line's last word stands in for it past the end) and shifted in. */
SBK_FP_INLINE uint32_t sbk_fp_extra(const uint64_t *w, sbk_fp_geo g, unsigned i)
{
    unsigned e = sbk_fp_extra_bits(g), at = sbk_fp_extra_at(g) + e * i;
    unsigned word = at / 64, o = at % 64, next = word < 7 ? word + 1 : 7;
    uint64_t v = (w[word] >> o) | ((w[next] << 1) << (63 - o));
    return (uint32_t)(v & ((UINT64_C(1) << e) - 1));
}

/* Adds (q, rem) at the end of its run, three gaps opened at once; the line has room. */
SBK_FP_INLINE void sbk_fp_put(uint64_t *w, sbk_fp_geo g, unsigned q, uint32_t rem)
{
    unsigned e = sbk_fp_extra_bits(g);
    sbk_u128 d = sbk_fp_directory(w, g);
    unsigned count = sbk_fp_count_of(d, g), end = sbk_fp_run_end(d, g, q);
    unsigned main_at = sbk_fp_main_at(g), extra_at = sbk_fp_extra_at(g);
    if (end < count) {
        sbk_fp_open(w, main_at + 8 * end, main_at + 8 * count, 8);
        sbk_fp_open(w, extra_at + e * end, extra_at + e * count, e);
    }
    sbk_fp_set_bits(w, main_at + 8 * end, 8, rem >> e);
    sbk_fp_set_bits(w, extra_at + e * end, e, rem & ((UINT32_C(1) << e) - 1));
    unsigned at = q + end; /* the directory: a 1 at `at`, the bits above it up one */
    sbk_u128 low = ((sbk_u128)1 << at) - 1;
    d = (d & low) | ((sbk_u128)1 << at) | ((d & ~low) << 1);
    sbk_fp_set_directory(w, g, d);
}

/* Takes out slot i, of quotient q. */
SBK_FP_INLINE void sbk_fp_drop(uint64_t *w, sbk_fp_geo g, unsigned q, unsigned i)
{
    unsigned e = sbk_fp_extra_bits(g);
    sbk_u128 d = sbk_fp_directory(w, g);
    unsigned count = sbk_fp_count_of(d, g);
    unsigned main_at = sbk_fp_main_at(g), extra_at = sbk_fp_extra_at(g);
    sbk_fp_close(w, main_at + 8 * i, main_at + 8 * count, 8);
    sbk_fp_close(w, extra_at + e * i, extra_at + e * count, e);
    unsigned at = q + i;
    sbk_u128 low = ((sbk_u128)1 << at) - 1;
    d = (d & low) | ((d >> 1) & ~low);
    sbk_fp_set_directory(w, g, d);
}

/* pext and pdep: BMI2's where the CPU has it, else a bit at a time (the forms without BMI2 only
 * call them where that is cheap enough: SBK_FP_COMPACTS). */
#if defined(__BMI2__)
#define SBK_FP_COMPACTS 1
SBK_FP_INLINE uint64_t sbk_fp_pext(uint64_t x, uint64_t mask)
{
    return __builtin_ia32_pext_di(x, mask);
}
SBK_FP_INLINE uint64_t sbk_fp_pdep(uint64_t x, uint64_t mask)
{
    return __builtin_ia32_pdep_di(x, mask);
}
#else
#define SBK_FP_COMPACTS 0
SBK_FP_INLINE uint64_t sbk_fp_pext(uint64_t x, uint64_t mask)
{
    uint64_t out = 0, bit = 1;
    for (; mask; mask &= mask - 1, bit <<= 1)
        out |= x & mask & -mask ? bit : 0;
    return out;
}
SBK_FP_INLINE uint64_t sbk_fp_pdep(uint64_t x, uint64_t mask)
{
    uint64_t out = 0;
    for (; mask; mask &= mask - 1, x >>= 1)
        out |= x & 1 ? mask & -mask : 0;
    return out;
}
#endif

/* 64 bits of a line from bit `at` (0s past its bit 511). */
SBK_FP_INLINE uint64_t sbk_fp_word_at(const uint64_t *w, unsigned at)
{
    unsigned i = at / 64, o = at % 64;
    uint64_t v = w[i] >> o;
    if (o && i < 7)
        v |= w[i + 1] << (64 - o);
    return v;
}

/* len (1 .. 64) bits of v to a line from bit `at` (at + len <= 512). */
SBK_FP_INLINE void sbk_fp_set_word_at(uint64_t *w, unsigned at, unsigned len, uint64_t v)
{
    unsigned i = at / 64, o = at % 64;
    uint64_t mask = len == 64 ? ~UINT64_C(0) : (UINT64_C(1) << len) - 1;
    v &= mask;
    w[i] = (w[i] & ~(mask << o)) | (v << o);
    if (o && o + len > 64)
        w[i + 1] = (w[i + 1] & ~(mask >> (64 - o))) | (v >> (64 - o));
}

/* Region [at, at + len) of a line (len <= 384): the bits whose bit in keep is 1 (region bit i:
 * bit i % 64 of keep[i / 64], none set past len) move down in order to the region's start; the
 * rest of the region becomes 0. One pext a 64 bits. */
SBK_FP_INLINE void sbk_fp_squeeze(uint64_t *w, unsigned at, unsigned len, const uint64_t *keep)
{
    uint64_t out[7] = {0};
    unsigned filled = 0, chunks = (len + 63) / 64;
    for (unsigned c = 0; c < chunks; c++) {
        uint64_t kept = sbk_fp_pext(sbk_fp_word_at(w, at + 64 * c), keep[c]);
        unsigned o = filled % 64;
        out[filled / 64] |= kept << o;
        if (o)
            out[filled / 64 + 1] |= kept >> (64 - o);
        filled += (unsigned)__builtin_popcountll(keep[c]);
    }
    for (unsigned c = 0; c < chunks; c++)
        sbk_fp_set_word_at(w, at + 64 * c, len - 64 * c < 64 ? len - 64 * c : 64, out[c]);
}

/* Bits [0, len) set, as words (len <= 384). */
SBK_FP_INLINE void sbk_fp_ones(uint64_t *mask, unsigned len)
{
    for (unsigned c = 0; c < 6; c++)
        mask[c] = len >= 64 * (c + 1) ? ~UINT64_C(0)
                  : len > 64 * c      ? (UINT64_C(1) << (len - 64 * c)) - 1
                                      : 0;
}

/* Directory d without the ones of the slots in `slots` (pdep puts slot i's bit on d's i-th one;
 * pext takes those bits out, the rest moving down): the directory once they are taken out. */
SBK_FP_INLINE sbk_u128 sbk_fp_directory_without(sbk_u128 d, uint64_t slots)
{
    uint64_t low = (uint64_t)d, high = (uint64_t)(d >> 64);
    uint64_t gone_low = sbk_fp_pdep(slots, low);
    uint64_t gone_high = sbk_fp_pdep(slots >> __builtin_popcountll(low), high);
    unsigned kept_low = 64 - (unsigned)__builtin_popcountll(gone_low);
    return (sbk_u128)sbk_fp_pext(low, ~gone_low) |
           ((sbk_u128)sbk_fp_pext(high, ~gone_high) << kept_low);
}

/* The kept bits of the 64 bits of main bytes from the c-th (slots 8c .. 8c + 7, a byte each) of a
 * line losing the slots in `slots`. */
SBK_FP_INLINE uint64_t sbk_fp_main_kept(sbk_fp_geo g, uint64_t slots, unsigned c)
{
    unsigned n = g.s - 8 * c < 8 ? g.s - 8 * c : 8;
    uint64_t bytes = n == 8 ? ~UINT64_C(0) : (UINT64_C(1) << (8 * n)) - 1;
    return bytes & ~(sbk_fp_pdep(slots >> (8 * c), UINT64_C(0x0101010101010101)) * 0xff);
}

/* The kept bits of bits [64c, 64c + 64) of the extras of a line losing the slots in `slots`,
 * without a branch on them: each dropped field's first bit put by pdep, times the field's ones;
 * a field that crosses into the next 64 bits carries there as the product's high half (*carried:
 * in, from bits 64c - 64 on; out, for the next; 0 before c = 0). */
SBK_FP_INLINE uint64_t sbk_fp_extras_kept(sbk_fp_geo g, uint64_t slots, unsigned c,
                                          uint64_t *carried)
{
    unsigned e = sbk_fp_extra_bits(g), first = (64 * c + e - 1) / e, len = e * g.s - 64 * c;
    uint64_t starts = 0; /* the first bit of each field that begins in these 64 bits */
    for (unsigned i = first; i < g.s && e * i < 64 * c + 64; i++)
        starts |= UINT64_C(1) << (e * i - 64 * c);
    sbk_u128 gone = (sbk_u128)sbk_fp_pdep(slots >> first, starts) * ((UINT64_C(1) << e) - 1);
    uint64_t keep =
        (len >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << len) - 1) & ~((uint64_t)gone | *carried);
    *carried = (uint64_t)(gone >> 64);
    return keep;
}

/* Takes out every slot in `slots` (bit i: slot i, each below the line's count) in one pass: the
 * same line as sbk_fp_ref_drop_slots, which takes them one by one: the directory without the
 * slots' ones (sbk_fp_directory_without), and the main bytes and the extras each squeezed once
 * without theirs. A window's rotation
 * takes out about one slot in G + 1 of every line, where dropping them one by one moved the
 * line's bytes once a slot. */
SBK_FP_INLINE void sbk_fp_compact(uint64_t *w, sbk_fp_geo g, uint64_t slots)
{
    unsigned e = sbk_fp_extra_bits(g);
    uint64_t keep[7] = {0};
    sbk_fp_set_directory(w, g, sbk_fp_directory_without(sbk_fp_directory(w, g), slots));
    for (unsigned c = 0; 8 * c < g.s; c++) /* a byte a slot: slots 8c .. 8c + 7 in word c */
        keep[c] = sbk_fp_main_kept(g, slots, c);
    sbk_fp_squeeze(w, sbk_fp_main_at(g), 8 * g.s, keep);
    /* the extras' kept bits, a dropped slot's cleared one by one: AVX2 calls this where few go
     * (lines of more than 24 slots), and there it measured faster than sbk_fp_extras_kept's
     * product for every 64 bits (docs/notes/window.md) */
    sbk_fp_ones(keep, e * g.s);
    for (uint64_t rest = slots; rest; rest &= rest - 1)
        sbk_fp_set_bits(keep, e * (unsigned)__builtin_ctzll(rest), e, 0);
    sbk_fp_squeeze(w, sbk_fp_extra_at(g), e * g.s, keep);
}

/* NAME(w, g, slots, many): the slots in `slots` taken out with an ISA's one-slot DROP, the
 * highest first (the slots below keep their places); with BMI2 in one pass (sbk_fp_compact)
 * where a line loses many at once (`many`: a rotation's expected count is 6 or more) or has more
 * than 24 slots (~4-8 go at a rotation there; in the smaller lines ~2, where one pass measured no
 * faster than the vector drops: docs/notes/window.md). */
#define SBK_FP_DEFINE_DROP_SLOTS(NAME, DROP)                                                       \
    SBK_FP_INLINE void NAME(uint64_t *w, sbk_fp_geo g, uint64_t slots, int many)                   \
    {                                                                                              \
        if (SBK_FP_COMPACTS && (many || g.s > 24)) {                                               \
            sbk_fp_compact(w, g, slots);                                                           \
            return;                                                                                \
        }                                                                                          \
        while (slots) {                                                                            \
            unsigned j = 63 - (unsigned)__builtin_clzll(slots);                                    \
            slots &= ~(UINT64_C(1) << j);                                                          \
            DROP(w, g, sbk_fp_quotient_of(sbk_fp_directory(w, g), g, j), j);                       \
        }                                                                                          \
    }

SBK_FP_DEFINE_DROP_SLOTS(sbk_fp_drop_slots, sbk_fp_drop)

SBK_FP_INLINE unsigned sbk_fp_last_quotient(const uint64_t *w, sbk_fp_geo g)
{
    sbk_u128 d = sbk_fp_directory(w, g);
    unsigned top = (d >> 64) ? 127 - (unsigned)__builtin_clzll((uint64_t)(d >> 64))
                   : d       ? 63 - (unsigned)__builtin_clzll((uint64_t)d)
                             : 0;
    return top >= g.s - 1 && top - (g.s - 1) < g.q ? top - (g.s - 1) : g.q - 1; /* as the ref */
}

/*
 * The key operations over one form of the line operations, for one geometry. PREFIX names the
 * functions made; LINE the line operations' prefix:
 *
 *   LINE##_find(w, g, q, rem)   slot or -1        LINE##_put(w, g, q, rem)    (room)
 *   LINE##_drop(w, g, q, slot)                    LINE##_last_quotient(w, g)  (full)
 *
 * and the per-key functions made, over blocks of nblocks lines:
 *
 *   PREFIX##_probe(blocks, nblocks, key)   1 if present
 *   PREFIX##_insert(blocks, nblocks, key)  test-and-add: 1 if it was absent and is now added, 0
 *                                          if present, 2 if refused (absent, and not added)
 *   PREFIX##_remove(blocks, nblocks, key)  1 if a matching entry was taken out, else 0
 *
 * `key` is the address of the hash (kernel_loops.h says why).
 */
#define SBK_FP_DEFINE_KEY_OPS(PREFIX, LINE, R, S, Q, MARK_BITS, HEAD_BYTES)                        \
    SBK_FP_INLINE uint64_t *PREFIX##_line(const void *blocks, uint64_t i)                          \
    {                                                                                              \
        return (uint64_t *)blocks + 8 * i;                                                         \
    }                                                                                              \
    /* The spare slot of (k) in spare lines s.a or s.b: the line's words, or NULL */               \
    SBK_FP_COLD uint64_t *PREFIX##_spare_find(const void *blocks, uint64_t main,                   \
                                              sbk_fp_spare_key s, int *slot)                       \
    {                                                                                              \
        const sbk_fp_geo g = SBK_FP_GEO(R, S, Q, MARK_BITS, HEAD_BYTES);                           \
        uint64_t *a = PREFIX##_line(blocks, main + s.a);                                           \
        if ((*slot = LINE##_find(a, g, s.q, s.rem)) >= 0)                                          \
            return a;                                                                              \
        uint64_t *b = PREFIX##_line(blocks, main + s.b);                                           \
        if ((*slot = LINE##_find(b, g, s.q, s.rem)) >= 0)                                          \
            return b;                                                                              \
        return NULL;                                                                               \
    }                                                                                              \
    /* A lookup in two steps, so that a batch can start several (their lines' loads and byte       \
     * compares overlap) before it finishes them: start, then finish (1 if present). */            \
    /* (a key at or above its line's mark has its spare lines requested here, ahead of the         \
     * finish that may read them: about 3% of lookups at a full plan, whose two more misses        \
     * would otherwise stall the batch) */                                                         \
    SBK_FP_INLINE void PREFIX##_probe_start(const void *blocks, uint64_t nblocks, uint64_t main,   \
                                            uint64_t hash, sbk_fp_probe *p)                        \
    {                                                                                              \
        const sbk_fp_geo g = SBK_FP_GEO(R, S, Q, MARK_BITS, HEAD_BYTES);                           \
        p->k = sbk_fp_split(hash, main, g);                                                        \
        p->w = PREFIX##_line(blocks, p->k.line);                                                   \
        p->hits = LINE##_candidates(p->w, g, p->k.rem);                                            \
        p->ask_spare = p->k.q >= sbk_fp_mark(p->w, g);                                             \
        if (p->ask_spare) {                                                                        \
            p->s = sbk_fp_spare(p->k, nblocks - main, g);                                          \
            __builtin_prefetch(PREFIX##_line(blocks, main + p->s.a), 0, 3);                        \
            __builtin_prefetch(PREFIX##_line(blocks, main + p->s.b), 0, 3);                        \
        }                                                                                          \
    }                                                                                              \
    SBK_FP_INLINE int PREFIX##_probe_finish(const void *blocks, uint64_t main,                     \
                                            const sbk_fp_probe *p)                                 \
    {                                                                                              \
        const sbk_fp_geo g = SBK_FP_GEO(R, S, Q, MARK_BITS, HEAD_BYTES);                           \
        if (LINE##_confirm(p->w, g, p->k.q, p->k.rem, p->hits) >= 0)                               \
            return 1;                                                                              \
        int slot;                                                                                  \
        return p->ask_spare && PREFIX##_spare_find(blocks, main, p->s, &slot) != NULL;             \
    }                                                                                              \
    SBK_FP_INLINE int PREFIX##_probe(const void *blocks, uint64_t nblocks, const uint64_t *key)    \
    {                                                                                              \
        sbk_fp_probe p;                                                                            \
        uint64_t main = sbk_fp_main_lines(nblocks);                                                \
        PREFIX##_probe_start(blocks, nblocks, main, *key, &p);                                     \
        return PREFIX##_probe_finish(blocks, main, &p);                                            \
    }                                                                                              \
    /* (q, rem) of main line `line` into the emptier of its spare lines: 0, or -1 if both full */  \
    SBK_FP_COLD int PREFIX##_spare_put(void *blocks, uint64_t main, uint64_t spare, sbk_fp_key k)  \
    {                                                                                              \
        const sbk_fp_geo g = SBK_FP_GEO(R, S, Q, MARK_BITS, HEAD_BYTES);                           \
        sbk_fp_spare_key s = sbk_fp_spare(k, spare, g);                                            \
        uint64_t *a = PREFIX##_line(blocks, main + s.a), *b = PREFIX##_line(blocks, main + s.b);   \
        unsigned in_a = sbk_fp_count(a, g), in_b = sbk_fp_count(b, g);                             \
        uint64_t *to = in_a <= in_b ? a : b;                                                       \
        if ((in_a <= in_b ? in_a : in_b) >= (S))                                                   \
            return -1;                                                                             \
        LINE##_put(to, g, s.q, s.rem);                                                             \
        return 0;                                                                                  \
    }                                                                                              \
    SBK_FP_INLINE int PREFIX##_insert(void *blocks, uint64_t nblocks, const uint64_t *key)         \
    {                                                                                              \
        const sbk_fp_geo g = SBK_FP_GEO(R, S, Q, MARK_BITS, HEAD_BYTES);                           \
        uint64_t main = sbk_fp_main_lines(nblocks), spare = nblocks - main;                        \
        sbk_fp_key k = sbk_fp_split(*key, main, g);                                                \
        uint64_t *w = PREFIX##_line(blocks, k.line);                                               \
        if (LINE##_find(w, g, k.q, k.rem) >= 0)                                                    \
            return 0;                                                                              \
        if (k.q >= sbk_fp_mark(w, g)) {                                                            \
            int slot;                                                                              \
            if (PREFIX##_spare_find(blocks, main, sbk_fp_spare(k, spare, g), &slot))               \
                return 0;                                                                          \
        }                                                                                          \
        if (sbk_fp_count(w, g) < (S)) {                                                            \
            LINE##_put(w, g, k.q, k.rem);                                                          \
            return 1;                                                                              \
        }                                                                                          \
        /* full: the key of the highest quotient goes to the spare, this one or the last slot's */ \
        unsigned last = LINE##_last_quotient(w, g);                                                \
        if (k.q >= last) {                                                                         \
            if (PREFIX##_spare_put(blocks, main, spare, k) < 0)                                    \
                return 2;                                                                          \
            sbk_fp_lower_mark(w, g, k.q);                                                          \
            return 1;                                                                              \
        }                                                                                          \
        sbk_fp_key out = {k.line, last, LINE##_slot(w, g, (S)-1)};                                 \
        if (PREFIX##_spare_put(blocks, main, spare, out) < 0)                                      \
            return 2;                                                                              \
        LINE##_drop(w, g, last, (S)-1);                                                            \
        LINE##_put(w, g, k.q, k.rem);                                                              \
        sbk_fp_lower_mark(w, g, last);                                                             \
        return 1;                                                                                  \
    }                                                                                              \
    SBK_FP_INLINE int PREFIX##_remove(void *blocks, uint64_t nblocks, const uint64_t *key)         \
    {                                                                                              \
        const sbk_fp_geo g = SBK_FP_GEO(R, S, Q, MARK_BITS, HEAD_BYTES);                           \
        uint64_t main = sbk_fp_main_lines(nblocks);                                                \
        sbk_fp_key k = sbk_fp_split(*key, main, g);                                                \
        uint64_t *w = PREFIX##_line(blocks, k.line);                                               \
        int slot = LINE##_find(w, g, k.q, k.rem);                                                  \
        if (slot >= 0) {                                                                           \
            LINE##_drop(w, g, k.q, (unsigned)slot);                                                \
            return 1;                                                                              \
        }                                                                                          \
        if (k.q < sbk_fp_mark(w, g))                                                               \
            return 0;                                                                              \
        sbk_fp_spare_key s = sbk_fp_spare(k, nblocks - main, g);                                   \
        uint64_t *in = PREFIX##_spare_find(blocks, main, s, &slot);                                \
        if (!in)                                                                                   \
            return 0;                                                                              \
        LINE##_drop(in, g, s.q, (unsigned)slot);                                                   \
        return 1;                                                                                  \
    }

/* Eight bytes of w that equal `byte`, as bits 0..7 (a portable byte compare in a 64-bit word:
 * a byte's high bit survives exactly when the byte of w ^ byte is zero). */
SBK_FP_INLINE uint64_t sbk_fp_matches_word(uint64_t w, uint8_t byte)
{
    const uint64_t low7 = UINT64_C(0x7f7f7f7f7f7f7f7f);
    uint64_t x = w ^ (UINT64_C(0x0101010101010101) * byte);
    uint64_t zero_high = ~(((x & low7) + low7) | x | low7); /* 0x80 in each zero byte */
    return ((zero_high >> 7) * UINT64_C(0x0102040810204080)) >> 56;
}

/* The line's 64 bytes that equal `byte` (bit i: byte i, bits 8i .. 8i+7 of the line), without
 * vectors: the form for tables whose vectors are emulated on a big-endian host. */
SBK_FP_INLINE uint64_t sbk_fp_matches_portable(const uint64_t *w, uint8_t byte)
{
    uint64_t m = 0;
    for (unsigned j = 0; j < 8; j++)
        m |= sbk_fp_matches_word(w[j], byte) << (8 * j);
    return m;
}

/*
 * The word-level line operations under the names SBK_FP_DEFINE_KEY_OPS calls, with MATCHES(w,
 * byte) the instruction set's byte compare of the whole line (bit i set when byte i of the line,
 * bits 8i .. 8i+7, equals byte), and PUT and DROP its forms of sbk_fp_put and sbk_fp_drop (or
 * those). find: the main bytes that match, kept to the quotient's run, and
 * each such slot's extra bits compared (a key of another remainder matches the main byte with
 * probability 1/256, so this is rarely more than the one compare).
 */
#define SBK_FP_WORD_LINE(LINE, MATCHES, PUT, DROP, DROP_SLOTS)                                     \
    /* the slots whose main byte is rem's (bit i: slot i), among the line's keys */                \
    /* (unused slots are 0 bytes: they match a main byte of 0, and confirm turns them down) */     \
    SBK_FP_INLINE uint64_t LINE##_candidates(const uint64_t *w, sbk_fp_geo g, uint32_t rem)        \
    {                                                                                              \
        uint64_t hits = MATCHES(w, (uint8_t)(rem >> sbk_fp_extra_bits(g))) >> g.head_bytes;        \
        return hits & ((UINT64_C(1) << g.s) - 1);                                                  \
    }                                                                                              \
    /* which of them holds (q, rem): its extra bits and its quotient compared; most absent keys    \
     * have no candidate, a present one its own */                                                 \
    SBK_FP_INLINE int LINE##_confirm(const uint64_t *w, sbk_fp_geo g, unsigned q, uint32_t rem,    \
                                     uint64_t hits)                                                \
    {                                                                                              \
        uint32_t extra = rem & ((UINT32_C(1) << sbk_fp_extra_bits(g)) - 1);                        \
        for (; hits; hits &= hits - 1) {                                                           \
            unsigned i = (unsigned)__builtin_ctzll(hits);                                          \
            if (sbk_fp_extra(w, g, i) == extra && sbk_fp_slot_is(w, q, i))                         \
                return (int)i;                                                                     \
        }                                                                                          \
        return -1;                                                                                 \
    }                                                                                              \
    SBK_FP_INLINE int LINE##_find(const uint64_t *w, sbk_fp_geo g, unsigned q, uint32_t rem)       \
    {                                                                                              \
        return LINE##_confirm(w, g, q, rem, LINE##_candidates(w, g, rem));                         \
    }                                                                                              \
    /* the same with the remainder's low age_bits ignored (a window's entries) */                  \
    SBK_FP_INLINE int LINE##_find_aged(const uint64_t *w, sbk_fp_geo g, unsigned q, uint32_t rem,  \
                                       unsigned age_bits)                                          \
    {                                                                                              \
        uint32_t extra = rem & ((UINT32_C(1) << sbk_fp_extra_bits(g)) - 1);                        \
        for (uint64_t hits = LINE##_candidates(w, g, rem); hits; hits &= hits - 1) {               \
            unsigned i = (unsigned)__builtin_ctzll(hits);                                          \
            if (((sbk_fp_extra(w, g, i) ^ extra) >> age_bits) == 0 && sbk_fp_slot_is(w, q, i))     \
                return (int)i;                                                                     \
        }                                                                                          \
        return -1;                                                                                 \
    }                                                                                              \
    SBK_FP_INLINE void LINE##_put(uint64_t *w, sbk_fp_geo g, unsigned q, uint32_t rem)             \
    {                                                                                              \
        PUT(w, g, q, rem);                                                                         \
    }                                                                                              \
    SBK_FP_INLINE void LINE##_drop(uint64_t *w, sbk_fp_geo g, unsigned q, unsigned i)              \
    {                                                                                              \
        DROP(w, g, q, i);                                                                          \
    }                                                                                              \
    SBK_FP_INLINE void LINE##_drop_slots(uint64_t *w, sbk_fp_geo g, uint64_t slots, int many)      \
    {                                                                                              \
        DROP_SLOTS(w, g, slots, many);                                                             \
    }                                                                                              \
    SBK_FP_INLINE unsigned LINE##_last_quotient(const uint64_t *w, sbk_fp_geo g)                   \
    {                                                                                              \
        return sbk_fp_last_quotient(w, g);                                                         \
    }                                                                                              \
    SBK_FP_INLINE uint32_t LINE##_slot(const uint64_t *w, sbk_fp_geo g, unsigned i)                \
    {                                                                                              \
        return sbk_fp_ref_slot(w, g, i);                                                           \
    }

/*
 * Batch loops over the per-key functions, with the sliding prefetch window of the Bloom loops
 * (kernel_loops.h): while key j is handled, the main line of key j + ahead is requested. An
 * insert loop's per-key answer 2 (refused) counts as absent-and-not-added: results[j] = 0 and
 * SBK_FP_REFUSED is added to the returned count.
 */
/* The body of a batch loop over `blocks`, nblocks, hashes[0, n), results: CALL is key j's
 * per-key call, its answer 0, 1 or 2. */
#define SBK_FP_LOOP_BODY(CALL, WRITE)                                                              \
    uint64_t count = 0, refused = 0, main = sbk_fp_main_lines(nblocks);                            \
    const uint64_t bytes_ = nblocks * 64;                                                          \
    size_t ahead = bytes_ < SBK_PREFETCH_MIN_BYTES ? 8 : sbk_prefetch_ahead(bytes_);               \
    if (n <= ahead)                                                                                \
        ahead = 0;                                                                                 \
    for (size_t k = 0; k < ahead; k++) {                                                           \
        uint64_t unused_;                                                                          \
        __builtin_prefetch((const char *)blocks + 64 * sbk_mul_high(hashes[k], main, &unused_),    \
                           WRITE, 3);                                                              \
    }                                                                                              \
    for (size_t j = 0; j < n; j++) {                                                               \
        if (ahead && j + ahead < n) {                                                              \
            uint64_t unused_;                                                                      \
            __builtin_prefetch((const char *)blocks +                                              \
                                   64 * sbk_mul_high(hashes[j + ahead], main, &unused_),           \
                               WRITE, 3);                                                          \
        }                                                                                          \
        int answer = CALL;                                                                         \
        refused |= (uint64_t)(answer >> 1);                                                        \
        answer &= 1;                                                                               \
        count += (uint64_t)answer;                                                                 \
        if (results)                                                                               \
            results[j] = (uint8_t)answer;                                                          \
    }                                                                                              \
    return count | (refused ? SBK_FP_REFUSED : 0);

#define SBK_FP_DEFINE_LOOP(LOOP, PER_KEY, BLOCKS, WRITE)                                           \
    static uint64_t LOOP(BLOCKS blocks, uint64_t nblocks, const uint64_t *hashes, size_t n,        \
                         uint8_t *results)                                                         \
    {                                                                                              \
        SBK_FP_LOOP_BODY(PER_KEY(blocks, nblocks, hashes + j), WRITE)                              \
    }

/* The line operations of an ISA whose put and drop move the line in vector registers: on a
 * big-endian host (SIMDe emulating x86 there) a lane's bytes are not its bits in order, so the
 * byte moves would not be the line's, and the word-level forms stand in for them. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define SBK_FP_VECTOR_LINE(LINE, MATCHES, PUT, DROP, DROP_SLOTS)                                   \
    SBK_FP_WORD_LINE(LINE, MATCHES, sbk_fp_put, sbk_fp_drop, sbk_fp_drop_slots)
#else
#define SBK_FP_VECTOR_LINE(LINE, MATCHES, PUT, DROP, DROP_SLOTS)                                   \
    SBK_FP_WORD_LINE(LINE, MATCHES, PUT, DROP, DROP_SLOTS)
#endif

/* Every kernel of one geometry over a line-operation form, and its table entry. */
/* The lookups' loop: SBK_FP_GROUP keys started (line loaded, main bytes compared), then finished,
 * so that a group's loads and compares overlap instead of waiting one behind the other's compare
 * chain; lines the window ahead are prefetched as in SBK_FP_DEFINE_LOOP. */
#define SBK_FP_GROUP 8
#define SBK_FP_DEFINE_LOOKUPS(PREFIX)                                                              \
    static uint64_t PREFIX##_contains_batch(const void *blocks, uint64_t nblocks,                  \
                                            const uint64_t *hashes, size_t n, uint8_t *results)    \
    {                                                                                              \
        uint64_t count = 0, main = sbk_fp_main_lines(nblocks);                                     \
        const uint64_t bytes_ = nblocks * 64;                                                      \
        size_t ahead = bytes_ < SBK_PREFETCH_MIN_BYTES ? 0 : sbk_prefetch_ahead(bytes_);           \
        for (size_t k = 0; k < ahead && k < n; k++) {                                              \
            uint64_t unused_;                                                                      \
            __builtin_prefetch(                                                                    \
                (const char *)blocks + 64 * sbk_mul_high(hashes[k], main, &unused_), 0, 3);        \
        }                                                                                          \
        for (size_t j = 0; j < n; j += SBK_FP_GROUP) {                                             \
            size_t m = n - j < SBK_FP_GROUP ? n - j : SBK_FP_GROUP;                                \
            sbk_fp_probe group[SBK_FP_GROUP];                                                      \
            for (size_t k = 0; k < m; k++) {                                                       \
                if (ahead && j + k + ahead < n) {                                                  \
                    uint64_t unused_;                                                              \
                    __builtin_prefetch(                                                            \
                        (const char *)blocks +                                                     \
                            64 * sbk_mul_high(hashes[j + k + ahead], main, &unused_),              \
                        0, 3);                                                                     \
                }                                                                                  \
                PREFIX##_probe_start(blocks, nblocks, main, hashes[j + k], &group[k]);             \
            }                                                                                      \
            for (size_t k = 0; k < m; k++) {                                                       \
                int answer = PREFIX##_probe_finish(blocks, main, &group[k]);                       \
                count += (uint64_t)answer;                                                         \
                if (results)                                                                       \
                    results[j + k] = (uint8_t)answer;                                              \
            }                                                                                      \
        }                                                                                          \
        return count;                                                                              \
    }

#define SBK_FP_DEFINE_KERNELS(PREFIX, LINE, R, S, Q, MARK_BITS, HEAD_BYTES)                        \
    SBK_FP_DEFINE_KEY_OPS(PREFIX, LINE, R, S, Q, MARK_BITS, HEAD_BYTES)                            \
    SBK_FP_DEFINE_WINDOW_OPS(PREFIX, LINE, R, S, Q, MARK_BITS, HEAD_BYTES)                         \
    SBK_FP_DEFINE_LOOP(PREFIX##_insert_batch, PREFIX##_insert, void *, 1)                          \
    SBK_FP_DEFINE_LOOKUPS(PREFIX)                                                                  \
    SBK_FP_DEFINE_LOOP(PREFIX##_remove_batch, PREFIX##_remove, void *, 1)                          \
    static int PREFIX##_insert_one(void *blocks, uint64_t nblocks, uint64_t hash)                  \
    {                                                                                              \
        return PREFIX##_insert(blocks, nblocks, &hash);                                            \
    }                                                                                              \
    static int PREFIX##_contains_one(const void *blocks, uint64_t nblocks, uint64_t hash)          \
    {                                                                                              \
        return PREFIX##_probe(blocks, nblocks, &hash);                                             \
    }                                                                                              \
    /* kernels.h's reaches_spare: a key at or above its line's mark may be in the spare (a lookup  \
     * reads it there, a remove takes it, an add looks there first and puts it there); an add to a \
     * full line sends a key out to the spare */                                                   \
    static int PREFIX##_reaches_spare(const void *blocks, uint64_t nblocks, uint64_t hash)         \
    {                                                                                              \
        const sbk_fp_geo g = SBK_FP_GEO(R, S, Q, MARK_BITS, HEAD_BYTES);                           \
        sbk_fp_key k = sbk_fp_split(hash, sbk_fp_main_lines(nblocks), g);                          \
        const uint64_t *w = PREFIX##_line(blocks, k.line);                                         \
        return k.q >= sbk_fp_mark(w, g) || sbk_fp_count(w, g) >= (S);                              \
    }

/*
 * A window's entries (src/modes/windowed.c, "Ages"): the low `a` bits of each stored remainder
 * are the entry's age, the ring slot of the period that added the key; the other r - a bits are
 * its fingerprint (a <= r - 8: the age lies in the extra bits, so the main byte is the
 * fingerprint's and the byte compare finds the candidates as for a plain filter). A key is held
 * when an entry of its quotient has its fingerprint, whatever the age. A key that leaves its main
 * line goes to the spare lines chosen by (line, quotient, fingerprint) alone, its age kept: a
 * lookup finds it there whatever its age.
 *
 * A main line's mark only falls, and a window's lines send keys to the spare period after
 * period: without more, every line's mark would sink and most lookups read the spare (measured:
 * twice the lookup time after ten windows, and the rate past its plan). So the window's blocks
 * end with spill lines, a byte for each main line: 0, or 1 + the age of the last period in which
 * the line sent a key to the spare. Every key a line sent is of that age or older, so once that
 * age's entries are dropped, none is left in the spare: the line's mark goes back to Q.
 *
 *   PREFIX##_window_insert(blocks, lines, a, age, hashes, n, results)   kernels.h's
 *       window_insert (groups: the lines but the spill lines, lines: a, target: age): a key no
 *       entry holds is added with that age; refused keys as the insert's (SBK_FP_REFUSED)
 *   PREFIX##_window_contains(...)                                       window_contains
 *   PREFIX##_window_age(blocks, lines, from, to, a, age, to_age)        window_age: in lines
 *       [from, to), the entries of that age dropped (to_age SBK_FP_AGE_DROP: a main line whose
 *       last spill was of that age gets its mark back) or given to_age (its spill byte too)
 */
/* The spill lines after `lines` main and spare lines: a byte for each main line, byte i of a
 * 64-bit word holding line 8 x word + i's (bits 8i .. 8i+7, as the lines' bits are numbered, so
 * that a file moves between hosts of either byte order). */
SBK_FP_INLINE uint64_t sbk_fp_spill_lines(uint64_t lines)
{
    return (sbk_fp_main_lines(lines) + 63) / 64;
}

SBK_FP_INLINE unsigned sbk_fp_spill(const uint64_t *spills, uint64_t line)
{
    return (unsigned)(spills[line / 8] >> (8 * (line % 8))) & 0xff;
}

SBK_FP_INLINE void sbk_fp_set_spill(uint64_t *spills, uint64_t line, unsigned value)
{
    unsigned at = 8 * (unsigned)(line % 8);
    spills[line / 8] = (spills[line / 8] & ~(UINT64_C(0xff) << at)) | ((uint64_t)value << at);
}
/* Where a window's key (k.rem: fingerprint and age) lives in the spare: the plain key's place
 * for its fingerprint with the age bits 0, and the age in the spare remainder's low bits. */
SBK_FP_INLINE sbk_fp_spare_key sbk_fp_spare_aged(sbk_fp_key k, uint64_t spare_lines, sbk_fp_geo g,
                                                 unsigned a)
{
    uint32_t age_mask = (UINT32_C(1) << a) - 1;
    sbk_fp_key bare = k;
    bare.rem &= ~age_mask;
    sbk_fp_spare_key s = sbk_fp_spare(bare, spare_lines, g);
    s.rem = (s.rem & ~age_mask) | (k.rem & age_mask);
    return s;
}

/* A rotation's view of a line's ages: where each slot's age lies (the low a bits of its extra
 * bits) and the age sought, repeated a bits apart. */
typedef struct sbk_fp_age_scan {
    uint64_t field[8]; /* the age bits of every slot of a line */
    sbk_u128 starts;   /* bit a x i: slot i's age in the packed ages */
    sbk_u128 sought;   /* the age at every a x i */
    unsigned a;
} sbk_fp_age_scan;

SBK_FP_INLINE void sbk_fp_age_scan_init(sbk_fp_age_scan *scan, sbk_fp_geo g, unsigned a,
                                        uint32_t age)
{
    memset(scan, 0, sizeof *scan);
    scan->a = a;
    for (unsigned i = 0; i < g.s; i++) {
        sbk_fp_set_bits(scan->field, sbk_fp_extra_at(g) + sbk_fp_extra_bits(g) * i, a,
                        (UINT64_C(1) << a) - 1);
        scan->starts |= (sbk_u128)1 << (a * i);
        scan->sought |= (sbk_u128)age << (a * i);
    }
}

/* The slots [0, count) of line w whose age is the scan's, as bits. With BMI2 every age is
 * gathered by pext into one packed number and compared a field at a time (a slot is of the age
 * with odds 1 / (G + 1): a loop with a branch on it mispredicted, and a loop without one was
 * still most of a rotation's time); else slot by slot. */
SBK_FP_INLINE uint64_t sbk_fp_slots_of_age(const sbk_fp_age_scan *scan, const uint64_t *w,
                                           sbk_fp_geo g, unsigned count)
{
#if defined(__BMI2__)
    (void)g;
    sbk_u128 packed = 0;
    unsigned at = 0;
    for (unsigned j = 0; j < 8; j++) {
        if (!scan->field[j])
            continue;
        packed |= (sbk_u128)__builtin_ia32_pext_di(w[j], scan->field[j]) << at;
        at += (unsigned)__builtin_popcountll(scan->field[j]);
    }
    sbk_u128 differ = packed ^ scan->sought, any = differ;
    for (unsigned b = 1; b < scan->a; b++)
        any |= differ >> b;
    sbk_u128 same = ~any & scan->starts; /* a field's low bit: set when it equals the age */
    uint64_t starts_low = (uint64_t)scan->starts;
    uint64_t slots = __builtin_ia32_pext_di((uint64_t)same, starts_low) |
                     (__builtin_ia32_pext_di((uint64_t)(same >> 64), (uint64_t)(scan->starts >> 64))
                      << __builtin_popcountll(starts_low));
#else
    uint64_t slots = 0;
    uint32_t age = (uint32_t)scan->sought & ((UINT32_C(1) << scan->a) - 1);
    for (unsigned i = 0; i < count; i++)
        slots |= (uint64_t)((sbk_fp_extra(w, g, i) & ((UINT32_C(1) << scan->a) - 1)) == age) << i;
#endif
    return slots & ((UINT64_C(1) << count) - 1);
}

/* The scan a rotation runs over every line: an ISA file may name its own form (type, init, and
 * the slots of the age) before it includes this header; else the one above. */
#ifndef SBK_FP_AGE_SCAN
#define SBK_FP_AGE_SCAN sbk_fp_age_scan
#define SBK_FP_AGE_SCAN_INIT sbk_fp_age_scan_init
#define SBK_FP_SLOTS_OF_AGE sbk_fp_slots_of_age
#endif

/* A window's batch loop (kernels.h's sbk_window_fn: groups the lines, lines the age's bits,
 * target the age) over a per-key function PER_KEY(blocks, lines, a, age, key): the body of
 * SBK_FP_DEFINE_LOOP (its prefetch window; a refused key's answer 2 as there). */
#define SBK_FP_DEFINE_WINDOW_LOOP(LOOP, PER_KEY, WRITE)                                            \
    static uint64_t LOOP(void *blocks, uint64_t nblocks, uint32_t a, uint32_t age,                 \
                         const uint64_t *hashes, size_t n, uint8_t *results)                       \
    {                                                                                              \
        SBK_FP_LOOP_BODY(PER_KEY(blocks, nblocks, a, age, hashes + j), WRITE)                      \
    }

#define SBK_FP_DEFINE_WINDOW_OPS(PREFIX, LINE, R, S, Q, MARK_BITS, HEAD_BYTES)                     \
    SBK_FP_COLD uint64_t *PREFIX##_spare_find_aged(const void *blocks, uint64_t main,              \
                                                   sbk_fp_spare_key s, unsigned a, int *slot)      \
    {                                                                                              \
        const sbk_fp_geo g = SBK_FP_GEO(R, S, Q, MARK_BITS, HEAD_BYTES);                           \
        uint64_t *x = PREFIX##_line(blocks, main + s.a);                                           \
        if ((*slot = LINE##_find_aged(x, g, s.q, s.rem, a)) >= 0)                                  \
            return x;                                                                              \
        uint64_t *y = PREFIX##_line(blocks, main + s.b);                                           \
        if ((*slot = LINE##_find_aged(y, g, s.q, s.rem, a)) >= 0)                                  \
            return y;                                                                              \
        return NULL;                                                                               \
    }                                                                                              \
    SBK_FP_COLD int PREFIX##_spare_put_aged(void *blocks, uint64_t main, uint64_t spare,           \
                                            sbk_fp_key k, unsigned a)                              \
    {                                                                                              \
        const sbk_fp_geo g = SBK_FP_GEO(R, S, Q, MARK_BITS, HEAD_BYTES);                           \
        sbk_fp_spare_key s = sbk_fp_spare_aged(k, spare, g, a);                                    \
        uint64_t *x = PREFIX##_line(blocks, main + s.a), *y = PREFIX##_line(blocks, main + s.b);   \
        unsigned in_x = sbk_fp_count(x, g), in_y = sbk_fp_count(y, g);                             \
        if ((in_x <= in_y ? in_x : in_y) >= (S))                                                   \
            return -1;                                                                             \
        LINE##_put(in_x <= in_y ? x : y, g, s.q, s.rem);                                           \
        return 0;                                                                                  \
    }                                                                                              \
    /* 1 if an entry holds the key's fingerprint, of any age */                                    \
    SBK_FP_INLINE int PREFIX##_window_held(const void *blocks, uint64_t nblocks, unsigned a,       \
                                           uint32_t age, const uint64_t *key)                      \
    {                                                                                              \
        (void)age;                                                                                 \
        const sbk_fp_geo g = SBK_FP_GEO(R, S, Q, MARK_BITS, HEAD_BYTES);                           \
        uint64_t main = sbk_fp_main_lines(nblocks);                                                \
        sbk_fp_key k = sbk_fp_split(*key, main, g);                                                \
        const uint64_t *w = PREFIX##_line(blocks, k.line);                                         \
        if (LINE##_find_aged(w, g, k.q, k.rem, a) >= 0)                                            \
            return 1;                                                                              \
        int slot;                                                                                  \
        return k.q >= sbk_fp_mark(w, g) &&                                                         \
               PREFIX##_spare_find_aged(blocks, main, sbk_fp_spare_aged(k, nblocks - main, g, a),  \
                                        a, &slot) != NULL;                                         \
    }                                                                                              \
    /* test-and-add with an age: 1 added, 0 held (of any age: not renewed), 2 refused; a key sent  \
     * to the spare notes the age in its main line's spill byte */                                 \
    SBK_FP_INLINE int PREFIX##_window_add(void *blocks, uint64_t nblocks, unsigned a,              \
                                          uint32_t age, const uint64_t *key)                       \
    {                                                                                              \
        uint64_t *spills = (uint64_t *)blocks + 8 * nblocks;                                       \
        const sbk_fp_geo g = SBK_FP_GEO(R, S, Q, MARK_BITS, HEAD_BYTES);                           \
        uint64_t main = sbk_fp_main_lines(nblocks), spare = nblocks - main;                        \
        sbk_fp_key k = sbk_fp_split(*key, main, g);                                                \
        k.rem = (k.rem & ~((UINT32_C(1) << a) - 1)) | age;                                         \
        uint64_t *w = PREFIX##_line(blocks, k.line);                                               \
        if (LINE##_find_aged(w, g, k.q, k.rem, a) >= 0)                                            \
            return 0;                                                                              \
        if (k.q >= sbk_fp_mark(w, g)) {                                                            \
            int slot;                                                                              \
            if (PREFIX##_spare_find_aged(blocks, main, sbk_fp_spare_aged(k, spare, g, a), a,       \
                                         &slot))                                                   \
                return 0;                                                                          \
        }                                                                                          \
        if (sbk_fp_count(w, g) < (S)) {                                                            \
            LINE##_put(w, g, k.q, k.rem);                                                          \
            return 1;                                                                              \
        }                                                                                          \
        unsigned last = LINE##_last_quotient(w, g); /* full: as PREFIX##_insert */                 \
        if (k.q >= last) {                                                                         \
            if (PREFIX##_spare_put_aged(blocks, main, spare, k, a) < 0)                            \
                return 2;                                                                          \
            sbk_fp_lower_mark(w, g, k.q);                                                          \
            sbk_fp_set_spill(spills, k.line, age + 1);                                             \
            return 1;                                                                              \
        }                                                                                          \
        sbk_fp_key out = {k.line, last, LINE##_slot(w, g, (S)-1)};                                 \
        if (PREFIX##_spare_put_aged(blocks, main, spare, out, a) < 0)                              \
            return 2;                                                                              \
        LINE##_drop(w, g, last, (S)-1);                                                            \
        LINE##_put(w, g, k.q, k.rem);                                                              \
        sbk_fp_lower_mark(w, g, last);                                                             \
        sbk_fp_set_spill(spills, k.line, age + 1);                                                 \
        return 1;                                                                                  \
    }                                                                                              \
    SBK_FP_DEFINE_WINDOW_LOOP(PREFIX##_window_insert, PREFIX##_window_add, 1)                      \
    SBK_FP_DEFINE_WINDOW_LOOP(PREFIX##_window_contains, PREFIX##_window_held, 0)                   \
    /* Lines [from, to): each entry of age `age` dropped (a line's at once: LINE##_drop_slots) or  \
     * retagged; SBK_FP_SLOTS_OF_AGE finds them */                                                 \
    static void PREFIX##_window_age(void *blocks, uint64_t lines, uint64_t from, uint64_t to,      \
                                    uint32_t a, uint32_t age, uint32_t to_age)                     \
    {                                                                                              \
        const sbk_fp_geo g = SBK_FP_GEO(R, S, Q, MARK_BITS, HEAD_BYTES);                           \
        const unsigned e = sbk_fp_extra_bits(g);                                                   \
        const uint64_t main = sbk_fp_main_lines(lines);                                            \
        uint64_t *spills = (uint64_t *)blocks + 8 * lines;                                         \
        SBK_FP_AGE_SCAN scan;                                                                      \
        SBK_FP_AGE_SCAN_INIT(&scan, g, a, age);                                                    \
        const int many = ((S)*4 / 5 >> a) >= 6; /* a plan's 80% full line, one age in 2^a */       \
        for (uint64_t line = from; line < to; line++) {                                            \
            uint64_t *w = PREFIX##_line(blocks, line);                                             \
            if (line < main && sbk_fp_spill(spills, line) == age + 1) { /* its spilled keys */     \
                sbk_fp_set_spill(spills, line, to_age == SBK_FP_AGE_DROP ? 0 : to_age + 1);        \
                if (to_age == SBK_FP_AGE_DROP)                                                     \
                    sbk_fp_set_bits(w, g.q + g.s, g.mark_bits, 0); /* the mark back to Q */        \
            }                                                                                      \
            uint64_t old = SBK_FP_SLOTS_OF_AGE(&scan, w, g, sbk_fp_count(w, g));                   \
            if (to_age == SBK_FP_AGE_DROP) {                                                       \
                if (old)                                                                           \
                    LINE##_drop_slots(w, g, old, many);                                            \
                continue;                                                                          \
            }                                                                                      \
            for (; old; old &= old - 1)                                                            \
                sbk_fp_set_bits(w, sbk_fp_extra_at(g) + e * (unsigned)__builtin_ctzll(old), a,     \
                                to_age);                                                           \
        }                                                                                          \
    }

/* Every geometry's kernels over the line operations SBK_FP_LINE names (an ISA file defines it,
 * then expands SBK_FP_GEOMETRIES(SBK_FP_KERNELS)), and their table entries
 * (SBK_FP_GEOMETRIES(SBK_FP_TABLE_ENTRY) inside the table's .layout). */
#define SBK_FP_KERNELS(NAME, INDEX, R, S, Q, MARK_BITS, HEAD_BYTES)                                \
    SBK_FP_DEFINE_KERNELS(NAME, SBK_FP_LINE, R, S, Q, MARK_BITS, HEAD_BYTES)
#define SBK_FP_TABLE_ENTRY(NAME, INDEX, R, S, Q, MARK_BITS, HEAD_BYTES)                            \
    [INDEX] = SBK_FP_ENTRY(NAME),

#define SBK_FP_ENTRY(PREFIX)                                                                       \
    {                                                                                              \
        PREFIX##_insert_batch, PREFIX##_contains_batch, PREFIX##_remove_batch, NULL, NULL,         \
            PREFIX##_insert_one, PREFIX##_contains_one, PREFIX##_window_insert,                    \
            PREFIX##_window_contains, NULL, NULL, NULL, PREFIX##_window_age,                       \
            PREFIX##_reaches_spare                                                                 \
    }

#endif /* SIMDBLOOM_FINGERPRINT_H */
