/*
 * What the portable layer shares between its files: the filter object and the helpers that
 * several files call. Nothing here is installed.
 */
#ifndef SIMDBLOOM_INTERNAL_H
#define SIMDBLOOM_INTERNAL_H

#include "simdbloom.h"
#include "../simd/kernels.h"

struct sbloom {
    void *blocks;           /* 64-byte aligned, bytes long */
    uint64_t bytes;         /* nblocks * block size */
    uint64_t nblocks;       /* <= 2^32 */
    uint64_t items;         /* keys that changed the filter */
    uint64_t planned_items; /* n of the plan, 0 if created by size */
    double planned_fpp;     /* p of the plan, NaN if created by size */
    sbloom_layout layout;
    uint32_t k;
    uint32_t block_bytes;
    int mapped;   /* blocks came from mmap (1) or the heap (0) */
    int readonly; /* blocks are a read-only file mapping at map_base */
    void *map_base;
    uint64_t map_bytes;
    const sbloom_layout_kernels *kern; /* this layout's kernels in the chosen table, or NULL */
    const sbloom_counting_kernels *counting_kern; /* the counting layout's kernels, or NULL */
    const char *isa;                              /* name of the chosen table */
};

/* A counting filter is a filter of layout SBLOOM_LAYOUT_COUNTING512 behind its own public type,
 * so that the plain-filter functions cannot be handed one by mistake. */
struct sbloom_counting {
    sbloom_t *filter;
};

/* src/dispatch.c: the table new filters use, or NULL with *err set when SIMDBLOOM_ISA names an
 * instruction set that is unknown or that this CPU lacks. */
const sbloom_kernels *sbloom_kernels_active(int *err);

/* src/layout.c: 1 if the value names a plain-filter layout (valid) or any layout, the counting
 * one included (known); bits per word (the block is k words of block_bytes * 8 / k bits); and
 * slots per word (a key takes one slot in each word: a bit, or a 4-bit counter). */
int sbloom_layout_valid(sbloom_layout layout);
int sbloom_layout_known(sbloom_layout layout);
uint32_t sbloom_layout_word_bits(sbloom_layout layout);
uint32_t sbloom_layout_slots(sbloom_layout layout);

/* src/filter.c: a zeroed filter of `bytes` (whole blocks) and this layout on the active ISA; the
 * plan is (0, NaN) when n = 0. With no_blocks, the block memory is left for the caller to set. */
int sbloom_filter_new(sbloom_t **out, uint64_t bytes, sbloom_layout layout, uint64_t n, double p,
                      int no_blocks);

/* src/batch.c: the chunked, prefetching batch drivers, for every operation of both kinds of
 * filter; they return the kernel's count. A key pointer may be NULL only when its length is 0:
 * sbloom_keys_valid checks that before a batch starts. */
typedef enum {
    SBLOOM_OP_ADD,
    SBLOOM_OP_CONTAINS,
    SBLOOM_OP_ADD_IF_NEW,
    SBLOOM_OP_COUNT_ADD,
    SBLOOM_OP_COUNT_REMOVE,
    SBLOOM_OP_COUNT_CONTAINS
} sbloom_batch_op;
uint64_t sbloom_batch_hashes(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                             uint8_t *results);
uint64_t sbloom_batch_keys(sbloom_t *f, sbloom_batch_op op, const void *const *keys,
                           const size_t *lens, size_t n, uint8_t *results);
int sbloom_keys_valid(const void *const *keys, const size_t *lens, size_t n);

/* src/format.c and src/file.c: a file image or file of the given kind (counting or plain);
 * SBLOOM_E_KIND when it holds the other kind. */
int sbloom_deserialize_kind(sbloom_t **out, const void *buf, size_t len, int counting);
int sbloom_load_kind(sbloom_t **out, const char *path, int counting);
/* Writes the file image of f (either kind); SBLOOM_E_TRUNCATED if cap is too small. */
int sbloom_serialize_any(const sbloom_t *f, void *buf, size_t cap);
/* Crash-safe save of f (either kind). */
int sbloom_save_any(const sbloom_t *f, const char *path);

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
int sbloom_write_all(int fd, const void *data, uint64_t len);
int sbloom_read_all(int fd, void *data, uint64_t len);
int sbloom_write_file(const char *path, const void *header, size_t header_bytes,
                      int (*write_body)(int fd, const void *ctx), const void *ctx);

#endif /* SIMDBLOOM_INTERNAL_H */
