/*
 * Filter files: round trips, and every way a file can be damaged or a save interrupted.
 *   - serialize/deserialize, save/load and save/map give back the same bits, counts and plan;
 *   - truncation at every header offset and at payload offsets: SBLOOM_E_TRUNCATED;
 *   - every single-bit flip of the header: SBLOOM_E_FORMAT (magic) or SBLOOM_E_CORRUPT;
 *   - payload bit flips: SBLOOM_E_CORRUPT; forged headers with valid checksums (2^55 blocks, an
 *     unknown version or layout) are refused before any allocation;
 *   - a writer killed with SIGKILL at random moments leaves the old or the new file, complete;
 *   - a save that runs out of space (RLIMIT_FSIZE) fails cleanly and leaves the old file;
 *   - the big-endian byte-swap path, forced on this little-endian machine;
 *   - union, intersection and fold; Parquet bitset export and import.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "simdbloom.h"
#include "check.h"
#include "../src/base/endian.h"

#define HEADER 128

static char dir[256];

static sbloom_t *filled(sbloom_layout layout, uint64_t n, uint64_t seed)
{
    sbloom_t *f;
    if (sbloom_create_for_layout(&f, n, 0.01, layout) != SBLOOM_OK)
        return NULL;
    for (uint64_t i = 0; i < n; i++)
        sbloom_add_hash(f, test_rand(&seed));
    return f;
}

static int same_filter(const sbloom_t *a, const sbloom_t *b)
{
    return a && b && sbloom_get_layout(a) == sbloom_get_layout(b) &&
           sbloom_bytes(a) == sbloom_bytes(b) && sbloom_items(a) == sbloom_items(b) &&
           memcmp(sbloom_data(a), sbloom_data(b), sbloom_bytes(a)) == 0;
}

static uint8_t *image_of(const sbloom_t *f, size_t *len)
{
    *len = (size_t)sbloom_serialized_size(f);
    uint8_t *buf = malloc(*len);
    CHECK(sbloom_serialize(f, buf, *len) == SBLOOM_OK);
    return buf;
}

static void round_trips(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/f.sbloom", dir);
    for (int l = 0; l < TEST_NLAYOUTS; l++) {
        sbloom_t *f = filled(test_layouts[l], 5000, 1 + (uint64_t)l), *g = NULL;
        size_t len;
        uint8_t *buf = image_of(f, &len);
        CHECK(len == HEADER + sbloom_bytes(f));
        CHECK(sbloom_serialize(f, buf, len - 1) == SBLOOM_E_TRUNCATED);
        CHECK(sbloom_deserialize(&g, buf, len) == SBLOOM_OK && same_filter(f, g));
        CHECK(sbloom_planned_items(g) == 5000 && sbloom_planned_fpp(g) == 0.01);
        sbloom_free(g);

        CHECK(sbloom_save(f, path) == SBLOOM_OK);
        CHECK(sbloom_load(&g, path) == SBLOOM_OK && same_filter(f, g));
        CHECK(sbloom_add_hash(g, 42) >= 0); /* a loaded filter is writable */
        sbloom_free(g);
        for (int verify = 0; verify < 2; verify++) {
            CHECK(sbloom_map(&g, path, verify) == SBLOOM_OK && same_filter(f, g));
            CHECK(g && ((uintptr_t)sbloom_data(g) % 64) == 0); /* blocks on cache lines */
            CHECK(sbloom_is_readonly(g) == 1);
            CHECK(sbloom_add_hash(g, 42) == SBLOOM_E_READONLY);
            CHECK(sbloom_add(g, "x", 1) == SBLOOM_E_READONLY);
            uint64_t h = 7;
            CHECK(sbloom_add_hashes(g, &h, 1) == SBLOOM_E_READONLY);
            CHECK(sbloom_clear(g) == SBLOOM_E_READONLY);
            CHECK(sbloom_union(g, f) == SBLOOM_E_READONLY);
            uint64_t seed = 1 + (uint64_t)l;
            uint64_t keys[100];
            for (int i = 0; i < 100; i++)
                keys[i] = test_rand(&seed);
            CHECK(sbloom_contains_hashes(g, keys, 100, NULL) == 100);
            sbloom_free(g);
        }
        free(buf);
        sbloom_free(f);
    }
    /* A filter made by size, with no plan, keeps having none. */
    sbloom_t *f, *g;
    CHECK(sbloom_create_bytes(&f, 4096, SBLOOM_LAYOUT_BLOCK512_K8) == SBLOOM_OK);
    size_t len;
    uint8_t *buf = image_of(f, &len);
    CHECK(sbloom_deserialize(&g, buf, len) == SBLOOM_OK && sbloom_planned_items(g) == 0);
    free(buf);
    sbloom_free(f);
    sbloom_free(g);
    CHECK(sbloom_load(&g, "/nonexistent/dir/f") == SBLOOM_E_IO && g == NULL);
    CHECK(sbloom_load(&g, dir) == SBLOOM_E_NOT_REGULAR);
    CHECK(sbloom_map(&g, dir, 0) == SBLOOM_E_NOT_REGULAR);
    CHECK(sbloom_save(NULL, path) == SBLOOM_E_NULL);
}

static void truncation_and_flips(void)
{
    sbloom_t *f = filled(SBLOOM_LAYOUT_BLOCK512_K16, 3000, 9), *g = (sbloom_t *)&g;
    size_t len;
    uint8_t *buf = image_of(f, &len);
    int all_truncated = 1;
    for (size_t cut = 0; cut < HEADER; cut++)
        all_truncated &= sbloom_deserialize(&g, buf, cut) == SBLOOM_E_TRUNCATED && g == NULL;
    CHECK(all_truncated);
    size_t payload_cuts[] = {HEADER, HEADER + 1, HEADER + 63, len / 2, len - 64, len - 1};
    for (size_t i = 0; i < sizeof payload_cuts / sizeof payload_cuts[0]; i++)
        CHECK(sbloom_deserialize(&g, buf, payload_cuts[i]) == SBLOOM_E_TRUNCATED);
    uint8_t *longer = malloc(len + 1);
    memcpy(longer, buf, len);
    longer[len] = 0;
    CHECK(sbloom_deserialize(&g, longer, len + 1) == SBLOOM_E_TRUNCATED);
    free(longer);

    int flips_ok = 1;
    for (size_t bit = 0; bit < HEADER * 8; bit++) {
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        int want = bit < 64 ? SBLOOM_E_FORMAT : SBLOOM_E_CORRUPT;
        int got = sbloom_deserialize(&g, buf, len);
        if (got != want) {
            fprintf(stderr, "  header bit %zu: got %d, want %d\n", bit, got, want);
            flips_ok = 0;
        }
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    CHECK(flips_ok);
    size_t payload_bits[] = {0, 1, 511, 4096 * 8 + 3, (len - HEADER) * 8 - 1};
    for (size_t i = 0; i < sizeof payload_bits / sizeof payload_bits[0]; i++) {
        size_t at = HEADER + payload_bits[i] / 8;
        buf[at] ^= (uint8_t)(1u << (payload_bits[i] % 8));
        CHECK(sbloom_deserialize(&g, buf, len) == SBLOOM_E_CORRUPT);
        buf[at] ^= (uint8_t)(1u << (payload_bits[i] % 8));
    }
    CHECK(sbloom_deserialize(&g, buf, len) == SBLOOM_OK);
    sbloom_free(g);

    /* The same through files: a truncated file, a flipped payload bit (load, map with verify). */
    char path[300];
    snprintf(path, sizeof path, "%s/damaged.sbloom", dir);
    size_t file_cuts[] = {0, 7, 64, HEADER - 1, HEADER, len - 1};
    for (size_t i = 0; i < sizeof file_cuts / sizeof file_cuts[0]; i++) {
        FILE *out = fopen(path, "wb");
        fwrite(buf, 1, file_cuts[i], out);
        fclose(out);
        CHECK(sbloom_load(&g, path) == SBLOOM_E_TRUNCATED);
        CHECK(sbloom_map(&g, path, 1) == SBLOOM_E_TRUNCATED);
    }
    buf[len - 10] ^= 0x10;
    FILE *out = fopen(path, "wb");
    fwrite(buf, 1, len, out);
    fclose(out);
    CHECK(sbloom_load(&g, path) == SBLOOM_E_CORRUPT);
    CHECK(sbloom_map(&g, path, 1) == SBLOOM_E_CORRUPT);
    /* An unverified map trusts the bits; on a big-endian host map loads, which always verifies. */
    CHECK(sbloom_map(&g, path, 0) == (sbloom_host_is_big_endian() ? SBLOOM_E_CORRUPT : SBLOOM_OK));
    sbloom_free(g);
    free(buf);
    sbloom_free(f);
}

/* Rewrites field `at` (8 bytes) and re-signs the header, as a buggy or hostile writer would. */
static void forge(uint8_t *buf, size_t at, uint64_t value, int bytes)
{
    if (bytes == 8)
        sbloom_put_le64(buf + at, value);
    else
        sbloom_put_le32(buf + at, (uint32_t)value);
    sbloom_put_le64(buf + 120, XXH3_64bits(buf, 120));
}

static void forged_headers(void)
{
    sbloom_t *f = filled(SBLOOM_LAYOUT_BLOCK512_K8, 1000, 3), *g;
    size_t len;
    uint8_t *clean = image_of(f, &len), *buf = malloc(len);
    struct {
        size_t at;
        uint64_t value;
        int bytes, want;
    } cases[] = {
        {32, UINT64_C(1) << 55, 8, SBLOOM_E_CORRUPT}, /* 2^55 blocks: refused, not allocated */
        {72, UINT64_C(1) << 60, 8, SBLOOM_E_CORRUPT}, /* payload bytes disagree with blocks */
        {32, 0, 8, SBLOOM_E_CORRUPT},                 /* no blocks */
        {8, 3, 4, SBLOOM_E_VERSION},                  /* a newer format */
        {8, 2, 4, SBLOOM_E_CORRUPT},                  /* the fingerprint files' version */
        {20, 9, 4, SBLOOM_E_VERSION},                 /* an unknown hash function */
        {24, 5, 8, SBLOOM_E_VERSION},                 /* a seed this build does not use */
        {96, 1, 8, SBLOOM_E_VERSION},                 /* reserved bytes used by a newer writer */
        {16, SBLOOM_LAYOUT_COUNT + 1, 4, SBLOOM_E_LAYOUT}, /* an unknown layout */
        {40, 9, 4, SBLOOM_E_CORRUPT},                      /* k disagrees with the layout */
        {56, 0, 8,
         SBLOOM_E_CORRUPT}, /* "planned" flag with no planned items (found by fuzz_load) */
        {44, 0, 4, SBLOOM_E_CORRUPT}, /* planned fields present, flag clear */
        {44, 2, 4, SBLOOM_E_CORRUPT}, /* an unknown flag */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(buf, clean, len);
        forge(buf, cases[i].at, cases[i].value, cases[i].bytes);
        CHECK(sbloom_deserialize(&g, buf, len) == cases[i].want);
    }
    /* Blocks and payload grown together to a consistent 16 GiB: the file size gives it away. */
    memcpy(buf, clean, len);
    sbloom_put_le64(buf + 32, UINT64_C(1) << 28);
    forge(buf, 72, UINT64_C(1) << 34, 8);
    CHECK(sbloom_deserialize(&g, buf, len) == SBLOOM_E_TRUNCATED);
    free(clean);
    free(buf);
    sbloom_free(f);
}

/* Re-signs a whole image: the payload's checksum, then the header's. */
static void resign(uint8_t *buf, size_t len)
{
    sbloom_put_le64(buf + 80, XXH3_64bits(buf + 128, len - 128));
    sbloom_put_le64(buf + 120, XXH3_64bits(buf, 120));
}

static void put_double(uint8_t *at, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, 8);
    sbloom_put_le64(at, bits);
}

/* A field of 8 or 4 bytes set to value (little-endian), or one byte's bits flipped by it. */
static void forge_field(uint8_t *at, uint64_t value, int bytes)
{
    if (bytes == 8)
        sbloom_put_le64(at, value);
    else if (bytes == 4)
        sbloom_put_le32(at, (uint32_t)value);
    else
        at[0] ^= (uint8_t)value;
}

/* The deserialize of buf fails with want, and the detail names the field (contains `field`). */
static int refused_naming(const uint8_t *buf, size_t len, int want, const char *field)
{
    sbloom_t *g = NULL;
    int rc = sbloom_deserialize(&g, buf, len);
    int ok = rc == want && g == NULL && strstr(sbloom_error_detail(), field) != NULL;
    if (!ok)
        fprintf(stderr, "  got %d (%s), want %d naming \"%s\"\n", rc, sbloom_error_detail(), want,
                field);
    sbloom_free(g);
    return ok;
}

/* Headers whose checksums are right but whose fields are absurd: each refused with
 * SBLOOM_E_CORRUPT and a detail that names the field, before any arithmetic on it can overflow. */
static void forged_plans(void)
{
    TEST_FOR_EVERY_LAYOUT(layout)
    {
        if (test_layout_composite(layout))
            continue; /* below, core by core */
        sbloom_t *f = filled(layout, 1000, 3);
        size_t len;
        uint8_t *clean = image_of(f, &len), *buf = malloc(len);
        sbloom_t *g = NULL;
        CHECK(sbloom_deserialize(&g, clean, len) == SBLOOM_OK && sbloom_error_detail()[0] == 0);
        sbloom_free(g);
        memcpy(buf, clean, len); /* the plan of 2^64 - 1 items that once made fold spin */
        forge(buf, 56, UINT64_MAX, 8);
        CHECK(refused_naming(buf, len, SBLOOM_E_CORRUPT, "planned 18446744073709551615 items"));
        memcpy(buf, clean, len); /* a plan a hundred times what the bytes can hold */
        forge(buf, 56, 100000, 8);
        CHECK(refused_naming(buf, len, SBLOOM_E_CORRUPT, "need more than its"));
        memcpy(buf, clean, len); /* an item count that would wrap at the next add */
        forge(buf, 48, UINT64_MAX, 8);
        CHECK(refused_naming(buf, len, SBLOOM_E_CORRUPT, "18446744073709551615 items"));
        memcpy(buf, clean, len); /* a rate of 1, then NaN (re-signed over its own version) */
        unsigned version = test_layout_fingerprint(layout) ? 2 : 1;
        put_double(buf + 64, 1.0);
        forge(buf, 8, version, 4);
        CHECK(refused_naming(buf, len, SBLOOM_E_CORRUPT, "at rate 1"));
        put_double(buf + 64, NAN);
        forge(buf, 8, version, 4);
        CHECK(refused_naming(buf, len, SBLOOM_E_CORRUPT, "at rate nan"));
        memcpy(buf, clean, len); /* a k the layout does not have (fingerprints have none) */
        unsigned forged_k = sbloom_layout_k(layout) == 0 ? 1 : 0;
        forge(buf, 40, forged_k, 4);
        char want[64];
        snprintf(want, sizeof want, "k %u for %s", forged_k, sbloom_layout_name(layout));
        CHECK(refused_naming(buf, len, SBLOOM_E_CORRUPT, want));
        memcpy(buf, clean, len); /* and the payload's checksum is named as such */
        buf[len - 1] ^= 1;
        CHECK(refused_naming(buf, len, SBLOOM_E_CORRUPT, "payload checksum"));
        memcpy(buf, clean, len);
        buf[60] ^= 1;
        CHECK(refused_naming(buf, len, SBLOOM_E_CORRUPT, "header checksum"));
        free(clean);
        free(buf);
        sbloom_free(f);
    }

    /* A scalable file whose two stages are one 64-byte block each, planned for 1e9 and 2e9 items:
     * its checksums are all right, and it once loaded and then dropped lines as duplicates. */
    size_t stage_len = 128 + 64, len = 128 + 2 * stage_len;
    uint8_t *buf = calloc(1, len);
    for (int i = 0; i < 2; i++) {
        sbloom_t *stage = NULL;
        CHECK(sbloom_create_bytes(&stage, 64, SBLOOM_LAYOUT_BLOCK512_K8) == SBLOOM_OK);
        uint8_t *image = buf + 128 + (size_t)i * stage_len;
        CHECK(sbloom_serialize(stage, image, stage_len) == SBLOOM_OK);
        sbloom_put_le32(image + 44, 1);                            /* planned */
        sbloom_put_le64(image + 56, UINT64_C(1000000000) << i);    /* 1e9, 2e9 items */
        put_double(image + 64, 0.01 * 0.5 * (i == 0 ? 1.0 : 0.5)); /* the stage rates */
        sbloom_put_le64(image + 120, XXH3_64bits(image, 120));
        sbloom_free(stage);
    }
    sbloom_t *model = NULL; /* the outer header: a real scalable filter's, then forged */
    CHECK(sbloom_create_scalable(&model, 1000, 0.01) == SBLOOM_OK);
    size_t model_len;
    uint8_t *model_image = image_of(model, &model_len);
    memcpy(buf, model_image, 128);
    sbloom_put_le64(buf + 32, (len - 128) / 64);
    sbloom_put_le64(buf + 48, 0);
    sbloom_put_le64(buf + 56, 1000000000);
    sbloom_put_le64(buf + 72, len - 128);
    resign(buf, len);
    CHECK(refused_naming(buf, len, SBLOOM_E_CORRUPT, "stage 0: inconsistent header: planned"));
    free(model_image);
    sbloom_free(model);
    free(buf);

    /* A windowed file's record (at 128: periods, generations, period, current period, each
     * generation's first period; with generation slots, 3 periods, each generation's keys after)
     * forged field by field, and its first image's plan: each refused naming what is wrong, though
     * every checksum is right. Both forms: slots (3 periods) and adjacent lines (4). */
    for (uint32_t periods = 3; periods <= 4; periods++) {
        uint32_t gens = periods + 1, now_slot = 10 % gens; /* created at 105, periods of 10 */
        sbloom_t *w = NULL;
        CHECK(sbloom_create_windowed(&w, 1000, 0.01, periods, 10, 105) == SBLOOM_OK);
        for (uint64_t i = 0; w && i < 500; i++)
            sbloom_add_u64(w, i);
        size_t wlen;
        uint8_t *wclean = image_of(w, &wlen), *wbuf = malloc(wlen);
        sbloom_t *back = NULL;
        CHECK(sbloom_deserialize(&back, wclean, wlen) == SBLOOM_OK &&
              sbloom_items(back) == sbloom_items(w) && sbloom_items(w) > 490);
        sbloom_free(back);
        char current_unbegun[64], never_began[64];
        snprintf(current_unbegun, sizeof current_unbegun, "generation %u began", now_slot);
        snprintf(never_began, sizeof never_began, "generation %u has keys and never began",
                 (now_slot + 1) % gens);
        size_t keys_at = 128 + 32 + 8 * gens; /* slots: each generation's keys */
        char stale_by_one[64];
        snprintf(stale_by_one, sizeof stale_by_one, "began at period %u", 10 - gens);
        struct {
            size_t at;
            uint64_t value;
            int bytes;
            const char *names;
            int slots_only;
        } window_cases[] = {
            {128 + 8, 0, 4, "window record: 0 periods", 0},
            {128 + 8, 16, 4, "window record: 16 periods", 0},
            {128 + 12, 6, 4, "6 generations", 0},
            {128 + 16, 0, 8, "period 0", 0},
            {128 + 24, UINT64_MAX, 8, "at period 18446744073709551615", 0},
            {128 + 32 + 8 * now_slot, 11, 8, "began at period 11", 0},    /* the current, future */
            {128 + 32 + 8 * now_slot, UINT64_MAX, 8, current_unbegun, 0}, /* current, unbegun */
            {128 + 32 + 8 * ((now_slot + 1) % gens), 4, 8, "began at period 4", 0}, /* outside */
            /* the boundary: its own slot, one period older than the oldest the window keeps */
            {128 + 32 + 8 * now_slot, 10 - gens, 8, stale_by_one, 0},
            {128 + 190, 1, 1, "byte 190 is set", 0},
            {128 + 0, 0, 8, "no window record", 0},
            /* format version 2: only a window of ages (fingerprint lines) is written with it */
            {8, 2, 4,
             periods == 3 ? "format version 2 for lines of counting512"
                          : "format version 2 for a window of an image per generation",
             0},
            {128 + 8, 4, 4, "4 periods, 4 generations", 1},
            {keys_at + 8 * ((now_slot + 1) % gens), 1, 8, never_began, 1},
            {keys_at + 8 * now_slot, 1, 8, "their image counts", 1},
        };
        for (size_t i = 0; w && i < sizeof window_cases / sizeof window_cases[0]; i++) {
            if (window_cases[i].slots_only && periods != 3)
                continue;
            memcpy(wbuf, wclean, wlen);
            forge_field(wbuf + window_cases[i].at, window_cases[i].value, window_cases[i].bytes);
            resign(wbuf, wlen);
            CHECK(refused_naming(wbuf, wlen, SBLOOM_E_CORRUPT, window_cases[i].names));
        }
        /* and the oldest start the window keeps (G periods before now) is taken */
        memcpy(wbuf, wclean, wlen);
        forge_field(wbuf + 128 + 32 + 8 * ((now_slot + 1) % gens), 10 - periods, 8);
        resign(wbuf, wlen);
        sbloom_t *oldest = NULL;
        CHECK(sbloom_deserialize(&oldest, wbuf, wlen) == SBLOOM_OK);
        sbloom_window ow = sbloom_window_init();
        CHECK(oldest && sbloom_get_window(oldest, &ow) == SBLOOM_OK &&
              ow.generation_start[0] == (10 - periods) * 10);
        sbloom_free(oldest);
        memcpy(wbuf, wclean, wlen); /* the first image's plan: one item more */
        uint8_t *first = wbuf + 128 + 192;
        sbloom_put_le64(first + 56, sbloom_get_le64(first + 56) + 1);
        sbloom_put_le64(first + 120, XXH3_64bits(first, 120));
        resign(wbuf, wlen);
        CHECK(refused_naming(wbuf, wlen, SBLOOM_E_CORRUPT,
                             periods == 3 ? "generations 0:" : "generation 0:"));
        free(wclean);
        free(wbuf);
        sbloom_free(w);
    }

    /* A growing window's file (a record of form 2 with the rings' count, then each ring a whole
     * windowed image): forged, every checksum right, each refused naming what is wrong. */
    sbloom_t *g = NULL;
    CHECK(sbloom_create_windowed_scalable(&g, 100, 0.01, 3, 10, 105) == SBLOOM_OK);
    for (uint64_t i = 0; g && i < 60; i++) /* a generation's share is 34: a second ring */
        sbloom_add_u64(g, i);
    CHECK(g && sbloom_stages(g) == 2 * 4); /* two rings of 4 generations */
    size_t glen;
    uint8_t *gclean = image_of(g, &glen), *gbuf = malloc(glen);
    size_t ring0 = 128 + 192, ring0_len = 128 + (size_t)sbloom_get_le64(gclean + ring0 + 72);
    size_t ring1 = ring0 + ring0_len, ring1_len = glen - ring1;
    struct {
        size_t at, ring, ring_len; /* the field; the ring to re-sign first (0: none) */
        uint64_t value;
        int bytes;
        const char *names;
    } growing_cases[] = {
        {128 + 32, 0, 0, 0, 4, "window record: 0 rings"},
        {128 + 32, 0, 0, 41, 4, "window record: 41 rings"},
        {128 + 32, 0, 0, 1, 4, "its rings"},      /* one ring less than there are */
        {128 + 36, 0, 0, 1, 1, "byte 36 is set"}, /* past the count */
        {ring1 + 56, ring1, ring1_len, 100, 8, "ring 1: planned for 100 items"}, /* step 0 again */
        {ring0 + 56, ring0, ring0_len, 300, 8, "ring 0: planned for 300 items"}, /* no step */
        {ring0 + 128 + 16, ring0, ring0_len, 20, 8, "ring 0: 100 items a window"},    /* period */
        {ring1 + 128 + 184, ring1, ring1_len, 2, 1, "ring 1: window record: form 3"}, /* its form */
        {ring0 + 128 + 192 + 200, 0, 0, 0xff, 1, "ring 0: its checksum"}, /* its lines */
        {8, 0, 0, 2, 4, "format version 2 for a window of rings"},        /* (Bloom rings: 1) */
        {ring0 + 8, ring0, ring0_len, 2, 4, "ring 0: format version 2 for lines of counting512"},
    };
    for (size_t i = 0; gclean && i < sizeof growing_cases / sizeof growing_cases[0]; i++) {
        memcpy(gbuf, gclean, glen);
        forge_field(gbuf + growing_cases[i].at, growing_cases[i].value, growing_cases[i].bytes);
        if (growing_cases[i].ring)
            resign(gbuf + growing_cases[i].ring, growing_cases[i].ring_len);
        resign(gbuf, glen);
        CHECK(refused_naming(gbuf, glen, SBLOOM_E_CORRUPT, growing_cases[i].names));
    }
    free(gclean);
    free(gbuf);
    sbloom_free(g);
}

/* Counts the temporary files a save left in the test directory, removing them if asked. */
static int temp_files(int remove)
{
    int count = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[600];
    while (d && (e = readdir(d))) {
        if (!strstr(e->d_name, ".tmp."))
            continue;
        count++;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (remove)
            unlink(path);
    }
    if (d)
        closedir(d);
    return count;
}

/* A child saves filter A, then B, then A... to one path; it is killed at random moments. Whatever
 * is at the path afterwards must load and be exactly A or B. */
static void killed_writer(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/crash.sbloom", dir);
    sbloom_t *a = filled(SBLOOM_LAYOUT_BLOCK512_K8, 400000, 21);
    sbloom_t *b = filled(SBLOOM_LAYOUT_BLOCK512_K8, 400000, 22);
    CHECK(sbloom_save(a, path) == SBLOOM_OK);
    uint64_t seed = (uint64_t)time(NULL);
    if (getenv("SIMDBLOOM_TEST_SEED"))
        seed = strtoull(getenv("SIMDBLOOM_TEST_SEED"), NULL, 10);
    printf("killed writer: seed %llu (SIMDBLOOM_TEST_SEED=%llu repeats the kill times)\n",
           (unsigned long long)seed, (unsigned long long)seed);
    int intact = 0, rounds = 25;
    for (int r = 0; r < rounds; r++) {
        pid_t child = fork();
        if (child == 0) {
            for (int i = 0;; i++)
                sbloom_save(i % 2 ? a : b, path);
        }
        struct timespec pause = {0, (long)(test_rand(&seed) % 30000000)}; /* up to 30 ms */
        nanosleep(&pause, NULL);
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        sbloom_t *g = NULL;
        int rc = sbloom_load(&g, path);
        intact += rc == SBLOOM_OK && (same_filter(g, a) || same_filter(g, b));
        sbloom_free(g);
    }
    CHECK(intact == rounds);
    printf("killed writer: %d of %d kills left a complete old or new file\n", intact, rounds);
    temp_files(1);
    sbloom_free(a);
    sbloom_free(b);
}

/* A save that cannot finish (the file-size limit stands in for a full disk) reports the error,
 * leaves the old file as it was, and leaves no temporary file behind. */
static void full_disk(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/full.sbloom", dir);
    sbloom_t *small = filled(SBLOOM_LAYOUT_PARQUET, 100, 5);
    sbloom_t *big = filled(SBLOOM_LAYOUT_PARQUET, 200000, 6);
    CHECK(sbloom_save(small, path) == SBLOOM_OK);
    pid_t child = fork();
    if (child == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit limit = {100000, 100000}; /* bytes: less than the big filter */
        setrlimit(RLIMIT_FSIZE, &limit);
        int rc = sbloom_save(big, path);
        _exit(rc == SBLOOM_E_IO && errno == EFBIG ? 0 : 1);
    }
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    sbloom_t *g = NULL;
    CHECK(sbloom_load(&g, path) == SBLOOM_OK && same_filter(g, small));
    CHECK(temp_files(0) == 0);
    sbloom_free(g);
    /* A directory that does not exist: the error, and no file. */
    CHECK(sbloom_save(big, "/nonexistent/dir/f") == SBLOOM_E_IO);
    sbloom_free(small);
    sbloom_free(big);
}

static void byte_swapping(void)
{
    /* The path a big-endian host takes, forced here: each word's bytes reversed, and back. */
    uint32_t words32[2] = {0x11223344u, 0xa1b2c3d4u};
    uint8_t out[16];
    sbloom_copy_words(out, words32, 8, 32, 1);
    uint8_t want32[8];
    for (int w = 0; w < 2; w++)
        memcpy(want32 + 4 * w, &words32[w], 4);
    int reversed = 1;
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 4; i++)
            reversed &= out[4 * w + i] == want32[4 * w + 3 - i];
    CHECK(reversed);
    uint64_t words64[2] = {0x0102030405060708ull, 0xf0e0d0c0b0a09080ull}, back[2];
    uint8_t memory64[16];
    memcpy(memory64, words64, 16);
    sbloom_copy_words(out, words64, 16, 64, 1);
    int reversed64 = 1;
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 8; i++)
            reversed64 &= out[8 * w + i] == memory64[8 * w + 7 - i];
    CHECK(reversed64);
    sbloom_copy_words(back, out, 16, 64, 1);
    CHECK(back[0] == words64[0] && back[1] == words64[1]);
    sbloom_copy_words(out, out, 16, 64, 1); /* in place, as load() does */
    CHECK(memcmp(out, words64, 16) == 0);
    /* Header fields are written byte by byte: the same on every host. */
    uint8_t le[8];
    sbloom_put_le64(le, 0x0102030405060708ull);
    CHECK(le[0] == 8 && le[7] == 1 && sbloom_get_le64(le) == 0x0102030405060708ull);
    const uint16_t probe = 0x0102;
    CHECK(sbloom_host_is_big_endian() == (*(const uint8_t *)&probe == 0x01));
}

static void set_operations(void)
{
    for (int l = 0; l < TEST_NLAYOUTS; l++) {
        sbloom_layout layout = test_layouts[l];
        uint64_t bytes = 1024 * sbloom_layout_block_bytes(layout);
        sbloom_t *a, *b, *c, *both, *small;
        CHECK(sbloom_create_bytes(&a, bytes, layout) == SBLOOM_OK);
        CHECK(sbloom_create_bytes(&b, bytes, layout) == SBLOOM_OK);
        CHECK(sbloom_create_bytes(&both, bytes, layout) == SBLOOM_OK);
        CHECK(sbloom_create_bytes(&small, bytes / 4, layout) == SBLOOM_OK);
        uint64_t keys[4000], seed = 77 + (uint64_t)l;
        for (int i = 0; i < 4000; i++) {
            keys[i] = test_rand(&seed);
            sbloom_add_hash(i < 2000 ? a : b, keys[i]);
            sbloom_add_hash(both, keys[i]);
            sbloom_add_hash(small, keys[i]);
        }
        CHECK(sbloom_clone(&c, a) == SBLOOM_OK);
        CHECK(sbloom_union(c, b) == SBLOOM_OK);
        CHECK(memcmp(sbloom_data(c), sbloom_data(both), bytes) == 0); /* union = built together */
        CHECK(sbloom_contains_hashes(c, keys, 4000, NULL) == 4000);
        CHECK(sbloom_items(c) > 3800 && sbloom_items(c) < 4200);
        sbloom_free(c);
        CHECK(sbloom_clone(&c, both) == SBLOOM_OK);
        CHECK(sbloom_intersect(c, b) == SBLOOM_OK);
        /* Word by word the AND of the two (both holds b, so the result is b itself), and the
         * keys only a holds answer absent again, but for false positives of b. */
        int is_and = 1;
        const uint8_t *x = sbloom_data(both), *y = sbloom_data(b), *z = sbloom_data(c);
        for (uint64_t i = 0; i < bytes; i++)
            is_and &= z[i] == (x[i] & y[i]);
        CHECK(is_and);
        CHECK(sbloom_contains_hashes(c, keys + 2000, 2000, NULL) == 2000); /* b's keys survive */
        int64_t a_only = sbloom_contains_hashes(c, keys, 2000, NULL);
        CHECK(a_only < 200); /* at 2000 keys in 1024 blocks, b's rate is far below 10% */
        sbloom_free(c);
        CHECK(sbloom_union(a, small) == SBLOOM_E_INCOMPATIBLE);
        CHECK(sbloom_union(NULL, a) == SBLOOM_E_NULL);

        /* Fold by 4: the same bits as a filter built at a quarter of the size. */
        sbloom_t *folded = NULL;
        CHECK(sbloom_fold(&folded, both, 4) == SBLOOM_OK);
        CHECK(sbloom_bytes(folded) == bytes / 4);
        CHECK(memcmp(sbloom_data(folded), sbloom_data(small), bytes / 4) == 0);
        CHECK(sbloom_contains_hashes(folded, keys, 4000, NULL) == 4000);
        sbloom_free(folded);
        sbloom_t *odd;
        CHECK(sbloom_create_bytes(&odd, 3 * sbloom_layout_block_bytes(layout), layout) == 0);
        CHECK(sbloom_fold(&folded, odd, 2) == SBLOOM_E_FACTOR && folded == NULL);
        CHECK(sbloom_fold(&folded, odd, 0) == SBLOOM_E_FACTOR);
        CHECK(sbloom_fold(&folded, odd, 3) == SBLOOM_OK &&
              sbloom_bytes(folded) ==
                  sbloom_layout_block_bytes(layout)); /* any divisor: 3 blocks into 1 */
        sbloom_free(folded);
        /* A factor of 3 against a filter built at a third of the size (1023 blocks / 3). */
        sbloom_t *third, *by3;
        uint64_t block = sbloom_layout_block_bytes(layout);
        CHECK(sbloom_create_bytes(&third, 341 * block, layout) == SBLOOM_OK);
        CHECK(sbloom_create_bytes(&by3, 1023 * block, layout) == SBLOOM_OK);
        sbloom_add_hashes(third, keys, 4000);
        sbloom_add_hashes(by3, keys, 4000);
        CHECK(sbloom_fold(&folded, by3, 3) == SBLOOM_OK);
        CHECK(memcmp(sbloom_data(folded), sbloom_data(third), 341 * block) == 0);
        sbloom_free(folded);
        sbloom_free(third);
        sbloom_free(by3);
        CHECK(sbloom_fold(&folded, both, 1) == SBLOOM_OK); /* folding by 1 copies */
        CHECK(sbloom_bytes(folded) == bytes &&
              memcmp(sbloom_data(folded), sbloom_data(both), bytes) == 0);
        sbloom_free(folded);
        sbloom_free(odd);
        sbloom_free(a);
        sbloom_free(b);
        sbloom_free(both);
        sbloom_free(small);
    }
}

/* A folded filter's plan: the same rate, at the most items its new size holds at that rate. */
static void folded_plan(void)
{
    sbloom_t *f = NULL, *folded;
    uint64_t factor = 1, planned = 1000000;
    for (; factor == 1; planned += 1000) { /* a plan whose block count has a small divisor */
        sbloom_free(f);
        CHECK(sbloom_create_for_layout(&f, planned, 1e-3, SBLOOM_LAYOUT_BLOCK512_K8) == 0);
        for (uint64_t d = 2; d <= 64; d++)
            if ((sbloom_bytes(f) / 64) % d == 0)
                factor = d;
    }
    CHECK(sbloom_fold(&folded, f, factor) == SBLOOM_OK);
    uint64_t n = sbloom_planned_items(folded);
    CHECK(sbloom_planned_fpp(folded) == 1e-3);
    CHECK(n < planned / factor + 1000 && n > planned / factor / 2);
    CHECK(sbloom_blocked_fpp(SBLOOM_LAYOUT_BLOCK512_K8, sbloom_bytes(folded), n) <= 1e-3);
    CHECK(sbloom_blocked_fpp(SBLOOM_LAYOUT_BLOCK512_K8, sbloom_bytes(folded), n + 1) > 1e-3);
    sbloom_free(folded);
    sbloom_free(f);
}

static void parquet_bitsets(void)
{
    sbloom_t *f = filled(SBLOOM_LAYOUT_PARQUET, 2000, 8), *g;
    uint8_t *bits = malloc(sbloom_bytes(f));
    CHECK(sbloom_parquet_export(f, bits, sbloom_bytes(f)) == SBLOOM_OK);
    uint8_t *expected = malloc(sbloom_bytes(f)); /* the words, little-endian, on any host */
    const uint32_t *words = sbloom_data(f);
    for (uint64_t i = 0; i < sbloom_bytes(f) / 4; i++)
        sbloom_put_le32(expected + 4 * i, words[i]);
    CHECK(memcmp(bits, expected, sbloom_bytes(f)) == 0);
    free(expected);
    CHECK(sbloom_parquet_export(f, bits, sbloom_bytes(f) - 1) == SBLOOM_E_TRUNCATED);
    CHECK(sbloom_parquet_import(&g, bits, sbloom_bytes(f)) == SBLOOM_OK);
    CHECK(memcmp(sbloom_data(g), sbloom_data(f), sbloom_bytes(f)) == 0);
    CHECK(sbloom_items(g) > 1900 && sbloom_items(g) < 2100); /* estimated from the fill */
    sbloom_free(g);
    CHECK(sbloom_parquet_import(&g, bits, 0) == SBLOOM_E_INVALID);
    CHECK(sbloom_parquet_import(&g, bits, 33) == SBLOOM_E_INVALID);
    CHECK(sbloom_parquet_import(&g, NULL, 32) == SBLOOM_E_NULL);
    sbloom_t *k8 = filled(SBLOOM_LAYOUT_BLOCK512_K8, 100, 1);
    CHECK(sbloom_parquet_export(k8, bits, sbloom_bytes(f)) == SBLOOM_E_LAYOUT);
    sbloom_free(k8);
    free(bits);
    sbloom_free(f);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/simdbloom-test-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    round_trips();
    truncation_and_flips();
    forged_headers();
    forged_plans();
    killed_writer();
    full_disk();
    byte_swapping();
    set_operations();
    folded_plan();
    parquet_bitsets();
    char command[400];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    if (system(command) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_report();
}
