/* SPDX-License-Identifier: MIT */
/* Sorting only what is shown: a table of a million call sites printed to
 * its first ten rows needs its ten least elements in order, not all of
 * them sorted. And sorting without the memory a merge sort takes. */
#ifndef UTIL_SORT_H
#define UTIL_SORT_H

#include <stddef.h>

/* A comparison as qsort_r() takes it. */
typedef int util_cmp_fn(const void *a, const void *b, void *arg);

/* Reorder the nr elements (size bytes each) at v so that its first
 * min(first, nr) are the least by cmp, in order; the others follow in no
 * particular order. first 0 sorts them all. With cmp a total order (no two
 * elements equal), the first ones are exactly those of a full sort. */
void util_sort_first(void *v, size_t nr, size_t size, size_t first, util_cmp_fn *cmp, void *arg);

/* Sort the nr elements (size bytes each) at v by cmp, allocating nothing
 * (heapsort): for a table as large as memory allows, where qsort_r()'s
 * merge sort takes as much again. Not stable: with cmp a total order, the
 * order of a full sort. */
void util_sort_in_place(void *v, size_t nr, size_t size, util_cmp_fn *cmp, void *arg);

#endif
