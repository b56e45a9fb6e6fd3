/*
 * The bottom layer's shared declarations (nothing here is installed): errors, the kernel table
 * in use, layout facts and block memory. Every other layer may include this; it includes nothing
 * of theirs. The public functions of this layer (sbloom_layout_*, sbloom_plan_*, sbloom_isa,
 * sbloom_strerror, ...) depend on no filter.
 */
#ifndef SIMDBLOOM_BASE_H
#define SIMDBLOOM_BASE_H

#include "simdbloom.h"
#include "../../simd/fingerprint.h"
#include "../../simd/kernels.h"

/* The three operations of the kernel table, as the batch drivers name them. */
typedef enum { SBLOOM_OP_INSERT, SBLOOM_OP_CONTAINS, SBLOOM_OP_REMOVE } sbloom_batch_op;

/* error.c: the detail sbloom_error_detail reports. sbloom_fail_with sets it (printf-style) and
 * returns code; reads clear it first. */
void sbloom_clear_detail(void);
int sbloom_fail_with(int code, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* dispatch.c: the table new filters use, or NULL with *err set when SIMDBLOOM_ISA names an
 * instruction set that is unknown or that this CPU lacks. */
const sbloom_kernels *sbloom_kernels_active(int *err);
/* 0 when a filter on this table must not take the header's inline single-key path: the table
 * was forced and is the scalar reference or an emulation (tests and benchmarks that force one
 * mean that code); 1 otherwise. */
int sbloom_kernels_inline_ok(const sbloom_kernels *table);
/* 1 when the table's plain lookups read each aligned 8-byte word whole (native vector loads),
 * so that they may run beside writers that only set bits, or clear a word's bits at once; 0 for
 * the scalar reference and the emulations (byte copies: C11 cannot check them there). */
int sbloom_kernels_whole_words(const sbloom_kernels *table);
/* 1 when this CPU and its OS run AVX2 (and BMI2) code; always 0 off x86. */
int sbloom_cpu_has_avx2(void);

/* layout.c: 1 if the value names a layout; bits per word (the block is k words of
 * block_bytes * 8 / k bits); and slots per word (a key takes one slot in each word: a bit, or a
 * 4-bit counter). */
int sbloom_layout_known(sbloom_layout layout);
uint32_t sbloom_layout_word_bits(sbloom_layout layout);
uint32_t sbloom_layout_slots(sbloom_layout layout);
/* 1 for the ABI's values that name an arrangement of several cores, not a geometry
 * (SBLOOM_LAYOUT_SCALABLE, _WINDOWED): taken from callers and from files' headers, and reported
 * by sbloom_get_layout, but never a core's or an object's layout (SBLOOM_NO_LAYOUT there). */
int sbloom_layout_composite(sbloom_layout layout);
/* The family of a layout's lines (NONE: an arrangement's value, or unknown). */
typedef enum sbloom_family_id {
    SBLOOM_FAMILY_NONE,
    SBLOOM_FAMILY_BITS,
    SBLOOM_FAMILY_COUNTERS,
    SBLOOM_FAMILY_FINGERPRINTS,
    SBLOOM_FAMILY_COUNT
} sbloom_family_id;
sbloom_family_id sbloom_layout_family(sbloom_layout layout);
#define SBLOOM_NO_LAYOUT ((sbloom_layout)0)
/* 1 for the layouts whose blocks are plain bits (Parquet, block512-k8, block512-k16). */
int sbloom_layout_is_bits(sbloom_layout layout);
/* 1 for the fingerprint layouts (fp512-r*), and their geometry (SBLOOM_E_LAYOUT for others). */
int sbloom_layout_is_fingerprint(sbloom_layout layout);
int sbloom_layout_fp_geometry(sbloom_layout layout, sbk_fp_geo *out);

/* family.c: the family of a layout's lines and what it does (no layout, an arrangement's value or
 * an unknown one: a family of no facts), for the modes and arrangements, which ask these and
 * never name a family. */
typedef enum sbloom_window_form {
    SBLOOM_WINDOW_NONE,     /* no window on its lines */
    SBLOOM_WINDOW_ADJACENT, /* a group of G + 1 adjacent lines, a generation a line */
    SBLOOM_WINDOW_SLOTS,    /* one line a group, a generation a bit of each 4-bit slot */
    SBLOOM_WINDOW_AGES      /* one set of entries, each with its generation's age */
} sbloom_window_form;
/* The file format version of a filter whose lines are of the family (docs/FORMAT.md): 1 for the
 * blocked layouts, 2 for those a reader before them must refuse as a newer format. */
#define SBLOOM_FORMAT_VERSION 1
#define SBLOOM_FORMAT_VERSION_FP 2
typedef struct sbloom_family {
    const char *name;
    uint64_t min_lines; /* a core's fewest lines */
    /* an add moves entries of other keys (in its line, and to lines every line shares): no
     * lock-free lookup beside writers, adds on one thread, a lock for every operation under many
     * writers, and never shared between processes (a writer killed mid-move) */
    int moves_entries;
    int combines;         /* union and intersection are the blocks' bitwise OR and AND */
    int counts_every_add; /* the item count takes every add, not only new keys */
    int removes;          /* a key added may be removed */
    sbloom_window_form window_form;
    /* its layouts are candidates when a caller asks for the smallest plan of every family
     * (sbloom_plan_any), after the Bloom layouts, which win a tie; such a family's plan for n
     * keys has lines whose max_items is at least n (a layout whose max_items at the best plan's
     * size is below n is passed over) */
    int in_smallest_plan;
    uint32_t format_version; /* of a file of one core of it */

    /* The fewest lines of one of its layouts for n keys at rate p (n > 0, 0 < p < 1, out
     * checked), or SBLOOM_E_TOO_LARGE. */
    int (*plan)(uint64_t n, double p, sbloom_layout layout, sbloom_plan *out);
    /* The false-positive rate of n keys in bytes of lines of the layout; NAN when the bytes are
     * fewer than its fewest lines. */
    double (*rate)(sbloom_layout layout, uint64_t bytes, uint64_t n);
    /* Fill, current rate and estimated items of nlines lines, read every stride-th line. */
    void (*scan)(sbloom_layout layout, const void *lines, uint64_t nlines, uint64_t stride,
                 sbloom_stats *out);
    /* Where a key may live in a second line: the share of absent keys' lookups that read one,
     * and the share of keys held there. NULL: never. */
    void (*second_line)(sbloom_layout layout, const void *lines, uint64_t nlines,
                        double *absent_lookups, double *spare_keys);
    /* The most keys a file's header may count in lines of the layout (a bound on what its
     * writer can have added; more is a forged or damaged header). */
    uint64_t (*max_items)(sbloom_layout layout, uint64_t nlines, uint64_t payload_bytes);
} sbloom_family;
/* The families' rows (src/base/families/: one file a family, with its sizing, statistics and
 * bounds; family.c maps the layouts to them). */
extern const sbloom_family sbloom_family_bits, sbloom_family_counters, sbloom_family_fingerprints;
const sbloom_family *sbloom_family_of(sbloom_layout layout);
/* How a window keeps its generations on the layout's lines (NONE where it cannot); the lines of
 * one group of G + 1 generations; a generation's bits in a group (its count's bound). */
sbloom_window_form sbloom_window_form_of(sbloom_layout layout);
uint32_t sbloom_window_group_lines(sbloom_window_form form, uint32_t ngens);
uint64_t sbloom_window_generation_bits(sbloom_window_form form);
/* One generation's lines for n keys at p in a window of that form (adjacent lines, slots). */
int sbloom_plan_window_lines(uint64_t n, double p, sbloom_window_form form, sbloom_plan *out);

/* sizing.c: the smaller of the block512-k8 and -k16 plans for n keys at rate p (the cores of the
 * composite layouts are whichever is smaller), or the k8 plan's error when neither exists. */
int sbloom_plan_block512(uint64_t n, double p, sbloom_plan *out);
/* A composite mode's core (a stage): the block512 plan, or with any_family the smallest of it and
 * the fingerprint layouts' plans (a tie keeps the Bloom one). */
int sbloom_plan_stage(uint64_t n, double p, int any_family, sbloom_plan *out);
/* The smallest fingerprint plan for n entries whose remainders keep age_bits of an age each (a
 * window's: src/modes/windowed.c), the rate p from the bits left: SBLOOM_E_TOO_LARGE if none. */
int sbloom_plan_aged(uint64_t n, double p, unsigned age_bits, sbloom_plan *out);

/* memory.c: zeroed, 64-byte aligned block memory; *mapped tells sbloom_blocks_free how. */
void *sbloom_blocks_alloc(uint64_t bytes, int *mapped);
void sbloom_blocks_free(void *blocks, uint64_t bytes, int mapped);

#endif /* SIMDBLOOM_BASE_H */
