/*
 * The filter object (struct sbloom): the inline view the header's single-key calls read, the
 * mode that gives every operation its meaning, the plan, the count, and the mode's state.
 *
 * Layers, top down (docs/ARCHITECTURE.md): src/api (the public entry points) -> src/modes
 * (plain, concurrent, scalable: one table of operations each) -> src/object.c (this) ->
 * src/core (blocks, kernels, drivers, header) -> src/os -> src/base -> simd. Calls go down only;
 * an entry point checks its arguments and makes one call through f->mode.
 */
#ifndef SIMDBLOOM_OBJECT_H
#define SIMDBLOOM_OBJECT_H

#include "core/driver.h"
#include "core/header.h"

typedef struct sbloom_mode sbloom_mode;
struct sbloom_part; /* a core with its count and plan (src/modes/parts.h) */

/* How adds move a filter's item count. */
typedef enum {
    SBLOOM_COUNT_PLAIN,  /* items += added */
    SBLOOM_COUNT_ATOMIC, /* the same, atomically (a concurrent filter) */
    SBLOOM_COUNT_SHARED, /* a concurrent file mapping: a delta in PATH.lock (items_delta) */
    SBLOOM_COUNT_NONE,   /* the mode counts its own (the scalable filter's stages) */
} sbloom_count_kind;

struct sbloom {
    /* The public first members (sbloom_inline_view in simdbloom.h, which the header's inline
     * single-key calls read), named here as members of the filter itself. Both are members of
     * one union with the same initial sequence, so either name reads the same object. The blocks
     * and the inline flags are written by object.c only (sbloom_object_show_core); the count by
     * object.c's sbloom_object_count and by the modes' clear, union and loads. */
    union {
        sbloom_inline_view view;
        struct {
            void *blocks;             /* the core's blocks, or NULL */
            uint64_t bytes;           /* the core's bytes */
            uint64_t nblocks;         /* the core's blocks */
            uint64_t items;           /* keys that changed the filter */
            uint32_t inline_contains; /* the layout, or 0 (sbloom_object_refresh) */
            uint32_t inline_add;
        };
    };
    const sbloom_mode *mode;
    sbloom_core core; /* the blocks of a plain or concurrent filter */
    void *state;      /* the mode's own: stripes, stages */
    /* the core's geometry; SBLOOM_NO_LAYOUT for a composite mode's object */
    sbloom_layout layout;
    uint64_t planned_items; /* n of the plan, 0 if created by size */
    double planned_fpp;     /* p of the plan, NaN if created by size */
    int readonly;           /* adds are refused: a read-only mapping or attachment */
    sbloom_count_kind counting;
    uint64_t *items_delta; /* SBLOOM_COUNT_SHARED: the word in PATH.lock */
    unsigned threads;      /* sbloom_set_threads: workers a large batch is spread over */
    uint8_t *image;        /* the header of an image in caller or mapped memory, or NULL: the
                              blocks then are not ours to free, and a sync writes here */
    const char *isa;       /* the kernel table's name */
    struct sbloom **views; /* sbloom_stage's views of a composite filter's cores, or NULL */
    uint32_t nviews;
    int failed; /* a batch's lock that could not be taken (SBLOOM_E_LOCKED), or 0 */
};

/* A mode: what each operation means for a kind of filter. Every entry is set but chunk and the
 * last four. */
struct sbloom_mode {
    const char *name;
    /* What sbloom_get_layout and a file's header call a filter of this mode, where its cores are
     * arranged as more than one (SBLOOM_LAYOUT_SCALABLE's stages, SBLOOM_LAYOUT_WINDOWED's ring):
     * the ABI's name of the arrangement, never a geometry; 0 for a mode of one core, whose
     * layout is its core's. */
    sbloom_layout reports_as;
    int has_core;     /* keys land in f->core (prefetched, split among threads) */
    int shared_core;  /* other threads may write f->core meanwhile (the concurrent mode) */
    int takes_inline; /* the header's inline calls may probe f->core's bits */
    /* The chunk function: the operation over n hashes (results may be NULL), its count. */
    uint64_t (*run)(sbloom_t *f, sbloom_batch_op op, const uint64_t *hashes, size_t n,
                    uint8_t *results);
    /* The same as the driver calls it (ctx: the filter), where a mode has a faster form than a
     * call of run; NULL: run. */
    sbloom_chunk_fn chunk;
    int (*add_one)(sbloom_t *f, uint64_t hash); /* 1 new, 0 not (the count is the caller's) */
    int (*contains_one)(const sbloom_t *f, uint64_t hash);
    uint64_t (*items)(const sbloom_t *f);
    uint64_t (*bytes)(const sbloom_t *f);
    uint64_t (*capacity)(const sbloom_t *f); /* the items it is planned for */
    int (*clone)(sbloom_t **out, const sbloom_t *f);
    void (*clear)(sbloom_t *f);
    int (*stats)(const sbloom_t *f, int sampled, sbloom_stats *out);
    /* dst |= src (or &= when intersect): SBLOOM_E_LAYOUT / _INCOMPATIBLE where it has no meaning */
    int (*combine)(sbloom_t *dst, const sbloom_t *src, int intersect);
    uint64_t (*image_bytes)(const sbloom_t *f);          /* the file: header and payload */
    int (*write_image)(const sbloom_t *f, uint8_t *out); /* the file's bytes, image_bytes long */
    void (*release)(sbloom_t *f); /* the mode's state and the core; not the object */
    /* A composite mode's cores, oldest first (sbloom_stages, sbloom_stage); NULL for a mode of
     * one core, whose one stage is the filter itself. */
    uint32_t (*cores)(const sbloom_t *f);
    const struct sbloom_part *(*core_at)(const sbloom_t *f, uint32_t i);
    /* sbloom_second_line_shares where core_at's cores are not where keys live (the window of
     * ages: its views are per generation, its entries one core); NULL: summed over core_at's
     * cores, else f->core's where the mode has one, else none. */
    void (*second_line)(const sbloom_t *f, double *absent_lookups, double *spare_keys);
    /* A mode whose file mapping is its own (the windowed filter's): brings the file up to date
     * (sbloom_sync); NULL: the object's sync of f->image. */
    int (*sync)(sbloom_t *f);
    /* 1 when the filter removes keys now (a composite's cores all do); NULL: its layout says. */
    int (*removes)(const sbloom_t *f);
};

/* A new object of this mode and layout, every count zero, no plan (0, NaN), no core yet. */
int sbloom_object_new(sbloom_t **out, const sbloom_mode *mode, sbloom_layout layout);
/* Frees the object: a writable file mapping's header synced first, then the mode's release (which
 * unmaps, then lets go of its locks), then the stage views. */
void sbloom_object_free(sbloom_t *f);
/* Publishes f->core in the inline view and recomputes what the inline calls may do; called
 * wherever the core, the mode or read-only state change. */
void sbloom_object_show_core(sbloom_t *f);
/* How an insert of `inserted` keys of which `fresh` were new moves the count: a bit layout
 * counts the keys that changed it, the counting layout every key (it takes one remove each). */
void sbloom_object_count(sbloom_t *f, uint64_t inserted, uint64_t fresh);
void sbloom_object_uncount(sbloom_t *f, uint64_t removed);
/* 1 when the filter's keys can be removed (sbloom_remove): its layout's, or its mode's answer. */
int sbloom_object_removes(const sbloom_t *f);
/* The count of a filter with a core (a concurrent mapping's: the header's plus the live delta). */
uint64_t sbloom_object_items(const sbloom_t *f);
/* The header that describes a filter with a core. */
void sbloom_object_header(const sbloom_t *f, sbloom_header *h);
/* An image's header brought up to date (and a file mapping msynced): sbloom_sync. */
int sbloom_object_sync(sbloom_t *f);
/* A batch that stopped at a lock another process kept (a mode's chunk function, which returns a
 * count, says so here; any thread of the batch): the entry point returns the code. take: the
 * code, cleared, or SBLOOM_OK. */
void sbloom_object_fail(const sbloom_t *f, int code);
int sbloom_object_failed(const sbloom_t *f);
int sbloom_object_take_failure(const sbloom_t *f);
/* The batch driver's view of f: its mode's chunk function, core and threads. */
void sbloom_object_runner(const sbloom_t *f, sbloom_runner *r);
/* The item-count word of an image's header (a little-endian host's in-place image). */
static inline uint64_t *sbloom_object_header_items(const sbloom_t *f)
{
    return (uint64_t *)(f->image + SBLOOM_HEADER_ITEMS_AT);
}

#endif /* SIMDBLOOM_OBJECT_H */
