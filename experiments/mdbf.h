/*
 * The multi-dimensional Bloom filter of seed 001 ("网页消重中多维布隆过滤器算法的运用"), as its
 * text describes it: S groups of bit vectors; group s has V1 of N bits and V2 of N/k bits; the
 * group's k hash functions are split into k1 for V1 and k2 = k - k1 for V2. Insert sets the
 * element's bits in every group. Query, in the paper's words:
 * "若有一组位向量全为1，则认为该元素属于集合" (if one group's bits are all 1, the element belongs
 * to the set): present when ANY group holds all its bits. That reading makes the false-positive
 * rate grow with S, against the paper's claim; the other reading (present only when EVERY group
 * agrees) is the parameter `every_group`.
 *
 * Where the text is silent: the split of k (default k1 = ceil(k / 2)), and the hash functions
 * (XXH3-64 with a different seed per group and function, reduced to a position by multiply-high).
 * A research model for docs/MULTIDIM.md, not a production filter: scalar and unblocked.
 */
#ifndef SIMDBLOOM_MDBF_H
#define SIMDBLOOM_MDBF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdbf_params {
    uint32_t groups; /* S */
    uint32_t bits;   /* N: bits of V1; V2 has N / k (at least 1) */
    uint32_t k;      /* hash functions per group */
    uint32_t k1;     /* of which for V1 (0: ceil(k / 2)); the rest for V2 */
    int every_group; /* 0: the paper's "any group" query; 1: every group must agree */
} mdbf_params;

typedef struct mdbf mdbf;

mdbf *mdbf_new(const mdbf_params *p); /* NULL on bad parameters or no memory */
void mdbf_free(mdbf *f);
void mdbf_add(mdbf *f, const void *key, size_t len);
int mdbf_contains(const mdbf *f, const void *key, size_t len);
/* Total bits: S * (N + N / k). */
uint64_t mdbf_total_bits(const mdbf *f);
/* The rate the model predicts for n distinct items: per group
 * g = (1 - e^(-k1 n / N))^k1 * (1 - e^(-k2 n / (N/k)))^k2, then 1 - (1 - g)^S (any group) or g^S
 * (every group). */
double mdbf_predicted_fpp(const mdbf_params *p, uint64_t n);

/* The standard Bloom filter the paper compares with: one vector of m bits, k hash functions,
 * hashed the same way. */
typedef struct plain_bf plain_bf;
plain_bf *plain_bf_new(uint64_t bits, uint32_t k);
void plain_bf_free(plain_bf *f);
void plain_bf_add(plain_bf *f, const void *key, size_t len);
int plain_bf_contains(const plain_bf *f, const void *key, size_t len);

#ifdef __cplusplus
}
#endif

#endif
