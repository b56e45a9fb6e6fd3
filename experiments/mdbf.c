/* The multi-dimensional Bloom filter of seed 001 and the standard filter it is compared with
 * (mdbf.h says what the paper fixes and what was chosen). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "mdbf.h"

typedef struct bitvec {
    uint64_t *words;
    uint64_t bits;
} bitvec;

static int bitvec_init(bitvec *v, uint64_t bits)
{
    v->bits = bits;
    v->words = calloc((size_t)((bits + 63) / 64), 8);
    return v->words != NULL;
}

/* Function `i` of group `g`: its own XXH3 seed, reduced to [0, bits) by multiply-high. */
static uint64_t position(const void *key, size_t len, uint64_t seed, uint64_t bits)
{
    uint64_t h = XXH3_64bits_withSeed(len ? key : "", len, seed);
    return (uint64_t)(((h >> 32) * bits) >> 32);
}

static void set_bits(bitvec *v, const void *key, size_t len, uint64_t seed0, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        uint64_t b = position(key, len, seed0 + i, v->bits);
        v->words[b / 64] |= UINT64_C(1) << (b % 64);
    }
}

static int all_set(const bitvec *v, const void *key, size_t len, uint64_t seed0, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        uint64_t b = position(key, len, seed0 + i, v->bits);
        if (!(v->words[b / 64] & (UINT64_C(1) << (b % 64))))
            return 0;
    }
    return 1;
}

struct mdbf {
    mdbf_params p;
    bitvec *v1, *v2;
};

static uint32_t v2_bits(const mdbf_params *p)
{
    return p->bits / p->k > 0 ? p->bits / p->k : 1;
}

static mdbf_params resolved(const mdbf_params *in)
{
    mdbf_params p = *in;
    if (p.k1 == 0)
        p.k1 = (p.k + 1) / 2;
    return p;
}

mdbf *mdbf_new(const mdbf_params *params)
{
    mdbf_params p = resolved(params);
    if (p.groups == 0 || p.bits == 0 || p.k == 0 || p.k1 > p.k)
        return NULL;
    mdbf *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->p = p;
    f->v1 = calloc(p.groups, sizeof *f->v1);
    f->v2 = calloc(p.groups, sizeof *f->v2);
    int ok = f->v1 && f->v2;
    for (uint32_t s = 0; ok && s < p.groups; s++)
        ok = bitvec_init(&f->v1[s], p.bits) && bitvec_init(&f->v2[s], v2_bits(&p));
    if (!ok) {
        mdbf_free(f);
        return NULL;
    }
    return f;
}

void mdbf_free(mdbf *f)
{
    if (!f)
        return;
    for (uint32_t s = 0; s < f->p.groups; s++) {
        if (f->v1)
            free(f->v1[s].words);
        if (f->v2)
            free(f->v2[s].words);
    }
    free(f->v1);
    free(f->v2);
    free(f);
}

/* Seeds: group s uses 1000 * s + i for V1's functions and 1000 * s + 500 + i for V2's. */
void mdbf_add(mdbf *f, const void *key, size_t len)
{
    for (uint32_t s = 0; s < f->p.groups; s++) {
        set_bits(&f->v1[s], key, len, 1000 * (uint64_t)s, f->p.k1);
        set_bits(&f->v2[s], key, len, 1000 * (uint64_t)s + 500, f->p.k - f->p.k1);
    }
}

int mdbf_contains(const mdbf *f, const void *key, size_t len)
{
    uint32_t agreeing = 0;
    for (uint32_t s = 0; s < f->p.groups; s++)
        agreeing += all_set(&f->v1[s], key, len, 1000 * (uint64_t)s, f->p.k1) &&
                    all_set(&f->v2[s], key, len, 1000 * (uint64_t)s + 500, f->p.k - f->p.k1);
    return f->p.every_group ? agreeing == f->p.groups : agreeing > 0;
}

uint64_t mdbf_total_bits(const mdbf *f)
{
    return (uint64_t)f->p.groups * (f->p.bits + v2_bits(&f->p));
}

double mdbf_predicted_fpp(const mdbf_params *params, uint64_t n)
{
    mdbf_params p = resolved(params);
    double k1 = p.k1, k2 = p.k - p.k1, nn = (double)n;
    double g = pow(-expm1(-k1 * nn / p.bits), k1) * pow(-expm1(-k2 * nn / v2_bits(&p)), k2);
    return p.every_group ? pow(g, p.groups) : -expm1(p.groups * log1p(-g));
}

struct plain_bf {
    bitvec v;
    uint32_t k;
};

plain_bf *plain_bf_new(uint64_t bits, uint32_t k)
{
    plain_bf *f = calloc(1, sizeof *f);
    if (!f || bits == 0 || k == 0 || !bitvec_init(&f->v, bits)) {
        free(f);
        return NULL;
    }
    f->k = k;
    return f;
}

void plain_bf_free(plain_bf *f)
{
    if (f)
        free(f->v.words);
    free(f);
}

void plain_bf_add(plain_bf *f, const void *key, size_t len)
{
    set_bits(&f->v, key, len, 0, f->k);
}

int plain_bf_contains(const plain_bf *f, const void *key, size_t len)
{
    return all_set(&f->v, key, len, 0, f->k);
}
