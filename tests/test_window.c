/*
 * The windowed filter (sbloom_create_windowed): the promise of the header, with the clock driven
 * through the API. A key added at time t is present at every time before t + W (W = periods x
 * period), and from t + W + period on it is gone but for the false-positive rate; the rate over a
 * window of n distinct keys stays at most p. Checked against an exact model of when each key was
 * added, key by key, at every step of a clock that moves by uneven amounts, jumps and stands still.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "simdbloom.h"
#include "check.h"

/* Test hook of the static library (src/base/fault.h): pass k of a fault point kills the process. */
int sbloom_test_fault_arm(const char *site, long k);

#define KEYS 60000

/* 1: the windows below are made with SBLOOM_OPTS_ANY_FAMILY (the ages form where it is smaller:
 * one fingerprint filter whose entries carry their period, src/modes/windowed.c). */
static int any_family;

uint64_t sbloom_test_locks_held(const sbloom_t *f); /* (the library's test hook) */

static int make_window(sbloom_t **f, uint64_t n, double p, uint32_t periods, uint64_t period,
                       uint64_t now)
{
    if (!any_family)
        return sbloom_create_windowed(f, n, p, periods, period, now);
    sbloom_opts o = sbloom_opts_init();
    o.expected = n;
    o.fpp = p;
    o.periods = periods;
    o.period = period;
    o.now = now;
    o.flags = SBLOOM_OPTS_ANY_FAMILY;
    return sbloom_create_opts(f, &o);
}

/* The rings of a windowed filter: its stages over its generations (the ages form has no stages
 * of its own: one). */
static uint32_t rings_of(const sbloom_t *f)
{
    sbloom_window w = sbloom_window_init();
    CHECK(sbloom_get_window(f, &w) == SBLOOM_OK);
    return sbloom_stages(f) ? sbloom_stages(f) / w.generations : 1;
}

static uint64_t added_at[KEYS]; /* the time each key was last reported new, or UINT64_MAX */

/* Adds keys [from, to) at time now, through the batch or the one-key form; checks each answer
 * against the model (new exactly when the model has it out of the window, except a false
 * positive, counted in *fp) and records the new ones. */
static void add_range(sbloom_t *f, const uint64_t *keys, size_t from, size_t to, uint64_t now,
                      uint64_t window, uint64_t period, int batch, uint64_t *fp, int *wrong)
{
    static uint8_t is_new[KEYS];
    if (batch)
        CHECK(sbloom_add_if_new_u64s(f, keys + from, to - from, is_new) >= 0);
    for (size_t i = from; i < to; i++) {
        int fresh = batch ? is_new[i - from] : sbloom_add_u64(f, keys[i]);
        uint64_t t = added_at[i];
        int inside = t != UINT64_MAX && now < t + window;         /* must be held */
        int gone = t == UINT64_MAX || now >= t + window + period; /* must be forgotten */
        if (inside && fresh)
            *wrong += 1; /* a false negative: the one thing a filter must never do */
        if (gone && !fresh)
            *fp += 1;
        if (fresh)
            added_at[i] = now;
    }
}

/* The promise over many periods: each round advances the clock by an uneven step, adds a slice of
 * keys (half of them seen before), and checks every key ever added: present while inside its
 * window, and forgotten (but for the rate) once past it and one period. With first > 0 the filter
 * grows (sbloom_create_windowed_scalable) from first keys a window, an eighth of what comes: it
 * must grow, keep the promise across its rings, and be one ring again after each jump of the
 * clock past a whole window. */
static void keeps_the_promise_of(uint32_t periods, uint64_t period, int batch, uint64_t first)
{
    static uint64_t keys[KEYS];
    uint64_t seed = 11 + periods + period;
    for (size_t i = 0; i < KEYS; i++) {
        keys[i] = test_rand(&seed);
        added_at[i] = UINT64_MAX;
    }
    const uint64_t per_window = 6000;
    const double p = 0.01;
    uint64_t window = periods * period, now = 1000 * period + period / 2;
    sbloom_t *f = NULL;
    CHECK((first ? sbloom_create_windowed_scalable(&f, first, p, periods, period, now)
                 : make_window(&f, per_window, p, periods, period, now)) == SBLOOM_OK);
    if (!f)
        return;
    CHECK(sbloom_get_layout(f) == SBLOOM_LAYOUT_WINDOWED && rings_of(f) == 1);
    CHECK(any_family ? sbloom_stages(f) == 0 : sbloom_stages(f) == periods + 1);
    CHECK(sbloom_planned_items(f) == (first ? first : per_window) && sbloom_planned_fpp(f) == p);
    uint32_t most_rings = 1, jumps = 0, one_ring_after_jump = 0;
    int wrong = 0;
    uint64_t fp = 0, fp_probes = 0;
    /* keys per round: a period takes at most five rounds (the steps below), each adding up to
     * twice this many keys new to the window, so that no generation takes more than its plan */
    size_t next = 0, per_round = (size_t)(per_window / periods / 10);
    static const uint64_t steps[] = {0, 1, 3, 7, 2, 11, 1, 0, 5, 13};
    for (int round = 0; round < 400 && next + per_round <= KEYS; round++) {
        uint64_t step = steps[round % 10] * period / 4 + (round % 37 == 36 ? 3 * window : 0);
        now += step;
        CHECK(sbloom_advance(f, now) == SBLOOM_OK);
        if (step >= 3 * window) { /* every older ring has been emptied: freed */
            jumps++;
            one_ring_after_jump += rings_of(f) == 1;
        }
        /* a slice of new keys, then as many seen before (a repeat within or past the window) */
        add_range(f, keys, next, next + per_round, now, window, period, batch, &fp, &wrong);
        size_t back = next > 4 * per_round ? next - 4 * per_round : 0;
        add_range(f, keys, back, back + per_round, now, window, period, batch, &fp, &wrong);
        next += per_round;
        uint32_t rings = rings_of(f);
        most_rings = rings > most_rings ? rings : most_rings;
        /* every key ever added, against the model */
        for (size_t i = 0; i < next; i++) {
            uint64_t t = added_at[i];
            int present = sbloom_contains_u64(f, keys[i]);
            if (t != UINT64_MAX && now < t + window && present != 1)
                wrong++;
            if (t != UINT64_MAX && now >= t + window + period) {
                fp += (uint64_t)present;
                fp_probes++;
            }
        }
    }
    CHECK(wrong == 0);
    CHECK(next > KEYS / 4);
    CHECK(jumps > 0 && one_ring_after_jump == jumps);
    if (first) /* it grew, and holds a window of what comes */
        CHECK(most_rings > 1 && sbloom_planned_items(f) >= per_window / 2);
    /* forgotten keys answer at most at the rate (each probe of a stale key is a fresh key's odds:
     * at most p, with room for the spread of one run) */
    CHECK(fp_probes > 10000);
    CHECK((double)fp <= 1.5 * p * (double)fp_probes + 10);
    if (wrong || (double)fp > 1.5 * p * (double)fp_probes + 10)
        fprintf(stderr,
                "  in: %u periods of %llu, %s%s, first %llu: %d wrong, %llu of %llu stale "
                "present\n",
                periods, (unsigned long long)period, batch ? "batch" : "one key",
                any_family ? ", ages" : "", (unsigned long long)first, wrong,
                (unsigned long long)fp, (unsigned long long)fp_probes);
    sbloom_free(f);
}

static void keeps_the_promise(uint32_t periods, uint64_t period, int batch)
{
    keeps_the_promise_of(periods, period, batch, 0);
}

/* At the plan (n distinct keys spread over a window), the rate fresh keys meet is at most p. */
static void rate_over_a_window(uint32_t periods, double p)
{
    const uint64_t n = 20000;
    sbloom_t *f = NULL;
    CHECK(make_window(&f, n, p, periods, 100, 0) == SBLOOM_OK);
    if (!f)
        return;
    uint64_t seed = 5 + periods, now = 0;
    for (uint32_t q = 0; q < periods; q++, now += 100) {
        CHECK(sbloom_advance(f, now) == SBLOOM_OK);
        for (uint64_t i = 0; i < n / periods; i++)
            sbloom_add_u64(f, test_rand(&seed));
    }
    uint64_t hits = 0, probes = p >= 0.001 ? 200000 : 4000000;
    for (uint64_t i = 0; i < probes; i++)
        hits += (uint64_t)sbloom_contains_u64(f, test_rand(&seed));
    double rate = (double)hits / (double)probes;
    CHECK(rate <= p * 1.1 + 3.0 / (double)probes);
    sbloom_stats st = sbloom_stats_init();
    CHECK(sbloom_get_stats(f, &st) == SBLOOM_OK);
    if (p >= 0.001) /* (enough hits to compare with) */
        CHECK_REL(st.estimated_fpp, rate, 0.15);
    CHECK(st.estimated_fpp <= p);
    CHECK_REL(st.estimated_items, (double)n, 0.05);
    CHECK(sbloom_items(f) >= n - n / 50 && sbloom_items(f) <= n);
    /* memory against one plain filter planned for the window's keys at the same rate */
    sbloom_plan plain = sbloom_plan_init();
    CHECK(sbloom_plan_for(n, p, &plain) == SBLOOM_OK);
    printf("window of %u periods%s: rate %.2g (plan %.2g), %.2fx the memory of a plain filter, "
           "%.1f bits a window key\n",
           periods, any_family ? " (any family)" : "", rate, p,
           (double)sbloom_bytes(f) / (double)plain.bytes,
           8.0 * (double)sbloom_bytes(f) / (double)n);
    sbloom_free(f);
}

/* f saved to a new temporary file, its name written over path's XXXXXX. */
static void saved_to_temp(const sbloom_t *f, char *path)
{
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    CHECK(sbloom_save(f, path) == SBLOOM_OK);
}

/* g, a copy of f (a file's, a clone's): the same window, count and stages, the same answer for
 * keys [0, keys). */
static void same_as(const sbloom_t *g, const sbloom_t *f, uint64_t keys)
{
    sbloom_window v = sbloom_window_init(), w = sbloom_window_init();
    CHECK(sbloom_get_window(g, &v) == SBLOOM_OK && sbloom_get_window(f, &w) == SBLOOM_OK);
    CHECK(memcmp(&v, &w, sizeof v) == 0);
    CHECK(sbloom_stages(g) == sbloom_stages(f) && sbloom_items(g) == sbloom_items(f));
    CHECK(sbloom_planned_items(g) == sbloom_planned_items(f));
    uint64_t same = 0;
    for (uint64_t i = 0; i < keys; i++)
        same += sbloom_contains_u64(g, i) == sbloom_contains_u64(f, i);
    CHECK(same == keys);
}

/* The window as sbloom_get_window gives it, and the filter's file: saved and loaded (and
 * serialized) with its generations and when each began, then going on as the original does. In
 * the form the plan picks (src/modes/windowed.c): generation slots (each stage a counting filter)
 * or adjacent lines (each a 512-bit one). */
static void window_and_file(uint32_t periods, double p, int slots)
{
    sbloom_t *f = NULL;
    CHECK(sbloom_create_windowed(&f, 3000, p, periods, 60, 12345) == SBLOOM_OK);
    if (!f)
        return;
    CHECK(sbloom_is_growing(f) == 0);
    sbloom_layout stage_layout = sbloom_get_layout(sbloom_stage(f, 0));
    CHECK(slots ? stage_layout == SBLOOM_LAYOUT_COUNTING512
                : stage_layout == SBLOOM_LAYOUT_BLOCK512_K8 ||
                      stage_layout == SBLOOM_LAYOUT_BLOCK512_K16);
    sbloom_window w = sbloom_window_init();
    CHECK(sbloom_get_window(f, &w) == SBLOOM_OK);
    CHECK(w.periods == periods && w.generations == periods + 1 && w.period == 60 && w.now == 12300);
    CHECK(w.generation_start[periods] == 12300 && w.generation_start[0] == UINT64_MAX);
    for (uint64_t t = 12345, i = 0; i < 2000; i++, t += 1) {
        CHECK(sbloom_advance(f, t) == SBLOOM_OK);
        sbloom_add_u64(f, i);
    }
    CHECK(sbloom_get_window(f, &w) == SBLOOM_OK);
    CHECK(w.now == 14340 && w.generation_start[0] == 14340 - 60 * periods &&
          w.generation_start[periods] == 14340);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < w.generations; i++) {
        sum += w.generation_items[i];
        CHECK(sbloom_items(sbloom_stage(f, i)) == w.generation_items[i]);
    }
    CHECK(sum == sbloom_items(f) && sum > 0 && sum < 2000); /* the oldest are forgotten */

    char path[] = "/tmp/simdbloom-window-XXXXXX";
    saved_to_temp(f, path);
    sbloom_t *back = NULL;
    CHECK(sbloom_load(&back, path) == SBLOOM_OK);
    unlink(path);
    sbloom_t *copy = NULL;
    CHECK(sbloom_clone(&copy, f) == SBLOOM_OK);
    sbloom_t *forms[2] = {back, copy};
    for (int k = 0; k < 2; k++) {
        CHECK(forms[k] != NULL);
        if (forms[k])
            same_as(forms[k], f, 4000);
    }
    /* time goes on alike: an hour later everything is forgotten in both */
    CHECK(sbloom_advance(f, 14340 + 3600) == SBLOOM_OK && sbloom_advance(back, 14340 + 3600) == 0);
    CHECK(sbloom_items(f) == 0 && back && sbloom_items(back) == 0);
    CHECK(sbloom_contains_u64(f, 1999) == 0);
    /* a clock that goes back changes nothing */
    CHECK(sbloom_add_u64(f, 7) == 1 && sbloom_advance(f, 10) == SBLOOM_OK);
    CHECK(sbloom_contains_u64(f, 7) == 1);
    /* union: the same plan at the same period */
    CHECK(sbloom_union(f, copy) == SBLOOM_E_INCOMPATIBLE); /* copy is an hour behind */
    CHECK(sbloom_advance(copy, 14340 + 3600) == SBLOOM_OK && sbloom_add_u64(copy, 8) == 1);
    CHECK(sbloom_union(f, copy) == SBLOOM_OK);
    CHECK(sbloom_contains_u64(f, 7) == 1 && sbloom_contains_u64(f, 8) == 1);
    CHECK(sbloom_intersect(f, copy) == SBLOOM_E_LAYOUT);
    /* concurrent mode on and off, answers unchanged */
    CHECK(sbloom_set_concurrent(f, 1) == SBLOOM_OK && sbloom_is_concurrent(f) == 1);
    CHECK(sbloom_contains_u64(f, 7) == 1 && sbloom_contains_u64(f, 8) == 1);
    CHECK(sbloom_set_concurrent(f, 0) == SBLOOM_OK && sbloom_is_concurrent(f) == 0);
    /* what a windowed filter refuses */
    sbloom_t *folded = NULL;
    CHECK(sbloom_fold(&folded, f, 2) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_remove_u64(f, 7) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_image_size(4096, SBLOOM_LAYOUT_WINDOWED) == 0);
    sbloom_t *plain = NULL;
    CHECK(sbloom_create(&plain, 1000, 0.01) == SBLOOM_OK);
    CHECK(sbloom_advance(plain, 100) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_get_window(plain, &w) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_union(plain, f) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_union(f, plain) == SBLOOM_E_INCOMPATIBLE);
    /* the clear forgets everything at once, and the window goes on */
    CHECK(sbloom_clear(f) == SBLOOM_OK && sbloom_items(f) == 0 && sbloom_contains_u64(f, 8) == 0);
    CHECK(sbloom_add_u64(f, 8) == 1);
    sbloom_free(plain);
    sbloom_free(back);
    sbloom_free(copy);
    sbloom_free(f);
}

/* A windowed file mapped in place (G <= 3): read-only it answers as the filter that wrote it and
 * refuses writes; read-write, adds and the clock go to the file's own record and lines, and the
 * file freed (synced) loads with every key and the window as the mapping left them. A file of
 * more than 3 periods is loaded, not mapped. */
static void mapped_in_place(double p)
{
    char dir[] = "/tmp/sbloom-window-XXXXXX", path[64];
    if (!mkdtemp(dir))
        return;
    snprintf(path, sizeof path, "%s/w.sbloom", dir);
    sbloom_t *f = NULL, *m = NULL, *back = NULL;
    CHECK(sbloom_create_windowed(&f, 6000, p, 3, 100, 1000) == SBLOOM_OK);
    uint64_t t = 1000;
    for (uint64_t i = 0; f && i < 3000; i++, t += 1) { /* 30 periods' worth: rotations too */
        sbloom_advance(f, t / 10 + 1000);
        sbloom_add_u64(f, i);
    }
    CHECK(f && sbloom_save(f, path) == SBLOOM_OK);
    CHECK(sbloom_map(&m, path, 0) == SBLOOM_OK);
    sbloom_window wf = sbloom_window_init(), wm = sbloom_window_init();
    CHECK(m && sbloom_get_window(f, &wf) == SBLOOM_OK && sbloom_get_window(m, &wm) == SBLOOM_OK);
    CHECK(m && wm.now == wf.now &&
          memcmp(wm.generation_items, wf.generation_items, sizeof wf.generation_items) == 0);
    uint8_t a[3000], b[3000];
    uint64_t keys[3000];
    for (uint64_t i = 0; i < 3000; i++)
        keys[i] = i;
    CHECK(m && sbloom_contains_u64s(f, keys, 3000, a) == sbloom_contains_u64s(m, keys, 3000, b) &&
          memcmp(a, b, sizeof a) == 0 && sbloom_items(m) == sbloom_items(f));
    CHECK(m && sbloom_add_u64(m, 99999) == SBLOOM_E_READONLY);
    CHECK(m && sbloom_advance(m, 999999) == SBLOOM_E_READONLY);
    sbloom_free(m);
    /* read-write: 1,000 keys more a period later, then freed (synced) and loaded */
    m = NULL;
    CHECK(sbloom_map(&m, path, SBLOOM_OPEN_WRITE) == SBLOOM_OK);
    CHECK(m && sbloom_advance(m, wf.now + 100) == SBLOOM_OK);
    CHECK(f && sbloom_advance(f, wf.now + 100) == SBLOOM_OK);
    for (uint64_t i = 5000; m && i < 6000; i++)
        CHECK(sbloom_add_u64(m, i) == sbloom_add_u64(f, i));
    uint64_t items = m ? sbloom_items(m) : 0;
    CHECK(items == sbloom_items(f));
    sbloom_free(m);
    CHECK(sbloom_load(&back, path) == SBLOOM_OK);
    CHECK(back && sbloom_items(back) == items);
    sbloom_window wb = sbloom_window_init();
    CHECK(back && sbloom_get_window(back, &wb) == SBLOOM_OK && wb.now == wf.now + 100);
    uint64_t more[1000];
    for (uint64_t i = 0; i < 1000; i++)
        more[i] = 5000 + i;
    CHECK(back && sbloom_contains_u64s(back, more, 1000, NULL) == 1000);
    CHECK(back &&
          sbloom_contains_u64s(back, keys, 3000, a) == sbloom_contains_u64s(f, keys, 3000, b) &&
          memcmp(a, b, sizeof a) == 0);
    sbloom_free(back);
    sbloom_free(f);
    /* a record whose count for a generation is more than its bits (a forged file: a mapping
     * verifies no checksum) is refused by the mapping as by a load, naming it */
    {
        FILE *fp = fopen(path, "r+b");
        uint64_t huge = UINT64_C(1) << 62;
        CHECK(fp && fseek(fp, 128 + 32 + 8 * 4 + 8 * 1, SEEK_SET) == 0 &&
              fwrite(&huge, 8, 1, fp) == 1); /* (little-endian: this test's hosts) */
        if (fp)
            fclose(fp);
        m = (sbloom_t *)1;
        CHECK(sbloom_map(&m, path, SBLOOM_OPEN_WRITE) == SBLOOM_E_CORRUPT && m == NULL);
        CHECK(strstr(sbloom_error_detail(), "generation 1 counts") != NULL);
    }
    /* more than 3 periods: an image per generation, not mapped */
    CHECK(sbloom_create_windowed(&f, 6000, p, 4, 100, 1000) == SBLOOM_OK);
    CHECK(f && sbloom_save(f, path) == SBLOOM_OK);
    m = (sbloom_t *)1;
    CHECK(sbloom_map(&m, path, SBLOOM_OPEN_WRITE) == SBLOOM_E_LAYOUT && m == NULL);
    sbloom_free(f);
    unlink(path);
    rmdir(dir);
}

/* A rotation of a shared windowed file killed after each generation it clears (the library's fault
 * point, in a child process that maps the file as dedup --shared does and moves its clock): the
 * file then maps again, the next process to move the clock finishes the rotation, and the window
 * answers every key as a filter that was never killed, its record (each generation's start and
 * keys) the same; synced, it loads. Jumps of 2 periods (2 generations cleared) and of a whole
 * window (all 4). */
static void rotation_killed(double p)
{
    char dir[] = "/tmp/sbloom-rotation-XXXXXX", path[64];
    if (!mkdtemp(dir))
        return;
    snprintf(path, sizeof path, "%s/w.sbloom", dir);
    const uint64_t jumps[] = {20, 45}; /* periods of 10: 2 periods on, then 4 (the whole window) */
    for (int j = 0; j < 2; j++) {
        uint64_t clears = jumps[j] / 10 < 4 ? jumps[j] / 10 : 4;
        for (uint64_t k = 0; k < clears; k++) {
            sbloom_t *model = NULL, *m = NULL, *back = NULL;
            CHECK(sbloom_create_windowed(&model, 4000, p, 3, 10, 1000) == SBLOOM_OK);
            for (uint64_t i = 0; model && i < 3000; i++) { /* keys over 3 periods */
                CHECK(sbloom_advance(model, 1000 + i / 100) == SBLOOM_OK);
                sbloom_add_u64(model, i);
            }
            CHECK(model && sbloom_save(model, path) == SBLOOM_OK);
            uint64_t later = 1029 + jumps[j];
            pid_t child = fork();
            if (child == 0) {
                sbloom_t *c = NULL;
                if (sbloom_map(&c, path, SBLOOM_OPEN_WRITE | SBLOOM_OPEN_CONCURRENT) != SBLOOM_OK)
                    _exit(2);
                sbloom_test_fault_arm("rotation", (long)k);
                sbloom_advance(c, later);
                _exit(3); /* not killed: the fault point was not passed */
            }
            int status = 0;
            CHECK(child > 0 && waitpid(child, &status, 0) == child);
            CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
            /* the next process: maps the file, moves the clock to the same time */
            CHECK(sbloom_map(&m, path, SBLOOM_OPEN_WRITE | SBLOOM_OPEN_CONCURRENT) == SBLOOM_OK);
            CHECK(m && sbloom_advance(m, later) == SBLOOM_OK);
            CHECK(model && sbloom_advance(model, later) == SBLOOM_OK);
            sbloom_window wm = sbloom_window_init(), wf = sbloom_window_init();
            CHECK(m && sbloom_get_window(m, &wm) == SBLOOM_OK &&
                  sbloom_get_window(model, &wf) == SBLOOM_OK);
            CHECK(m && memcmp(&wm, &wf, sizeof wm) == 0);
            uint64_t same = 0;
            for (uint64_t i = 0; m && i < 4000; i++)
                same += sbloom_contains_u64(m, i) == sbloom_contains_u64(model, i);
            CHECK(same == 4000);
            /* and it goes on: keys added after the kill are held */
            CHECK(m && sbloom_add_u64(m, 77777) == 1 && sbloom_contains_u64(m, 77777) == 1);
            CHECK(m && sbloom_sync(m) == SBLOOM_OK); /* (as the last dedup --shared to leave) */
            sbloom_free(m);
            CHECK(sbloom_load(&back, path) == SBLOOM_OK);
            CHECK(back && sbloom_contains_u64(back, 77777) == 1);
            sbloom_free(back);
            sbloom_free(model);
            unlink(path);
        }
    }
    sbloom_test_fault_arm(NULL, -1);
    char lock[80];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(lock);
    rmdir(dir);
}

/* The lock of the process moving a shared windowed file's clock (PATH.lock, at byte 264), left
 * holding another process's ID: a process that shares nothing (a child that only sleeps) holds no
 * liveness byte, so the word is taken over at once; a process that maps the file (a live worker)
 * is waited for, up to SIMDBLOOM_LOCK_WAIT seconds, and then sbloom_advance fails with
 * SBLOOM_E_LOCKED, the clock unmoved; once that worker is gone, the word is taken over. */
static void clock_lock_held(void)
{
    char dir[] = "/tmp/sbloom-clocklock-XXXXXX", path[64], lock[72];
    if (!mkdtemp(dir))
        return;
    snprintf(path, sizeof path, "%s/w.sbloom", dir);
    snprintf(lock, sizeof lock, "%s.lock", path);
    setenv("SIMDBLOOM_LOCK_WAIT", "1", 1); /* (read at the first wait of this process) */
    sbloom_t *f = NULL, *m = NULL;
    CHECK(sbloom_create_windowed(&f, 1000, 0.01, 3, 10, 1000) == SBLOOM_OK);
    CHECK(f && sbloom_add_u64(f, 1) == 1 && sbloom_save(f, path) == SBLOOM_OK);
    sbloom_free(f);
    CHECK(sbloom_map(&m, path, SBLOOM_OPEN_WRITE | SBLOOM_OPEN_CONCURRENT) == SBLOOM_OK);
    int ready[2];
    CHECK(pipe(ready) == 0);
    for (int sharing = 0; m && sharing < 2; sharing++) {
        pid_t child = fork();
        if (child == 0) {
            sbloom_t *c = NULL; /* a worker maps the file (and holds its liveness byte) */
            if (sharing && sbloom_map(&c, path, SBLOOM_OPEN_WRITE | SBLOOM_OPEN_CONCURRENT) != 0)
                _exit(2);
            if (write(ready[1], "x", 1) != 1)
                _exit(3);
            pause();
            _exit(0);
        }
        char byte;
        CHECK(child > 0 && read(ready[0], &byte, 1) == 1);
        uint32_t word = (uint32_t)child;
        int fd = open(lock, O_RDWR);
        CHECK(fd >= 0 && pwrite(fd, &word, 4, 264) == 4);
        close(fd);
        uint64_t later = 1000 + 10 * (uint64_t)(1 + sharing);
        CHECK(sbloom_advance(m, later) == (sharing ? SBLOOM_E_LOCKED : SBLOOM_OK));
        sbloom_window w = sbloom_window_init();
        CHECK(sbloom_get_window(m, &w) == SBLOOM_OK && w.now == 1010); /* (held: unmoved) */
        if (sharing)
            CHECK(strstr(sbloom_error_detail(), "process") != NULL);
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        CHECK(sbloom_advance(m, later) == SBLOOM_OK); /* its holder gone: taken over */
        CHECK(sbloom_get_window(m, &w) == SBLOOM_OK && w.now == later);
    }
    close(ready[0]);
    close(ready[1]);
    sbloom_free(m);
    unsetenv("SIMDBLOOM_LOCK_WAIT");
    unlink(path);
    unlink(lock);
    rmdir(dir);
}

/* A clock at the largest values ends (sbloom_advance counts the generations down, never past
 * UINT64_MAX), with a period of 1 as of more. */
static void clock_at_its_end(void)
{
    const uint64_t periods[] = {1, 7};
    for (int i = 0; i < 2; i++) {
        sbloom_t *f = NULL;
        CHECK(sbloom_create_windowed(&f, 100, 0.01, 3, periods[i], UINT64_MAX - 10) == SBLOOM_OK);
        CHECK(f && sbloom_add(f, "x", 1) == 1);
        CHECK(f && sbloom_advance(f, UINT64_MAX - 1) == SBLOOM_OK);
        CHECK(f && sbloom_advance(f, UINT64_MAX) == SBLOOM_OK);
        sbloom_window w = sbloom_window_init();
        CHECK(f && sbloom_get_window(f, &w) == SBLOOM_OK &&
              w.now == UINT64_MAX / periods[i] * periods[i]);
        CHECK(f && sbloom_contains(f, "x", 1) == (periods[i] == 7)); /* 10 s: gone at period 1 */
        sbloom_free(f);
    }
}

/* Arguments out of range are refused, nothing made. */
/* A growing window's rings in its file and copies: saved, loaded, serialized and cloned with
 * every ring (the answers, counts and window the same, and going on alike); what it refuses
 * (concurrent mode, a mapping). tests/test_file.c forges its file. */
static void growing_file(uint32_t periods, double p)
{
    sbloom_t *f = NULL;
    CHECK(sbloom_create_windowed_scalable(&f, 1000, p, periods, 60, 6000) == SBLOOM_OK);
    if (!f)
        return;
    /* 12,000 keys in one period, then 3,000 in the next: rings of 1,000, 2,000, ... a window;
     * new keys are new but for the rate */
    uint64_t fresh = 0;
    for (uint64_t i = 0; i < 12000; i++)
        fresh += (uint64_t)sbloom_add_u64(f, i);
    CHECK(sbloom_advance(f, 6060) == SBLOOM_OK);
    uint8_t is_new[3000];
    uint64_t more[3000];
    for (uint64_t i = 0; i < 3000; i++)
        more[i] = 20000 + i;
    fresh += sbloom_add_if_new_u64s(f, more, 3000, is_new);
    CHECK(fresh >= 15000 - 15000 * p * 2 && fresh <= 15000);
    uint32_t rings = sbloom_stages(f) / (periods + 1);
    CHECK(rings >= 4 && sbloom_stages(f) % (periods + 1) == 0);
    CHECK(sbloom_items(f) == fresh && sbloom_planned_items(f) >= 1000u << (rings - 1));
    CHECK(sbloom_is_growing(f) == 1);

    char path[] = "/tmp/simdbloom-window-XXXXXX";
    saved_to_temp(f, path);
    sbloom_t *back = NULL, *mapped = NULL, *copy = NULL, *image = NULL;
    CHECK(sbloom_load(&back, path) == SBLOOM_OK);
    CHECK(sbloom_map(&mapped, path, 0) == SBLOOM_E_LAYOUT && mapped == NULL);
    unlink(path);
    CHECK(sbloom_clone(&copy, f) == SBLOOM_OK);
    size_t size = (size_t)sbloom_serialized_size(f);
    uint8_t *bytes = malloc(size);
    CHECK(bytes && sbloom_serialize(f, bytes, size) == SBLOOM_OK);
    CHECK(bytes && sbloom_deserialize(&image, bytes, size) == SBLOOM_OK);
    /* a union with a window that grew alike (a clone): its keys all held, the windows alike;
     * with a planned window: refused */
    sbloom_t *planned = NULL, *twin = NULL;
    CHECK(sbloom_create_windowed(&planned, 1000, p, periods, 60, 6060) == SBLOOM_OK);
    CHECK(sbloom_clone(&twin, f) == SBLOOM_OK && sbloom_union(twin, f) == SBLOOM_OK);
    CHECK(twin && sbloom_stages(twin) == sbloom_stages(f) && sbloom_contains_u64(twin, 20500) == 1);
    CHECK(twin && sbloom_contains_u64(twin, 11999) == 1);
    CHECK(sbloom_union(f, planned) == SBLOOM_E_INCOMPATIBLE);
    sbloom_free(planned);
    sbloom_free(twin);
    sbloom_t *forms[3] = {back, copy, image};
    for (int k = 0; k < 3; k++) {
        sbloom_t *g = forms[k];
        CHECK(g != NULL);
        if (!g)
            continue;
        same_as(g, f, 30000);
        /* going on alike: more keys, then the clock past the window */
        uint64_t took = 0;
        for (uint64_t i = 40000; i < 41000; i++)
            took += (uint64_t)sbloom_add_u64(g, i);
        CHECK(took >= 1000 - 1000 * p * 3);
        CHECK(sbloom_advance(g, 6060 + 60 * (periods + 1)) == SBLOOM_OK);
        CHECK(sbloom_items(g) == 0 && sbloom_stages(g) == periods + 1);
        CHECK(sbloom_contains_u64(g, 40500) == 0 && sbloom_contains_u64(g, 5) == 0);
    }
    free(bytes);
    sbloom_free(back);
    sbloom_free(copy);
    sbloom_free(image);
    sbloom_free(f);
}

static void refusals(void)
{
    sbloom_t *f = (sbloom_t *)1;
    CHECK(sbloom_create_windowed(&f, 0, 0.01, 4, 10, 0) == SBLOOM_E_INVALID && f == NULL);
    CHECK(sbloom_create_windowed(&f, 100, 1.0, 4, 10, 0) == SBLOOM_E_INVALID);
    CHECK(sbloom_create_windowed(&f, 100, 0.01, 0, 10, 0) == SBLOOM_E_INVALID);
    CHECK(sbloom_create_windowed(&f, 100, 0.01, SBLOOM_WINDOW_MAX_PERIODS + 1, 10, 0) ==
          SBLOOM_E_INVALID);
    CHECK(sbloom_create_windowed(&f, 100, 0.01, 4, 0, 0) == SBLOOM_E_INVALID);
    CHECK(sbloom_create_windowed(NULL, 100, 0.01, 4, 10, 0) == SBLOOM_E_NULL);
    CHECK(sbloom_advance(NULL, 5) == SBLOOM_E_NULL);
    CHECK(sbloom_create_windowed(&f, 100, 0.01, SBLOOM_WINDOW_MAX_PERIODS, 10, UINT64_MAX) ==
          SBLOOM_OK);
    CHECK(f && sbloom_add(f, "x", 1) == 1 && sbloom_advance(f, UINT64_MAX) == SBLOOM_OK);
    CHECK(f && sbloom_contains(f, "x", 1) == 1);
    sbloom_window w = sbloom_window_init();
    w.size = 0;
    CHECK(sbloom_get_window(f, &w) == SBLOOM_E_INVALID);
    sbloom_free(f);
}

/* The ages form over a long steady stream: 30 windows of fresh keys, as planned. Its lines send
 * keys to the spare lines period after period; a line's mark (the quotients a lookup must also
 * ask the spare for) falls each time and is reset only once the keys it sent are forgotten. The
 * rate, measured and estimated, stays within the plan at the end as at the first window (without
 * the reset, the estimate at 1e-4 rose past the plan and every lookup read a second line). */
static void steady_stream_keeps_its_rate(double p)
{
    const uint64_t n = 30000;
    sbloom_t *f = NULL;
    CHECK(make_window(&f, n, p, 3, 2, 0) == SBLOOM_OK);
    if (!f)
        return;
    sbloom_window w = sbloom_window_init();
    CHECK(sbloom_get_window(f, &w) == SBLOOM_OK && sbloom_stages(f) == 0);
    static uint64_t keys[30000];
    uint64_t seed = 77, clock = 0;
    double first_estimate = 0;
    for (int window = 0; window < 30; window++) {
        for (uint32_t q = 0; q < w.periods; q++, clock++) {
            CHECK(sbloom_advance(f, clock * w.period) == SBLOOM_OK);
            for (uint64_t i = 0; i < n / w.periods; i++)
                keys[i] = test_rand(&seed);
            CHECK(sbloom_add_if_new_u64s(f, keys, n / w.periods, NULL) >= 0);
        }
        sbloom_stats st = sbloom_stats_init();
        CHECK(sbloom_get_stats(f, &st) == SBLOOM_OK);
        if (window == 0)
            first_estimate = st.estimated_fpp;
        if (window == 29) {
            CHECK(st.estimated_fpp <= p);
            CHECK(st.estimated_fpp <= 1.2 * first_estimate + p / 10);
            uint64_t hits = 0, probes = 2000000;
            for (uint64_t i = 0; i < probes; i++)
                hits += (uint64_t)sbloom_contains_u64(f, test_rand(&seed));
            CHECK((double)hits <= 1.1 * p * (double)probes + 10);
            printf("fingerprint window, 30 windows at %g: estimate %.3g (first window %.3g), "
                   "measured %.3g\n",
                   p, st.estimated_fpp, first_estimate, (double)hits / (double)probes);
        }
    }
    sbloom_free(f);
}

/* sbloom_second_line_shares of the ages form: none before a key; in its steady state (a window of
 * keys held, each period's added as the oldest period's go) some of its keys in the spare lines
 * and some absent lookups reading them, under the plain filter's design bound past its plan (the
 * window's lines are as full as a plain filter's at its plan at a period's end: 5% at 1M keys,
 * simdbloom-bench-window); once every key is forgotten, none again: the spare lines emptied and
 * every line's mark back. A ring of Bloom generations reads one line a key: none. */
static void second_line_of_a_window(double p)
{
    enum { N = 30000 };
    sbloom_t *f = NULL, *bloom = NULL;
    CHECK(make_window(&f, N, p, 3, 60, 0) == SBLOOM_OK);
    CHECK(sbloom_create_windowed(&bloom, N, p, 3, 60, 0) == SBLOOM_OK);
    sbloom_window w = sbloom_window_init();
    if (!f || !bloom || sbloom_get_window(f, &w) != SBLOOM_OK)
        return;
    double absent = -1, spare = -1;
    CHECK(sbloom_second_line_shares(f, &absent, &spare) == SBLOOM_OK && absent == 0 && spare == 0);
    static uint64_t keys[N];
    uint64_t seed = 17, t = 0;
    double most_absent = 0, most_spare = 0;
    for (uint32_t q = 0; q < 4 * w.periods; q++, t += w.period) {
        CHECK(sbloom_advance(f, t) == SBLOOM_OK && sbloom_advance(bloom, t) == SBLOOM_OK);
        for (size_t i = 0; i < N / w.periods; i++)
            keys[i] = test_rand(&seed);
        CHECK(sbloom_add_hashes(f, keys, N / w.periods) >= 0);
        CHECK(sbloom_add_hashes(bloom, keys, N / w.periods) >= 0);
        CHECK(sbloom_second_line_shares(f, &absent, &spare) == SBLOOM_OK);
        most_absent = absent > most_absent ? absent : most_absent;
        most_spare = spare > most_spare ? spare : most_spare;
    }
    printf("window of ages at %g, %d keys: second line at a period's end: %.4f of absent lookups, "
           "%.4f of the keys (the most over %u periods: %.4f, %.4f)\n",
           p, N, absent, spare, 4 * w.periods, most_absent, most_spare);
    CHECK(absent > 0 && spare > 0 && most_absent < 0.1 && most_spare < 0.1);
    double held = spare * (double)sbloom_items(f); /* a whole count of the keys held */
    CHECK(fabs(held - round(held)) < 1e-6 * (double)N);
    CHECK(sbloom_second_line_shares(bloom, &absent, &spare) == SBLOOM_OK && absent == 0 &&
          spare == 0);
    CHECK(sbloom_advance(f, t + w.periods * w.period) == SBLOOM_OK && sbloom_items(f) == 0);
    CHECK(sbloom_second_line_shares(f, &absent, &spare) == SBLOOM_OK && absent == 0 && spare == 0);
    sbloom_free(f);
    sbloom_free(bloom);
}

/* The ages form (SBLOOM_OPTS_ANY_FAMILY, where it is smaller than a ring of generations): less
 * memory than sbloom_create_windowed's for the same window, the window kept in finer periods
 * where the period divides; its file saved, loaded, cloned and mapped, answering as the filter
 * does; rewound and cleared; many writers; and what it refuses (union, stages, fold, remove). */
static void fingerprint_window(double p)
{
    sbloom_t *f = NULL, *bloom = NULL;
    CHECK(make_window(&f, 3000, p, 3, 60, 12345) == SBLOOM_OK);
    CHECK(sbloom_create_windowed(&bloom, 3000, p, 3, 60, 12345) == SBLOOM_OK);
    if (!f || !bloom)
        return;
    CHECK(sbloom_bytes(f) < sbloom_bytes(bloom));
    printf("fingerprint window at %g: %.1f bits a window key, the ring of generations %.1f\n", p,
           8.0 * (double)sbloom_bytes(f) / 3000, 8.0 * (double)sbloom_bytes(bloom) / 3000);
    CHECK(sbloom_stages(f) == 0 && sbloom_stage(f, 0) == NULL);
    sbloom_window w = sbloom_window_init();
    CHECK(sbloom_get_window(f, &w) == SBLOOM_OK);
    CHECK(w.periods * w.period == 180 && w.periods % 3 == 0 && w.generations == w.periods + 1);
    /* key i added at 12345 + i: held while now < its time + 180 */
    uint64_t t = 12345;
    for (uint64_t i = 0; i < 2000; i++, t++) {
        CHECK(sbloom_advance(f, t) == SBLOOM_OK);
        CHECK(sbloom_add_u64(f, i) == 1 || i < 200); /* (a false positive: rarely, at 1%) */
    }
    uint64_t held = 0;
    for (uint64_t i = 2000 - 180; i < 2000; i++)
        held += (uint64_t)sbloom_contains_u64(f, i);
    CHECK(held == 180);
    CHECK(sbloom_items(f) >= 180 && sbloom_items(f) < 2000); /* the oldest are forgotten */

    char path[] = "/tmp/simdbloom-window-XXXXXX";
    saved_to_temp(f, path);
    sbloom_t *back = NULL, *copy = NULL, *m = NULL;
    CHECK(sbloom_load(&back, path) == SBLOOM_OK);
    CHECK(sbloom_clone(&copy, f) == SBLOOM_OK);
    if (back)
        same_as(back, f, 4000);
    if (copy)
        same_as(copy, f, 4000);
    uint16_t probe = 1;
    if (*(uint8_t *)&probe == 1) { /* mapped in place: one image, its own record */
        CHECK(sbloom_map(&m, path, SBLOOM_OPEN_WRITE) == SBLOOM_OK);
        if (m) {
            same_as(m, f, 4000);
            CHECK(sbloom_add_u64(m, 777777) == sbloom_add_u64(f, 777777));
            sbloom_free(m);
            m = NULL;
            CHECK(sbloom_load(&m, path) == SBLOOM_OK);
            if (m)
                same_as(m, f, 4000);
            sbloom_free(m);
        }
        CHECK(sbloom_map(&m, path, SBLOOM_OPEN_WRITE | SBLOOM_OPEN_CONCURRENT) == SBLOOM_E_LAYOUT);
    }
    unlink(path);
    /* a burst of ten windows' keys in one period: past its room it refuses keys (SBLOOM_E_FULL),
     * never a key it reported new, which it holds */
    {
        static uint64_t burst[30000];
        static uint8_t fresh[30000];
        uint64_t seed = 99;
        for (size_t i = 0; i < 30000; i++)
            burst[i] = test_rand(&seed);
        sbloom_t *full = NULL;
        CHECK(copy && sbloom_clone(&full, copy) == SBLOOM_OK);
        int64_t added = full ? sbloom_add_if_new_u64s(full, burst, 30000, fresh) : 0;
        CHECK(added == SBLOOM_E_FULL);
        uint64_t reported = 0, held = 0;
        for (size_t i = 0; full && i < 30000; i++)
            if (fresh[i]) {
                reported++;
                held += (uint64_t)sbloom_contains_u64(full, burst[i]);
            }
        CHECK(reported > 3000 && reported < 30000 && held == reported);
        sbloom_free(full);
    }
    /* asked for many writers as well: the same window, its locks taken (tests/test_concurrent.c
     * runs threads on it) */
    {
        sbloom_opts o = sbloom_opts_init();
        o.expected = 3000;
        o.fpp = p;
        o.periods = 3;
        o.period = 60;
        o.now = 12345;
        o.flags = SBLOOM_OPTS_ANY_FAMILY | SBLOOM_OPTS_CONCURRENT;
        sbloom_t *many = NULL;
        CHECK(sbloom_create_opts(&many, &o) == SBLOOM_OK && sbloom_is_concurrent(many) == 1 &&
              sbloom_stages(many) == 0 && sbloom_bytes(many) == sbloom_bytes(f));
        CHECK(many && sbloom_add_u64(many, 3) == 1 && sbloom_add_u64(many, 3) == 0 &&
              sbloom_contains_u64(many, 3) == 1 && sbloom_test_locks_held(many) == 0);
        CHECK(sbloom_set_concurrent(many, 0) == SBLOOM_OK && sbloom_is_concurrent(many) == 0 &&
              sbloom_contains_u64(many, 3) == 1);
        sbloom_free(many);
    }
    /* what it refuses */
    sbloom_t *folded = NULL;
    CHECK(copy && sbloom_union(f, copy) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_union(bloom, f) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_fold(&folded, f, 2) == SBLOOM_E_LAYOUT);
    CHECK(sbloom_remove_u64(f, 7) == SBLOOM_E_LAYOUT);
    /* a clock set a day ahead, then rewound: every key held a whole window from now */
    CHECK(sbloom_advance(f, t + 86400) == SBLOOM_OK && sbloom_items(f) == 0);
    CHECK(sbloom_add_u64(f, 5) == 1 && sbloom_add_u64(f, 6) == 1);
    CHECK(sbloom_rewind(f, t) == SBLOOM_OK);
    CHECK(sbloom_advance(f, t + 179) == SBLOOM_OK && sbloom_contains_u64(f, 5) == 1 &&
          sbloom_contains_u64(f, 6) == 1);
    CHECK(sbloom_advance(f, t + 240) == SBLOOM_OK && sbloom_contains_u64(f, 5) == 0);
    /* the clear forgets everything at once, and the window goes on */
    CHECK(sbloom_add_u64(f, 8) == 1);
    CHECK(sbloom_clear(f) == SBLOOM_OK && sbloom_items(f) == 0 && sbloom_contains_u64(f, 8) == 0);
    CHECK(sbloom_add_u64(f, 8) == 1);
    sbloom_free(back);
    sbloom_free(copy);
    sbloom_free(bloom);
    sbloom_free(f);
}

int main(void)
{
    keeps_the_promise(1, 10, 1);
    keeps_the_promise(3, 10, 1); /* generation slots */
    keeps_the_promise(3, 10, 0);
    keeps_the_promise(4, 10, 1); /* adjacent lines */
    keeps_the_promise(4, 10, 0);
    keeps_the_promise(7, 86400, 1);
    rate_over_a_window(1, 0.01);
    rate_over_a_window(3, 0.01);
    rate_over_a_window(4, 0.01);
    rate_over_a_window(8, 0.01);
    /* the ages form, where SBLOOM_OPTS_ANY_FAMILY picks it */
    any_family = 1;
    keeps_the_promise(3, 10, 1); /* finer periods: 6 of 5 */
    keeps_the_promise(3, 10, 0);
    keeps_the_promise(3, 7, 1); /* 7 does not split: 3 periods */
    keeps_the_promise(1, 10, 1);
    keeps_the_promise(7, 86400, 1);
    rate_over_a_window(3, 0.01);
    rate_over_a_window(3, 1e-4);
    rate_over_a_window(3, 1e-6);
    fingerprint_window(0.01);
    fingerprint_window(1e-6);
    second_line_of_a_window(1e-6);
    second_line_of_a_window(1e-4);
    steady_stream_keeps_its_rate(1e-4);
    any_family = 0;
    window_and_file(3, 0.01, 1);  /* slots pay at 1% */
    window_and_file(4, 0.001, 0); /* more than 4 generations: adjacent lines */
    window_and_file(3, 1e-6, 0);  /* slots do not pay at 1e-6 */
    uint16_t probe = 1;
    if (*(uint8_t *)&probe == 1) { /* files are used in place on little-endian hosts */
        mapped_in_place(0.01);     /* slots */
        mapped_in_place(1e-6);     /* adjacent lines, one image */
        rotation_killed(0.01);     /* slots */
        rotation_killed(1e-6);     /* adjacent lines */
        clock_lock_held();
    }
    clock_at_its_end();
    keeps_the_promise_of(3, 10, 1, 750); /* growing from an eighth of the keys a window */
    keeps_the_promise_of(3, 10, 0, 750);
    keeps_the_promise_of(4, 10, 1, 750);
    growing_file(3, 0.01);
    growing_file(4, 0.001);
    refusals();
    return check_report();
}
