/* simdbloom info: what a filter file holds, and whether it is intact. */
#include <stdio.h>

#include "cli.h"

static const char info_help[] =
    "usage: simdbloom info FILTER...\n"
    "\n"
    "Prints, for each filter file: layout, size, bits per key (k), items added, fill, distinct\n"
    "items estimated from the fill, the false-positive rate planned and the one estimated now,\n"
    "the checksum status and the instruction set that would run it. For a counting filter\n"
    "(sbloom_counting_* files): items held, saturated counters and the rate the formula gives\n"
    "for them. Exit status 1 if a file cannot be read or is damaged.\n";

/* A counting filter's file: its own figures (the fill estimate is for bit filters). */
static int info_counting(const char *path)
{
    sbloom_counting_t *c;
    int rc = sbloom_counting_load(&c, path);
    if (rc != SBLOOM_OK) {
        printf("%s: %s\n", path, sbloom_strerror(rc));
        return filter_error("read", path, rc);
    }
    char size[32];
    uint64_t bytes = sbloom_counting_bytes(c), items = sbloom_counting_items(c);
    printf("%s:\n", path);
    printf("  layout            %s (counting filter, 4-bit counters, k = %u per key)\n",
           sbloom_layout_name(SBLOOM_LAYOUT_COUNTING512),
           sbloom_layout_k(SBLOOM_LAYOUT_COUNTING512));
    printf("  size              %s (%llu bytes)\n", human_bytes(bytes, size, sizeof size),
           (unsigned long long)bytes);
    printf("  items held        %llu (adds less removes)\n", (unsigned long long)items);
    printf("  saturated         %llu counters stuck at 15\n",
           (unsigned long long)sbloom_counting_saturated(c));
    if (sbloom_counting_planned_items(c))
        printf("  planned           %llu items at false-positive rate %.3g\n",
               (unsigned long long)sbloom_counting_planned_items(c),
               sbloom_counting_planned_fpp(c));
    else
        printf("  planned           (made by size, no plan)\n");
    printf("  fpp now           %.3g (the formula at the items held)\n",
           sbloom_blocked_fpp(SBLOOM_LAYOUT_COUNTING512, bytes, items));
    printf("  checksums         header and counters verified\n");
    printf("  isa               %s\n", sbloom_counting_isa(c));
    sbloom_counting_free(c);
    return EXIT_OK;
}

static int info_one(const char *path)
{
    sbloom_t *f;
    int rc = sbloom_map(&f, path, 1);
    if (rc == SBLOOM_E_KIND)
        return info_counting(path);
    if (rc != SBLOOM_OK) {
        printf("%s: %s\n", path, sbloom_strerror(rc));
        return filter_error("read", path, rc);
    }
    sbloom_stats st;
    sbloom_get_stats(f, &st);
    char size[32];
    printf("%s:\n", path);
    printf("  layout            %s (k = %u bits per key)\n",
           sbloom_layout_name(sbloom_get_layout(f)), sbloom_k(f));
    printf("  size              %s (%llu bytes)\n", human_bytes(sbloom_bytes(f), size, sizeof size),
           (unsigned long long)sbloom_bytes(f));
    printf("  items added       %llu\n", (unsigned long long)sbloom_items(f));
    printf("  fill              %.4f of bits set\n", st.fill);
    printf("  estimated items   %.0f (from the fill)\n", st.estimated_items);
    if (sbloom_planned_items(f))
        printf("  planned           %llu items at false-positive rate %.3g\n",
               (unsigned long long)sbloom_planned_items(f), sbloom_planned_fpp(f));
    else
        printf("  planned           (made by size, no plan)\n");
    printf("  fpp now           %.3g (estimated from the bits)\n", st.estimated_fpp);
    printf("  checksums         header and bits verified\n");
    printf("  isa               %s\n", sbloom_filter_isa(f));
    sbloom_free(f);
    return EXIT_OK;
}

int cmd_info(int argc, char **argv)
{
    cli_options o;
    int rc = parse_options("info", info_help, argc, argv, 0, &o);
    if (rc >= 0)
        return rc;
    if (o.nargs < 1)
        return usage_error("info", "FILTER is missing");
    rc = EXIT_OK;
    for (int i = 0; i < o.nargs; i++)
        if (info_one(o.args[i]) != EXIT_OK)
            rc = EXIT_RUNTIME;
    return rc;
}
