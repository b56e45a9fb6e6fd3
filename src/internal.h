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
    int mapped;     /* blocks came from mmap (1) or the heap (0) */
    int readonly;   /* adds are refused: a read-only mapping or attachment */
    void *map_base; /* a file mapping (sbloom_map) to unmap on free, or NULL */
    uint64_t map_bytes;
    uint8_t *image; /* the header of an image in caller or mapped memory, or NULL: the
                       blocks then are not ours to free, and sbloom_sync writes here */
    const sbloom_layout_kernels *kern; /* this layout's kernels in the chosen table */
    const char *isa;                   /* name of the chosen table */
};

/* src/dispatch.c: the table new filters use, or NULL with *err set when SIMDBLOOM_ISA names an
 * instruction set that is unknown or that this CPU lacks. */
const sbloom_kernels *sbloom_kernels_active(int *err);

/* src/layout.c: 1 if the value names a layout; bits per word (the block is k words of
 * block_bytes * 8 / k bits); and slots per word (a key takes one slot in each word: a bit, or a
 * 4-bit counter). */
int sbloom_layout_known(sbloom_layout layout);
uint32_t sbloom_layout_word_bits(sbloom_layout layout);
uint32_t sbloom_layout_slots(sbloom_layout layout);

/* src/filter.c: a zeroed filter of `bytes` (whole blocks) and this layout on the active ISA; the
 * plan is (0, NaN) when n = 0. With no_blocks, the block memory is left for the caller to set. */
int sbloom_filter_new(sbloom_t **out, uint64_t bytes, sbloom_layout layout, uint64_t n, double p,
                      int no_blocks);

/* src/batch.c: the chunked, prefetching batch drivers, for the three operations of the kernel
 * table; they return the kernel's count. A key pointer may be NULL only when its length is 0:
 * sbloom_keys_valid checks that before a batch starts. */
typedef enum { SBLOOM_OP_INSERT, SBLOOM_OP_CONTAINS, SBLOOM_OP_REMOVE } sbloom_batch_op;
uint64_t sbloom_batch_hashes(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                             uint8_t *results);
uint64_t sbloom_batch_keys(sbloom_t *f, sbloom_batch_op op, const void *const *keys,
                           const size_t *lens, size_t n, uint8_t *results);
uint64_t sbloom_batch_integers(sbloom_t *f, sbloom_batch_op op, const uint64_t *values, size_t n,
                               uint8_t *results);
int sbloom_keys_valid(const void *const *keys, const size_t *lens, size_t n);
/* How an insert of `inserted` keys of which `fresh` were new moves the item count: a bit layout
 * counts the keys that changed it, the counting layout every key (it takes one remove each). */
void sbloom_count_inserted(sbloom_t *f, uint64_t inserted, uint64_t fresh);

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
int sbloom_write_all(int fd, const void *data, uint64_t len);
int sbloom_read_all(int fd, void *data, uint64_t len);
int sbloom_write_file(const char *path, const void *header, size_t header_bytes,
                      int (*write_body)(int fd, const void *ctx), const void *ctx);

#endif /* SIMDBLOOM_INTERNAL_H */
