/*
 * The Poisson sums both families' rates are made of (a block's or a line's load is Poisson with
 * the mean load): where a sum may stop, and the mean past which it need not be taken.
 */
#ifndef SIMDBLOOM_FAMILIES_POISSON_H
#define SIMDBLOOM_FAMILIES_POISSON_H

#include <math.h>

/* Beyond this mean load a block or line is full to double precision (1 - (1-1/64)^1e6 == 1),
 * and the sum below too long to take. */
#define SBLOOM_POISSON_SATURATED 1e6

/* The loads [*first, *last] whose terms are summed: the mean +- 12 standard deviations, plus a
 * margin for small means; the mass outside is below 1e-30. */
static inline void sbloom_poisson_span(double mean, double *first, double *last)
{
    double spread = 12.0 * sqrt(mean) + 40.0;
    *first = fmax(0.0, floor(mean - spread));
    *last = ceil(mean + spread);
}

#endif /* SIMDBLOOM_FAMILIES_POISSON_H */
