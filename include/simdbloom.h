/*
 * simdbloom: a blocked Bloom filter for "have I seen this key before?".
 *
 * Every key touches exactly one 64-byte cache line (one 32- or 64-byte block), so a lookup
 * costs at most one cache miss. Kernels are chosen at run time from what the CPU has.
 *
 * Conventions of this header:
 *   - Every function that can fail returns a negative SBLOOM_E_* code; sbloom_strerror() names it.
 *   - No function aborts on bad input; NULL pointers are reported as SBLOOM_E_NULL.
 *   - A filter may be read (contains) from many threads at once; any write (add, clear) needs
 *     the caller's exclusive access.
 *   - There is no global state to initialise. The instruction set is picked on first use.
 */
#ifndef SIMDBLOOM_H
#define SIMDBLOOM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIMDBLOOM_VERSION_MAJOR 0
#define SIMDBLOOM_VERSION_MINOR 1
#define SIMDBLOOM_VERSION_PATCH 0
#define SIMDBLOOM_VERSION_STRING "0.1.0"

/* ---- Errors ------------------------------------------------------------------------------- */

enum {
    SBLOOM_OK = 0,
    SBLOOM_E_NULL = -1,       /* a required pointer argument was NULL */
    SBLOOM_E_INVALID = -2,    /* an argument is out of its domain (n = 0, p not in (0,1), NaN) */
    SBLOOM_E_NOMEM = -3,      /* memory allocation failed */
    SBLOOM_E_TOO_LARGE = -4,  /* the size overflows or exceeds SBLOOM_MAX_BYTES */
    SBLOOM_E_LAYOUT = -5,     /* unknown layout */
    SBLOOM_E_ISA = -6,        /* unknown instruction set, or the CPU lacks it */
    SBLOOM_E_IO = -7,         /* a file operation failed (errno tells which) */
    SBLOOM_E_FORMAT = -8,     /* not a simdbloom filter (bad magic) */
    SBLOOM_E_VERSION = -9,    /* a format version or hash function this build does not know */
    SBLOOM_E_CORRUPT = -10,   /* a checksum does not match: the header or the bits were damaged */
    SBLOOM_E_TRUNCATED = -11, /* shorter (or longer) than its header says */
    SBLOOM_E_INCOMPATIBLE = -12, /* filters differ in layout or size: cannot be combined */
    SBLOOM_E_READONLY = -13,     /* the filter is a read-only mapping of a file */
    SBLOOM_E_KIND = -14,         /* the file holds the other kind of filter (counting vs plain) */
    SBLOOM_E_ABSENT = -15, /* remove refused: a counter of the key is zero, so it was never added */
};

/* A short, static, human-readable description of an error code (never NULL). */
const char *sbloom_strerror(int code);

/* ---- Layouts ------------------------------------------------------------------------------ */

typedef enum sbloom_layout {
    /* Apache Parquet split block: 256-bit blocks of 8 x 32-bit words, one bit per word (k = 8),
     * strings hashed with XXH64 seed 0. Bit-exact with the Parquet format specification. */
    SBLOOM_LAYOUT_PARQUET = 1,
    /* 512-bit cache-line blocks of 8 x 64-bit words, one bit per word (k = 8), XXH3-64. */
    SBLOOM_LAYOUT_BLOCK512_K8 = 2,
    /* 512-bit cache-line blocks of 16 x 32-bit words, one bit per word (k = 16), XXH3-64. */
    SBLOOM_LAYOUT_BLOCK512_K16 = 3,
    /* The counting filter's layout (sbloom_counting_*, never an sbloom_t): 512-bit blocks of
     * 8 x 64-bit words, each word sixteen 4-bit counters; a key counts in one counter per word
     * (k = 8), XXH3-64. The plain-filter functions refuse it with SBLOOM_E_LAYOUT. */
    SBLOOM_LAYOUT_COUNTING512 = 4,
} sbloom_layout;

/* Layouts of plain (bit) filters: 1 .. SBLOOM_LAYOUT_COUNT. */
#define SBLOOM_LAYOUT_COUNT 3

/* Largest filter this build creates: 2^32 blocks of the layout's size would be the limit of the
 * 32-bit multiply-high block index; 64 GiB is the supported ceiling. */
#define SBLOOM_MAX_BYTES (UINT64_C(64) << 30)

/* "parquet", "block512-k8", "block512-k16", "counting512"; NULL for an unknown layout. The
 * functions below answer for the counting layout too. */
const char *sbloom_layout_name(sbloom_layout layout);
/* The layout with that name, or SBLOOM_E_LAYOUT. */
int sbloom_layout_from_name(const char *name);
/* Bytes per block (32 or 64), or 0 for an unknown layout. */
uint32_t sbloom_layout_block_bytes(sbloom_layout layout);
/* Bits set per key (8 or 16), or 0 for an unknown layout. */
uint32_t sbloom_layout_k(sbloom_layout layout);

/* ---- Sizing ------------------------------------------------------------------------------- */

typedef struct sbloom_plan {
    sbloom_layout layout;
    uint64_t bytes;      /* filter size, a whole number of blocks */
    uint32_t k;          /* bits set per key */
    double bits_per_key; /* bytes * 8 / n */
    double fpp;          /* expected false-positive rate at n items (exact blocked formula) */
} sbloom_plan;

/* The smallest filter over all layouts whose expected false-positive rate at n distinct items
 * is at most p. Ties go to the layout that sets fewer bits. */
int sbloom_plan_for(uint64_t n, double p, sbloom_plan *out);
/* The same, for one given layout. */
int sbloom_plan_for_layout(uint64_t n, double p, sbloom_layout layout, sbloom_plan *out);

/* Expected false-positive rate of a blocked filter of `bytes` bytes holding n distinct items:
 * sum over the Poisson-distributed number L of keys in the probed block of that block's
 * false-positive rate, which for a layout of W words of w bits, one bit per word, is
 * (1 - (1 - 1/w)^L)^W (w = 16 counters for the counting layout). Returns NaN for an unknown
 * layout or bytes below one block. */
double sbloom_blocked_fpp(sbloom_layout layout, uint64_t bytes, uint64_t n);

/* The classic (unblocked) Bloom filter: rate (1 - e^(-k/bits_per_key))^k for k hash functions
 * and bits_per_key = m/n bits per item. NaN for non-positive or non-finite arguments. */
double sbloom_classic_fpp(double bits_per_key, double k);
/* The integer k >= 1 that minimises sbloom_classic_fpp at bits_per_key (0 on bad input). */
uint32_t sbloom_classic_best_k(double bits_per_key);
/* Bits per item a classic filter with its best integer k needs for rate p (NaN on bad input). */
double sbloom_classic_bits_per_key(double p);

/* ---- Lifecycle ---------------------------------------------------------------------------- */

typedef struct sbloom sbloom_t; /* opaque */

/* A filter planned by sbloom_plan_for(n, p). *out is set to NULL on failure. */
int sbloom_create(sbloom_t **out, uint64_t n, double p);
/* The same with the layout chosen by the caller (sbloom_plan_for_layout). */
int sbloom_create_for_layout(sbloom_t **out, uint64_t n, double p, sbloom_layout layout);
/* A filter of a given layout and size; bytes is rounded up to a whole number of blocks. */
int sbloom_create_bytes(sbloom_t **out, uint64_t bytes, sbloom_layout layout);
/* A copy of a filter (bits, counters, plan), running on the instruction set new filters use now:
 * a snapshot, or the same contents on another ISA after sbloom_set_isa(). */
int sbloom_clone(sbloom_t **out, const sbloom_t *filter);
/* Frees the filter; NULL is accepted. */
void sbloom_free(sbloom_t *filter);
/* Clears every bit and the item counter. */
int sbloom_clear(sbloom_t *filter);

/* ---- Single keys -------------------------------------------------------------------------- */

/* The 64-bit hash this filter's layout gives a byte string (XXH64 seed 0 for Parquet, XXH3-64
 * otherwise). Keys may hold any bytes; len 0 is a valid key (key may then be NULL). */
uint64_t sbloom_hash(const sbloom_t *filter, const void *key, size_t len);

/* Adds a key. Returns 1 if the key was new to the filter (a bit changed), 0 if it was already
 * present (or a false positive), or a negative error. */
int sbloom_add(sbloom_t *filter, const void *key, size_t len);
/* 1 if the key may have been added, 0 if it certainly was not, or a negative error. */
int sbloom_contains(const sbloom_t *filter, const void *key, size_t len);
/* The same for a caller-supplied 64-bit hash. Hashes must be well mixed (as from XXH3). */
int sbloom_add_hash(sbloom_t *filter, uint64_t hash);
int sbloom_contains_hash(const sbloom_t *filter, uint64_t hash);

/* ---- Batches ------------------------------------------------------------------------------ */
/* Each returns a count (>= 0) or a negative error. `results`, where taken, receives one byte per
 * key (1 = present / new, 0 = not) and may be NULL when only the count is wanted. Batches are
 * processed in chunks whose cache lines are prefetched ahead of use. */

/* Adds n hashes; returns how many were new to the filter. */
int64_t sbloom_add_hashes(sbloom_t *filter, const uint64_t *hashes, size_t n);
/* Tests n hashes; returns how many were present. */
int64_t sbloom_contains_hashes(const sbloom_t *filter, const uint64_t *hashes, size_t n,
                               uint8_t *results);
/* Fused test-and-add: sets every key and reports which were absent before; a key repeated
 * later in the same batch counts as already seen. Returns how many were new. */
int64_t sbloom_add_if_new_hashes(sbloom_t *filter, const uint64_t *hashes, size_t n,
                                 uint8_t *is_new);

/* The same over byte-string keys: keys[i] points to lens[i] bytes (NULL allowed if 0). */
int64_t sbloom_add_keys(sbloom_t *filter, const void *const *keys, const size_t *lens, size_t n);
int64_t sbloom_contains_keys(const sbloom_t *filter, const void *const *keys, const size_t *lens,
                             size_t n, uint8_t *results);
int64_t sbloom_add_if_new_keys(sbloom_t *filter, const void *const *keys, const size_t *lens,
                               size_t n, uint8_t *is_new);

/* ---- Files and buffers (docs/FORMAT.md) ---------------------------------------------------- */
/* A filter file is a 128-byte little-endian header (magic, version, layout, hash, sizes, counts,
 * plan, payload and header checksums) followed by the bits at a 64-byte-aligned offset. Readers
 * validate everything (sizes against the input, both checksums) before they allocate. */

/* Bytes sbloom_serialize writes for this filter (0 for NULL). */
uint64_t sbloom_serialized_size(const sbloom_t *filter);
/* Writes the file image into buf (cap bytes); returns SBLOOM_OK or SBLOOM_E_TRUNCATED if cap is
 * too small. */
int sbloom_serialize(const sbloom_t *filter, void *buf, size_t cap);
/* A filter from a file image of len bytes. */
int sbloom_deserialize(sbloom_t **out, const void *buf, size_t len);
/* Crash-safe save: a temporary file in the same directory, written, fsynced, renamed over path,
 * and the directory fsynced. On any error the old file at path is left as it was. */
int sbloom_save(const sbloom_t *filter, const char *path);
/* Reads and validates a file into memory. */
int sbloom_load(sbloom_t **out, const char *path);
/* Maps a file read-only, zero copy (for read-mostly services): the header is validated; the bits'
 * checksum only if verify is non-zero (it reads the whole file). Adds return SBLOOM_E_READONLY.
 * On a big-endian host the file is loaded (swapped, always verified) instead, still read-only. */
int sbloom_map(sbloom_t **out, const char *path, int verify);
/* 1 if the filter is a read-only mapping. */
int sbloom_is_readonly(const sbloom_t *filter);

/* The Parquet layout's bare bitset, as a Parquet column chunk stores it (after its Thrift
 * header): export copies sbloom_bytes() bytes into buf; import makes a Parquet filter from one
 * (len a non-zero multiple of 32). SBLOOM_E_LAYOUT for other layouts. */
int sbloom_parquet_export(const sbloom_t *filter, void *buf, size_t cap);
int sbloom_parquet_import(sbloom_t **out, const void *bitset, size_t len);

/* ---- Allow-list of known false positives ------------------------------------------------- */
/* A small exact set of keys the filter wrongly reports present (seed 000's remedy), for example
 * URLs a fetch proved new. Consulted only for the filter's positives. Saved as its own checksummed
 * file (docs/FORMAT.md), by convention beside the filter as FILTER.allow. Lookups may run on many
 * threads at once; adds need exclusive access. */
typedef struct sbloom_allowlist sbloom_allowlist_t; /* opaque */

int sbloom_allowlist_create(sbloom_allowlist_t **out);
void sbloom_allowlist_free(sbloom_allowlist_t *allow); /* NULL is accepted */
/* 1 if added, 0 if it was there already, or a negative error. Any bytes, length 0 allowed. */
int sbloom_allowlist_add(sbloom_allowlist_t *allow, const void *key, size_t len);
/* 1 if the key is on the list, 0 if not, or a negative error. */
int sbloom_allowlist_contains(const sbloom_allowlist_t *allow, const void *key, size_t len);
uint64_t sbloom_allowlist_count(const sbloom_allowlist_t *allow);
/* How many sbloom_allowlist_contains lookups were made (a statistic for tuning and tests). */
uint64_t sbloom_allowlist_lookups(const sbloom_allowlist_t *allow);
/* Crash-safe save (as sbloom_save) and a load that validates before it allocates. */
int sbloom_allowlist_save(const sbloom_allowlist_t *allow, const char *path);
int sbloom_allowlist_load(sbloom_allowlist_t **out, const char *path);
/* Batch contains through the filter, then the allow-list for its positives only: results[i] = 1
 * when the filter reports key i present and the allow-list does not hold it. allow may be NULL.
 * Returns the count of 1s. */
int64_t sbloom_contains_keys_allowing(const sbloom_t *filter, const sbloom_allowlist_t *allow,
                                      const void *const *keys, const size_t *lens, size_t n,
                                      uint8_t *results);

/* ---- Counting filter (deletions) --------------------------------------------------------- */
/*
 * Seed 004's answer to "how do I delete?", kept to one cache line per key: a 64-byte block holds
 * 8 words of sixteen 4-bit counters, and a key counts in one counter of each word (docs/SIZING.md
 * and docs/KERNELS.md). It costs 4 times the memory of a plain filter of the same geometry; use it
 * only when keys must be removed.
 *
 * - Add increments the key's 8 counters. A counter at 15 is saturated: it stays at 15, and remove
 *   never decrements it, so a saturated counter can cause false positives but never a false
 *   negative. sbloom_counting_saturated() counts them (zero in a filter used within its plan).
 * - Remove decrements the key's counters, and refuses with SBLOOM_E_ABSENT, changing nothing, when
 *   any of them is zero: such a key was certainly never added. Removing a key that was never added
 *   but answers present (a false positive) cannot be detected: it takes counts from other keys and
 *   can make them answer absent. Remove only keys you added.
 * - Adding a key twice needs two removes to take it out (counts, not sets).
 * - Reads may run on many threads at once; add, remove and clear need exclusive access.
 */
typedef struct sbloom_counting sbloom_counting_t; /* opaque */

/* The smallest counting filter whose rate at n items is at most p (layout
 * SBLOOM_LAYOUT_COUNTING512; bits_per_key counts the 4 bits of every counter). */
int sbloom_counting_plan(uint64_t n, double p, sbloom_plan *out);
int sbloom_counting_create(sbloom_counting_t **out, uint64_t n, double p);
/* bytes rounded up to whole 64-byte blocks. */
int sbloom_counting_create_bytes(sbloom_counting_t **out, uint64_t bytes);
void sbloom_counting_free(sbloom_counting_t *filter); /* NULL is accepted */
int sbloom_counting_clear(sbloom_counting_t *filter);

/* XXH3-64 of the key, the hash the _hash and _hashes forms take. */
uint64_t sbloom_counting_hash(const sbloom_counting_t *filter, const void *key, size_t len);
/* Add: 1 if the key was absent before, 0 if it was present (its counts still grow), or an error.
 * Remove: 1 if removed, SBLOOM_E_ABSENT if refused. Contains: 1 or 0, or an error. */
int sbloom_counting_add(sbloom_counting_t *filter, const void *key, size_t len);
int sbloom_counting_remove(sbloom_counting_t *filter, const void *key, size_t len);
int sbloom_counting_contains(const sbloom_counting_t *filter, const void *key, size_t len);
int sbloom_counting_add_hash(sbloom_counting_t *filter, uint64_t hash);
int sbloom_counting_remove_hash(sbloom_counting_t *filter, uint64_t hash);
int sbloom_counting_contains_hash(const sbloom_counting_t *filter, uint64_t hash);

/* Batches, in order (a key removed later in a batch sees the earlier adds). results may be NULL:
 * add marks keys that were absent before and returns their count; remove marks the keys it
 * removed and returns their count (refused keys are 0 and change nothing; the batch goes on);
 * contains marks present keys and returns their count. */
int64_t sbloom_counting_add_hashes(sbloom_counting_t *filter, const uint64_t *hashes, size_t n,
                                   uint8_t *was_absent);
int64_t sbloom_counting_remove_hashes(sbloom_counting_t *filter, const uint64_t *hashes, size_t n,
                                      uint8_t *removed);
int64_t sbloom_counting_contains_hashes(const sbloom_counting_t *filter, const uint64_t *hashes,
                                        size_t n, uint8_t *results);
int64_t sbloom_counting_add_keys(sbloom_counting_t *filter, const void *const *keys,
                                 const size_t *lens, size_t n, uint8_t *was_absent);
int64_t sbloom_counting_remove_keys(sbloom_counting_t *filter, const void *const *keys,
                                    const size_t *lens, size_t n, uint8_t *removed);
int64_t sbloom_counting_contains_keys(const sbloom_counting_t *filter, const void *const *keys,
                                      const size_t *lens, size_t n, uint8_t *results);

/* Adds less removes; the plan (0 / NaN when created by size); size; instruction set. */
uint64_t sbloom_counting_items(const sbloom_counting_t *filter);
uint64_t sbloom_counting_planned_items(const sbloom_counting_t *filter);
double sbloom_counting_planned_fpp(const sbloom_counting_t *filter);
uint64_t sbloom_counting_bytes(const sbloom_counting_t *filter);
const char *sbloom_counting_isa(const sbloom_counting_t *filter);
/* Counters stuck at 15 (scans the filter, O(bytes)); 0 for NULL. */
uint64_t sbloom_counting_saturated(const sbloom_counting_t *filter);
/* The counter array, sbloom_counting_bytes() long, as host-order 64-bit words. */
const void *sbloom_counting_data(const sbloom_counting_t *filter);

/* Files and buffers in the filter format (docs/FORMAT.md, layout 4). Loading a counting file
 * with sbloom_load, or a plain file here, gives SBLOOM_E_KIND. */
uint64_t sbloom_counting_serialized_size(const sbloom_counting_t *filter);
int sbloom_counting_serialize(const sbloom_counting_t *filter, void *buf, size_t cap);
int sbloom_counting_deserialize(sbloom_counting_t **out, const void *buf, size_t len);
int sbloom_counting_save(const sbloom_counting_t *filter, const char *path);
int sbloom_counting_load(sbloom_counting_t **out, const char *path);

/* ---- Set operations ---------------------------------------------------------------------- */

/* dst |= src (the union: holds every key of both) and dst &= src (holds at least the common
 * keys, with a false-positive rate no better than the union's). Filters must have the same layout
 * and size: SBLOOM_E_INCOMPATIBLE otherwise. The item count of a union is re-estimated from the
 * fill. */
int sbloom_union(sbloom_t *dst, const sbloom_t *src);
int sbloom_intersect(sbloom_t *dst, const sbloom_t *src);
/* Divides the block count by `factor` (which must divide it) by OR-ing each run of `factor`
 * consecutive blocks into one: a filter sized for a larger n shrinks once the real n is known,
 * and every key still answers present. Exact for every layout here, because the block index is a
 * multiply-high: floor(floor(h * B / 2^32) / f) == floor(h * (B / f) / 2^32). Folding by 2 ORs
 * blocks 2i and 2i+1 into block i. The result keeps the planned rate, and its planned items
 * become the most it holds at that rate. SBLOOM_E_INVALID if factor is 0 or does not divide the
 * block count. */
int sbloom_fold(sbloom_t **out, const sbloom_t *filter, uint64_t factor);

/* ---- Introspection ------------------------------------------------------------------------ */

sbloom_layout sbloom_get_layout(const sbloom_t *filter); /* 0 for NULL */
uint64_t sbloom_bytes(const sbloom_t *filter);           /* 0 for NULL */
uint32_t sbloom_k(const sbloom_t *filter);               /* 0 for NULL */
/* The filter's bit array, sbloom_bytes() long, read-only, as host-order words (32-bit, or 64-bit
 * for block512-k8): on little-endian hosts the same bytes as the file's payload and, for Parquet,
 * as a column chunk's bitset (sbloom_parquet_export gives those bytes on any host). NULL for NULL.
 */
const void *sbloom_data(const sbloom_t *filter);
/* Keys whose insertion changed the filter: distinct keys added, less false positives. */
uint64_t sbloom_items(const sbloom_t *filter);
/* bytes * 8 / n (NaN for NULL or n = 0). */
double sbloom_bits_per_key(const sbloom_t *filter, uint64_t n);
/* Plan the filter was created from (n and p), or 0 / NaN for sbloom_create_bytes filters. */
uint64_t sbloom_planned_items(const sbloom_t *filter);
double sbloom_planned_fpp(const sbloom_t *filter);

typedef struct sbloom_stats {
    double fill;            /* fraction of bits set */
    double estimated_fpp;   /* false-positive rate for a random key now, from the block fills */
    double estimated_items; /* distinct items inferred from the fill */
} sbloom_stats;

/* Scans the whole filter (O(bytes)) and fills *out. */
int sbloom_get_stats(const sbloom_t *filter, sbloom_stats *out);

/* ---- Instruction sets --------------------------------------------------------------------- */

/* Name of the instruction set new filters use: "scalar", "avx2", "avx512" or "neon". It is picked
 * once from the CPU, or from the environment variable SIMDBLOOM_ISA when set. */
const char *sbloom_isa(void);
/* Forces the instruction set for filters created afterwards (NULL or "auto" returns to the
 * CPU's best). SBLOOM_E_ISA if unknown or unsupported by this CPU/build. Call it before other
 * threads create filters: a concurrent first use may pick the CPU's best instead. */
int sbloom_set_isa(const char *name);
/* Writes up to cap names of the instruction sets usable here (best last); returns the count. */
size_t sbloom_isa_list(const char **names, size_t cap);
/* The instruction set a filter runs on. */
const char *sbloom_filter_isa(const sbloom_t *filter);

#ifdef __cplusplus
}
#endif

#endif /* SIMDBLOOM_H */
