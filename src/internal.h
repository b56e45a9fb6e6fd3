/*
 * What the portable layer shares between its files: the filter object and the helpers that
 * several files call. Nothing here is installed.
 */
#ifndef SIMDBLOOM_INTERNAL_H
#define SIMDBLOOM_INTERNAL_H

#include "simdbloom.h"
#include "../simd/kernels.h"

/* The three operations of the kernel table, as the batch drivers name them. */
typedef enum { SBLOOM_OP_INSERT, SBLOOM_OP_CONTAINS, SBLOOM_OP_REMOVE } sbloom_batch_op;

struct sbloom {
    /* The public first members (sbloom_inline_view in simdbloom.h, which the header's inline
     * single-key calls read), named here as members of the filter itself. Both are members of
     * one union with the same initial sequence, so either name reads the same object. */
    union {
        sbloom_inline_view view;
        struct {
            void *blocks;             /* 64-byte aligned, bytes long */
            uint64_t bytes;           /* nblocks * block size */
            uint64_t nblocks;         /* <= 2^32 */
            uint64_t items;           /* keys that changed the filter */
            uint32_t inline_contains; /* sbloom_inline_refresh: the layout, or 0 */
            uint32_t inline_add;
        };
    };
    uint64_t planned_items; /* n of the plan, 0 if created by size */
    double planned_fpp;     /* p of the plan, NaN if created by size */
    sbloom_layout layout;
    uint32_t k;
    uint32_t block_bytes;
    int mapped;     /* blocks came from mmap (1) or the heap (0) */
    int readonly;   /* adds are refused: a read-only mapping or attachment */
    void *map_base; /* a file mapping (sbloom_map) to unmap on free, or NULL */
    uint64_t map_bytes;
    uint8_t *image; /* the header of an image in caller or mapped memory, or NULL: the
                       blocks then are not ours to free, and sbloom_sync writes here */
    const sbloom_layout_kernels *kern; /* this layout's kernels in the chosen table */
    const char *isa;                   /* name of the chosen table */
    int inline_ok;                     /* sbloom_kernels_inline_ok of the table at creation */
    int concurrent;        /* sbloom_set_concurrent: shared kernels, striped test-and-add locks */
    int stripes_shared;    /* the locks live in PATH.lock, shared with other processes */
    uint32_t *stripes;     /* SBLOOM_STRIPES lock words, or NULL */
    void *stripes_map;     /* the PATH.lock mapping, or NULL */
    uint64_t *items_delta; /* a concurrent file mapping: items every process added since the
                              header's count was last synced (a word in PATH.lock); or NULL */
    unsigned threads;      /* sbloom_set_threads: workers a large batch is spread over */
    /* A scalable filter (SBLOOM_LAYOUT_SCALABLE, src/scalable.c): no blocks of its own, but
     * stages (ordinary filters, oldest first); first_items is the first stage's plan. */
    struct sbloom **stages;
    uint32_t nstages;
    uint64_t first_items;
};

/* src/filter.c: marks whether the header's inline single-key calls may probe (and write) this
 * filter; called wherever its layout, kernels, read-only or concurrent state change. */
void sbloom_inline_refresh(sbloom_t *f);

/* src/concurrent.c: the concurrent mode. Striped locks for test-and-add, indexed by block. */
#define SBLOOM_STRIPES 4096u
/* PATH.lock: a note on the holder of the command line's file lock (text, up to 256 bytes), the
 * live item delta (a 64-bit word at 256), and from 4096 the stripes. */
#define SBLOOM_LOCK_NOTE_BYTES 256u
#define SBLOOM_LOCK_DELTA_AT 256u
#define SBLOOM_LOCK_STRIPES_AT 4096u
#define SBLOOM_LOCK_FILE_BYTES (SBLOOM_LOCK_STRIPES_AT + SBLOOM_STRIPES * 4u)
uint64_t sbloom_concurrent_run(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                               uint8_t *results);
int sbloom_concurrent_add_one(sbloom_t *f, uint64_t hash);
void sbloom_concurrent_release(sbloom_t *f);
/* Maps PATH.lock's stripes and makes f concurrent across processes. */
int sbloom_concurrent_share(sbloom_t *f, const char *path);
int sbloom_lock_file_open(const char *path, int *fd);

/* src/dispatch.c: the table new filters use, or NULL with *err set when SIMDBLOOM_ISA names an
 * instruction set that is unknown or that this CPU lacks. */
const sbloom_kernels *sbloom_kernels_active(int *err);
/* 0 when a filter on this table must not take the header's inline single-key path: the table
 * was forced and is the scalar reference or an emulation (tests and benchmarks that force one
 * mean that code); 1 otherwise. */
int sbloom_kernels_inline_ok(const sbloom_kernels *table);
/* src/dispatch.c: 1 when this CPU and its OS run AVX2 (and BMI2) code; always 0 off x86. */
int sbloom_cpu_has_avx2(void);
/* simd/xxh3_avx2.c (x86 builds): XXH3_64bits compiled with AVX2, for src/hash_long.c. */
uint64_t sbloom_xxh3_avx2(const void *data, size_t len);

/* src/layout.c: 1 if the value names a layout; bits per word (the block is k words of
 * block_bytes * 8 / k bits); and slots per word (a key takes one slot in each word: a bit, or a
 * 4-bit counter). */
/* src/error.c: the detail sbloom_error_detail reports. sbloom_fail_with sets it (printf-style)
 * and returns code; reads clear it first. */
void sbloom_clear_detail(void);
int sbloom_fail_with(int code, const char *format, ...) __attribute__((format(printf, 2, 3)));

int sbloom_layout_known(sbloom_layout layout);
uint32_t sbloom_layout_word_bits(sbloom_layout layout);
uint32_t sbloom_layout_slots(sbloom_layout layout);

/* src/filter.c: a zeroed filter of `bytes` (whole blocks) and this layout on the active ISA; the
 * plan is (0, NaN) when n = 0. With no_blocks, the block memory is left for the caller to set. */
int sbloom_filter_new(sbloom_t **out, uint64_t bytes, sbloom_layout layout, uint64_t n, double p,
                      int no_blocks);

/* src/batch.c: the chunked, prefetching batch drivers, for the three operations of the kernel
 * table; they return the kernel's count. A key pointer may be NULL only when its length is 0:
 * sbloom_batch_keys sets *valid to 0 when one breaks that, a write's before it changes anything,
 * a read's at the chunk that holds it (where it stops). */
uint64_t sbloom_batch_hashes(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                             uint8_t *results);
uint64_t sbloom_batch_keys(sbloom_t *f, sbloom_batch_op op, const void *const *keys,
                           const size_t *lens, size_t n, uint8_t *results, int *valid);
uint64_t sbloom_batch_integers(sbloom_t *f, sbloom_batch_op op, const uint64_t *values, size_t n,
                               uint8_t *results);
int sbloom_keys_valid(const void *const *keys, const size_t *lens, size_t n);
/* One kernel call (the concurrent forms in concurrent mode), for the drivers and the workers. */
uint64_t sbloom_run_chunk(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                          uint8_t *results);
/* Where a batch's keys come from: byte strings, or integers (values not NULL). */
typedef struct sbloom_key_source {
    const void *const *keys;
    const size_t *lens;
    const uint64_t *values;
} sbloom_key_source;
/* out[i] = the hash of key start + i, for n keys. */
void sbloom_hash_source(const sbloom_t *f, const sbloom_key_source *src, size_t start, size_t n,
                        uint64_t *out);

/* src/parallel.c: parallel batches. The threads a batch of n keys runs on (1: serially). */
#define SBLOOM_PARALLEL_MIN_KEYS 65536
unsigned sbloom_batch_threads(const sbloom_t *f, size_t n);
uint64_t sbloom_parallel_hashes(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                                uint8_t *results, unsigned threads);
int sbloom_parallel_hash(const sbloom_t *f, const sbloom_key_source *src, size_t n, uint64_t *out,
                         unsigned threads);
/* How an insert of `inserted` keys of which `fresh` were new moves the item count: a bit layout
 * counts the keys that changed it, the counting layout every key (it takes one remove each). */
void sbloom_count_inserted(sbloom_t *f, uint64_t inserted, uint64_t fresh);

/* src/scalable.c: the scalable filter's side of the API (f->stages is set). */
void sbloom_scalable_free(sbloom_t *f);
uint64_t sbloom_scalable_items(const sbloom_t *f);
uint64_t sbloom_scalable_capacity(const sbloom_t *f);
uint64_t sbloom_scalable_bytes(const sbloom_t *f);
uint64_t sbloom_scalable_run(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                             uint8_t *results);
int sbloom_scalable_stats(const sbloom_t *f, int sampled, sbloom_stats *out);
int sbloom_scalable_clone(sbloom_t **out, const sbloom_t *f);
void sbloom_scalable_clear(sbloom_t *f);
int sbloom_scalable_union(sbloom_t *dst, const sbloom_t *src);
void sbloom_scalable_set_threads(sbloom_t *f, unsigned threads);
uint64_t sbloom_scalable_payload_bytes(const sbloom_t *f);
int sbloom_scalable_write_payload(const sbloom_t *f, uint8_t *out);

/* src/memory.c: zeroed, 64-byte aligned block memory; *mapped tells sbloom_blocks_free how. */
void *sbloom_blocks_alloc(uint64_t bytes, int *mapped);
void sbloom_blocks_free(void *blocks, uint64_t bytes, int mapped);

/* src/file.c: releases a read-only file mapping made by sbloom_map; whole writes and reads
 * (0, or -1 with errno); and the crash-safe write of header + body to path (a temporary file in
 * the same directory, fsync, rename, fsync of the directory). */
void sbloom_unmap_file(void *base, uint64_t bytes);
/* Opens path read-only, requires a regular file, and gives its size; SBLOOM_E_IO with errno set
 * (EISDIR for anything but a regular file) and nothing left open on failure. */
int sbloom_open_regular(const char *path, int *fd, uint64_t *size);
/* The same with open(2)'s access mode (O_RDONLY or O_RDWR). */
int sbloom_open_regular_mode(const char *path, int mode, int *fd, uint64_t *size);
/* Maps bytes of fd shared (read-write when writable) and closes fd either way: SBLOOM_OK with
 * *base set, or SBLOOM_E_NOMEM / SBLOOM_E_IO with errno set. */
int sbloom_map_fd(int fd, uint64_t bytes, int writable, void **base);
int sbloom_write_all(int fd, const void *data, uint64_t len);
int sbloom_read_all(int fd, void *data, uint64_t len);
int sbloom_write_file(const char *path, const void *header, size_t header_bytes,
                      int (*write_body)(int fd, const void *ctx), const void *ctx);

#endif /* SIMDBLOOM_INTERNAL_H */
