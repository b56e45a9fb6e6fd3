/* The modes of a filter: one table of operations each (object.h says what each entry means),
 * and what the entry points need of each beyond the table. Nothing here is installed. */
#ifndef SIMDBLOOM_MODES_H
#define SIMDBLOOM_MODES_H

#include "../object.h"

extern const sbloom_mode sbloom_mode_plain;
extern const sbloom_mode sbloom_mode_concurrent;
extern const sbloom_mode sbloom_mode_scalable;
extern const sbloom_mode sbloom_mode_windowed;

/* plain.c: a plain filter of `bytes` (whole blocks) of a block layout on the active kernels,
 * planned for (n, p) (0, NaN: none). Its blocks are allocated zeroed, or with
 * SBLOOM_OWNER_CALLER left NULL for the caller to place (an image, a file mapping). */
int sbloom_plain_new(sbloom_t **out, uint64_t bytes, sbloom_layout layout, uint64_t n, double p,
                     sbloom_owner owner);
/* A read-only plain filter over another filter's core (sbloom_stage): nothing of it is freed. */
int sbloom_plain_view(sbloom_t **out, const sbloom_core *core, uint64_t items, uint64_t n,
                      double p);
/* A plain filter over the image at base (header h validated), its bits in place, read-only
 * unless writable: the memory stays the caller's (or, once the caller says so, a file
 * mapping's). */
int sbloom_plain_wrap(sbloom_t **out, uint8_t *base, const sbloom_header *h, int writable);
/* A validated header's count and plan, moved into a plain filter. */
void sbloom_plain_apply_header(sbloom_t *f, const sbloom_header *h);
/* The plain operations the concurrent mode shares. */
uint64_t sbloom_plain_bytes(const sbloom_t *f);
uint64_t sbloom_plain_capacity(const sbloom_t *f);
int sbloom_plain_clone(sbloom_t **out, const sbloom_t *f);
void sbloom_plain_clear(sbloom_t *f);
int sbloom_plain_stats(const sbloom_t *f, int sampled, sbloom_stats *out);
int sbloom_plain_combine(sbloom_t *dst, const sbloom_t *src, int intersect);
uint64_t sbloom_plain_image_bytes(const sbloom_t *f);
int sbloom_plain_write_image(const sbloom_t *f, uint8_t *out);

/* The table entries every mode with one core shares: the plain mode's. */
#define SBLOOM_ONE_CORE_OPERATIONS                                                                 \
    .has_core = 1, .items = sbloom_object_items, .bytes = sbloom_plain_bytes,                      \
    .capacity = sbloom_plain_capacity, .clone = sbloom_plain_clone, .clear = sbloom_plain_clear,   \
    .stats = sbloom_plain_stats, .combine = sbloom_plain_combine,                                  \
    .image_bytes = sbloom_plain_image_bytes, .write_image = sbloom_plain_write_image

/* concurrent.c: a plain filter made concurrent (its lock table allocated) and back; and a
 * concurrent file mapping, whose locks and live count live in PATH.lock. */
int sbloom_concurrent_enter(sbloom_t *f);
int sbloom_concurrent_leave(sbloom_t *f);
int sbloom_concurrent_share(sbloom_t *f, const char *path);
/* The same with the lock table and item delta in the caller's region (SBLOOM_SHARED_LOCKS_BYTES,
 * laid out as a lock file). */
int sbloom_concurrent_share_region(sbloom_t *f, void *region);
/* The lock words held now (test hook: after every batch has returned, none must be). */
uint64_t sbloom_concurrent_locks_held(const sbloom_t *f);

/* concurrent_fp.c: the concurrent mode's operations on a fingerprint filter's keys, each under
 * its main line's stripe lock (words[line & mask]) and, when it may reach the spare lines, the
 * spare lock after it; an add that finds no room fails f with SBLOOM_E_FULL. */
typedef struct sbloom_fp_locks {
    uint32_t *words, mask, stride, *spare; /* (stride: words a stripe, locked.h) */
    struct sbloom_lock_self *self;
    /* For lookups without locks (concurrent_fp.c): the spare lock's version, in a versioned
     * table (each stripe's lock word followed by its version: locked.h); NULL, every lookup
     * locks (under ThreadSanitizer, which cannot check them). */
    uint32_t *spare_version;
    /* test-and-add: where its lookups first stand (a hint kept from batch to batch, read and
     * written without order: locked.h) */
    unsigned *misses;
} sbloom_fp_locks;
uint64_t sbloom_fp_locked_run(const sbloom_t *f, const sbloom_fp_locks *l, sbloom_batch_op op,
                              const uint64_t *hashes, size_t n, uint8_t *results);

/* scalable.c: a scalable filter of one stage (with any_family its stages the smallest of every
 * family: sbloom_plan_stage); one from its validated header and checksummed payload. */
int sbloom_scalable_new(sbloom_t **out, uint64_t first_items, double p, int any_family);
int sbloom_scalable_from_payload(sbloom_t **out, const sbloom_header *h, const uint8_t *payload);

/* windowed.c: a windowed filter (sbloom_create_windowed's arguments, checked; with any_family
 * the ages form where it is smaller); one from its
 * validated header and checksummed payload; time moving on; and its window. */
int sbloom_windowed_new(sbloom_t **out, uint64_t n, double p, uint32_t periods, uint64_t period,
                        uint64_t now, int any_family);
/* What sbloom_windowed_new makes of the same arguments, planned without making it: its lines'
 * layout and bytes (every generation's, and the spill lines of the ages form), k, the window's
 * rate p, and bits a window key. */
int sbloom_windowed_plan(uint64_t n, double p, uint32_t periods, uint64_t period, int any_family,
                         sbloom_plan *out);
/* A growing windowed filter (sbloom_create_windowed_scalable's arguments, checked). */
int sbloom_windowed_new_growing(sbloom_t **out, uint64_t first, double p, uint32_t periods,
                                uint64_t period, uint64_t now);
int sbloom_windowed_from_payload(sbloom_t **out, const sbloom_header *h, const uint8_t *payload);
/* 1 for a growing windowed filter (planned without a count), else 0. */
int sbloom_windowed_growing(const sbloom_t *f);
int sbloom_windowed_advance(sbloom_t *f, uint64_t now);
int sbloom_windowed_rewind(sbloom_t *f, uint64_t now);
void sbloom_windowed_describe(const sbloom_t *f, sbloom_window *out);
/* Many threads at once (on) or one (off); whether it is so now. */
int sbloom_windowed_set_concurrent(sbloom_t *f, int on);
int sbloom_windowed_is_concurrent(const sbloom_t *f);
uint64_t sbloom_windowed_locks_held(const sbloom_t *f);
/* A windowed filter over the file mapped at base (size bytes, header h validated), used in place:
 * the record's clock and counts, the lines' image (files of G <= 3: SBLOOM_E_LAYOUT for others).
 * The filter unmaps it when freed (synced first when writable and not shared). */
int sbloom_windowed_map(sbloom_t **out, uint8_t *base, uint64_t size, const sbloom_header *h,
                        int writable);
/* Such a mapping made concurrent across processes: the stripe locks and the clock's lock in
 * path's lock file, each holding its holder's process ID. */
int sbloom_windowed_share(sbloom_t *f, const char *path);

#endif /* SIMDBLOOM_MODES_H */
