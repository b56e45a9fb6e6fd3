/*
 * The core filter: blocks of one layout and the kernels that probe them. A core never sees an
 * sbloom_t: the object (src/object.c) holds one for the plain and concurrent modes, the scalable
 * mode an array of them. Nothing here is installed.
 */
#ifndef SIMDBLOOM_CORE_H
#define SIMDBLOOM_CORE_H

#include "../base/base.h"

/* Who owns a core's block memory, and so how it is released. */
typedef enum {
    SBLOOM_OWNER_HEAP,     /* sbloom_blocks_alloc from the heap */
    SBLOOM_OWNER_ANON_MAP, /* sbloom_blocks_alloc from an anonymous mapping */
    SBLOOM_OWNER_FILE_MAP, /* a file mapping (map_base, map_bytes) that holds the blocks */
    SBLOOM_OWNER_CALLER,   /* memory the caller owns (an image, or another core's blocks) */
} sbloom_owner;

typedef struct sbloom_core {
    void *blocks;     /* 64-byte aligned, bytes long */
    uint64_t bytes;   /* nblocks * block_bytes */
    uint64_t nblocks; /* <= 2^32 */
    sbloom_layout layout;
    uint32_t k;
    uint32_t block_bytes;
    const sbloom_layout_kernels *kern; /* this layout's kernels in the chosen table */
    const char *isa;                   /* the chosen table's name */
    int inline_ok;                     /* sbloom_kernels_inline_ok of the table */
    int whole_words;                   /* sbloom_kernels_whole_words of the table */
    sbloom_owner owner;
    void *map_base; /* SBLOOM_OWNER_FILE_MAP: the mapping to unmap */
    uint64_t map_bytes;
} sbloom_core;

/* core.c: a core of `bytes` (rounded up to whole blocks, at least one) of a block layout on the
 * active kernel table. With SBLOOM_OWNER_CALLER the blocks are left NULL for the caller to set;
 * else they are allocated, zeroed. SBLOOM_E_LAYOUT for the scalable layout (it has no blocks). */
int sbloom_core_init(sbloom_core *c, uint64_t bytes, sbloom_layout layout, sbloom_owner owner);
/* A heap copy of src's blocks. */
int sbloom_core_copy(sbloom_core *c, const sbloom_core *src);
/* Frees or unmaps the blocks as their owner says; the core is then empty. */
void sbloom_core_release(sbloom_core *c);
/* One kernel call over n hashes; returns the kernel's count (new, present or removed keys). */
uint64_t sbloom_core_run(const sbloom_core *c, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                         uint8_t *results);
/* The same with the kernels that are safe beside other writers (simd/kernels.h): lookups, and
 * adds that OR bits in atomically. No results for an add: test-and-add needs a lock above. */
uint64_t sbloom_core_run_shared(const sbloom_core *c, sbloom_batch_op op, const uint64_t *hashes,
                                size_t n, uint8_t *results);
/* The windowed mode's kernels (simd/kernels.h: window_insert, window_contains) over the core's
 * blocks as nblocks / lines groups of `lines` blocks: SBLOOM_OP_INSERT adds the keys that no
 * generation holds to generation `target`; SBLOOM_OP_CONTAINS asks whether any generation holds
 * each key. Returns the kernel's count. */
uint64_t sbloom_core_run_groups(const sbloom_core *c, uint32_t lines, uint32_t target,
                                sbloom_batch_op op, const uint64_t *hashes, size_t n,
                                uint8_t *results);
/* A fingerprint core's blocks as a window's entries (simd/fingerprint.h, "A window's entries":
 * the low age_bits of each remainder an age; `lines` main and spare lines, then the spill
 * lines): SBLOOM_OP_INSERT adds the keys no entry holds with `age` (SBK_FP_REFUSED added to the
 * count when one found no room), SBLOOM_OP_CONTAINS asks whether an entry of any age holds each
 * key. And the entries of age `age` in lines [from, to) dropped (to_age SBK_FP_AGE_DROP) or given
 * to_age. */
uint64_t sbloom_core_run_aged(const sbloom_core *c, uint64_t lines, uint32_t age_bits, uint32_t age,
                              sbloom_batch_op op, const uint64_t *hashes, size_t n,
                              uint8_t *results);
void sbloom_core_age(sbloom_core *c, uint64_t lines, uint64_t from, uint64_t to, uint32_t age_bits,
                     uint32_t age, uint32_t to_age);
/* dst |= src (or &= when intersect), word by word: same layout and bytes. */
void sbloom_core_combine(sbloom_core *dst, const sbloom_core *src, int intersect);
/* stats.c: fill, the false-positive rate a random key meets, and the distinct items the fill
 * implies: from every block, or (sampled) from at most 4,096 evenly spaced blocks. */
void sbloom_core_stats(const sbloom_core *c, int sampled, sbloom_stats *out);
/* A fingerprint core's share of absent-key lookups that read a spare line and of its entries held
 * in spare lines (both 0 for the other layouts). */
void sbloom_core_second_line(const sbloom_core *c, double *absent_lookups, double *spare_keys);
/* The same over the cores of a composite filter (a scalable filter's stages, a window's rings),
 * added one by one with the keys each holds: an absent key's lookup reads a spare line where it
 * does in any core (each core's share taken as independent), and the spare keys' share is the
 * cores' shares weighted by their keys. */
typedef struct sbloom_second_line_sum {
    double reaches_none; /* the product of (1 - each core's absent-lookup share): 1 for none */
    double spare_keys, keys;
} sbloom_second_line_sum;
static inline sbloom_second_line_sum sbloom_second_line_none(void)
{
    return (sbloom_second_line_sum){.reaches_none = 1};
}
void sbloom_second_line_add(sbloom_second_line_sum *sum, const sbloom_core *c, uint64_t keys);
void sbloom_second_line_shares_of(const sbloom_second_line_sum *sum, double *absent_lookups,
                                  double *spare_keys);
/* The item count those statistics give (0 when the filter is full). */
uint64_t sbloom_core_estimated_items(const sbloom_core *c);

/* payload.c: a core's blocks in file order (little-endian words) and back; its payload written
 * to a file descriptor (0, or -1 with errno); and its XXH3-64 as stored in the file. */
void sbloom_core_payload_out(const sbloom_core *c, void *out);
void sbloom_core_payload_in(sbloom_core *c, const void *payload);
int sbloom_core_payload_write(int fd, const sbloom_core *c);
uint64_t sbloom_core_payload_checksum(const sbloom_core *c);

/* fp_home.c: a fingerprint core's key: its main line; and 1 when an operation on it may read or
 * write the spare lines as its line stands now (the key's quotient at or above the line's mark,
 * or the line full). Its line's words must not change meanwhile (the caller holds its lock). */
uint64_t sbloom_core_fp_line(const sbloom_core *c, uint64_t hash);
int sbloom_core_fp_reaches_spare(const sbloom_core *c, uint64_t hash);
/* The spill lines a fingerprint window's blocks end with after its `lines` main and spare lines
 * (simd/fingerprint.h, "A window's entries"). */
uint64_t sbloom_core_fp_spill_lines(uint64_t lines);

#endif /* SIMDBLOOM_CORE_H */
