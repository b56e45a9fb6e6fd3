/*
 * With SIMDBLOOM_ISA set, the instruction set that runs is the one forced: the default for new
 * filters, and a filter actually created. The per-implementation runs of the other tests
 * (label per_implementation) go through this check first, so a test never passes on a
 * different ISA than its name says. Exit 77 (ctest's skip) with a SKIP line when the forced ISA
 * cannot run on this CPU; without SIMDBLOOM_ISA, checks the automatic choice is usable.
 */
#include <stdlib.h>
#include <string.h>

#include "simdbloom.h"
#include "check.h"

int main(void)
{
    const char *forced = getenv("SIMDBLOOM_ISA");
    const char *names[16];
    size_t count = sbloom_isa_list(names, 16);
    int usable = 0;
    for (size_t i = 0; i < count && i < 16; i++)
        usable |= forced && strcmp(names[i], forced) == 0;
    if (forced && *forced && !usable) {
        printf("SKIP: SIMDBLOOM_ISA=%s cannot run on this CPU\n", forced);
        return 77;
    }
    sbloom_t *f = NULL;
    CHECK(sbloom_create_bytes(&f, 4096, SBLOOM_LAYOUT_BLOCK512_K8) == SBLOOM_OK);
    if (forced && *forced) {
        CHECK(strcmp(sbloom_isa(), forced) == 0);
        CHECK(f && strcmp(sbloom_filter_isa(f), forced) == 0);
        printf("forced %s: %s runs\n", forced, f ? sbloom_filter_isa(f) : "(none)");
    } else {
        CHECK(f && strcmp(sbloom_filter_isa(f), names[count - 1]) == 0); /* the best: last */
    }
    sbloom_free(f);
    return check_report();
}
