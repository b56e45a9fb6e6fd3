/*
 * Every entry point that allocates, with each of its allocations (and mappings) failing in turn
 * (the hook in src/base/alloc.h, as SQLite tests its out-of-memory paths): the call answers
 * SBLOOM_E_NOMEM, leaves its output NULL, changes nothing it was given, and leaks nothing (the
 * sanitizer build runs this under LeakSanitizer). The loop for one entry point stops at the
 * first run where no allocation failed, which must succeed.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simdbloom.h"
#include "../src/base/alloc.h"
#include "check.h"

static char dir[] = "/tmp/simdbloom-nomem-XXXXXX";
static char saved_path[64], allow_path[64];
static sbloom_t *base;                /* a small filter the entry points work from */
static sbloom_allowlist_t *base_list; /* an allow-list with a few keys */
static uint8_t *image;
static size_t image_bytes;

/* One entry point: does its work with the allocation hook armed, returns its result code, and
 * releases what it made on success. `big` makes the filters large enough to be mapped. */
typedef int (*entry_fn)(int big);

static uint64_t filter_bytes(int big)
{
    return big ? UINT64_C(4) << 20 : 4096;
}

static int do_create(int big)
{
    sbloom_t *f = (sbloom_t *)1;
    int rc = sbloom_create(&f, big ? 2000000 : 1000, 0.01);
    CHECK(rc == SBLOOM_OK ? f != NULL : f == NULL);
    sbloom_free(f);
    return rc;
}

static int do_create_bytes(int big)
{
    sbloom_t *f = (sbloom_t *)1;
    int rc = sbloom_create_bytes(&f, filter_bytes(big), SBLOOM_LAYOUT_COUNTING512);
    CHECK(rc == SBLOOM_OK ? f != NULL : f == NULL);
    sbloom_free(f);
    return rc;
}

static int do_create_for_layout(int big)
{
    sbloom_t *f = (sbloom_t *)1;
    int rc = sbloom_create_for_layout(&f, big ? 1000000 : 100, 0.01, SBLOOM_LAYOUT_PARQUET);
    CHECK(rc == SBLOOM_OK ? f != NULL : f == NULL);
    sbloom_free(f);
    return rc;
}

static int do_clone(int big)
{
    (void)big;
    sbloom_t *f = (sbloom_t *)1;
    int rc = sbloom_clone(&f, base);
    CHECK(rc == SBLOOM_OK ? f != NULL && sbloom_items(f) == sbloom_items(base) : f == NULL);
    sbloom_free(f);
    return rc;
}

static int do_fold(int big)
{
    (void)big;
    sbloom_t *f = (sbloom_t *)1;
    int rc = sbloom_fold(&f, base, 2);
    CHECK(rc == SBLOOM_OK ? f != NULL : f == NULL);
    sbloom_free(f);
    return rc;
}

static int do_load(int big)
{
    (void)big;
    sbloom_t *f = (sbloom_t *)1;
    int rc = sbloom_load(&f, saved_path);
    CHECK(rc == SBLOOM_OK ? f != NULL : f == NULL);
    sbloom_free(f);
    return rc;
}

static int do_map(int big)
{
    sbloom_t *f = (sbloom_t *)1;
    int rc = sbloom_map(&f, saved_path, big ? SBLOOM_OPEN_WRITE : SBLOOM_OPEN_VERIFY);
    if (rc == SBLOOM_E_UNSUPPORTED)
        return SBLOOM_OK; /* big-endian host: no read-write mapping, nothing allocated */
    CHECK(rc == SBLOOM_OK ? f != NULL : f == NULL);
    sbloom_free(f);
    return rc;
}

static int do_deserialize(int big)
{
    (void)big;
    sbloom_t *f = (sbloom_t *)1;
    int rc = sbloom_deserialize(&f, image, image_bytes);
    CHECK(rc == SBLOOM_OK ? f != NULL : f == NULL);
    sbloom_free(f);
    return rc;
}

static int do_attach(int big)
{
    (void)big;
    sbloom_t *f = (sbloom_t *)1;
    int rc = sbloom_attach(&f, image, image_bytes, SBLOOM_OPEN_VERIFY);
    if (rc == SBLOOM_E_UNSUPPORTED)
        return SBLOOM_OK; /* big-endian host: nothing to allocate */
    CHECK(rc == SBLOOM_OK ? f != NULL : f == NULL);
    sbloom_free(f);
    return rc;
}

static int do_create_in(int big)
{
    (void)big;
    static _Alignas(64) uint8_t buf[128 + 4096];
    sbloom_t *f = (sbloom_t *)1;
    int rc = sbloom_create_in(&f, buf, sizeof buf, 4096, SBLOOM_LAYOUT_BLOCK512_K8);
    if (rc == SBLOOM_E_UNSUPPORTED)
        return SBLOOM_OK;
    CHECK(rc == SBLOOM_OK ? f != NULL : f == NULL);
    sbloom_free(f);
    return rc;
}

static int do_parquet_import(int big)
{
    sbloom_t *f = (sbloom_t *)1;
    size_t bytes = (size_t)filter_bytes(big);
    uint8_t *bits = calloc(1, bytes);
    int rc = sbloom_parquet_import(&f, bits, bytes);
    CHECK(rc == SBLOOM_OK ? f != NULL : f == NULL);
    sbloom_free(f);
    free(bits);
    return rc;
}

static int do_allowlist_create(int big)
{
    (void)big;
    sbloom_allowlist_t *a = (sbloom_allowlist_t *)1;
    int rc = sbloom_allowlist_create(&a);
    CHECK(rc == SBLOOM_OK ? a != NULL : a == NULL);
    sbloom_allowlist_free(a);
    return rc;
}

static int do_allowlist_load(int big)
{
    (void)big;
    sbloom_allowlist_t *a = (sbloom_allowlist_t *)1;
    int rc = sbloom_allowlist_load(&a, allow_path);
    CHECK(rc == SBLOOM_OK ? a != NULL && sbloom_allowlist_count(a) == 40 : a == NULL);
    sbloom_allowlist_free(a);
    return rc;
}

static int do_allowlist_save(int big)
{
    (void)big;
    return sbloom_allowlist_save(base_list, allow_path);
}

/* Adding to a list: a failed add leaves the list as it was (count, every key, the new key
 * absent). 40 keys already there, so adds cross the growth points. */
static int do_allowlist_add(int big)
{
    (void)big;
    char key[32];
    int rc = SBLOOM_OK;
    for (int i = 0; i < 40 && rc >= 0; i++) {
        snprintf(key, sizeof key, "more-%d", i);
        uint64_t count = sbloom_allowlist_count(base_list);
        rc = sbloom_allowlist_add(base_list, key, strlen(key));
        if (rc < 0) {
            CHECK(sbloom_allowlist_count(base_list) == count);
            CHECK(sbloom_allowlist_contains(base_list, key, strlen(key)) == 0);
            CHECK(sbloom_allowlist_contains(base_list, "key-0", 5) == 1);
        }
    }
    return rc < 0 ? rc : SBLOOM_OK;
}

static const struct {
    const char *name;
    entry_fn run;
} entries[] = {
    {"sbloom_create", do_create},
    {"sbloom_create_bytes", do_create_bytes},
    {"sbloom_create_for_layout", do_create_for_layout},
    {"sbloom_clone", do_clone},
    {"sbloom_fold", do_fold},
    {"sbloom_load", do_load},
    {"sbloom_map", do_map},
    {"sbloom_deserialize", do_deserialize},
    {"sbloom_attach", do_attach},
    {"sbloom_create_in", do_create_in},
    {"sbloom_parquet_import", do_parquet_import},
    {"sbloom_allowlist_create", do_allowlist_create},
    {"sbloom_allowlist_load", do_allowlist_load},
    {"sbloom_allowlist_save", do_allowlist_save},
    {"sbloom_allowlist_add", do_allowlist_add},
};

/* Fails allocation 0, 1, 2, ... of one call until a run makes no allocation fail. */
static void exercise(const char *name, entry_fn run, int big)
{
    long failures = 0;
    for (long n = 0; n < 1000; n++) {
        sbloom_test_fail_allocation(n);
        int rc = run(big);
        long made = sbloom_test_fail_allocation(-1);
        if (made <= n) { /* the armed allocation never came: this run had no failure */
            CHECK(rc == SBLOOM_OK);
            printf("%s (%s): %ld allocation(s), each failure a clean SBLOOM_E_NOMEM\n", name,
                   big ? "large" : "small", made);
            return;
        }
        failures++;
        if (rc != SBLOOM_E_NOMEM)
            fprintf(stderr, "%s: allocation %ld failing gave %d (%s)\n", name, n, rc,
                    sbloom_strerror(rc));
        CHECK(rc == SBLOOM_E_NOMEM);
    }
    CHECK(!"the allocation count never ended");
}

/* A save whose allocations fail leaves the old file whole and no temporary file behind. */
static void exercise_save(void)
{
    FILE *in = fopen(saved_path, "rb");
    uint8_t *before = malloc(image_bytes), *after = malloc(image_bytes);
    CHECK(in && fread(before, 1, image_bytes, in) == image_bytes);
    if (in)
        fclose(in);
    sbloom_t *changed;
    CHECK(sbloom_clone(&changed, base) == SBLOOM_OK);
    for (int i = 0; i < 100; i++)
        sbloom_add_u64(changed, 1000000 + (uint64_t)i);
    for (long n = 0; n < 100; n++) {
        sbloom_test_fail_allocation(n);
        int rc = sbloom_save(changed, saved_path);
        long made = sbloom_test_fail_allocation(-1);
        if (made <= n) {
            CHECK(rc == SBLOOM_OK);
            printf("sbloom_save: %ld allocation(s), each failure a clean SBLOOM_E_NOMEM\n", made);
            break;
        }
        CHECK(rc == SBLOOM_E_NOMEM);
        in = fopen(saved_path, "rb");
        CHECK(in && fread(after, 1, image_bytes, in) == image_bytes);
        if (in)
            fclose(in);
        CHECK(memcmp(before, after, image_bytes) == 0);
        char cmd[256];
        snprintf(cmd, sizeof cmd, "ls -a %s | grep -q tmp", dir);
        CHECK(system(cmd) != 0); /* no temporary file left */
    }
    sbloom_free(changed);
    free(before);
    free(after);
}

/* String batches on a filter of 512 KiB and more hash their keys into a run buffer on the heap
 * (src/core/driver.c); refused, they go on in runs on the stack: the same answers and bits, and a
 * write longer than one of those runs with a NULL key past the first is still refused before it
 * changes anything. */
static void string_runs_without_room(void)
{
    enum { N = 1000 }; /* more than the stack runs' 512, fewer than the heap runs' 8,192 */
    static uint64_t words[2 * N];
    static const void *keys[2 * N];
    static size_t lens[2 * N];
    uint8_t refused[N], granted[N];
    for (size_t i = 0; i < 2 * N; i++) {
        words[i] = (i + 7) * 0x9e3779b97f4a7c15u;
        keys[i] = &words[i];
        lens[i] = sizeof words[i];
    }
    sbloom_t *f, *g;
    CHECK(sbloom_create_bytes(&f, UINT64_C(1) << 20, SBLOOM_LAYOUT_BLOCK512_K8) == SBLOOM_OK);
    CHECK(sbloom_create_bytes(&g, UINT64_C(1) << 20, SBLOOM_LAYOUT_BLOCK512_K8) == SBLOOM_OK);
    sbloom_test_fail_allocation(0);
    int64_t a = sbloom_add_if_new_keys(f, keys, lens, N, refused);
    long made = sbloom_test_fail_allocation(-1);
    int64_t b = sbloom_add_if_new_keys(g, keys, lens, N, granted);
    CHECK(made >= 1); /* the run buffer was asked for, and refused */
    CHECK(a == b && a > N - 10 && memcmp(refused, granted, N) == 0);
    CHECK(memcmp(sbloom_data(f), sbloom_data(g), UINT64_C(1) << 20) == 0);
    CHECK(sbloom_contains_keys(f, keys, lens, N, NULL) == N);

    keys[N + 900] = NULL; /* claims 8 bytes, in the second stack run of keys not added yet */
    sbloom_test_fail_allocation(0);
    CHECK(sbloom_add_keys(f, keys + N, lens + N, N) == SBLOOM_E_NULL);
    sbloom_test_fail_allocation(-1);
    CHECK(memcmp(sbloom_data(f), sbloom_data(g), UINT64_C(1) << 20) == 0 &&
          sbloom_items(f) == sbloom_items(g));
    keys[N + 900] = &words[N + 900];
    printf("string batches with their run buffer refused: same answers, bad keys still refused\n");
    sbloom_free(f);
    sbloom_free(g);
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    snprintf(saved_path, sizeof saved_path, "%s/f.sbloom", dir);
    snprintf(allow_path, sizeof allow_path, "%s/f.sbloom.allow", dir);
    CHECK(sbloom_create_bytes(&base, UINT64_C(4) << 20, SBLOOM_LAYOUT_BLOCK512_K8) == SBLOOM_OK);
    for (uint64_t i = 0; i < 1000; i++)
        sbloom_add_u64(base, i);
    CHECK(sbloom_save(base, saved_path) == SBLOOM_OK);
    image_bytes = (size_t)sbloom_serialized_size(base);
    image = aligned_alloc(64, image_bytes);
    CHECK(sbloom_serialize(base, image, image_bytes) == SBLOOM_OK);
    CHECK(sbloom_allowlist_create(&base_list) == SBLOOM_OK);
    char key[32];
    for (int i = 0; i < 40; i++) {
        snprintf(key, sizeof key, "key-%d", i);
        sbloom_allowlist_add(base_list, key, strlen(key));
    }
    CHECK(sbloom_allowlist_save(base_list, allow_path) == SBLOOM_OK);

    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        exercise(entries[i].name, entries[i].run, 0);
        if (entries[i].run == do_create || entries[i].run == do_create_bytes ||
            entries[i].run == do_map || entries[i].run == do_parquet_import)
            exercise(entries[i].name, entries[i].run, 1); /* large: mapped memory */
    }
    exercise_save();
    string_runs_without_room();

    sbloom_allowlist_free(base_list);
    sbloom_free(base);
    free(image);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    return check_report();
}
