/*
 * simdbloom bench: the speed of this build on the CPU at hand, as `zstd -b` and `openssl speed`
 * measure theirs. Filter sizes come from the CPU's caches (half of L1d, L2 and L3, and DRAM), and
 * for each size and each instruction set that runs natively here it times batch contains, add
 * and test-and-add on pre-hashed keys, and contains and test-and-add on URL strings, beside the
 * line-read limit: one random 64-byte read per key over an array of the filter's size (on huge
 * pages, as the filters get it), the best of 16 to 256 keys prefetched ahead, the most any
 * blocked filter can do. Best of a few repetitions; no source tree
 * and no C++ toolchain needed. The Google Benchmark suite (bench/) stays for development.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"
#include "urlgen.h"

static const char bench_help[] =
    "usage: simdbloom bench [--quick] [--size BYTES] [--isa NAME] [--layout L] [--urls FILE]\n"
    "                       [--window-keys N] [--json]\n"
    "\n"
    "Measures this build on this CPU: for filter sizes picked from the cache sizes (half of L1d,\n"
    "L2, L3, and 256 MiB for DRAM) and every instruction set that runs natively, batch contains,\n"
    "add and test-and-add of pre-hashed keys (block512-k8, 10 bits per key), and contains and\n"
    "test-and-add of URL strings, in ns per key and millions of keys per second, beside the\n"
    "line-read limit (one random cache line per key, the best of 16 to 256 keys prefetched\n"
    "ahead: CPUs with many miss buffers need the deep windows); then, at the largest size, adds\n"
    "of new keys and test-and-adds by many writers: the plain filter on one thread against the\n"
    "concurrent mode on one thread and on every CPU; last, the windowed filter (3 periods: 4\n"
    "generations, 1% over the window) against a plain filter for the window's keys, and the\n"
    "fingerprint window (3 periods at 1e-6) against the plain fingerprint filter, test-and-add\n"
    "of new keys and lookups of absent ones, at 1M and 100M keys a window. About 30 seconds.\n"
    "  --quick       two sizes (half of L2, and 64 MiB), fewer keys, the window at 1M keys\n"
    "                only: a few seconds\n"
    "  --size BYTES  one filter size instead of the cache-based sizes (the window at 1M keys\n"
    "                only): k, M, G are powers of 1000 (1M = 10^6 bytes), KiB, MiB, GiB of 1024\n"
    "                (1MiB = 2^20 bytes)\n"
    "  --isa NAME    one instruction set (see simdbloom --version)\n"
    "  --layout L    another layout than block512-k8 (counting512 and the fingerprint layouts\n"
    "                fp512-r*, 70% of their plan, add a remove row; the fingerprint layouts\n"
    "                also the share of lookups and keys that read a second line)\n"
    "  --urls FILE   URL strings from FILE (one per line) instead of generated ones\n"
    "  --window-keys N\n"
    "                the windows' rows at N keys a window only (1k to 1G; k, M, G: 10^3, 10^6,\n"
    "                10^9), instead of 1M and 100M\n"
    "  --json        one JSON document on standard output instead of the table\n"
    "Machines are noisy: compare rows of one run (the ratio to the limit), not runs.\n";

typedef struct bench_config {
    int quick, json;
    uint64_t size; /* 0: from the caches */
    const char *isa, *urls_path;
    sbloom_layout layout;
    uint64_t window_keys; /* 0: 1M, and 100M in a full run */
} bench_config;

/* Cache sizes from sysconf where the C library knows them, else typical ones. */
/* The CPU's model name (Linux: /proc/cpuinfo), with anything JSON would need escaped dropped;
 * "unknown" elsewhere. */
static void cpu_model(char *out, size_t cap)
{
    snprintf(out, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !colon)
            continue;
        size_t n = 0;
        for (const char *p = colon + 1; *p && n + 1 < cap; p++)
            if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\' && !(n == 0 && *p == ' '))
                out[n++] = *p;
        out[n] = '\0';
        break;
    }
    fclose(f);
}

static void cache_sizes(uint64_t out[3])
{
    static const uint64_t fallback[3] = {32 << 10, 1 << 20, 32 << 20};
#ifdef _SC_LEVEL1_DCACHE_SIZE
    long found[3] = {sysconf(_SC_LEVEL1_DCACHE_SIZE), sysconf(_SC_LEVEL2_CACHE_SIZE),
                     sysconf(_SC_LEVEL3_CACHE_SIZE)};
#else
    long found[3] = {0, 0, 0};
#endif
    for (int i = 0; i < 3; i++)
        out[i] = found[i] > 0 ? (uint64_t)found[i] : fallback[i];
}

/* The line-read limit: ns per key to read one random 64-byte line of an array of `bytes` (on
 * huge pages where the kernel grants them, as the filters get their memory), the lines of keys
 * i + ahead requested while key i is read; the best over ahead = 16, 32, ... 256, as the peer
 * harness takes its best "BASE line" row (a limit measured 16 ahead only was 2.9x too slow on an
 * AMD EPYC with many miss buffers: issue 31). *best_ahead is the window that won. */
static double line_limit(uint64_t bytes, const uint64_t *keys, size_t n, int reps,
                         size_t *best_ahead)
{
    static const size_t windows[] = {16, 32, 64, 128, 256};
    uint64_t lines = bytes / 64 ? bytes / 64 : 1;
    uint64_t *array = mmap(NULL, (size_t)(lines * 64), PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (array == MAP_FAILED)
        return NAN;
#ifdef MADV_HUGEPAGE
    madvise(array, (size_t)(lines * 64), MADV_HUGEPAGE); /* a hint: failure is harmless */
#endif
    for (uint64_t i = 0; i < lines * 8; i += 8)
        array[i] = i;
    double best = INFINITY;
    volatile uint64_t sink = 0;
    *best_ahead = windows[0];
    for (size_t w = 0; w < sizeof windows / sizeof *windows; w++) {
        size_t ahead = windows[w];
        for (int r = 0; r < reps; r++) {
            double t0 = now_seconds();
            uint64_t sum = 0;
            for (size_t i = 0; i < n; i++) {
                if (i + ahead < n)
                    __builtin_prefetch(array + 8 * ((keys[i + ahead] >> 32) * lines >> 32), 0, 3);
                sum += array[8 * ((keys[i] >> 32) * lines >> 32)];
            }
            double t = (now_seconds() - t0) * 1e9 / (double)n;
            sink += sum;
            if (t < best) {
                best = t;
                *best_ahead = ahead;
            }
        }
    }
    (void)sink;
    munmap(array, (size_t)(lines * 64));
    return best;
}

typedef struct result {
    const char *op;
    double ns;
} result;

/* The keys a fingerprint filter of `bytes` is planned to hold at the rate its geometry is for
 * (fp512-r10 at 1e-3 .. fp512-r29 at 1e-9): its plan's bits a key, from a plan of 1M keys. */
static uint64_t fingerprint_keys(sbloom_layout layout, uint64_t bytes)
{
    sbloom_plan plan = sbloom_plan_init();
    double rate = pow(10.0, -3.0 - (double)(layout - SBLOOM_LAYOUT_FP512_R10));
    if (sbloom_plan_for_layout(1000000, rate, layout, &plan) != SBLOOM_OK)
        return 0;
    return (uint64_t)((double)bytes * 8.0 / plan.bits_per_key);
}

/* A filter of `bytes` filled to its usual load, in pieces of n keys through buf: 10 bits a key;
 * 40 for the counting layout, whose counters take 4 bits each; a fingerprint filter 70% of its
 * plan, so that the timed adds (fresh_room) fit. */
static sbloom_t *filled_filter(const bench_config *c, uint64_t bytes, uint64_t *buf, size_t n)
{
    sbloom_t *f;
    if (sbloom_create_bytes(&f, bytes, c->layout) != SBLOOM_OK)
        return NULL;
    uint64_t bits_per_key = c->layout == SBLOOM_LAYOUT_COUNTING512 ? 40 : 10;
    uint64_t items = sbloom_bytes(f) * 8 / bits_per_key, state = 12345;
    if (is_fingerprint_layout(c->layout))
        items = fingerprint_keys(c->layout, sbloom_bytes(f)) * 7 / 10;
    for (uint64_t done = 0; done < items;) {
        size_t len = items - done < n ? (size_t)(items - done) : n;
        for (size_t i = 0; i < len; i++)
            buf[i] = url_splitmix(&state);
        sbloom_add_hashes(f, buf, len);
        done += len;
    }
    return f;
}

/* Times the operations on a copy of `base` running on the instruction set set now; returns how
 * many results were written, or -1. */
static int time_filter(const sbloom_t *base, const uint64_t *probe, uint64_t *fresh, size_t n,
                       const void *const *urls, const size_t *url_lens, size_t nurls, uint8_t *out,
                       int reps, result *r)
{
    sbloom_t *f;
    if (sbloom_clone(&f, base) != SBLOOM_OK)
        return -1;
    uint64_t state = 777;
    sbloom_layout layout = sbloom_get_layout(f);
    int fingerprint = is_fingerprint_layout(layout);
    int counting = layout == SBLOOM_LAYOUT_COUNTING512 || fingerprint; /* (a remove row) */
    if (fingerprint) { /* the timed adds take a fifth of its plan, and are removed again */
        size_t room = (size_t)(fingerprint_keys(layout, sbloom_bytes(f)) / 5);
        n = n < room ? n : room;
        nurls = nurls < room ? nurls : room;
    }
    if (n == 0) {
        sbloom_free(f);
        return -1;
    }
    double best[6] = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};
    for (int rep = 0; rep < reps; rep++) {
        double t0 = now_seconds();
        sbloom_contains_hashes(f, probe, n, NULL);
        double t1 = now_seconds();
        best[0] = fmin(best[0], (t1 - t0) * 1e9 / (double)n);
        for (size_t i = 0; i < n; i++) /* fresh keys: adds that change the filter */
            fresh[i] = url_splitmix(&state);
        t0 = now_seconds();
        sbloom_add_hashes(f, fresh, n);
        t1 = now_seconds();
        best[1] = fmin(best[1], (t1 - t0) * 1e9 / (double)n);
        if (counting) { /* the counting layout: take the same keys out again */
            t0 = now_seconds();
            sbloom_remove_hashes(f, fresh, n, NULL);
            t1 = now_seconds();
            best[5] = fmin(best[5], (t1 - t0) * 1e9 / (double)n);
        }
        for (size_t i = 0; i < n; i++)
            fresh[i] = url_splitmix(&state);
        t0 = now_seconds();
        sbloom_add_if_new_hashes(f, fresh, n, out);
        t1 = now_seconds();
        best[2] = fmin(best[2], (t1 - t0) * 1e9 / (double)n);
        if (fingerprint) /* its load as it was */
            sbloom_remove_hashes(f, fresh, n, NULL);
        if (nurls) {
            t0 = now_seconds();
            sbloom_contains_keys(f, urls, url_lens, nurls, out);
            t1 = now_seconds();
            best[3] = fmin(best[3], (t1 - t0) * 1e9 / (double)nurls);
            t0 = now_seconds();
            sbloom_add_if_new_keys(f, urls, url_lens, nurls, out);
            t1 = now_seconds();
            best[4] = fmin(best[4], (t1 - t0) * 1e9 / (double)nurls);
            if (fingerprint)
                sbloom_remove_keys(f, urls, url_lens, nurls, NULL);
        }
    }
    static const char *const ops[6] = {"contains",        "add",   "add_if_new", "urls contains",
                                       "urls add_if_new", "remove"};
    int count = 0;
    for (int i = 0; i < 6; i++)
        if ((i < 3) || (i < 5 && nurls) || (i == 5 && counting))
            r[count++] = (result){ops[i], best[i]};
    sbloom_free(f);
    return count;
}

/* The URL strings: from a file, or generated (realistic lengths and shapes). */
static char *load_urls(const bench_config *c, size_t want, const void ***keys, size_t **lens,
                       size_t *count)
{
    char *text = NULL;
    size_t used = 0, cap = 0, n = 0;
    *keys = malloc(want * sizeof **keys);
    *lens = malloc(want * sizeof **lens);
    size_t *offsets = malloc(want * sizeof *offsets);
    FILE *in = c->urls_path ? fopen(c->urls_path, "rb") : NULL;
    if (c->urls_path && !in) {
        fprintf(stderr, "simdbloom: cannot open %s\n", c->urls_path);
        free(offsets);
        return NULL;
    }
    char line[4096];
    url_buffer u;
    while (n < want) {
        const char *s;
        size_t len;
        if (in) {
            if (!fgets(line, sizeof line, in))
                break;
            len = strcspn(line, "\r\n");
            s = line;
        } else {
            url_make(7, n, &u);
            s = u.text;
            len = u.len - 1;
        }
        if (used + len > cap) {
            cap = (used + len) * 2 + 4096;
            char *grown = realloc(text, cap);
            if (!grown)
                break;
            text = grown;
        }
        memcpy(text + used, s, len);
        offsets[n] = used;
        (*lens)[n] = len;
        used += len;
        n++;
    }
    if (in)
        fclose(in);
    for (size_t i = 0; i < n; i++)
        (*keys)[i] = text + offsets[i];
    free(offsets);
    *count = n;
    return text ? text : malloc(1);
}

static int parse_bench(int argc, char **argv, bench_config *c)
{
    memset(c, 0, sizeof *c);
    cli_options o;
    int rc = parse_options("bench", bench_help, argc, argv, OPT_BENCH | OPT_LAYOUT, &o);
    if (rc >= 0)
        return rc;
    if (o.nargs)
        return usage_error("bench", "unexpected argument '%s'", o.args[0]);
    c->quick = o.quick;
    c->json = o.json;
    c->size = o.size;
    c->isa = o.isa;
    c->urls_path = o.urls;
    c->window_keys = o.window_keys;
    if (c->window_keys && (c->window_keys < 1000 || c->window_keys > UINT64_C(1000000000)))
        return usage_error("bench", "--window-keys takes 1k to 1G keys, not %llu",
                           (unsigned long long)c->window_keys);
    if (c->isa && sbloom_set_isa(c->isa) != SBLOOM_OK)
        return usage_error("bench", "--isa %s: not an instruction set this build runs here",
                           c->isa);
    c->layout = o.layout ? o.layout : SBLOOM_LAYOUT_BLOCK512_K8;
    if (c->layout == SBLOOM_LAYOUT_SCALABLE)
        return usage_error("bench", "--layout scalable: the benchmark sizes fixed filters");
    return -1;
}

/* Native instruction sets: emulated tables (test builds) are correct but not what to measure. */
static int native_isa(const char *name)
{
    if (strstr(name, "simde"))
        return 0;
#if !defined(__aarch64__) && !defined(__ARM_NEON)
    if (strcmp(name, "neon") == 0)
        return 0;
#endif
    return 1;
}

/* The many-writers rows (bench_writers.c) at `bytes`, on the default instruction set, with a
 * thread per online CPU; in JSON, the document's "writers" member (printed after "results"). */
static void print_writers(const bench_config *c, uint64_t bytes, size_t n, int reps)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned threads =
        cpus > 1 ? (unsigned)(cpus < BENCH_MAX_WRITERS ? cpus : BENCH_MAX_WRITERS) : 1;
    sbloom_set_isa(c->isa);
    /* a fingerprint filter takes its plan: the rows' adds (6 runs of n a repetition) fill 60% */
    uint64_t room = is_fingerprint_layout(c->layout) ? fingerprint_keys(c->layout, bytes) : 0;
    if (room && n > room * 6 / 10 / (6 * (uint64_t)reps))
        n = (size_t)(room * 6 / 10 / (6 * (uint64_t)reps));
    writer_speeds w;
    int ok = bench_writers(bytes, c->layout, n, reps, threads, &w) == 0;
    const char *names[2] = {"add", "add_if_new"};
    const double *rows[2] = {w.add, w.add_if_new};
    char size_text[32];
    human_bytes(bytes, size_text, sizeof size_text);
    if (c->json) {
        printf(", \"writers\": ");
        if (!ok) {
            printf("null");
            return;
        }
        printf("{\"filter_bytes\": %llu, \"threads\": %u", (unsigned long long)bytes, threads);
        for (int op = 0; op < 2; op++)
            printf(", \"%s\": {\"plain_mkeys_per_s\": %.2f, \"concurrent_mkeys_per_s\": %.2f, "
                   "\"concurrent_threads_mkeys_per_s\": %.2f}",
                   names[op], 1e3 / rows[op][0], 1e3 / rows[op][1], 1e3 / rows[op][2]);
        printf("}");
        return;
    }
    if (!ok) {
        printf("many writers: not measured (no memory for a %s filter)\n", size_text);
        return;
    }
    printf(
        "many writers, %s filter, new keys, Mkeys/s: plain on 1 thread, concurrent on 1 and %u\n",
        size_text, threads);
    for (int op = 0; op < 2; op++)
        printf(
            "  %-11s plain %7.1f  concurrent %7.1f (%.2fx plain)  %u threads %7.1f (%.2fx one)\n",
            names[op], 1e3 / rows[op][0], 1e3 / rows[op][1], rows[op][0] / rows[op][1], threads,
            1e3 / rows[op][2], rows[op][1] / rows[op][2]);
}

/* The windowed rows (bench_window.c) on the default instruction set: WINDOW_PERIODS periods,
 * 1M keys a window (--window-keys N: N), and 100M in a full run (one repetition: about 500M
 * operations); the ring of Bloom generations at 1% against a plain Bloom filter (in JSON, the
 * document's "window" member) and the fingerprint window at the crawler's 1e-6 against the plain
 * fingerprint filter (both SBLOOM_OPTS_ANY_FAMILY; "window_fp"). */
#define WINDOW_PERIODS 3
static void print_window(const bench_config *c, int reps, double fpp, int any_family)
{
    const uint64_t keys[2] = {c->window_keys ? c->window_keys : 1000000, 100000000};
    int rows = c->quick || c->size || c->window_keys ? 1 : 2;
    sbloom_set_isa(c->isa);
    if (c->json)
        printf(", \"%s\": {\"periods\": %d, \"fpp\": %g, \"isa\": \"%s\", \"rows\": [",
               any_family ? "window_fp" : "window", WINDOW_PERIODS, fpp, sbloom_isa());
    else
        printf("%s, %d periods, %g over the window, against a plain %s filter for the window's "
               "keys:\ntest-and-add of new keys and lookups of absent ones, ns a key, best of "
               "%d%s\n%14s %11s %7s %6s %13s %7s %6s %7s\n",
               any_family ? "fingerprint window (entries with their period)"
                          : "windowed filter (a ring of Bloom generations)",
               WINDOW_PERIODS, fpp, any_family ? "fingerprint" : "Bloom", reps,
               rows > 1 ? " (100M keys: one run)" : "", "keys a window", "add plain", "window",
               "ratio", "lookup plain", "window", "ratio", "memory");
    for (int r = 0; r < rows; r++) {
        window_speeds w;
        int ok = bench_window(keys[r], fpp, WINDOW_PERIODS, any_family, r ? 1 : reps, &w) == 0;
        if (c->json) {
            if (ok)
                printf("%s{\"keys\": %llu, \"plain_add_if_new_ns\": %.3f, "
                       "\"window_add_if_new_ns\": %.3f, \"plain_contains_ns\": %.3f, "
                       "\"window_contains_ns\": %.3f, \"memory_ratio\": %.3f}",
                       r ? ", " : "", (unsigned long long)keys[r], w.add_if_new[0], w.add_if_new[1],
                       w.contains[0], w.contains[1], w.memory_ratio);
            else
                printf("%snull", r ? ", " : "");
        } else if (ok) {
            printf("%14llu %11.2f %7.2f %5.2fx %13.2f %7.2f %5.2fx %6.2fx\n",
                   (unsigned long long)keys[r], w.add_if_new[0], w.add_if_new[1],
                   w.add_if_new[1] / w.add_if_new[0], w.contains[0], w.contains[1],
                   w.contains[1] / w.contains[0], w.memory_ratio);
        } else {
            printf("%14llu not measured (no memory for the filters)\n",
                   (unsigned long long)keys[r]);
        }
        fflush(stdout);
    }
    if (c->json)
        printf("]}");
}

int cmd_bench(int argc, char **argv)
{
    bench_config c;
    int rc = parse_bench(argc, argv, &c);
    if (rc >= 0)
        return rc;
    uint64_t caches[3], sizes[4];
    cache_sizes(caches);
    size_t nsizes = 0;
    if (c.size) {
        sizes[nsizes++] = c.size;
    } else if (c.quick) {
        sizes[nsizes++] = caches[1] / 2;
        sizes[nsizes++] = UINT64_C(64) << 20;
    } else {
        const uint64_t dram = UINT64_C(256) << 20;
        for (int i = 0; i < 3; i++)
            if (caches[i] / 2 < dram / 2) /* a huge L3 is measured by the DRAM row */
                sizes[nsizes++] = caches[i] / 2;
        sizes[nsizes++] = dram;
    }
    const char *isas[16];
    size_t nisas = 0;
    if (c.isa) {
        isas[nisas++] = c.isa;
    } else {
        const char *names[16];
        size_t count = sbloom_isa_list(names, 16);
        for (size_t i = 0; i < count && i < 16; i++)
            if (native_isa(names[i]))
                isas[nisas++] = names[i];
    }
    size_t n = c.quick ? 200000 : 1000000, nurls = 0;
    int reps = c.quick ? 2 : 3;
    uint64_t *probe = malloc(n * sizeof *probe), *fresh = malloc(n * sizeof *fresh), state = 99;
    uint8_t *out = malloc(n);
    const void **urls = NULL;
    size_t *url_lens = NULL;
    char *url_text = load_urls(&c, c.quick ? 50000 : 200000, &urls, &url_lens, &nurls);
    if (!probe || !fresh || !out || !url_text) {
        if (url_text || !c.urls_path) /* load_urls named an unreadable file itself */
            fprintf(stderr, "simdbloom: out of memory\n");
        rc = EXIT_RUNTIME;
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        probe[i] = url_splitmix(&state);

    char cpu[128];
    cpu_model(cpu, sizeof cpu);
    if (c.json)
        printf("{\"version\": \"%s\", \"layout\": \"%s\", \"cpu\": \"%s\", \"cores\": %ld, "
               "\"cache_bytes\": {\"l1d\": %llu, \"l2\": %llu, \"l3\": %llu}, \"results\": [",
               sbloom_version_string(), sbloom_layout_name(c.layout), cpu,
               sysconf(_SC_NPROCESSORS_ONLN), (unsigned long long)caches[0],
               (unsigned long long)caches[1], (unsigned long long)caches[2]);
    else
        printf("simdbloom %s bench: %s, 10 bits per key (counting512: 40; fp512-*: 70%% of its "
               "plan); caches L1d %llu KiB, L2 "
               "%llu KiB, L3 "
               "%llu KiB\n%-9s %-7s %-16s %9s %9s %10s %7s\n",
               sbloom_version_string(), sbloom_layout_name(c.layout),
               (unsigned long long)(caches[0] >> 10), (unsigned long long)(caches[1] >> 10),
               (unsigned long long)(caches[2] >> 10), "filter", "isa", "operation", "ns/key",
               "Mkeys/s", "limit ns", "x limit");
    int first = 1;
    rc = EXIT_OK;
    for (size_t s = 0; s < nsizes && rc == EXIT_OK; s++) {
        size_t ahead = 0;
        double limit = line_limit(sizes[s], probe, n, reps, &ahead);
        char size_text[32];
        human_bytes(sizes[s], size_text, sizeof size_text);
        sbloom_t *base = filled_filter(&c, sizes[s], fresh, n);
        double absent_share = 0, spare_share = 0; /* (a fingerprint filter's second line) */
        int second_line = base && is_fingerprint_layout(c.layout) &&
                          sbloom_second_line_shares(base, &absent_share, &spare_share) == SBLOOM_OK;
        int fitted = 0;
        size_t window = 0;
        for (size_t i = 0; i < nisas && rc == EXIT_OK; i++) {
            sbloom_set_isa(isas[i]);
            result r[6];
            int count =
                base ? time_filter(base, probe, fresh, n, urls, url_lens, nurls, out, reps, r) : -1;
            if (count < 0) {
                fprintf(stderr, "simdbloom: cannot make a %s filter\n", size_text);
                rc = EXIT_RUNTIME;
                break;
            }
            window = sbloom_prefetch_window(base, &fitted); /* (the batches just run) */
            for (int k = 0; k < count; k++) {
                double ratio = r[k].ns / limit;
                if (c.json) {
                    printf("%s\n  {\"filter_bytes\": %llu, \"isa\": \"%s\", \"operation\": \"%s\", "
                           "\"ns_per_key\": %.3f, \"mkeys_per_s\": %.2f, \"limit_ns\": %.3f, "
                           "\"limit_prefetch_ahead\": %zu, \"prefetch_window\": %zu, "
                           "\"prefetch_window_fitted\": %s",
                           first ? "" : ",", (unsigned long long)sizes[s], isas[i], r[k].op,
                           r[k].ns, 1e3 / r[k].ns, limit, ahead, window, fitted ? "true" : "false");
                    if (second_line)
                        printf(", \"second_line_absent_lookups\": %.5f, "
                               "\"second_line_spare_keys\": %.5f",
                               absent_share, spare_share);
                    printf("}");
                    first = 0;
                } else {
                    if (strncmp(r[k].op, "urls", 4) == 0) /* hashing included: no line limit */
                        printf("%-9s %-7s %-16s %9.2f %9.1f %10s %7s\n", size_text, isas[i],
                               r[k].op, r[k].ns, 1e3 / r[k].ns, "-", "-");
                    else
                        printf("%-9s %-7s %-16s %9.2f %9.1f %10.2f %7.2f\n", size_text, isas[i],
                               r[k].op, r[k].ns, 1e3 / r[k].ns, limit, ratio);
                }
            }
        }
        if (!c.json && rc == EXIT_OK && second_line)
            printf("%-9s second line: %.2f%% of lookups of absent keys, %.2f%% of the keys (their "
                   "inserts and lookups); the rest read one line\n",
                   size_text, absent_share * 100, spare_share * 100);
        if (!c.json && rc == EXIT_OK)
            printf("%-9s line-read limit %.2f ns a key, read best %zu keys ahead; the filter's "
                   "batches request %zu ahead (%s)\n",
                   size_text, limit, ahead, window,
                   fitted        ? "fitted to this CPU by the first batches"
                   : window == 0 ? "it lives in the caches"
                                 : "the default");
        sbloom_free(base);
    }
    if (!c.json && rc == EXIT_OK)
        printf("(x limit: ns/key over the line-read limit of the same size, the best of 16 to 256 "
               "keys prefetched ahead; URL rows include hashing)\n");
    int writers = rc == EXIT_OK && c.layout != SBLOOM_LAYOUT_COUNTING512; /* (counters: one) */
    if (c.json)
        printf("\n]"); /* the results */
    if (writers)
        print_writers(&c, sizes[nsizes - 1], n, reps);
    if (rc == EXIT_OK) {
        print_window(&c, reps, 0.01, 0);
        print_window(&c, reps, 1e-6, 1);
    }
    if (c.json)
        printf("}\n");
done:
    sbloom_set_isa(NULL);
    free(probe);
    free(fresh);
    free(out);
    free(url_text);
    free(urls);
    free(url_lens);
    return rc;
}
