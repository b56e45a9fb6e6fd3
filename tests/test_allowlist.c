/* The allow-list for known false positives: an exact set, consulted only on the filter's
 * positives, and a file that survives or reports every kind of damage. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simdbloom.h"
#include "check.h"

static void exact_set(void)
{
    sbloom_allowlist_t *a;
    CHECK(sbloom_allowlist_create(&a) == SBLOOM_OK);
    CHECK(sbloom_allowlist_add(a, "x", 1) == 1);
    CHECK(sbloom_allowlist_add(a, "x", 1) == 0);
    CHECK(sbloom_allowlist_add(a, "", 0) == 1 && sbloom_allowlist_add(a, NULL, 0) == 0);
    CHECK(sbloom_allowlist_add(a, "a\0b", 3) == 1 && sbloom_allowlist_contains(a, "a\0c", 3) == 0);
    CHECK(sbloom_allowlist_contains(a, "a\0b", 3) == 1 && sbloom_allowlist_contains(a, "", 0));
    char key[32];
    for (int i = 0; i < 100000; i++) { /* the table and the arena grow many times */
        int len = snprintf(key, sizeof key, "https://e.com/%d", i);
        CHECK(sbloom_allowlist_add(a, key, (size_t)len) == 1);
    }
    int all = 1, none = 1;
    for (int i = 0; i < 100000; i++) {
        int len = snprintf(key, sizeof key, "https://e.com/%d", i);
        all &= sbloom_allowlist_contains(a, key, (size_t)len) == 1;
        len = snprintf(key, sizeof key, "https://f.com/%d", i);
        none &= sbloom_allowlist_contains(a, key, (size_t)len) == 0;
    }
    CHECK(all && none);
    CHECK(sbloom_allowlist_count(a) == 100003);
    CHECK(sbloom_allowlist_add(NULL, "x", 1) == SBLOOM_E_NULL);
    CHECK(sbloom_allowlist_add(a, NULL, 1) == SBLOOM_E_NULL);
    CHECK(sbloom_allowlist_contains(NULL, "x", 1) == SBLOOM_E_NULL);
    CHECK(sbloom_allowlist_create(NULL) == SBLOOM_E_NULL);
    sbloom_allowlist_free(a);
    sbloom_allowlist_free(NULL);
}

/* Known false positives are answered absent; the allow-list sees only the filter's positives. */
static void consulted_on_positives(void)
{
    sbloom_t *f;
    CHECK(sbloom_create(&f, 2000, 0.05) == SBLOOM_OK);
    enum { N = 2000, PROBES = 20000 };
    static char text[N + PROBES][24];
    static const void *keys[N + PROBES];
    static size_t lens[N + PROBES];
    for (int i = 0; i < N + PROBES; i++) {
        lens[i] = (size_t)snprintf(text[i], sizeof text[i], "%s/%d", i < N ? "in" : "out", i);
        keys[i] = text[i];
    }
    sbloom_add_keys(f, keys, lens, N);
    static uint8_t results[N + PROBES];
    int64_t positives = sbloom_contains_keys(f, keys, lens, N + PROBES, results);
    int64_t false_positives = positives - N;
    CHECK(false_positives > 100); /* a 5% filter: about 1000 expected */
    sbloom_allowlist_t *a;
    sbloom_allowlist_create(&a);
    for (int i = N; i < N + PROBES; i++)
        if (results[i])
            sbloom_allowlist_add(a, keys[i], lens[i]); /* "a fetch proved them new" */
    CHECK(sbloom_allowlist_count(a) == (uint64_t)false_positives);
    uint64_t before = sbloom_allowlist_lookups(a);
    int64_t present = sbloom_contains_keys_allowing(f, a, keys, lens, N + PROBES, results);
    CHECK(present == N);
    int firsts = 1, rest = 1;
    for (int i = 0; i < N + PROBES; i++) {
        firsts &= i >= N || results[i] == 1;
        rest &= i < N || results[i] == 0;
    }
    CHECK(firsts && rest);
    CHECK(sbloom_allowlist_lookups(a) - before == (uint64_t)positives); /* positives only */
    CHECK(sbloom_contains_keys_allowing(f, NULL, keys, lens, N + PROBES, results) == positives);
    CHECK(sbloom_contains_keys_allowing(f, a, keys, lens, 1, NULL) == SBLOOM_E_NULL);
    sbloom_allowlist_free(a);
    sbloom_free(f);
}

static void files(void)
{
    char dir[] = "/tmp/simdbloom-allow-XXXXXX", path[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/f.allow", dir);
    sbloom_allowlist_t *a, *b;
    sbloom_allowlist_create(&a);
    CHECK(sbloom_allowlist_save(a, path) == SBLOOM_OK); /* an empty list */
    CHECK(sbloom_allowlist_load(&b, path) == SBLOOM_OK && sbloom_allowlist_count(b) == 0);
    sbloom_allowlist_free(b);
    const char *words[] = {"", "one", "two\0three", "https://x.org/a?b=c"};
    size_t word_lens[] = {0, 3, 9, 19};
    for (int i = 0; i < 4; i++)
        sbloom_allowlist_add(a, words[i], word_lens[i]);
    CHECK(sbloom_allowlist_save(a, path) == SBLOOM_OK);
    CHECK(sbloom_allowlist_load(&b, path) == SBLOOM_OK && sbloom_allowlist_count(b) == 4);
    for (int i = 0; i < 4; i++)
        CHECK(sbloom_allowlist_contains(b, words[i], word_lens[i]) == 1);
    sbloom_allowlist_free(b);

    FILE *in = fopen(path, "rb");
    static uint8_t image[4096];
    size_t size = fread(image, 1, sizeof image, in);
    fclose(in);
    char damaged[80];
    snprintf(damaged, sizeof damaged, "%s/d.allow", dir);
    int truncations = 1, flips = 1;
    for (size_t cut = 0; cut < size; cut++) {
        FILE *out = fopen(damaged, "wb");
        fwrite(image, 1, cut, out);
        fclose(out);
        int rc = sbloom_allowlist_load(&b, damaged);
        truncations &= (rc == SBLOOM_E_TRUNCATED) && b == NULL;
    }
    CHECK(truncations);
    for (size_t bit = 0; bit < size * 8; bit++) {
        image[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        FILE *out = fopen(damaged, "wb");
        fwrite(image, 1, size, out);
        fclose(out);
        int rc = sbloom_allowlist_load(&b, damaged);
        flips &= rc == (bit < 64 ? SBLOOM_E_FORMAT : SBLOOM_E_CORRUPT) && b == NULL;
        image[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    CHECK(flips);
    CHECK(sbloom_allowlist_load(&b, "/nonexistent/x.allow") == SBLOOM_E_IO);
    CHECK(sbloom_allowlist_save(a, "/nonexistent/x.allow") == SBLOOM_E_IO);
    sbloom_allowlist_free(a);
    unlink(path);
    unlink(damaged);
    rmdir(dir);
}

int main(void)
{
    exact_set();
    consulted_on_positives();
    files();
    return check_report();
}
