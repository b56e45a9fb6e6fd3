/*
 * What an embedding program relies on: the version, structures that carry their size, integer
 * keys, batch hashing, filters in memory the caller owns (made there, attached in place, a
 * read-write file mapping), and files written by the 0.x releases (tests/data/v1-*.sbloom, made
 * by simdbloom 0.1.0 from tests/data/v1-keys.txt) still loading.
 *
 * usage: test_embed DATA_DIR
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simdbloom.h"
#include "check.h"

static int big_endian_host(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 0;
}

static void test_version(void)
{
    CHECK(sbloom_version() == SIMDBLOOM_VERSION_NUMBER);
    CHECK(SIMDBLOOM_VERSION_NUMBER == SIMDBLOOM_VERSION_MAJOR * 10000 +
                                          SIMDBLOOM_VERSION_MINOR * 100 + SIMDBLOOM_VERSION_PATCH);
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", SIMDBLOOM_VERSION_MAJOR, SIMDBLOOM_VERSION_MINOR,
             SIMDBLOOM_VERSION_PATCH);
    CHECK(strcmp(sbloom_version_string(), want) == 0);
    CHECK(strcmp(SIMDBLOOM_VERSION_STRING, want) == 0);
}

/* A caller built against a later header has a larger structure: the library fills what it
 * knows and leaves the rest, and the size, alone. One that forgot the size is refused. */
static void test_sized_structures(void)
{
    sbloom_plan plan;
    memset(&plan, 0, sizeof plan);
    CHECK(sbloom_plan_for(1000, 0.01, &plan) == SBLOOM_E_INVALID);
    CHECK(sbloom_plan_for_layout(1000, 0.01, SBLOOM_LAYOUT_PARQUET, &plan) == SBLOOM_E_INVALID);
    plan.size = sizeof plan - 1;
    CHECK(sbloom_plan_for(1000, 0.01, &plan) == SBLOOM_E_INVALID);

    struct {
        sbloom_plan plan;
        uint64_t added_later;
    } newer;
    memset(&newer, 0, sizeof newer);
    newer.plan.size = sizeof newer;
    newer.added_later = 0x1234;
    CHECK(sbloom_plan_for(1000, 0.01, &newer.plan) == SBLOOM_OK);
    CHECK(newer.plan.size == sizeof newer && newer.added_later == 0x1234);
    CHECK(newer.plan.bytes > 0 && newer.plan.fpp <= 0.01);

    sbloom_t *f;
    CHECK(sbloom_create(&f, 1000, 0.01) == SBLOOM_OK);
    sbloom_stats stats;
    memset(&stats, 0, sizeof stats);
    CHECK(sbloom_get_stats(f, &stats) == SBLOOM_E_INVALID);
    stats = sbloom_stats_init();
    CHECK(stats.size == sizeof stats && stats.fill == 0.0);
    CHECK(sbloom_get_stats(f, &stats) == SBLOOM_OK && stats.fill == 0.0);
    sbloom_free(f);
}

/* Two filters hold the same bits (and counts): their serialized images are equal. */
static int same_filter(const sbloom_t *f, const sbloom_t *g)
{
    uint64_t size = sbloom_serialized_size(f);
    if (size != sbloom_serialized_size(g))
        return 0;
    uint8_t *a = malloc(size), *b = malloc(size);
    int same = a && b && sbloom_serialize(f, a, size) == SBLOOM_OK &&
               sbloom_serialize(g, b, size) == SBLOOM_OK && memcmp(a, b, size) == 0;
    free(a);
    free(b);
    return same;
}

/* Sequential IDs, the keys a reader passes first: through the _u64 entries they spread over every
 * block and meet the planned rate (4 sigma of a binomial over the probes), with no false
 * negative; each form agrees with the others and with the key's 8 little-endian bytes. */
static void test_integer_keys(void)
{
    enum { N = 200000, PROBES = 400000 };
    /* (the scalable layout has no fixed size and no 0.1.0 file: tests/test_scalable.c) */
    for (int layout = 1; layout < SBLOOM_LAYOUT_SCALABLE; layout++) {
        sbloom_t *f, *g;
        CHECK(sbloom_create_for_layout(&f, N, 0.01, (sbloom_layout)layout) == SBLOOM_OK);
        CHECK(sbloom_create_for_layout(&g, N, 0.01, (sbloom_layout)layout) == SBLOOM_OK);
        uint64_t *ids = malloc(N * sizeof *ids);
        uint8_t *is_new = malloc(N);
        for (uint64_t i = 0; i < N; i++)
            ids[i] = i;
        CHECK(sbloom_add_if_new_u64s(f, ids, N, is_new) > N - N / 50);
        for (uint64_t i = 0; i < N; i++)
            sbloom_add_u64(g, i);
        CHECK(same_filter(f, g));
        CHECK(sbloom_contains_u64s(f, ids, N, NULL) == N);
        uint8_t bytes[8];
        for (int b = 0; b < 8; b++)
            bytes[b] = (uint8_t)(UINT64_C(0x0102030405060708) >> (8 * b));
        CHECK(sbloom_hash_u64(f, UINT64_C(0x0102030405060708)) == sbloom_hash(f, bytes, 8));
        /* the deprecated second name of sbloom_add_u64 still answers as it does */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        CHECK(sbloom_add_if_new_u64(g, UINT64_C(0x0102030405060708)) == 1);
        CHECK(sbloom_add_if_new_u64(g, UINT64_C(0x0102030405060708)) == 0);
#pragma GCC diagnostic pop
        CHECK(sbloom_contains(g, bytes, 8) == 1 && sbloom_contains_u64(g, N + 7) == 0);
        for (uint64_t i = 0; i < N; i++)
            ids[i] = N + i; /* never added */
        uint64_t hits = 0;
        for (uint64_t start = 0; start < PROBES; start += N) {
            for (uint64_t i = 0; i < N; i++)
                ids[i] = N + start + i;
            hits += (uint64_t)sbloom_contains_u64s(f, ids, N, NULL);
        }
        double want = sbloom_blocked_fpp((sbloom_layout)layout, sbloom_bytes(f), N);
        double got = (double)hits / PROBES, sigma = sqrt(want * (1 - want) / PROBES);
        printf("%s: %d sequential IDs, rate on unseen IDs %.5f (formula %.5f)\n",
               sbloom_layout_name((sbloom_layout)layout), N, got, want);
        CHECK(fabs(got - want) <= 4 * sigma);
        free(ids);
        free(is_new);
        sbloom_free(f);
        sbloom_free(g);
    }
    CHECK(sbloom_add_u64(NULL, 1) == SBLOOM_E_NULL &&
          sbloom_contains_u64(NULL, 1) == SBLOOM_E_NULL);
    CHECK(sbloom_add_u64s(NULL, NULL, 0) == SBLOOM_E_NULL);
}

static void test_hash_keys(void)
{
    const void *keys[4] = {"https://a.example/", "", NULL, "x"};
    size_t lens[4] = {18, 0, 0, 1};
    /* (the scalable layout has no fixed size and no 0.1.0 file: tests/test_scalable.c) */
    for (int layout = 1; layout < SBLOOM_LAYOUT_SCALABLE; layout++) {
        sbloom_t *f;
        CHECK(sbloom_create_bytes(&f, 4096, (sbloom_layout)layout) == SBLOOM_OK);
        uint64_t hashes[4];
        CHECK(sbloom_hash_keys(f, keys, lens, 4, hashes) == 4);
        for (int i = 0; i < 4; i++)
            CHECK(hashes[i] == sbloom_hash(f, keys[i], lens[i]));
        CHECK(hashes[1] == hashes[2]); /* both the empty key */
        CHECK(sbloom_hash_keys(f, keys, lens, 4, NULL) == SBLOOM_E_NULL);
        lens[2] = 3;
        CHECK(sbloom_hash_keys(f, keys, lens, 4, hashes) == SBLOOM_E_NULL);
        lens[2] = 0;
        sbloom_free(f);
    }
}

/* A 64-byte-aligned buffer of n bytes (freed by the caller). */
static void *aligned_buffer(size_t n)
{
    void *p = NULL;
    return posix_memalign(&p, 64, n) == 0 ? p : NULL;
}

static void test_caller_memory(void)
{
    CHECK(sbloom_image_size(1000, (sbloom_layout)0) == 0);
    CHECK(sbloom_image_size(SBLOOM_MAX_BYTES + 1, SBLOOM_LAYOUT_PARQUET) == 0);
    CHECK(sbloom_image_size(1000, SBLOOM_LAYOUT_BLOCK512_K8) == 128 + 1024);
    uint64_t size = sbloom_image_size(1 << 16, SBLOOM_LAYOUT_BLOCK512_K8);
    uint8_t *buf = aligned_buffer((size_t)size + 64);
    sbloom_t *f = (sbloom_t *)1, *reader = NULL, *copy = NULL;
    if (big_endian_host()) {
        CHECK(sbloom_create_in(&f, buf, size, 1 << 16, SBLOOM_LAYOUT_BLOCK512_K8) ==
              SBLOOM_E_UNSUPPORTED);
        printf("SKIP: in-place images on a big-endian host (SBLOOM_E_UNSUPPORTED checked)\n");
        free(buf);
        return;
    }
    CHECK(sbloom_create_in(&f, buf + 8, size, 1 << 16, SBLOOM_LAYOUT_BLOCK512_K8) ==
              SBLOOM_E_INVALID &&
          f == NULL);
    /* the message of a misaligned buffer names alignment, not items and rates */
    CHECK(strstr(sbloom_strerror(SBLOOM_E_INVALID), "alignment") != NULL);
    /* made from a plan, the filter in caller memory keeps it, as sbloom_create's does */
    sbloom_plan plan = sbloom_plan_init();
    CHECK(sbloom_plan_for(5000, 1e-3, &plan) == SBLOOM_OK);
    uint64_t planned_size = sbloom_image_size(plan.bytes, plan.layout);
    uint8_t *planned_buf = aligned_buffer((size_t)planned_size);
    sbloom_t *planned = NULL;
    CHECK(sbloom_create_in_planned(&planned, planned_buf, planned_size - 1, 5000, 1e-3, 0) ==
          SBLOOM_E_TRUNCATED);
    CHECK(sbloom_create_in_planned(&planned, planned_buf, planned_size, 5000, 1e-3, 0) ==
          SBLOOM_OK);
    if (planned) {
        CHECK_EQ_U64(sbloom_planned_items(planned), 5000);
        CHECK(sbloom_planned_fpp(planned) == 1e-3);
        CHECK(sbloom_get_layout(planned) == plan.layout && sbloom_bytes(planned) == plan.bytes);
        sbloom_free(planned);
        sbloom_t *back = NULL; /* and the image says so to whoever reads it */
        CHECK(sbloom_deserialize(&back, planned_buf, planned_size) == SBLOOM_OK);
        CHECK(back && sbloom_planned_items(back) == 5000);
        sbloom_free(back);
    }
    free(planned_buf);
    CHECK(sbloom_create_in(&f, buf, size - 1, 1 << 16, SBLOOM_LAYOUT_BLOCK512_K8) ==
          SBLOOM_E_TRUNCATED);
    CHECK(sbloom_create_in(&f, NULL, size, 1 << 16, SBLOOM_LAYOUT_BLOCK512_K8) == SBLOOM_E_NULL);
    memset(buf, 0xAB, (size_t)size);
    CHECK(sbloom_create_in(&f, buf, size, 1 << 16, SBLOOM_LAYOUT_BLOCK512_K8) == SBLOOM_OK);
    CHECK(sbloom_data(f) == buf + 128 && sbloom_bytes(f) == 1 << 16);

    /* Fresh from creation the buffer is a valid, empty image. */
    CHECK(sbloom_attach(&reader, buf, (size_t)size, SBLOOM_OPEN_VERIFY) == SBLOOM_OK);
    CHECK(sbloom_items(reader) == 0 && sbloom_contains(reader, "k", 1) == 0);

    /* Adds through one handle are seen through the other at once: one memory. */
    for (uint64_t i = 0; i < 1000; i++)
        sbloom_add_u64(f, i);
    CHECK(sbloom_contains_u64(reader, 999) == 1 && sbloom_is_readonly(reader) == 1);
    CHECK(sbloom_add_u64(reader, 5000) == SBLOOM_E_READONLY);
    sbloom_free(reader);
    CHECK(sbloom_attach(&reader, buf, (size_t)size, SBLOOM_OPEN_VERIFY) == SBLOOM_E_CORRUPT);
    CHECK(sbloom_sync(f) == SBLOOM_OK);
    CHECK(sbloom_attach(&reader, buf, (size_t)size, SBLOOM_OPEN_VERIFY | SBLOOM_OPEN_WRITE) ==
          SBLOOM_OK);
    CHECK(sbloom_items(reader) == sbloom_items(f) && sbloom_items(f) >= 990);
    CHECK(sbloom_add_u64(reader, 123456) == 1 && sbloom_contains_u64(f, 123456) == 1);
    sbloom_free(reader);

    /* The synced buffer is a file image: it loads by copy too. */
    CHECK(sbloom_sync(f) == SBLOOM_OK);
    CHECK(sbloom_deserialize(&copy, buf, (size_t)size) == SBLOOM_OK);
    CHECK(memcmp(sbloom_data(copy), sbloom_data(f), 1 << 16) == 0);
    sbloom_free(copy);

    CHECK(sbloom_attach(&reader, buf, (size_t)size, 4u) == SBLOOM_E_INVALID);
    CHECK(sbloom_attach(&reader, buf + 64, (size_t)size - 64, 0) == SBLOOM_E_FORMAT);
    CHECK(sbloom_attach(&reader, buf, (size_t)size - 1, 0) == SBLOOM_E_TRUNCATED && !reader);
    sbloom_free(f);
    CHECK(buf[0] == 0x89); /* freeing left the caller's memory as it was */
    free(buf);
}

/* A read-write shared mapping: adds go to the file; two mappings see each other's adds; free
 * writes the header back, so the file loads (checksums verified) with every key. */
static void test_writable_map(void)
{
    char path[] = "/tmp/simdbloom-embed-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    sbloom_t *f, *a = NULL, *b = NULL, *back = NULL;
    CHECK(sbloom_create(&f, 10000, 0.001) == SBLOOM_OK && sbloom_save(f, path) == SBLOOM_OK);
    if (big_endian_host()) {
        CHECK(sbloom_map(&a, path, SBLOOM_OPEN_WRITE) == SBLOOM_E_UNSUPPORTED);
        printf("SKIP: read-write mapping on a big-endian host (SBLOOM_E_UNSUPPORTED checked)\n");
        sbloom_free(f);
        unlink(path);
        return;
    }
    CHECK(sbloom_map(&a, path, SBLOOM_OPEN_WRITE | SBLOOM_OPEN_VERIFY) == SBLOOM_OK);
    CHECK(sbloom_map(&b, path, SBLOOM_OPEN_WRITE) == SBLOOM_OK);
    CHECK(sbloom_is_readonly(a) == 0 && sbloom_map(&back, path, 8u) == SBLOOM_E_INVALID);
    for (uint64_t i = 0; i < 5000; i++)
        sbloom_add_u64(a, i);
    CHECK(sbloom_contains_u64(b, 4999) == 1);
    sbloom_free(b);
    sbloom_free(a);
    CHECK(sbloom_load(&back, path) == SBLOOM_OK);
    CHECK(back && sbloom_items(back) >= 4990 && sbloom_items(back) <= 5000);
    uint64_t ids[5000];
    for (uint64_t i = 0; i < 5000; i++)
        ids[i] = i;
    CHECK(sbloom_contains_u64s(back, ids, 5000, NULL) == 5000);
    sbloom_free(back);
    sbloom_free(f);
    unlink(path);
}

/* Files made by simdbloom 0.1.0: every layout loads, and holds its keys (the counting file had
 * its first 150 keys removed again). They are also fixed vectors: the same keys added now, on
 * the instruction set this run uses, must give exactly the same bytes, so a changed salt, block
 * index or counter rule breaks this test (and would break every user's saved files). */
static void test_old_files(const char *dir)
{
    char path[512];
    static char lines[TEST_GOLDEN_KEYS][64];
    int nlines = test_golden_keys(dir, lines);
    CHECK(nlines == TEST_GOLDEN_KEYS);
    if (nlines != TEST_GOLDEN_KEYS)
        return;
    /* (the scalable layout has no fixed size and no 0.1.0 file: tests/test_scalable.c) */
    for (int layout = 1; layout < SBLOOM_LAYOUT_SCALABLE; layout++) {
        const char *name = sbloom_layout_name((sbloom_layout)layout);
        snprintf(path, sizeof path, "%s/v1-%s.sbloom", dir, name);
        sbloom_t *f = NULL;
        CHECK(sbloom_load(&f, path) == SBLOOM_OK);
        if (!f)
            continue;
        int counting = layout == SBLOOM_LAYOUT_COUNTING512;
        CHECK(sbloom_get_layout(f) == (sbloom_layout)layout && sbloom_planned_items(f) == 200);
        CHECK(sbloom_items(f) == (counting ? 50 : 200) || (!counting && sbloom_items(f) >= 195));
        int present = 0;
        for (int i = counting ? 150 : 0; i < nlines; i++)
            present += sbloom_contains(f, lines[i], strlen(lines[i]));
        CHECK(present == (counting ? 50 : 200));
        /* Rebuilt at the file's size (plans since 1.1 round the block count up to a multiple
         * of 8, so a plan of today may be larger than 0.1.0's): the same bits. */
        sbloom_t *again;
        CHECK(sbloom_create_bytes(&again, sbloom_bytes(f), (sbloom_layout)layout) == SBLOOM_OK);
        for (int i = 0; i < nlines; i++)
            sbloom_add(again, lines[i], strlen(lines[i]));
        for (int i = 0; counting && i < 150; i++)
            CHECK(sbloom_remove(again, lines[i], strlen(lines[i])) == 1);
        CHECK(sbloom_bytes(again) == sbloom_bytes(f));
        CHECK(memcmp(sbloom_data(again), sbloom_data(f), (size_t)sbloom_bytes(f)) == 0);
        CHECK(sbloom_items(again) == sbloom_items(f));
        sbloom_free(again);
        if (counting)
            CHECK(sbloom_remove(f, lines[199], strlen(lines[199])) == 1);
        sbloom_free(f);
    }
}

/* The whole file (up to 64 KiB) in a static buffer, *len its size; NULL if it cannot be read. */
static uint8_t *read_whole(const char *path, size_t *len)
{
    FILE *in = fopen(path, "rb");
    if (!in)
        return NULL;
    static uint8_t bytes[1 << 16];
    *len = fread(bytes, 1, sizeof bytes, in);
    fclose(in);
    return *len < sizeof bytes ? bytes : NULL;
}

/* Every golden file (the four of 0.1.0, and v1-scalable.sbloom: a scalable filter of first stage
 * 50 at rate 0.01 holding the 200 keys, three stages, made by commit 5e3c712) loads and comes back
 * byte for byte through serialize and through save. The scalable one is also rebuilt from its keys:
 * the same bytes, so its stage plans, growth and file form cannot change unseen. */
static void test_golden_round_trip(const char *dir)
{
    static const char *const names[] = {"parquet", "block512-k8", "block512-k16", "counting512",
                                        "scalable"};
    char path[512], copy[512];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/v1-%s.sbloom", dir, names[i]);
        size_t len = 0;
        const uint8_t *golden = read_whole(path, &len);
        CHECK(golden != NULL);
        if (!golden)
            continue;
        sbloom_t *f = NULL;
        CHECK(sbloom_load(&f, path) == SBLOOM_OK);
        if (!f)
            continue;
        static uint8_t image[1 << 16];
        CHECK(sbloom_serialized_size(f) == len);
        CHECK(sbloom_serialize(f, image, sizeof image) == SBLOOM_OK);
        CHECK(memcmp(image, golden, len) == 0);
        snprintf(copy, sizeof copy, "/tmp/simdbloom-golden-XXXXXX");
        int fd = mkstemp(copy);
        CHECK(fd >= 0);
        if (fd >= 0)
            close(fd);
        CHECK(sbloom_save(f, copy) == SBLOOM_OK);
        size_t saved_len = 0;
        const uint8_t *saved = read_whole(copy, &saved_len);
        CHECK(saved && saved_len == len && memcmp(saved, image, len) == 0);
        unlink(copy);
        sbloom_free(f);
    }
    snprintf(path, sizeof path, "%s/v1-keys.txt", dir);
    FILE *in = fopen(path, "r");
    CHECK(in != NULL);
    sbloom_t *rebuilt = NULL;
    CHECK(sbloom_create_scalable(&rebuilt, 50, 0.01) == SBLOOM_OK);
    char line[128];
    while (in && rebuilt && fgets(line, sizeof line, in)) {
        line[strcspn(line, "\n")] = '\0';
        sbloom_add(rebuilt, line, strlen(line));
    }
    if (in)
        fclose(in);
    snprintf(path, sizeof path, "%s/v1-scalable.sbloom", dir);
    size_t len = 0;
    const uint8_t *golden = read_whole(path, &len);
    static uint8_t image[1 << 16];
    CHECK(rebuilt && golden && sbloom_stages(rebuilt) == 3 &&
          sbloom_serialized_size(rebuilt) == len);
    CHECK(rebuilt && sbloom_serialize(rebuilt, image, sizeof image) == SBLOOM_OK);
    CHECK(golden && memcmp(image, golden, len) == 0);
    sbloom_free(rebuilt);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_embed DATA_DIR\n");
        return 2;
    }
    test_version();
    test_sized_structures();
    test_integer_keys();
    test_hash_keys();
    test_caller_memory();
    test_writable_map();
    test_old_files(argv[1]);
    test_golden_round_trip(argv[1]);
    return check_report();
}
