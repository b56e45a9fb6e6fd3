/*
 * Many threads and processes on one filter (sbloom_set_concurrent, SBLOOM_OPEN_CONCURRENT),
 * parallel batches (sbloom_set_threads) and sharding (sbloom_shard).
 *
 * The stress part runs THREADS threads at once on one concurrent filter of each bit layout:
 * each test-and-adds one shared key set (in its own order and batch sizes), plain-adds keys of
 * its own, and looks up keys added before the threads started. It requires no false negative,
 * every shared key reported new at most once (and zero times only for the few false positives a
 * plan of 1e-3 allows), and an item count that lost nothing, and once every thread has
 * returned, no lock word still held (a lock a retry path forgot to release would otherwise hang a
 * later batch only when a preemption happens to land there). ci/test runs it under
 * ThreadSanitizer too. Run per instruction set through per_isa.sh (SIMDBLOOM_ISA).
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "simdbloom.h"
#include "check.h"

/* Test hooks of the static library: the lock words a concurrent filter holds now
 * (src/api/create.c), and a process killed at a fault point (src/base/fault.h). */
uint64_t sbloom_test_locks_held(const sbloom_t *f);
int sbloom_test_fault_arm(const char *site, long k);

#define THREADS 4
#define SHARED_KEYS 40000
#define OWN_KEYS 8000
#define EARLIER_KEYS 15000
#define ROUNDS 2

typedef struct worker {
    sbloom_t *f;
    int id;
    const uint64_t *shared;
    uint8_t *news; /* SHARED_KEYS answers of this thread */
    const uint64_t *earlier;
    uint64_t own[OWN_KEYS];
    uint64_t own_fresh;
    uint64_t missed_earlier, missed_own;
    pthread_barrier_t *start;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    uint64_t state = 1000 + (uint64_t)w->id;
    pthread_barrier_wait(w->start);
    size_t i = (size_t)w->id * SHARED_KEYS / THREADS, done = 0, own_done = 0;
    while (done < SHARED_KEYS) {
        /* test-and-add: one key through the single-key call, or a batch of 2 to 300 */
        size_t len = 1 + test_rand(&state) % 300;
        if (len > SHARED_KEYS - done)
            len = SHARED_KEYS - done;
        if (i + len > SHARED_KEYS)
            len = SHARED_KEYS - i;
        if (len == 1) {
            int r = sbloom_add_hash(w->f, w->shared[i]);
            w->news[i] = (uint8_t)(r == 1);
        } else {
            sbloom_add_if_new_hashes(w->f, w->shared + i, len, w->news + i);
        }
        i = (i + len) % SHARED_KEYS;
        done += len;
        /* a plain (lock-free) add of some keys of its own */
        size_t own_len = OWN_KEYS - own_done < 64 ? OWN_KEYS - own_done : 64;
        w->own_fresh += (uint64_t)sbloom_add_hashes(w->f, w->own + own_done, own_len);
        own_done += own_len;
        /* keys added before the threads started are always found */
        size_t at = test_rand(&state) % (EARLIER_KEYS - 256);
        w->missed_earlier +=
            256 - (uint64_t)sbloom_contains_hashes(w->f, w->earlier + at, 256, NULL);
        w->missed_earlier += sbloom_contains_hash(w->f, w->earlier[at]) != 1;
    }
    if (own_done < OWN_KEYS)
        w->own_fresh += (uint64_t)sbloom_add_hashes(w->f, w->own + own_done, OWN_KEYS - own_done);
    /* its own adds have returned: all found */
    w->missed_own = OWN_KEYS - (uint64_t)sbloom_contains_hashes(w->f, w->own, OWN_KEYS, NULL);
    return NULL;
}

/* The clock of a windowed filter moved one period at a time, up to `last`, while the workers
 * run: a short pause between steps, so that the rotations fall among their adds and lookups. */
typedef struct rotator {
    sbloom_t *f;
    uint64_t period, last;
    uint64_t steps;
} rotator;

static void *rotate(void *arg)
{
    rotator *r = arg;
    for (uint64_t q = 1; q <= r->last; q++) {
        struct timespec pause = {0, 300000}; /* 0.3 ms */
        nanosleep(&pause, NULL);
        r->steps += sbloom_advance(r->f, q * r->period + q % r->period) == SBLOOM_OK;
    }
    return NULL;
}

/* The stress run on concurrent filter f: THREADS workers (above), and a rotator with them when
 * one is given. Checks exactly once (no key new twice, at most `never_max` new in none), no false
 * negative, and the item count; hands the earlier keys to `after` (if any) before freeing them. */
static void run_stress(sbloom_t *f, uint64_t seed, rotator *rot, uint64_t never_max,
                       void (*after)(sbloom_t *f, const uint64_t *earlier, size_t n))
{
    uint64_t *shared = malloc(SHARED_KEYS * sizeof *shared);
    uint64_t *earlier = malloc(EARLIER_KEYS * sizeof *earlier);
    uint8_t *news = calloc((size_t)THREADS * SHARED_KEYS, 1);
    worker *w = calloc(THREADS, sizeof *w);
    for (size_t i = 0; i < SHARED_KEYS; i++)
        shared[i] = test_rand(&seed);
    for (size_t i = 0; i < EARLIER_KEYS; i++)
        earlier[i] = test_rand(&seed);
    uint64_t earlier_fresh = (uint64_t)sbloom_add_hashes(f, earlier, EARLIER_KEYS);

    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, THREADS);
    pthread_t ids[THREADS], rotator_id;
    if (rot)
        CHECK(pthread_create(&rotator_id, NULL, rotate, rot) == 0);
    for (int t = 0; t < THREADS; t++) {
        w[t] = (worker){.f = f,
                        .id = t,
                        .shared = shared,
                        .news = news + (size_t)t * SHARED_KEYS,
                        .earlier = earlier,
                        .start = &start};
        for (size_t i = 0; i < OWN_KEYS; i++)
            w[t].own[i] = test_rand(&seed);
        CHECK(pthread_create(&ids[t], NULL, work, &w[t]) == 0);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(ids[t], NULL);
    if (rot)
        pthread_join(rotator_id, NULL);
    pthread_barrier_destroy(&start);

    uint64_t twice = 0, never = 0, reported = 0, own_fresh = 0, missed = 0;
    for (size_t i = 0; i < SHARED_KEYS; i++) {
        unsigned times = 0;
        for (int t = 0; t < THREADS; t++)
            times += news[(size_t)t * SHARED_KEYS + i];
        twice += times > 1;
        never += times == 0;
        reported += times;
    }
    for (int t = 0; t < THREADS; t++) {
        missed += w[t].missed_earlier + w[t].missed_own;
        own_fresh += w[t].own_fresh;
    }
    CHECK(twice == 0);                     /* exactly once ... */
    CHECK(never <= never_max);             /* ... but for false positives */
    CHECK(missed == 0);                    /* no false negative during the run */
    CHECK(sbloom_test_locks_held(f) == 0); /* every lock released */
    CHECK(sbloom_contains_hashes(f, shared, SHARED_KEYS, NULL) == SHARED_KEYS);
    CHECK(sbloom_contains_hashes(f, earlier, EARLIER_KEYS, NULL) == EARLIER_KEYS);
    /* every add's count reached the item counter (distinct keys: none counted twice) */
    CHECK_EQ_U64(sbloom_items(f), earlier_fresh + reported + own_fresh);
    if (twice || never > never_max || missed)
        fprintf(stderr, "  layout %d on %s: %llu twice, %llu never, %llu missed\n",
                (int)sbloom_get_layout(f), sbloom_filter_isa(f), (unsigned long long)twice,
                (unsigned long long)never, (unsigned long long)missed);
    if (after)
        after(f, earlier, EARLIER_KEYS);
    free(shared);
    free(earlier);
    free(news);
    free(w);
}

static void stress(sbloom_layout layout, uint64_t seed)
{
    sbloom_t *f = NULL;
    CHECK(sbloom_create_for_layout(&f, 200000, 1e-3, layout) == SBLOOM_OK);
    if (!f)
        return;
    CHECK(sbloom_set_concurrent(f, 1) == SBLOOM_OK);
    CHECK(sbloom_is_concurrent(f) == 1);
    run_stress(f, seed, NULL, 120, NULL); /* never: about 40,000 x 1e-3 at most */
    sbloom_free(f);
}

/* After a window's stress run: one period more and the keys of period 0 (the earlier ones) are
 * gone, all but false positives. */
static double window_rate;
static void window_forgets(sbloom_t *f, const uint64_t *earlier, size_t n)
{
    sbloom_window w = sbloom_window_init();
    CHECK(sbloom_get_window(f, &w) == SBLOOM_OK);
    CHECK(sbloom_advance(f, (w.periods + 1) * w.period) == SBLOOM_OK);
    CHECK(sbloom_contains_hashes(f, earlier, n, NULL) <=
          (int64_t)((double)n * window_rate * 3 + 20));
}

/*
 * A windowed filter in concurrent mode: the workers above (exactly once, no false negative, the
 * count) while one more thread rotates its generations. The rotations stop at period `last`
 * <= G, so no key of the test falls out of the window: every answer the serial filter would give
 * must come, whatever the rotation raced.
 */
static void window_stress(uint32_t periods, double p, uint64_t seed, int ages)
{
    sbloom_t *f = NULL;
    /* 100,000 keys a generation: room for all the test's keys in any one of them */
    sbloom_opts o = sbloom_opts_init();
    o.expected = 100000 * (uint64_t)periods;
    o.fpp = p;
    o.periods = periods;
    o.period = 1000;
    o.flags = ages ? SBLOOM_OPTS_ANY_FAMILY : 0; /* (the ages form where it is smaller) */
    CHECK(sbloom_create_opts(&f, &o) == SBLOOM_OK);
    if (!f)
        return;
    CHECK(ages == (sbloom_stages(f) == 0)); /* (the ages form has no generations as stages) */
    CHECK(sbloom_set_concurrent(f, 1) == SBLOOM_OK && sbloom_is_concurrent(f) == 1);
    rotator r = {.f = f, .period = 1000, .last = periods};
    window_rate = p;
    run_stress(f, seed, &r, (uint64_t)(SHARED_KEYS * p * 3 + 20), window_forgets);
    sbloom_window win = sbloom_window_init();
    CHECK(r.steps == periods && sbloom_get_window(f, &win) == SBLOOM_OK &&
          win.now == (win.periods + 1) * win.period);
    sbloom_free(f);
}

/*
 * Batches longer than 65,536 keys (past any 16-bit index or count of a round): THREADS threads
 * each test-and-add all BIG_KEYS shared keys in one call on a concurrent filter `f`, the even
 * ones first to last (racing each other key by key), the odd ones last to first. Exactly once,
 * no false negative, the count.
 */
#define BIG_KEYS 100000
typedef struct big_job {
    sbloom_t *f;
    const uint64_t *keys; /* this thread's order of the shared keys */
    uint8_t *news;
    int64_t fresh;
    pthread_barrier_t *start;
} big_job;

static void *big_work(void *arg)
{
    big_job *j = arg;
    pthread_barrier_wait(j->start);
    j->fresh = sbloom_add_if_new_hashes(j->f, j->keys, BIG_KEYS, j->news);
    return NULL;
}

static void big_batches(sbloom_t *f, uint64_t seed, uint64_t never_max)
{
    uint64_t *keys = malloc((size_t)THREADS * BIG_KEYS * sizeof *keys);
    uint8_t *news = calloc((size_t)THREADS * BIG_KEYS, 1);
    uint64_t *one = keys; /* thread 0's order */
    for (size_t i = 0; i < BIG_KEYS; i++)
        one[i] = test_rand(&seed);
    for (int t = 1; t < THREADS; t++)
        for (size_t i = 0; i < BIG_KEYS; i++)
            keys[(size_t)t * BIG_KEYS + i] = one[t % 2 ? BIG_KEYS - 1 - i : i];
    uint64_t before = sbloom_items(f);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, THREADS);
    pthread_t ids[THREADS];
    big_job jobs[THREADS];
    for (int t = 0; t < THREADS; t++) {
        jobs[t] = (big_job){f, keys + (size_t)t * BIG_KEYS, news + (size_t)t * BIG_KEYS, 0, &start};
        CHECK(pthread_create(&ids[t], NULL, big_work, &jobs[t]) == 0);
    }
    int64_t reported = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(ids[t], NULL);
        CHECK(jobs[t].fresh >= 0);
        reported += jobs[t].fresh;
    }
    pthread_barrier_destroy(&start);
    uint64_t twice = 0, never = 0, answered = 0;
    for (size_t i = 0; i < BIG_KEYS; i++) {
        unsigned times = 0;
        for (int t = 0; t < THREADS; t++) /* key one[i] in t's order */
            times += news[(size_t)t * BIG_KEYS + (t % 2 ? BIG_KEYS - 1 - i : i)];
        twice += times > 1;
        never += times == 0;
        answered += times;
    }
    CHECK(twice == 0);
    CHECK(never <= never_max);
    CHECK(sbloom_test_locks_held(f) == 0);
    CHECK_EQ_U64(answered, (uint64_t)reported); /* the answers and the returns agree */
    CHECK(sbloom_contains_hashes(f, one, BIG_KEYS, NULL) == BIG_KEYS);
    CHECK_EQ_U64(sbloom_items(f), before + (uint64_t)reported);
    if (twice || never > never_max)
        fprintf(stderr, "  big batches, layout %d on %s: %llu twice, %llu never\n",
                (int)sbloom_get_layout(f), sbloom_filter_isa(f), (unsigned long long)twice,
                (unsigned long long)never);
    free(keys);
    free(news);
}

static void big_batches_of(sbloom_layout layout, uint64_t seed)
{
    sbloom_t *f = NULL;
    CHECK(sbloom_create_for_layout(&f, 2 * BIG_KEYS, 1e-3, layout) == SBLOOM_OK);
    if (!f)
        return;
    CHECK(sbloom_set_concurrent(f, 1) == SBLOOM_OK);
    big_batches(f, seed, 300); /* never: about 100,000 x 1e-3 at most */
    sbloom_free(f);
}

static void big_batches_windowed(uint64_t seed)
{
    sbloom_t *f = NULL;
    CHECK(sbloom_create_windowed(&f, 4 * (uint64_t)BIG_KEYS, 1e-3, 3, 1000, 0) == SBLOOM_OK);
    if (!f)
        return;
    CHECK(sbloom_set_concurrent(f, 1) == SBLOOM_OK);
    big_batches(f, seed, 300);
    sbloom_free(f);
}

/* One thread: a concurrent filter answers batches (large ones in rounds, repeats inside them,
 * single keys) as the plain filter does, bit for bit. */
static void matches_plain(sbloom_layout layout, uint64_t seed)
{
    enum { KEYS = 30000 };
    sbloom_t *plain = NULL, *conc = NULL;
    CHECK(sbloom_create_for_layout(&plain, 3 * KEYS, 1e-3, layout) == SBLOOM_OK);
    CHECK(sbloom_create_for_layout(&conc, 3 * KEYS, 1e-3, layout) == SBLOOM_OK);
    uint64_t *keys = malloc(KEYS * sizeof *keys);
    uint8_t *want = malloc(KEYS), *got = malloc(KEYS);
    if (!plain || !conc || !keys || !want || !got) {
        CHECK(!"memory");
        return;
    }
    CHECK(sbloom_set_concurrent(conc, 1) == SBLOOM_OK);
    for (int pass = 0; pass < 3; pass++) {
        for (size_t i = 0; i < KEYS; i++)
            keys[i] = i % 5 == 4 ? keys[i / 2] : test_rand(&seed); /* some seen, some twice */
        size_t len = pass == 0 ? KEYS : pass == 1 ? 777 : 1;
        int64_t a = 0, b = 0;
        for (size_t at = 0; at < KEYS; at += len) {
            size_t part = KEYS - at < len ? KEYS - at : len;
            a += sbloom_add_if_new_hashes(plain, keys + at, part, want + at);
            b += sbloom_add_if_new_hashes(conc, keys + at, part, got + at);
        }
        CHECK(a == b);
        CHECK(memcmp(want, got, KEYS) == 0);
        CHECK(sbloom_add_hashes(plain, keys, KEYS) == sbloom_add_hashes(conc, keys, KEYS));
        CHECK(memcmp(sbloom_data(plain), sbloom_data(conc), sbloom_bytes(plain)) == 0);
        CHECK(sbloom_items(plain) == sbloom_items(conc));
    }
    free(keys);
    free(want);
    free(got);
    sbloom_free(plain);
    sbloom_free(conc);
}

/* The same filter and batch, serial and spread over 3 threads: identical answers and bytes. */
static void parallel_matches_serial(sbloom_layout layout, uint64_t seed)
{
    enum { N = 150000 };
    uint64_t *hashes = malloc(N * sizeof *hashes);
    uint64_t *values = malloc(N * sizeof *values);
    char(*text)[24] = malloc(N * sizeof *text);
    const void **keys = malloc(N * sizeof *keys);
    size_t *lens = malloc(N * sizeof *lens);
    uint8_t *r1 = malloc(N), *r2 = malloc(N);
    uint64_t *h1 = malloc(N * sizeof *h1), *h2 = malloc(N * sizeof *h2);
    for (size_t i = 0; i < N; i++) {
        /* one key in five repeats an earlier one: new only at its first occurrence */
        size_t from = i > 0 && test_rand(&seed) % 5 == 0 ? test_rand(&seed) % i : i;
        hashes[i] = from == i ? test_rand(&seed) : hashes[from];
        values[i] = from == i ? i : values[from];
        lens[i] = (size_t)snprintf(text[i], sizeof text[i], "key-%zu", from);
        keys[i] = text[i];
    }
    sbloom_t *serial = NULL, *spread = NULL;
    /* (a fingerprint filter takes its plan: planned for every key below, about half full, so
     * that some lines overflow into the spare and most do not) */
    int fingerprint = layout >= SBLOOM_LAYOUT_FP512_R10 && layout <= SBLOOM_LAYOUT_FP512_R29;
    uint64_t plan = fingerprint ? 300000 : 100000;
    CHECK(sbloom_create_for_layout(&serial, plan, 1e-2, layout) == SBLOOM_OK);
    CHECK(sbloom_create_for_layout(&spread, plan, 1e-2, layout) == SBLOOM_OK);
    if (!serial || !spread)
        goto out;
    CHECK(sbloom_set_threads(spread, 3) == SBLOOM_OK);

    CHECK(sbloom_add_if_new_hashes(serial, hashes, N, r1) ==
          sbloom_add_if_new_hashes(spread, hashes, N, r2));
    CHECK(memcmp(r1, r2, N) == 0);
    CHECK(sbloom_add_if_new_keys(serial, keys, lens, N / 2, r1) ==
          sbloom_add_if_new_keys(spread, keys, lens, N / 2, r2));
    CHECK(memcmp(r1, r2, N / 2) == 0);
    CHECK(sbloom_add_u64s(serial, values, N) == sbloom_add_u64s(spread, values, N));
    CHECK(sbloom_contains_keys(serial, keys, lens, N, r1) ==
          sbloom_contains_keys(spread, keys, lens, N, r2));
    CHECK(memcmp(r1, r2, N) == 0);
    for (size_t i = 0; i < N; i++)
        h1[i] = hashes[i] ^ 0x5555; /* mostly unseen keys: negatives and false positives */
    CHECK(sbloom_contains_hashes(serial, h1, N, r1) == sbloom_contains_hashes(spread, h1, N, r2));
    CHECK(memcmp(r1, r2, N) == 0);
    if (layout == SBLOOM_LAYOUT_COUNTING512 || fingerprint) {
        double spare_lookups = 0, spare_keys = 0;
        sbloom_second_line_shares(spread, &spare_lookups, &spare_keys);
        CHECK(!fingerprint || spare_keys > 0); /* (its spare lines took keys: both paths ran) */
        CHECK(sbloom_remove_hashes(serial, hashes, N / 3, r1) ==
              sbloom_remove_hashes(spread, hashes, N / 3, r2));
        CHECK(memcmp(r1, r2, N / 3) == 0);
    }
    CHECK(sbloom_hash_keys(serial, keys, lens, N, h1) == N);
    CHECK(sbloom_hash_keys(spread, keys, lens, N, h2) == N);
    CHECK(memcmp(h1, h2, N * sizeof *h1) == 0);
    CHECK(sbloom_items(serial) == sbloom_items(spread));
    CHECK(memcmp(sbloom_data(serial), sbloom_data(spread), (size_t)sbloom_bytes(serial)) == 0);

    /* concurrent mode and threads together, alone: still the serial answers */
    if (layout != SBLOOM_LAYOUT_COUNTING512) {
        sbloom_t *both = NULL;
        CHECK(sbloom_create_for_layout(&both, plan, 1e-2, layout) == SBLOOM_OK);
        CHECK(sbloom_set_concurrent(both, 1) == SBLOOM_OK);
        CHECK(sbloom_set_threads(both, 2) == SBLOOM_OK);
        sbloom_clear(serial);
        CHECK(sbloom_add_if_new_hashes(serial, hashes, N, r1) ==
              sbloom_add_if_new_hashes(both, hashes, N, r2));
        CHECK(memcmp(r1, r2, N) == 0);
        CHECK(memcmp(sbloom_data(serial), sbloom_data(both), (size_t)sbloom_bytes(serial)) == 0);
        sbloom_free(both);
    }
out:
    sbloom_free(serial);
    sbloom_free(spread);
    free(hashes);
    free(values);
    free(text);
    free(keys);
    free(lens);
    free(r1);
    free(r2);
    free(h1);
    free(h2);
}

/* Keys routed to 8 filters by sbloom_shard keep each filter's planned rate; routed by the top 3
 * bits of the hash (which also choose the block) they do not. */
static double sharded_rate(int by_top_bits)
{
    enum { SHARDS = 8, PER_SHARD = 10000, PROBES = 400000 };
    sbloom_t *f[SHARDS];
    for (int s = 0; s < SHARDS; s++)
        CHECK(sbloom_create_for_layout(&f[s], PER_SHARD, 1e-3, SBLOOM_LAYOUT_BLOCK512_K8) ==
              SBLOOM_OK);
    uint64_t seed = 77, per[SHARDS] = {0};
    for (int i = 0; i < SHARDS * PER_SHARD; i++) {
        uint64_t h = test_rand(&seed);
        uint32_t s = by_top_bits ? (uint32_t)(h >> 61) : sbloom_shard(h, SHARDS);
        per[s]++;
        sbloom_add_hash(f[s], h);
    }
    for (int s = 0; s < SHARDS; s++)
        CHECK(per[s] > PER_SHARD * 95 / 100 && per[s] < PER_SHARD * 105 / 100);
    uint64_t positives = 0;
    for (int i = 0; i < PROBES; i++) {
        uint64_t h = test_rand(&seed);
        uint32_t s = by_top_bits ? (uint32_t)(h >> 61) : sbloom_shard(h, SHARDS);
        positives += (uint64_t)sbloom_contains_hash(f[s], h);
    }
    for (int s = 0; s < SHARDS; s++)
        sbloom_free(f[s]);
    return (double)positives / PROBES;
}

static void shards(void)
{
    CHECK(sbloom_shard(123, 1) == 0);
    CHECK(sbloom_shard(~UINT64_C(0), 7) < 7);
    double good = sharded_rate(0), trap = sharded_rate(1);
    printf("8 shards planned 1e-3 each: %.5f by sbloom_shard, %.3f by the top 3 bits\n", good,
           trap);
    CHECK(good < 1.6e-3);
    CHECK(trap > 0.1);
}

/* The two children's answers (each N bytes of is_new down its pipe, fds[c][0]), read, the
 * children waited for (each must exit 0), and checked: no key new in both, at most 40 new in
 * neither (N keys at well under 1e-4). Returns the keys reported new, both children together. */
static uint64_t keys_new_once(int fds[2][2], const pid_t pid[2], uint8_t *is_new[2], size_t n)
{
    for (int c = 0; c < 2; c++) {
        size_t got = 0;
        ssize_t r;
        while (got < n && (r = read(fds[c][0], is_new[c] + got, n - got)) > 0)
            got += (size_t)r;
        close(fds[c][0]);
        int status = 0;
        waitpid(pid[c], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        CHECK(got == n);
    }
    uint64_t twice = 0, never = 0, total = 0;
    for (size_t i = 0; i < n; i++) {
        int times = is_new[0][i] + is_new[1][i];
        twice += times > 1;
        never += times == 0;
        total += (uint64_t)times;
    }
    CHECK(twice == 0);
    CHECK(never <= 40);
    return total;
}

/* Two processes test-and-add overlapping halves of one key set through one file mapped with
 * SBLOOM_OPEN_CONCURRENT: every key is new in exactly one of them (false positives aside). Also
 * for a windowed file, whose clock one of them moves while both add. */
static void processes(int windowed)
{
    enum { N = 120000 }; /* child 0 adds 80,000 keys in one call */
    char dir[] = "/tmp/sbloom-concurrent-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(!"mkdtemp");
        return;
    }
    char path[64], lockpath[80];
    snprintf(path, sizeof path, "%s/f.sbloom", dir);
    snprintf(lockpath, sizeof lockpath, "%s.lock", path);
    sbloom_t *f = NULL;
    /* windowed: 3 periods of 10, N keys a period planned; child 1 moves the clock twice, inside
     * the window (period 0's keys are held until period 4) */
    CHECK((windowed ? sbloom_create_windowed(&f, 6 * N, 1e-4, 3, 10, 0)
                    : sbloom_create(&f, 2 * N, 1e-4)) == SBLOOM_OK);
    CHECK(sbloom_save(f, path) == SBLOOM_OK);
    sbloom_free(f);
    uint64_t seed = 5, *keys = malloc(N * sizeof *keys);
    for (size_t i = 0; i < N; i++)
        keys[i] = test_rand(&seed);
    int fds[2][2];
    pid_t pid[2];
    for (int c = 0; c < 2; c++) {
        if (pipe(fds[c]) != 0) {
            CHECK(!"pipe");
            return;
        }
        pid[c] = fork();
        if (pid[c] == 0) {
            /* child c: keys [c * N / 3, c * N / 3 + 2N/3), in batches of 100 (child 0 of a plain
             * file: in one, past 65,536 keys) */
            close(fds[c][0]);
            sbloom_t *m = NULL;
            if (sbloom_map(&m, path, SBLOOM_OPEN_WRITE | SBLOOM_OPEN_CONCURRENT) != SBLOOM_OK)
                _exit(2);
            size_t from = (size_t)c * N / 3, len = 2 * (size_t)N / 3;
            uint8_t *is_new = calloc(N, 1);
            size_t step = c == 0 && !windowed ? len : 100;
            for (size_t at = from; at < from + len; at += step) {
                if (windowed && c == 1 && at > from && (at - from) % (len / 3) < 100)
                    sbloom_advance(m, 10 * ((at - from) / (len / 3)));
                sbloom_add_if_new_hashes(m, keys + at, step, is_new + at);
            }
            sbloom_free(m);
            ssize_t w = write(fds[c][1], is_new, N);
            _exit(w == N ? 0 : 3);
        }
        close(fds[c][1]);
    }
    uint8_t *is_new[2] = {calloc(N, 1), calloc(N, 1)};
    uint64_t total = keys_new_once(fds, pid, is_new, N);
    /* after the last process, a sync makes the file valid again, with both processes' count */
    sbloom_t *live = NULL;
    CHECK(sbloom_load(&live, path) == SBLOOM_E_CORRUPT); /* the bits changed; no sync yet */
    CHECK(sbloom_map(&live, path, SBLOOM_OPEN_WRITE | SBLOOM_OPEN_CONCURRENT) == SBLOOM_OK);
    CHECK(live && sbloom_test_locks_held(live) == 0); /* (the lock file's words: both left) */
    CHECK(sbloom_sync(live) == SBLOOM_OK);
    sbloom_free(live);
    sbloom_t *back = NULL;
    CHECK(sbloom_load(&back, path) == SBLOOM_OK);
    if (back) {
        CHECK_EQ_U64(sbloom_items(back), total);
        CHECK(sbloom_contains_hashes(back, keys, N, NULL) == N);
        sbloom_window w = sbloom_window_init();
        CHECK(!windowed || (sbloom_get_window(back, &w) == SBLOOM_OK && w.now == 20));
        sbloom_free(back);
    }
    free(keys);
    free(is_new[0]);
    free(is_new[1]);
    unlink(path);
    unlink(lockpath);
    rmdir(dir);
}

/* The same through a filter in caller memory: an image in an anonymous shared mapping, made by
 * the parent (sbloom_create_in) and attached for writing by two children, each in concurrent
 * mode with the lock region beside the image (sbloom_set_concurrent_shared). */
static void image_processes(void)
{
    enum { N = 120000 }; /* child 0 adds 80,000 keys in one call */
    size_t image = (size_t)sbloom_image_size(2 * 1024 * 1024, SBLOOM_LAYOUT_BLOCK512_K8);
    size_t locks_at = (image + 63) & ~(size_t)63,
           total_bytes = locks_at + SBLOOM_SHARED_LOCKS_BYTES;
    uint8_t *mem =
        mmap(NULL, total_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        CHECK(!"mmap");
        return;
    }
    sbloom_t *f = NULL;
    CHECK(sbloom_create_in(&f, mem, image, 2 * 1024 * 1024, SBLOOM_LAYOUT_BLOCK512_K8) ==
          SBLOOM_OK);
    CHECK(sbloom_set_concurrent_shared(f, mem + locks_at, 100) == SBLOOM_E_INVALID); /* small */
    CHECK(sbloom_set_concurrent_shared(f, mem + locks_at + 1, SBLOOM_SHARED_LOCKS_BYTES) ==
          SBLOOM_E_INVALID); /* misaligned */
    sbloom_free(f);
    sbloom_t *heap = NULL;
    CHECK(sbloom_create(&heap, 1000, 1e-3) == SBLOOM_OK);
    CHECK(sbloom_set_concurrent_shared(heap, mem + locks_at, SBLOOM_SHARED_LOCKS_BYTES) ==
          SBLOOM_E_INVALID); /* not caller memory */
    sbloom_free(heap);
    uint64_t seed = 9, *keys = malloc(N * sizeof *keys);
    for (size_t i = 0; i < N; i++)
        keys[i] = test_rand(&seed);
    int fds[2][2];
    pid_t pid[2];
    for (int c = 0; c < 2; c++) {
        if (pipe(fds[c]) != 0) {
            CHECK(!"pipe");
            return;
        }
        pid[c] = fork();
        if (pid[c] == 0) {
            close(fds[c][0]);
            sbloom_t *m = NULL;
            if (sbloom_attach(&m, mem, image, SBLOOM_OPEN_WRITE) != SBLOOM_OK ||
                sbloom_set_concurrent_shared(m, mem + locks_at, SBLOOM_SHARED_LOCKS_BYTES) !=
                    SBLOOM_OK)
                _exit(2);
            size_t from = (size_t)c * N / 3, len = 2 * (size_t)N / 3;
            uint8_t *is_new = calloc(N, 1);
            size_t step = c == 0 ? len : 100; /* child 0: one call, past 65,536 keys */
            for (size_t at = from; at < from + len; at += step)
                sbloom_add_if_new_hashes(m, keys + at, step, is_new + at);
            sbloom_free(m);
            ssize_t w = write(fds[c][1], is_new, N);
            _exit(w == N ? 0 : 3);
        }
        close(fds[c][1]);
    }
    uint8_t *is_new[2] = {calloc(N, 1), calloc(N, 1)};
    uint64_t total = keys_new_once(fds, pid, is_new, N);
    /* a handle sharing the region sees both processes' count; its sync writes it to the image */
    sbloom_t *live = NULL;
    CHECK(sbloom_attach(&live, mem, image, SBLOOM_OPEN_WRITE) == SBLOOM_OK);
    CHECK(sbloom_set_concurrent_shared(live, mem + locks_at, SBLOOM_SHARED_LOCKS_BYTES) ==
          SBLOOM_OK);
    CHECK_EQ_U64(sbloom_items(live), total);
    CHECK(live && sbloom_test_locks_held(live) == 0);
    CHECK(sbloom_sync(live) == SBLOOM_OK);
    sbloom_free(live);
    sbloom_t *back = NULL;
    CHECK(sbloom_deserialize(&back, mem, image) == SBLOOM_OK);
    if (back) {
        CHECK_EQ_U64(sbloom_items(back), total);
        CHECK(sbloom_contains_hashes(back, keys, N, NULL) == N);
        sbloom_free(back);
    }
    free(keys);
    free(is_new[0]);
    free(is_new[1]);
    munmap(mem, total_bytes);
}

/* A process killed while it holds a lock word of a filter shared with others (the library's fault
 * point, just after the word is taken): the others go on. A child maps the file (a plain or a
 * windowed one) or attaches an image in shared memory, test-and-adds keys and dies in its first
 * lock; then this process adds the same keys: every call returns (in SIMDBLOOM_LOCK_WAIT's
 * bound at most, set to 5 s: not SBLOOM_E_LOCKED), each key is new at most once between the two,
 * every key is held, and no word is left held. Where the CPU has hardware transactions, keys may
 * take no lock: then the child is not killed, and only the rest is checked. */
static void killed_holding_a_lock(int kind) /* 0: a file, 1: a windowed file, 2: an image */
{
    enum { N = 3000 };
    char dir[] = "/tmp/sbloom-killed-XXXXXX", path[64], lockpath[80];
    if (!mkdtemp(dir)) {
        CHECK(!"mkdtemp");
        return;
    }
    snprintf(path, sizeof path, "%s/f.sbloom", dir);
    snprintf(lockpath, sizeof lockpath, "%s.lock", path);
    size_t image = (size_t)sbloom_image_size(1 << 20, SBLOOM_LAYOUT_BLOCK512_K8);
    size_t locks_at = (image + 63) & ~(size_t)63, total = locks_at + SBLOOM_SHARED_LOCKS_BYTES;
    uint8_t *mem = NULL;
    sbloom_t *f = NULL;
    if (kind == 2) {
        mem = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        CHECK(mem != MAP_FAILED &&
              sbloom_create_in(&f, mem, image, 1 << 20, SBLOOM_LAYOUT_BLOCK512_K8) == SBLOOM_OK);
    } else {
        CHECK((kind ? sbloom_create_windowed(&f, 4 * N, 1e-4, 3, 10, 0)
                    : sbloom_create(&f, 4 * N, 1e-4)) == SBLOOM_OK);
        CHECK(f && sbloom_save(f, path) == SBLOOM_OK);
    }
    sbloom_free(f);
    uint64_t seed = 77 + (uint64_t)kind, keys[N];
    for (size_t i = 0; i < N; i++)
        keys[i] = test_rand(&seed);
    pid_t child = fork();
    if (child == 0) {
        sbloom_t *m = NULL;
        int rc = kind == 2 ? sbloom_attach(&m, mem, image, SBLOOM_OPEN_WRITE)
                           : sbloom_map(&m, path, SBLOOM_OPEN_WRITE | SBLOOM_OPEN_CONCURRENT);
        if (rc == SBLOOM_OK && kind == 2)
            rc = sbloom_set_concurrent_shared(m, mem + locks_at, SBLOOM_SHARED_LOCKS_BYTES);
        if (rc != SBLOOM_OK)
            _exit(2);
        uint8_t is_new[N];
        sbloom_test_fault_arm("locked", 0);
        sbloom_add_if_new_hashes(m, keys, N, is_new);
        _exit(3); /* no lock taken (transactions) */
    }
    int status = 0;
    CHECK(child > 0 && waitpid(child, &status, 0) == child); /* (reaped: its ID is free) */
    int killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    CHECK(killed || (WIFEXITED(status) && WEXITSTATUS(status) == 3));
    sbloom_t *m = NULL;
    int rc = kind == 2 ? sbloom_attach(&m, mem, image, SBLOOM_OPEN_WRITE)
                       : sbloom_map(&m, path, SBLOOM_OPEN_WRITE | SBLOOM_OPEN_CONCURRENT);
    if (rc == SBLOOM_OK && kind == 2)
        rc = sbloom_set_concurrent_shared(m, mem + locks_at, SBLOOM_SHARED_LOCKS_BYTES);
    CHECK(rc == SBLOOM_OK);
    if (m) {
        uint8_t is_new[N];
        if (killed)
            CHECK(sbloom_test_locks_held(m) == 1); /* the dead child's */
        time_t began = time(NULL);
        int64_t fresh = sbloom_add_if_new_hashes(m, keys, N, is_new);
        CHECK(fresh >= 0 && time(NULL) - began < 10);
        if (fresh < 0)
            fprintf(stderr, "  killed holding a lock (%d): %s: %s\n", kind,
                    sbloom_strerror((int)fresh), sbloom_error_detail());
        CHECK(sbloom_contains_hashes(m, keys, N, NULL) == N);
        CHECK(sbloom_test_locks_held(m) == 0);
        sbloom_free(m);
    }
    if (mem)
        munmap(mem, total);
    unlink(path);
    unlink(lockpath);
    rmdir(dir);
}

/* A thread of the fingerprint tests: its keys removed (others looked up between batches of 100),
 * or added in batches of 16 (their answers in fresh). */
typedef struct fp_worker {
    sbloom_t *f;
    int removes;
    int reads;  /* instead: the others looked up and test-and-added in batches of 100 */
    int churns; /* instead: its keys added and removed again, 8 times */
    /* instead (a window): its keys added in `periods` equal parts, each in the next period of
     * `period` from `first`; with moves, this worker moves the window's clock to it first */
    uint32_t periods, moves;
    uint64_t first, period;
    int *churners; /* those still at it (churners and window writers) */
    const uint64_t *mine, *others;
    size_t n, nothers;
    uint8_t *fresh;
    uint64_t done, missed; /* keys removed or added; others not found */
    pthread_barrier_t *start;
} fp_worker;

static void *fp_work(void *arg)
{
    fp_worker *w = arg;
    size_t step = w->removes ? 100 : 16;
    pthread_barrier_wait(w->start);
    /* (readers: passes over the others while a churner works, 200 at most) */
    for (int pass = 0;
         w->reads && pass < 200 && (pass == 0 || __atomic_load_n(w->churners, __ATOMIC_ACQUIRE));
         pass++)
        for (size_t at = 0; at + 100 <= w->nothers; at += 100) {
            w->missed += 100 - (uint64_t)sbloom_contains_hashes(w->f, w->others + at, 100, NULL);
            int64_t renewed = sbloom_add_if_new_hashes(w->f, w->others + at, 100, NULL);
            w->done += renewed != 0; /* a batch in which a key held was said new (or an error) */
        }
    for (int round = 0; w->churns && round < 30; round++) /* its keys added, then removed */
        for (size_t at = 0; at < w->n; at += 16) {
            size_t len = w->n - at < 16 ? w->n - at : 16;
            sbloom_add_if_new_hashes(w->f, w->mine + at, len, w->fresh + at);
            for (size_t i = 0; i < len; i++) /* (only those added: a false positive's entry is
                                                another key's) */
                if (w->fresh[at + i])
                    sbloom_remove_hashes(w->f, w->mine + at + i, 1, NULL);
        }
    for (uint32_t q = 0; q < w->periods; q++) {
        if (w->moves)
            w->missed += sbloom_advance(w->f, (w->first + q) * w->period) != SBLOOM_OK;
        size_t from = w->n * q / w->periods, to = w->n * (q + 1) / w->periods;
        for (size_t at = from; at < to; at += 16) {
            int64_t got = sbloom_add_if_new_hashes(w->f, w->mine + at, to - at < 16 ? to - at : 16,
                                                   w->fresh + at);
            w->missed += got < 0; /* (a window past its room: said) */
        }
    }
    if (w->churns || w->periods)
        __atomic_fetch_sub(w->churners, 1, __ATOMIC_RELEASE);
    if (w->reads || w->churns || w->periods)
        return NULL;
    for (size_t at = 0; at < w->n; at += step) {
        size_t len = w->n - at < step ? w->n - at : step;
        int64_t got = w->removes ? sbloom_remove_hashes(w->f, w->mine + at, len, NULL)
                                 : sbloom_add_if_new_hashes(w->f, w->mine + at, len, w->fresh + at);
        w->done += got > 0 ? (uint64_t)got : 0;
        if (!w->removes)
            continue;
        size_t probe = (at * 7) % (w->nothers - 100);
        w->missed += 100 - (uint64_t)sbloom_contains_hashes(w->f, w->others + probe, 100, NULL);
    }
    return NULL;
}

/* THREADS workers started together on their shares, joined; the sums of their counts. */
static void run_fp_workers(fp_worker *w, uint64_t *done, uint64_t *missed)
{
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, THREADS);
    pthread_t ids[THREADS];
    for (int t = 0; t < THREADS; t++) {
        w[t].start = &start;
        CHECK(pthread_create(&ids[t], NULL, fp_work, &w[t]) == 0);
    }
    *done = *missed = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(ids[t], NULL);
        *done += w[t].done;
        *missed += w[t].missed;
    }
    pthread_barrier_destroy(&start);
}

/* A fingerprint filter's removes on THREADS threads at once, each of its own keys, while the
 * others' keys are looked up: each removed key gone, every other key found throughout. */
static void fingerprint_removes(sbloom_layout layout, uint64_t seed)
{
    enum { EACH = 10000, KEPT = 20000 };
    sbloom_t *f = NULL;
    CHECK(sbloom_create_for_layout(&f, 100000, 1e-4, layout) == SBLOOM_OK);
    if (!f)
        return;
    /* only keys that were added (answered new: not a false positive of an earlier one) are
     * removed or counted on: removing another would take an added key's entry */
    enum { ALL = THREADS * EACH + KEPT + 100 };
    uint64_t *keys = malloc(ALL * sizeof *keys);
    uint8_t *fresh = malloc(ALL);
    size_t stored = 0;
    for (size_t i = 0; i < ALL; i++)
        keys[i] = test_rand(&seed);
    CHECK(sbloom_add_if_new_hashes(f, keys, ALL, fresh) >= THREADS * EACH + KEPT);
    for (size_t i = 0; i < ALL; i++)
        if (fresh[i])
            keys[stored++] = keys[i];
    CHECK(sbloom_set_concurrent(f, 1) == SBLOOM_OK && sbloom_is_concurrent(f));
    fp_worker w[THREADS];
    const uint64_t *kept = keys + THREADS * EACH;
    for (int t = 0; t < THREADS; t++)
        w[t] = (fp_worker){.f = f,
                           .removes = 1,
                           .mine = keys + (size_t)t * EACH,
                           .n = EACH,
                           .others = kept,
                           .nothers = KEPT};
    uint64_t removed, missed;
    run_fp_workers(w, &removed, &missed);
    CHECK(missed == 0);
    CHECK(removed == THREADS * EACH);
    CHECK(sbloom_items(f) == stored - removed);
    CHECK(sbloom_contains_hashes(f, keys, THREADS * EACH, NULL) <= 2); /* (false positives) */
    CHECK(sbloom_contains_hashes(f, kept, KEPT, NULL) == KEPT);
    CHECK(sbloom_test_locks_held(f) == 0);
    sbloom_free(f);
    free(keys);
    free(fresh);
}

/* A fingerprint filter filled to its plan by THREADS threads at once, each its own keys in small
 * batches: at the plan a few percent of adds go to the spare lines, which every line shares, so
 * the threads meet there. Every key a thread was told is new is found, and the count is theirs. */
static void fingerprint_spare_traffic(sbloom_layout layout, uint64_t seed)
{
    enum { EACH = 6000, ROUNDS_OF_FILLING = 12 };
    for (int round = 0; round < ROUNDS_OF_FILLING; round++) {
        sbloom_t *f = NULL;
        CHECK(sbloom_create_for_layout(&f, THREADS * EACH, 1e-3, layout) == SBLOOM_OK);
        if (!f || sbloom_set_concurrent(f, 1) != SBLOOM_OK)
            break;
        uint64_t *keys = malloc(THREADS * EACH * sizeof *keys);
        uint8_t *fresh = calloc(THREADS * EACH, 1);
        for (size_t i = 0; i < THREADS * EACH; i++)
            keys[i] = test_rand(&seed);
        fp_worker w[THREADS];
        for (int t = 0; t < THREADS; t++)
            w[t] = (fp_worker){.f = f,
                               .mine = keys + (size_t)t * EACH,
                               .n = EACH,
                               .fresh = fresh + (size_t)t * EACH};
        uint64_t added, unused;
        run_fp_workers(w, &added, &unused);
        uint64_t lost = 0;
        uint8_t *present = malloc(THREADS * EACH);
        sbloom_contains_hashes(f, keys, THREADS * EACH, present);
        for (size_t i = 0; i < THREADS * EACH; i++)
            lost += fresh[i] && !present[i];
        double spare_lookups = 0, spare_keys = 0;
        sbloom_set_concurrent(f, 0);
        sbloom_second_line_shares(f, &spare_lookups, &spare_keys);
        CHECK(lost == 0); /* no key told new is lost */
        CHECK(added == sbloom_items(f) && added >= THREADS * EACH - 60);
        CHECK(spare_keys > 0.01); /* (the threads did meet in the spare lines) */
        if (lost)
            fprintf(stderr, "  %s: %llu of %llu keys lost (%.1f%% in the spare)\n",
                    sbloom_layout_name(layout), (unsigned long long)lost, (unsigned long long)added,
                    100 * spare_keys);
        free(present);
        free(keys);
        free(fresh);
        sbloom_free(f);
    }
}

/* Lookups without locks beside writers: a fingerprint filter filled to 90% of its plan, then two
 * threads add keys of their own and remove them again (lines shift to open and close slots, full
 * lines send keys to the spare lines and shift the keys there) while two others look up the keys
 * held and test-and-add them: every one found, none said new. (Without the versions' checks
 * these lookups miss keys that are there.) */
static void fingerprint_lookups_beside_writers(sbloom_layout layout, uint64_t seed)
{
    enum { N = 40000, HELD = N * 9 / 10, CHURN = 1000 };
    sbloom_t *f = NULL;
    CHECK(sbloom_create_for_layout(&f, N, 1e-3, layout) == SBLOOM_OK);
    uint64_t *keys = malloc((HELD + 2 * CHURN) * sizeof *keys);
    uint8_t *fresh = calloc(HELD + 2 * CHURN, 1);
    if (!f || !keys || !fresh)
        goto done;
    for (size_t i = 0; i < HELD + 2 * CHURN; i++)
        keys[i] = test_rand(&seed);
    sbloom_add_if_new_hashes(f, keys, HELD, fresh);
    size_t held = 0; /* the keys that were added (not false positives) */
    for (size_t i = 0; i < HELD; i++)
        if (fresh[i])
            keys[held++] = keys[i];
    CHECK(sbloom_set_concurrent(f, 1) == SBLOOM_OK);
    fp_worker w[THREADS];
    int churners = 2;
    for (int t = 0; t < THREADS; t++)
        w[t] =
            t < 2 ? (fp_worker){.f = f,
                                .churns = 1,
                                .churners = &churners,
                                .mine = keys + HELD + (size_t)t * CHURN,
                                .n = CHURN,
                                .fresh = fresh + HELD + (size_t)t * CHURN}
                  : (fp_worker){
                        .f = f, .reads = 1, .churners = &churners, .others = keys, .nothers = held};
    uint64_t done, missed;
    run_fp_workers(w, &done, &missed);
    uint64_t renewed = w[2].done + w[3].done;
    CHECK(missed == 0);
    CHECK(renewed == 0);
    if (missed || renewed)
        fprintf(stderr, "  %s: %llu lookups of held keys missed, %llu batches said one new\n",
                sbloom_layout_name(layout), (unsigned long long)missed,
                (unsigned long long)renewed);
    double spare_lookups = 0, spare_keys = 0;
    sbloom_set_concurrent(f, 0);
    sbloom_second_line_shares(f, &spare_lookups, &spare_keys);
    CHECK(spare_keys > 0.01); /* (keys live in the spare lines) */
    CHECK(sbloom_contains_hashes(f, keys, held, NULL) == (int64_t)held);
done:
    free(keys);
    free(fresh);
    sbloom_free(f);
}

/* Lookups without locks beside a window's writers (the ages form): generations of periods 0 to 2
 * filled, the keys held added in period 3; then two threads add new keys (lines shift, full lines
 * spill to the spare lines) and one of them moves the clock to periods 4, 5 and 6, whose
 * rotations drop the older generations' entries from every line (the held keys' entries move)
 * while two others look up the held keys and test-and-add them: every one found, none said new.
 * (Without the versions' checks, or with a rotation that leaves them even, these lookups miss
 * keys that are there.) */
static void window_lookups_beside_writers(double p, uint64_t seed)
{
    enum { N = 60000, SHARE = N / 3 * 8 / 10, WRITES = N / 10 };
    sbloom_opts o = sbloom_opts_init();
    o.expected = N;
    o.fpp = p;
    o.periods = 3;
    o.period = 7; /* (not split into finer periods) */
    o.flags = SBLOOM_OPTS_ANY_FAMILY;
    sbloom_t *f = NULL;
    CHECK(sbloom_create_opts(&f, &o) == SBLOOM_OK && sbloom_stages(f) == 0);
    uint64_t *keys = malloc((4 * SHARE + 2 * WRITES) * sizeof *keys);
    uint8_t *fresh = calloc(4 * SHARE + 2 * WRITES, 1);
    if (!f || !keys || !fresh)
        goto done;
    for (size_t i = 0; i < 4 * SHARE + 2 * WRITES; i++)
        keys[i] = test_rand(&seed);
    for (uint32_t q = 0; q < 4; q++) {
        CHECK(sbloom_advance(f, 7 * (uint64_t)q) == SBLOOM_OK);
        CHECK(sbloom_add_if_new_hashes(f, keys + q * SHARE, SHARE, fresh + q * SHARE) > 0);
    }
    size_t held = 0; /* period 3's keys that were added (not false positives) */
    for (size_t i = 3 * SHARE; i < 4 * SHARE; i++)
        if (fresh[i])
            keys[held++] = keys[i];
    CHECK(sbloom_set_concurrent(f, 1) == SBLOOM_OK);
    fp_worker w[THREADS];
    int writers = 2;
    for (int t = 0; t < THREADS; t++)
        w[t] = t < 2
                   ? (fp_worker){.f = f,
                                 .periods = 3,
                                 .moves = t == 0,
                                 .first = 4,
                                 .period = 7,
                                 .churners = &writers,
                                 .mine = keys + 4 * SHARE + (size_t)t * WRITES,
                                 .n = WRITES,
                                 .fresh = fresh + 4 * SHARE + (size_t)t * WRITES}
                   : (fp_worker){
                         .f = f, .reads = 1, .churners = &writers, .others = keys, .nothers = held};
    uint64_t done, missed;
    run_fp_workers(w, &done, &missed);
    uint64_t renewed = w[2].done + w[3].done, failed = w[0].missed + w[1].missed;
    missed -= failed;
    CHECK(failed == 0 && missed == 0 && renewed == 0);
    if (failed || missed || renewed)
        fprintf(stderr,
                "  window at %g: %llu writes failed, %llu lookups of held keys missed, "
                "%llu batches said one new\n",
                p, (unsigned long long)failed, (unsigned long long)missed,
                (unsigned long long)renewed);
    sbloom_window win = sbloom_window_init();
    CHECK(sbloom_get_window(f, &win) == SBLOOM_OK && win.now == 6 * 7);
    CHECK(sbloom_test_locks_held(f) == 0);
    CHECK(sbloom_contains_hashes(f, keys, held, NULL) == (int64_t)held);
done:
    free(keys);
    free(fresh);
    sbloom_free(f);
}

/* A fingerprint window (the ages form) filled by THREADS threads to its plan, a period at a time
 * (a period of 7 does not split into finer ones): G + 1 periods of n / G keys, the generations'
 * share of the lines' entries, so that adds go to the spare lines, which every line shares, while
 * the threads add. Every key a thread was told is new is found (none has left the window), and
 * the count is theirs. */
static void window_spare_traffic(uint32_t periods, double p, uint64_t seed)
{
    enum { EACH = 500 }; /* keys a thread adds a period: 95% of a period's share */
    uint64_t per_period = THREADS * EACH, total = per_period * (periods + 1);
    sbloom_opts o = sbloom_opts_init();
    o.expected = (uint64_t)((double)per_period / 0.95) * periods;
    o.fpp = p;
    o.periods = periods;
    o.period = 7;
    o.flags = SBLOOM_OPTS_ANY_FAMILY | SBLOOM_OPTS_CONCURRENT;
    sbloom_t *f = NULL;
    CHECK(sbloom_create_opts(&f, &o) == SBLOOM_OK && sbloom_stages(f) == 0);
    uint64_t *keys = malloc(total * sizeof *keys);
    uint8_t *fresh = calloc(total, 1), *present = malloc(total);
    for (size_t i = 0; i < total; i++)
        keys[i] = test_rand(&seed);
    uint64_t added = 0;
    for (uint32_t q = 0; f && q <= periods; q++) {
        CHECK(sbloom_advance(f, 7 * (uint64_t)q) == SBLOOM_OK);
        fp_worker w[THREADS];
        for (int t = 0; t < THREADS; t++)
            w[t] = (fp_worker){.f = f,
                               .mine = keys + q * per_period + (size_t)t * EACH,
                               .n = EACH,
                               .fresh = fresh + q * per_period + (size_t)t * EACH};
        uint64_t done, unused;
        run_fp_workers(w, &done, &unused);
        added += done;
    }
    uint64_t lost = 0;
    if (f)
        sbloom_contains_hashes(f, keys, total, present);
    for (size_t i = 0; f && i < total; i++)
        lost += fresh[i] && !present[i];
    CHECK(lost == 0); /* no key told new is lost */
    CHECK(f && added == sbloom_items(f) && added >= total - 60 && sbloom_test_locks_held(f) == 0);
    if (lost)
        fprintf(stderr, "  window at %g: %llu of %llu keys lost\n", p, (unsigned long long)lost,
                (unsigned long long)added);
    free(keys);
    free(fresh);
    free(present);
    sbloom_free(f);
}

/* A fingerprint filter in concurrent mode across processes is refused: a writer killed mid-shift
 * would leave a line half moved for the others. Past its plan, the threads' adds say so. */
static void fingerprint_refusals(void)
{
    sbloom_t *f = NULL;
    CHECK(sbloom_create_for_layout(&f, 1000, 1e-6, SBLOOM_LAYOUT_FP512_R19) == SBLOOM_OK);
    if (!f)
        return;
    char path[] = "/tmp/sbloom-fp-concurrent-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    CHECK(sbloom_save(f, path) == SBLOOM_OK);
    sbloom_t *mapped = NULL;
    uint16_t probe = 1;
    if (*(uint8_t *)&probe == 1) /* (a big-endian host refuses every shared mapping first) */
        CHECK(sbloom_map(&mapped, path, SBLOOM_OPEN_WRITE | SBLOOM_OPEN_CONCURRENT) ==
                  SBLOOM_E_LAYOUT &&
              mapped == NULL);
    unlink(path);
    char lock[sizeof path + 8];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(lock);
    CHECK(sbloom_set_concurrent(f, 1) == SBLOOM_OK);
    uint64_t seed = 77, keys[20000];
    for (size_t i = 0; i < 20000; i++)
        keys[i] = test_rand(&seed);
    CHECK(sbloom_add_hashes(f, keys, 20000) == SBLOOM_E_FULL);
    CHECK(sbloom_test_locks_held(f) == 0);
    uint64_t held = (uint64_t)sbloom_contains_hashes(f, keys, 20000, NULL);
    CHECK(held > 1000 && held < 20000 && held == sbloom_items(f)); /* what it took it keeps */
    sbloom_free(f);
}

static void refusals(void)
{
    sbloom_t *f = NULL;
    CHECK(sbloom_create_for_layout(&f, 1000, 1e-2, SBLOOM_LAYOUT_COUNTING512) == SBLOOM_OK);
    CHECK(sbloom_set_concurrent(f, 1) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_is_concurrent(f) == 0);
    sbloom_free(f);
    CHECK(sbloom_set_concurrent(NULL, 1) == SBLOOM_E_NULL);
    CHECK(sbloom_set_threads(NULL, 2) == SBLOOM_E_NULL);
    CHECK(sbloom_map(&f, "/nonexistent", SBLOOM_OPEN_CONCURRENT) == SBLOOM_E_INVALID);
    CHECK(sbloom_create(&f, 1000, 1e-2) == SBLOOM_OK);
    CHECK(sbloom_set_concurrent(f, 1) == SBLOOM_OK);
    CHECK(sbloom_set_concurrent(f, 0) == SBLOOM_OK);
    CHECK(sbloom_is_concurrent(f) == 0);
    CHECK(sbloom_set_threads(f, 0) == SBLOOM_OK); /* one per CPU */
    sbloom_free(f);
}

int main(void)
{
    uint64_t seed = 42;
    for (int round = 0; round < ROUNDS; round++)
        for (size_t l = 0; l < sizeof test_layouts / sizeof *test_layouts; l++)
            stress(test_layouts[l], test_rand(&seed));
    static const sbloom_layout all[] = {SBLOOM_LAYOUT_PARQUET,      SBLOOM_LAYOUT_BLOCK512_K8,
                                        SBLOOM_LAYOUT_BLOCK512_K16, SBLOOM_LAYOUT_COUNTING512,
                                        SBLOOM_LAYOUT_FP512_R10,    SBLOOM_LAYOUT_FP512_R19,
                                        SBLOOM_LAYOUT_FP512_R27};
    for (size_t l = 0; l < sizeof all / sizeof *all; l++)
        parallel_matches_serial(all[l], test_rand(&seed));
    for (size_t l = 0; l < sizeof test_layouts / sizeof *test_layouts; l++)
        matches_plain(test_layouts[l], test_rand(&seed));
    window_stress(3, 1e-2, test_rand(&seed), 0);  /* generation slots: one line a key */
    window_stress(3, 1e-6, test_rand(&seed), 0);  /* adjacent lines */
    window_stress(15, 1e-3, test_rand(&seed), 0); /* adjacent lines, 15 rotations */
    window_stress(3, 1e-2, test_rand(&seed), 1);  /* ages: entries of fingerprints */
    window_stress(3, 1e-6, test_rand(&seed), 1);
    window_stress(7, 1e-4, test_rand(&seed), 1);
    for (size_t l = 0; l < sizeof test_layouts / sizeof *test_layouts; l++)
        big_batches_of(test_layouts[l], test_rand(&seed));
    big_batches_windowed(test_rand(&seed));
    shards();
    /* fingerprint filters: exactly once, no false negative, removes beside lookups */
    stress(SBLOOM_LAYOUT_FP512_R10, test_rand(&seed));
    stress(SBLOOM_LAYOUT_FP512_R19, test_rand(&seed));
    fingerprint_removes(SBLOOM_LAYOUT_FP512_R13, test_rand(&seed));
    fingerprint_removes(SBLOOM_LAYOUT_FP512_R27, test_rand(&seed));
    fingerprint_spare_traffic(SBLOOM_LAYOUT_FP512_R10, test_rand(&seed));
    fingerprint_spare_traffic(SBLOOM_LAYOUT_FP512_R19, test_rand(&seed));
    for (int round = 0; round < 6; round++)
        fingerprint_lookups_beside_writers(
            round % 2 ? SBLOOM_LAYOUT_FP512_R19 : SBLOOM_LAYOUT_FP512_R10, test_rand(&seed));
    for (int round = 0; round < 6; round++)
        window_lookups_beside_writers(round % 2 ? 1e-6 : 1e-3, test_rand(&seed));
    for (int round = 0; round < 40; round++) /* (small windows: few spare lines, met often) */
        window_spare_traffic(3, round % 2 ? 1e-6 : 1e-3, test_rand(&seed));
    fingerprint_refusals();
    refusals();
    uint16_t probe = 1;
    if (*(uint8_t *)&probe == 1) /* shared read-write mappings need a little-endian host */
    {
        processes(0);
        processes(1); /* a windowed file, its clock moved by one process while both add */
        image_processes();
        setenv("SIMDBLOOM_LOCK_WAIT", "5", 1); /* (read at this process's first long wait) */
        for (int kind = 0; kind < 3; kind++)
            killed_holding_a_lock(kind);
    }
    return check_report();
}
