/* SPDX-License-Identifier: MIT */
/* Growing arrays (see util_array.h). */
#include "util/util_array.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *util_array_grow(void *p, size_t size, size_t *cap, size_t need, size_t first, size_t max,
                      int zero)
{
    size_t n = *cap ? *cap : first;

    if (need > max)
        return NULL;
    if (*cap) {
        if (n > SIZE_MAX / 2)
            return NULL;
        n *= 2;
    }
    if (n > max)
        n = max;
    if (n < need)
        n = need;
    if (!size || n > SIZE_MAX / size)
        return NULL;
    /* A first zeroed array from calloc: a large one is fresh mapped
     * pages, resident only where used (an array by stack id of a trace's
     * 10 M stacks, of which one process reads a few). */
    unsigned char *v = !p && zero ? calloc(n, size) : realloc(p, n * size);
    if (!v)
        return NULL;
    if (zero && p)
        memset(v + *cap * size, 0, (n - *cap) * size);
    *cap = n;
    return v;
}
