/*
 * The Parquet layout, bit for bit. The vectors were derived from the Parquet format spec
 * ("Split Block Bloom Filters": block index ((h >> 32) * z) >> 32, key = low 32 bits of h, bit i
 * of the block is 1 << ((key * salt[i]) >> 27)) and the xxHash spec (XXH64, seed 0) with an
 * independent implementation, not with this library. The XXH64 values of "", "abc" and the
 * "Nobody inspects..." sentence are also xxHash's own published test vectors.
 */
#include <string.h>

#include "simdbloom.h"
#include "check.h"

static const char *const keys[] = {"", "a", "abc", "https://www.debian.org/"};
static const uint64_t xxh64_of_keys[] = {0xef46db3751d8e999ULL, 0xd24ec4f1a98c6e5bULL,
                                         0x44bc2cf5ad770999ULL, 0xb3ab0e9ee6b1a0b1ULL};

/* The 4-block (128-byte) filter after adding the four keys above: "" and "a" fall in block 3,
 * "abc" in block 1, the URL in block 2; block 0 stays empty. */
static const uint32_t expected_words[4][8] = {
    {0, 0, 0, 0, 0, 0, 0, 0},
    {0x00002000, 0x00000800, 0x00800000, 0x00200000, 0x00000040, 0x00004000, 0x20000000,
     0x20000000},
    {0x00000800, 0x10000000, 0x00200000, 0x00000008, 0x10000000, 0x01000000, 0x00000002,
     0x00000004},
    {0x20040000, 0x00020001, 0x02000002, 0x10001000, 0x00024000, 0x01400000, 0x28000000,
     0xc0000000},
};

static void hashes(void)
{
    sbloom_t *f;
    CHECK(sbloom_create_bytes(&f, 128, SBLOOM_LAYOUT_PARQUET) == SBLOOM_OK);
    for (int i = 0; i < 4; i++)
        CHECK_EQ_U64(sbloom_hash(f, keys[i], strlen(keys[i])), xxh64_of_keys[i]);
    const char *sentence = "Nobody inspects the spammish repetition";
    CHECK_EQ_U64(sbloom_hash(f, sentence, strlen(sentence)), 0xfbcea83c8a378bf1ULL);
    sbloom_free(f);

    /* The cache-line layouts use XXH3-64 (published vector for the empty input). */
    CHECK(sbloom_create_bytes(&f, 128, SBLOOM_LAYOUT_BLOCK512_K8) == SBLOOM_OK);
    CHECK_EQ_U64(sbloom_hash(f, "", 0), 0x2d06800538d394c2ULL);
    sbloom_free(f);
}

static void check_words(const sbloom_t *f)
{
    uint8_t bytes[128]; /* the bitset as Parquet stores it, on any host */
    CHECK(sbloom_parquet_export(f, bytes, sizeof bytes) == SBLOOM_OK);
    for (int b = 0; b < 4; b++)
        for (int w = 0; w < 8; w++) {
            const uint8_t *p = bytes + 32 * b + 4 * w;
            uint32_t word = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                            (uint32_t)p[3] << 24; /* little-endian, as the format stores it */
            CHECK_EQ_U64(word, expected_words[b][w]);
        }
}

static void block_words(void)
{
    /* Through the string API, one key at a time. */
    sbloom_t *f;
    CHECK(sbloom_create_bytes(&f, 128, SBLOOM_LAYOUT_PARQUET) == SBLOOM_OK);
    CHECK(sbloom_bytes(f) == 128);
    for (int i = 0; i < 4; i++)
        CHECK(sbloom_add(f, keys[i], strlen(keys[i])) == 1);
    check_words(f);
    for (int i = 0; i < 4; i++)
        CHECK(sbloom_contains(f, keys[i], strlen(keys[i])) == 1);
    sbloom_free(f);

    /* Through the hash batch API. */
    CHECK(sbloom_create_bytes(&f, 128, SBLOOM_LAYOUT_PARQUET) == SBLOOM_OK);
    CHECK(sbloom_add_hashes(f, xxh64_of_keys, 4) == 4);
    check_words(f);
    sbloom_free(f);

    /* Through the string batch API. */
    CHECK(sbloom_create_bytes(&f, 128, SBLOOM_LAYOUT_PARQUET) == SBLOOM_OK);
    size_t lens[4];
    for (int i = 0; i < 4; i++)
        lens[i] = strlen(keys[i]);
    CHECK(sbloom_add_keys(f, (const void *const *)keys, lens, 4) == 4);
    check_words(f);
    sbloom_free(f);
}

int main(void)
{
    hashes();
    block_words();
    return check_report();
}
