/*
 * One x86 kernel file (PLACEMENT_SOURCE, e.g. "simd/avx2.c") compiled behind PLACEMENT_PAD bytes
 * of padding, which moves the file's code along (by about that much: alignment inside the file
 * may take some of it up). bench/placement builds it with -falign-functions=4, and with gcc's
 * -fno-toplevel-reorder so that the padding comes first. Not part of the library: a measuring
 * tool.
 */
#define PLACEMENT_STR2(x) #x
#define PLACEMENT_STR(x) PLACEMENT_STR2(x)
#define PLACEMENT_FILL ".fill " PLACEMENT_STR(PLACEMENT_PAD) ", 1, 0x90\n"
__asm__(".pushsection .text\n.balign 64\n" PLACEMENT_FILL ".popsection");

#include PLACEMENT_SOURCE
