/* The README's example: a crawler's visited-URL table in a few lines. */
#include <stdio.h>
#include <string.h>

#include "simdbloom.h"

int main(void)
{
    sbloom_t *visited;
    int rc = sbloom_create(&visited, 1000000, 1e-6); /* 1M URLs, one false positive per million */
    if (rc != SBLOOM_OK) {
        fprintf(stderr, "simdbloom: %s\n", sbloom_strerror(rc));
        return 1;
    }
    const char *found[] = {"https://a.example/", "https://b.example/x", "https://a.example/"};
    size_t lens[3];
    for (int i = 0; i < 3; i++)
        lens[i] = strlen(found[i]);
    uint8_t is_new[3];
    sbloom_add_if_new_keys(visited, (const void *const *)found, lens, 3, is_new);
    for (int i = 0; i < 3; i++)
        printf("%s %s\n", is_new[i] ? "fetch" : "skip ", found[i]);
    printf("%s, %llu bytes, isa %s\n", sbloom_layout_name(sbloom_get_layout(visited)),
           (unsigned long long)sbloom_bytes(visited), sbloom_filter_isa(visited));
    sbloom_free(visited);
    return 0;
}
