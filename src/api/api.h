/*
 * What the public entry points of src/api share between their files (nothing here is installed):
 * the makers that sbloom_create_opts (create.c) dispatches to.
 */
#ifndef SIMDBLOOM_API_H
#define SIMDBLOOM_API_H

#include "../modes/modes.h"

/* options.c: the caller's options in a struct of this library's size (SBLOOM_E_INVALID for a
 * size too short, or for options of a newer library set), and the filter they ask for. */
int sbloom_read_options(const sbloom_opts *in, sbloom_opts *out);
int sbloom_make(sbloom_t **out, const sbloom_opts *o);

/* image.c: a new filter in the caller's buf (cap bytes) of `bytes` and `layout`, recording the plan
 * it was made for (0 and NaN: none). */
int sbloom_image_new(sbloom_t **out, void *buf, size_t cap, uint64_t bytes, sbloom_layout layout,
                     uint64_t planned_items, double planned_fpp);

#endif
