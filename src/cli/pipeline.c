/*
 * A mapped input file on several threads. The file is cut into pieces of about PIECE_BYTES of
 * whole lines, taken in order; any thread splits a piece into lines and hashes their keys
 * (prepare_lines) in a slot of its own, and the calling thread hands the slots to the command
 * (fn: the filter step and the output) strictly in the pieces' order, so output order and "first
 * occurrence wins" are those of one thread. While the piece next in order is not ready, the
 * calling thread prepares one itself: with one thread it alternates, one piece at a time, and
 * each piece is split, hashed, probed and written while its lines are still in the cache.
 *
 * Slots: piece i goes to slot i % nslots, taken when the piece before it in that slot was handed
 * over. The lines point into the mapping, which lasts until the reader is closed.
 */
#define _DEFAULT_SOURCE /* madvise, MADV_DONTNEED */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stream.h"
#include "newlines.h"

/* About 14,000 URL lines: a piece's lines, keys and hashes stay in a 2 MiB L2 cache while it
 * is probed and written. */
#define PIECE_BYTES (1u << 20)
/* Bytes of pieces handed over whose pages leave the process at once (release_pages): a madvise
 * for each 1 MiB piece cost a TLB flush on every other CPU of the process each time (seed 000's
 * 50M URLs on 2 threads: 0.95 s, 0.90 s this way; docs/notes/dedup.md), for 12 MB more resident. */
#define RELEASE_BYTES ((size_t)16 << 20)
#define PREPARE_RUN 2048 /* lines split, then hashed, at a time (prepare) */
/* Lines a call of fn gets at most (dedup's batch arrays hold this many). */
#define FN_LINES 65536
#define MAX_WORKERS 31

enum { SLOT_FREE, SLOT_TAKEN, SLOT_READY };

typedef struct slot {
    int state;
    int failed;        /* memory ran out while preparing it */
    uint64_t piece;    /* which piece it holds */
    const char *begin; /* the piece: whole lines */
    size_t len;
    uint64_t read_after;        /* the reader's bytes_read once the piece was taken */
    const char **lines, **keys; /* keys: the lines themselves without --normalize */
    const char **normal_keys;   /* under --normalize: room for the keys */
    size_t *lens, *key_lens;
    uint64_t *hashes;
    size_t n, cap;
    key_room room;
} slot;

typedef struct pipeline {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    line_reader *reader;
    const stream_state *s;
    slot *slots;
    unsigned nslots;
    uint64_t next_taken, next_handed; /* pieces taken from the reader; handed to fn */
    int input_done;                   /* no whole line left in the mapping */
    int stopping;                     /* the calling thread is done: workers leave */
} pipeline;

/* Grows a slot's line arrays to hold cap lines (and their keys, under --normalize); 0 or -1. */
static int slot_grow(slot *sl, size_t cap, int normalize)
{
    const char **lines = realloc(sl->lines, cap * sizeof *lines);
    if (lines)
        sl->lines = lines;
    const char **keys = normalize ? realloc(sl->normal_keys, cap * sizeof *keys) : NULL;
    if (keys)
        sl->normal_keys = keys;
    size_t *lens = realloc(sl->lens, cap * sizeof *lens);
    if (lens)
        sl->lens = lens;
    size_t *key_lens = realloc(sl->key_lens, cap * sizeof *key_lens);
    if (key_lens)
        sl->key_lens = key_lens;
    uint64_t *hashes = realloc(sl->hashes, cap * sizeof *hashes);
    if (hashes)
        sl->hashes = hashes;
    if (!lines || (normalize && !keys) || !lens || !key_lens || !hashes)
        return -1;
    sl->cap = cap;
    return 0;
}

/* Splits the slot's piece into lines and hashes their keys (outside the lock). */
static void prepare(const stream_state *s, slot *sl)
{
    size_t at = 0;
    sl->n = 0;
    sl->failed = 0;
    if (sl->cap == 0 && slot_grow(sl, 16384, s->normalize) < 0) {
        sl->failed = 1;
        return;
    }
    /* Without --normalize, each run of PREPARE_RUN lines is hashed as soon as it is split, while
     * its bytes are still in the L1/L2 cache (a key is its line: nothing kept between runs). */
    size_t run = s->normalize ? SIZE_MAX : PREPARE_RUN;
    for (;;) {
        size_t used = 0, first = sl->n;
        size_t room = sl->cap - sl->n < run ? sl->cap - sl->n : run;
        if (s->normalize) {
            sl->n += split_lines(sl->begin + at, sl->len - at, sl->lines + sl->n, sl->lens + sl->n,
                                 room, &used);
        } else { /* the keys' lengths come with the split (without a trailing CR) */
            sl->n += split_keys(sl->begin + at, sl->len - at, sl->lines + sl->n, sl->lens + sl->n,
                                sl->key_lens + sl->n, room, &used);
            hash_line_keys(s, sl->lines + first, sl->key_lens + first, sl->hashes + first,
                           sl->n - first);
        }
        at += used;
        if (at == sl->len)
            break;
        if (sl->n == sl->cap && slot_grow(sl, 2 * sl->cap, s->normalize) < 0) {
            sl->failed = 1;
            return;
        }
    }
    sl->keys = !s->normalize ? sl->lines
                             : prepare_lines(s, 1, sl->lines, sl->lens, sl->normal_keys,
                                             sl->key_lens, sl->hashes, sl->n, &sl->room);
    sl->failed = !sl->keys;
}

/* Under the lock: takes the next piece into its slot when that slot is free. The slot, or
 * NULL (none free, or the input is done). */
static slot *take_piece(pipeline *p)
{
    slot *sl = &p->slots[p->next_taken % p->nslots];
    if (p->input_done || p->stopping || sl->state != SLOT_FREE)
        return NULL;
    if (!line_reader_take(p->reader, &sl->begin, &sl->len, PIECE_BYTES)) {
        p->input_done = 1;
        pthread_cond_broadcast(&p->changed);
        return NULL;
    }
    sl->state = SLOT_TAKEN;
    sl->piece = p->next_taken++;
    sl->read_after = p->reader->bytes_read;
    return sl;
}

/* Under the lock, returning under it: prepares a taken slot and marks it ready. */
static void prepare_taken(pipeline *p, slot *sl)
{
    pthread_mutex_unlock(&p->lock);
    prepare(p->s, sl);
    pthread_mutex_lock(&p->lock);
    sl->state = SLOT_READY;
    pthread_cond_broadcast(&p->changed);
}

static void *worker(void *arg)
{
    pipeline *p = arg;
    pthread_mutex_lock(&p->lock);
    while (!p->stopping && !p->input_done) {
        slot *sl = take_piece(p);
        if (sl)
            prepare_taken(p, sl);
        else if (!p->input_done)
            pthread_cond_wait(&p->changed, &p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* The pages wholly inside pieces handed over leave this process's memory (the file's pages stay
 * in the page cache): the resident size stays that of the pieces in flight, not of the file. */
static void release_pages(const char *begin, size_t len)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t from = ((uintptr_t)begin + page - 1) & ~(page - 1);
    uintptr_t to = ((uintptr_t)begin + len) & ~(page - 1);
    if (to > from)
        madvise((void *)from, to - from, MADV_DONTNEED); /* a hint: failure is harmless */
}

/* Hands a ready slot's lines to fn, FN_LINES at a time (outside the lock). */
static int hand_over(stream_state *s, slot *sl, uint64_t bytes_before, line_batch_fn fn, void *ctx,
                     const char **unreleased)
{
    if (sl->failed) {
        fprintf(stderr, "simdbloom: out of memory\n");
        return EXIT_RUNTIME;
    }
    for (size_t at = 0; at < sl->n; at += FN_LINES) {
        size_t n = sl->n - at < FN_LINES ? sl->n - at : FN_LINES;
        line_batch batch = {
            sl->lines + at, sl->keys + at, sl->lens + at, sl->key_lens + at, sl->hashes + at, n, 1};
        int rc = fn(ctx, &batch);
        if (rc != EXIT_OK)
            return rc;
        s->lines += (uint64_t)n;
    }
    /* its lines are out (fn flushes what it wrote); its pages go with those of the pieces before
     * it, RELEASE_BYTES at a time */
    const char *end = sl->begin + sl->len;
    if (!*unreleased)
        *unreleased = sl->begin;
    if ((size_t)(end - *unreleased) >= RELEASE_BYTES) {
        release_pages(*unreleased, (size_t)(end - *unreleased));
        *unreleased = end;
    }
    s->bytes = bytes_before + sl->read_after;
    if (s->progress)
        stream_progress(s, 0);
    return line_reader_stop_requested() ? EXIT_STOPPED : EXIT_OK;
}

int pipeline_run(line_reader *r, stream_state *s, line_batch_fn fn, void *ctx)
{
    unsigned workers = s->threads > 1 ? s->threads - 1 : 0;
    if (workers > MAX_WORKERS)
        workers = MAX_WORKERS;
    pipeline p = {.reader = r, .s = s, .nslots = 2 * workers + 2};
    p.slots = calloc(p.nslots, sizeof *p.slots);
    if (!p.slots) {
        fprintf(stderr, "simdbloom: out of memory\n");
        return EXIT_RUNTIME;
    }
    pthread_mutex_init(&p.lock, NULL);
    pthread_cond_init(&p.changed, NULL);
    pthread_t ids[MAX_WORKERS];
    unsigned started = 0;
    sigset_t mask;
    stop_signals_hold(&mask); /* (the workers take no stop signal: the main thread does) */
    while (started < workers && pthread_create(&ids[started], NULL, worker, &p) == 0)
        started++; /* fewer threads to be had: fewer work */
    stop_signals_release(&mask);
    uint64_t bytes_before = s->bytes;
    const char *unreleased = NULL; /* the mapping's bytes handed over whose pages stay resident */
    int rc = EXIT_OK;
    pthread_mutex_lock(&p.lock);
    for (;;) {
        slot *next = &p.slots[p.next_handed % p.nslots];
        if (next->state == SLOT_READY && next->piece == p.next_handed) {
            pthread_mutex_unlock(&p.lock);
            rc = hand_over(s, next, bytes_before, fn, ctx, &unreleased);
            pthread_mutex_lock(&p.lock);
            next->state = SLOT_FREE;
            p.next_handed++;
            pthread_cond_broadcast(&p.changed);
            if (rc != EXIT_OK)
                break;
            continue;
        }
        slot *sl = take_piece(&p);
        if (sl)
            prepare_taken(&p, sl);
        else if (p.input_done && p.next_handed == p.next_taken)
            break; /* every piece handed over */
        else
            pthread_cond_wait(&p.changed, &p.lock);
    }
    p.stopping = 1;
    pthread_cond_broadcast(&p.changed);
    pthread_mutex_unlock(&p.lock);
    for (unsigned i = 0; i < started; i++)
        pthread_join(ids[i], NULL);
    size_t buffers = 0;
    for (unsigned i = 0; i < p.nslots; i++) {
        slot *sl = &p.slots[i];
        buffers += sl->cap * ((1 + (s->normalize != 0)) * sizeof(char *) + 2 * sizeof(size_t) +
                              sizeof(uint64_t)) +
                   sl->room.scratch_cap + sl->room.offsets_cap * sizeof(size_t);
        free(sl->lines);
        free(sl->normal_keys);
        free(sl->lens);
        free(sl->key_lens);
        free(sl->hashes);
        key_room_free(&sl->room);
    }
    if (s->buffer_bytes < buffers)
        s->buffer_bytes = buffers;
    free(p.slots);
    pthread_cond_destroy(&p.changed);
    pthread_mutex_destroy(&p.lock);
    return rc;
}
