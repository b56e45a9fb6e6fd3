/*
 * simdbloom: a blocked Bloom filter for "have I seen this key before?".
 *
 * Every key touches exactly one 64-byte cache line (one 32- or 64-byte block), so a lookup
 * costs at most one cache miss. Kernels are chosen at run time from what the CPU has.
 *
 * One filter type, sbloom_t, whatever its layout: three bit layouts, and a counting layout that
 * also removes keys.
 *
 * Conventions of this header:
 *   - Every function that can fail returns a negative SBLOOM_E_* code; sbloom_strerror() names it.
 *   - No function aborts on bad input; NULL pointers are reported as SBLOOM_E_NULL.
 *   - A filter may be read (contains) from many threads at once; any write (add, remove, clear)
 *     needs the caller's exclusive access.
 *   - There is no global state to initialise. The instruction set is picked on first use.
 *   - Structures the library fills carry their size in their first member, set by the caller
 *     (sbloom_plan_init(), sbloom_stats_init()), so that later versions can add members.
 *
 * Compatibility: every 1.x release keeps the functions, constants and structure members of this
 * header, with their meaning, and links with programs built against any earlier 1.x (the shared
 * library's SONAME is libsimdbloom.so.1). Filter files of format version 1 load in every 1.x.
 */
#ifndef SIMDBLOOM_H
#define SIMDBLOOM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__AVX2__) && !defined(SIMDBLOOM_NO_INLINE)
#include <immintrin.h> /* the inline single-key calls (simdbloom_inline.h) */
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this header; sbloom_version() gives the library's, which may be newer. */
#define SIMDBLOOM_VERSION_MAJOR 1
#define SIMDBLOOM_VERSION_MINOR 0
#define SIMDBLOOM_VERSION_PATCH 0
#define SIMDBLOOM_VERSION_NUMBER                                                                   \
    (SIMDBLOOM_VERSION_MAJOR * 10000 + SIMDBLOOM_VERSION_MINOR * 100 + SIMDBLOOM_VERSION_PATCH)
#define SIMDBLOOM_VERSION_STRING "1.0.0"

/* What the library exports: the build of the library marks these and hides everything else. */
#if defined(_WIN32) || defined(__CYGWIN__)
#define SBLOOM_API
#elif defined(__GNUC__) && __GNUC__ >= 4
#define SBLOOM_API __attribute__((visibility("default")))
#else
#define SBLOOM_API
#endif

/* A name kept for the ABI whose meaning another name now carries: calls still work, and the
 * compiler says which name to use. */
#if defined(__GNUC__) || defined(__clang__)
#define SBLOOM_DEPRECATED(use) __attribute__((deprecated(use)))
#else
#define SBLOOM_DEPRECATED(use)
#endif

/* A lookup only reads memory: the compiler may keep what the caller's loop reads in registers
 * across it, and run the loop without reloading them per key. */
#if defined(__GNUC__)
#define SBLOOM_PURE_ __attribute__((pure))
#else
#define SBLOOM_PURE_
#endif

/* The library's version, as SIMDBLOOM_VERSION_NUMBER and as "MAJOR.MINOR.PATCH". */
SBLOOM_API unsigned sbloom_version(void);
SBLOOM_API const char *sbloom_version_string(void);

/* ---- Errors ------------------------------------------------------------------------------- */

enum {
    SBLOOM_OK = 0,
    SBLOOM_E_NULL = -1,       /* a required pointer argument was NULL */
    SBLOOM_E_INVALID = -2,    /* an argument is out of its domain (n = 0, p not in (0,1), NaN) */
    SBLOOM_E_NOMEM = -3,      /* memory allocation failed */
    SBLOOM_E_TOO_LARGE = -4,  /* the size overflows or exceeds SBLOOM_MAX_BYTES */
    SBLOOM_E_LAYOUT = -5,     /* unknown layout, or an operation the layout lacks (remove on a bit
                                 layout, a set operation on the counting layout) */
    SBLOOM_E_ISA = -6,        /* unknown instruction set, or the CPU lacks it */
    SBLOOM_E_IO = -7,         /* a file operation failed (errno tells which) */
    SBLOOM_E_FORMAT = -8,     /* not a simdbloom filter (bad magic) */
    SBLOOM_E_VERSION = -9,    /* a format version or hash function this build does not know */
    SBLOOM_E_CORRUPT = -10,   /* a checksum does not match: the header or the bits were damaged */
    SBLOOM_E_TRUNCATED = -11, /* shorter (or longer) than its header says */
    SBLOOM_E_INCOMPATIBLE = -12, /* filters differ in layout or size: cannot be combined */
    SBLOOM_E_READONLY = -13,     /* the filter is a read-only mapping or attachment */
    SBLOOM_E_UNSUPPORTED = -14,  /* not possible on this host or build (in-place images on a
                                    big-endian host) */
    SBLOOM_E_ABSENT = -15, /* remove refused: the key is not in the filter (a counter is zero, no
                              entry matches), so it was never added */
    SBLOOM_E_NOT_REGULAR = -16, /* the path is a directory, FIFO, device or socket, not a file */
    SBLOOM_E_FACTOR = -17,      /* a fold factor that does not divide the block count */
    SBLOOM_E_LOCKED = -18, /* another process sharing the filter's locks kept one too long (it is
                             stopped or stuck), or a signal came while waiting for it; the
                             detail names it. A batch that fails so may have added some of its
                             keys: is_new says exactly which (0 for the others, which are then
                             present already or still absent) */
    SBLOOM_E_FULL = -19    /* a fingerprint filter had no room for a key (its line and both spare
                              lines full: it holds far more than it was planned for). That key was
                              not added; the rest of a batch was, and is_new says which. */
};

/* A short, static, human-readable description of an error code (never NULL). */
SBLOOM_API const char *sbloom_strerror(int code);
/* What the last file or image this thread read (sbloom_load, _map, _deserialize, _attach) was
 * found to have wrong, in words that name the field: "header checksum mismatch", "inconsistent
 * header: k 0 for block512-k8", "planned 1000000000 items at rate 0.01 need more than its 64
 * bytes". Empty when the last read succeeded or has nothing to add to sbloom_strerror. Never
 * NULL; valid until this thread's next read. */
SBLOOM_API const char *sbloom_error_detail(void);

/* ---- Layouts ------------------------------------------------------------------------------ */

typedef enum sbloom_layout {
    /* Apache Parquet split block: 256-bit blocks of 8 x 32-bit words, one bit per word (k = 8),
     * strings hashed with XXH64 seed 0. Bit-exact with the Parquet format specification. */
    SBLOOM_LAYOUT_PARQUET = 1,
    /* 512-bit cache-line blocks of 8 x 64-bit words, one bit per word (k = 8), XXH3-64. */
    SBLOOM_LAYOUT_BLOCK512_K8 = 2,
    /* 512-bit cache-line blocks of 16 x 32-bit words, one bit per word (k = 16), XXH3-64. */
    SBLOOM_LAYOUT_BLOCK512_K16 = 3,
    /* The counting layout: 512-bit blocks of 8 x 64-bit words, each word sixteen 4-bit counters;
     * a key counts in one counter per word (k = 8), XXH3-64. It also removes keys
     * (sbloom_remove), at about 4 times the memory of a bit layout. */
    SBLOOM_LAYOUT_COUNTING512 = 4,
    /* A scalable filter for an unknown number of keys (sbloom_create_scalable): a list of
     * one-line stages (512-bit blocks; with SBLOOM_OPTS_ANY_FAMILY fingerprint layouts where
     * smaller), each larger than the last, XXH3-64. */
    SBLOOM_LAYOUT_SCALABLE = 5,
    /* A windowed filter (sbloom_create_windowed): keys are forgotten after a window of G
     * periods, kept in a ring of G + 1 generations side by side in 64-byte lines, XXH3-64. */
    SBLOOM_LAYOUT_WINDOWED = 6,
    /* The fingerprint family: a key is a 64-byte line, a quotient and an r-bit remainder; the
     * line stores the remainders in order of quotient with a unary directory, so a lookup reads
     * one line (a line that overflowed also asks a spare, for about 3% of lookups). Far fewer
     * bits a key than the Bloom layouts at low rates (1e-6: about 26 against block512-k16's 39),
     * and keys are removed exactly (sbloom_remove). Adds past the planned count fill the lines,
     * and a key that finds no room is refused (SBLOOM_E_FULL). XXH3-64; the whole 64-bit hash
     * chooses line, quotient and remainder. One layout a remainder width, for rates from 1e-3
     * (r10) to 1e-9 (r29); sbloom_plan_any picks among them and the Bloom layouts. */
    SBLOOM_LAYOUT_FP512_R10 = 7,
    SBLOOM_LAYOUT_FP512_R13 = 8,
    SBLOOM_LAYOUT_FP512_R16 = 9,
    SBLOOM_LAYOUT_FP512_R19 = 10,
    SBLOOM_LAYOUT_FP512_R22 = 11,
    SBLOOM_LAYOUT_FP512_R27 = 12,
    SBLOOM_LAYOUT_FP512_R29 = 13
} sbloom_layout;

/* Layouts are 1 .. SBLOOM_LAYOUT_COUNT. */
#define SBLOOM_LAYOUT_COUNT 13

/* Largest filter this build creates: 2^32 blocks of the layout's size would be the limit of the
 * 32-bit multiply-high block index; 64 GiB is the supported ceiling. */
#define SBLOOM_MAX_BYTES (UINT64_C(64) << 30)

/* "parquet", "block512-k8", "block512-k16", "counting512", "scalable", "windowed", "fp512-r10"
 * .. "fp512-r29"; NULL for an unknown layout. */
SBLOOM_API const char *sbloom_layout_name(sbloom_layout layout);
/* The layout with that name as an int (a positive sbloom_layout value), or SBLOOM_E_LAYOUT
 * (SBLOOM_E_NULL for NULL). */
SBLOOM_API int sbloom_layout_from_name(const char *name);
/* Bytes per block (32 or 64), or 0 for an unknown layout. */
SBLOOM_API uint32_t sbloom_layout_block_bytes(sbloom_layout layout);
/* Bits set per key (8 or 16), or 0 for an unknown layout, the fingerprint layouts (they set no
 * bits) and the scalable one (each stage has its own layout: sbloom_stage). */
SBLOOM_API uint32_t sbloom_layout_k(sbloom_layout layout);

/* ---- Sizing ------------------------------------------------------------------------------- */

typedef struct sbloom_plan {
    size_t size; /* set by the caller: sizeof(sbloom_plan) (sbloom_plan_init() does) */
    sbloom_layout layout;
    uint64_t bytes;      /* filter size, a whole number of blocks */
    uint32_t k;          /* bits set per key */
    double bits_per_key; /* bytes * 8 / n */
    double fpp;          /* expected false-positive rate at n items (exact blocked formula) */
} sbloom_plan;

/* A plan with its size set and every other member zero, ready to be filled. */
static inline sbloom_plan sbloom_plan_init(void)
{
    sbloom_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.size = sizeof plan;
    return plan;
}

/* The same as an exported call, for callers that cannot use the header's inline functions
 * (foreign-function interfaces): *plan as sbloom_plan_init() makes it. */
SBLOOM_API void sbloom_plan_reset(sbloom_plan *plan);

/* The smallest filter over the bit layouts whose expected false-positive rate at n distinct
 * items is at most p. Ties go to the layout that sets fewer bits. out->size must be set
 * (SBLOOM_E_INVALID otherwise). */
SBLOOM_API int sbloom_plan_for(uint64_t n, double p, sbloom_plan *out);
/* The same, for one given layout (the counting and fingerprint ones included). */
SBLOOM_API int sbloom_plan_for_layout(uint64_t n, double p, sbloom_layout layout, sbloom_plan *out);
/* The smallest filter over every family: the bit layouts and the fingerprint layouts (which also
 * remove keys). sbloom_plan_for keeps to the bit layouts, so that callers of sbloom_create keep
 * what they relied on (set operations, Parquet bits, adds that never fail); a new caller asks for
 * the smallest of all with this plan (or SBLOOM_OPTS_ANY_FAMILY). Ties go to the bit layouts. */
SBLOOM_API int sbloom_plan_any(uint64_t n, double p, sbloom_plan *out);

/* Expected false-positive rate of a blocked filter of `bytes` bytes holding n distinct items:
 * sum over the Poisson-distributed number L of keys in the probed block of that block's
 * false-positive rate, which for a layout of W words of w bits, one bit per word, is
 * (1 - (1 - 1/w)^L)^W (w = 16 counters for the counting layout). For a fingerprint layout of Q
 * quotients and r-bit remainders with lam keys a main line: lam / Q * 2^-r, and the spare's share
 * (docs/SIZING.md). Returns NaN for an unknown layout or bytes below its least size. */
SBLOOM_API double sbloom_blocked_fpp(sbloom_layout layout, uint64_t bytes, uint64_t n);

/* The classic (unblocked) Bloom filter: rate (1 - e^(-k/bits_per_key))^k for k hash functions
 * and bits_per_key = m/n bits per item. NaN for non-positive or non-finite arguments. */
SBLOOM_API double sbloom_classic_fpp(double bits_per_key, double k);
/* The integer k >= 1 that minimises sbloom_classic_fpp at bits_per_key (0 on bad input). */
SBLOOM_API uint32_t sbloom_classic_best_k(double bits_per_key);
/* Bits per item a classic filter with its best integer k needs for rate p (NaN on bad input). */
SBLOOM_API double sbloom_classic_bits_per_key(double p);

/* ---- Lifecycle ---------------------------------------------------------------------------- */

typedef struct sbloom sbloom_t; /* opaque */

/* Every filter from one call: sbloom_create_opts(&f, &opts), the options made by
 * sbloom_opts_init() and set by name (unset fields keep their zero meaning):
 *
 *     sbloom_opts opts = sbloom_opts_init();
 *     opts.expected = 10000000;     // keys to plan for; 0: the filter grows as keys come
 *     opts.fpp = 1e-6;              // the false-positive rate (0: 1e-6)
 *     int rc = sbloom_create_opts(&f, &opts);
 *
 * The struct begins with its own size (libbpf's habit), so that fields added later do not break
 * callers built against this one: the library reads the fields the caller's size covers and
 * takes zero for the rest; fields a newer caller sets that this library does not know must be
 * zero (else SBLOOM_E_INVALID). What is made:
 *   - with memory: the filter's image in the caller's buffer (sbloom_create_in), of `bytes` and
 *     `layout`, or planned for `expected`;
 *   - with periods (or layout SBLOOM_LAYOUT_WINDOWED: 1 period of 1 unit): a window of `periods`
 *     periods of `period` units, its clock at `now`, planned for `expected` keys a window, or
 *     growing from `first` (sbloom_create_windowed, _windowed_scalable);
 *   - with bytes: a filter of that size of `layout` (sbloom_create_bytes);
 *   - with expected: planned for it, of `layout` or the smallest (sbloom_create,
 *     sbloom_create_for_layout; layout SBLOOM_LAYOUT_SCALABLE grows from `expected`);
 *   - else a filter that grows from `first` keys (sbloom_create_scalable).
 * flags SBLOOM_OPTS_CONCURRENT: in concurrent mode from the start (sbloom_set_concurrent);
 * SBLOOM_OPTS_ANY_FAMILY: with `expected` and no layout, the smallest of every family
 * (sbloom_plan_any: a fingerprint layout where it is smaller) instead of the smallest bit layout;
 * for a filter that grows, stages of every family (sbloom_create_scalable says how); for a
 * window planned for `expected` keys, a fingerprint window (entries with their period) where it
 * is smaller, whose writers are one thread or the threads of one process (concurrent mode; no
 * file shared between processes: SBLOOM_E_LAYOUT).
 * Contradictory options (bytes and expected, a window in caller memory) are SBLOOM_E_INVALID.
 * The constructors below are this call with their arguments as options. */
#define SBLOOM_OPTS_CONCURRENT 1u
#define SBLOOM_OPTS_ANY_FAMILY 2u
typedef struct sbloom_opts {
    size_t size;          /* sizeof(sbloom_opts): set by sbloom_opts_init() */
    uint64_t expected;    /* keys to plan for (a window: per window); 0: grow as keys come */
    double fpp;           /* the false-positive rate; 0: 1e-6 */
    sbloom_layout layout; /* 0: the smallest for the plan; or a layout */
    uint64_t bytes;       /* instead of a plan: a filter of this size (with a layout) */
    uint64_t first;       /* growing: the keys its first stage is planned for; 0: 1,000,000 */
    uint32_t periods;     /* a window of this many periods, 1 to SBLOOM_WINDOW_MAX_PERIODS */
    uint64_t period;      /* the window's period, in the caller's time unit */
    uint64_t now;         /* the window's clock when made */
    void *memory;         /* the image in the caller's memory (64-byte aligned), or NULL */
    size_t memory_size;   /* its bytes: at least sbloom_image_size */
    unsigned flags;       /* SBLOOM_OPTS_CONCURRENT, SBLOOM_OPTS_ANY_FAMILY */
} sbloom_opts;

static inline sbloom_opts sbloom_opts_init(void)
{
    sbloom_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.size = sizeof opts;
    return opts;
}

SBLOOM_API int sbloom_create_opts(sbloom_t **out, const sbloom_opts *opts);

/* What sbloom_create_opts(&f, opts) would make, planned without making it (no memory taken): the
 * layout of its lines and their bytes, k, the rate, and bytes * 8 / expected. A window's plan is
 * every generation's lines (or the fingerprint window's, with a byte a line beside them) for
 * `expected` keys a window, its layout that of the lines (counting512: generation slots; a 512-bit
 * Bloom layout: adjacent lines; fp512-r*: the fingerprint window, SBLOOM_OPTS_ANY_FAMILY where it
 * is smaller) and its fpp the window's rate. Only a filter planned for a count has a size before
 * its keys come: options with memory, bytes, or no `expected` (a filter that grows) are
 * SBLOOM_E_INVALID, as are options sbloom_create_opts refuses. out->size must be set. */
SBLOOM_API int sbloom_plan_opts(const sbloom_opts *opts, sbloom_plan *out);

/* A filter planned by sbloom_plan_for(n, p) (a bit layout). *out is set to NULL on failure. */
SBLOOM_API int sbloom_create(sbloom_t **out, uint64_t n, double p);
/* The same with the layout chosen by the caller (sbloom_plan_for_layout); with
 * SBLOOM_LAYOUT_COUNTING512, a counting filter. */
SBLOOM_API int sbloom_create_for_layout(sbloom_t **out, uint64_t n, double p, sbloom_layout layout);
/* A filter of a given layout and size; bytes is rounded up to a whole number of blocks. */
SBLOOM_API int sbloom_create_bytes(sbloom_t **out, uint64_t bytes, sbloom_layout layout);
/* A copy of a filter (bits, counters, plan), running on the instruction set new filters use now:
 * a snapshot, or the same contents on another ISA after sbloom_set_isa(). */
SBLOOM_API int sbloom_clone(sbloom_t **out, const sbloom_t *filter);
/* Frees the filter; NULL is accepted. Memory the caller owns (sbloom_create_in, sbloom_attach)
 * is left alone; a read-write file mapping is synced first (sbloom_sync), except a concurrent
 * one (SBLOOM_OPEN_CONCURRENT), which other processes may still be adding to. */
SBLOOM_API void sbloom_free(sbloom_t *filter);
/* Clears every bit (or counter) and the item counter. */
SBLOOM_API int sbloom_clear(sbloom_t *filter);

/* ---- Single keys -------------------------------------------------------------------------- */

/* The 64-bit hash this filter's layout gives a byte string (XXH64 seed 0 for Parquet, XXH3-64
 * otherwise). Keys may hold any bytes; len 0 is a valid key (key may then be NULL). */
SBLOOM_API uint64_t sbloom_hash(const sbloom_t *filter, const void *key, size_t len);

/* Adds a key. Returns 1 if the key was new to the filter (absent before), 0 if it was already
 * present (or a false positive), or a negative error. */
SBLOOM_API int sbloom_add(sbloom_t *filter, const void *key, size_t len);
/* 1 if the key may have been added, 0 if it certainly was not, or a negative error. */
SBLOOM_API int sbloom_contains(const sbloom_t *filter, const void *key, size_t len);

/* The same for a caller-supplied 64-bit hash, used as it is: its high 32 bits choose the block
 * and its low 32 bits the bits in it. Hashes must therefore be well mixed (as from XXH3):
 * sequential IDs or other raw integers passed here all land in block 0. Pass integers to the
 * _u64 functions below instead. */
SBLOOM_API int sbloom_add_hash(sbloom_t *filter, uint64_t hash);
SBLOOM_API int sbloom_contains_hash(const sbloom_t *filter, uint64_t hash) SBLOOM_PURE_;

/* Integer keys (IDs, row numbers, any 64-bit value): the key is the string of the value's 8
 * little-endian bytes, hashed as every string key of the layout is (so sbloom_add_u64(f, x) and
 * sbloom_add(f, le_bytes_of_x, 8) are the same key on every host; for Parquet this is the hash
 * Parquet gives an INT64 value). sbloom_add_u64 answers 1 when the key was new. */
SBLOOM_API uint64_t sbloom_hash_u64(const sbloom_t *filter, uint64_t value);
SBLOOM_API int sbloom_add_u64(sbloom_t *filter, uint64_t value);
/* Deprecated: the same call as sbloom_add_u64, under a second name. */
SBLOOM_API int sbloom_add_if_new_u64(sbloom_t *filter, uint64_t value)
    SBLOOM_DEPRECATED("sbloom_add_u64 answers the same (1 when the key was new)");
SBLOOM_API int sbloom_contains_u64(const sbloom_t *filter, uint64_t value);

/* ---- Batches ------------------------------------------------------------------------------ */
/* Each returns a count (>= 0) or a negative error. `results`, where taken, receives one byte per
 * key (1 = present / new, 0 = not) and may be NULL when only the count is wanted. Batches are
 * processed in chunks whose cache lines are prefetched ahead of use. The _hashes forms take
 * well-mixed hashes, as sbloom_add_hash does (integers go to the _u64s forms).
 *   - On an error (a NULL key with a nonzero length, SBLOOM_E_NULL; a read-only filter,
 *     SBLOOM_E_READONLY) nothing is added and `results` is left as it was: the arguments are
 *     checked before the first key is touched.
 *   - Keys are read during the call only: the library keeps no pointer to them once it returns.
 *   - From C, a `char **` of keys is passed as (const void *const *)keys (C does not convert
 *     char ** to const void *const * by itself); the counts are int64_t, and an error code fits
 *     sbloom_strerror's int: sbloom_strerror((int)count).
 *   - An overfull filter gives no error: the batch calls keep answering, at a false-positive rate
 *     above the plan. sbloom_estimate tells (estimated_items above sbloom_planned_items; infinite
 *     when every bit is set), as the command line's overload warning does. */

/* Adds n hashes; returns how many were new to the filter. */
SBLOOM_API int64_t sbloom_add_hashes(sbloom_t *filter, const uint64_t *hashes, size_t n);
/* Tests n hashes; returns how many were present. */
SBLOOM_API int64_t sbloom_contains_hashes(const sbloom_t *filter, const uint64_t *hashes, size_t n,
                                          uint8_t *results);
/* Fused test-and-add: sets every key and reports which were absent before; a key repeated
 * later in the same batch counts as already seen. Returns how many were new. */
SBLOOM_API int64_t sbloom_add_if_new_hashes(sbloom_t *filter, const uint64_t *hashes, size_t n,
                                            uint8_t *is_new);

/* The same over byte-string keys: keys[i] points to lens[i] bytes (NULL allowed if 0). */
SBLOOM_API int64_t sbloom_add_keys(sbloom_t *filter, const void *const *keys, const size_t *lens,
                                   size_t n);
SBLOOM_API int64_t sbloom_contains_keys(const sbloom_t *filter, const void *const *keys,
                                        const size_t *lens, size_t n, uint8_t *results);
SBLOOM_API int64_t sbloom_add_if_new_keys(sbloom_t *filter, const void *const *keys,
                                          const size_t *lens, size_t n, uint8_t *is_new);

/* The same over byte strings in one buffer with n + 1 offsets, as Apache Arrow, Parquet and
 * Python hold them (no array of pointers to build, nothing copied): key i is the bytes
 * data[offsets[i] .. offsets[i + 1]). The _strings32 forms take Arrow's string layout (int32
 * offsets), the _strings64 forms its large string layout (int64). offsets[0] may be past 0 (a
 * slice); offsets must not decrease (SBLOOM_E_INVALID, checked before anything changes); data may
 * be NULL only when every key is empty, and offsets only when n is 0. The caller keeps data and
 * offsets alive for the call; the keys are the same keys as sbloom_add's. */
SBLOOM_API int64_t sbloom_add_strings32(sbloom_t *filter, const void *data, const int32_t *offsets,
                                        size_t n);
SBLOOM_API int64_t sbloom_contains_strings32(const sbloom_t *filter, const void *data,
                                             const int32_t *offsets, size_t n, uint8_t *results);
SBLOOM_API int64_t sbloom_add_if_new_strings32(sbloom_t *filter, const void *data,
                                               const int32_t *offsets, size_t n, uint8_t *is_new);
SBLOOM_API int64_t sbloom_add_strings64(sbloom_t *filter, const void *data, const int64_t *offsets,
                                        size_t n);
SBLOOM_API int64_t sbloom_contains_strings64(const sbloom_t *filter, const void *data,
                                             const int64_t *offsets, size_t n, uint8_t *results);
SBLOOM_API int64_t sbloom_add_if_new_strings64(sbloom_t *filter, const void *data,
                                               const int64_t *offsets, size_t n, uint8_t *is_new);

/* The same over integer keys (as sbloom_add_u64). */
SBLOOM_API int64_t sbloom_add_u64s(sbloom_t *filter, const uint64_t *values, size_t n);
SBLOOM_API int64_t sbloom_contains_u64s(const sbloom_t *filter, const uint64_t *values, size_t n,
                                        uint8_t *results);
SBLOOM_API int64_t sbloom_add_if_new_u64s(sbloom_t *filter, const uint64_t *values, size_t n,
                                          uint8_t *is_new);

/* hashes[i] = sbloom_hash(filter, keys[i], lens[i]) for n keys, so that a pipeline can hash once
 * and route the hashes itself (sbloom_shard, per-thread filters). Returns n or an error. */
SBLOOM_API int64_t sbloom_hash_keys(const sbloom_t *filter, const void *const *keys,
                                    const size_t *lens, size_t n, uint64_t *hashes);

/* ---- Removal (the counting layout) -------------------------------------------------------- */
/*
 * Deleting keys, kept to one cache line per key: in the counting layout
 * a 64-byte block holds 8 words of sixteen 4-bit counters, and a key counts in one counter of
 * each word. It costs about 4 times the memory of a bit layout; use it only when keys must go.
 *
 * - Add increments the key's 8 counters and returns 1 if one of them was zero before. A counter at
 *   15 is saturated: it stays at 15, and remove never decrements it, so a saturated counter can
 *   cause false positives but never a false negative. sbloom_saturated() counts them.
 * - Remove decrements the key's counters, and refuses with SBLOOM_E_ABSENT, changing nothing, when
 *   any of them is zero: such a key was certainly never added. Removing a key that was never added
 *   but answers present (a false positive) cannot be detected: it takes counts from other keys and
 *   can make them answer absent. Remove only keys you added.
 * - Adding a key twice needs two removes to take it out (counts, not sets); sbloom_items() is
 *   adds less removes.
 * - On a bit layout, every function of this group answers SBLOOM_E_LAYOUT.
 */
/* 1 if removed, SBLOOM_E_ABSENT if refused, or another error. */
SBLOOM_API int sbloom_remove(sbloom_t *filter, const void *key, size_t len);
SBLOOM_API int sbloom_remove_hash(sbloom_t *filter, uint64_t hash);
SBLOOM_API int sbloom_remove_u64(sbloom_t *filter, uint64_t value);
/* Batches, in order (a key removed later in a batch sees the earlier adds): removed[i] = 1 for the
 * keys removed (removed may be NULL); refused keys are 0 and change nothing, and the batch goes
 * on. Returns the count removed. */
SBLOOM_API int64_t sbloom_remove_hashes(sbloom_t *filter, const uint64_t *hashes, size_t n,
                                        uint8_t *removed);
SBLOOM_API int64_t sbloom_remove_keys(sbloom_t *filter, const void *const *keys, const size_t *lens,
                                      size_t n, uint8_t *removed);
SBLOOM_API int64_t sbloom_remove_strings32(sbloom_t *filter, const void *data,
                                           const int32_t *offsets, size_t n, uint8_t *removed);
SBLOOM_API int64_t sbloom_remove_strings64(sbloom_t *filter, const void *data,
                                           const int64_t *offsets, size_t n, uint8_t *removed);
/* Counters stuck at 15 (scans the filter, O(bytes)). */
SBLOOM_API int64_t sbloom_saturated(const sbloom_t *filter);

/* ---- Files and buffers ----------------------------------------------------------------------- */
/* A filter file is a 128-byte little-endian header (magic, version, layout, hash, sizes, counts,
 * plan, payload and header checksums) followed by the bits at a 64-byte-aligned offset. Readers
 * validate everything (sizes against the input, both checksums) before they allocate. */

/* Bytes sbloom_serialize writes for this filter (0 for NULL). */
SBLOOM_API uint64_t sbloom_serialized_size(const sbloom_t *filter);
/* Writes the file image into buf (cap bytes); returns SBLOOM_OK or SBLOOM_E_TRUNCATED if cap is
 * too small. */
SBLOOM_API int sbloom_serialize(const sbloom_t *filter, void *buf, size_t cap);
/* A filter from a file image of len bytes. */
SBLOOM_API int sbloom_deserialize(sbloom_t **out, const void *buf, size_t len);
/* Crash-safe save: a temporary file in the same directory, written, fsynced, renamed over path,
 * and the directory fsynced. On any error the old file at path is left as it was. A symbolic
 * link is written through (the file it points to is replaced; the link stays); a path that is a
 * directory, FIFO, device or socket is refused with SBLOOM_E_NOT_REGULAR. The new file keeps the
 * old one's permissions (a new file gets 0666 less the umask). Other hard links to the old file
 * keep the old contents. */
SBLOOM_API int sbloom_save(const sbloom_t *filter, const char *path);
/* Reads and validates a file into memory. Every reader refuses a path that is not a regular file
 * with SBLOOM_E_NOT_REGULAR, without blocking (a FIFO is not opened for reading). */
SBLOOM_API int sbloom_load(sbloom_t **out, const char *path);
/* Flags of sbloom_map and sbloom_attach. */
#define SBLOOM_OPEN_VERIFY 1u /* check the bits' checksum too (reads every byte) */
#define SBLOOM_OPEN_WRITE                                                                          \
    2u /* adds allowed, made in place (in the file, or the caller's image)                         \
        */
/* sbloom_map only, with SBLOOM_OPEN_WRITE: the concurrent mode across processes (see "Many
 * threads and processes" below). */
#define SBLOOM_OPEN_CONCURRENT 4u

/* Maps a file, zero copy: the header is validated, the bits' checksum only with
 * SBLOOM_OPEN_VERIFY. Without SBLOOM_OPEN_WRITE the mapping is read-only (adds return
 * SBLOOM_E_READONLY; for read-mostly services); with it, a shared read-write mapping whose adds
 * go to the file itself, visible at once to every process mapping it (one writer at a time;
 * with SBLOOM_OPEN_CONCURRENT too, any number: see "Many threads and processes").
 * sbloom_sync or sbloom_free write the header (items, checksum) back; until then the file's
 * checksum is stale and sbloom_load refuses it. On a big-endian host a read-only map loads the
 * file (swapped, always verified) instead, and SBLOOM_OPEN_WRITE gives SBLOOM_E_UNSUPPORTED.
 * A windowed file of at most 3 periods is mapped too: its clock, each generation's start and count
 * are the file's own words (a read-only mapping answers as of the file's clock: sbloom_advance
 * gives SBLOOM_E_READONLY); one of more periods, and a scalable file, give SBLOOM_E_LAYOUT (load
 * them). */
SBLOOM_API int sbloom_map(sbloom_t **out, const char *path, unsigned flags);
/* As with any mapping, a file truncated in place by another program while mapped makes reads past
 * its new end raise SIGBUS: replace filter files by rename (sbloom_save does), never by rewriting
 * them in place (cp onto an existing file truncates first). A program that cannot rule this out
 * should sbloom_load instead (the simdbloom command does). */
/* 1 if the filter refuses adds (a read-only mapping or attachment). */
SBLOOM_API int sbloom_is_readonly(const sbloom_t *filter);

/* ---- Memory the caller owns ----------------------------------------------------------------- */
/* A filter can live in memory the library does not allocate (a shared-memory segment, an arena):
 * the memory holds a file image, header then bits, exactly as sbloom_serialize writes it, so
 * another process can attach to it and sbloom_save/sbloom_load/sbloom_deserialize read it. The
 * buffer must be 64-byte aligned, stay valid until sbloom_free (which leaves it alone), and is
 * used in place (on a big-endian host these answer SBLOOM_E_UNSUPPORTED). */

/* Bytes of the image of a filter of `bytes` bytes (rounded up to whole blocks) of this layout:
 * what sbloom_create_in needs; 0 for an unknown layout or a size over SBLOOM_MAX_BYTES. */
SBLOOM_API uint64_t sbloom_image_size(uint64_t bytes, sbloom_layout layout);
/* A new, empty filter in buf (cap bytes, at least sbloom_image_size; SBLOOM_E_TRUNCATED if less,
 * SBLOOM_E_INVALID if buf is not 64-byte aligned). */
SBLOOM_API int sbloom_create_in(sbloom_t **out, void *buf, size_t cap, uint64_t bytes,
                                sbloom_layout layout);
/* The same, sized for n keys at false-positive rate fpp (layout 0: the smallest, as sbloom_create
 * picks), and keeping that plan as sbloom_create does (sbloom_planned_items, _fpp, the overload
 * estimate). The buffer needs sbloom_image_size(plan.bytes, plan.layout) of the plan
 * sbloom_plan_for (or sbloom_plan_for_layout) gives for n and fpp. */
SBLOOM_API int sbloom_create_in_planned(sbloom_t **out, void *buf, size_t cap, uint64_t n,
                                        double fpp, sbloom_layout layout);
/* A filter over the image in buf (len bytes), validated as sbloom_deserialize validates (the
 * bits' checksum only with SBLOOM_OPEN_VERIFY), without copying; read-only unless flags has
 * SBLOOM_OPEN_WRITE. */
SBLOOM_API int sbloom_attach(sbloom_t **out, void *buf, size_t len, unsigned flags);
/* Concurrent mode across processes for a filter in caller memory that several processes write
 * (a shared mapping each made with sbloom_create_in or sbloom_attach with SBLOOM_OPEN_WRITE).
 * sbloom_set_concurrent keeps its locks in the process's own heap: it gives exactly-once between
 * the threads of one process only, and processes sharing an image then report keys new twice.
 * This call keeps the lock table and the live item count in `locks` instead: a region of
 * SBLOOM_SHARED_LOCKS_BYTES (8-byte aligned) in memory every process maps, zeroed once before
 * any process uses it; every process calls this on its own handle before its first add, with
 * the same region. Then the promises of concurrent mode hold across the processes (exactly
 * once, no lost item), and sbloom_items is the image's count plus the live delta; sbloom_sync,
 * called when no process adds, moves the delta into the image's header. A lock held by a
 * process that died is taken over. SBLOOM_E_INVALID for other filters (use sbloom_map with
 * SBLOOM_OPEN_CONCURRENT for files), a region too small or misaligned, or a filter already
 * concurrent; SBLOOM_E_LAYOUT for the counting layout. */
#define SBLOOM_SHARED_LOCKS_BYTES 20480u
SBLOOM_API int sbloom_set_concurrent_shared(sbloom_t *filter, void *locks, size_t len);
/* Writes the header of a filter in caller memory or a read-write mapping (item count, checksum)
 * back into its image, and for a mapping flushes it to the file (msync): the image is then a
 * valid file again. O(bytes). SBLOOM_OK and nothing done for other filters. */
SBLOOM_API int sbloom_sync(sbloom_t *filter);

/* The Parquet layout's bare bitset, as a Parquet column chunk stores it (after its Thrift
 * header): export copies sbloom_bytes() bytes into buf; import makes a Parquet filter from one
 * (len a non-zero multiple of 32). SBLOOM_E_LAYOUT for other layouts. */
SBLOOM_API int sbloom_parquet_export(const sbloom_t *filter, void *buf, size_t cap);
SBLOOM_API int sbloom_parquet_import(sbloom_t **out, const void *bitset, size_t len);

/* Any bit layout's bits as the file's payload stores them (little-endian words, the bytes of
 * sbloom_data() on a little-endian host): export copies sbloom_bytes() bytes into buf
 * (SBLOOM_E_TRUNCATED if cap is smaller); import makes a filter of that layout from len bytes
 * (a non-zero multiple of the block size) with the given item count and plan (planned_items 0
 * and planned_fpp NaN for none). SBLOOM_E_LAYOUT for the counting and scalable layouts. For
 * filters kept elsewhere (simdbloom-redis keeps these bytes in Redis strings). */
SBLOOM_API int sbloom_export_bits(const sbloom_t *filter, void *buf, size_t cap);
SBLOOM_API int sbloom_import_bits(sbloom_t **out, sbloom_layout layout, const void *bits,
                                  size_t len, uint64_t items, uint64_t planned_items,
                                  double planned_fpp);
/* Where a hash lives in a filter of this bit layout and nblocks blocks (1 .. 2^32): the block
 * index, and in mask (cap >= the layout's block bytes) the bits it sets in that block, in the
 * payload's byte order (as sbloom_export_bits writes a block). A filter of that layout and size
 * holds the hash exactly when its block has every bit of the mask. */
SBLOOM_API int sbloom_locate(sbloom_layout layout, uint64_t nblocks, uint64_t hash, uint64_t *block,
                             void *mask, size_t cap);

/* ---- Allow-list of known false positives ------------------------------------------------- */
/* A small exact set of keys the filter wrongly reports present (the classic remedy), for example
 * URLs a fetch proved new. Consulted only for the filter's positives. Saved as its own checksummed
 * file (the filter file format, with its own magic), by convention beside the filter as
 * FILTER.allow. Lookups may run on many threads at once; adds need exclusive access. */
typedef struct sbloom_allowlist sbloom_allowlist_t; /* opaque */

SBLOOM_API int sbloom_allowlist_create(sbloom_allowlist_t **out);
SBLOOM_API void sbloom_allowlist_free(sbloom_allowlist_t *allow); /* NULL is accepted */
/* 1 if added, 0 if it was there already, or a negative error. Any bytes, length 0 allowed. */
SBLOOM_API int sbloom_allowlist_add(sbloom_allowlist_t *allow, const void *key, size_t len);
/* 1 if the key is on the list, 0 if not, or a negative error. */
SBLOOM_API int sbloom_allowlist_contains(const sbloom_allowlist_t *allow, const void *key,
                                         size_t len);
SBLOOM_API uint64_t sbloom_allowlist_count(const sbloom_allowlist_t *allow);
/* How many sbloom_allowlist_contains lookups were made (a statistic for tuning and tests). */
SBLOOM_API uint64_t sbloom_allowlist_lookups(const sbloom_allowlist_t *allow);
/* Crash-safe save (as sbloom_save) and a load that validates before it allocates. */
SBLOOM_API int sbloom_allowlist_save(const sbloom_allowlist_t *allow, const char *path);
SBLOOM_API int sbloom_allowlist_load(sbloom_allowlist_t **out, const char *path);
/* Batch contains through the filter, then the allow-list for its positives only: results[i] = 1
 * when the filter reports key i present and the allow-list does not hold it. allow may be NULL.
 * Returns the count of 1s. */
SBLOOM_API int64_t sbloom_contains_keys_allowing(const sbloom_t *filter,
                                                 const sbloom_allowlist_t *allow,
                                                 const void *const *keys, const size_t *lens,
                                                 size_t n, uint8_t *results);

/* ---- Many threads and processes ----------------------------------------------------------- */
/*
 * By default a filter has one writer: an add may not overlap any other call on the filter.
 *
 * Concurrent mode (sbloom_set_concurrent(f, 1), bit and fingerprint layouts): any number of
 * threads may then
 * call every add, add_if_new and contains function (single keys and batches, every key form) and
 * sbloom_items / sbloom_get_stats / sbloom_estimate on f at once, without a lock of their own.
 *   - Lookups are lock-free: a lookup reads each word of the key's block whole (a relaxed
 *     atomic load, or the ISA's aligned vector load, which reads every aligned 8-byte word whole
 *     on x86-64 and aarch64). An add tests the key first, so a key already present writes
 *     nothing and takes no lock. An absent key is set in a hardware transaction where the CPU
 *     has them (Intel TSX; SIMDBLOOM_NO_RTM=1 turns them off), else under a lock of its block
 *     (striped spin locks), its block written whole. In a filter whose blocks other processes
 *     may write (a file mapping, caller memory: SBLOOM_OPEN_CONCURRENT,
 *     sbloom_set_concurrent_shared) a plain add takes no lock and ORs each bit its key lacks in
 *     with one atomic fetch-or, and a locked test-and-add sets its bits the same way.
 *   - No false negatives: a key whose add returned before a lookup began (ordered as C11 orders
 *     them: the adding thread joined, or a mutex, or any release/acquire pair between them) is
 *     found. A lookup overlapping the add may answer either way.
 *   - Exactly once: among all add_if_new calls (and single-key adds, which report newness) on
 *     one filter, each distinct key is reported new at most once, and exactly once unless it was
 *     a false positive (its bits all set by other keys: then never, as in a serial filter): a
 *     test-and-add that finds its key absent tests it again inside its transaction or under its
 *     lock. In a file mapping or caller memory, plain batch adds (sbloom_add_hashes, _keys,
 *     _u64s) take no lock, and their returned count (and so sbloom_items) may count a key twice
 *     when two of them add it at the same instant.
 *   - sbloom_items never loses an increment (atomic).
 *   - Not concurrent with writers: sbloom_save, serialize, clone, clear, the set operations,
 *     fold and sbloom_set_concurrent itself; call those while no thread adds.
 * The single-threaded path is unchanged when the mode is off (one branch per call); what the mode
 * costs one thread, and what a second thread gains, is measured by bench/threads.c
 * (docs/CONCURRENCY.md).
 * The counting layout refuses the mode (SBLOOM_E_LAYOUT): its counters need one writer.
 * A fingerprint filter (fp512-r*) in concurrent mode: threads of one process may add, add_if_new,
 * remove and look up at once, with the promises above (and a remove, as an add, whole); every
 * write on a key takes its line's lock (an add shifts a line's entries, and a full line sends
 * some to spare lines every line shares: their lock too, when a key may reach them), and a
 * lookup reads without a lock but checks that no writer changed the lines it read meanwhile,
 * else looks again under the locks; add_if_new so looks its keys up first while most are found.
 * An add past the plan that finds no room fails the call with SBLOOM_E_FULL as in one thread.
 * Not across processes (SBLOOM_OPEN_CONCURRENT and sbloom_set_concurrent_shared answer
 * SBLOOM_E_LAYOUT): a process killed in the middle of a shift would leave its line half moved.
 *
 * A windowed filter in concurrent mode: adds, add_if_new, lookups, sbloom_items and sbloom_advance
 * may run from any threads at once. Every add of a key new to the window takes the lock of its
 * lines' stripe (4,096 spin locks over runs of adjacent lines; or, where the CPU has hardware
 * transactions, runs in one that reads that lock); lookups, and add_if_new's of keys held, read
 * without it (a Bloom window's adds only set bits: it reads so where its kernels read words whole,
 * not with the scalar or emulated tables; a fingerprint window's lookups check their reads as the
 * fingerprint filter's do; under ThreadSanitizer both lock), so exactly once and no false negative
 * hold as above, and the window's promise too: sbloom_advance (one thread moves the clock at a
 * time; others wait) clears the reused generation stripe by stripe under the same locks, then
 * publishes the new period. An add racing it goes into the generation current when its batch began
 * or the new one; a lookup racing it sees each word before or after its clear. Only a clock that
 * jumps a whole window at once can clear the generation of an add in flight: that key then counts
 * as added in the new period (held longer, not shorter). Statistics, stages and sbloom_get_window
 * are not concurrent with writers there.
 *
 * Processes: sbloom_map(path, SBLOOM_OPEN_WRITE | SBLOOM_OPEN_CONCURRENT) maps the file shared
 * and read-write in concurrent mode; the test-and-add locks then live in its lock file
 * (sbloom_lock_file: PATH.lock, created when absent, 20 KiB, never removed), so the guarantees
 * above hold across every process mapping the file that way, and the header's item count is the
 * live count they all add to. A lock holds its holder's process ID, and a waiter takes over the
 * lock of a holder that died inside its critical section (that one key may then go unreported).
 * sbloom_sync brings the header up to date; while other processes still add, its checksum goes
 * stale again, so the last process to finish should sync (sbloom_free does). The command line's
 * `dedup --shared` does all of this. A windowed file (periods <= 3) mapped this way keeps its
 * stripe locks and the lock of the process moving the clock in the lock file, and its clock and
 * counts in its own window record, which every process reads and moves.
 */
SBLOOM_API int sbloom_set_concurrent(sbloom_t *filter, int on);
SBLOOM_API int sbloom_is_concurrent(const sbloom_t *filter);
/* The path of a filter file's lock file, into out (cap bytes): beside the file a save of path
 * replaces (symbolic links resolved, so that every link to one filter shares one lock), named
 * FILE.lock, or .sbloom-lock.HASH (16 hex digits of the name's XXH3) when FILE.lock would exceed
 * the file system's 255-byte name limit. Holds the concurrent mode's cross-process locks and the
 * command line's writer lock. SBLOOM_E_TOO_LARGE if cap is short, SBLOOM_E_IO (errno) if a link
 * cannot be read. */
SBLOOM_API int sbloom_lock_file(const char *path, char *out, size_t cap);

/* Parallel batches: every batch call on the filter (add, add_if_new, contains, remove, over
 * hashes, keys or integers) of at least 65,536 keys is spread over `threads` threads (1, the
 * default, runs it in the calling thread; 0 means one per online CPU). Results are identical to
 * the serial call's, byte for byte and in order: each thread takes the keys of one range of
 * blocks, in input order, so a key repeated in the batch is new only at its first occurrence.
 * The threads are created per call and joined before it returns; if they cannot be created the
 * call runs serially. Keys are hashed in parallel too. A fingerprint filter spreads its lookups
 * only: its adds and removes (which may move keys to the spare lines all its lines share), and
 * every call in concurrent mode, run on one thread. */
SBLOOM_API int sbloom_set_threads(sbloom_t *filter, unsigned threads);

/* The prefetch window of the filter's batches: how many keys ahead a batch over a filter of its
 * size requests lines (0: none, as for a filter below 512 KiB, which lives in the caches), with
 * *fitted (may be NULL) set to 1 once the first large batches on a filter of about that size
 * fitted the window to this CPU, 0 while it is the default or the one
 * SIMDBLOOM_PREFETCH_AHEAD(_DRAM) set (docs/KERNELS.md). Speed only: no answer depends on it. 0
 * for NULL. */
SBLOOM_API size_t sbloom_prefetch_window(const sbloom_t *filter, int *fitted);

/* The shard (0 .. nshards-1) a hash belongs to, for pipelines that route keys to per-thread or
 * per-host filters. Do not route by the hash's own bits: every bit of it already chooses the
 * block (the top 32) or the bits in it (the low 32), so routing by, say, the top 3 bits sends
 * each of 8 filters keys of one eighth of its blocks, and a plan for 1e-3 measures 0.87. This
 * takes the multiply-high of a full 64-bit avalanche of the hash, independent of both. */
SBLOOM_API uint32_t sbloom_shard(uint64_t hash, uint32_t nshards);

/* ---- Unknown n: the scalable filter ------------------------------------------------------- */
/* A filter that grows (SBLOOM_LAYOUT_SCALABLE; Almeida et al., "Scalable Bloom Filters", 2007):
 * stage i holds first_items * 2^i keys at rate p / 2^(i+1), and a new stage is added when the
 * newest has taken what it was planned for, so the rate stays below p whatever the number of
 * keys, and memory follows the keys actually added. Every stage is a 512-bit-block filter
 * (block512-k8 or -k16, whichever is smaller for its plan): one cache line per stage per key.
 * Lookups ask every stage; adds (and add_if_new, exactly as for a fixed filter) write the newest
 * stage, and only keys no stage holds yet. sbloom_items counts keys stored, sbloom_planned_items
 * the room of the stages so far, sbloom_bytes their memory. Saved, loaded, serialized, cloned
 * and united (stage by stage) like other filters; not mapped or attached in place
 * (SBLOOM_E_LAYOUT), not concurrent, not folded, no removal. sbloom_create_for_layout with
 * SBLOOM_LAYOUT_SCALABLE is this call with first_items = n.
 * sbloom_create_opts with SBLOOM_OPTS_ANY_FAMILY and no `expected` makes the same filter with
 * each stage the smallest of every family for its plan: a fingerprint layout at 1e-3 and below
 * (about two thirds of the Bloom stages' memory at 1e-6). A fingerprint stage that finds a
 * key's line and spare full before its plan takes no more keys: a new stage takes that key. Its
 * keys are removed (sbloom_remove: from the newest stage that holds the key) while every stage
 * is a fingerprint layout (else SBLOOM_E_LAYOUT); it is not united (SBLOOM_E_LAYOUT), and its
 * file is format version 2. */
SBLOOM_API int sbloom_create_scalable(sbloom_t **out, uint64_t first_items, double p);
/* The number of stages of a scalable filter, generations of a windowed one (1 for every other
 * filter, 0 for NULL). */
SBLOOM_API uint32_t sbloom_stages(const sbloom_t *filter);
/* Stage i of a scalable filter (generation i of a windowed one), oldest first, for introspection
 * (layout, bytes, items, plan):
 * a read-only view whose count is the stage's at this call. For any other filter, stage 0 is the
 * filter itself. NULL past the last. Owned by the filter: valid until it is cleared or freed. */
SBLOOM_API const sbloom_t *sbloom_stage(const sbloom_t *filter, uint32_t i);

/* ---- Windowed filters: "seen in the last W?" -------------------------------------------------
 *
 * A windowed filter forgets. Time is the caller's, in any unit (seconds, say), and moves only by
 * sbloom_advance: the window is `periods` periods of `period` units, periods begin at multiples of
 * `period` (so filters and processes that share a clock agree on them), and the filter keeps a
 * ring of periods + 1 generations, each planned for n / periods keys at rate p / (periods + 1).
 * A key goes into the current period's generation, unless one of the live generations already
 * holds it (a key is new once per window, not on each sighting).
 *
 * The promise (tests/test_window.c): a key added at time t is reported present at every time
 * before t + W, W = periods * period (no false negative inside the window); from t + W + period
 * on, it is reported present only at the false-positive rate; with at most n distinct keys added
 * per window the rate is at most p. sbloom_advance to a time past the current period clears the
 * generations that fell out of the window (one pass over the memory a period; nothing is hashed
 * again, nothing swept key by key).
 *
 * A key's bits in every generation lie together, tested in one pass: with G <= 3 at rates where it
 * takes little more memory (about 1% to 0.1%), in one 64-byte line whose 4-bit slots each hold a
 * bit per generation (a lookup reads one line, as a plain filter's does); otherwise in G + 1
 * adjacent lines, one per generation (read together, prefetched together). docs/SIZING.md gives
 * the memory of each.
 *
 * Every batch form, sbloom_items (keys in the live generations), stats and estimate, save, load
 * and serialize (the file keeps the generations and when each began), clone, clear and union (of
 * two with the same plan at the same period) work; sbloom_stages / sbloom_stage give the
 * generations, oldest first (each view a copy of its generation at the call: a filter of the
 * counting layout with slots, block512-k8/k16 with lines). Concurrent mode (sbloom_set_concurrent)
 * lets many threads add, look up and advance at once (below). Mapped in place (sbloom_map, also
 * concurrent across processes) when periods <= 3; never folded or removed from.
 * sbloom_create_for_layout(&f, n, p, SBLOOM_LAYOUT_WINDOWED) is a window of 1 period of 1 unit at
 * time 0. */
#define SBLOOM_WINDOW_MAX_PERIODS 15
SBLOOM_API int sbloom_create_windowed(sbloom_t **out, uint64_t n, double p, uint32_t periods,
                                      uint64_t period, uint64_t now);
/* A windowed filter for a count nobody knows in advance: it grows as the scalable filter does.
 * It begins planned for first_n keys a window at rate p / 2; whenever a period brings more keys
 * than its plan's share (first_n / periods), a window twice as large at half the rate takes the
 * keys from then on, and the one before only answers lookups until its last keys leave the window
 * (then it is freed): the rates of all of them add up to less than p, the promise above holds,
 * and a steady stream ends in one window of the size it needs. One writer at a time: no
 * concurrent mode (SBLOOM_E_LAYOUT), no file mapping (loaded instead); a union of two that grew
 * alike (the same windows, at the same period). sbloom_planned_items: the newest window's keys;
 * sbloom_stages: every window's generations, oldest window first (a view of an older window's
 * generation lasts until sbloom_advance frees that window). */
SBLOOM_API int sbloom_create_windowed_scalable(sbloom_t **out, uint64_t first_n, double p,
                                               uint32_t periods, uint64_t period, uint64_t now);
/* Moves the filter's clock to `now` (a time before the current period changes nothing):
 * SBLOOM_OK, or SBLOOM_E_LAYOUT for a filter that is not windowed. A clock that goes back leaves
 * the window where it was: nothing is forgotten until the clock reaches it again (compare `now`
 * with sbloom_get_window's to see it; sbloom_rewind moves the window back). */
SBLOOM_API int sbloom_advance(sbloom_t *filter, uint64_t now);
/* The repair of a window whose clock is ahead of `now` (a clock that was once set ahead, or has
 * been set back since): the window moves back to `now`, and every key it holds becomes a key of
 * the current period, held a whole window from now (longer than its own, never shorter). A window
 * not ahead of now is left as it is. SBLOOM_OK; SBLOOM_E_LAYOUT for a filter that is not
 * windowed, SBLOOM_E_READONLY, SBLOOM_E_INVALID in concurrent mode (one writer repairs). */
SBLOOM_API int sbloom_rewind(sbloom_t *filter, uint64_t now);

typedef struct sbloom_window {
    size_t size;          /* set by the caller: sizeof(sbloom_window) (sbloom_window_init()) */
    uint32_t periods;     /* the window is this many periods */
    uint32_t generations; /* periods + 1 */
    uint64_t period;      /* in the caller's time unit */
    uint64_t now;         /* the start of the current period */
    /* per generation, oldest first: when it began (UINT64_MAX: not yet in use) and its keys */
    uint64_t generation_start[SBLOOM_WINDOW_MAX_PERIODS + 1];
    uint64_t generation_items[SBLOOM_WINDOW_MAX_PERIODS + 1];
} sbloom_window;

static inline sbloom_window sbloom_window_init(void)
{
    sbloom_window window;
    memset(&window, 0, sizeof window);
    window.size = sizeof window;
    return window;
}

/* The window of a windowed filter (out->size must be set): SBLOOM_E_LAYOUT for another. */
SBLOOM_API int sbloom_get_window(const sbloom_t *filter, sbloom_window *out);

/* ---- Set operations ---------------------------------------------------------------------- */

/* dst |= src (the union: holds every key of both) and dst &= src (holds at least the common
 * keys, with a false-positive rate no better than the union's). Filters must have the same layout
 * and size: SBLOOM_E_INCOMPATIBLE otherwise. The item count of a union is re-estimated from the
 * fill. The set operations and sbloom_fold take bit layouts only (SBLOOM_E_LAYOUT for counting
 * filters). Two scalable filters unite stage by stage when they grew alike (same first stage,
 * rate and number of stages), else SBLOOM_E_INCOMPATIBLE; they neither intersect nor fold. */
SBLOOM_API int sbloom_union(sbloom_t *dst, const sbloom_t *src);
SBLOOM_API int sbloom_intersect(sbloom_t *dst, const sbloom_t *src);
/* Divides the block count by `factor` (which must divide it) by OR-ing each run of `factor`
 * consecutive blocks into one: a filter sized for a larger n shrinks once the real n is known,
 * and every key still answers present. Exact for every layout here, because the block index is a
 * multiply-high: floor(floor(h * B / 2^32) / f) == floor(h * (B / f) / 2^32). Folding by 2 ORs
 * blocks 2i and 2i+1 into block i. The result keeps the planned rate, and its planned items
 * become the most it holds at that rate. SBLOOM_E_FACTOR if factor is 0 or does not divide the
 * block count: sbloom_fold_factors lists those that do. Plans (sbloom_plan_for, sbloom_create)
 * round the block count up to a multiple of 8, so filters made from a plan always fold by 2, 4
 * and 8 (at most 448 bytes more than the fewest blocks that meet the rate). */
SBLOOM_API int sbloom_fold(sbloom_t **out, const sbloom_t *filter, uint64_t factor);
/* The factors from 2 to 64 that sbloom_fold takes for this filter, ascending: up to cap go to
 * factors (which may be NULL); returns how many there are (0 for the counting and scalable
 * layouts, which do not fold). */
SBLOOM_API size_t sbloom_fold_factors(const sbloom_t *filter, uint64_t *factors, size_t cap);

/* ---- Introspection ------------------------------------------------------------------------ */

SBLOOM_API sbloom_layout sbloom_get_layout(const sbloom_t *filter); /* 0 for NULL */
SBLOOM_API uint64_t sbloom_bytes(const sbloom_t *filter);           /* 0 for NULL */
SBLOOM_API uint32_t sbloom_k(const sbloom_t *filter);               /* 0 for NULL */
/* The filter's bit array, sbloom_bytes() long, read-only, as host-order words (32-bit, or 64-bit
 * for block512-k8 and counting512): on little-endian hosts the same bytes as the file's payload
 * and, for Parquet, as a column chunk's bitset (sbloom_parquet_export gives those bytes on any
 * host). NULL for NULL.
 */
SBLOOM_API const void *sbloom_data(const sbloom_t *filter);
/* Bit layouts: keys whose insertion changed the filter (distinct keys added, less false
 * positives). Counting layout: adds less removes. */
SBLOOM_API uint64_t sbloom_items(const sbloom_t *filter);
/* bytes * 8 / n (NaN for NULL or n = 0). */
SBLOOM_API double sbloom_bits_per_key(const sbloom_t *filter, uint64_t n);
/* 1 for a filter that grows as keys come (sbloom_create_scalable's, and a windowed one made by
 * sbloom_create_windowed_scalable), 0 for one of a fixed size (and NULL). */
SBLOOM_API int sbloom_is_growing(const sbloom_t *filter);
/* Plan the filter was created from (n and p), or 0 / NaN for sbloom_create_bytes filters (a
 * growing windowed filter: the keys a window of its newest window). */
SBLOOM_API uint64_t sbloom_planned_items(const sbloom_t *filter);
SBLOOM_API double sbloom_planned_fpp(const sbloom_t *filter);

typedef struct sbloom_stats {
    size_t size;            /* set by the caller: sizeof(sbloom_stats) (sbloom_stats_init()) */
    double fill;            /* fraction of bits set (counting layout: of counters non-zero) */
    double estimated_fpp;   /* false-positive rate for a random key now, from the block fills */
    double estimated_items; /* distinct items inferred from the fill */
} sbloom_stats;

static inline sbloom_stats sbloom_stats_init(void)
{
    sbloom_stats stats;
    memset(&stats, 0, sizeof stats);
    stats.size = sizeof stats;
    return stats;
}

/* The same as an exported call (foreign-function interfaces): *stats as sbloom_stats_init()
 * makes it. */
SBLOOM_API void sbloom_stats_reset(sbloom_stats *stats);

/* Scans the whole filter (O(bytes)) and fills *out (out->size must be set). */
SBLOOM_API int sbloom_get_stats(const sbloom_t *filter, sbloom_stats *out);
/* The same from an evenly spaced sample of at most 4,096 blocks (all of a smaller filter): a few
 * microseconds whatever the size, for overload checks while keys stream in. The fill's relative
 * error is about 1/sqrt(32768 x fill) on a 512-bit layout (under 1% at fill 0.5); the rate is as
 * good where it matters (an overloaded filter), coarse for rates far below 1/4096. Unlike
 * sbloom_items (keys whose add changed the filter, which stops growing once the filter is full
 * and every key looks present), estimated_items counts distinct keys from the fill; it is
 * INFINITY when every sampled bit is set (the fill no longer tells how many: far more than
 * planned), and estimated_fpp is then 1. */
SBLOOM_API int sbloom_estimate(const sbloom_t *filter, sbloom_stats *out);

/* How often a fingerprint filter's operations read a second line, from its contents (a scan of
 * every line, O(bytes)): *absent_lookups, the share of lookups of absent keys that reach a spare
 * line (their quotient at or above their line's mark); *spare_keys, the share of its keys held in
 * spare lines (each such key's insert wrote two lines, and its lookups read two). Both 0 for a
 * filter of one line a key (the Bloom layouts). A filter of fingerprint stages (or a window of
 * them, SBLOOM_OPTS_ANY_FAMILY) answers over all of them: the share of absent keys whose lookup
 * reads a spare line in any stage (each stage's taken as independent), and of all its keys.
 * SBLOOM_E_NULL for a NULL argument. */
SBLOOM_API int sbloom_second_line_shares(const sbloom_t *filter, double *absent_lookups,
                                         double *spare_keys);

/* ---- Instruction sets --------------------------------------------------------------------- */

/* Name of the instruction set new filters use: "scalar", "avx2", "avx512", "avx512vbmi2" (AVX-512
 * with VBMI and VBMI2) or "neon". It is picked once from the CPU, or from the environment variable
 * SIMDBLOOM_ISA when set. */
SBLOOM_API const char *sbloom_isa(void);
/* Forces the instruction set for filters created afterwards (NULL or "auto" returns to the
 * CPU's best). SBLOOM_E_ISA if unknown or unsupported by this CPU/build. Call it before other
 * threads create filters: a concurrent first use may pick the CPU's best instead. */
SBLOOM_API int sbloom_set_isa(const char *name);
/* Writes up to cap names of the instruction sets usable here (best last: the one picked when none
 * is forced); returns the count. Builds made for testing also list tables emulated through SIMDe
 * ("neon" on x86, "avx2-simde", "avx512-simde"), first; they are never picked automatically. */
SBLOOM_API size_t sbloom_isa_list(const char **names, size_t cap);
/* The instruction set a filter runs on. */
SBLOOM_API const char *sbloom_filter_isa(const sbloom_t *filter);

/* The salts of the bit layouts (docs/FORMAT.md), defined once: the inline calls below and every
 * kernel table (simd/kernels.h) take them from here. Parquet's eight (its format's "Split Block
 * Bloom Filters"), then SHA-256's eight initial hash words with the low bit set, so each is odd.
 * Part of the file format: never change them. */
#define SBLOOM_SALT0_ 0x47b6137bU
#define SBLOOM_SALT1_ 0x44974d91U
#define SBLOOM_SALT2_ 0x8824ad5bU
#define SBLOOM_SALT3_ 0xa2b7289dU
#define SBLOOM_SALT4_ 0x705495c7U
#define SBLOOM_SALT5_ 0x2df1424bU
#define SBLOOM_SALT6_ 0x9efc4947U
#define SBLOOM_SALT7_ 0x5c6bfb31U
#define SBLOOM_SALT8_ 0x6a09e667U
#define SBLOOM_SALT9_ 0xbb67ae85U
#define SBLOOM_SALT10_ 0x3c6ef373U
#define SBLOOM_SALT11_ 0xa54ff53bU
#define SBLOOM_SALT12_ 0x510e527fU
#define SBLOOM_SALT13_ 0x9b05688dU
#define SBLOOM_SALT14_ 0x1f83d9abU
#define SBLOOM_SALT15_ 0x5be0cd19U

/* ---- Single keys, inline ------------------------------------------------------------------ */
/*
 * Where the caller's code is compiled with AVX2 (-mavx2, -march=x86-64-v3, -march=native on
 * such a CPU), sbloom_add_hash and sbloom_contains_hash are also written out below, so that a
 * loop of single-key calls compiles to the block probe itself, without a call into the library.
 * That is how the fastest filters work (Boost.Bloom, libfilter), and it lets the processor
 * overlap the cache misses of successive keys. The inline add covers the bit layouts (Parquet,
 * block512-k8, block512-k16), the inline lookup Parquet and block512-k8 (docs/API.md says why),
 * of a filter that is not read-only, concurrent or scalable and whose table was not forced to
 * the scalar reference or an emulation (SIMDBLOOM_ISA, sbloom_set_isa): the library marks such
 * filters in their first members, struct sbloom_inline_view, and every other filter takes the
 * library's call. Answers, filter bytes and item counts are the library's, bit for bit. Without
 * AVX2 the calls go to the library, which picks its kernel at run time: plain C here measured
 * slower than that call.
 *
 * Define SIMDBLOOM_NO_INLINE before including this header to always call the library. The
 * functions stay exported: a function pointer, or the name in parentheses,
 * (sbloom_add_hash)(f, h), reaches them.
 */

/* The first members of every filter (part of the ABI): what the inline calls read. Callers must
 * not write them. */
typedef struct sbloom_inline_view {
    void *blocks;             /* the blocks, 64-byte aligned */
    uint64_t bytes;           /* their size */
    uint64_t nblocks;         /* their number, at most 2^32 */
    uint64_t items;           /* sbloom_items */
    uint32_t inline_contains; /* the layout an inline lookup may probe, or 0: call the library */
    uint32_t inline_add;      /* the layout an inline add may write, or 0: call the library */
} sbloom_inline_view;

/* What the inline lookup reads for a NULL filter: no layout, so the library's call answers
 * (SBLOOM_E_NULL). It lives in the library, so that a compiler cannot fold the NULL test back
 * into a branch around the view's loads. */
SBLOOM_API extern const sbloom_inline_view sbloom_inline_null_view;

/* The inline calls themselves, AVX2 code: simdbloom_inline.h (installed beside this header, and
 * included only from here). */
#if defined(__AVX2__) && !defined(SIMDBLOOM_NO_INLINE)
#include "simdbloom_inline.h"
#endif

#ifdef __cplusplus
}
#endif

#endif /* SIMDBLOOM_H */
