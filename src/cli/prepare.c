/*
 * The keys of a batch of lines and their hashes: each key is its line without a trailing CR, or
 * that line's normal form under --normalize url, hashed as the command's filter hashes keys. The
 * batch is cut into one contiguous slice a thread.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "stream.h"
#include "newlines.h"
#include "normalize.h"

#define MAX_THREADS 32

/* A batch being prepared: keys normalized (under --normalize url) and hashed, the lines split
 * into one contiguous slice per thread. */
typedef struct batch_job {
    const stream_state *s;
    const char **lines, **keys;
    size_t *key_lens, *offsets;
    uint64_t *hashes;
    char *scratch;
    size_t first, last;
} batch_job;

static void *prepare_slice(void *arg)
{
    batch_job *job = arg;
    if (job->s->normalize) {
        for (size_t i = job->first; i < job->last; i++) {
            char *out = job->scratch + job->offsets[i];
            size_t len = url_normalize(job->lines[i], job->key_lens[i], out);
            if (len > 0) {
                job->keys[i] = out;
                job->key_lens[i] = len;
            }
        }
    }
    sbloom_hash_keys(job->s->filter, (const void *const *)(job->keys + job->first),
                     job->key_lens + job->first, job->last - job->first, job->hashes + job->first);
    return NULL;
}

/* Grows *room to hold n elements of size bytes; 0, or -1 when memory runs out. */
static int grow(void **room, size_t *cap, size_t n, size_t size)
{
    if (n <= *cap)
        return 0;
    size_t want = n > 2 * *cap ? n : 2 * *cap;
    void *grown = realloc(*room, want * size);
    if (!grown)
        return -1;
    *room = grown;
    *cap = want;
    return 0;
}

const char **prepare_lines(const stream_state *s, unsigned threads, const char **lines,
                           const size_t *lens, const char **keys, size_t *key_lens,
                           uint64_t *hashes, size_t n, key_room *room)
{
    for (size_t i = 0; i < n; i++)
        key_lens[i] = line_key_length(lines[i], lens[i]);
    if (!s->normalize)
        keys = lines; /* a key begins where its line does */
    else { /* a line that is not a URL is its own key; each key's room in the scratch buffer:
            * its length + 1 */
        memcpy(keys, lines, n * sizeof *keys);
        if (grow((void **)&room->offsets, &room->offsets_cap, n, sizeof *room->offsets) < 0)
            return NULL;
        size_t need = 0;
        for (size_t i = 0; i < n; i++) {
            room->offsets[i] = need;
            need += key_lens[i] + 1;
        }
        if (grow((void **)&room->scratch, &room->scratch_cap, need, 1) < 0)
            return NULL;
    }
    if (threads < 1 || n < 1024)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    batch_job jobs[MAX_THREADS];
    pthread_t ids[MAX_THREADS];
    unsigned started = 0;
    for (unsigned t = 0; t < threads; t++) {
        jobs[t] = (batch_job){s,
                              lines,
                              keys,
                              key_lens,
                              room->offsets,
                              hashes,
                              room->scratch,
                              n * t / threads,
                              n * (t + 1) / threads};
        sigset_t mask;
        if (t > 0)
            stop_signals_hold(&mask); /* (a thread takes no stop signal: the main thread does) */
        if (t > 0 && pthread_create(&ids[t], NULL, prepare_slice, &jobs[t]) == 0)
            started |= 1u << t;
        else if (t > 0)
            prepare_slice(&jobs[t]); /* no thread to be had: do it here */
        if (t > 0)
            stop_signals_release(&mask);
    }
    prepare_slice(&jobs[0]);
    for (unsigned t = 1; t < threads; t++)
        if (started & (1u << t))
            pthread_join(ids[t], NULL);
    return keys;
}

void hash_line_keys(const stream_state *s, const char *const *lines, const size_t *key_lens,
                    uint64_t *hashes, size_t n)
{
    sbloom_hash_keys(s->filter, (const void *const *)lines, key_lens, n, hashes);
}

void key_room_free(key_room *room)
{
    free(room->scratch);
    free(room->offsets);
    memset(room, 0, sizeof *room);
}
