/*
 * The seed-000 scenario: a crawler meets n distinct URLs one after another and asks the visited
 * table of each "seen before? if not, remember it". The document sizes the table at 200 MB for
 * its example; here n URLs at bits_per_url bits each (50M at 32 bits = 200 MB). URLs are made in
 * batches by the generator (untimed); hashing and test-and-add are timed.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "../src/cli/urlgen.h"

#define BATCH 65536

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct url_batch {
    char *text;
    const void *keys[BATCH];
    size_t lens[BATCH];
} url_batch;

static size_t make_batch(url_batch *b, uint64_t seed, uint64_t first, size_t count)
{
    url_buffer u;
    size_t offset = 0;
    for (size_t i = 0; i < count; i++) {
        url_make(seed, first + i, &u);
        memcpy(b->text + offset, u.text, u.len - 1);
        b->keys[i] = b->text + offset;
        b->lens[i] = u.len - 1;
        offset += u.len - 1;
    }
    return count;
}

int bench_crawl(uint64_t n, double bits_per_url, bench_crawl_result *out)
{
    memset(out, 0, sizeof *out);
    sbloom_t *visited;
    uint64_t bytes = (uint64_t)((double)n * bits_per_url / 8.0);
    /* 16 bits per key suit the document's 32 bits per URL best (see docs/SIZING.md). */
    int rc = sbloom_create_bytes(&visited, bytes, SBLOOM_LAYOUT_BLOCK512_K16);
    if (rc != SBLOOM_OK)
        return rc;
    url_batch *b = malloc(sizeof *b);
    uint8_t *is_new = malloc(BATCH);
    if (b)
        b->text = malloc((size_t)BATCH * sizeof(((url_buffer *)0)->text));
    if (!b || !b->text || !is_new) {
        sbloom_free(visited);
        free(b ? b->text : NULL);
        free(b);
        free(is_new);
        return SBLOOM_E_NOMEM;
    }
    double seconds = 0.0;
    uint64_t wrongly_seen = 0;
    for (uint64_t first = 0; first < n; first += BATCH) {
        size_t count = make_batch(b, 11, first, n - first < BATCH ? (size_t)(n - first) : BATCH);
        double t0 = now();
        int64_t fresh = sbloom_add_if_new_keys(visited, b->keys, b->lens, count, is_new);
        seconds += now() - t0;
        wrongly_seen += count - (uint64_t)fresh; /* every URL is distinct */
    }
    /* Unseen URLs afterwards: another stream of the generator. */
    uint64_t probes = 0, positives = 0;
    for (uint64_t first = 0; first < 1000000; first += BATCH) {
        size_t count = make_batch(b, 12, first, BATCH);
        positives += (uint64_t)sbloom_contains_keys(visited, b->keys, b->lens, count, NULL);
        probes += count;
    }
    out->seconds = seconds;
    out->fpp_during = (double)wrongly_seen / (double)n;
    out->fpp_after = (double)positives / (double)probes;
    out->bytes = sbloom_bytes(visited);
    out->isa = sbloom_filter_isa(visited);
    out->layout = sbloom_layout_name(sbloom_get_layout(visited));
    sbloom_free(visited);
    free(b->text);
    free(b);
    free(is_new);
    return SBLOOM_OK;
}
