/* SPDX-License-Identifier: MIT */
/* Partial sort (see util_sort.h): a max-heap of the least elements seen,
 * then a sort of the heap; and heapsort. */
#include "util/util_sort.h"

#include <stdlib.h>

static void swap(unsigned char *a, unsigned char *b, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        unsigned char t = a[i];
        a[i] = b[i];
        b[i] = t;
    }
}

/* Restore the heap of k elements at v below index i (its greatest at 0). */
static void sift_down(unsigned char *v, size_t i, size_t k, size_t size, util_cmp_fn *cmp,
                      void *arg)
{
    for (;;) {
        size_t top = i, l = 2 * i + 1, r = l + 1;
        if (l < k && cmp(v + l * size, v + top * size, arg) > 0)
            top = l;
        if (r < k && cmp(v + r * size, v + top * size, arg) > 0)
            top = r;
        if (top == i)
            return;
        swap(v + i * size, v + top * size, size);
        i = top;
    }
}

void util_sort_first(void *v, size_t nr, size_t size, size_t first, util_cmp_fn *cmp, void *arg)
{
    unsigned char *b = v;

    /* Past a quarter of the table a full sort costs about the same. */
    if (!first || first >= nr / 4) {
        if (nr > 1)
            qsort_r(v, nr, size, cmp, arg);
        return;
    }
    for (size_t i = first / 2; i-- > 0;)
        sift_down(b, i, first, size, cmp, arg);
    for (size_t i = first; i < nr; i++)
        if (cmp(b + i * size, b, arg) < 0) {
            swap(b + i * size, b, size);
            sift_down(b, 0, first, size, cmp, arg);
        }
    qsort_r(v, first, size, cmp, arg);
}

void util_sort_in_place(void *v, size_t nr, size_t size, util_cmp_fn *cmp, void *arg)
{
    unsigned char *b = v;

    for (size_t i = nr / 2; i-- > 0;)
        sift_down(b, i, nr, size, cmp, arg);
    for (size_t k = nr; k-- > 1;) {
        swap(b, b + k * size, size);
        sift_down(b, 0, k, size, cmp, arg);
    }
}
