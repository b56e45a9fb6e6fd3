/* A program that embeds simdbloom as a user would: built by ci/consumers against an installed
 * library four ways (pkg-config, find_package, add_subdirectory, FetchContent) and the .deb. It
 * checks that the header and the library it runs with agree, and that the API works end to end. */
#include <stdio.h>
#include <string.h>

#include <simdbloom.h>

int main(void)
{
    if (sbloom_version() / 10000 != SIMDBLOOM_VERSION_MAJOR) {
        fprintf(stderr, "header %s, library %s: majors differ\n", SIMDBLOOM_VERSION_STRING,
                sbloom_version_string());
        return 1;
    }
    sbloom_t *seen;
    int rc = sbloom_create(&seen, 100000, 1e-4);
    if (rc != SBLOOM_OK) {
        fprintf(stderr, "create: %s\n", sbloom_strerror(rc));
        return 1;
    }
    const char *urls[] = {"https://a.example/", "https://b.example/x", "https://a.example/"};
    size_t lens[3];
    for (int i = 0; i < 3; i++)
        lens[i] = strlen(urls[i]);
    uint8_t is_new[3];
    int64_t fresh = sbloom_add_if_new_keys(seen, (const void *const *)urls, lens, 3, is_new);
    int ok = fresh == 2 && is_new[0] == 1 && is_new[1] == 1 && is_new[2] == 0 &&
             sbloom_contains(seen, "https://b.example/x", 19) == 1 &&
             sbloom_add_u64(seen, 42) == 1 && sbloom_contains_u64(seen, 42) == 1;
    sbloom_free(seen);
    sbloom_t *counting;
    ok = ok &&
         sbloom_create_for_layout(&counting, 1000, 0.01, SBLOOM_LAYOUT_COUNTING512) == SBLOOM_OK;
    ok = ok && sbloom_add(counting, "k", 1) == 1 && sbloom_remove(counting, "k", 1) == 1 &&
         sbloom_contains(counting, "k", 1) == 0;
    sbloom_free(counting);
    printf("consumer: simdbloom %s, isa %s: %s\n", sbloom_version_string(), sbloom_isa(),
           ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
