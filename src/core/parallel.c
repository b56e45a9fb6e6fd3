/*
 * Parallel batches (sbloom_set_threads): one batch spread over several threads, with results
 * identical to the serial call's.
 *
 * Thread t owns the blocks [t * B / T, (t + 1) * B / T) of the runner's core. It walks the whole
 * batch in input order, gathers the keys whose block it owns into a small buffer, runs the chunk
 * function on the buffer and scatters the answers back to their input positions. No two threads
 * touch one block, so the plain kernels need no atomics, and each block sees its keys in input
 * order, exactly as in the serial call: a key repeated in the batch is new only at its first
 * occurrence. The chunk function is the mode's own (the concurrent mode's locked test-and-add
 * too), never the plain kernel behind its back. String and integer keys are first hashed in
 * parallel (each thread a contiguous range of the batch) into one array.
 *
 * A fingerprint core's lookups split the same way (nothing is written, so the spare lines its
 * lines share are only read). Its adds and removes run on one thread: an add may move keys to the
 * shared spare lines. (Adding each key that keeps to its line on its line's owner, and the rest
 * after them on one thread, gives the serial answers, but with a one-key kernel call a key it was
 * slower than one thread: docs/notes/fingerprints.md.)
 */
#include <pthread.h>

#include "driver.h"

/* Keys gathered per chunk call. */
#define PIECE 1024

typedef struct part {
    const sbloom_runner *r;
    sbloom_batch_op op;
    const uint64_t *hashes;
    size_t n;
    uint8_t *results;
    uint64_t first_block, end_block; /* the blocks this part owns */
    uint64_t count;
    /* hashing phase: keys [key_from, key_to) of the source into hash_out */
    const sbloom_key_source *source;
    uint64_t *hash_out;
    size_t key_from, key_to;
} part;

/* The chunk function over m gathered keys; their answers go back to their input positions. */
static void flush(part *p, const uint64_t *gathered, const size_t *where, size_t m)
{
    uint8_t answers[PIECE];
    p->count += p->r->run(p->r->ctx, p->op, gathered, m, p->results ? answers : NULL);
    if (p->results)
        for (size_t j = 0; j < m; j++)
            p->results[where[j]] = answers[j];
}

static void run_part(part *p)
{
    uint64_t gathered[PIECE]; /* slot m is written for every key, kept only for ours */
    size_t where[PIECE];
    size_t m = 0;
    uint64_t nblocks = p->r->core->nblocks;
    uint64_t width = p->end_block - p->first_block;
    for (size_t i = 0; i < p->n; i++) {
        /* Branch-free: every key is written to the next slot, which only advances for the keys
         * this part owns (a branch on that would be mispredicted for half of all keys). */
        uint64_t block = sbk_block_index(p->hashes[i], nblocks);
        gathered[m] = p->hashes[i];
        where[m] = i;
        m += block - p->first_block < width; /* unsigned: also false below first_block */
        if (m == PIECE) {
            flush(p, gathered, where, m);
            m = 0;
        }
    }
    if (m)
        flush(p, gathered, where, m);
}

static void *probe_thread(void *arg)
{
    run_part(arg);
    return NULL;
}

static void *hash_thread(void *arg)
{
    part *p = arg;
    sbloom_hash_source(p->r->layout, p->source, p->key_from, p->key_to - p->key_from,
                       p->hash_out + p->key_from);
    return NULL;
}

unsigned sbloom_parallel_threads(const sbloom_runner *r, sbloom_batch_op op, size_t n)
{
    if (op != SBLOOM_OP_CONTAINS && sbloom_family_of(r->layout)->moves_entries)
        return 1; /* (above) */
    /* a mode of several cores walks them itself, a chunk at a time */
    return n >= SBLOOM_PARALLEL_MIN_KEYS && r->threads > 1 && r->core ? r->threads : 1;
}

/* Runs fn over parts[0..t): parts 1.. in new threads, part 0 here; the parts a thread could not
 * be created for run here too. */
static void run_all(part *parts, unsigned t, void *(*fn)(void *))
{
    pthread_t ids[SBLOOM_MAX_THREADS];
    int started[SBLOOM_MAX_THREADS] = {0};
    for (unsigned i = 1; i < t; i++)
        started[i] = pthread_create(&ids[i], NULL, fn, &parts[i]) == 0;
    fn(&parts[0]);
    for (unsigned i = 1; i < t; i++) {
        if (started[i])
            pthread_join(ids[i], NULL);
        else
            fn(&parts[i]);
    }
}

uint64_t sbloom_parallel_run(const sbloom_runner *r, sbloom_batch_op op, const uint64_t *hashes,
                             size_t n, uint8_t *results, unsigned t)
{
    part parts[SBLOOM_MAX_THREADS];
    uint64_t nblocks = r->core->nblocks;
    for (unsigned i = 0; i < t; i++) {
        parts[i] = (part){.r = r, .op = op, .hashes = hashes, .n = n, .results = results};
        parts[i].first_block = nblocks * i / t;
        parts[i].end_block = nblocks * (i + 1) / t;
    }
    run_all(parts, t, probe_thread);
    uint64_t count = 0;
    for (unsigned i = 0; i < t; i++)
        count += parts[i].count;
    return count;
}

void sbloom_parallel_hash(const sbloom_runner *r, const sbloom_key_source *src, size_t n,
                          uint64_t *out, unsigned t)
{
    part parts[SBLOOM_MAX_THREADS];
    for (unsigned i = 0; i < t; i++) {
        parts[i] = (part){.r = r, .source = src, .hash_out = out};
        parts[i].key_from = n * i / t;
        parts[i].key_to = n * (i + 1) / t;
    }
    run_all(parts, t, hash_thread);
}
